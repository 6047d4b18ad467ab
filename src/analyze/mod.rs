//! `agentwire analyze`: redundant polling, prompt-cache misses and background-job
//! lifecycles across whole traces.
//!
//! Pipeline: [`input`] reduces each Messages exchange (session and thread from the api
//! layer's canonical view, the cached prefix, tool calls, results, notifications) and
//! drops the body; [`cache`] simulates the prompt cache request by request; at the end [`jobs`] finds background jobs, [`polling`] groups polls
//! into episodes, and [`result`] prices everything into the report rows ([`Analysis`]).
//! [`cause`], [`events`] and [`summary`] hold the verdict, event and total types.
//! [`gate`] evaluates `--fail-on` expressions. Memory is bounded by the reduced form, not
//! by body sizes.

pub mod cache;
pub mod cause;
pub mod events;
pub mod gate;
pub mod input;
pub mod jobs;
pub mod mcp;
pub mod polling;
pub mod result;
pub mod summary;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::input::{open_input, InputError};
use crate::trace::{Exchange, McpRecord, Record, TraceError};

pub use crate::api::prices::{ModelPrice, PriceTable, Tokens};
pub use cache::TtlMode;
pub use cause::{BilledAs, CachePrediction, MissCause};
pub use gate::FailOn;
pub use result::{Analysis, EpisodeRow, JobRow, RequestRow, Summary, ThreadRow};

/// Errors of the analyze module.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An input could not be opened or read, or is not a format agentwire reads.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The price file could not be used.
    #[error(transparent)]
    Prices(#[from] crate::api::ApiError),
    /// A `--fail-on` expression could not be parsed.
    #[error("bad --fail-on expression {expr:?}: {message} (example: `redundant-polls>5`, `cache-miss-cost>$0.50`; metrics: {metrics})")]
    FailOn {
        /// The expression.
        expr: String,
        /// What is wrong.
        message: String,
        /// Known metric names.
        metrics: String,
    },
}

/// Which usage figures to trust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageMode {
    /// The response's `usage` (falls back to simulated where a response has none).
    Recorded,
    /// agentwire's simulation and token estimates.
    Simulated,
    /// Simulated for responses agentwire synthesized (see [`input::synthesized`]),
    /// recorded where responses carry cache fields, simulated elsewhere.
    Auto,
}

/// Analysis settings (the CLI converts its flags into this).
#[derive(Clone, Debug)]
pub struct AnalyzeConfig {
    /// TTL choice.
    pub ttl: TtlMode,
    /// Usage figures to trust.
    pub usage: UsageMode,
    /// Prices and minimum cacheable lengths.
    pub prices: PriceTable,
}

impl Default for AnalyzeConfig {
    fn default() -> Self {
        AnalyzeConfig {
            ttl: TtlMode::Auto,
            usage: UsageMode::Auto,
            prices: PriceTable::builtin(),
        }
    }
}

/// Facts about one input trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InputInfo {
    /// Path (or a name for in-memory input).
    pub path: String,
    /// Exchanges read.
    pub exchanges: usize,
    /// Messages requests analysed.
    pub messages_requests: usize,
    /// Exchanges of other endpoints (count_tokens, models, ...), not analysed (files of a
    /// directory that were not read are in [`Analysis::skipped_files`]).
    pub skipped: usize,
    /// Messages requests whose body is not a JSON object: `exchange N: reason`.
    pub bad_bodies: Vec<String>,
    /// Unreadable lines of the trace file.
    pub bad_lines: usize,
    /// What the first [`LISTED_BAD_LINES`] unreadable lines were (line, byte offset, why),
    /// for the warning; not part of the JSON report.
    #[serde(skip)]
    pub bad_line_notes: Vec<String>,
    /// Responses whose request was not captured (a packet capture that began
    /// mid-conversation) that carry usage: not analysed as requests, but counted in the
    /// summary's token and cost totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responses_without_request: Option<Unattributed>,
}

/// A file under a directory input that was not read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SkippedFile {
    /// The directory input it is under, as named.
    pub input: String,
    /// Its path (`dir/sub/notes.txt`).
    pub path: String,
    /// Why: what it looks like and what agentwire reads.
    pub reason: String,
}

