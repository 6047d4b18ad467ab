//! The analysis result: per-request, per-episode, per-job and per-thread rows, the decision
//! records, and the summary — all priced. Its JSON form is the `--format json` output,
//! described by `schemas/analyze.schema.json`.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::cache::TtlMode;
use super::cause::{BilledAs, CachePrediction, MissCause};
use super::input::{Request, ToolCall};
use super::jobs::{decide, DecisionRecord, Job};
use super::polling::Episode;
use super::{AnalyzeConfig, InputInfo, UsageMode};
use crate::api::prices::{Tokens, UNKNOWN_MIN_CACHEABLE};
use crate::api::session::SessionInfo;

use super::summary::{summarize, thread_rows};
pub use super::summary::{Agreement, CauseRow, Summary, ThreadRow};

/// Version of the JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// JSON shape version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The `--usage` setting.
    pub usage_mode: UsageMode,
    /// Requests costed with simulated figures and with recorded ones, and why.
    pub usage_used: UsageUsed,
    /// The `--ttl` setting.
    pub ttl: TtlMode,
    /// Price table citation.
    pub prices: PriceInfo,
    /// The files read, in order: each input file, and each file under a directory input
    /// (so a directory gives the same inputs as naming its files one by one).
    pub inputs: Vec<InputInfo>,
    /// Files under a directory input that were not read (not a trace, an unknown layout,
    /// not a regular file), with why.
    pub skipped_files: Vec<super::SkippedFile>,
    /// Sessions (`s1`, …), in order of first appearance.
    pub sessions: Vec<SessionInfo>,
    /// Things the reader should know: unpriced models (cost `null`), assumptions made.
    pub warnings: Vec<String>,
    /// Totals.
    pub summary: Summary,
    /// One row per thread.
    pub threads: Vec<ThreadRow>,
    /// One row per poll episode.
    pub episodes: Vec<EpisodeRow>,
    /// One row per Messages request.
    pub requests: Vec<RequestRow>,
    /// One row per background job.
    pub jobs: Vec<JobRow>,
    /// One decision record per job.
    pub decisions: Vec<DecisionRecord>,
    /// The MCP layer and its link to the model layer; absent from the JSON when the
    /// inputs hold no `mcp` records.
    #[serde(skip_serializing_if = "super::mcp::McpAnalysis::is_empty")]
    pub mcp: super::mcp::McpAnalysis,
}

/// How many requests used which figures, and why.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UsageUsed {
    /// Costed with simulated figures.
    pub simulated: usize,
    /// Costed with recorded figures.
    pub recorded: usize,
    /// Requests per reason (the [`RequestRow::usage_reason`] values).
    pub reasons: std::collections::BTreeMap<String, usize>,
}

/// Where prices come from.
#[derive(Clone, Debug, Serialize)]
pub struct PriceInfo {
    /// Citation.
    pub source: String,
    /// Date checked.
    pub date: String,
}

/// One poll episode.
#[derive(Clone, Debug, Serialize)]
pub struct EpisodeRow {
    /// Thread label.
    pub thread: String,
    /// `same_call`, `task_output`, `shell_inspect`.
    pub kind: String,
    /// Tool.
    pub tool: String,
    /// Target.
    pub target: String,
    /// Job reference, if linked.
    pub job: Option<String>,
    /// Polls.
    pub polls: usize,
    /// Redundant polls.
    pub redundant: usize,
    /// Polls after the completion was notified.
    pub after_notified: usize,
    /// Polls while a notification was pending.
    pub while_pending: usize,
    /// First poll.
    pub first_at: DateTime<Utc>,
    /// Last poll.
    pub last_at: DateTime<Utc>,
    /// Mean seconds between polls.
    pub mean_interval_s: Option<f64>,
    /// Seconds from the job's start to its notification.
    pub job_duration_s: Option<f64>,
    /// Tokens of the triggered model calls.
    pub tokens: Tokens,
    /// Their cost, USD.
    pub cost_usd: f64,
    /// Tokens of the calls redundant polls triggered (input + output).
    pub wasted_tokens: u64,
    /// Their cost, USD.
    pub wasted_cost_usd: f64,
    /// `tool_use` ids of the polls, in order.
    pub calls: Vec<String>,
    /// The redundant polls and what made each result equal to the previous one
    /// (`identical`, or the normalization rules that fired).
    pub redundant_calls: Vec<RedundantPoll>,
}

/// A redundant poll and why.
#[derive(Clone, Debug, Serialize)]
pub struct RedundantPoll {
    /// `tool_use` id.
    pub call: String,
    /// `identical`, or the normalization rules that made the results equal.
    pub equal_by: Vec<String>,
}

