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
pub mod mcp;
pub mod meta;
pub mod page;
pub mod parquet;
pub mod prompt;
pub mod replay;
pub mod safe_json;
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

/// A Markdown table; every cell passes [`printable`], and `|` is escaped.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let esc = |s: &str| printable(s).replace('|', "\\|");
    let mut out = String::new();
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// A Markdown document with no raw HTML: every `<` outside code spans and fenced code
/// blocks is backslash-escaped, so a recorded name such as `<img src=x onerror=…>` renders
/// as text in any CommonMark renderer (CommonMark 0.31 §6.6 raw HTML starts with `<`;
/// inside code it is literal already). The `--format md` outputs of `show`, `diff`,
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

/// A rendered report as it leaves its renderer: Markdown through [`md_document`], the
/// other formats as they are (their cells and strings passed [`printable`] or [`json`]).
pub fn in_format(format: Format, rendered: String) -> String {
    match format {
        Format::Markdown => md_document(&rendered),
        Format::Table | Format::Json => rendered,
    }
}

/// One line outside fenced code: `<` escaped outside code spans.
fn md_line(line: &str, out: &mut String) {
    let b = line.as_bytes();
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => {
                let run = b[i..].iter().take_while(|&&c| c == b'`').count();
                let open = i + run;
                // the span ends at the next run of exactly `run` backticks
                let mut j = open;
                let mut end = None;
                while j < b.len() {
                    if b[j] == b'`' {
                        let r = b[j..].iter().take_while(|&&c| c == b'`').count();
                        if r == run {
                            end = Some(j + r);
                            break;
                        }
                        j += r;
                    } else {
                        j += 1;
                    }
                }
                i = end.unwrap_or(open);
            }
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

/// Add a row to a terminal table, every cell passed through [`printable`].
pub fn add_row(t: &mut comfy_table::Table, cells: Vec<String>) {
    t.add_row(cells.iter().map(|c| printable(c)).collect::<Vec<_>>());
}

/// Characters that must not reach a terminal raw: Unicode general categories Cc (C0
/// controls, DEL, C1 controls), Cf (format characters: bidi embeddings, overrides and
/// isolates, zero-width space/joiners, BOM, soft hyphen, tag characters), Zl (U+2028) and
/// Zp (U+2029).
pub(crate) static UNPRINTABLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]").expect("static regex")
});

/// Length of the longest prefix of `s` that [`UNPRINTABLE`] cannot match in: printable
/// ASCII (U+0020–U+007E), plus tab, LF and CR when `whitespace` is true. Every character
/// the pattern matches is a C0 control, DEL or not ASCII, so the pattern only has to run
/// from here. The scan reads 32 bytes per step without branching on each (the compiler
/// vectorizes it): on ASCII text it runs at memory speed, where the regex engine's DFA
/// manages about 600 MB/s.
pub(crate) fn printable_ascii_prefix(s: &str, whitespace: bool) -> usize {
    let suspect =
        |c: u8| c >= 0x7f || (c < 0x20 && !(whitespace && matches!(c, b'\t' | b'\n' | b'\r')));
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(chunk) = b.get(i..i + 32) {
        if chunk.iter().fold(false, |acc, &c| acc | suspect(c)) {
            break;
        }
        i += 32;
    }
    // Every byte before the first suspect is ASCII, so it is a character boundary.
    b[i..]
        .iter()
        .position(|&c| suspect(c))
        .map_or(b.len(), |k| i + k)
}

/// `s` with each character [`UNPRINTABLE`] matches replaced by `escape(character)`,
/// borrowed when there is none. `whitespace`: tab, LF and CR are known to be left alone by
/// `escape`, so the fast prefix scan may pass them ([`printable_ascii_prefix`]).
pub(crate) fn replace_unprintable(
    s: &str,
    whitespace: bool,
    escape: impl Fn(char, &mut String),
) -> std::borrow::Cow<'_, str> {
    let k = printable_ascii_prefix(s, whitespace);
    if k == s.len() {
        return std::borrow::Cow::Borrowed(s);
    }
    let tail = UNPRINTABLE.replace_all(&s[k..], |c: &regex::Captures| {
        let mut out = String::new();
        for ch in c[0].chars() {
            escape(ch, &mut out);
        }
        out
    });
    match tail {
        std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(s),
        std::borrow::Cow::Owned(t) => std::borrow::Cow::Owned(format!("{}{t}", &s[..k])),
    }
}

/// The printable filter every renderer uses: text safe to print in a terminal or a
/// Markdown cell. Control characters (escape sequences, NUL, newlines, C1), format
/// characters (bidi overrides, zero-width characters) and line/paragraph separators become
/// visible `\u{..}` escapes, so a recorded value can never drive the terminal, reorder
/// what is shown, hide text, or break a table row.
pub fn printable(s: &str) -> String {
    replace_unprintable(s, false, |ch, out| out.extend(ch.escape_unicode())).into_owned()
}

/// `n` and a noun, singular for one (`1 exchange`, `2 exchanges`, `0 exchanges`); the
/// plural is the noun with `s`.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    count_irregular(n, noun, &format!("{noun}s"))
}

