//! Streaming reader for JSON Lines traces. Reads one line at a time (memory bounded by the
//! longest line, so multi-GB files stream), tolerates a truncated last line (a crash
//! mid-write) and keeps every line it cannot parse, raw, with its line number and offset.
//!
//! This reads agentwire's own format only. Opening any input (a directory, `-`, gzip, a
//! packet capture, another tool's file) is the input layer's job (`crate::input`), which
//! sits above `trace` and hands this reader the JSON Lines it finds.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Context, Exchange, McpRecord, ReadProblem, Record, TraceError, FORMAT_VERSION};

#[derive(Deserialize)]
struct Tagged {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct HeaderRepr {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    context: Context,
}

/// Longest line a reader accepts by default: 256 MiB. Longer lines (a file that is not a
/// trace, a crash-zeroed tail) are skipped and reported, so memory stays bounded.
pub const MAX_LINE: usize = 256 << 20;

/// Iterator over the records of a trace. I/O errors end iteration with `Err`.
pub struct TraceReader<R> {
    input: R,
    path: PathBuf,
    line_no: u64,
    offset: u64,
    buf: Vec<u8>,
    done: bool,
    max_line: usize,
    verify: bool,
    parallel: bool,
    /// Records parsed ahead (parallel mode), in file order, each with where its line is.
    ready: std::collections::VecDeque<(Result<Record, TraceError>, LineAt)>,
    /// Where the line of the record last returned is.
    last: LineAt,
}

/// Where a record's line is in the input: what an index by byte offset keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineAt {
    /// Byte offset of the line's start.
    pub offset: u64,
    /// Bytes of the line, its newline included (0: the record was not read from a line,
    /// such as a read error).
    pub len: u64,
    /// Line number, from 1.
    pub line: u64,
}

/// Lines parsed at once in parallel mode: at most this many…
const BATCH_LINES: usize = 256;
/// …or this many bytes.
const BATCH_BYTES: usize = 16 << 20;

/// A line read, not parsed yet.
struct Line {
    buf: Vec<u8>,
    /// Bytes of the record (newline and a CR before it excluded).
    end: usize,
    truncated: bool,
    start: u64,
    line_no: u64,
}

impl Line {
    fn at(&self) -> LineAt {
        LineAt {
            offset: self.start,
            len: self.buf.len() as u64,
            line: self.line_no,
        }
    }
}

impl LineAt {
    /// A record not read from a line, after line `line`.
    fn none(line: u64) -> LineAt {
        LineAt {
            offset: 0,
            len: 0,
            line,
        }
    }
}

impl TraceReader<BufReader<File>> {
    /// Open a trace file for streaming.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::Open {
            path: path.display().to_string(),
            source: e,
        })?;
        Ok(Self::new(BufReader::with_capacity(1 << 20, f), path))
    }
}

impl<R: BufRead> TraceReader<R> {
    /// Read records from `input` (`path` is used in messages only).
    pub fn new(input: R, path: &Path) -> Self {
        TraceReader {
            input,
            path: path.to_path_buf(),
            line_no: 0,
            offset: 0,
            buf: Vec::new(),
            done: false,
            max_line: MAX_LINE,
            verify: true,
            parallel: false,
            ready: Default::default(),
            last: LineAt::default(),
        }
    }

    /// Parse lines in batches on every core (records still come in file order, the same
    /// records as one line at a time). Reading waits for a whole batch, so leave it off for
    /// an input that is still being written, such as a pipe from a recorder.
    pub fn parallel(mut self, on: bool) -> Self {
        self.parallel = on;
        self
    }

    /// Set the longest accepted line, in bytes.
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// Bytes of the input consumed so far. One line at a time (not [`Self::parallel`]),
    /// its values before and after a call bound the bytes of the record that call returned
    /// (blank lines before it included): what an index by byte offset keeps.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the line of the record last returned is, in either mode (a record that was
    /// not read from a line, such as a read error, has `len` 0).
    pub fn last_line(&self) -> LineAt {
        self.last
    }

    /// Lines read so far (the line number, from 1, of the record last returned in
    /// single-line mode).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The reader the lines come from.
    pub fn get_ref(&self) -> &R {
        &self.input
    }

