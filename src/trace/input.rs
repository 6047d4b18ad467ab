//! Opening a trace *input*, the one way every reading command (show, diff, analyze,
//! report, replay, import) does it: a file, a directory (every trace and session under
//! it), or `-` for standard input; gzip-compressed or not; agentwire's own trace, a packet
//! capture (pcap/pcapng, extracted as `agentwire pcap` does with no filter) or a format
//! agentwire imports — recognised from the content, never the file name. Anything else is
//! refused with one line saying what it looks like and what agentwire reads.
//!
//! Records stream: an agentwire trace line by line; an imported file (or Claude Code
//! session with its subagents) one at a time; a directory file by file, with progress.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::import::detect::{classify_document, Detected};
use super::import::{self, claude_trace, har, tap, transcript, Format, ImportError, READS};
use super::{Context, Exchange, ReadProblem, Record, TraceError, TraceReader};

/// Progress through a directory input.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Files finished.
    pub files_done: usize,
    /// Files to read.
    pub files_total: usize,
    /// Bytes of finished files.
    pub bytes_done: u64,
    /// Bytes of all files.
    pub bytes_total: u64,
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Options for [`open_input`].
#[derive(Clone, Default)]
pub struct InputOptions {
    /// Keep only exchanges that started at or after this time (files last written before
    /// it are not even opened).
    pub since: Option<DateTime<Utc>>,
    /// Called after each file of a directory.
    pub progress: Option<ProgressFn>,
}

type Records = Box<dyn Iterator<Item = Result<Record, TraceError>>>;

/// An opened input: an iterator over its records, in order.
pub struct TraceInput {
    /// The input as named.
    pub path: PathBuf,
    /// The format of a single-file input (`None` for a directory).
    pub format: Option<Format>,
    current: Option<Records>,
    files: VecDeque<(PathBuf, u64)>,
    progress: Progress,
    opts: InputOptions,
    next_id: u64,
    exchanges: usize,
    skipped: Vec<(PathBuf, String)>,
    done: bool,
    /// The file the records now come from (the input itself unless it is a directory).
    file: PathBuf,
    /// A file of a directory was just opened: its first record must be a header.
    file_start: bool,
    /// A record held back behind a header made up for a file that has none.
    pending: Option<Result<Record, TraceError>>,
}

/// Longest first line read to recognise an input (a transcript's or claude-trace log's
/// first line can hold a whole request): 256 MiB.
const MAX_HEAD: usize = 256 << 20;

/// Open `path` for reading records: `-` is standard input, a directory is every file
/// under it (Claude Code subagent transcripts are read with their session).
///
/// Errors: the path cannot be opened; a file is not a format agentwire reads
/// ([`ImportError::Foreign`], one line naming what it looks like); an imported file is
/// broken or of an unknown layout. In a directory such files are skipped and listed by
/// [`TraceInput::skipped`]; a directory with no exchange at all is an error.
pub fn open_input(path: &Path, opts: &InputOptions) -> Result<TraceInput, TraceError> {
    let mut input = TraceInput {
        path: path.to_path_buf(),
        format: None,
        current: None,
        files: VecDeque::new(),
        progress: Progress {
            files_done: 0,
            files_total: 0,
            bytes_done: 0,
            bytes_total: 0,
        },
        opts: opts.clone(),
        next_id: 0,
        exchanges: 0,
        skipped: Vec::new(),
        done: false,
        file: path.to_path_buf(),
        file_start: false,
        pending: None,
    };
    if path == Path::new("-") {
        let (format, recs) = open_reader(Box::new(std::io::stdin()), path)?;
        input.format = Some(format);
        input.current = Some(recs);
    } else if path.is_dir() {
        (input.files, input.skipped) = dir_files(path, opts.since)?;
        input.progress.files_total = input.files.len() + input.skipped.len();
        input.progress.bytes_total = input.files.iter().map(|f| f.1).sum();
    } else {
        let f = File::open(path).map_err(|e| TraceError::Open {
            path: path.display().to_string(),
            source: e,
        })?;
        let (format, recs) = open_reader(Box::new(f), path)?;
        input.format = Some(format);
        input.current = Some(recs);
    }
    Ok(input)
}

impl TraceInput {
    /// Files of a directory that were not read, with why (not a trace, unknown layout...).
    pub fn skipped(&self) -> &[(PathBuf, String)] {
        &self.skipped
    }

