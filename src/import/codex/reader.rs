//! The rollout read line by line into records: a header (the recording context from
//! `session_meta`), an exchange as each response completes, and problems for the lines that
//! could not be read. Memory holds the conversation (bounded by [`MAX_HISTORY`]) and one
//! exchange at a time, never the file's other lines.

use std::collections::{BTreeMap, VecDeque};
use std::io::BufRead;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use serde_json::Value;

use super::exchange::{exchange, Answer, Base, End, Request};
use super::history::{
    as_sent, base_message, classify, is_base_message, wire, Item, Kind, Provider,
};
use super::lines::{Line, LineReader};
use super::{raw, Meta, MAX_HISTORY};
use crate::import::{parse_time, ImportError};
use crate::trace::{Context, ReadProblem, Record, FORMAT_VERSION};

/// Records queued before the header is forced out (a file whose session_meta never comes).
const MAX_QUEUED: usize = 64;

/// Unreadable lines named one by one in a caveat; the rest are counted.
const GAPS_NAMED: usize = 3;

/// A response whose output items have begun.
struct Pending {
    /// Items before its first output item: its request's input.
    input_len: usize,
    /// Its output items (indices into the history).
    outputs: Vec<usize>,
    /// Time of the line before its first output item.
    started: Option<DateTime<Utc>>,
}

/// Lines of a type this build does not read.
struct Unknown {
    count: u64,
    first: ReadProblem,
}

