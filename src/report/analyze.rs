//! Rendering of `agentwire analyze`: the summary first (polls, redundant polls, wasted
//! tokens and $, cache hit rate, misses by cause, jobs by state), then the per-thread,
//! per-episode, per-request and per-job tables and the decision records. Terminal table,
//! Markdown, or JSON (the [`Analysis`] itself; schema `schemas/analyze.schema.json`).

use crate::analyze::Analysis;

use super::analysis_tables;
use super::table::{add_row, markdown_table, table, Table};
use super::Format;
use crate::text::fmt::{pct_of_rate as pct, usd};
use crate::text::printable;

/// Render an analysis.
pub fn render(a: &Analysis, format: Format) -> String {
    format.finish(render_unchecked(a, format))
}

fn render_unchecked(a: &Analysis, format: Format) -> String {
    match format {
        Format::Json => crate::text::safe_json::pretty(a),
        Format::Table | Format::Markdown => text(a, format == Format::Markdown),
    }
}

struct Section {
    title: String,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Rows a row limit left out ([`Table::omitted`]).
    omitted: usize,
}

impl From<Table> for Section {
    fn from(t: Table) -> Section {
        Section {
            omitted: t.omitted,
            title: t.title,
            header: t.headers,
            rows: t
                .rows
                .into_iter()
                .map(|r| r.cells.into_iter().map(|c| c.text).collect())
                .collect(),
        }
    }
}

/// Most request rows a terminal table shows; the rest are counted under it (Markdown and
/// JSON list every request). A trace of 40,000 requests otherwise printed 40,000 rows and
/// held them all as a laid-out table.
pub const TERMINAL_REQUEST_ROWS: usize = 200;

/// The report's sections, in order: the summary, then the tables the shareable audit
/// report shows too ([`super::analysis_tables`]), the requests table cut at `max_rows`.
fn sections(a: &Analysis, max_rows: Option<usize>) -> Vec<Section> {
    let mut v = vec![summary_section(a)];
    v.extend(
        analysis_tables::all(a, max_rows)
            .into_iter()
            .map(Section::from),
    );
    v
}

/// The summary: polls, waste, cache figures, cost, jobs by state.
fn summary_section(a: &Analysis) -> Section {
    let mut rows = figure_rows(a);
    rows.extend(state_rows(a));
    Section {
        omitted: 0,
        title: summary_title(a),
        header: vec!["metric".into(), "value".into()],
        rows,
    }
}

/// `Summary (usage: … — N simulated, M recorded; ttl …; prices … as of …)`.
fn summary_title(a: &Analysis) -> String {
    let name = |v: serde_json::Result<serde_json::Value>| {
        v.ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    format!(
        "Summary (usage: {} — {} simulated, {} recorded; ttl {}; prices {} as of {})",
        name(serde_json::to_value(a.usage_mode)),
        a.usage_used.simulated,
        a.usage_used.recorded,
        name(serde_json::to_value(a.ttl)),
        a.prices.source,
        a.prices.date
    )
}

/// The summary's figures: counts, polls, tokens and costs, where the usage came from.
fn figure_rows(a: &Analysis) -> Vec<Vec<String>> {
    let s = &a.summary;
    let reasons: Vec<String> = a
        .usage_used
        .reasons
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    vec![
        vec!["requests".into(), s.requests.to_string()],
        vec!["sessions".into(), s.sessions.to_string()],
        vec!["threads".into(), s.threads.to_string()],
        vec!["polls".into(), s.polls.to_string()],
        vec!["redundant polls".into(), s.redundant_polls.to_string()],
        vec![
            "polls after notification".into(),
            s.polls_after_notified.to_string(),
        ],
        vec![
            "polls while notification pending".into(),
            s.polls_while_pending.to_string(),
        ],
        vec![
            "poll tokens / cost".into(),
            format!("{} / {}", s.poll_tokens, usd(s.poll_cost_usd)),
        ],
        vec![
            "wasted tokens / cost (redundant polls)".into(),
            format!("{} / {}", s.wasted_tokens, usd(s.wasted_cost_usd)),
        ],
        vec![
            "cache hit rate (read / input tokens)".into(),
            pct(s.cache_hit_rate),
        ],
        vec![
            "input / read / write / output tokens".into(),
            format!(
                "{} / {} / {} / {}",
                s.input_tokens, s.cache_read_tokens, s.cache_write_tokens, s.output_tokens
            ),
        ],
        vec![
            "cache miss tokens / cost (excl. cold start)".into(),
            format!("{} / {}", s.cache_miss_tokens, usd(s.cache_miss_cost_usd)),
        ],
        // A model missing from the price table is never shown as $0 (as the audit page).
        vec![
            "total cost".into(),
            analysis_tables::total(s.total_cost_usd, !s.unpriced_models.is_empty()),
        ],
        vec!["usage figures from".into(), reasons.join("; ")],
    ]
}

/// The summary's closing rows: unpriced models (if any), jobs by state, and how well the
/// cache prediction agreed with the recorded usage (if compared).
fn state_rows(a: &Analysis) -> Vec<Vec<String>> {
    let s = &a.summary;
    let mut rows = Vec::new();
    if !s.unpriced_models.is_empty() {
        rows.push(vec![
            "unpriced models (cost left out)".into(),
            s.unpriced_models.join(", "),
        ]);
    }
    let jobs: Vec<String> = s
        .jobs_by_state
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    rows.push(vec![
        "jobs by state".into(),
        if jobs.is_empty() {
            "-".into()
        } else {
            jobs.join(", ")
        },
    ]);
    if let Some(g) = &s.agreement {
        // Placeholder usage from a fake server makes the cache figures above wrong: say
        // so here, next to them, not only in a warning after the report.
        let hint = if g.suggests_placeholders() && a.usage_used.recorded > 0 {
            " — low: placeholder usage from a fake server? rerun with --usage simulated"
        } else {
            ""
        };
        rows.push(vec![
            "predicted vs observed agreement".into(),
            format!("{}/{} ({}){hint}", g.agreed, g.compared, pct(g.rate)),
        ]);
    }
    rows
}

fn text(a: &Analysis, md: bool) -> String {
    let mut out = String::new();
    let max_rows = (!md).then_some(TERMINAL_REQUEST_ROWS);
    for s in sections(a, max_rows) {
        if md {
            out.push_str(&format!("## {}\n\n", printable(&s.title)));
            if s.rows.is_empty() {
                out.push_str("(none)\n\n");
            } else {
                let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
                out.push_str(&markdown_table(&header, &s.rows));
                out.push('\n');
            }
        } else {
            out.push_str(&format!("{}\n", printable(&s.title)));
            if s.rows.is_empty() {
                out.push_str("  (none)\n\n");
            } else {
                let header: Vec<&str> = s.header.iter().map(String::as_str).collect();
                let mut t = table(&header);
                for r in &s.rows {
                    add_row(&mut t, r.clone());
                }
                out.push_str(&format!("{t}\n"));
                if s.omitted > 0 {
                    out.push_str(&format!(
                        "  … and {} more {} (`--format md` or `json` lists all)\n",
                        s.omitted,
                        s.title.to_lowercase()
                    ));
                }
                out.push('\n');
            }
        }
    }
    out.push_str(&super::mcp::analysis_text(&a.mcp, md));
    out
}
