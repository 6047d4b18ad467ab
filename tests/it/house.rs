//! House rules checked on the source itself (issue 27): no module imports its own layer
//! or a higher one ([`LAYERS`]); nothing under `src/` prints but the binary's one
//! diagnostics sink, `src/cmd/diag.rs`. Every line on stderr must pass
//! it (redaction, then the printable filter); stdout output goes through functions that
//! write to `io::stdout()` explicitly (`cmd::io::print_stdout`). Comments, string literals
//! and `#[cfg(test)]` code are ignored; `write!`/`writeln!` to an explicit writer is fine.
//! And the binary's one error convention: causes are embedded in the messages, so no
//! anyhow `.context` in the binary's glue.

use std::path::{Path, PathBuf};

/// The one file allowed to use the printing macros.
const SINK: &str = "src/cmd/diag.rs";

/// Macros that print on the process's own stdout or stderr.
fn printing_macro() -> regex::Regex {
    regex::Regex::new(r"\b(eprintln|eprint|println|print|dbg)\s*!").unwrap()
}

/// `src` with comments and the contents of string and character literals replaced by
/// spaces (newlines kept, so line numbers stay).
fn blank_comments_and_literals(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    // One space per byte, so byte offsets in the result are those of `src`.
    let blank = |out: &mut String, ch: char| {
        if ch == '\n' {
            out.push('\n')
        } else {
            out.extend(std::iter::repeat_n(' ', ch.len_utf8()))
        }
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        // `r` may start a raw string after a non-identifier character, or after the `b`
        // of `br"…"`.
        let raw_may_start = match i {
            0 => true,
            1 => !ident(c[0]) || c[0] == 'b',
            _ => !ident(c[i - 1]) || (c[i - 1] == 'b' && !ident(c[i - 2])),
        };
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r' && raw_may_start && matches!(next, Some('"' | '#')) {
            // A raw string r"…", r#"…"# (or the tail of br"…"); `r#ident` is not one.
            let hashes = c[i + 1..].iter().take_while(|&&h| h == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let end: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body_start = i + 2 + hashes;
            let rest: String = c[body_start..].iter().collect();
            let len = rest.find(&end).map_or(rest.chars().count(), |k| {
                rest[..k].chars().count() + end.len()
            });
            for &ch in &c[i..(body_start + len).min(c.len())] {
                blank(&mut out, ch);
            }
            i = body_start + len;
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal ('a', '\n', '\'', '\u{1b}'); a lifetime ('a) has no closing
            // quote. After a backslash the escaped character is skipped first.
            let from = if next == Some('\\') { i + 3 } else { i + 2 };
            let close = c
                .get(from..)
                .and_then(|r| r.iter().position(|&q| q == '\''))
                .map_or(c.len() - 1, |k| from + k);
            for &ch in &c[i..=close] {
                blank(&mut out, ch);
            }
            i = close + 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A test module kept in its own file: its file name, and whether a `#[path]` gave it.
type TestFile = (String, bool);

/// `code` (already blanked) with every `#[cfg(test)]` item blanked; the test modules kept
/// in their own files (`#[cfg(test)] mod tests;`, with a `#[path]` if any) are returned,
/// to be skipped.
fn drop_test_items(code: &str, original: &str) -> (String, Vec<TestFile>) {
    let attr = regex::Regex::new(r"#\[\s*cfg\s*\(\s*test\s*\)\s*\]").unwrap();
    let out_of_line =
        regex::Regex::new(r"(?s)(?:#\[path\s*=\s*(.*?)\]\s*)?mod\s+(\w+)\s*;").unwrap();
    let b = code.as_bytes();
    let mut out = code.to_string().into_bytes();
    let mut files = Vec::new();
    for m in attr.find_iter(code) {
        // The item ends with its block, or at a `;` or `,` outside brackets (a `use`, a
        // field), or where the enclosing block does.
        let mut j = m.end();
        let mut depth = 0usize;
        let end = loop {
            match b.get(j) {
                None => break b.len(),
                Some(b'{' | b'(' | b'[') => depth += 1,
                Some(b'}') if depth == 0 => break j,
                Some(b'}') if depth == 1 => break j + 1,
                Some(b'}' | b')' | b']') => depth = depth.saturating_sub(1),
                Some(b';' | b',') if depth == 0 => break j + 1,
                _ => {}
            }
            j += 1;
        };
        let item = &original[m.end()..end];
        if let Some(c) = out_of_line.captures(item) {
            files.push(match c.get(1) {
                Some(p) => (p.as_str().trim().trim_matches('"').to_string(), true),
                None => (format!("{}.rs", &c[2]), false),
            });
        }
        for byte in &mut out[m.start()..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    }
    (String::from_utf8(out).expect("ASCII blanks"), files)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every production source file under `root/src`: its path relative to `root`, its text,
/// and its code (comments, literals and `#[cfg(test)]` items blanked; out-of-line test
/// modules left out).
fn production_sources(root: &Path) -> Vec<(String, String, String)> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut test_files = Vec::new();
    let mut code = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (c, tests) = drop_test_items(&blank_comments_and_literals(&text), &text);
        // An out-of-line test module is `NAME.rs` beside a `mod.rs` (or `lib.rs`), else in
        // the folder named after the declaring file; a `#[path]` is relative to the
        // declaring file's folder.
        let dir = f.parent().unwrap();
        let stem = f.file_stem().unwrap().to_string_lossy();
        for (name, by_path) in tests {
            test_files.push(if by_path || matches!(&*stem, "mod" | "lib" | "main") {
                dir.join(&name)
            } else {
                dir.join(&*stem).join(&name)
            });
        }
        code.push((f.clone(), text, c));
    }
    code.into_iter()
        .filter(|(f, _, _)| !test_files.contains(f))
        .map(|(f, text, c)| {
            let rel = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, text, c)
        })
        .collect()
}

/// Every use of a printing macro in production code under `root/src`, as `FILE:LINE: text`.
fn prints_outside_the_sink(root: &Path) -> Vec<String> {
    let re = printing_macro();
    let mut found = Vec::new();
    for (rel, text, c) in production_sources(root) {
        if rel == SINK {
            continue;
        }
        for m in re.find_iter(&c) {
            let line = c[..m.start()].matches('\n').count();
            found.push(format!(
                "{rel}:{}: {}",
                line + 1,
                text.lines().nth(line).unwrap_or("").trim()
            ));
        }
    }
    found
}

/// The library's layers, lowest first (DESIGN.md's pipeline as a folder tree; the README's
/// "Layout" table): a module may use only modules of a lower layer. The binary (`main`,
/// `cli`, `cmd`) sits on top and uses the library through `agentwire::`.
const LAYERS: &[&[&str]] = &[
    &["gzip", "output", "text", "http"],
    &["trace"],
    &["api"],
    &["capture", "import"],
    &["input"],
    &["gate"],
    &["diff", "analyze"],
    &["report"],
    // the conversation viewer: answers and their renderers (its export is the HTML report)
    &["viewer"],
];

/// The layer of a top-level module, if the table names it.
fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Every `crate::MODULE` path in production code under `root/src` that reaches a module of
/// the same or a higher layer, as `FILE:LINE: from -> to`; and files of modules the table
/// does not name.
fn upward_imports(root: &Path) -> Vec<String> {
    let path = regex::Regex::new(r"\bcrate\s*::\s*([a-z_][a-z0-9_]*)").unwrap();
    let mut found = Vec::new();
    for (rel, _, code) in production_sources(root) {
        let inner = rel.strip_prefix("src/").unwrap_or(&rel);
        let module = inner.split('/').next().unwrap().trim_end_matches(".rs");
        if matches!(module, "lib" | "main" | "cli" | "cmd") {
            continue;
        }
        let Some(from) = layer_of(module) else {
            found.push(format!("{rel}: module `{module}` is in no layer of LAYERS"));
            continue;
        };
        for c in path.captures_iter(&code) {
            let to = &c[1];
            if to == module {
                continue;
            }
            let line = code[..c.get(0).unwrap().start()].matches('\n').count() + 1;
            match layer_of(to) {
                Some(l) if l < from => {}
                Some(_) => found.push(format!("{rel}:{line}: {module} -> {to}")),
                None => found.push(format!("{rel}:{line}: {module} -> {to} (in no layer)")),
            }
        }
    }
    found
}

/// Issue 27: a lower layer never imports a higher one (the review found six such imports:
/// trace -> report, trace -> capture, capture -> report). A new one fails here.
#[test]
fn no_module_imports_its_own_layer_or_a_higher_one() {
    let found = upward_imports(Path::new(env!("CARGO_MANIFEST_DIR")));
    assert!(
        found.is_empty(),
        "move the item down, or the caller up (LAYERS in tests/it/house.rs is the table):\n{}",
        found.join("\n")
    );
}

/// The layer guard's reader sees `crate::` paths in code only and finds one that points up.
#[test]
fn the_layer_guard_finds_an_upward_path_and_skips_comments() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src/trace");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("x.rs"),
        "//! see [`crate::report`]\nuse crate::http::Headers;\nfn f() { crate::report::table::x(); }\n#[cfg(test)]\nmod tests { use crate::analyze; }\n",
    )
    .unwrap();
    assert_eq!(
        upward_imports(dir.path()),
        ["src/trace/x.rs:3: trace -> report"]
    );
}

/// Found by the architecture review (b3, "confirmed hole"): `diff --fail-on` printed a
/// recorded tool name raw on stderr because that `eprintln!` forgot the printable filter.
/// Every line on stderr now goes through `src/cmd/diag.rs`; a new direct print fails here.
#[test]
fn nothing_under_src_prints_but_the_diagnostics_sink() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = prints_outside_the_sink(root);
    assert!(
        found.is_empty(),
        "print through the diagnostics sink (src/cmd/diag.rs: warn!, note!, error!, message!) \
         or, in the library, an injected capture::Diagnostics; stdout through cmd::io::print_stdout:\n{}",
        found.join("\n")
    );
}

