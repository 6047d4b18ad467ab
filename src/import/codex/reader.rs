//! The rollout read line by line into records: a header (the recording context from
//! `session_meta`), an exchange as each response completes, and problems for the lines that
//! could not be read. Memory holds the conversation (bounded by [`MAX_HISTORY`]) and one
//! exchange at a time, never the file's other lines.

use std::collections::{BTreeMap, VecDeque};
use std::io::BufRead;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::exchange::End;
use super::history::Item;
use super::lines::{Line, LineReader};
use super::{Meta, MAX_HISTORY};
use crate::import::{parse_time, ImportError};
use crate::trace::{Context, ReadProblem, Record, FORMAT_VERSION};

/// Records queued before the header is forced out (a file whose session_meta never comes).
const MAX_QUEUED: usize = 64;

/// Unreadable lines named one by one in a caveat; the rest are counted.
const GAPS_NAMED: usize = 3;

/// A response whose output items have begun.
pub(super) struct Pending {
    /// Items before its first output item: its request's input.
    pub(super) input_len: usize,
    /// Its output items (indices into the history).
    pub(super) outputs: Vec<usize>,
    /// Time of the line before its first output item.
    pub(super) started: Option<DateTime<Utc>>,
}

/// Lines of a type this build does not read.
struct Unknown {
    count: u64,
    first: ReadProblem,
}

/// A Codex rollout as records (see the module docs of [`super`]).
pub struct Rollout<R> {
    pub(super) lines: LineReader<R>,
    /// Most bytes of conversation held ([`MAX_HISTORY`] but in tests).
    pub(super) max: usize,
    pub(super) meta: Meta,
    pub(super) meta_seen: bool,
    pub(super) model: Option<String>,
    pub(super) items: Vec<Item>,
    pub(super) bytes: usize,
    /// First history index of the base-instructions message and of `additional_tools`.
    pub(super) base_at: Option<usize>,
    pub(super) tools_at: Option<usize>,
    pub(super) pending: Option<Pending>,
    /// What ends a response in this file, once seen.
    pub(super) end: Option<End>,
    pub(super) last_time: Option<DateTime<Utc>>,
    pub(super) caveats: Vec<String>,
    pub(super) gaps: (Vec<u64>, u64),
    unknown: BTreeMap<String, Unknown>,
    pub(super) ready: VecDeque<Record>,
    pub(super) header_sent: bool,
    pub(super) exchanges: u64,
    pub(super) done: bool,
}

impl<R: BufRead> Rollout<R> {
    /// Open the rollout `input` (named `path`), reading up to its first exchange.
    ///
    /// Errors: [`ImportError::Empty`] when the rollout holds no model response;
    /// [`ImportError::Io`] when it cannot be read.
    pub fn open(input: R, path: &Path) -> Result<Self, ImportError> {
        Self::open_bounded(input, path, MAX_HISTORY)
    }

    /// [`Rollout::open`] holding at most `max` bytes of conversation (and of one line).
    pub(crate) fn open_bounded(input: R, path: &Path, max: usize) -> Result<Self, ImportError> {
        let mut r = Rollout {
            max,
            lines: LineReader::new(input, max),
            meta: Meta {
                file: path.to_path_buf(),
                ..Meta::default()
            },
            meta_seen: false,
            model: None,
            items: Vec::new(),
            bytes: 0,
            base_at: None,
            tools_at: None,
            pending: None,
            end: None,
            last_time: None,
            caveats: Vec::new(),
            gaps: (Vec::new(), 0),
            unknown: BTreeMap::new(),
            ready: VecDeque::new(),
            header_sent: false,
            exchanges: 0,
            done: false,
        };
        while r.exchanges == 0 && !r.done {
            r.step()?;
        }
        if r.exchanges == 0 {
            return Err(ImportError::Empty {
                path: path.display().to_string(),
                detail: "the Codex rollout holds no model response (no token_usage_record, no output item)".into(),
            });
        }
        Ok(r)
    }

    /// The input being read.
    pub fn get_ref(&self) -> &R {
        self.lines.get_ref()
    }

    /// Read one line (or finish at the end).
    fn step(&mut self) -> Result<(), ImportError> {
        match self.lines.next_line() {
            None => self.finish(),
            Some(Err(e)) => {
                self.done = true;
                return Err(ImportError::io(&self.meta.file, e));
            }
            Some(Ok(l)) => self.line(l),
        }
        Ok(())
    }

