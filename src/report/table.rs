//! Tables, in two shapes:
//! - the commands' tables ([`table`], [`add_row`], [`table_text`], [`markdown_table`]): a
//!   terminal table in agentwire's plain style, or a Markdown table, every cell passed
//!   through the printable filter;
//! - a plain table for the shareable reports ([`Table`]): a title, header labels (each
//!   explained in the glossary), and rows of cells that keep a sortable value next to the
//!   shown text. The Markdown and HTML templates render it the same way for every report.

use serde::Serialize;

use crate::text::fmt::thousands;
use crate::text::markdown::md_cell;
use crate::text::printable;

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

/// Add a row to a terminal table, every cell passed through [`printable()`].
pub fn add_row(t: &mut comfy_table::Table, cells: Vec<String>) {
    t.add_row(cells.iter().map(|c| printable(c)).collect::<Vec<_>>());
}

/// A Markdown table; every cell passes [`md_cell`] (the printable filter, `|` escaped).
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// One cell: the text shown and, for numbers, the value sorting uses.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// Shown text.
    pub text: String,
    /// Sort value (numbers), if any.
    pub v: Option<f64>,
    /// Render as code (names, JSON).
    pub code: bool,
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            v: None,
            code: false,
        }
    }
    /// A code cell (names, JSON values).
    pub fn code(s: impl Into<String>) -> Cell {
        Cell {
            text: s.into(),
            v: None,
            code: true,
        }
    }
    /// A number shown as `text`, sorted by `v`.
    pub fn num(text: impl Into<String>, v: f64) -> Cell {
        Cell {
            text: text.into(),
            v: Some(v),
            code: false,
        }
    }
    /// An integer with thousands separators.
    pub fn int(n: u64) -> Cell {
        Cell::num(thousands(n as i64), n as f64)
    }
}

/// One row, with an optional CSS class (`miss`, `partial`).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Class for HTML (highlighting); empty for none.
    pub class: String,
    /// The cells.
    pub cells: Vec<Cell>,
}

/// A table.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// HTML id (also the anchor).
    pub id: String,
    /// Section title.
    pub title: String,
    /// Header labels.
    pub headers: Vec<String>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Paginate in HTML (long tables).
    pub paged: bool,
    /// Rows left out by a row limit (0: every row is shown).
    pub omitted: usize,
}

impl Table {
    /// An empty table.
    pub fn new(id: &str, title: &str, headers: &[&str]) -> Table {
        Table {
            id: id.into(),
            title: title.into(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            paged: false,
            omitted: 0,
        }
    }
    /// Add a row.
    pub fn push(&mut self, class: &str, cells: Vec<Cell>) {
        self.rows.push(Row {
            class: class.into(),
            cells,
        });
    }
}
