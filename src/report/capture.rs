//! Summary of a packet extraction (`agentwire pcap`, `agentwire capture`): packets,
//! bytes, flows, exchanges, what was incomplete and why, what was skipped (non-HTTP,
//! TLS, unknown link types).

use crate::capture::pcap::ExtractionSummary;

use super::Format;

/// Render an extraction summary.
pub fn render(s: &ExtractionSummary, format: Format) -> String {
    format.finish(render_unchecked(s, format))
}

fn render_unchecked(s: &ExtractionSummary, format: Format) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(s);
    }
    let rows = rows(s);
    let mut out = match format {
        Format::Markdown => super::table::markdown_table(
            &["what", "count"],
            &rows
                .iter()
                .map(|(a, b)| vec![a.clone(), b.clone()])
                .collect::<Vec<_>>(),
        ),
        _ => {
            let mut t = super::table::table(&["what", "count"]);
            for (a, b) in &rows {
                super::table::add_row(&mut t, vec![a.clone(), b.clone()]);
            }
            super::table::table_text(&t)
        }
    };
    if !s.tls.is_empty() {
        out.push_str("\nTLS connections (encrypted; not decoded):\n");
        for t in &s.tls {
            let line = format!(
                "  {} -> {}  {}  sni={}  {} bytes",
                t.client,
                t.server,
                t.version,
                t.sni.as_deref().unwrap_or("-"),
                t.bytes
            );
            out.push_str(&crate::text::printable(&line));
            out.push('\n');
        }
    }
    out
}

/// The summary's rows, `(what, count)`: the counts always shown, each error kind, then
/// only the counts that are not zero.
fn rows(s: &ExtractionSummary) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = vec![
        ("packets".into(), s.packets.to_string()),
        ("bytes".into(), s.bytes.to_string()),
        ("tcp segments".into(), s.tcp_segments.to_string()),
        ("flows".into(), s.connections.to_string()),
        ("http flows".into(), s.http_connections.to_string()),
        ("exchanges".into(), s.exchanges.to_string()),
        ("  /v1/messages".into(), s.messages_exchanges.to_string()),
        ("  incomplete".into(), s.incomplete.to_string()),
    ];
    for (k, n) in &s.errors {
        rows.push((format!("    {k}"), n.to_string()));
    }
    let mut opt = |label: &str, n: u64| {
        if n > 0 {
            rows.push((label.to_string(), n.to_string()));
        }
    };
    opt("gap bytes", s.gap_bytes);
    opt("retransmitted bytes", s.retransmitted_bytes);
    opt("conflicting retransmitted bytes", s.conflicting_bytes);
    opt("out-of-order segments", s.out_of_order_segments);
    opt(
        "responses without captured request (kept)",
        s.orphan_responses,
    );
    opt("responses lost in capture gaps", s.lost_responses);
    opt("packets without timestamp", s.untimed_packets);
    opt("unparsed http bytes", s.skipped_http_bytes);
    opt("bytes after protocol switch", s.tunneled_bytes);
    opt("non-http flows", s.non_http_connections);
    opt("non-http bytes", s.non_http_bytes);
    opt("tls flows", s.tls.len() as u64);
    opt("non-ip packets", s.not_ip);
    opt("non-tcp packets", s.not_tcp);
    opt("ip fragments (skipped)", s.fragments);
    opt("bad tcp headers", s.bad_tcp_header);
    opt("filtered out", s.filtered_out);
    for (lt, n) in &s.unknown_link_types {
        rows.push((format!("unknown link type {lt} (packets)"), n.to_string()));
    }
    rows
}