    /// Check each body against its stored SHA-256 (on by default); a mismatch makes the
    /// record [`Record::Bad`], kept raw.
    pub fn verify_digests(mut self, on: bool) -> Self {
        self.verify = on;
        self
    }

    /// Read one line into `buf` (newline included), up to `max_line` bytes; returns the
    /// bytes consumed (0 at end of file) and whether the line was cut at the cap.
    fn read_line(&mut self) -> std::io::Result<(usize, bool)> {
        let mut consumed = 0;
        let mut overflow = false;
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok((consumed, overflow));
            }
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let room = self.max_line.saturating_sub(self.buf.len());
            if take > room {
                overflow = true;
            }
            if !overflow {
                self.buf.extend_from_slice(&chunk[..take]);
            } else if self.buf.len() < self.max_line {
                self.buf.extend_from_slice(&chunk[..take.min(room)]);
            }
            self.input.consume(take);
            consumed += take;
            if done {
                return Ok((consumed, overflow));
            }
        }
    }
}

/// What parsing a line needs: no reader state, so lines parse on any thread.
struct LineParser<'a> {
    path: &'a Path,
    verify: bool,
}

impl LineParser<'_> {
    /// An exchange read from `line`, checked against its stored digests.
    fn exchange(&self, x: Exchange, line: &[u8], truncated: bool, at: (u64, u64)) -> Record {
        let (start, line_no) = at;
        if self.verify && !digests_match(&x) {
            return Record::Bad(ReadProblem {
                line: line_no,
                offset: start,
                truncated,
                message: format!(
                    "exchange #{}: a body does not match its stored sha256 (the file was edited or corrupted); the line is skipped and stays in the file as it is",
                    x.id
                ),
                raw: line.to_vec(),
                file: None,
            });
        }
        Record::Exchange(Box::new(x))
    }

    fn parse_line(&self, l: &Line) -> Result<Record, TraceError> {
        self.parse(&l.buf[..l.end], l.truncated, (l.start, l.line_no))
    }

    fn parse(
        &self,
        line: &[u8],
        truncated: bool,
        (start, line_no): (u64, u64),
    ) -> Result<Record, TraceError> {
        let bad = |message: String| {
            Record::Bad(ReadProblem {
                line: line_no,
                offset: start,
                truncated,
                message,
                raw: line.to_vec(),
                file: None,
            })
        };
        // Lines agentwire writes start with their type: an exchange line is read once,
        // not first for its tag (a line that does not parse takes the general path, so
        // its problem reads the same).
        if line.starts_with(br#"{"type":"exchange","#) {
            if let Ok(x) = serde_json::from_slice::<Exchange>(line) {
                return Ok(self.exchange(x, line, truncated, (start, line_no)));
            }
        }
        let tag: Tagged = match serde_json::from_slice(line) {
            Ok(t) => t,
            Err(e) => return Ok(bad(e.to_string())),
        };
        match tag.kind.as_str() {
            "exchange" => match serde_json::from_slice::<Exchange>(line) {
                Ok(x) => Ok(self.exchange(x, line, truncated, (start, line_no))),
                Err(e) => Ok(bad(format!("exchange: {e}"))),
            },
            "mcp" => match serde_json::from_slice::<McpRecord>(line) {
                Ok(m) => Ok(Record::Mcp(Box::new(m))),
                Err(e) => Ok(bad(format!("mcp: {e}"))),
            },
            "trace" => match serde_json::from_slice::<HeaderRepr>(line) {
                Ok(h) if h.version > FORMAT_VERSION => Err(TraceError::Version {
                    path: self.path.display().to_string(),
                    found: h.version,
                }),
                Ok(h) => Ok(Record::Header {
                    version: h.version,
                    context: h.context,
                }),
                Err(e) => Ok(bad(format!("header: {e}"))),
            },
            _ => match serde_json::from_slice(line) {
                Ok(v) => Ok(Record::Other(v)),
                Err(e) => Ok(bad(e.to_string())),
            },
        }
    }
}

