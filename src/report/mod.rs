//! Renderers: terminal tables, Markdown, JSON, and the shareable reports (standalone
//! Markdown, self-contained HTML with SVG charts, JSON). Each report type has a module
//! that turns an analysis result into text; nothing here reads files or sockets.

pub mod analyze;
pub mod audit_page;
pub mod capture;
pub mod chart;
pub mod diff;
pub mod diff_page;
pub mod glossary;
pub mod history_page;
pub mod matrix;
pub mod mcp;
pub mod meta;
pub mod page;
pub mod parquet;
pub mod prompt;
pub mod replay;
pub mod show;
pub mod table;
pub mod textview;
mod writer;

/// Format of a shareable report (`agentwire report`, `history`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocFormat {
    /// One self-contained HTML file (inline CSS, script and SVG charts; no network).
    Html,
    /// Standalone GitHub-flavoured Markdown.
    Markdown,
    /// JSON: the report's figures with its head, summary and glossary.
    Json,
}

impl DocFormat {
    /// The format an output path's extension names (`.html`/`.htm`, `.md`/`.markdown`,
    /// `.json`), if any.
    pub fn from_path(path: &std::path::Path) -> Option<DocFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "html" | "htm" => Some(DocFormat::Html),
            "md" | "markdown" => Some(DocFormat::Markdown),
            "json" => Some(DocFormat::Json),
            _ => None,
        }
    }
}

/// Output format of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Terminal table (coloured only when `color` is set by the caller).
    Table,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// JSON (a stable, documented shape per report).
    Json,
}

/// A fresh table with agentwire's terminal style (no colour, UTF-8 borders off for
/// copy-paste: ASCII-only condensed layout).
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING);
    t.set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    t.set_header(header.iter().map(|h| h.to_string()));
    for c in t.column_iter_mut() {
        c.set_padding((0, 2));
    }
    t
}

/// A table as text: one line per row, no trailing spaces, ending in a newline.
pub fn table_text(t: &comfy_table::Table) -> String {
    let mut out: String = t
        .to_string()
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    if out.is_empty() {
        out.push('\n');
    }
    out
}

/// A Markdown table.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Text safe to print in a terminal or Markdown cell: control characters (escape
/// sequences, NUL, newlines) become visible `\u{..}` escapes, so a recorded value can
/// never drive the terminal or break a table row.
pub fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(super::printable("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\u{a}");
        assert_eq!(super::printable("plain é"), "plain é");
    }
}
