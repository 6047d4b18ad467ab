//! Recognising one input stream and opening it as records: the first line (or bytes) is
//! read and recognised ([`super::detect`]), then handed back in front of the rest to the
//! reader of that format. A gzip-compressed input is decompressed up to its first error
//! ([`crate::gzip::StopAtError`]) and recognised again; that error then closes its
//! records as a problem (the records before it are kept, as for an uncompressed file cut
//! short).

use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::gzip::Bounded;
use crate::import::{Format, ImportError};
use crate::trace::{Record, TraceError, TraceReader};

use super::ahead::ReadAhead;
use super::detect::{self, Detected};
use super::error::InputError;
use super::formats;
use super::stream::{whole, Records, Stream, ThenStop, Whole};

/// Bytes of the longest magic number [`detect::detect`] looks for.
const MAGIC: usize = 4;

/// Longest first line read to recognise an input (a transcript's or claude-trace log's
/// first line can hold a whole request): 256 MiB.
const MAX_HEAD: usize = 256 << 20;

/// Read the first line (or the first bytes, for binary data), for recognition; at least
/// [`MAGIC`] bytes when the input has them.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    read_head_with(r, detect::detect_prefix)
}

/// [`read_head`] with the recognizer passed in (tests count its calls).
fn read_head_with(
    r: &mut impl BufRead,
    mut detect: impl FnMut(&[u8]) -> Detected,
) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::new();
    // Recognition of the first 8 KiB runs once, when the head first passes 8 KiB: its
    // answer cannot change as the line grows, so a long first line is read in linear time
    // and parsed as JSON only once it is whole (by the caller's `detect`).
    let mut checked = false;
    // Where the first byte that is not blank is (blank lines before the first record are
    // read past: the first record decides); found over the new bytes of each read only.
    let mut content_at: Option<usize> = None;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(head);
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let start = head.len();
        head.extend_from_slice(&buf[..take]);
        r.consume(take);
        if content_at.is_none() {
            content_at = head[start..]
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .map(|i| start + i);
        }
        // A binary magic number may hold a newline (pcapng starts with one): read on
        // until it is whole.
        if (done && head.len() >= MAGIC && content_at.is_some()) || head.len() >= MAX_HEAD {
            return Ok(head);
        }
        // only JSON text is worth reading to its first newline
        if !checked && content_at.is_some_and(|c| head.len() - c >= 8192) {
            checked = true;
            if !matches!(detect(&head), Detected::Document) {
                return Ok(head);
            }
        }
    }
}

/// Recognise `input` and return its format and records.
///
/// Exchanges of every format but agentwire's own trace pass the one redaction function
/// here ([`crate::trace::redact::exchange_in_place`]), so no command prints or writes a
/// secret a capture or another tool's file holds (a trace was redacted when it was
/// written).
pub(super) fn open_reader(
    input: Box<dyn Read + Send>,
    path: &Path,
) -> Result<(Format, Records), InputError> {
    let (format, recs) = open_stream(Stream::Plain(input), path)?;
    if format == Format::Trace {
        return Ok((format, recs));
    }
    let recs = recs.map(|r| {
        r.map(|rec| match rec {
            Record::Exchange(mut x) => {
                crate::trace::redact::exchange_in_place(&mut x);
                Record::Exchange(x)
            }
            other => other,
        })
    });
    Ok((format, Box::new(recs)))
}

