//! Text diffs of prompts and descriptions: a line-level unified diff (`similar`, Myers)
//! with word-level changes inside lines that were edited rather than replaced.
//!
//! Words are runs of letters, digits and `_`; every other character is its own token, so
//! `cc_version=2.1.303` vs `2.1.304` differs in the token `303` only. A deleted line and an
//! inserted line are paired as one edited line when at least half their characters are
//! shared; otherwise they stay a deletion and an insertion.

use std::time::Duration;

use serde::Serialize;
use similar::{Algorithm, DiffOp, DiffTag};

/// The diff of two texts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TextDiff {
    /// True when the texts are equal.
    pub identical: bool,
    /// Size of the old text in bytes.
    pub a_bytes: usize,
    /// Size of the new text in bytes.
    pub b_bytes: usize,
    /// Characters deleted (in deleted lines and deleted words).
    pub deleted_chars: usize,
    /// Characters inserted.
    pub inserted_chars: usize,
    /// Hunks with [`CONTEXT`] lines of context.
    pub hunks: Vec<Hunk>,
}

/// Lines of context around each change.
pub const CONTEXT: usize = 1;

/// One hunk of a unified diff.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hunk {
    /// First old line, from 1.
    pub a_start: usize,
    /// Old lines covered.
    pub a_lines: usize,
    /// First new line, from 1.
    pub b_start: usize,
    /// New lines covered.
    pub b_lines: usize,
    /// The lines.
    pub lines: Vec<Line>,
}

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Line {
    /// Unchanged.
    Context {
        /// The line.
        text: String,
    },
    /// Only in the old text.
    Delete {
        /// The line.
        text: String,
    },
    /// Only in the new text.
    Insert {
        /// The line.
        text: String,
    },
    /// Edited: word-level segments.
    Change {
        /// The line's words, unchanged, deleted and inserted, in order.
        segments: Vec<Segment>,
    },
}

/// A run of words inside an edited line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    /// `equal`, `delete` or `insert`.
    pub op: SegOp,
    /// The text.
    pub text: String,
}

/// Kind of a [`Segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SegOp {
    /// In both.
    Equal,
    /// Only in the old line.
    Delete,
    /// Only in the new line.
    Insert,
}

impl TextDiff {
    /// Segments that were deleted or inserted inside edited lines, in order.
    pub fn word_changes(&self) -> Vec<&Segment> {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter_map(|l| match l {
                Line::Change { segments } => Some(segments),
                _ => None,
            })
            .flatten()
            .filter(|s| s.op != SegOp::Equal)
            .collect()
    }
}

/// Diff two texts by lines, then by words inside edited lines.
pub fn diff_text(a: &str, b: &str) -> TextDiff {
    let mut d = TextDiff {
        identical: a == b,
        a_bytes: a.len(),
        b_bytes: b.len(),
        ..TextDiff::default()
    };
    if d.identical {
        return d;
    }
    let la: Vec<&str> = a.split('\n').collect();
    let lb: Vec<&str> = b.split('\n').collect();
    let ops = similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &la,
        &lb,
        Some(std::time::Instant::now() + Duration::from_millis(500)),
    );
    for group in similar::group_diff_ops(ops, CONTEXT) {
        let (first, last) = (&group[0], &group[group.len() - 1]);
        let a_start = first.old_range().start;
        let b_start = first.new_range().start;
        let mut hunk = Hunk {
            a_start: a_start + 1,
            a_lines: last.old_range().end - a_start,
            b_start: b_start + 1,
            b_lines: last.new_range().end - b_start,
            lines: Vec::new(),
        };
        for op in &group {
            push_op(op, &la, &lb, &mut hunk.lines, &mut d);
        }
        d.hunks.push(hunk);
    }
    d
}