    /// The file the record last returned came from: for a directory input, the path of
    /// that file under it (as `dir/sub/file.jsonl`); otherwise the input as named. Every
    /// problem and exchange id is relative to this file (ids repeat across the files of a
    /// directory).
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn is_import(&self) -> bool {
        self.format.is_some_and(|f| f != Format::Trace)
    }

    fn next_file(&mut self) -> bool {
        while let Some((p, size)) = self.files.pop_front() {
            let opened = File::open(&p)
                .map_err(|e| TraceError::Open {
                    path: p.display().to_string(),
                    source: e,
                })
                .and_then(|f| open_reader(Box::new(f), &p));
            self.progress.files_done += 1;
            self.progress.bytes_done += size;
            if let Some(cb) = &self.opts.progress {
                cb(&self.progress);
            }
            match opened {
                Ok((_, recs)) => {
                    self.current = Some(recs);
                    self.file = p;
                    self.file_start = true;
                    // imported exchanges are numbered within their file, as when it is named
                    self.next_id = 0;
                    return true;
                }
                Err(e) => self.skipped.push((p, e.to_string())),
            }
        }
        false
    }

    fn empty_error(&self) -> Option<TraceError> {
        let dir = !self.files.is_empty() || self.progress.files_total > 0 || self.path.is_dir();
        if self.exchanges > 0 || !(dir || self.is_import() || self.opts.since.is_some()) {
            return None;
        }
        let mut detail = if dir {
            format!(
                "{} files looked at, {} not traces",
                self.progress.files_total,
                self.skipped.len()
            )
        } else {
            "the input holds no exchange".to_string()
        };
        if let Some(s) = self.opts.since {
            detail.push_str(&format!(", none since {}", s.to_rfc3339()));
        }
        Some(TraceError::Import(ImportError::Empty {
            path: self.path.display().to_string(),
            detail,
        }))
    }
}

impl Iterator for TraceInput {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            let next = match self.pending.take() {
                Some(r) => Some(r),
                None => self.current.as_mut().and_then(Iterator::next),
            };
            let rec = match next {
                // Each file of a directory is its own recording context, announced by its
                // header line; a file without one (its first line damaged) gets an empty
                // header, so sessions without ids never run on from the file before.
                Some(r) if std::mem::take(&mut self.file_start) => {
                    if !matches!(r, Ok(Record::Header { .. })) {
                        self.pending = Some(r);
                        return Some(Ok(Record::Header {
                            version: super::FORMAT_VERSION,
                            context: Context::new(),
                        }));
                    }
                    r
                }
                Some(r) => r,
                None => {
                    self.current = None;
                    if self.next_file() {
                        continue;
                    }
                    self.done = true;
                    return self.empty_error().map(Err);
                }
            };
            match rec {
                Ok(Record::Exchange(mut x)) => {
                    if self.opts.since.is_some_and(|s| x.started_at < s) {
                        continue;
                    }
                    if x.source.kind == super::SourceKind::Import {
                        x.id = self.next_id;
                        self.next_id += 1;
                    }
                    self.exchanges += 1;
                    return Some(Ok(Record::Exchange(x)));
                }
                // a problem inside a directory names its file
                Ok(Record::Bad(mut p)) if self.file != self.path => {
                    p.file.get_or_insert_with(|| self.file.clone());
                    return Some(Ok(Record::Bad(p)));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                other => return Some(other),
            }
        }
    }
}