impl<R: BufRead> TraceReader<R> {
    /// The next non-blank line, or a record already decided while reading (an overlong
    /// line), or the end.
    fn next_line(&mut self) -> Option<Result<Line, Result<Record, TraceError>>> {
        loop {
            if self.done {
                return None;
            }
            self.buf.clear();
            let (n, overflow) = match self.read_line() {
                Ok(n) => n,
                Err(e) => {
                    self.done = true;
                    return Some(Err(Err(TraceError::Read {
                        path: self.path.display().to_string(),
                        offset: self.offset,
                        source: e,
                    })));
                }
            };
            if n == 0 {
                self.done = true;
                return None;
            }
            let start = self.offset;
            self.offset += n as u64;
            self.line_no += 1;
            if overflow {
                let mut raw = std::mem::take(&mut self.buf);
                raw.truncate(1024);
                return Some(Err(Ok(Record::Bad(ReadProblem {
                    line: self.line_no,
                    offset: start,
                    truncated: false,
                    message: format!(
                        "line of {n} bytes is longer than the {} byte limit; skipped (first 1 KiB kept)",
                        self.max_line
                    ),
                    raw,
                    file: None,
                }))));
            }
            let has_newline = self.buf.last() == Some(&b'\n');
            let mut end = self.buf.len() - usize::from(has_newline);
            if end > 0 && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
            if self.buf[..end].iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(Ok(Line {
                buf: std::mem::take(&mut self.buf),
                end,
                truncated: !has_newline,
                start,
                line_no: self.line_no,
            }));
        }
    }

    fn line_parser(&self) -> LineParser<'_> {
        LineParser {
            path: &self.path,
            verify: self.verify,
        }
    }

    /// Read a batch of lines and parse them on every core into `ready`.
    fn fill_batch(&mut self) {
        use rayon::prelude::*;
        let mut lines: Vec<Result<Line, Result<Record, TraceError>>> = Vec::new();
        let mut bytes = 0;
        while lines.len() < BATCH_LINES && bytes < BATCH_BYTES {
            match self.next_line() {
                Some(l) => {
                    bytes += l.as_ref().map_or(0, |l| l.end);
                    lines.push(l);
                }
                None => break,
            }
        }
        let parser = self.line_parser();
        let line_no = self.line_no;
        let parsed: Vec<(Result<Record, TraceError>, LineAt)> = lines
            .into_par_iter()
            .map(|l| match l {
                Ok(l) => (parser.parse_line(&l), l.at()),
                Err(decided) => (decided, LineAt::none(line_no)),
            })
            .collect();
        self.ready.extend(parsed);
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.parallel {
            if self.ready.is_empty() {
                self.fill_batch();
            }
            let (rec, at) = self.ready.pop_front()?;
            self.last = at;
            return Some(rec);
        }
        match self.next_line()? {
            Ok(l) => {
                let rec = self.line_parser().parse_line(&l);
                self.last = l.at();
                self.buf = l.buf;
                Some(rec)
            }
            Err(decided) => {
                self.last = LineAt::none(self.line_no);
                Some(decided)
            }
        }
    }
}

fn digests_match(x: &Exchange) -> bool {
    x.request.body.verify() && x.response.as_ref().is_none_or(|r| r.body.verify())
}

/// A whole trace read into memory: convenient for small and medium traces.
#[derive(Debug, Default)]
pub struct Trace {
    /// Path it was read from.
    pub path: PathBuf,
    /// Context of the first header (empty if the file has none).
    pub context: Context,
    /// Exchanges in file order.
    pub exchanges: Vec<Exchange>,
    /// MCP messages and server events, in file order.
    pub mcp: Vec<McpRecord>,
    /// Records of other types, kept whole.
    pub others: Vec<serde_json::Value>,
    /// Lines that could not be read.
    pub problems: Vec<ReadProblem>,
    /// Where each recording context begins (each header line; every file of a directory
    /// input starts one), in order. Empty for a trace read without header lines.
    pub parts: Vec<Part>,
}

/// One recording context of a [`Trace`]: sessions without client ids do not continue
/// into the next one (see [`crate::api::view::Canonicalizer::new_context`]).
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// Index in [`Trace::exchanges`] of its first exchange.
    pub first: usize,
    /// The file it was read from (a file under a directory input, else the input).
    pub file: PathBuf,
}