    /// One line of the file.
    fn line(&mut self, l: Line) {
        if let Some(len) = l.overlong {
            let why = format!(
                "a line of {len} bytes is longer than the {} byte limit; skipped (first 1 KiB kept)",
                self.max
            );
            return self.bad(&l, why);
        }
        let parsed = std::str::from_utf8(&l.bytes)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                serde_json::from_str::<Value>(t)
                    .map(|v| (t, v))
                    .map_err(|e| e.to_string())
            });
        let (text, v) = match parsed {
            Ok(p) => p,
            Err(e) if l.truncated => {
                return self.bad(&l, format!("the last line is cut short (no newline): {e}"))
            }
            Err(e) => return self.bad(&l, format!("not a rollout line: {e}")),
        };
        let time = parse_time(v.get("timestamp").and_then(Value::as_str));
        let payload = v.get("payload").unwrap_or(&Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") if !self.meta_seen => {
                self.meta.take(payload);
                self.meta_seen = true;
            }
            Some("turn_context") => {
                if let Some(m) = payload.get("model").and_then(Value::as_str) {
                    self.model = Some(m.to_string());
                }
            }
            Some("response_item") => self.item(&l, text, payload),
            Some("token_usage_record") => self.usage_record(payload, l.no, time),
            Some("event_msg") => self.event(payload, l.no, time),
            Some("compacted") => self.compacted(text, l.no),
            Some("session_meta" | "world_state") => {}
            other => self.unknown(&l, other.unwrap_or("(none)")),
        }
        // UI events are written around the items they report (an output item's
        // `item_completed` comes before it): only the conversation's lines date a request.
        if time.is_some() && v.get("type").and_then(Value::as_str) != Some("event_msg") {
            self.last_time = time;
        }
    }

    /// A line that could not be read: a problem, and a gap in the history after it.
    pub(super) fn bad(&mut self, l: &Line, message: String) {
        let mut raw = l.bytes.clone();
        raw.truncate(1024);
        self.ready.push_back(Record::Bad(ReadProblem {
            line: l.no,
            offset: l.offset,
            truncated: l.truncated,
            message,
            raw,
            file: None,
        }));
        if self.gaps.0.len() < GAPS_NAMED {
            self.gaps.0.push(l.no);
        } else {
            self.gaps.1 += 1;
        }
    }

    /// A line of a type this build does not read, counted by type.
    fn unknown(&mut self, l: &Line, ty: &str) {
        let u = self
            .unknown
            .entry(ty.to_string())
            .or_insert_with(|| Unknown {
                count: 0,
                first: ReadProblem {
                    line: l.no,
                    offset: l.offset,
                    truncated: l.truncated,
                    message: String::new(),
                    raw: l.bytes.iter().copied().take(1024).collect(),
                    file: None,
                },
            });
        u.count += 1;
    }

    /// The end of the file: an unfinished response becomes an exchange without usage; the
    /// line types not read are named, one problem per type.
    pub(super) fn finish(&mut self) {
        if self.pending.as_ref().is_some_and(|p| !p.outputs.is_empty()) {
            self.close(None, End::Unmarked, 0, None);
        }
        for (ty, u) in std::mem::take(&mut self.unknown) {
            let mut p = u.first;
            p.message = format!(
                "{} line(s) of type {:?} (the first is this one), a type this build does not read; skipped",
                u.count,
                crate::text::printable(&ty)
            );
            self.ready.push_back(Record::Bad(p));
        }
        self.done = true;
    }

    /// The header: the recording context as far as the rollout says (route unknown).
    fn header(&self) -> Record {
        let mut c = Context::new();
        c.cli = Some("codex".into());
        c.cli_version = self.meta.cli_version.clone();
        c.model_provider = self.meta.provider.clone();
        c.label = Some("imported".into());
        Record::Header {
            version: FORMAT_VERSION,
            context: c,
        }
    }
}

impl<R: BufRead> Iterator for Rollout<R> {
    type Item = Result<Record, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.header_sent {
                if let Some(r) = self.ready.pop_front() {
                    return Some(Ok(r));
                }
            } else if self.meta_seen
                || self.done
                || self.exchanges > 0
                || self.ready.len() >= MAX_QUEUED
            {
                self.header_sent = true;
                return Some(Ok(self.header()));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.step() {
                return Some(Err(e));
            }
        }
    }
}
