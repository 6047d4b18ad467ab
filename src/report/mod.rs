//! Renderers: terminal tables, Markdown, JSON, and the shareable reports (standalone
//! Markdown, self-contained HTML with SVG charts, JSON). Each report type has a module
//! that turns an analysis result into text; nothing here reads files or sockets.

pub mod analysis_tables;
pub mod analyze;
pub mod audit_page;
pub mod capture;
pub mod chart;
pub mod diff;
pub mod diff_page;
pub mod glossary;
pub mod history_page;
pub mod matrix;
pub mod matrix_page;
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

impl Format {
    /// A rendered report as it leaves its renderer: Markdown through
    /// [`crate::text::markdown::md_document`] (no raw HTML), the other formats as they are
    /// (their cells and strings passed [`crate::text::printable()`] or
    /// [`crate::text::safe_json::pretty`]).
    pub fn finish(self, rendered: String) -> String {
        match self {
            Format::Markdown => crate::text::markdown::md_document(&rendered),
            Format::Table | Format::Json => rendered,
        }
    }
}