/// Usage of responses whose request was not captured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Unattributed {
    /// Responses.
    pub responses: usize,
    /// Their recorded token figures.
    pub tokens: Tokens,
    /// Their cost at the model's prices, USD.
    pub cost_usd: f64,
}

/// The streaming analyzer: [`Analyzer::begin_trace`], then [`Analyzer::push`] every
/// exchange in order, then [`Analyzer::finish`].
pub struct Analyzer {
    cfg: AnalyzeConfig,
    sim: cache::CacheSim,
    stage: input::InputStage,
    inputs: Vec<InputInfo>,
    skipped_files: Vec<SkippedFile>,
    requests: Vec<(input::Request, CachePrediction)>,
    calls: Vec<input::ToolCall>,
    /// `(session, tool_use id)` → index in `calls`.
    call_index: HashMap<(usize, String), usize>,
    orphan_results: Vec<(usize, String, input::ToolResult)>,
    notes: Vec<input::Notification>,
    claims: Vec<(usize, usize)>,
    /// MCP records with the index of the input they came from.
    mcp: Vec<(usize, McpRecord)>,
}

impl Analyzer {
    /// A fresh analyzer.
    pub fn new(cfg: AnalyzeConfig) -> Self {
        Analyzer {
            sim: cache::CacheSim::new(cfg.ttl),
            cfg,
            stage: input::InputStage::new(),
            inputs: Vec::new(),
            skipped_files: Vec::new(),
            requests: Vec::new(),
            calls: Vec::new(),
            call_index: HashMap::new(),
            orphan_results: Vec::new(),
            notes: Vec::new(),
            claims: Vec::new(),
            mcp: Vec::new(),
        }
    }

    /// Results whose call came later in the trace (reordered capture): pair them now.
    fn pair_orphans(&mut self) {
        for (session, id, r) in std::mem::take(&mut self.orphan_results) {
            if let Some(&i) = self.call_index.get(&(session, id)) {
                self.calls[i].result.get_or_insert(r);
            }
        }
    }

    /// Start the next trace file (a new recording context: sessions without client ids do
    /// not continue into it; the cache does). A directory input is one trace per file.
    pub fn begin_trace(&mut self, name: &str) {
        self.pair_orphans();
        self.inputs.push(InputInfo {
            path: name.to_string(),
            ..InputInfo::default()
        });
        self.stage.begin_trace(self.inputs.len() - 1);
    }

    /// A header line of the current trace: a new recording context (sessions without
    /// client ids do not continue into it), which names the CLI version.
    pub fn context(&mut self, c: &crate::trace::Context) {
        self.stage.new_context();
        self.stage.set_cli_version(c.cli_version.clone());
    }

    /// Files of a directory input that were not read, with why (see
    /// [`crate::input::TraceInput::skipped`]).
    pub fn skipped_files(&mut self, input: &str, files: &[(std::path::PathBuf, String)]) {
        self.skipped_files
            .extend(files.iter().map(|(p, why)| SkippedFile {
                input: input.to_string(),
                path: p.display().to_string(),
                reason: why.clone(),
            }));
    }

    /// Count an unreadable line of the current trace (the first few are described in
    /// [`InputInfo::bad_line_notes`]).
    pub fn bad_line(&mut self, problem: &crate::trace::ReadProblem) {
        if let Some(i) = self.inputs.last_mut() {
            i.bad_lines += 1;
            if i.bad_line_notes.len() < LISTED_BAD_LINES {
                i.bad_line_notes.push(problem.located(&i.path));
            }
        }
    }

    /// Take one MCP record of the current trace (any order; [`mcp`] sorts by time).
    pub fn push_mcp(&mut self, r: McpRecord) {
        if self.inputs.is_empty() {
            self.begin_trace("(input)");
        }
        self.mcp.push((self.inputs.len() - 1, r));
    }

    /// Analyse one exchange (in arrival order).
    pub fn push(&mut self, x: &Exchange) {
        self.push_prepared(x, None);
    }