/// One Messages request.
#[derive(Clone, Debug, Serialize)]
pub struct RequestRow {
    /// Position among all analysed requests.
    pub seq: usize,
    /// Input trace index (in [`Analysis::inputs`]: one per file, a directory's files
    /// one by one).
    pub trace: usize,
    /// The file the request was read from (`inputs[trace].path`; for a directory input,
    /// the file under it). Exchange ids are unique within a file.
    pub file: String,
    /// Exchange id in that trace.
    pub exchange: u64,
    /// Session label (`s1`, …).
    pub session: String,
    /// Thread label.
    pub thread: String,
    /// Turn within the thread (assistant messages in the history).
    pub turn: usize,
    /// Start time.
    pub at: DateTime<Utc>,
    /// The client's version (User-Agent `claude-cli/…`, else the recording context):
    /// the Parquet tables' partition key, not part of the JSON.
    #[serde(skip)]
    pub cli_version: Option<String>,
    /// Model.
    pub model: String,
    /// `simulated` or `recorded`: which figures `tokens` holds.
    pub usage: String,
    /// Why: `recorded usage with cache fields`, `--usage simulated`, `synthesized by
    /// agentwire (…)`, `no cache fields in the recorded usage`, `no recorded usage`.
    pub usage_reason: String,
    /// The simulation's figures and diagnosis.
    pub predicted: CachePrediction,
    /// Recorded figures, if the response had usage.
    pub observed: Option<Tokens>,
    /// Figures used for cost.
    pub tokens: Tokens,
    /// Cost, USD (`null`: the model is unpriced).
    pub cost_usd: Option<f64>,
    /// `hit`, `partial`, `miss`, `cold`, `uncached`.
    pub status: String,
    /// The miss cause (structured), if any.
    pub cause: Option<MissCause>,
    /// The cause as text (`gap 330.1 s > 300 s`, `+CronList`).
    pub cause_detail: Option<String>,
    /// Missed tokens.
    pub miss_tokens: u64,
    /// Their extra cost over cache reads, USD (`null`: the model is unpriced).
    pub miss_cost_usd: Option<f64>,
    /// Predicted and observed agree (only where observed cache fields exist).
    pub agrees: Option<bool>,
}

/// One background job.
#[derive(Clone, Debug, Serialize)]
pub struct JobRow {
    /// The job.
    #[serde(flatten)]
    pub job: Job,
    /// Seconds from start to notification.
    pub duration_s: Option<f64>,
}

/// Everything [`build`] needs.
pub struct Parts<'a> {
    /// Settings.
    pub cfg: &'a AnalyzeConfig,
    /// Inputs.
    pub inputs: Vec<InputInfo>,
    /// Files of directory inputs not read.
    pub skipped_files: Vec<super::SkippedFile>,
    /// Sessions.
    pub sessions: Vec<SessionInfo>,
    /// Thread labels by global thread number.
    pub labels: Vec<String>,
    /// Session of each global thread.
    pub session_of: Vec<usize>,
    /// Requests with predictions, in order.
    pub requests: Vec<(Request, CachePrediction)>,
    /// Tool calls.
    pub calls: &'a [ToolCall],
    /// Episodes.
    pub episodes: Vec<super::polling::Episode>,
    /// Jobs.
    pub jobs: Vec<Job>,
}

fn observed(r: &Request) -> Option<Tokens> {
    tokens_of(r.recorded.as_ref()?)
}

/// Recorded usage as token figures (`None` when it has neither input nor output).
pub(crate) fn tokens_of(u: &crate::api::Usage) -> Option<Tokens> {
    if u.input_tokens.is_none() && u.output_tokens.is_none() {
        return None;
    }
    let write = u.cache_creation_input_tokens.unwrap_or(0);
    let w1 = u.ephemeral_1h_input_tokens.unwrap_or(0).min(write);
    Some(Tokens {
        uncached: u.input_tokens.unwrap_or(0),
        read: u.cache_read_input_tokens.unwrap_or(0),
        write_5m: write - w1,
        write_1h: w1,
        output: u.output_tokens.unwrap_or(0),
    })
}

fn secs(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    (b - a).num_microseconds().unwrap_or(0) as f64 / 1e6
}

/// Which usage figures to cost a request with, and why.
fn usage_choice(mode: UsageMode, r: &Request, obs: &Option<Tokens>) -> (bool, String) {
    let has_cache_fields = r.recorded.as_ref().is_some_and(|u| u.has_cache_fields());
    match mode {
        UsageMode::Simulated => (false, "--usage simulated".into()),
        UsageMode::Recorded if obs.is_some() => (true, "--usage recorded".into()),
        UsageMode::Recorded => (false, "no recorded usage".into()),
        UsageMode::Auto => match (&r.synthesized, obs, has_cache_fields) {
            (Some(why), _, _) => (false, why.clone()),
            (None, None, _) => (false, "no recorded usage".into()),
            (None, Some(_), false) => (false, "no cache fields in the recorded usage".into()),
            (None, Some(_), true) => (true, "recorded usage with cache fields".into()),
        },
    }
}