/// Every regular file under `dir`, sorted, with its size; subagent transcripts whose
/// session file exists are left to that session; files last written before `since` are
/// left out. Symbolic links are followed, but a directory or file reached twice (a link
/// back up the tree, two links to one file) is read once, and entries that are not
/// regular files (a FIFO would block forever, a socket or device is no trace) are
/// returned as skipped, with why.
fn dir_files(dir: &Path, since: Option<DateTime<Utc>>) -> Result<DirFiles, TraceError> {
    let open = |d: &Path, e| TraceError::Open {
        path: d.display().to_string(),
        source: e,
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut seen_dirs = HashSet::new();
    let root = std::fs::metadata(dir).map_err(|e| open(dir, e))?;
    seen_dirs.insert(file_id(dir, &root));
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        // The top directory must read; a subdirectory that cannot is skipped and named,
        // like a file that cannot (a dangling symbolic link, no permission).
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if d != dir => {
                skipped.push((
                    d.clone(),
                    format!(
                        "{}: cannot read this directory ({e}); not read",
                        d.display()
                    ),
                ));
                continue;
            }
            Err(e) => return Err(open(&d, e)),
        };
        for e in entries.flatten() {
            let p = e.path();
            let meta = match std::fs::metadata(&p) {
                Ok(meta) => meta,
                Err(e) => {
                    let why = format!(
                        "{}: cannot read ({e}; a dangling symbolic link?); not read",
                        p.display()
                    );
                    skipped.push((p, why));
                    continue;
                }
            };
            if meta.is_dir() {
                if seen_dirs.insert(file_id(&p, &meta)) {
                    stack.push(p);
                }
                continue;
            }
            if !meta.is_file() {
                let why = format!(
                    "{}: not a regular file (a FIFO, socket or device); not read",
                    p.display()
                );
                skipped.push((p, why));
                continue;
            }
            if is_session_subagent(&p) {
                continue;
            }
            let modified = meta.modified().ok().map(DateTime::<Utc>::from);
            if let (Some(s), Some(m)) = (since, modified) {
                if m < s {
                    continue;
                }
            }
            out.push((p, meta.len(), file_id(&e.path(), &meta)));
        }
    }
    // Sorted by path, one path per file: the first name in order wins.
    out.sort();
    let mut seen_files = HashSet::new();
    let files = out
        .into_iter()
        .filter(|(_, _, id)| seen_files.insert(id.clone()))
        .map(|(p, size, _)| (p, size))
        .collect();
    skipped.sort();
    Ok((files, skipped))
}

/// Files of a directory input to read (path, size in bytes) and entries skipped (path, why).
type DirFiles = (VecDeque<(PathBuf, u64)>, Vec<(PathBuf, String)>);

/// What makes two paths one file: device and inode.
#[cfg(unix)]
fn file_id(_: &Path, meta: &std::fs::Metadata) -> (u64, u64, PathBuf) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino(), PathBuf::new())
}

/// What makes two paths one file: the canonical path.
#[cfg(not(unix))]
fn file_id(p: &Path, _: &std::fs::Metadata) -> (u64, u64, PathBuf) {
    (
        0,
        0,
        std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()),
    )
}

/// `<dir>/<session>/subagents/<file>` next to an existing `<dir>/<session>.jsonl`.
fn is_session_subagent(p: &Path) -> bool {
    let Some(sub) = p.parent() else { return false };
    if sub.file_name().is_none_or(|n| n != "subagents") {
        return false;
    }
    sub.parent()
        .is_some_and(|session| session.with_extension("jsonl").is_file())
}

/// Bytes of the longest magic number [`import::detect`] looks for.
const MAGIC: usize = 4;

/// Read the first line (or the first bytes, for binary data), for recognition; at least
/// [`MAGIC`] bytes when the input has them.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    read_head_with(r, import::detect::detect_prefix)
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

fn foreign(path: &Path, looks_like: String, hint: String) -> TraceError {
    let hint = if hint.is_empty() {
        READS.to_string()
    } else {
        format!("{hint}. {READS}")
    };
    TraceError::Import(ImportError::Foreign {
        path: path.display().to_string(),
        looks_like,
        hint,
    })
}

/// Recognise `input` and return its format and records.
///
/// Exchanges of every format but agentwire's own trace pass the one redaction function
/// here ([`super::redact::exchange_in_place`]), so no command prints or writes a secret a
/// capture or another tool's file holds (a trace was redacted when it was written).
fn open_reader(input: Box<dyn Read + Send>, path: &Path) -> Result<(Format, Records), TraceError> {
    let (format, recs) = open_reader_depth(input, path, 0)?;
    if format == Format::Trace {
        return Ok((format, recs));
    }
    let recs = recs.map(|r| {
        r.map(|rec| match rec {
            Record::Exchange(mut x) => {
                super::redact::exchange_in_place(&mut x);
                Record::Exchange(x)
            }
            other => other,
        })
    });
    Ok((format, Box::new(recs)))
}