fn push_op(op: &DiffOp, la: &[&str], lb: &[&str], out: &mut Vec<Line>, d: &mut TextDiff) {
    let (tag, ra, rb) = op.as_tag_tuple();
    match tag {
        DiffTag::Equal => out.extend(la[ra].iter().map(|t| Line::Context {
            text: t.to_string(),
        })),
        DiffTag::Delete => delete_lines(&la[ra], out, d),
        DiffTag::Insert => insert_lines(&lb[rb], out, d),
        DiffTag::Replace => {
            let (old, new) = (&la[ra], &lb[rb]);
            let paired = old.len().min(new.len());
            for i in 0..paired {
                match word_diff(old[i], new[i]) {
                    Some((segments, del, ins)) => {
                        d.deleted_chars += del;
                        d.inserted_chars += ins;
                        out.push(Line::Change { segments });
                    }
                    None => {
                        delete_lines(&old[i..=i], out, d);
                        insert_lines(&new[i..=i], out, d);
                    }
                }
            }
            delete_lines(&old[paired..], out, d);
            insert_lines(&new[paired..], out, d);
        }
    }
}

fn delete_lines(lines: &[&str], out: &mut Vec<Line>, d: &mut TextDiff) {
    for l in lines {
        d.deleted_chars += l.chars().count();
        out.push(Line::Delete {
            text: l.to_string(),
        });
    }
}

fn insert_lines(lines: &[&str], out: &mut Vec<Line>, d: &mut TextDiff) {
    for l in lines {
        d.inserted_chars += l.chars().count();
        out.push(Line::Insert {
            text: l.to_string(),
        });
    }
}

/// Tokens: runs of word characters, runs of spaces, or single other characters.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<u8> = None;
    for (i, c) in s.char_indices() {
        let class = if c.is_alphanumeric() || c == '_' {
            1
        } else if c == ' ' {
            2
        } else {
            0
        };
        if i > start && (class == 0 || Some(class) != prev) {
            out.push(&s[start..i]);
            start = i;
        }
        prev = Some(class);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Word-level diff of two lines: segments, deleted and inserted char counts; `None` when
/// the lines share less than half their characters (a replacement, not an edit).
fn word_diff(a: &str, b: &str) -> Option<(Vec<Segment>, usize, usize)> {
    let ta = tokens(a);
    let tb = tokens(b);
    let ops = similar::capture_diff_slices(Algorithm::Myers, &ta, &tb);
    let mut segs: Vec<Segment> = Vec::new();
    let (mut equal, mut del, mut ins) = (0usize, 0usize, 0usize);
    let mut push = |op: SegOp, parts: &[&str]| {
        let text: String = parts.concat();
        if text.is_empty() {
            return;
        }
        let n = text.chars().count();
        match op {
            SegOp::Equal => equal += n,
            SegOp::Delete => del += n,
            SegOp::Insert => ins += n,
        }
        match segs.last_mut() {
            Some(last) if last.op == op => last.text.push_str(&text),
            _ => segs.push(Segment { op, text }),
        }
    };
    for op in &ops {
        let (tag, ra, rb) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => push(SegOp::Equal, &ta[ra]),
            DiffTag::Delete => push(SegOp::Delete, &ta[ra]),
            DiffTag::Insert => push(SegOp::Insert, &tb[rb]),
            DiffTag::Replace => {
                push(SegOp::Delete, &ta[ra]);
                push(SegOp::Insert, &tb[rb]);
            }
        }
    }
    let total = a.chars().count() + b.chars().count();
    if total > 0 && equal * 2 * 2 < total {
        return None;
    }
    Some((fold_spaces(segs), del, ins))
}