    /// Analyse one exchange (in arrival order) whose stateless part [`input::prepare`]
    /// already read, possibly on another thread (`None`: read it now). The result is the
    /// same either way.
    pub fn push_prepared(&mut self, x: &Exchange, prepared: Option<input::Prepared>) {
        if self.inputs.is_empty() {
            self.begin_trace("(input)");
        }
        let seq = self.requests.len();
        let info = self.inputs.last_mut().expect("begun");
        info.exchanges += 1;
        if !x.request.captured() {
            match input::recorded_tokens(x) {
                Some((model, tokens)) => {
                    let u = info
                        .responses_without_request
                        .get_or_insert_with(Default::default);
                    u.responses += 1;
                    u.tokens.add(&tokens);
                    u.cost_usd += self
                        .cfg
                        .prices
                        .lookup(&model)
                        .map_or(0.0, |p| p.cost(&tokens));
                }
                None => info.skipped += 1,
            }
            return;
        }
        let extracted = match prepared {
            Some(p) => self.stage.extract_prepared(x, p, seq),
            None => self.stage.extract(x, seq),
        };
        let ex = match extracted {
            Ok(Some(ex)) => ex,
            Ok(None) => {
                info.skipped += 1;
                return;
            }
            Err(e) => {
                info.bad_bodies
                    .push(format!("{e}; the request was skipped"));
                return;
            }
        };
        for p in &ex.stream_problems {
            info.bad_bodies.push(format!("exchange #{}: {p}", x.id));
        }
        info.messages_requests += 1;
        let min = self.cfg.prices.min_cacheable(&ex.request.model);
        let pred = self.sim.observe(&ex.request, min);
        let session = ex.request.session;
        for c in ex.calls {
            self.call_index
                .insert((session, c.id.clone()), self.calls.len());
            self.calls.push(c);
        }
        for (id, r) in ex.results {
            match self.call_index.get(&(session, id.clone())) {
                Some(&i) => self.calls[i].result = Some(r),
                None => self.orphan_results.push((session, id, r)),
            }
        }
        self.notes.extend(ex.notifications);
        if ex.claims_done {
            self.claims.push((ex.request.thread, seq));
        }
        let mut req = ex.request;
        // The prefix is no longer needed: keep memory bounded.
        req.prefix = Default::default();
        self.requests.push((req, pred));
    }

    /// Finish: find jobs and episodes, price everything, build the report.
    pub fn finish(mut self) -> Analysis {
        self.pair_orphans();
        let canon = self.stage.canon();
        let sessions: Vec<crate::api::session::SessionInfo> =
            canon.sessions().infos().cloned().collect();
        let multi = sessions.len() > 1;
        let labels: Vec<String> = self
            .stage
            .threads
            .iter()
            .map(|(s, l)| {
                if multi {
                    format!("{}/{l}", sessions[*s].label)
                } else {
                    l.clone()
                }
            })
            .collect();
        let session_of: Vec<usize> = self.stage.threads.iter().map(|(s, _)| *s).collect();
        let mut jobs =
            jobs::find_jobs(&self.calls, &self.notes, &self.claims, &labels, &session_of);
        let episodes = polling::find_episodes(&self.calls, &self.notes, &mut jobs, &labels);
        // The input (trace) each thread was seen in, to link model calls with MCP records.
        let mut trace_of = vec![0usize; labels.len()];
        for (r, _) in &self.requests {
            if let Some(t) = trace_of.get_mut(r.thread) {
                *t = r.trace;
            }
        }
        let model_mcp: Vec<(usize, &input::ToolCall)> = self
            .calls
            .iter()
            .filter(|c| c.name.starts_with("mcp__"))
            .map(|c| (trace_of.get(c.thread).copied().unwrap_or(0), c))
            .collect();
        let mcp = mcp::analyze(&self.mcp, &model_mcp, &self.notes, &labels);
        let mut analysis = result::build(result::Parts {
            cfg: &self.cfg,
            inputs: self.inputs,
            skipped_files: self.skipped_files,
            sessions,
            labels,
            session_of,
            requests: self.requests,
            calls: &self.calls,
            episodes,
            jobs,
        });
        analysis.mcp = mcp;
        analysis
    }
}

/// Unreadable lines of an input described one by one; the rest are counted.
pub const LISTED_BAD_LINES: usize = 3;

/// Records read ahead and prepared at once: at most this many…
const BATCH_RECORDS: usize = 512;
/// …or this many body bytes.
const BATCH_BYTES: usize = 8 << 20;

