//! `agentwire analyze`: redundant polling, prompt-cache misses and background-job
//! lifecycles across whole traces.
//!
//! Pipeline: [`input`] reduces each Messages exchange (thread, hashed prompt prefix, tool
//! calls, results, notifications) and drops the body; [`cache`] simulates the prompt cache
//! request by request; at the end [`jobs`] finds background jobs, [`polling`] groups polls
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
pub mod polling;
pub mod prices;
pub mod result;
pub mod summary;

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::trace::{Exchange, Record, TraceError, TraceReader};

pub use cache::TtlMode;
pub use cause::{BilledAs, CachePrediction, MissCause};
pub use gate::FailOn;
pub use prices::{ModelPrice, PriceTable, Tokens};
pub use result::{Analysis, EpisodeRow, JobRow, RequestRow, Summary, ThreadRow};

/// Errors of the analyze module.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The price file could not be used.
    #[error("cannot use price file {path}: {message}")]
    Prices {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
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
    /// Simulated for exchanges agentwire's fake server answered, recorded where responses
    /// carry cache fields, simulated elsewhere.
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
    /// Exchanges of other endpoints (count_tokens, models, ...), not analysed.
    pub skipped: usize,
    /// Messages requests whose body is not a JSON object: `exchange N: reason`.
    pub bad_bodies: Vec<String>,
    /// Unreadable lines of the trace file.
    pub bad_lines: usize,
    /// Responses whose request was not captured (a packet capture that began
    /// mid-conversation) that carry usage: not analysed as requests, but counted in the
    /// summary's token and cost totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responses_without_request: Option<Unattributed>,
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
    stage: Option<input::InputStage>,
    labels: Vec<(usize, String)>,
    inputs: Vec<InputInfo>,
    requests: Vec<(input::Request, CachePrediction)>,
    calls: Vec<input::ToolCall>,
    call_index: HashMap<String, usize>,
    orphan_results: Vec<(String, input::ToolResult)>,
    notes: Vec<input::Notification>,
    claims: Vec<(usize, usize)>,
    min_cache: HashMap<String, u64>,
}

impl Analyzer {
    /// A fresh analyzer.
    pub fn new(cfg: AnalyzeConfig) -> Self {
        Analyzer {
            sim: cache::CacheSim::new(cfg.ttl),
            cfg,
            stage: None,
            labels: Vec::new(),
            inputs: Vec::new(),
            requests: Vec::new(),
            calls: Vec::new(),
            call_index: HashMap::new(),
            orphan_results: Vec::new(),
            notes: Vec::new(),
            claims: Vec::new(),
            min_cache: HashMap::new(),
        }
    }

    fn end_trace(&mut self) {
        if let Some(s) = self.stage.take() {
            let t = self.inputs.len() - 1;
            self.labels.extend(s.labels.into_iter().map(|l| (t, l)));
        }
        // Tool-use ids repeat across traces (scripted sessions): a trace's results only
        // ever belong to that trace's calls.
        for (id, r) in std::mem::take(&mut self.orphan_results) {
            if let Some(&i) = self.call_index.get(&id) {
                self.calls[i].result.get_or_insert(r);
            }
        }
        self.call_index.clear();
    }

    /// Start the next trace (threads never continue across traces; the cache does).
    pub fn begin_trace(&mut self, name: &str) {
        self.end_trace();
        self.inputs.push(InputInfo {
            path: name.to_string(),
            ..InputInfo::default()
        });
        self.stage = Some(input::InputStage::new(
            self.inputs.len() - 1,
            self.labels.len(),
        ));
    }

    /// Count an unreadable line of the current trace.
    pub fn bad_line(&mut self) {
        if let Some(i) = self.inputs.last_mut() {
            i.bad_lines += 1;
        }
    }

    /// Analyse one exchange (in arrival order).
    pub fn push(&mut self, x: &Exchange) {
        if self.stage.is_none() {
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
                    u.cost_usd += self.cfg.prices.lookup(&model).cost(&tokens);
                }
                None => info.skipped += 1,
            }
            return;
        }
        let stage = self.stage.as_mut().expect("begun");
        let ex = match stage.extract(x, seq) {
            Ok(Some(ex)) => ex,
            Ok(None) => {
                info.skipped += 1;
                return;
            }
            Err(e) => {
                info.bad_bodies.push(e);
                return;
            }
        };
        info.messages_requests += 1;
        let prices = &self.cfg.prices;
        let min = *self
            .min_cache
            .entry(ex.request.model.clone())
            .or_insert_with(|| prices.lookup(&ex.request.model).min_cacheable);
        let pred = self.sim.observe(&ex.request, min);
        for c in ex.calls {
            self.call_index.insert(c.id.clone(), self.calls.len());
            self.calls.push(c);
        }
        for (id, r) in ex.results {
            match self.call_index.get(&id) {
                Some(&i) => self.calls[i].result = Some(r),
                None => self.orphan_results.push((id, r)),
            }
        }
        self.notes.extend(ex.notifications);
        if ex.claims_done {
            self.claims.push((ex.request.thread, seq));
        }
        let mut req = ex.request;
        // The prefix is no longer needed: keep memory bounded.
        req.blocks = Vec::new();
        req.system = Vec::new();
        req.tools = Vec::new();
        self.requests.push((req, pred));
    }

    /// Finish: find jobs and episodes, price everything, build the report.
    pub fn finish(mut self) -> Analysis {
        self.end_trace();
        let multi = self.inputs.len() > 1;
        let labels: Vec<String> = self
            .labels
            .iter()
            .map(|(t, l)| {
                if multi {
                    format!("t{}/{l}", t + 1)
                } else {
                    l.clone()
                }
            })
            .collect();
        let trace_of: Vec<usize> = self.labels.iter().map(|(t, _)| *t).collect();
        let mut jobs = jobs::find_jobs(&self.calls, &self.notes, &self.claims, &labels, &trace_of);
        let episodes = polling::find_episodes(&self.calls, &self.notes, &mut jobs, &labels);
        result::build(result::Parts {
            cfg: &self.cfg,
            inputs: self.inputs,
            labels,
            requests: self.requests,
            calls: &self.calls,
            episodes,
            jobs,
        })
    }
}

/// Analyse trace files, streaming each one.
///
/// Errors: a file that cannot be opened or read (unreadable lines are counted in
/// [`InputInfo::bad_lines`], not errors).
pub fn analyze_files(paths: &[&Path], cfg: AnalyzeConfig) -> Result<Analysis, AnalyzeError> {
    let mut a = Analyzer::new(cfg);
    for p in paths {
        a.begin_trace(&p.display().to_string());
        for rec in TraceReader::open(p)? {
            match rec? {
                Record::Exchange(x) => a.push(&x),
                Record::Bad(_) => a.bad_line(),
                Record::Header { .. } | Record::Other(_) => {}
            }
        }
    }
    Ok(a.finish())
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
