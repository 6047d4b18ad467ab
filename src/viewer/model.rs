//! The viewer's model: one small row per exchange ([`TurnRow`]: the turn list's fields),
//! where its bytes are ([`BodyRef`]), and what links turns (threads, tool calls), added
//! one exchange at a time ([`Model::push`], or [`Model::push_read`] with what the batched
//! parse read of it: [`super::row`]) by the index pass ([`super::index`]) or a live
//! recording.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::analyze::Analysis;
use crate::api::view::Canonicalizer;
use crate::trace::{Exchange, ReadProblem};

use super::row::{ReadRow, ResponseFacts};

/// Where an exchange's bytes are.
#[derive(Clone, Debug)]
pub enum BodyRef {
    /// In the trace file: the byte range of its line (`offset`, `len` in bytes).
    At {
        /// Byte offset of the range's start.
        offset: u64,
        /// Length in bytes.
        len: u64,
    },
    /// In memory (an input that is not a plain trace file, or a live exchange).
    Held(Arc<Exchange>),
}

/// An audit badge on a turn.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Badge {
    /// `poll`, `redundant`, `miss`, `job_started`, `job_notified`, `error`.
    pub kind: &'static str,
    /// What the badge says (`poll of bash_1`, `miss: +CronList`).
    pub text: String,
    /// The poll episode (index in the analysis' `episodes`), for a poll badge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub episode: Option<usize>,
}

/// One row of the turn list (every exchange, a model request or not).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TurnRow {
    /// Position in the list, from 0: the viewer's key for the turn (`#t=N`).
    pub n: usize,
    /// The exchange id the other commands take (`FILE#ID`).
    pub id: u64,
    /// The file it is in, for a directory input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Line number in the trace file, from 1 (a plain trace file only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Request start, RFC 3339 UTC with milliseconds.
    pub time: String,
    /// Session label (`s1`, …).
    pub session: String,
    /// Thread label (`main`, `sub-N`, `side-N`, `side`).
    pub thread: String,
    /// HTTP method.
    pub method: String,
    /// Request path (no query).
    pub path: String,
    /// The request's model.
    pub model: Option<String>,
    /// HTTP status of the response (`None`: no response, or still streaming).
    pub status: Option<u16>,
    /// Request start to last response byte, ms.
    pub latency_ms: Option<f64>,
    /// Request start to first response byte, ms.
    pub ttft_ms: Option<f64>,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cached_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cost, USD, as `analyze` prices it (`None`: not a priced model request).
    pub cost_usd: Option<f64>,
    /// `analyze`'s cache status: `hit`, `partial`, `miss`, `cold`, `uncached`.
    pub cache: Option<String>,
    /// The miss cause as text (`gap 330.1 s > 300 s`).
    pub cause: Option<String>,
    /// The miss cause's name (`ttl_expired`), as the summary groups misses.
    pub cause_name: Option<String>,
    /// The miss's extra cost over cache reads, USD.
    pub miss_cost_usd: Option<f64>,
    /// Audit badges.
    pub badges: Vec<Badge>,
    /// Tools the response called, in order.
    pub tools: Vec<String>,
    /// Messages in the request.
    pub messages: usize,
    /// Stop reason, or the error kind.
    pub stop: Option<String>,
    /// An HTTP status ≥ 400, an API error, or an exchange that did not complete.
    pub error: bool,
    /// What could not be read of it (a body that is not JSON, a stream problem).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// A live exchange whose reply is still streaming.
    pub streaming: bool,
}

/// A line of the input that could not be read.
#[derive(Clone, Debug, Serialize)]
pub struct LineProblem {
    /// Line number, from 1 (0: not a line-based input).
    pub line: u64,
    /// Byte offset of the line.
    pub offset: u64,
    /// The file, for a directory input.
    pub file: Option<String>,
    /// Why it could not be read.
    pub message: String,
}

/// What the index keeps of a turn besides its row.
#[derive(Clone, Debug)]
pub struct TurnExtra {
    /// Where its bytes are.
    pub body: BodyRef,
    /// The previous turn of the same session and thread, if any.
    pub prev_in_thread: Option<usize>,
    /// `tool_use` ids of the response's calls.
    pub calls: Vec<String>,
    /// The file key `analyze` names it by.
    pub file_key: String,
}

/// The whole index of an input.
pub struct Model {
    /// The input as named.
    pub input: PathBuf,
    /// The trace file bodies are read from, for a plain trace file.
    pub file: Option<PathBuf>,
    /// One row per exchange, in order.
    pub turns: Vec<TurnRow>,
    /// One per row.
    pub extra: Vec<TurnExtra>,
    /// Lines that could not be read.
    pub problems: Vec<LineProblem>,
    /// `analyze` over the input (`None` until computed).
    pub analysis: Option<Analysis>,
    canon: Canonicalizer,
    last_in_thread: HashMap<(String, String), usize>,
    call_turn: HashMap<String, usize>,
}