/// Price and assemble the report.
pub fn build(parts: Parts<'_>) -> Analysis {
    let cfg = parts.cfg;
    let mut used = UsageUsed::default();
    let mut rows: Vec<RequestRow> = Vec::with_capacity(parts.requests.len());
    let (mut compared, mut agreed) = (0usize, 0usize);
    let mut unpriced: Vec<String> = Vec::new();
    for (r, pred) in parts.requests {
        let price = cfg.prices.lookup(&r.model);
        if price.is_none() && !unpriced.contains(&r.model) {
            unpriced.push(r.model.clone());
        }
        let obs = observed(&r);
        let has_cache_fields = r.recorded.as_ref().is_some_and(|u| u.has_cache_fields());
        let (use_recorded, reason) = usage_choice(cfg.usage, &r, &obs);
        *used.reasons.entry(reason.clone()).or_default() += 1;
        let simulated = Tokens {
            uncached: pred.uncached,
            read: pred.read,
            write_5m: pred.write_5m,
            write_1h: pred.write_1h,
            output: r.output_estimate,
        };
        let mut pred = pred;
        // The 1-hour writes of the figures the miss was found in.
        let mut miss_written_1h = pred.write_1h;
        let mut agrees = None;
        if use_recorded && has_cache_fields {
            let o = obs.expect("use_recorded");
            let share = |t: &Tokens| {
                if t.input() == 0 {
                    0.0
                } else {
                    t.read as f64 / t.input() as f64
                }
            };
            let ok = (o.read > 0) == (simulated.read > 0)
                && (share(&o) - share(&simulated)).abs() <= 0.10;
            compared += 1;
            agreed += usize::from(ok);
            agrees = Some(ok);
            if o.read < simulated.read && pred.cause.is_none() {
                pred.cause = Some(MissCause::Unexplained);
                pred.miss_tokens = simulated.read - o.read;
                pred.billed_as = BilledAs::of(pred.miss_tokens, o.write_5m, o.write_1h);
                miss_written_1h = o.write_1h;
            }
        }
        let tokens = if use_recorded {
            obs.expect("use_recorded")
        } else {
            simulated
        };
        if use_recorded {
            used.recorded += 1;
        } else {
            used.simulated += 1;
        }
        let status = match (&pred.cause, tokens.read > 0) {
            (Some(MissCause::ColdStart), _) => "cold",
            (Some(_), true) => "partial",
            (Some(_), false) => "miss",
            (None, true) => "hit",
            (None, false) => "uncached",
        };
        let miss_cost_usd = price.map(|p| {
            pred.billed_as
                .extra_cost_usd(p, pred.miss_tokens, miss_written_1h)
        });
        rows.push(RequestRow {
            seq: r.seq,
            trace: r.trace,
            file: parts
                .inputs
                .get(r.trace)
                .map_or_else(String::new, |i| i.path.clone()),
            exchange: r.exchange,
            session: parts
                .session_of
                .get(r.thread)
                .and_then(|s| parts.sessions.get(*s))
                .map_or_else(String::new, |s| s.label.clone()),
            thread: parts.labels.get(r.thread).cloned().unwrap_or_default(),
            turn: r.turn,
            at: r.at,
            cli_version: r.cli_version.clone(),
            model: r.model.clone(),
            usage: if use_recorded {
                "recorded"
            } else {
                "simulated"
            }
            .to_string(),
            usage_reason: reason,
            cause: pred.cause.clone(),
            cause_detail: pred.cause.as_ref().map(MissCause::detail),
            miss_tokens: pred.miss_tokens,
            miss_cost_usd,
            predicted: pred,
            observed: obs,
            cost_usd: price.map(|p| p.cost(&tokens)),
            tokens,
            status: status.to_string(),
            agrees,
        });
    }
    let mut warnings: Vec<String> = unpriced
        .iter()
        .map(|m| {
            format!(
                "model {m:?} is not in the price table ({}, {}): its requests are unpriced (cost null) and simulated with a {UNKNOWN_MIN_CACHEABLE}-token cache minimum; give its prices with --prices FILE",
                cfg.prices.source, cfg.prices.date
            )
        })
        .collect();
    // Tool results carried per request: a request's cost is split among them.
    let mut results_per_req: HashMap<usize, usize> = HashMap::new();
    for c in parts.calls {
        if let Some(r) = &c.result {
            *results_per_req.entry(r.carried_by).or_default() += 1;
        }
    }
    let share = |seq: usize| -> (Tokens, f64) {
        let row = &rows[seq];
        let n = results_per_req.get(&seq).copied().unwrap_or(1).max(1) as u64;
        let t = row.tokens;
        let t = Tokens {
            uncached: t.uncached / n,
            read: t.read / n,
            write_5m: t.write_5m / n,
            write_1h: t.write_1h / n,
            output: t.output / n,
        };
        (t, row.cost_usd.unwrap_or(0.0) / n as f64)
    };
    let episodes: Vec<EpisodeRow> = parts
        .episodes
        .iter()
        .map(|e| episode_row(e, &parts.jobs, &share))
        .collect();
    let jobs: Vec<JobRow> = parts
        .jobs
        .iter()
        .map(|j| JobRow {
            duration_s: j.notified_at.map(|n| secs(j.started_at, n)),
            job: j.clone(),
        })
        .collect();
    let decisions: Vec<DecisionRecord> = parts.jobs.iter().map(decide).collect();
    let session_labels: Vec<String> = parts
        .session_of
        .iter()
        .map(|s| parts.sessions[*s].label.clone())
        .collect();
    let threads = thread_rows(&parts.labels, &session_labels, &rows, &parts.episodes);
    let mut summary = summarize(&rows, &episodes, &jobs, threads.len(), compared, agreed);
    for u in parts
        .inputs
        .iter()
        .filter_map(|i| i.responses_without_request.as_ref())
    {
        summary.add_unattributed(&u.tokens, u.cost_usd);
    }
    if let Some(w) = disagreement_warning(cfg.usage, summary.agreement.as_ref()) {
        warnings.push(w);
    }
    summary.sessions = parts.sessions.len();
    summary.unpriced_models = unpriced;
    Analysis {
        schema_version: SCHEMA_VERSION,
        usage_mode: cfg.usage,
        usage_used: used,
        ttl: cfg.ttl,
        prices: PriceInfo {
            source: cfg.prices.source.clone(),
            date: cfg.prices.date.clone(),
        },
        inputs: parts.inputs,
        skipped_files: parts.skipped_files,
        sessions: parts.sessions,
        warnings,
        summary,
        threads,
        episodes,
        requests: rows,
        jobs,
        decisions,
        mcp: Default::default(),
    }
}