/// Recognise `stream` and open it with the reader of its format. Formats read line by
/// line stream; the others are read whole here, and what they read is checked against
/// how the stream ended ([`finish`]).
fn open_stream(stream: Stream, path: &Path) -> Result<(Format, Records), InputError> {
    let io = |e| TraceError::Read {
        path: path.display().to_string(),
        offset: 0,
        source: e,
    };
    let mut r = BufReader::with_capacity(1 << 20, stream);
    let head = read_head(&mut r).map_err(io)?;
    let detected = detect::detect(&head);
    let (head, detected) = second_line_decides(head, detected, &mut r).map_err(io)?;
    // The head was read off the input: readers get it back in front of the rest.
    let opened = match detected {
        Detected::Gzip if matches!(r.get_ref(), Stream::Plain(_)) => {
            return open_stream(Stream::gunzip(Box::new(whole(head, r))), path);
        }
        Detected::Gzip => Err(InputError::foreign(
            path,
            "gzip inside gzip".into(),
            String::new(),
        )),
        Detected::Foreign { looks_like, hint } => Err(InputError::foreign(path, looks_like, hint)),
        Detected::Format(Format::Trace) => {
            return Ok((Format::Trace, trace_records(whole(head, r), path)));
        }
        Detected::Format(f @ (Format::ClaudeTrace | Format::ClaudeTap)) => {
            let lines = formats::JsonLines::new(whole(head, r), path, f);
            return Ok((f, Box::new(ThenStop::new(lines, path))));
        }
        Detected::Format(Format::ClaudeCodeTranscript) => {
            let rest = whole_rest(&mut r, head.len(), path)?;
            formats::transcript(Cursor::new(head).chain(rest), path)
        }
        Detected::Format(Format::CodexRollout) => return formats::rollout(whole(head, r), path),
        Detected::Format(Format::Pcap) => formats::pcap(Cursor::new(head).chain(&mut r), path),
        Detected::Format(Format::Har | Format::RequestBody) | Detected::Document => {
            let mut rest = whole_rest(&mut r, head.len(), path)?;
            formats::document(head, &mut rest, &detected, path)
        }
    };
    finish(opened, r.get_ref(), path)
}

/// The rest of an input read whole after its `head` bytes, bounded: by the rest of the
/// decompression bound for a gzip stream ([`crate::gzip::Bounds::decompressed`]), by the
/// document bound for a plain file ([`crate::gzip::Bounds::document`]); past it, reading
/// fails naming the bound and the flag that raises it.
///
/// Errors: the head alone is past the bound.
fn whole_rest<'r>(
    r: &'r mut BufReader<Stream>,
    head: usize,
    path: &Path,
) -> Result<Bounded<&'r mut BufReader<Stream>>, InputError> {
    let b = crate::gzip::bounds();
    let (bound, what, flag) = match r.get_ref() {
        Stream::Gunzip(_) => (
            b.decompressed,
            "the decompressed input",
            crate::gzip::DECOMPRESSED_FLAG,
        ),
        _ => (
            b.document,
            "a document read whole",
            crate::gzip::DOCUMENT_FLAG,
        ),
    };
    match bound.checked_sub(head as u64) {
        Some(left) => Ok(Bounded::on(r, left, what, flag)),
        None => Err(InputError::Trace(TraceError::Read {
            path: path.display().to_string(),
            offset: 0,
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                crate::gzip::past_bound(what, bound, flag),
            ),
        })),
    }
}

/// The records of an input read whole, closed by the problem its gzip stream stopped
/// at, if it did. When nothing readable decompressed (the input was refused), the gzip
/// error is the reason, not what the few bytes before it looked like.
fn finish(
    opened: Result<(Format, Records), InputError>,
    stream: &Stream,
    path: &Path,
) -> Result<(Format, Records), InputError> {
    let name = path.display().to_string();
    match (opened, stream.stopped()) {
        (opened, None) => opened,
        (Ok((format, recs)), Some(stop)) => {
            let problem = Ok(Record::Bad(stop.problem(&name)));
            Ok((format, Box::new(recs.chain(std::iter::once(problem)))))
        }
        (Err(_), Some(stop)) => Err(InputError::Import(ImportError::Malformed {
            path: name,
            format: "gzip",
            detail: stop.why,
        })),
    }
}

