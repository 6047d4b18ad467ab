//! The streaming analyzer ([`Analyzer`]) and the entry points over files and memory.
//! Each exchange is reduced by the request model ([`super::requests`]) and simulated by
//! the cache detector as it arrives; at the end the job and poll detectors run over the
//! reduced calls and [`Analysis::build`] prices everything. Memory is bounded by the
//! reduced form, not by body sizes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::cache::CacheSim;
use super::cause::CachePrediction;
use super::config::AnalyzeConfig;
use super::events::{Notification, ToolCall, ToolResult};
use super::requests::{self, Extracted, InputStage, Prepared, Request};
use super::result::{Analysis, BuildInput, InputInfo, SkippedFile, LISTED_BAD_LINES};
use super::{jobs, mcp, polling, AnalyzeError};
use crate::api::view::{exchange_response, Parsed};
use crate::api::ResponseBody;
use crate::input::{open_input, InputError, TraceInput};
use crate::trace::{Exchange, McpRecord, Record};

/// The streaming analyzer: [`Analyzer::begin_trace`], then [`Analyzer::push`] every
/// exchange in order, then [`Analyzer::finish`].
pub struct Analyzer {
    cfg: AnalyzeConfig,
    sim: CacheSim,
    stage: InputStage,
    inputs: Vec<InputInfo>,
    skipped_files: Vec<SkippedFile>,
    requests: Vec<(Request, CachePrediction)>,
    calls: Vec<ToolCall>,
    /// `(session, tool_use id)` → index in `calls`.
    call_index: HashMap<(usize, String), usize>,
    orphan_results: Vec<(usize, String, ToolResult)>,
    notes: Vec<Notification>,
    claims: Vec<(usize, usize)>,
    /// MCP records with the index of the input they came from.
    mcp: Vec<(usize, McpRecord)>,
    /// The MCP servers a recording context named (opencode's `NAME_TOOL` tools), by the
    /// index of the input whose header named them.
    mcp_servers: HashMap<usize, Vec<String>>,
    /// Chat Completions requests by host whose provider's cache rules are not known.
    unknown_cache_hosts: std::collections::BTreeMap<String, usize>,
}

