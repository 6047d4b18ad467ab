//! A response whose head preceded the capture: the server's direction of a connection
//! whose SYN was not captured starts with bytes that are no status line (the capture
//! began inside a response). What can be read of it is kept as a response without its
//! request or head, rather than skipped:
//! - its body framing is found again where it can be: chunked transfer coding is
//!   recognised by a chain of chunk-size lines (each size leading exactly to the next
//!   line, RFC 9112 §7.1), and the body is de-chunked from the first of them (the bytes
//!   before it are the tail of a chunk, kept as they are);
//! - it is kept only when it reads as an event stream (`data:` or `event:` lines, the
//!   streaming answers of every API agentwire knows); other bytes stay skipped, as bytes
//!   of a connection that may not be HTTP at all.
//!
//! Bound: at most [`MAX_HEADLESS`] bytes are collected; the rest is counted as skipped.

use memchr::memmem;

use crate::http::chunked::{Decoder, Event, Limits};

/// Most bytes kept of a response whose head was not captured (16 MiB).
pub const MAX_HEADLESS: usize = 16 << 20;

/// Why such a response is incomplete, as its exchange says.
pub const HEAD_NOT_CAPTURED: &str =
    "the capture started inside this response: its head and the bytes before were not captured";

/// Chunk-size lines that must follow one another for a chunked body to be recognised.
const CHAIN: usize = 2;

/// The decoder's bound on a chunk-size or trailer line, as the message parser's (8 KiB).
const LIMITS: Limits = Limits { max_line: 8 << 10 };

/// What is kept of a response collected without its head.
#[derive(Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The body, de-chunked where its framing was found.
    pub body: Vec<u8>,
    /// True when chunked framing was found (and removed).
    pub chunked: bool,
    /// Why the response is incomplete ([`HEAD_NOT_CAPTURED`], then `cut` if it was).
    pub cut: String,
}

/// The bytes `raw` of a response collected without its head, `cut` short or not: its
/// body de-chunked where its framing was found; `Err(bytes)` when it does not read as an
/// event stream (those bytes are skipped).
pub fn recover(raw: Vec<u8>, cut: Option<String>) -> Result<Recovered, u64> {
    let (body, chunked) = match dechunk(&raw) {
        Some(body) => (body, true),
        None => (raw, false),
    };
    if !reads_as_event_stream(&body) {
        return Err(body.len() as u64);
    }
    let cut = match cut {
        Some(then) => format!("{HEAD_NOT_CAPTURED}; then {then}"),
        None => HEAD_NOT_CAPTURED.to_string(),
    };
    Ok(Recovered { body, chunked, cut })
}

/// True when `body` holds an event-stream field line (`data:` or `event:`) at its start
/// or after a line end.
pub fn reads_as_event_stream(body: &[u8]) -> bool {
    [&b"data:"[..], b"event:"].iter().any(|f| {
        body.starts_with(f)
            || memmem::find(body, &[b"\n", *f].concat()).is_some()
            || memmem::find(body, &[b"\r", *f].concat()).is_some()
    })
}

/// `raw` (starting inside a chunk) de-chunked from the first chunk-size line that starts
/// a chain of [`CHAIN`] (or one ending the body, `0`), the chunk tail before it kept;
/// `None` when no such chain is found.
fn dechunk(raw: &[u8]) -> Option<Vec<u8>> {
    let mut from = 0;
    while let Some(i) = memmem::find(&raw[from..], b"\r\n").map(|i| from + i) {
        from = i + 2;
        if let Some(body) = chain_from(raw, i + 2) {
            let mut out = raw[..i].to_vec();
            out.extend_from_slice(&body);
            return Some(out);
        }
    }
    None
}

/// The chunk data from the size line at `at` on, read by the one chunked decoder
/// ([`crate::http::chunked::Decoder`]), when at least [`CHAIN`] size lines follow one
/// another or the body ends (the last chunk and its trailers); the data of a chunk cut by
/// the end of `raw` is kept.
fn chain_from(raw: &[u8], at: usize) -> Option<Vec<u8>> {
    let mut decoder = Decoder::new(LIMITS);
    let (mut out, mut links, mut rest) = (Vec::new(), 0, &raw[at..]);
    loop {
        let (used, event) = decoder.step(rest);
        rest = &rest[used..];
        match event {
            Event::Size { .. } => links += 1,
            Event::Data(d) => out.extend_from_slice(d),
            Event::End { .. } => return Some(out),
            Event::DataEnd { .. } | Event::Trailer { .. } => {}
            // cut by the end of what was captured
            Event::More => return (links >= CHAIN).then_some(out),
            Event::Broken { .. } => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(events: &[&str]) -> Vec<u8> {
        let mut r = Vec::new();
        for e in events {
            r.extend_from_slice(format!("{:x}\r\n{e}\r\n", e.len()).as_bytes());
        }
        r.extend_from_slice(b"0\r\n\r\n");
        r
    }

    #[test]
    fn chunked_body_entered_mid_chunk_is_dechunked_from_the_next_size_line() {
        let events = [
            "event: a\ndata: 1\n\n",
            "event: b\ndata: 2\n\n",
            "data: 3\n\n",
        ];
        let whole = chunked(&events);
        // start 7 bytes into the first chunk's data (after its size line `12\r\n`)
        let line = format!("{:x}\r\n", events[0].len()).len();
        let cut = &whole[line + 7..];
        let body = dechunk(cut).unwrap();
        assert_eq!(
            body,
            format!("{}{}{}", &events[0][7..], events[1], events[2]).as_bytes()
        );
        assert!(reads_as_event_stream(&body));
    }

    #[test]
    fn a_body_that_is_not_chunked_is_left_as_it_is() {
        assert_eq!(dechunk(b"ta: 1\n\nevent: b\ndata: 2\n\n"), None);
        // one size-like line is not a chain
        assert_eq!(dechunk(b"xx\r\n5\r\nhello world"), None);
    }

    #[test]
    fn bytes_without_event_lines_are_not_kept() {
        assert_eq!(recover(b"SSH-2.0-OpenSSH_9.6\r\n".to_vec(), None), Err(21));
        let kept = b"lta\"}}\n\nevent: message_stop\ndata: {}\n\n".to_vec();
        let r = recover(kept.clone(), None).unwrap();
        assert_eq!((r.body, r.chunked), (kept, false));
        assert_eq!(r.cut, HEAD_NOT_CAPTURED);
    }
}
