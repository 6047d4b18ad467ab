//! Every Markdown escaping rule, in one place. Recorded text (tool names, prompts, header
//! values) reaches Markdown in two kinds of document, and each kind has its own rule for
//! a reason:
//!
//! 1. **Command outputs** (`--format md` of `show`, `diff`, `analyze`, `matrix`, `pcap`,
//!    `replay`): tables and lists meant to read as plain text in a terminal as well as
//!    rendered. Each table cell passes [`md_cell`]: the printable filter
//!    ([`super::printable()`]) and `|` escaped, the one character that would break a GFM
//!    table row. The whole document then passes [`md_document`]: every `<` outside code is
//!    escaped, so no recorded text can start raw HTML (CommonMark 0.31 §6.6: raw HTML
//!    starts with `<`; inside code it is literal already). Nothing else is escaped, so
//!    names such as `mcp__server__tool` or `*.rs` stay as recorded when read raw.
//! 2. **Shareable reports** (`agentwire report`, `history`, `prompt` as Markdown): rendered
//!    documents where recorded text sits in prose, headings and tables. Text passes
//!    [`md_escape`] (the `md` template filter): line breaks become spaces and every
//!    punctuation character that can start markup (`\ ` `` ` `` `* _ [ ] < > | ~ # ! &`) is
//!    backslash-escaped. Inline code passes [`md_code`] (a backtick run longer than any
//!    inside, `|` escaped since GFM tables split on it even inside code), code blocks are
//!    opened and closed by [`fence`] (longer than any backtick run inside).
//!
//! Both kinds apply the printable filter first, so control, bidi and zero-width
//! characters are visible escapes in either.

use super::printable::printable;

/// A Markdown table cell of a command output (rule 1): [`printable`], then `|` escaped.
pub fn md_cell(s: &str) -> String {
    printable(s).replace('|', "\\|")
}

/// A Markdown document with no raw HTML (rule 1): every `<` outside code spans and fenced
/// code blocks is backslash-escaped, so a recorded name such as `<img src=x onerror=…>`
/// renders as text in any CommonMark renderer (CommonMark 0.31 §6.6 raw HTML starts with
/// `<`; inside code it is literal already). The `--format md` outputs of `show`, `diff`,
/// `analyze`, `matrix`, `pcap` and `replay` pass through it.
pub fn md_document(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len() + 16);
    let mut fence: Option<&str> = None;
    for line in doc.split_inclusive('\n') {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                out.push_str(line);
                continue;
            }
            (Some(f), Some(m)) if f == m => {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, None) => {}
        }
        md_line(line, &mut out);
    }
    out
}

/// One line outside fenced code: `<` escaped outside code spans.
fn md_line(line: &str, out: &mut String) {
    let b = line.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => i = code_span_end(b, i),
            b'<' => {
                out.push_str(&line[last..i]);
                out.push_str("\\<");
                i += 1;
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&line[last.min(line.len())..]);
}

/// Where the code span opened by the backtick run at `i` ends: after the next run of
/// exactly as many backticks, or (no such run: the backticks are literal) after the run.
fn code_span_end(b: &[u8], i: usize) -> usize {
    let run = b[i..].iter().take_while(|&&c| c == b'`').count();
    let open = i + run;
    let mut j = open;
    while j < b.len() {
        if b[j] == b'`' {
            let r = b[j..].iter().take_while(|&&c| c == b'`').count();
            if r == run {
                return j + r;
            }
            j += r;
        } else {
            j += 1;
        }
    }
    open
}

/// Markdown text of a shareable report (rule 2): punctuation that could start markup
/// escaped with a backslash, line breaks as spaces, control characters as visible escapes.
pub fn md_escape(s: &str) -> String {
    let s = printable(&s.replace(['\r', '\n'], " "));
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '!' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Markdown inline code (rule 2): a backtick run longer than any inside `s`, `|` escaped
/// (GFM tables split on it even inside code), line breaks as spaces.
pub fn md_code(s: &str) -> String {
    let s = printable(&s.replace(['\r', '\n'], " ")).replace('|', "\\|");
    let ticks = "`".repeat(longest_run(&s, '`') + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{s}{pad}{ticks}")
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for x in s.chars() {
        if x == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A code fence longer than any backtick run in `s` (at least three backticks; rule 2).
pub fn fence(s: &str) -> String {
    "`".repeat((longest_run(s, '`') + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reported by an adversarial tester: `show`, `diff` and `analyze --format md`
    /// printed a recorded tool name `<img src=x onerror=alert(1)>` as raw HTML (the shared
    /// reports escaped it).
    #[test]
    fn markdown_outputs_carry_no_raw_html() {
        let doc = "| tool |\n| --- |\n| a <img src=x onerror=alert(1)> `<uuid>` |\n\n```diff\n- <script>\n```\n<script>x</script>\n";
        let out = md_document(doc);
        use pulldown_cmark::{Event, Options, Parser};
        let events: Vec<Event> = Parser::new_ext(&out, Options::ENABLE_TABLES).collect();
        let html: Vec<&Event> = events
            .iter()
            .filter(|e| matches!(e, Event::Html(_) | Event::InlineHtml(_)))
            .collect();
        assert!(html.is_empty(), "raw HTML in {out}: {html:?}");
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                Event::Text(t) | Event::Code(t) => Some(t.to_string()),
                _ => None,
            })
            .collect();
        assert!(text.contains("a <img src=x onerror=alert(1)>"), "{text}");
        assert!(text.contains("<script>x</script>"), "{text}");
        // Code spans and fenced blocks keep their text as it was.
        assert!(
            out.contains("`<uuid>`") && out.contains("- <script>\n```"),
            "{out}"
        );
        assert!(events.contains(&Event::Code("<uuid>".into())), "{events:?}");
    }

    #[test]
    fn markdown_escaping() {
        assert_eq!(md_escape("<b>*x*</b>|y\nz"), "\\<b\\>\\*x\\*\\</b\\>\\|y z");
        assert_eq!(md_code("a`b|c"), "``a`b\\|c``");
        assert_eq!(fence("x ```` y"), "`````");
        assert_eq!(fence("plain"), "```");
    }

    #[test]
    fn a_command_output_cell_escapes_only_the_row_separator() {
        assert_eq!(md_cell("a|b*c_\u{1b}"), "a\\|b*c_\\u{1b}");
    }

    #[test]
    fn unclosed_backticks_are_literal_and_a_later_lt_is_escaped() {
        assert_eq!(md_document("``a <b\n"), "``a \\<b\n");
        assert_eq!(md_document("`x` <y `z`\n"), "`x` \\<y `z`\n");
    }
}
