//! A [`TextDiff`] as the shareable reports show it: a unified diff of whole lines with
//! `-` / `+` prefixes (what a ```` ```diff ```` block on GitHub colours; an edited line is a
//! `-` line and a `+` line, never an inline `[-…-]{+…+}` marker), and side-by-side rows
//! for HTML with the changed words of edited lines marked. Nothing is shortened unless a
//! maximum line length is asked for.

use serde::Serialize;

use crate::diff::text::{Line, SegOp, TextDiff};

/// One piece of a side-by-side cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Piece {
    /// True when this text was deleted (left) or inserted (right).
    pub changed: bool,
    /// The text.
    pub text: String,
}

/// One row of a side-by-side diff.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `hunk` (a `@@` separator), `context`, `delete`, `insert` or `change`.
    pub kind: &'static str,
    /// Old line number (from 1), if the row has an old side.
    pub a_no: Option<usize>,
    /// New line number, if the row has a new side.
    pub b_no: Option<usize>,
    /// Old side.
    pub a: Vec<Piece>,
    /// New side.
    pub b: Vec<Piece>,
}

/// A text diff ready for a report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DiffView {
    /// True when the texts are equal.
    pub identical: bool,
    /// Old size, bytes.
    pub a_bytes: usize,
    /// New size, bytes.
    pub b_bytes: usize,
    /// Characters deleted.
    pub deleted_chars: usize,
    /// Characters inserted.
    pub inserted_chars: usize,
    /// Unified diff text (`@@` headers, ` `/`-`/`+` lines), ending in a newline.
    pub unified: String,
    /// Side-by-side rows.
    pub rows: Vec<Row>,
}

fn piece(changed: bool, text: &str) -> Piece {
    Piece {
        changed,
        text: text.to_string(),
    }
}

/// Cut `s` to `max` characters with a final `…` (only when `max` is given).
pub fn shorten(s: &str, max: Option<usize>) -> String {
    match max {
        Some(m) if s.chars().count() > m => {
            let mut out: String = s.chars().take(m).collect();
            out.push('…');
            out
        }
        _ => s.to_string(),
    }
}

/// Build the view of `d`; `max_line` shortens long lines of the unified text on request.
pub fn view(d: &TextDiff, max_line: Option<usize>) -> DiffView {
    let mut unified = String::new();
    let mut rows = Vec::new();
    let push = |unified: &mut String, prefix: char, text: &str| {
        unified.push(prefix);
        unified.push_str(&shorten(text, max_line));
        unified.push('\n');
    };
    for h in &d.hunks {
        let head = format!(
            "@@ -{},{} +{},{} @@",
            h.a_start, h.a_lines, h.b_start, h.b_lines
        );
        unified.push_str(&head);
        unified.push('\n');
        rows.push(Row {
            kind: "hunk",
            a_no: None,
            b_no: None,
            a: vec![piece(false, &head)],
            b: vec![],
        });
        let (mut a_no, mut b_no) = (h.a_start, h.b_start);
        for l in &h.lines {
            match l {
                Line::Context { text } => {
                    push(&mut unified, ' ', text);
                    rows.push(Row {
                        kind: "context",
                        a_no: Some(a_no),
                        b_no: Some(b_no),
                        a: vec![piece(false, text)],
                        b: vec![piece(false, text)],
                    });
                    a_no += 1;
                    b_no += 1;
                }
                Line::Delete { text } => {
                    push(&mut unified, '-', text);
                    rows.push(Row {
                        kind: "delete",
                        a_no: Some(a_no),
                        b_no: None,
                        a: vec![piece(true, text)],
                        b: vec![],
                    });
                    a_no += 1;
                }
                Line::Insert { text } => {
                    push(&mut unified, '+', text);
                    rows.push(Row {
                        kind: "insert",
                        a_no: None,
                        b_no: Some(b_no),
                        a: vec![],
                        b: vec![piece(true, text)],
                    });
                    b_no += 1;
                }
                Line::Change { segments } => {
                    let side = |keep: SegOp| -> Vec<Piece> {
                        segments
                            .iter()
                            .filter(|s| s.op == SegOp::Equal || s.op == keep)
                            .map(|s| piece(s.op != SegOp::Equal, &s.text))
                            .collect()
                    };
                    let (a, b) = (side(SegOp::Delete), side(SegOp::Insert));
                    let join = |p: &[Piece]| p.iter().map(|x| x.text.as_str()).collect::<String>();
                    push(&mut unified, '-', &join(&a));
                    push(&mut unified, '+', &join(&b));
                    rows.push(Row {
                        kind: "change",
                        a_no: Some(a_no),
                        b_no: Some(b_no),
                        a,
                        b,
                    });
                    a_no += 1;
                    b_no += 1;
                }
            }
        }
    }
    DiffView {
        identical: d.identical,
        a_bytes: d.a_bytes,
        b_bytes: d.b_bytes,
        deleted_chars: d.deleted_chars,
        inserted_chars: d.inserted_chars,
        unified,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::text::diff_text;

    #[test]
    fn edited_lines_become_minus_and_plus_lines_in_full() {
        let long = "x".repeat(300);
        let a = format!("intro\nversion=2.1.303 {long}\nend");
        let b = format!("intro\nversion=2.1.304 {long}\nend\nnew line");
        let v = view(&diff_text(&a, &b), None);
        let lines: Vec<&str> = v.unified.lines().collect();
        assert_eq!(lines[0], "@@ -1,3 +1,4 @@");
        assert_eq!(lines[1], " intro");
        assert_eq!(lines[2], format!("-version=2.1.303 {long}"));
        assert_eq!(lines[3], format!("+version=2.1.304 {long}"));
        assert_eq!(lines[5], "+new line");
        assert!(!v.unified.contains('…') && !v.unified.contains("[-"));
        let change = v.rows.iter().find(|r| r.kind == "change").unwrap();
        assert_eq!((change.a_no, change.b_no), (Some(2), Some(2)));
        let changed: Vec<&str> = change
            .b
            .iter()
            .filter(|p| p.changed)
            .map(|p| p.text.as_str())
            .collect();
        assert_eq!(changed, ["304"]);
        let short = view(&diff_text(&a, &b), Some(20));
        assert!(short.unified.lines().any(|l| l.ends_with('…')));
    }
}