/// Merge change runs separated only by spaces into one deletion and one insertion, so
/// `[-a-]{+x+} [-b-]{+y+}` reads `[-a b-]{+x y+}`. Counts are unaffected (the spaces
/// are in both).
fn fold_spaces(segs: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segs.len());
    let (mut del, mut ins) = (String::new(), String::new());
    let flush = |out: &mut Vec<Segment>, del: &mut String, ins: &mut String| {
        for (op, t) in [(SegOp::Delete, del), (SegOp::Insert, ins)] {
            if !t.is_empty() {
                out.push(Segment {
                    op,
                    text: std::mem::take(t),
                });
            }
        }
    };
    for (i, s) in segs.iter().enumerate() {
        match s.op {
            SegOp::Delete => del.push_str(&s.text),
            SegOp::Insert => ins.push_str(&s.text),
            SegOp::Equal => {
                let between = (!del.is_empty() || !ins.is_empty())
                    && segs.get(i + 1).is_some_and(|n| n.op != SegOp::Equal)
                    && s.text.chars().all(|c| c == ' ');
                if between {
                    del.push_str(&s.text);
                    ins.push_str(&s.text);
                } else {
                    flush(&mut out, &mut del, &mut ins);
                    out.push(s.clone());
                }
            }
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edited_line_shows_only_changed_words() {
        let a = "intro\nheader: cc_version=2.1.303.<fp>; entry=cli;\nsame\nend";
        let b = "intro\nheader: cc_version=2.1.304.<fp>; entry=cli;\nsame\nend";
        let d = diff_text(a, b);
        assert!(!d.identical);
        assert_eq!((d.deleted_chars, d.inserted_chars), (3, 3));
        let w: Vec<(SegOp, &str)> = d
            .word_changes()
            .iter()
            .map(|s| (s.op, s.text.as_str()))
            .collect();
        assert_eq!(w, vec![(SegOp::Delete, "303"), (SegOp::Insert, "304")]);
        assert_eq!(d.hunks.len(), 1);
        let h = &d.hunks[0];
        assert_eq!((h.a_start, h.a_lines, h.b_start, h.b_lines), (1, 3, 1, 3));
        assert!(matches!(&h.lines[0], Line::Context { text } if text == "intro"));
    }

    #[test]
    fn unrelated_lines_are_delete_and_insert() {
        let d = diff_text("a\nthe quick brown fox\nz", "a\nlorem ipsum dolor\nz");
        let ops: Vec<&str> = d.hunks[0]
            .lines
            .iter()
            .map(|l| match l {
                Line::Context { .. } => "ctx",
                Line::Delete { .. } => "del",
                Line::Insert { .. } => "ins",
                Line::Change { .. } => "chg",
            })
            .collect();
        assert_eq!(ops, ["ctx", "del", "ins", "ctx"]);
        assert_eq!(d.deleted_chars, 19);
        assert_eq!(d.inserted_chars, 17);
    }

    #[test]
    fn inserted_paragraph_and_identical_texts() {
        let d = diff_text("a\nb\nc", "a\nb\nX\nY\nc");
        assert_eq!(d.hunks.len(), 1);
        assert_eq!((d.deleted_chars, d.inserted_chars), (0, 2));
        assert_eq!((d.hunks[0].a_start, d.hunks[0].b_start), (2, 2));
        assert!(diff_text("same", "same").identical);
        assert!(diff_text("same", "same").hunks.is_empty());
    }

    #[test]
    fn changes_separated_by_spaces_are_folded() {
        let d = diff_text("say the quick brown fox now", "say a slow red fox now");
        let w: Vec<(SegOp, &str)> = d
            .word_changes()
            .iter()
            .map(|s| (s.op, s.text.as_str()))
            .collect();
        assert_eq!(
            w,
            vec![
                (SegOp::Delete, "the quick brown"),
                (SegOp::Insert, "a slow red")
            ]
        );
        assert_eq!((d.deleted_chars, d.inserted_chars), (13, 8));
    }

    #[test]
    fn tokens_split_words_and_punctuation() {
        assert_eq!(
            tokens("cc_version=2.1.303;  x"),
            ["cc_version", "=", "2", ".", "1", ".", "303", ";", "  ", "x"]
        );
    }
}