impl Model {
    /// An empty index of `input` (a live recording starts from one).
    pub fn new(input: &Path) -> Model {
        Model {
            input: input.to_path_buf(),
            file: None,
            turns: Vec::new(),
            extra: Vec::new(),
            problems: Vec::new(),
            analysis: None,
            canon: Canonicalizer::new(),
            last_in_thread: HashMap::new(),
            call_turn: HashMap::new(),
        }
    }

    /// The next exchanges come from another recording context (a header line).
    pub fn new_context(&mut self) {
        self.canon.new_context();
    }

    /// Record a line that could not be read.
    pub fn bad_line(&mut self, p: &ReadProblem) {
        self.problems.push(LineProblem {
            line: p.line,
            offset: p.offset,
            file: p.file.as_ref().map(|f| f.display().to_string()),
            message: p.message.clone(),
        });
    }

    /// Add an exchange; returns its turn number.
    pub fn push(
        &mut self,
        x: &Exchange,
        body: BodyRef,
        file_key: &str,
        line: Option<u64>,
    ) -> usize {
        self.push_read(x, ReadRow::read(x), body, file_key, line)
    }

    /// [`Model::push`] of an exchange whose request and response were read already
    /// ([`ReadRow`]: by the batched parse of [`super::scan`]).
    pub fn push_read(
        &mut self,
        x: &Exchange,
        read: ReadRow,
        body: BodyRef,
        file_key: &str,
        line: Option<u64>,
    ) -> usize {
        let n = self.turns.len();
        let (mut row, facts) = row_of(x, read, &mut self.canon);
        row.n = n;
        row.line = line;
        if file_key != self.input.display().to_string() {
            row.file = Some(file_key.to_string());
        }
        let key = (row.session.clone(), row.thread.clone());
        let prev_in_thread = self.last_in_thread.insert(key, n);
        let calls = facts.calls;
        for (id, name) in &calls {
            self.call_turn.insert(id.clone(), n);
            row.tools.push(name.clone());
        }
        self.turns.push(row);
        self.extra.push(TurnExtra {
            body,
            prev_in_thread,
            calls: calls.into_iter().map(|c| c.0).collect(),
            file_key: file_key.to_string(),
        });
        n
    }

    /// Replace the row of turn `n` by a newer state of its exchange (a live reply that
    /// streamed on), keeping its place.
    pub fn update(&mut self, n: usize, x: &Exchange, body: BodyRef) {
        let Some(old) = self.turns.get(n) else {
            return;
        };
        let facts = ResponseFacts::read(x);
        let mut row = row_of_placed(
            x,
            old.session.clone(),
            old.thread.clone(),
            old.model.clone(),
            &facts,
        );
        row.n = n;
        row.file = old.file.clone();
        row.line = old.line;
        row.messages = old.messages;
        for (id, name) in facts.calls {
            self.call_turn.insert(id.clone(), n);
            row.tools.push(name);
            self.extra[n].calls.push(id);
        }
        self.turns[n] = row;
        self.extra[n].body = body;
    }

    /// The turn whose response made the `tool_use` call `id`.
    pub fn turn_of_call(&self, id: &str) -> Option<usize> {
        self.call_turn.get(id).copied()
    }
}

/// The row of the next exchange, placed by `canon`, with its response's facts.
fn row_of(x: &Exchange, read: ReadRow, canon: &mut Canonicalizer) -> (TurnRow, ResponseFacts) {
    let view = canon.place(x, read.parsed);
    let session = canon.session(view.place.session).label.clone();
    let model = view.request.as_ref().and_then(|c| c.req.model.clone());
    let messages = view.request.as_ref().map_or(0, |c| c.req.messages.len());
    let mut row = row_of_placed(x, session, view.place.thread_label, model, &read.response);
    row.messages = messages;
    if let Some(e) = view.error.map(|e| e.to_string()).or(read.error) {
        row.problem = Some(format!("request body: {e}"));
    }
    (row, read.response)
}

/// The row of an exchange already placed in `session` / `thread`, from its response's
/// facts `f`.
fn row_of_placed(
    x: &Exchange,
    session: String,
    thread: String,
    model: Option<String>,
    f: &ResponseFacts,
) -> TurnRow {
    let ms = |t: chrono::DateTime<chrono::Utc>| {
        (t - x.started_at)
            .num_microseconds()
            .map(|u| u as f64 / 1000.0)
    };
    let resp = x.response.as_ref();
    let mut row = TurnRow {
        id: x.id,
        time: x
            .started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        session,
        thread,
        method: x.request.method.clone(),
        path: x.path().to_string(),
        model,
        status: resp.and_then(|r| r.known_status()),
        latency_ms: x.ended_at.and_then(ms),
        ttft_ms: resp.and_then(|r| r.first_byte_at).and_then(ms),
        error: x.error.is_some() || resp.is_some_and(|r| r.status >= 400) || f.api_error,
        input_tokens: f.input_tokens,
        cached_tokens: f.cached_tokens,
        cache_write_tokens: f.cache_write_tokens,
        output_tokens: f.output_tokens,
        stop: f.stop.clone(),
        problem: f.problem.clone(),
        ..TurnRow::default()
    };
    if let Some(e) = &x.error {
        row.stop = Some(e.kind.clone());
    }
    row
}