/// The records of an agentwire trace. Lines of a file parse in parallel, read ahead on a
/// thread of their own while the caller works; standard input may be a recorder still
/// writing, so its lines are read one at a time.
fn trace_records(input: Whole, path: &Path) -> Records {
    let reader = TraceReader::new(BufReader::with_capacity(1 << 20, input), path);
    if path == Path::new("-") {
        Box::new(ThenStop::new(reader, path))
    } else {
        ReadAhead::spawn(ThenStop::new(reader.parallel(true), path))
    }
}

/// A first line that reads as one JSON object of no known format (a damaged trace header,
/// `{}`) while more lines follow: the second line decides when it is a record of a JSON
/// Lines format, so the file is read as that format and its first line is reported bad,
/// instead of the whole input being refused (and read whole into memory first). Otherwise
/// the first line's verdict stands. Returns the head grown by the line read.
fn second_line_decides(
    head: Vec<u8>,
    detected: Detected,
    r: &mut impl BufRead,
) -> std::io::Result<(Vec<u8>, Detected)> {
    let first = head.trim_ascii();
    let object_line = first.len() > 2 && first.starts_with(b"{") && head.ends_with(b"\n");
    let unknown = match &detected {
        Detected::Document => true,
        Detected::Foreign { .. } => first.ends_with(b"}"),
        _ => false,
    };
    if !(object_line && unknown) {
        return Ok((head, detected));
    }
    let next = read_head(r)?;
    let second = detect::detect(&next);
    let mut grown = head;
    grown.extend_from_slice(&next);
    Ok(match second {
        d @ Detected::Format(
            Format::Trace
            | Format::ClaudeTrace
            | Format::ClaudeTap
            | Format::ClaudeCodeTranscript
            | Format::CodexRollout,
        ) => (grown, d),
        _ => (grown, detected),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        crate::api::decode::test_gzip(data)
    }

    #[test]
    fn a_cut_gzip_stream_yields_what_decompressed_then_says_where_it_stopped() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut z = gzip(&text);
        z.truncate(z.len() / 2);
        let mut r = Stream::gunzip(Box::new(Cursor::new(z)));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(
            !got.is_empty() && text.starts_with(&got),
            "a prefix of the text"
        );
        let p = r
            .stopped()
            .expect("the error is kept")
            .problem("t.jsonl.gz");
        assert_eq!(p.offset, got.len() as u64);
        assert!(
            p.message.contains("t.jsonl.gz") && p.message.contains("may be cut short"),
            "{}",
            p.message
        );
    }

    #[test]
    fn a_whole_gzip_stream_has_no_problem() {
        let mut r = Stream::gunzip(Box::new(Cursor::new(gzip(b"{}\n"))));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"{}\n");
        assert!(r.stopped().is_none());
    }

    #[test]
    fn long_first_line_is_recognised_once_not_per_buffer_fill_or_doubling() {
        // A 1 MiB first line without a newline, read 4 KiB at a time: 256 fills. Running
        // recognition on each fill past 8 KiB made a 64 MB line take 13 s (quadratic);
        // running the JSON recognizer at each doubling parsed a 1 MB body twice over
        // before it was whole.
        let line = vec![b'{'; 1 << 20];
        let mut r = BufReader::with_capacity(4096, &line[..]);
        let mut calls = 0;
        let head = read_head_with(&mut r, |h| {
            calls += 1;
            detect::detect_prefix(h)
        })
        .unwrap();
        assert_eq!(head.len(), 1 << 20, "the whole line is the head");
        assert_eq!(
            calls, 1,
            "the first 8 KiB decide; later checks could not differ"
        );
    }

    #[test]
    fn binary_data_without_a_newline_stops_reading_at_8_kib() {
        // 1 MiB of NUL bytes: recognised as binary from its first 8 KiB, not read whole.
        let data = vec![0u8; 1 << 20];
        let mut r = BufReader::with_capacity(4096, &data[..]);
        let head = read_head(&mut r).unwrap();
        assert_eq!(head.len(), 8192);
        assert!(matches!(
            detect::detect(&head),
            Detected::Foreign { ref looks_like, .. } if looks_like.contains("NUL")
        ));
    }
}