impl Trace {
    /// Read a whole agentwire trace file (JSON Lines; lines parsed on every core). Only
    /// agentwire's own format: any other input (a directory, `-`, gzip, a capture, an
    /// import) is opened by the input layer (`input::open_trace`).
    ///
    /// Errors: the file cannot be opened or read ([`TraceError::Open`],
    /// [`TraceError::Read`]), or was written by a newer format ([`TraceError::Version`]).
    /// Unparseable lines are not errors: they land in [`Trace::problems`].
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let reader = TraceReader::open(path)?.parallel(true);
        Self::from_records(path, reader)
    }

    /// A whole trace from records already read (`path`: where they came from, which
    /// every header's [`Part`] names). Stops at the first error.
    fn from_records(
        path: &Path,
        records: impl Iterator<Item = Result<Record, TraceError>>,
    ) -> Result<Trace, TraceError> {
        let mut t = Trace {
            path: path.to_path_buf(),
            ..Trace::default()
        };
        for r in records {
            t.push(r?, path);
        }
        Ok(t)
    }

    /// Read a whole trace from any reader.
    pub fn from_reader(input: impl Read, path: &Path) -> Result<Trace, TraceError> {
        Self::from_records(path, TraceReader::new(BufReader::new(input), path))
    }

    /// Keep one record read from `file` (a file under a directory input, else the input):
    /// a header begins a [`Part`]; the first header's context is the trace's.
    pub fn push(&mut self, r: Record, file: &Path) {
        if let Record::Header { .. } = r {
            self.parts.push(Part {
                first: self.exchanges.len(),
                file: file.to_path_buf(),
            });
        }
        match r {
            Record::Header { context, .. } if self.parts.len() <= 1 => self.context = context,
            Record::Header { .. } => {}
            Record::Exchange(x) => self.exchanges.push(*x),
            Record::Mcp(m) => self.mcp.push(*m),
            Record::Other(v) => self.others.push(v),
            Record::Bad(p) => self.problems.push(p),
        }
    }

    /// True when exchange `i` begins a recording context after the first (a header line,
    /// the next file of a directory): a reader of sessions calls
    /// [`crate::api::view::Canonicalizer::new_context`] before placing it.
    pub fn starts_context(&self, i: usize) -> bool {
        // parts are in order of `first`
        i > 0 && self.parts.binary_search_by_key(&i, |p| p.first).is_ok()
    }

    /// The file exchange `i` was read from: the file under a directory input, else the
    /// input. Exchange ids are unique within a file, not across a directory's files.
    pub fn file_of(&self, i: usize) -> &Path {
        match self.parts.partition_point(|p| p.first <= i) {
            0 => &self.path,
            n => &self.parts[n - 1].file,
        }
    }

    /// The exchange with `id`: [`TraceError::NoSuchExchange`] when none has it,
    /// [`TraceError::AmbiguousExchange`] when several do (a directory's files, or
    /// recordings joined in one file, each number their exchanges from 0).
    pub fn exchange(&self, id: u64) -> Result<&Exchange, TraceError> {
        let mut found = self
            .exchanges
            .iter()
            .enumerate()
            .filter(|(_, x)| x.id == id);
        let Some((i, first)) = found.next() else {
            return Err(TraceError::NoSuchExchange {
                path: self.path.display().to_string(),
                index: id,
                count: self.exchanges.len(),
            });
        };
        let others: Vec<usize> = found.map(|(j, _)| j).collect();
        if others.is_empty() {
            return Ok(first);
        }
        let mut files: Vec<String> = std::iter::once(i)
            .chain(others.iter().copied())
            .map(|j| self.file_of(j).display().to_string())
            .collect();
        files.dedup();
        Err(TraceError::AmbiguousExchange {
            path: self.path.display().to_string(),
            index: id,
            count: others.len() + 1,
            files: files.join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceWriter;

    fn exchange(id: u64, body: &[u8]) -> Exchange {
        Exchange {
            id,
            started_at: chrono::Utc::now(),
            ..crate::trace::test_exchange("POST", "/v1/messages", &[], body)
        }
    }

    fn write(exchanges: &[Exchange]) -> Vec<u8> {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut w = TraceWriter::create(file.path(), &Context::new()).unwrap();
        for x in exchanges {
            w.write_exchange(x).unwrap();
        }
        drop(w);
        std::fs::read(file.path()).unwrap()
    }

    #[test]
    fn round_trip_keeps_bodies_byte_exact() {
        let bytes = write(&[exchange(0, br#"{"a": 1}"#), exchange(1, b"\xff\x00raw")]);
        let t = Trace::from_reader(&bytes[..], Path::new("t.jsonl")).unwrap();
        assert_eq!(t.exchanges.len(), 2);
        assert_eq!(t.exchanges[0].request.body.bytes, br#"{"a": 1}"#);
        assert_eq!(t.exchanges[1].request.body.bytes, b"\xff\x00raw");
        assert!(t.exchanges.iter().all(|x| x.request.body.verify()));
        assert!(t.problems.is_empty());
    }

    #[test]
    fn truncated_last_line_is_reported_not_fatal() {
        let mut bytes = write(&[exchange(0, b"{}"), exchange(1, b"{}")]);
        let cut = bytes.len() - 20;
        bytes.truncate(cut);
        let t = Trace::from_reader(&bytes[..], Path::new("t.jsonl")).unwrap();
        assert_eq!(t.exchanges.len(), 1);
        assert_eq!(t.problems.len(), 1);
        assert!(t.problems[0].truncated);
        assert_eq!(t.problems[0].line, 3);
        assert!(t.problems[0].to_string().contains("truncated"));
    }

    #[test]
    fn garbage_line_in_the_middle_is_kept_and_reading_goes_on() {
        let good = write(&[exchange(0, b"{}")]);
        let mut bytes = good.clone();
        bytes.extend_from_slice(b"not json at all\n");
        bytes.extend_from_slice(&good[good.iter().position(|&b| b == b'\n').unwrap() + 1..]);
        let t = Trace::from_reader(&bytes[..], Path::new("t.jsonl")).unwrap();
        assert_eq!(t.exchanges.len(), 2);
        assert_eq!(t.problems.len(), 1);
        assert_eq!(t.problems[0].raw, b"not json at all");
        assert!(!t.problems[0].truncated);
    }

    #[test]
    fn edited_body_fails_its_digest_and_is_kept_raw() {
        let bytes = write(&[exchange(0, br#"{"content":"hi"}"#), exchange(1, b"{}")]);
        let text = String::from_utf8(bytes)
            .unwrap()
            .replace(r#""content":"hi""#, r#""content":"HI""#);
        let t = Trace::from_reader(text.as_bytes(), Path::new("t.jsonl")).unwrap();
        assert_eq!(t.exchanges.len(), 1);
        assert_eq!(t.problems.len(), 1);
        assert!(
            t.problems[0].message.contains("sha256"),
            "{}",
            t.problems[0]
        );
        assert_eq!(t.problems[0].line, 2);
    }

    #[test]
    fn overlong_line_is_skipped_with_bounded_memory() {
        let mut bytes = vec![b'x'; 10_000];
        bytes.push(b'\n');
        bytes.extend(write(&[exchange(0, b"{}")]));
        let r = TraceReader::new(&bytes[..], Path::new("t")).max_line(1000);
        let recs: Vec<Record> = r.map(|x| x.unwrap()).collect();
        match &recs[0] {
            Record::Bad(p) => {
                assert!(p.message.contains("longer than the 1000 byte limit"), "{p}");
                assert_eq!(p.raw.len(), 1000);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(recs[1], Record::Header { .. }));
        assert!(matches!(recs[2], Record::Exchange(_)));
    }

    #[test]
    fn unknown_record_types_are_kept() {
        let mut bytes = write(&[]);
        bytes.extend_from_slice(b"{\"type\":\"divergence\",\"x\":1}\n");
        let t = Trace::from_reader(&bytes[..], Path::new("t.jsonl")).unwrap();
        assert_eq!(t.others.len(), 1);
        assert_eq!(t.others[0]["x"], 1);
    }

    #[test]
    fn newer_version_is_an_error_naming_the_file() {
        let bytes = b"{\"type\":\"trace\",\"version\":99}\n";
        let e = Trace::from_reader(&bytes[..], Path::new("new.jsonl")).unwrap_err();
        assert!(e.to_string().contains("new.jsonl"), "{e}");
    }
}