fn episode_row(e: &Episode, jobs: &[Job], share: &dyn Fn(usize) -> (Tokens, f64)) -> EpisodeRow {
    let (mut tokens, mut cost, mut wasted, mut wasted_cost) = (Tokens::default(), 0.0, 0u64, 0.0);
    for p in &e.polls {
        if let Some(seq) = p.triggered {
            let (t, c) = share(seq);
            tokens.add(&t);
            cost += c;
            if p.redundant {
                wasted += t.input() + t.output;
                wasted_cost += c;
            }
        }
    }
    let job = e
        .job
        .as_ref()
        .and_then(|r| jobs.iter().find(|j| &j.reference == r));
    EpisodeRow {
        thread: e.thread_label.clone(),
        kind: e.kind.name().to_string(),
        tool: e.tool.clone(),
        target: e.target.clone(),
        job: e.job.clone(),
        polls: e.count(),
        redundant: e.redundant(),
        after_notified: e.after_notified(),
        while_pending: e.while_pending(),
        first_at: e.polls[0].at,
        last_at: e.polls[e.polls.len() - 1].at,
        mean_interval_s: e.mean_interval_s(),
        job_duration_s: job.and_then(|j| j.notified_at.map(|n| secs(j.started_at, n))),
        tokens,
        cost_usd: cost,
        wasted_tokens: wasted,
        wasted_cost_usd: wasted_cost,
        calls: e.polls.iter().map(|p| p.call.clone()).collect(),
        redundant_calls: e
            .polls
            .iter()
            .filter(|p| p.redundant)
            .map(|p| RedundantPoll {
                call: p.call.clone(),
                equal_by: p.equal_by.clone(),
            })
            .collect(),
    }
}

/// A warning when recorded usage disagrees with the simulation on most requests
/// ([`Agreement::suggests_placeholders`]).
fn disagreement_warning(mode: UsageMode, agreement: Option<&Agreement>) -> Option<String> {
    let g = agreement?;
    if mode == UsageMode::Simulated || !g.suggests_placeholders() {
        return None;
    }
    Some(format!(
        "recorded usage agrees with the cache simulation on only {} of {} requests ({:.1}%): \
         if these responses came from a fake server with placeholder usage, rerun with \
         --usage simulated; if they came from the API, the misses are real (see their causes)",
        g.agreed,
        g.compared,
        g.rate * 100.0
    ))
}
