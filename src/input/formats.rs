//! The records of each input format other than agentwire's own trace: a packet capture
//! (extracted as `agentwire pcap` does with no filter), a Claude Code transcript, a JSON
//! document (HAR, a claude-tap export, a bare request body) and the JSON Lines imports
//! (claude-trace, claude-tap records). Each begins with a header record for its
//! exchanges; the importers themselves are sources ([`crate::import`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use chrono::DateTime;

use crate::capture::pcap::{read_packets, Config, Extractor, PcapError};
use crate::import::{self, claude_trace, codex, har, tap, transcript, Format};
use crate::trace::{Context, Exchange, ReadProblem, Record, FORMAT_VERSION};

use super::detect::{classify_document, is_request_body, Detected};
use super::error::InputError;
use super::stream::{Lines, Records, Stream, ThenStop, Whole};

/// The exchanges of a packet capture: the extraction `agentwire pcap` runs (no port or
/// host filter), after a header as `agentwire pcap` writes it. A capture cut short or
/// corrupt keeps the exchanges before the bad block and ends with a problem record naming
/// the byte where reading stopped (the run is degraded, nothing read is lost).
///
/// Errors: [`import::ImportError::Malformed`] when the capture's header cannot be read.
pub(super) fn pcap(input: impl Read + Send, path: &Path) -> Result<(Format, Records), InputError> {
    let name = path.display().to_string();
    let mut ex = Extractor::new(Config::default());
    ex.set_source(Some(name.clone()));
    let read = read_packets(input, &name, &mut |p| ex.packet(p));
    let (exchanges, summary) = ex.finish();
    // Packets skipped unread (an undeclared interface, a link type not decoded) are
    // problems like a cut capture: the run is degraded and says why.
    let mut skipped = crate::capture::pcap::link::skipped_warnings(&summary.unknown_link_types);
    let problem = match read {
        Ok(info) => {
            skipped.splice(0..0, info.problems(&name));
            None
        }
        Err(
            e @ (PcapError::Open { .. }
            | PcapError::NotACapture { .. }
            | PcapError::HeaderCut { .. }),
        ) => {
            return Err(InputError::Import(import::ImportError::Malformed {
                path: name,
                format: Format::Pcap.name(),
                detail: e.to_string(),
            }))
        }
        Err(e) => Some(stopped_at(&e)),
    };
    let header = Record::Header {
        version: FORMAT_VERSION,
        context: Context::new(),
    };
    let skipped: Vec<ReadProblem> = skipped
        .into_iter()
        .map(|message| ReadProblem {
            message: if message.starts_with(&name) {
                message
            } else {
                format!("{name}: {message}")
            },
            ..problem_at(0)
        })
        .collect();
    let recs = std::iter::once(header)
        .chain(exchanges.into_iter().map(|x| Record::Exchange(Box::new(x))))
        .chain(skipped.into_iter().map(Record::Bad))
        .chain(problem.map(Record::Bad))
        .map(Ok);
    Ok((Format::Pcap, Box::new(recs)))
}

/// A problem of an input that is not line-based, at byte `offset`, its message still to
/// be set.
fn problem_at(offset: u64) -> ReadProblem {
    ReadProblem {
        line: 0,
        offset,
        truncated: false,
        message: String::new(),
        raw: Vec::new(),
        file: None,
    }
}

/// The problem a capture's reading stopped at, at the byte where it stopped.
fn stopped_at(e: &PcapError) -> ReadProblem {
    let offset = match e {
        PcapError::Truncated { offset, .. }
        | PcapError::Corrupt { offset, .. }
        | PcapError::Read { offset, .. } => *offset,
        _ => 0,
    };
    ReadProblem {
        message: e.to_string(),
        ..problem_at(offset)
    }
}

/// The records of a Claude Code transcript (with its subagents' transcripts): a header,
/// the problems (named by the file they are in, when that is not `path`), the exchanges.
///
/// Errors: as [`transcript::import`].
pub(super) fn transcript(input: impl Read, path: &Path) -> Result<(Format, Records), InputError> {
    let s = transcript::import(BufReader::new(input), path)?;
    let mut recs: Vec<Result<Record, InputError>> = vec![Ok(header(&s.exchanges))];
    for (file, mut p) in s.problems {
        if file != path {
            p.message = format!("{}: {}", file.display(), p.message);
        }
        recs.push(Ok(Record::Bad(p)));
    }
    recs.extend(
        s.exchanges
            .into_iter()
            .map(|x| Ok(Record::Exchange(Box::new(x)))),
    );
    Ok((Format::ClaudeCodeTranscript, Box::new(recs.into_iter())))
}