fn open_reader_depth(
    input: Box<dyn Read + Send>,
    path: &Path,
    depth: u8,
) -> Result<(Format, Records), TraceError> {
    let io = |e| TraceError::Read {
        path: path.display().to_string(),
        offset: 0,
        source: e,
    };
    let mut r = BufReader::with_capacity(1 << 20, input);
    let head = read_head(&mut r).map_err(io)?;
    let detected = import::detect(&head);
    let (head, detected) = second_line_decides(head, detected, &mut r).map_err(io)?;
    // The head was read off the input: readers get it back in front of the rest.
    let whole = |head, r| -> Box<dyn Read + Send> { Box::new(Cursor::new(head).chain(r)) };
    match detected {
        Detected::Gzip if depth == 0 => {
            // Read up to a decompression error, which then closes the records as a problem
            // (the records before it are kept, as for an uncompressed file cut short).
            let (gz, failure) = super::gunzip::UntilError::new(whole(head, r));
            let name = path.display().to_string();
            let (format, recs) = match open_reader_depth(Box::new(gz), path, 1) {
                Ok(opened) => opened,
                // Nothing readable decompressed: the gzip error is the reason, not what the
                // few bytes before it looked like.
                Err(e) => {
                    return Err(match failure.take() {
                        Some((_, why)) => TraceError::Import(ImportError::Malformed {
                            path: name,
                            format: "gzip",
                            detail: why,
                        }),
                        None => e,
                    })
                }
            };
            let tail =
                std::iter::from_fn(move || failure.take_problem(&name).map(|p| Ok(Record::Bad(p))));
            Ok((format, Box::new(recs.chain(tail))))
        }
        Detected::Gzip => Err(foreign(path, "gzip inside gzip".into(), String::new())),
        Detected::Foreign { looks_like, hint } => Err(foreign(path, looks_like, hint)),
        Detected::Format(Format::Trace) => Ok((
            Format::Trace,
            // Lines of a file parse in parallel; standard input may be a recorder still
            // writing, so its lines are read one at a time.
            if path == Path::new("-") {
                Box::new(TraceReader::new(
                    BufReader::with_capacity(1 << 20, whole(head, r)),
                    path,
                ))
            } else {
                // A file is read (and its lines parsed) ahead, while the caller works.
                super::ahead::ReadAhead::spawn(
                    TraceReader::new(BufReader::with_capacity(1 << 20, whole(head, r)), path)
                        .parallel(true),
                )
            },
        )),
        Detected::Format(Format::ClaudeCodeTranscript) => {
            let s = transcript::import(BufReader::new(whole(head, r)), path)?;
            let mut recs: Vec<Result<Record, TraceError>> = vec![Ok(header(&s.exchanges))];
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
        Detected::Format(Format::Pcap) => Ok((Format::Pcap, pcap_records(whole(head, r), path)?)),
        Detected::Format(f @ (Format::ClaudeTrace | Format::ClaudeTap)) => {
            Ok((f, Box::new(JsonLines::new(whole(head, r), path, f))))
        }
        Detected::Format(Format::Har | Format::RequestBody) | Detected::Document => {
            // A JSON document is read whole: the rest goes after the head, in place.
            let head_len = head.len();
            let mut bytes = head;
            r.read_to_end(&mut bytes).map_err(io)?;
            // `detect` parsed the head's first line whole and found a request body: when
            // nothing but blanks follows it, the file is that body, already checked.
            if matches!(detected, Detected::Format(Format::RequestBody))
                && bytes[head_len..].iter().all(u8::is_ascii_whitespace)
            {
                return Ok((Format::RequestBody, request_body(bytes, path)));
            }
            document(bytes, path)
        }
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
    let second = import::detect(&next);
    let mut grown = head;
    grown.extend_from_slice(&next);
    Ok(match second {
        d @ Detected::Format(
            Format::Trace | Format::ClaudeTrace | Format::ClaudeTap | Format::ClaudeCodeTranscript,
        ) => (grown, d),
        _ => (grown, detected),
    })
}

/// The exchanges of a packet capture: the extraction `agentwire pcap` runs (no port or
/// host filter), after a header as `agentwire pcap` writes it. A capture cut short or
/// corrupt keeps the exchanges before the bad block and ends with a problem record naming
/// the byte where reading stopped (the run is degraded, nothing read is lost).
///
/// Errors: [`ImportError::Malformed`] when the capture's header cannot be read.
fn pcap_records(input: Box<dyn Read + Send>, path: &Path) -> Result<Records, TraceError> {
    use crate::capture::pcap::{read_packets, Config, Extractor, PcapError};
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
            return Err(TraceError::Import(ImportError::Malformed {
                path: name,
                format: Format::Pcap.name(),
                detail: e.to_string(),
            }))
        }
        Err(e) => Some(ReadProblem {
            line: 0,
            offset: match &e {
                PcapError::Truncated { offset, .. }
                | PcapError::Corrupt { offset, .. }
                | PcapError::Read { offset, .. } => *offset,
                _ => 0,
            },
            truncated: false,
            message: e.to_string(),
            raw: Vec::new(),
            file: None,
        }),
    };
    let header = Record::Header {
        version: super::FORMAT_VERSION,
        context: Context::new(),
    };
    let skipped: Vec<ReadProblem> = skipped
        .into_iter()
        .map(|message| ReadProblem {
            line: 0,
            offset: 0,
            truncated: false,
            message: if message.starts_with(&name) {
                message
            } else {
                format!("{name}: {message}")
            },
            raw: Vec::new(),
            file: None,
        })
        .collect();
    let recs = std::iter::once(header)
        .chain(exchanges.into_iter().map(|x| Record::Exchange(Box::new(x))))
        .chain(skipped.into_iter().map(Record::Bad))
        .chain(problem.map(Record::Bad))
        .map(Ok);
    Ok(Box::new(recs))
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
        version: super::FORMAT_VERSION,
        context: c,
    }
}