/// [`count`] for a noun whose plural is not the noun with `s` (`entry`, `entries`).
pub fn count_irregular(n: impl Into<u64>, singular: &str, plural: &str) -> String {
    match n.into() {
        1 => format!("1 {singular}"),
        n => format!("{n} {plural}"),
    }
}

/// [`printable`] applied line by line: newlines stay, everything else is escaped (for
/// multi-line messages such as errors).
pub fn printable_lines(s: &str) -> String {
    s.split('\n').map(printable).collect::<Vec<_>>().join("\n")
}

/// Pretty JSON of a report, with the characters [`printable`] escapes written as `\uXXXX`
/// escapes ([`safe_json::escape_json_text`]: the JSON value is unchanged; a terminal showing
/// it is safe). Ends in a newline.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let Ok(s) = serde_json::to_string_pretty(value) else {
        return "null\n".into();
    };
    let mut s = safe_json::escape_json_text(&s).into_owned();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The filter as the pattern alone defines it, without the ASCII pre-scan.
    fn by_regex_alone(s: &str, keep_whitespace: bool) -> String {
        super::UNPRINTABLE
            .replace_all(s, |c: &regex::Captures| {
                c[0].chars()
                    .map(|ch| {
                        if keep_whitespace && matches!(ch, '\t' | '\n' | '\r') {
                            ch.to_string()
                        } else {
                            ch.escape_unicode().to_string()
                        }
                    })
                    .collect::<String>()
            })
            .into_owned()
    }

    proptest! {
        /// The ASCII pre-scan must never skip a character the pattern would escape, at
        /// any offset around its 32-byte steps.
        #[test]
        fn ascii_prescan_changes_nothing_the_pattern_decides(
            pad in 0usize..70,
            tail in proptest::collection::vec(
                prop_oneof![
                    Just('a'), Just(' '), Just('\n'), Just('\t'), Just('\r'), Just('\u{1b}'),
                    Just('\u{7f}'), Just('\u{9b}'), Just('\u{202e}'), Just('\u{200b}'),
                    Just('é'), Just('—'), Just('\u{2028}'), Just('\u{1f600}'), Just('\0'),
                ],
                0..40,
            ),
        ) {
            let s = "x".repeat(pad) + &tail.into_iter().collect::<String>();
            prop_assert_eq!(super::printable(&s), by_regex_alone(&s, false));
            let escaped = super::replace_unprintable(&s, true, |ch, out| {
                if matches!(ch, '\t' | '\n' | '\r') {
                    out.push(ch)
                } else {
                    out.extend(ch.escape_unicode())
                }
            });
            prop_assert_eq!(escaped.into_owned(), by_regex_alone(&s, true));
        }
    }

    #[test]
    fn ascii_prefix_stops_at_the_first_byte_the_pattern_could_match() {
        let p = super::printable_ascii_prefix;
        let s = format!("{}\u{7f}", "a".repeat(40));
        assert_eq!(p(&s, true), 40);
        assert_eq!(p("line\n", true), 5);
        assert_eq!(p("line\n", false), 4);
        assert_eq!(p(&format!("{}é", "b".repeat(31)), false), 31);
        assert_eq!(p("", false), 0);
    }

    #[test]
    fn one_exchange_is_singular() {
        assert_eq!(super::count(1u64, "exchange"), "1 exchange");
        assert_eq!(super::count(0u64, "exchange"), "0 exchanges");
        assert_eq!(super::count(12u64, "tool"), "12 tools");
        assert_eq!(super::count_irregular(1u64, "entry", "entries"), "1 entry");
        assert_eq!(
            super::count_irregular(7u64, "entry", "entries"),
            "7 entries"
        );
    }

    /// Reported by an adversarial tester: `show`, `diff` and `analyze --format md`
    /// printed a recorded tool name `<img src=x onerror=alert(1)>` as raw HTML (the shared
    /// reports escaped it).
    #[test]
    fn markdown_outputs_carry_no_raw_html() {
        let doc = "| tool |\n| --- |\n| a <img src=x onerror=alert(1)> `<uuid>` |\n\n```diff\n- <script>\n```\n<script>x</script>\n";
        let out = super::md_document(doc);
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
    fn control_characters_are_escaped() {
        assert_eq!(super::printable("a\u{1b}[31mb\n"), "a\\u{1b}[31mb\\u{a}");
        assert_eq!(super::printable("plain é"), "plain é");
    }

    /// Unicode format characters and separators were passed raw (bidi overrides reorder
    /// what a terminal shows; zero-width characters hide text).
    #[test]
    fn bidi_zero_width_and_separators_are_escaped() {
        for (c, esc) in [
            ('\u{202e}', "\\u{202e}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{200b}', "\\u{200b}"),
            ('\u{200d}', "\\u{200d}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
            ('\u{9b}', "\\u{9b}"),
            ('\u{e0041}', "\\u{e0041}"),
        ] {
            assert_eq!(super::printable(&format!("a{c}b")), format!("a{esc}b"));
        }
        let j = super::json(&serde_json::json!({"k": "x\u{202e}y\u{9b}z\u{1b}"}));
        assert!(j.contains(r#""x\u202ey\u009bz\u001b""#), "{j}");
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(
            v["k"], "x\u{202e}y\u{9b}z\u{1b}",
            "the JSON value is unchanged"
        );
    }
}