impl Analyzer {
    /// A fresh analyzer.
    pub fn new(cfg: AnalyzeConfig) -> Self {
        Analyzer {
            sim: CacheSim::new(cfg.ttl),
            cfg,
            stage: InputStage::new(),
            inputs: Vec::new(),
            skipped_files: Vec::new(),
            requests: Vec::new(),
            calls: Vec::new(),
            call_index: HashMap::new(),
            orphan_results: Vec::new(),
            notes: Vec::new(),
            mcp_servers: HashMap::new(),
            unknown_cache_hosts: Default::default(),
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
        self.stage.set_cli(c.cli.clone());
        if !c.mcp_servers.is_empty() {
            let input = self.inputs.len().saturating_sub(1);
            self.mcp_servers.insert(input, c.mcp_servers.clone());
        }
    }

    /// Files of a directory input that were not read, with why (see
    /// [`crate::input::TraceInput::skipped`]).
    pub fn skipped_files(&mut self, input: &str, files: &[(PathBuf, String)]) {
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

    /// Analyse one exchange (in arrival order) whose stateless part [`requests::prepare`]
    /// already read, possibly on another thread (`None`: read it now). The result is the
    /// same either way.
    pub fn push_prepared(&mut self, x: &Exchange, prepared: Option<Prepared>) {
        if self.inputs.is_empty() {
            self.begin_trace("(input)");
        }
        let seq = self.requests.len();
        if let Some(host) = crate::api::chat::unknown_provider_host(x) {
            *self.unknown_cache_hosts.entry(host).or_default() += 1;
        }
        if !x.request.captured() {
            self.count_unrequested(x);
            return;
        }
        let extracted = match prepared {
            Some(p) => self.stage.extract_prepared(x, p, seq),
            None => self.stage.extract(x, seq),
        };
        let info = self.inputs.last_mut().expect("begun");
        info.exchanges += 1;
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
        self.take(ex, seq);
    }

    /// A response whose request was not captured: its usage counts in the totals of the
    /// current input, else it is skipped.
    fn count_unrequested(&mut self, x: &Exchange) {
        let info = self.inputs.last_mut().expect("begun");
        info.exchanges += 1;
        let Some((model, tokens)) = requests::recorded_tokens(x) else {
            info.skipped += 1;
            return;
        };
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

    /// Simulate the cache for an extracted request and keep what the detectors need: its
    /// tool calls (paired with their results), notifications and claims.
    fn take(&mut self, ex: Extracted, seq: usize) {
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

    /// Thread labels by global thread number (`sN/label` when there are several
    /// sessions), and the session of each thread.
    fn thread_labels(
        &self,
        sessions: &[crate::api::session::SessionInfo],
    ) -> (Vec<String>, Vec<usize>) {
        let multi = sessions.len() > 1;
        let labels = self
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
        let session_of = self.stage.threads.iter().map(|(s, _)| *s).collect();
        (labels, session_of)
    }

    /// The model's MCP tool calls with the input (trace) their thread was seen in, to link
    /// them with the MCP records.
    /// A call of an MCP tool named `SERVER_TOOL` (opencode) where the input's context named
    /// `SERVER` is given its Claude Code name (`mcp__SERVER__TOOL`), the one the MCP records
    /// are linked by; a name is never read as MCP from an underscore alone.
    fn model_mcp_calls(&self, threads: usize) -> Vec<(usize, ToolCall)> {
        let mut trace_of = vec![0usize; threads];
        for (r, _) in &self.requests {
            if let Some(t) = trace_of.get_mut(r.thread) {
                *t = r.trace;
            }
        }
        let none = Vec::new();
        self.calls
            .iter()
            .filter_map(|c| {
                let trace = trace_of.get(c.thread).copied().unwrap_or(0);
                if c.name.starts_with("mcp__") {
                    return Some((trace, c.clone()));
                }
                let servers = self.mcp_servers.get(&trace).unwrap_or(&none);
                let (server, tool) = crate::capture::opencode::mcp_tool(&c.name, servers)?;
                let mut c = c.clone();
                c.name = super::mcp::tasks::model_tool_name(server, tool);
                Some((trace, c))
            })
            .collect()
    }

    /// Warnings about MCP records lost from each input (`lost` markers, unmarked gaps in
    /// `seq`: [`crate::trace::mcp::Continuity`]), each naming its input.
    fn mcp_loss(&self) -> Vec<String> {
        let mut per_input: std::collections::BTreeMap<usize, crate::trace::mcp::Continuity> =
            Default::default();
        for (input, r) in &self.mcp {
            per_input.entry(*input).or_default().see(r);
        }
        per_input
            .into_iter()
            .flat_map(|(i, c)| {
                let path = self
                    .inputs
                    .get(i)
                    .map_or("", |x| x.path.as_str())
                    .to_string();
                c.warnings()
                    .into_iter()
                    .map(move |w| format!("{path}: {w}"))
            })
            .collect()
    }

    /// Finish: find jobs and episodes, price everything, build the report.
    pub fn finish(mut self) -> Analysis {
        self.pair_orphans();
        let sessions: Vec<_> = self.stage.canon().sessions().infos().cloned().collect();
        let (labels, session_of) = self.thread_labels(&sessions);
        let mut jobs =
            jobs::find_jobs(&self.calls, &self.notes, &self.claims, &labels, &session_of);
        let episodes = polling::find_episodes(&self.calls, &self.notes, &mut jobs, &labels);
        let model_mcp = self.model_mcp_calls(labels.len());
        let model_mcp: Vec<(usize, &ToolCall)> = model_mcp.iter().map(|(t, c)| (*t, c)).collect();
        let mcp = mcp::analyze(&self.mcp, &model_mcp, &self.notes, &labels);
        let lost = self.mcp_loss();
        let unknown = std::mem::take(&mut self.unknown_cache_hosts);
        let mut analysis = Analysis::build(BuildInput {
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
            mcp,
        });
        analysis.warnings.extend(lost);
        analysis.warnings.extend(unknown.into_iter().map(|(host, n)| {
            format!(
                "unknown provider: cache rules not known for the {n} Chat Completions request(s) to {host:?}; their cache figures assume OpenAI's rules (only api.openai.com is known to follow them)"
            )
        }));
        analysis
    }
}

/// Records read ahead and prepared at once: at most this many…
const BATCH_RECORDS: usize = 512;
/// …or this many body bytes.
const BATCH_BYTES: usize = 8 << 20;

/// Analyse trace files, streaming each one. Records are read in batches whose stateless
/// part ([`requests::prepare`]: body parsing, cache keys, responses) runs on every core;
/// the ordered part (sessions, threads, the cache simulation) then takes them in file
/// order, so the result is the same as one exchange at a time. A directory input is
/// analysed file by file, exactly as naming its files one by one: one [`InputInfo`] per
/// file, each its own recording context; the files it skipped are listed in
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
    let mut a = Analyzer::new(cfg);
    for (i, p) in paths.iter().enumerate() {
        let mut records = open_input(p, &Default::default())?;
        // The file the analyzer's current trace is; each file of a directory starts with a
        // header record, where the next file begins.
        let mut file: Option<PathBuf> = None;
        // Records with the file they begin, when they begin one.
        let mut batch: Vec<(Record, Option<PathBuf>)> = Vec::with_capacity(BATCH_RECORDS);
        loop {
            let failed = read_batch(&mut records, &mut file, &mut batch);
            if batch.is_empty() && failed.is_none() {
                break;
            }
            feed_batch(&mut a, &mut batch, &mut |r| observe(i, r));
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

/// Fill `batch` with the next records of `records` (up to [`BATCH_RECORDS`] or
/// [`BATCH_BYTES`] of bodies), each with the file it begins when it begins one (`file`:
/// the file the last one was read from). Returns the read error that stopped it, if any.
fn read_batch(
    records: &mut TraceInput,
    file: &mut Option<PathBuf>,
    batch: &mut Vec<(Record, Option<PathBuf>)>,
) -> Option<InputError> {
    let mut bytes = 0;
    while batch.len() < BATCH_RECORDS && bytes < BATCH_BYTES {
        let r = match records.next()? {
            Ok(r) => r,
            Err(e) => return Some(e),
        };
        if let Record::Exchange(x) = &r {
            bytes += x.request.body.len() + x.response.as_ref().map_or(0, |r| r.body.len());
        }
        let next = matches!(r, Record::Header { .. }) || file.is_none();
        let begins =
            (next && file.as_deref() != Some(records.file())).then(|| records.file().to_path_buf());
        if let Some(f) = &begins {
            *file = Some(f.clone());
        }
        batch.push((r, begins));
    }
    None
}

/// Prepare a batch's exchanges on every core, then give the analyzer its records in
/// order (showing each to `observe` first); empties `batch`.
fn feed_batch(
    a: &mut Analyzer,
    batch: &mut Vec<(Record, Option<PathBuf>)>,
    observe: &mut dyn FnMut(&Record),
) {
    let prepared = prepare_batch(batch, |(r, _)| r, |_| ());
    for ((rec, begins), (prep, ())) in batch.drain(..).zip(prepared) {
        if let Some(f) = begins {
            a.begin_trace(&f.display().to_string());
        }
        observe(&rec);
        match rec {
            Record::Exchange(x) => a.push_prepared(&x, prep),
            Record::Mcp(m) => a.push_mcp(*m),
            Record::Bad(p) => a.bad_line(&p),
            Record::Header { context, .. } => a.context(&context),
            Record::Other(_) => {}
        }
    }
}

/// One exchange as [`prepare_batch`] read it: its request body parsed once, its
/// response body read at most once, for the analysis and for the caller alike.
pub struct ReadOnce<'a> {
    /// The exchange.
    pub exchange: &'a Exchange,
    /// Its request body, parsed ([`crate::api::view::parse`]).
    pub parsed: &'a Parsed,
    response: &'a std::cell::OnceCell<Option<ResponseBody>>,
}

impl ReadOnce<'_> {
    /// Its response body ([`exchange_response`]), read on the first call.
    pub fn response(&self) -> Option<&ResponseBody> {
        self.response
            .get_or_init(|| exchange_response(self.exchange))
            .as_ref()
    }
}

/// The stateless part of a batch of records, on every core: for each exchange (`record`
/// of each item) its [`Prepared`] for [`Analyzer::push_prepared`], and what `also` makes
/// of the same exchange from the same parse ([`ReadOnce`]: a caller that needs the
/// request or response too reads neither twice); `(None, None)` for other records. In
/// batch order.
pub fn prepare_batch<T, X, F>(
    batch: &[T],
    record: impl Fn(&T) -> &Record + Sync,
    also: F,
) -> Vec<(Option<Prepared>, X)>
where
    T: Sync,
    X: Send + Default,
    F: Fn(&ReadOnce) -> X + Sync,
{
    use rayon::prelude::*;
    batch
        .par_iter()
        .map(|item| {
            let Record::Exchange(x) = record(item) else {
                return (None, X::default());
            };
            let x = x.as_ref();
            let parsed = crate::api::view::parse(x);
            let response = std::cell::OnceCell::new();
            let extra = also(&ReadOnce {
                exchange: x,
                parsed: &parsed,
                response: &response,
            });
            let prepared = requests::prepare_parsed(x, parsed, |x| {
                response
                    .into_inner()
                    .unwrap_or_else(|| exchange_response(x))
            });
            (Some(prepared), extra)
        })
        .collect()
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