/// A Codex rollout as records (see the module docs of [`super`]).
pub struct Rollout<R> {
    lines: LineReader<R>,
    /// Most bytes of conversation held ([`MAX_HISTORY`] but in tests).
    max: usize,
    meta: Meta,
    meta_seen: bool,
    model: Option<String>,
    items: Vec<Item>,
    bytes: usize,
    /// First history index of the base-instructions message and of `additional_tools`.
    base_at: Option<usize>,
    tools_at: Option<usize>,
    pending: Option<Pending>,
    /// What ends a response in this file, once seen.
    end: Option<End>,
    last_time: Option<DateTime<Utc>>,
    caveats: Vec<String>,
    gaps: (Vec<u64>, u64),
    unknown: BTreeMap<String, Unknown>,
    ready: VecDeque<Record>,
    header_sent: bool,
    exchanges: u64,
    done: bool,
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
    fn bad(&mut self, l: &Line, message: String) {
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

    /// A `response_item` line: an item of the history.
    fn item(&mut self, l: &Line, line_text: &str, p: &Value) {
        let Some(text) = raw::member(line_text, "payload").filter(|_| p.is_object()) else {
            return self.bad(
                l,
                "a response_item whose payload is not a JSON object; skipped".into(),
            );
        };
        let Kind::Item(item) = classify(text, p) else {
            return;
        };
        let pending_outputs = self.pending.as_ref().is_some_and(|p| !p.outputs.is_empty());
        if !item.output && pending_outputs && self.end == Some(End::UsageRecord) {
            // the previous response's items ended without its usage record
            self.close(None, End::Unmarked, 0, None);
        }
        if self.bytes + item.text.len() > self.max {
            return self.stop(l);
        }
        let at = self.items.len();
        if item.output && self.pending.is_none() {
            self.pending = Some(Pending {
                input_len: at,
                outputs: Vec::new(),
                started: self.last_time,
            });
        }
        if self.base_at.is_none()
            && self
                .meta
                .base
                .as_deref()
                .is_some_and(|b| is_base_message(p, b))
        {
            self.base_at = Some(at);
        }
        if item.tools && self.tools_at.is_none() {
            self.tools_at = Some(at);
        }
        if let (true, Some(pending)) = (item.output, self.pending.as_mut()) {
            pending.outputs.push(at);
        }
        self.bytes += item.text.len();
        self.items.push(item);
    }

    /// The history passed [`MAX_HISTORY`]: the rest of the file is not read.
    fn stop(&mut self, l: &Line) {
        let message = format!(
            "the conversation passes {} bytes at this line; it and the rest of the file are not read ({} responses were)",
            self.max, self.exchanges
        );
        self.pending = None;
        self.bad(l, message);
        self.finish();
    }

    /// A `token_usage_record` line: the end of a response.
    fn usage_record(&mut self, p: &Value, line: u64, time: Option<DateTime<Utc>>) {
        if self.end == Some(End::TokenCount) {
            return;
        }
        self.end = Some(End::UsageRecord);
        self.close(Some(p), End::UsageRecord, line, time);
    }

    /// An `event_msg` line: a `token_count` ends a response in rollouts without usage
    /// records; the other events are not needed.
    fn event(&mut self, p: &Value, line: u64, time: Option<DateTime<Utc>>) {
        let usage = p.pointer("/info/last_token_usage").filter(|u| {
            u.is_object() && p.get("type").and_then(Value::as_str) == Some("token_count")
        });
        if usage.is_none() || self.end == Some(End::UsageRecord) || self.pending.is_none() {
            return;
        }
        self.end = Some(End::TokenCount);
        let record = serde_json::json!({ "usage": usage });
        self.close(Some(&record), End::TokenCount, line, time);
    }

    /// A `compacted` line: the history from here on is its `replacement_history`, or not
    /// known.
    fn compacted(&mut self, line_text: &str, line: u64) {
        if self.pending.as_ref().is_some_and(|p| !p.outputs.is_empty()) {
            self.close(None, End::Unmarked, 0, None);
        }
        self.pending = None;
        let replacement = raw::member(line_text, "payload")
            .and_then(|t| raw::member(t, "replacement_history"))
            .and_then(|t| serde_json::from_str::<Vec<&RawValue>>(t).ok());
        self.items.clear();
        (self.bytes, self.base_at, self.tools_at) = (0, None, None);
        let Some(replacement) = replacement else {
            self.caveats.push(format!("the conversation before the compaction on line {line} (the rollout does not record what replaced it; the input holds only the items after it)"));
            return;
        };
        self.caveats.push(format!("the input items up to the compaction on line {line} are its replacement_history (not checked against a request body)"));
        for t in replacement {
            let v: Value = serde_json::from_str(t.get()).unwrap_or(Value::Null);
            if let Kind::Item(mut item) = classify(t.get(), &v) {
                item.output = false;
                if self
                    .meta
                    .base
                    .as_deref()
                    .is_some_and(|b| is_base_message(&v, b))
                {
                    self.base_at.get_or_insert(self.items.len());
                }
                if item.tools {
                    self.tools_at.get_or_insert(self.items.len());
                }
                self.bytes += item.text.len();
                self.items.push(item);
            }
        }
    }

    /// Make the exchange of the pending response (or of an empty one), ended by `record`.
    fn close(&mut self, record: Option<&Value>, end: End, line: u64, time: Option<DateTime<Utc>>) {
        let (input_len, outputs, started) = match self.pending.take() {
            Some(p) => (p.input_len, p.outputs, p.started),
            None => (self.items.len(), Vec::new(), self.last_time),
        };
        let s = |k: &str| {
            record
                .and_then(|r| r.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let ans = Answer {
            outputs: outputs.iter().map(|&i| as_sent(&self.items[i])).collect(),
            usage: record.and_then(|r| r.get("usage")).cloned(),
            response_id: s("response_id"),
            turn_id: s("turn_id"),
            thread_id: s("thread_id"),
            ended: time.or(self.last_time),
            end,
            line,
        };
        let provider = Provider::of(self.meta.provider.as_deref());
        let lite = self.tools_at.is_some_and(|t| t < input_len);
        let base = match (self.base_at, &self.meta.base) {
            (Some(b), _) if b < input_len => Base::InHistory,
            (_, Some(_)) => Base::Prepended,
            _ => Base::Unknown,
        };
        let mut input: Vec<std::borrow::Cow<str>> = Vec::with_capacity(input_len + 1);
        if let (Base::Prepended, Some(b)) = (base, &self.meta.base) {
            input.push(base_message(b).into());
        }
        input.extend(
            self.items[..input_len]
                .iter()
                .map(|i| wire(i, provider, lite)),
        );
        let req = Request {
            model: self.model.as_deref(),
            input,
            base,
            tools_in_input: lite,
            started,
        };
        let x = exchange(&self.meta, req, ans, &self.caveats_now());
        self.ready.push_back(Record::Exchange(Box::new(x)));
        self.exchanges += 1;
    }

    /// The caveats of an exchange made now: compactions and unreadable lines so far.
    fn caveats_now(&self) -> Vec<String> {
        let mut c = self.caveats.clone();
        let (named, more) = &self.gaps;
        if !named.is_empty() {
            let lines: Vec<String> = named.iter().map(u64::to_string).collect();
            let more = if *more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            c.push(format!("what line(s) {}{more} held (they could not be read; if one was an item of the conversation, this request lacks it)", lines.join(", ")));
        }
        c
    }

    /// The end of the file: an unfinished response becomes an exchange without usage; the
    /// line types not read are named, one problem per type.
    fn finish(&mut self) {
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