/// Analyse trace files, streaming each one. Records are read in batches whose stateless
/// part ([`input::prepare`]: body parsing, cache keys, responses) runs on every core; the
/// ordered part (sessions, threads, the cache simulation) then takes them in file order,
/// so the result is the same as one exchange at a time. A directory input is analysed
/// file by file, exactly as naming its files one by one: one [`InputInfo`] per file, each
/// its own recording context; the files it skipped are listed in
/// [`Analysis::skipped_files`].
///
/// Errors: a file that cannot be opened or read (unreadable lines are counted in
/// [`InputInfo::bad_lines`], not errors).
pub fn analyze_files(paths: &[&Path], cfg: AnalyzeConfig) -> Result<Analysis, AnalyzeError> {
    analyze_files_observed(paths, cfg, &mut |_, _| {})
}

/// [`analyze_files`], showing `observe` each record (with its input's index in `paths`)
/// before the analysis takes it: what a caller needs besides the analysis (a report's
/// description of each input) without reading the inputs twice or holding them.
///
/// Errors: as [`analyze_files`].
pub fn analyze_files_observed(
    paths: &[&Path],
    cfg: AnalyzeConfig,
    observe: &mut dyn FnMut(usize, &Record),
) -> Result<Analysis, AnalyzeError> {
    use rayon::prelude::*;
    let mut a = Analyzer::new(cfg);
    for (i, p) in paths.iter().enumerate() {
        let mut records = open_input(p, &Default::default())?;
        // The file the analyzer's current trace is; each file of a directory starts with a
        // header record, where the next file begins.
        let mut file: Option<PathBuf> = None;
        // Records with the file they begin, when they begin one.
        let mut batch: Vec<(Record, Option<PathBuf>)> = Vec::with_capacity(BATCH_RECORDS);
        loop {
            let mut bytes = 0;
            let mut failed = None;
            while batch.len() < BATCH_RECORDS && bytes < BATCH_BYTES {
                match records.next() {
                    Some(Ok(r)) => {
                        if let Record::Exchange(x) = &r {
                            bytes += x.request.body.len()
                                + x.response.as_ref().map_or(0, |r| r.body.len());
                        }
                        let next = matches!(r, Record::Header { .. }) || file.is_none();
                        let begins = (next && file.as_deref() != Some(records.file()))
                            .then(|| records.file().to_path_buf());
                        if let Some(f) = &begins {
                            file = Some(f.clone());
                        }
                        batch.push((r, begins));
                    }
                    Some(Err(e)) => {
                        failed = Some(e);
                        break;
                    }
                    None => break,
                }
            }
            if batch.is_empty() && failed.is_none() {
                break;
            }
            let prepared: Vec<Option<input::Prepared>> = batch
                .par_iter()
                .map(|(r, _)| match r {
                    Record::Exchange(x) => Some(input::prepare(x.as_ref())),
                    _ => None,
                })
                .collect();
            for ((rec, begins), prep) in batch.drain(..).zip(prepared) {
                if let Some(f) = begins {
                    a.begin_trace(&f.display().to_string());
                }
                observe(i, &rec);
                match rec {
                    Record::Exchange(x) => a.push_prepared(&x, prep),
                    Record::Mcp(m) => a.push_mcp(*m),
                    Record::Bad(p) => a.bad_line(&p),
                    Record::Header { context, .. } => a.context(&context),
                    Record::Other(_) => {}
                }
            }
            if let Some(e) = failed {
                return Err(e.into());
            }
        }
        if file.is_none() {
            // an input without records is listed still
            a.begin_trace(&p.display().to_string());
        }
        a.skipped_files(&p.display().to_string(), records.skipped());
    }
    Ok(a.finish())
}

/// Analyse a trace already in memory: its exchanges and its MCP records.
pub fn analyze_trace(trace: &crate::trace::Trace, cfg: AnalyzeConfig) -> Analysis {
    let mut a = Analyzer::new(cfg);
    a.begin_trace(&trace.path.display().to_string());
    a.context(&trace.context);
    for x in &trace.exchanges {
        a.push(x);
    }
    for m in &trace.mcp {
        a.push_mcp(m.clone());
    }
    a.finish()
}

/// Analyse exchanges already in memory (one trace).
pub fn analyze_exchanges(exchanges: &[Exchange], cfg: AnalyzeConfig) -> Analysis {
    let mut a = Analyzer::new(cfg);
    a.begin_trace("(memory)");
    for x in exchanges {
        a.push(x);
    }
    a.finish()
}
