//! The viewer's index: one small row per exchange (the turn list's fields and where its
//! bytes are), built once in a single pass over the input, bodies dropped as it goes. A
//! plain agentwire trace file is indexed by byte offset ([`BodyRef::At`]) and bodies are
//! read back from the file on demand ([`super::detail`]); other inputs (a directory, a
//! compressed trace, a packet capture, an import) and live exchanges keep the exchange in
//! memory ([`BodyRef::Held`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::analyze::{Analysis, AnalyzeConfig, Analyzer};
use crate::api::view::Canonicalizer;
use crate::input::{open_input, InputOptions};
use crate::trace::{Exchange, ReadProblem, Record};

use super::row::{row_of, row_of_placed, ReadRow, ResponseFacts};
use super::ViewerError;

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
    /// ([`ReadRow`]: by the batched parse).
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

    /// Put `analyze`'s answers on the turns they concern: cost, cache status, the miss
    /// cause, poll and job badges.
    pub fn apply(&mut self, a: Analysis) {
        super::badges::apply(self, &a);
        self.analysis = Some(a);
    }

    /// The turn whose response made the `tool_use` call `id`.
    pub fn turn_of_call(&self, id: &str) -> Option<usize> {
        self.call_turn.get(id).copied()
    }
}

/// Index an input in one pass, with `analyze` over it (fed in the same pass).
///
/// Errors: the input cannot be opened, is not a format agentwire reads, or a read fails
/// (unreadable lines are not errors: they are [`Model::problems`]).
pub fn open(path: &Path, cfg: AnalyzeConfig) -> Result<Model, ViewerError> {
    let mut model = Model::new(path);
    let mut a = Analyzer::new(cfg);
    if is_plain_trace(path)? {
        super::scan::index_file(path, &mut model, &mut a)?;
    } else {
        index_input(path, &mut model, &mut a)?;
    }
    model.apply(a.finish());
    Ok(model)
}

/// True when `path` is a regular, uncompressed agentwire trace file (bodies can be read
/// back from it by offset).
fn is_plain_trace(path: &Path) -> Result<bool, ViewerError> {
    if !path.is_file() {
        return Ok(false);
    }
    let input = open_input(path, &InputOptions::default())?;
    if input.format != Some(crate::import::Format::Trace) {
        return Ok(false);
    }
    let mut head = [0u8; 2];
    let n = std::io::Read::read(
        &mut std::fs::File::open(path).map_err(|e| ViewerError::Open {
            path: path.display().to_string(),
            source: e,
        })?,
        &mut head,
    )
    .unwrap_or(0);
    Ok(!(n == 2 && head == [0x1f, 0x8b]))
}

/// Index any other input, keeping its exchanges in memory.
fn index_input(path: &Path, model: &mut Model, a: &mut Analyzer) -> Result<(), ViewerError> {
    let mut input = open_input(path, &InputOptions::default())?;
    let mut file: Option<PathBuf> = None;
    while let Some(rec) = input.next() {
        let rec = rec?;
        if file.as_deref() != Some(input.file()) {
            file = Some(input.file().to_path_buf());
            a.begin_trace(&input.file().display().to_string());
        }
        let key = input.file().display().to_string();
        match rec {
            Record::Exchange(x) => {
                a.push(&x);
                let x: Arc<Exchange> = Arc::from(x);
                model.push(&x, BodyRef::Held(x.clone()), &key, None);
            }
            Record::Header { context, .. } => {
                model.new_context();
                a.context(&context);
            }
            Record::Bad(p) => {
                model.bad_line(&p);
                a.bad_line(&p);
            }
            Record::Mcp(m) => a.push_mcp(*m),
            Record::Other(_) => {}
        }
    }
    Ok(())
}