/// The records of a Codex rollout, line by line (a header first, then an exchange per
/// response as it completes).
///
/// Errors: as [`codex::Rollout::open`].
pub(super) fn rollout(input: Whole, path: &Path) -> Result<(Format, Records), InputError> {
    let r = codex::Rollout::open(BufReader::with_capacity(1 << 20, input), path)?;
    Ok((Format::CodexRollout, Box::new(ThenStop::new(r, path))))
}

impl Lines for codex::Rollout<BufReader<Whole>> {
    fn stream(&self) -> &Stream {
        self.get_ref().get_ref().get_ref().1.get_ref()
    }
}

/// A header record for imported exchanges: the client when they agree on one.
fn header(xs: &[Exchange]) -> Record {
    let mut c = Context::new();
    let uas: Vec<&str> = xs
        .iter()
        .filter_map(|x| x.request.headers.get("user-agent"))
        .collect();
    if let Some(first) = uas.first() {
        if uas.iter().all(|u| u == first) {
            if let Some(v) = first
                .strip_prefix("claude-cli/")
                .and_then(|r| r.split(' ').next())
            {
                c.cli = Some("claude-code".into());
                c.cli_version = Some(v.to_string());
            }
        }
    }
    c.label = Some("imported".into());
    Record::Header {
        version: FORMAT_VERSION,
        context: c,
    }
}

/// A JSON document, read whole: `head` (its first line, already read) and the rest of
/// `r`. A HAR file, a claude-tap export, or a bare request body; `detected` is what the
/// first line said.
///
/// Errors: the document is not valid JSON, or JSON of no shape agentwire reads
/// ([`import::ImportError::Foreign`]); a HAR file of the wrong shape; reading failed.
pub(super) fn document(
    head: Vec<u8>,
    r: &mut impl Read,
    detected: &Detected,
    path: &Path,
) -> Result<(Format, Records), InputError> {
    // The rest goes after the head, in place.
    let head_len = head.len();
    let mut bytes = head;
    r.read_to_end(&mut bytes)
        .map_err(|e| crate::trace::TraceError::Read {
            path: path.display().to_string(),
            offset: 0,
            source: e,
        })?;
    // `detect` parsed the head's first line whole and found a request body: when
    // nothing but blanks follows it, the file is that body, already checked.
    if matches!(detected, Detected::Format(Format::RequestBody))
        && bytes[head_len..].iter().all(u8::is_ascii_whitespace)
    {
        return Ok((Format::RequestBody, request_body(bytes, path)));
    }
    if is_request_body(&bytes) {
        return Ok((Format::RequestBody, request_body(bytes, path)));
    }
    parsed_document(bytes, path)
}

/// A JSON document that is not a bare request body by its top-level members.
fn parsed_document(bytes: Vec<u8>, path: &Path) -> Result<(Format, Records), InputError> {
    let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::foreign(
            path,
            format!("text that starts like JSON but is not valid JSON ({e})"),
            String::new(),
        )
    })?;
    let (problems, (format, xs)) = match classify_document(&doc) {
        Detected::Format(Format::Har) => {
            let (xs, p) = har::import(doc, path)?;
            (p, (Format::Har, xs))
        }
        Detected::Format(Format::ClaudeTap) => {
            let (xs, p) = tap::import_document(doc, path).unwrap_or_default();
            (p, (Format::ClaudeTap, xs))
        }
        Detected::Format(Format::RequestBody) => {
            return Ok((Format::RequestBody, request_body(bytes, path)));
        }
        Detected::Foreign { looks_like, hint } => {
            return Err(InputError::foreign(path, looks_like, hint))
        }
        other => {
            return Err(InputError::foreign(
                path,
                format!("{other:?}"),
                String::new(),
            ));
        }
    };
    let mut recs = vec![Ok(header(&xs))];
    recs.extend(problems.into_iter().map(|message| {
        Ok(Record::Bad(ReadProblem {
            message: format!("{}: {message}", path.display()),
            ..problem_at(0)
        }))
    }));
    recs.extend(xs.into_iter().map(|x| Ok(Record::Exchange(Box::new(x)))));
    Ok((format, Box::new(recs.into_iter())))
}