fn document(bytes: Vec<u8>, path: &Path) -> Result<(Format, Records), TraceError> {
    if import::detect::is_request_body(&bytes) {
        return Ok((Format::RequestBody, request_body(bytes, path)));
    }
    let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        foreign(
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
        Detected::Foreign { looks_like, hint } => return Err(foreign(path, looks_like, hint)),
        other => {
            return Err(foreign(path, format!("{other:?}"), String::new()));
        }
    };
    let mut recs = vec![Ok(header(&xs))];
    recs.extend(problems.into_iter().map(|message| {
        Ok(Record::Bad(ReadProblem {
            line: 0,
            offset: 0,
            truncated: false,
            message: format!("{}: {message}", path.display()),
            raw: Vec::new(),
            file: None,
        }))
    }));
    recs.extend(xs.into_iter().map(|x| Ok(Record::Exchange(Box::new(x)))));
    Ok((format, Box::new(recs.into_iter())))
}

/// The records of a bare Messages request body, already parsed whole to be recognised:
/// a header and one `POST /v1/messages` exchange carrying it (no headers, response or
/// timing: the source says so).
fn request_body(mut bytes: Vec<u8>, path: &Path) -> Records {
    let source = import::import_source(
        Format::RequestBody,
        path,
        &["request headers", "response", "timing"],
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
struct JsonLines {
    lines: std::io::Split<BufReader<Box<dyn Read + Send>>>,
    path: PathBuf,
    format: Format,
    line: u64,
    offset: u64,
    started: bool,
}

impl JsonLines {
    fn new(input: Box<dyn Read + Send>, path: &Path, format: Format) -> Self {
        JsonLines {
            lines: BufReader::with_capacity(1 << 20, input).split(b'\n'),
            path: path.to_path_buf(),
            format,
            line: 0,
            offset: 0,
            started: false,
        }
    }
}

impl Iterator for JsonLines {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.started {
            self.started = true;
            let mut c = Context::new();
            c.label = Some("imported".into());
            return Some(Ok(Record::Header {
                version: super::FORMAT_VERSION,
                context: c,
            }));
        }
        loop {
            let raw = match self.lines.next()? {
                Ok(l) => l,
                Err(e) => {
                    return Some(Err(TraceError::Read {
                        path: self.path.display().to_string(),
                        offset: self.offset,
                        source: e,
                    }))
                }
            };
            self.line += 1;
            let start = self.offset;
            self.offset += raw.len() as u64 + 1;
            if raw.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let bad = |message: String| {
                Record::Bad(ReadProblem {
                    line: self.line,
                    offset: start,
                    truncated: false,
                    message,
                    raw: raw.clone(),
                    file: None,
                })
            };
            let v: serde_json::Value = match serde_json::from_slice(&raw) {
                Ok(v) => v,
                Err(e) => {
                    return Some(Ok(bad(format!("not a {} record: {e}", self.format.name()))))
                }
            };
            let x = match self.format {
                Format::ClaudeTrace => claude_trace::import_pair(&v, &self.path),
                _ => tap::import_record(&v, &self.path),
            };
            return Some(Ok(match x {
                Some(x) => Record::Exchange(Box::new(x)),
                None => bad(format!(
                    "not a {} record (no request object)",
                    self.format.name()
                )),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            import::detect::detect_prefix(h)
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
            import::detect(&head),
            Detected::Foreign { ref looks_like, .. } if looks_like.contains("NUL")
        ));
    }
}
