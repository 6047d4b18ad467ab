//! `agentwire matrix` report: one row per run, and which runs send identical tool
//! definitions.

use super::writer::Writer;
use super::Format;

/// Render the version × settings matrix.
pub fn render_matrix(m: &crate::diff::matrix::Matrix, format: Format) -> String {
    format.finish(render_matrix_unchecked(m, format))
}

fn render_matrix_unchecked(m: &crate::diff::matrix::Matrix, format: Format) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(m);
    }
    let mut w = Writer {
        md: format == Format::Markdown,
        color: false,
        out: String::new(),
    };
    let header = [
        "run",
        "tools",
        "deferred",
        "announced",
        "placeholder",
        "tool bytes",
        "system bytes",
        "body bytes",
        "est. tokens",
        "tool defs",
    ];
    let rows = m
        .rows
        .iter()
        .map(|r| {
            vec![
                r.label.clone(),
                r.tools.to_string(),
                r.deferred_tools.to_string(),
                r.announced_tools.to_string(),
                r.placeholder_tools.to_string(),
                r.tool_bytes.to_string(),
                r.system_bytes.to_string(),
                r.body_bytes.to_string(),
                r.est_tokens.to_string(),
                r.tool_group.clone(),
            ]
        })
        .collect();
    w.table(&header, rows);
    w.blank();
    if m.identical_tools.is_empty() {
        w.line("no two runs send identical tool definitions");
    }
    for g in &m.identical_tools {
        w.bullet(&format!("tool definitions identical: {}", g.join(" = ")));
    }
    for p in &m.problems {
        w.bullet(&format!("problem: {p}"));
    }
    w.out
}
