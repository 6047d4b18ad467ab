//! JSON text on its way to a terminal: the characters [`super::printable()`] escapes (DEL, C1
//! controls, bidi and zero-width format characters, line and paragraph separators) written
//! as `\uXXXX` escapes. serde_json escapes only U+0000–U+001F, so a trace or HAR file
//! printed with `-o -` could otherwise carry `U+009B` (a one-byte CSI) or `U+202E` (right-to-
//! left override) to the terminal. The JSON value is unchanged: in JSON text produced by a
//! serializer these characters can only stand inside strings, where the escape means the
//! same character (RFC 8259 §7). A trace's bytes are not only its value, though (each body
//! embedded verbatim is covered by its `sha256`), so a trace passes through here only on
//! its way to a terminal ([`crate::trace::trace_stdout`]). Reports printed as JSON pass
//! [`pretty`].

use std::borrow::Cow;
use std::io::{self, Write};

/// The escaped form of `json` (see the module doc); tab, CR and LF are left alone (they
/// are JSON whitespace between tokens; inside strings serde_json already escaped them).
pub fn escape_json_text(json: &str) -> Cow<'_, str> {
    super::printable::replace_unprintable(json, true, |ch, out| {
        if matches!(ch, '\t' | '\n' | '\r') {
            out.push(ch);
            return;
        }
        let mut units = [0u16; 2];
        for u in ch.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{u:04x}"));
        }
    })
}

/// A writer of JSON text that applies [`escape_json_text`] to everything written through
/// it, holding back an incomplete UTF-8 sequence at the end of a write until the next one.
/// Bytes that are not UTF-8 pass unchanged.
pub struct SafeJsonWriter<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> SafeJsonWriter<W> {
    /// Wrap `inner`.
    pub fn new(inner: W) -> Self {
        SafeJsonWriter {
            inner,
            pending: Vec::new(),
        }
    }
}

/// Pretty JSON of a report, with the characters [`super::printable()`] escapes written as
/// `\uXXXX` escapes ([`escape_json_text`]: the JSON value is unchanged; a terminal showing
/// it is safe). Ends in a newline; a value serde cannot write (a map with non-string keys)
/// is `null`.
pub fn pretty<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let Ok(s) = serde_json::to_string_pretty(value) else {
        return "null\n".into();
    };
    let mut s = escape_json_text(&s).into_owned();
    s.push('\n');
    s
}

/// Standard output for JSON text (a trace or HAR written with `-o -`).
pub fn stdout() -> SafeJsonWriter<io::Stdout> {
    SafeJsonWriter::new(io::stdout())
}

impl<W: Write> Write for SafeJsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut start = 0;
        loop {
            match std::str::from_utf8(&self.pending[start..]) {
                Ok(s) => {
                    self.inner.write_all(escape_json_text(s).as_bytes())?;
                    self.pending.clear();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    // SAFETY-free: the prefix is valid UTF-8 by `valid_up_to`.
                    let s = std::str::from_utf8(&self.pending[start..start + valid])
                        .expect("valid prefix");
                    self.inner.write_all(escape_json_text(s).as_bytes())?;
                    match e.error_len() {
                        Some(n) => {
                            let bad = start + valid;
                            self.inner.write_all(&self.pending[bad..bad + n])?;
                            start = bad + n;
                        }
                        None => {
                            // an incomplete sequence at the end: keep it for the next write
                            self.pending.drain(..start + valid);
                            break;
                        }
                    }
                }
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.inner.write_all(&self.pending)?;
            self.pending.clear();
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reported by an adversarial tester: `export --har … -o -` and `import … -o -`
    /// printed raw U+009B, U+202E and U+200B from a trace (ESC and BEL were escaped by
    /// serde_json), while `show --format json` escaped them.
    #[test]
    fn c1_and_bidi_characters_in_json_reach_no_terminal_raw() {
        let v = serde_json::json!({"model": "a\u{9b}2J\u{202e}b\u{200b}c\u{7f}", "n": 1});
        let text = serde_json::to_string(&v).unwrap() + "\n";
        // Written in pieces that split multi-byte characters.
        let mut w = SafeJsonWriter::new(Vec::new());
        for chunk in text.as_bytes().chunks(3) {
            w.write_all(chunk).unwrap();
        }
        w.flush().unwrap();
        let out = String::from_utf8(w.inner).unwrap();
        for raw in ['\u{9b}', '\u{202e}', '\u{200b}', '\u{7f}'] {
            assert!(!out.contains(raw), "{raw:?} in {out:?}");
        }
        assert!(out.contains("\\u009b") && out.contains("\\u202e"), "{out}");
        assert!(out.ends_with('\n'));
        let back: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(back, v, "the value is unchanged");
    }

    #[test]
    fn pretty_json_escapes_what_printable_escapes_and_keeps_the_value() {
        let j = pretty(&serde_json::json!({"k": "x\u{202e}y\u{9b}z\u{1b}"}));
        assert!(j.contains(r#""x\u202ey\u009bz\u001b""#), "{j}");
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(
            v["k"], "x\u{202e}y\u{9b}z\u{1b}",
            "the JSON value is unchanged"
        );
    }

    #[test]
    fn invalid_utf8_passes_unchanged() {
        let mut w = SafeJsonWriter::new(Vec::new());
        w.write_all(b"a\xffb").unwrap();
        w.flush().unwrap();
        assert_eq!(w.inner, b"a\xffb");
    }
}
