//! A small text writer shared by the diff and matrix reports: headings, bullets,
//! tables and unified diffs, as terminal text (optionally coloured) or Markdown. Every piece
//! of text passes [`crate::text::printable()`] on its way in (colours are added after), so recorded
//! values cannot drive the terminal.

use crate::diff::text::{Line, SegOp, TextDiff};

pub(super) const RED: &str = "\x1b[31m";
pub(super) const GREEN: &str = "\x1b[32m";
pub(super) const BOLD: &str = "\x1b[1m";
pub(super) const CYAN: &str = "\x1b[36m";
pub(super) const RESET: &str = "\x1b[0m";

/// Accumulates a report.
pub(super) struct Writer {
    /// Markdown instead of terminal text.
    pub md: bool,
    /// ANSI colours (terminal only).
    pub color: bool,
    /// The text so far.
    pub out: String,
}

impl Writer {
    /// A line of text (made printable).
    pub(super) fn line(&mut self, s: &str) {
        let s = crate::text::printable(s);
        self.safe_line(&s);
    }
    /// A line already made printable (and possibly painted).
    fn safe_line(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }
    /// Text made printable, then coloured when colours are on.
    pub(super) fn paint(&self, c: &str, s: &str) -> String {
        let s = crate::text::printable(s);
        if self.color {
            format!("{c}{s}{RESET}")
        } else {
            s
        }
    }
    /// End the output with an empty line (Markdown blocks need one around them).
    pub(super) fn blank(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
    pub(super) fn heading(&mut self, level: usize, s: &str) {
        self.blank();
        if self.md {
            self.line(&format!("{} {s}", "#".repeat(level + 1)));
            self.out.push('\n');
        } else {
            let h = self.paint(BOLD, s);
            self.safe_line(&h);
        }
    }
    pub(super) fn bullet(&mut self, s: &str) {
        let b = if self.md { "- " } else { "  " };
        self.line(&format!("{b}{s}"));
    }
    pub(super) fn table(&mut self, header: &[&str], rows: Vec<Vec<String>>) {
        if self.md {
            self.blank();
            self.out
                .push_str(&super::table::markdown_table(header, &rows));
            self.out.push('\n');
        } else {
            let mut t = super::table::table(header);
            for r in rows {
                super::table::add_row(&mut t, r);
            }
            for l in t.to_string().lines() {
                self.safe_line(&format!("  {}", l.trim_end()));
            }
        }
    }
    pub(super) fn diff(&mut self, d: &TextDiff) {
        if self.md {
            self.blank();
            self.line("```diff");
        }
        for h in &d.hunks {
            let head = format!(
                "@@ -{},{} +{},{} @@",
                h.a_start, h.a_lines, h.b_start, h.b_lines
            );
            let head = self.paint(CYAN, &head);
            self.safe_line(&head);
            for l in &h.lines {
                let s = match l {
                    Line::Context { text } => {
                        format!(" {}", crate::text::printable(&clip(text, 120)))
                    }
                    Line::Delete { text } => self.paint(RED, &format!("-{}", clip(text, 200))),
                    Line::Insert { text } => self.paint(GREEN, &format!("+{}", clip(text, 200))),
                    Line::Change { segments } => {
                        let mut s = String::from("~");
                        for seg in segments {
                            match seg.op {
                                SegOp::Equal => {
                                    s.push_str(&crate::text::printable(&elide(&seg.text, 40)))
                                }
                                SegOp::Delete => {
                                    s.push_str(&self.paint(RED, &format!("[-{}-]", seg.text)))
                                }
                                SegOp::Insert => {
                                    s.push_str(&self.paint(GREEN, &format!("{{+{}+}}", seg.text)))
                                }
                            }
                        }
                        s
                    }
                };
                self.safe_line(&s);
            }
        }
        if self.md {
            self.line("```");
            self.out.push('\n');
        }
    }
}

pub(super) fn code(w: &Writer, s: &str) -> String {
    if w.md {
        format!("`{s}`")
    } else {
        s.to_string()
    }
}

/// Cut a line to `max` characters.
pub(super) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

/// Keep the first and last `keep` characters of a long unchanged run.
pub(super) fn elide(s: &str, keep: usize) -> String {
    let n = s.chars().count();
    if n <= keep * 2 + 1 {
        return s.to_string();
    }
    let head: String = s.chars().take(keep).collect();
    let tail: String = s.chars().skip(n - keep).collect();
    format!("{head}…{tail}")
}
