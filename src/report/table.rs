//! A plain table for the shareable reports: a title, header labels (each explained in the
//! glossary), and rows of cells that keep a sortable value next to the shown text. The
//! Markdown and HTML templates render it the same way for every report.

use serde::Serialize;

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
        Cell::num(super::page::thousands(n as i64), n as f64)
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
