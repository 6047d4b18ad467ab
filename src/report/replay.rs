//! `agentwire replay` report: statuses, latency percentiles, differing responses.

use crate::capture::resend::ResendSummary;

use super::Format;

/// Render a replay summary.
pub fn render(s: &ResendSummary, format: Format) -> String {
    format.finish(render_unchecked(s, format))
}

fn render_unchecked(s: &ResendSummary, format: Format) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(s);
    }
    let statuses: Vec<String> = s
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    // Without a single response there is no latency or rate of a server to show.
    let (latency, rate) = match s.latency_ms {
        Some([p50, p90, p99, max]) => (
            format!("{p50:.1} / {p90:.1} / {p99:.1} / {max:.1}"),
            format!("{:.1}", s.requests as f64 / s.seconds.max(1e-9)),
        ),
        None => ("- (no response)".into(), "-".into()),
    };
    let mut rows = vec![
        vec!["requests".to_string(), s.requests.to_string()],
        vec!["statuses".into(), statuses.join(", ")],
        vec!["latency p50 / p90 / p99 / max ms".into(), latency],
        vec!["requests/s".into(), rate],
    ];
    if let Some(d) = s.differing {
        rows.push(vec![
            "responses differing from the recording".into(),
            d.to_string(),
        ]);
    }
    let mut out = match format {
        Format::Markdown => super::table::markdown_table(&["replay", "value"], &rows),
        _ => {
            let mut t = super::table::table(&["replay", "value"]);
            for r in &rows {
                super::table::add_row(&mut t, r.clone());
            }
            super::table::table_text(&t)
        }
    };
    for o in s
        .outcomes
        .iter()
        .filter(|o| !o.differences.is_empty() || o.error.is_some())
    {
        let what = o.error.clone().unwrap_or_else(|| o.differences.join("; "));
        out.push_str(&crate::text::printable(&format!(
            "exchange #{}: {what}",
            o.id
        )));
        out.push('\n');
    }
    out
}
