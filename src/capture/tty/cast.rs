//! The asciicast v2 file `record --tty` writes beside the trace: a JSON header line
//! (`version` 2, `width`, `height`, `timestamp` in Unix seconds, `env.TERM`) and one JSON
//! array per event, `[seconds since start, code, data]`: `"o"` terminal output, `"i"` what
//! the scenario typed, `"m"` markers (one per recorded exchange, at its `started_at` on
//! the same clock). Format: <https://docs.asciinema.org/manual/asciicast/v2/>.
//!
//! Output is written as UTF-8 text: a character split across two reads is joined, bytes
//! that are not UTF-8 (binary output) become U+FFFD; every string passes the trace's
//! redaction ([`crate::trace::redact::redact_text`]). The file is bounded: past
//! `max_bytes` further output events are counted, not written ([`Cast::dropped`]).

use std::io::Write;

/// Codes of asciicast v2 events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Terminal output.
    Output,
    /// Input typed by the scenario.
    Input,
    /// A marker (an exchange's start).
    Marker,
}

impl Code {
    fn as_str(self) -> &'static str {
        match self {
            Code::Output => "o",
            Code::Input => "i",
            Code::Marker => "m",
        }
    }
}

/// An asciicast v2 writer.
pub struct Cast {
    out: std::io::BufWriter<std::fs::File>,
    /// Bytes of an incomplete UTF-8 character at the end of the last output.
    carry: Vec<u8>,
    written: u64,
    max_bytes: u64,
    dropped: u64,
    events: u64,
}

impl Cast {
    /// Create `path` and write the header: a `cols`×`rows` terminal started at
    /// `timestamp` (Unix seconds). At most `max_bytes` of events are written.
    ///
    /// Errors: the file cannot be created or written.
    pub fn create(
        path: &std::path::Path,
        cols: u16,
        rows: u16,
        timestamp: i64,
        max_bytes: u64,
    ) -> std::io::Result<Cast> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        let header = serde_json::json!({
            "version": 2, "width": cols, "height": rows, "timestamp": timestamp,
            "env": {"TERM": "xterm-256color"},
        });
        writeln!(out, "{header}")?;
        Ok(Cast {
            out,
            carry: Vec::new(),
            written: 0,
            max_bytes,
            dropped: 0,
            events: 0,
        })
    }

    /// Terminal output read at `t` seconds.
    ///
    /// Errors: the file cannot be written.
    pub fn output(&mut self, t: f64, bytes: &[u8]) -> std::io::Result<()> {
        self.carry.extend_from_slice(bytes);
        let cut = complete_prefix(&self.carry);
        let text = String::from_utf8_lossy(&self.carry[..cut]).into_owned();
        self.carry.drain(..cut);
        if text.is_empty() {
            return Ok(());
        }
        self.event(t, Code::Output, &text)
    }

    /// An event at `t` seconds (text redacted).
    ///
    /// Errors: the file cannot be written.
    pub fn event(&mut self, t: f64, code: Code, text: &str) -> std::io::Result<()> {
        let text = crate::trace::redact::redact_text_cow(text);
        let line = serde_json::to_string(&(round6(t), code.as_str(), text.as_ref()))
            .map_err(std::io::Error::other)?;
        if self.written + line.len() as u64 + 1 > self.max_bytes {
            self.dropped += 1;
            return Ok(());
        }
        self.written += line.len() as u64 + 1;
        self.events += 1;
        writeln!(self.out, "{line}")
    }

    /// Output events not written because the file reached its bound.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Events written.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Flush what is buffered (a held incomplete character is written as U+FFFD).
    ///
    /// Errors: the file cannot be written.
    pub fn finish(&mut self, t: f64) -> std::io::Result<()> {
        if !self.carry.is_empty() {
            let text = String::from_utf8_lossy(&self.carry).into_owned();
            self.carry.clear();
            self.event(t, Code::Output, &text)?;
        }
        self.out.flush()
    }
}

/// The length of `b` without a trailing incomplete (but so far valid) UTF-8 character.
fn complete_prefix(b: &[u8]) -> usize {
    match std::str::from_utf8(b) {
        Ok(_) => b.len(),
        // `error_len() == None`: the input ended inside a character.
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Err(_) => {
            // Invalid bytes somewhere: keep at most the last 3 bytes if they start a
            // character that may complete.
            let tail = b.len().saturating_sub(3);
            (tail..b.len())
                .find(|&i| {
                    b[i] >= 0xC0
                        && std::str::from_utf8(&b[i..])
                            .err()
                            .is_some_and(|e| e.error_len().is_none() && e.valid_up_to() == 0)
                })
                .unwrap_or(b.len())
        }
    }
}

/// Seconds to microseconds' precision.
fn round6(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_character_is_joined_binary_is_replaced_and_the_bound_holds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.cast");
        let mut c = Cast::create(&p, 80, 24, 1_700_000_000, 200).unwrap();
        let tick = "✓".as_bytes();
        c.output(0.1, &tick[..1]).unwrap();
        c.output(0.2, &tick[1..]).unwrap();
        c.output(0.3, b"\xff\xfeok").unwrap();
        c.event(
            0.4,
            Code::Marker,
            "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
        )
        .unwrap();
        for _ in 0..10 {
            c.output(0.5, b"0123456789012345678901234567890123456789")
                .unwrap();
        }
        c.finish(0.6).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["version"], 2);
        assert_eq!(lines[0]["width"], 80);
        assert_eq!(lines[1], serde_json::json!([0.2, "o", "✓"]));
        assert_eq!(lines[2][2], "\u{fffd}\u{fffd}ok");
        assert!(!lines[3][2].as_str().unwrap().contains("abcdefghij"));
        assert!(c.dropped() > 0);
        assert!(text.len() - text.lines().next().unwrap().len() - 1 <= 200);
    }
}
