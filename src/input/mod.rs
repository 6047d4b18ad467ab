//! The input layer: opening a trace *input*, the one way every reading command (show,
//! diff, analyze, report, replay, import, export) does it: a file, a directory (every trace
//! and session under it), or `-` for standard input; gzip-compressed or not; agentwire's
//! own trace, a packet capture (pcap/pcapng, extracted as `agentwire pcap` does with no
//! filter) or a format agentwire imports — recognised from the content ([`detect`]), never
//! the file name. Anything else is refused with one line saying what it looks like and
//! what agentwire reads.
//!
//! Records stream: an agentwire trace line by line (a file read ahead on a thread of its
//! own); an imported file (or Claude Code session with its subagents) one at a time; a
//! directory file by file, with progress. [`open_trace`] collects them into a whole
//! [`Trace`].
//!
//! Where it sits: above the sources it dispatches to (`capture::pcap` for captures,
//! [`crate::import`] for other tools' files) and the model they produce ([`crate::trace`],
//! whose [`crate::trace::TraceReader`] reads agentwire's own lines); below the commands and
//! the analyses (`diff`, `analyze`) that read inputs. Sources never open inputs through
//! here: they read back only their own output, with [`Trace::read`].

pub mod ahead;
pub mod detect;
mod dir;
mod error;
mod formats;
mod open;
mod stream;

pub use error::InputError;

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::import::{Format, ImportError};
use crate::trace::{Context, Record, SourceKind, Trace, TraceError, FORMAT_VERSION};

use stream::Records;

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
    pending: Option<Result<Record, InputError>>,
}

/// Open `path` for reading records: `-` is standard input, a directory is every file
/// under it (Claude Code subagent transcripts are read with their session).
///
/// Errors: the path cannot be opened; a file is not a format agentwire reads
/// ([`ImportError::Foreign`], one line naming what it looks like); an imported file is
/// broken or of an unknown layout. In a directory such files are skipped and listed by
/// [`TraceInput::skipped`]; a directory with no exchange at all is an error.
pub fn open_input(path: &Path, opts: &InputOptions) -> Result<TraceInput, InputError> {
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
        let (format, recs) = open::open_reader(Box::new(std::io::stdin()), path)?;
        input.format = Some(format);
        input.current = Some(recs);
    } else if path.is_dir() {
        (input.files, input.skipped) = dir::dir_files(path, opts.since)?;
        input.progress.files_total = input.files.len() + input.skipped.len();
        input.progress.bytes_total = input.files.iter().map(|f| f.1).sum();
    } else {
        let f = File::open(path).map_err(|e| TraceError::Open {
            path: path.display().to_string(),
            source: e,
        })?;
        let (format, recs) = open::open_reader(Box::new(f), path)?;
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
                .map_err(|e| {
                    InputError::from(TraceError::Open {
                        path: p.display().to_string(),
                        source: e,
                    })
                })
                .and_then(|f| open::open_reader(Box::new(f), &p));
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

    fn empty_error(&self) -> Option<InputError> {
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
        Some(InputError::Import(ImportError::Empty {
            path: self.path.display().to_string(),
            detail,
        }))
    }
}

impl Iterator for TraceInput {
    type Item = Result<Record, InputError>;

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
                            version: FORMAT_VERSION,
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
                    if x.source.kind == SourceKind::Import {
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

/// Read a whole trace input: a file, a directory or `-`, in any format [`open_input`]
/// reads (imports and packet captures included). A trace file agentwire wrote itself can
/// also be read with [`Trace::read`], which knows only that format.
///
/// Errors: the input cannot be opened or read, is not a format agentwire reads, or was
/// written by a newer format. Unparseable lines are not errors: they land in
/// [`Trace::problems`].
pub fn open_trace(path: &Path) -> Result<Trace, InputError> {
    let mut input = open_input(path, &Default::default())?;
    let mut t = Trace {
        path: path.to_path_buf(),
        ..Trace::default()
    };
    while let Some(r) = input.next() {
        t.push(r?, input.file());
    }
    Ok(t)
}