/// The records of a bare Messages request body, already parsed whole to be recognised:
/// a header and one `POST /v1/messages` exchange carrying it (no headers, response or
/// timing: the source says so).
pub(super) fn request_body(mut bytes: Vec<u8>, path: &Path) -> Records {
    let source = import::import_source(
        Format::RequestBody,
        path,
        &[crate::trace::MISSING_REQUEST_HEADERS, "response", "timing"],
    );
    // Trimmed in place: a body is often megabytes.
    let start = bytes.len() - bytes.trim_ascii_start().len();
    bytes.truncate(bytes.trim_ascii_end().len());
    bytes.drain(..start);
    let body = bytes;
    let mut x = import::imported(
        source,
        DateTime::UNIX_EPOCH,
        "POST",
        "/v1/messages".into(),
        vec![],
        body,
    );
    // Both callers parsed the whole body to recognise it: it is valid JSON.
    x.request.body.set_checked_json();
    let xs = vec![x];
    let header = header(&xs);
    Box::new(
        [Ok(header)]
            .into_iter()
            .chain(xs.into_iter().map(|x| Ok(Record::Exchange(Box::new(x))))),
    )
}

/// A JSON Lines import (claude-trace, claude-tap records), line by line.
pub(super) struct JsonLines {
    input: BufReader<Whole>,
    path: PathBuf,
    format: Format,
    line: u64,
    offset: u64,
    started: bool,
}

impl JsonLines {
    /// The records of `input`, a `format` log read from `path`.
    pub(super) fn new(input: Whole, path: &Path, format: Format) -> Self {
        JsonLines {
            input: BufReader::with_capacity(1 << 20, input),
            path: path.to_path_buf(),
            format,
            line: 0,
            offset: 0,
            started: false,
        }
    }

    /// The next line without its newline; `None` at the end.
    fn next_line(&mut self) -> Option<std::io::Result<Vec<u8>>> {
        let mut buf = Vec::new();
        match self.input.read_until(b'\n', &mut buf) {
            Ok(0) => None,
            Ok(_) => {
                if buf.last() == Some(&b'\n') {
                    buf.pop();
                }
                Some(Ok(buf))
            }
            Err(e) => Some(Err(e)),
        }
    }

    /// One line's record: an exchange, or the line kept as a problem.
    fn record(&self, raw: Vec<u8>, start: u64) -> Record {
        let bad = |message: String, raw: Vec<u8>| {
            Record::Bad(ReadProblem {
                line: self.line,
                offset: start,
                truncated: false,
                message,
                raw,
                file: None,
            })
        };
        let v: serde_json::Value = match serde_json::from_slice(&raw) {
            Ok(v) => v,
            Err(e) => return bad(format!("not a {} record: {e}", self.format.name()), raw),
        };
        let x = match self.format {
            Format::ClaudeTrace => claude_trace::import_pair(&v, &self.path),
            _ => tap::import_record(&v, &self.path),
        };
        match x {
            Some(x) => Record::Exchange(Box::new(x)),
            None => bad(
                format!("not a {} record (no request object)", self.format.name()),
                raw,
            ),
        }
    }
}

impl Lines for JsonLines {
    fn stream(&self) -> &Stream {
        self.input.get_ref().get_ref().1.get_ref()
    }
}

impl Iterator for JsonLines {
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            let mut c = Context::new();
            c.label = Some("imported".into());
            return Some(Ok(Record::Header {
                version: FORMAT_VERSION,
                context: c,
            }));
        }
        loop {
            let raw = match self.next_line()? {
                Ok(l) => l,
                Err(e) => {
                    return Some(Err(InputError::Trace(crate::trace::TraceError::Read {
                        path: self.path.display().to_string(),
                        offset: self.offset,
                        source: e,
                    })))
                }
            };
            self.line += 1;
            let start = self.offset;
            self.offset += raw.len() as u64 + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(Ok(self.record(raw, start)));
        }
    }
}