/// The guard's reader: it finds a print in code and ignores comments, strings, character
/// literals, lifetimes and test code.
#[test]
fn the_print_guard_sees_code_and_skips_comments_strings_and_tests() {
    let src = r###"
fn a<'a>(x: &'a str) { let q = '"'; let e = '\''; let s = "eprintln!(\"no\")"; let r = r#"println!("no")"#; let b = br"print!(\"; }
// eprintln!("comment")
/* print!("block /* nested */ comment") */
fn b() { eprintln!("yes {}", 1); writeln!(w, "fine").ok(); }
#[cfg(test)]
mod tests { fn c() { println!("test code"); } }
#[cfg(test)]
#[path = "x_tests.rs"]
mod more;
fn d() { print ! ("yes too"); }
struct S { #[cfg(test)] f: u8 }
impl S { #[cfg(test)] fn t(a: u8, b: u8) -> [u8; 2] { println!("t"); [a, b] } }
"###;
    let (code, files) = drop_test_items(&blank_comments_and_literals(src), src);
    let hits: Vec<usize> = printing_macro()
        .find_iter(&code)
        .map(|m| code[..m.start()].matches('\n').count())
        .collect();
    assert_eq!(hits, [4, 10], "{code}");
    assert_eq!(files, [("x_tests.rs".to_string(), true)]);
    assert_eq!(code.lines().count(), src.lines().count());
}

/// The review's (a) row 10 and b5: the binary prints a failed command's error as one line
/// (`cmd::diag::fail` prints `{e}`, because library errors carry their cause in their own
/// text), so an anyhow `.context`/`.with_context` printed without its cause: `man --dir
/// a.json/sub` said "cannot write man pages into a.json/sub" and no reason. The one
/// convention is to embed the cause in the message; a new `.context` in the binary's glue
/// (`src/main.rs`, `src/cli/`, `src/cmd/`) fails here.
#[test]
fn the_binary_embeds_causes_and_adds_no_anyhow_context() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("src/main.rs")];
    rust_files(&root.join("src/cli"), &mut files);
    rust_files(&root.join("src/cmd"), &mut files);
    files.sort();
    let re = regex::Regex::new(r"\.\s*(with_)?context\s*\(").unwrap();
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let code = blank_comments_and_literals(&text);
        for m in re.find_iter(&code) {
            let line = code[..m.start()].matches('\n').count();
            found.push(format!(
                "{}:{}: {}",
                f.strip_prefix(root).unwrap().display(),
                line + 1,
                text.lines().nth(line).unwrap_or("").trim()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "embed the cause in the message (`anyhow!(\"… {{e}}\")`) instead:\n{}",
        found.join("\n")
    );
}
