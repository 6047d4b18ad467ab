//! Totals from the rows: the summary ([`Totals`]: polls, waste, cache hit rate, misses
//! by cause, jobs by state, predicted-vs-observed agreement) and the per-thread rows.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::attribution::CostAttribution;
use super::rows::{EpisodeRow, JobRow, RequestRow, ThreadRow};
use crate::analyze::cause::MissCause;
use crate::analyze::polling::Episode;
use crate::api::prices::Tokens;

/// Misses of one cause.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CauseRow {
    /// Cause name (`ttl_expired`, ...).
    pub cause: String,
    /// Requests with this cause.
    pub requests: usize,
    /// Missed tokens (not read although cached before).
    pub tokens: u64,
    /// Extra cost over a cache read, USD (per request never more than its cost).
    pub cost_usd: f64,
}

/// Agreement of predicted and observed cache figures.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Agreement {
    /// Requests with recorded cache fields.
    pub compared: usize,
    /// Of which the prediction agreed (same hit/miss verdict, read share within 10 points).
    pub agreed: usize,
    /// `agreed / compared`, a fraction from 0 to 1.
    pub rate: f64,
}

/// Below this share of requests whose recorded usage agrees with the cache simulation,
/// the recorded figures are suspected to be placeholders.
const LOW_AGREEMENT: f64 = 0.5;

impl Agreement {
    /// True when recorded usage disagrees with the simulation on most requests (at least
    /// three compared): the usual cause is a trace recorded against a fake server other
    /// than agentwire's, whose usage figures are placeholders (e.g. every request
    /// "misses"). `analyze` then warns, and its summary says so next to the figure.
    pub fn suggests_placeholders(&self) -> bool {
        self.compared >= 3 && self.rate < LOW_AGREEMENT
    }
}

/// Totals over all inputs (`summary` in the JSON report).
#[derive(Clone, Debug, Serialize)]
pub struct Totals {
    /// Messages requests.
    pub requests: usize,
    /// Sessions (runs of a client; see `docs/analyze.md`, "Sessions").
    pub sessions: usize,
    /// Threads.
    pub threads: usize,
    /// Polls.
    pub polls: usize,
    /// Redundant polls.
    pub redundant_polls: usize,
    /// Polls after the job's completion was notified.
    pub polls_after_notified: usize,
    /// Polls while a notification was pending.
    pub polls_while_pending: usize,
    /// Tokens of the model calls polls triggered (input + output).
    pub poll_tokens: u64,
    /// Their cost, USD.
    pub poll_cost_usd: f64,
    /// Tokens of the model calls redundant polls triggered.
    pub wasted_tokens: u64,
    /// Their cost less those calls' cache-miss extras (counted under the miss's cause, so
    /// no dollar is counted twice), USD.
    pub wasted_cost_usd: f64,
    /// All input tokens.
    pub input_tokens: u64,
    /// Cache-read tokens.
    pub cache_read_tokens: u64,
    /// Cache-write tokens.
    pub cache_write_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// `cache_read_tokens / input_tokens`, a fraction from 0 to 1 (0 with no input).
    pub cache_hit_rate: f64,
    /// Misses by cause.
    pub misses_by_cause: Vec<CauseRow>,
    /// Missed tokens, all causes except `cold_start`.
    pub cache_miss_tokens: u64,
    /// Their extra cost over cache reads, USD.
    pub cache_miss_cost_usd: f64,
    /// Cost of all priced requests, USD.
    pub total_cost_usd: f64,
    /// The same cost with every dollar counted once: useful work, redundant polls, each
    /// miss cause's extra, unattributed usage.
    pub cost_attribution: CostAttribution,
    /// Models without a price row: their requests have cost `null` and are left out of
    /// every cost figure.
    pub unpriced_models: Vec<String>,
    /// Jobs by observed state.
    pub jobs_by_state: BTreeMap<String, usize>,
    /// Predicted vs observed, where responses carry cache fields.
    pub agreement: Option<Agreement>,
}

impl Totals {
    /// Count usage that no analysed request carries (responses whose request was not
    /// captured) in the token and cost totals.
    pub fn add_unattributed(&mut self, t: &Tokens, cost_usd: f64) {
        self.input_tokens += t.input();
        self.cache_read_tokens += t.read;
        self.cache_write_tokens += t.write();
        self.output_tokens += t.output;
        self.cache_hit_rate = rate(self.cache_read_tokens, self.input_tokens);
        self.total_cost_usd += cost_usd;
        self.cost_attribution.add_unattributed(cost_usd);
    }
}

/// One row per thread (labels and session labels by global thread number).
pub fn thread_rows(
    labels: &[String],
    sessions: &[String],
    rows: &[RequestRow],
    episodes: &[Episode],
) -> Vec<ThreadRow> {
    let mut out: Vec<ThreadRow> = labels
        .iter()
        .zip(sessions)
        .map(|(l, s)| ThreadRow {
            session: s.clone(),
            thread: l.clone(),
            requests: 0,
            polls: 0,
            redundant_polls: 0,
            tokens: Tokens::default(),
            cache_hit_rate: 0.0,
            miss_tokens: 0,
            miss_cost_usd: 0.0,
            cost_usd: 0.0,
        })
        .collect();
    let idx: HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    for r in rows {
        if let Some(&i) = idx.get(r.thread.as_str()) {
            let t = &mut out[i];
            t.requests += 1;
            t.tokens.add(&r.tokens);
            t.cost_usd += r.cost_usd.unwrap_or(0.0);
            if !matches!(r.cause, Some(MissCause::ColdStart)) {
                t.miss_tokens += r.miss_tokens;
                t.miss_cost_usd += r.miss_cost_usd.unwrap_or(0.0);
            }
        }
    }
    for e in episodes {
        if let Some(t) = out.get_mut(e.thread) {
            t.polls += e.count();
            t.redundant_polls += e.redundant();
        }
    }
    for t in &mut out {
        t.cache_hit_rate = rate(t.tokens.read, t.tokens.input());
    }
    out
}

fn rate(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Misses by cause (in cause-name order), with their tokens and extra cost.
fn misses_by_cause(rows: &[RequestRow]) -> Vec<CauseRow> {
    let mut causes: BTreeMap<&str, CauseRow> = BTreeMap::new();
    for r in rows {
        // A cause with no missed tokens explains an uncached request; it is no miss.
        let cause = r.cause.as_ref().filter(|_| r.miss_tokens > 0);
        if let Some(c) = cause {
            let e = causes.entry(c.name()).or_insert_with(|| CauseRow {
                cause: c.name().to_string(),
                requests: 0,
                tokens: 0,
                cost_usd: 0.0,
            });
            e.requests += 1;
            e.tokens += r.miss_tokens;
            e.cost_usd += r.miss_cost_usd.unwrap_or(0.0);
        }
    }
    causes.into_values().collect()
}

/// Jobs by observed state name.
fn jobs_by_state(jobs: &[JobRow]) -> BTreeMap<String, usize> {
    let mut by_state = BTreeMap::new();
    for j in jobs {
        *by_state.entry(j.job.state.name().to_string()).or_insert(0) += 1;
    }
    by_state
}

/// The totals of all rows. `(compared, agreed)`: requests with recorded cache fields, and
/// of those the ones the simulation agreed with. Sessions and unpriced models are left
/// for the caller to fill in.
pub fn summarize(
    rows: &[RequestRow],
    episodes: &[EpisodeRow],
    jobs: &[JobRow],
    threads: usize,
    (compared, agreed): (usize, usize),
) -> Totals {
    let mut total = Tokens::default();
    let mut cost = 0.0;
    for r in rows {
        total.add(&r.tokens);
        cost += r.cost_usd.unwrap_or(0.0);
    }
    let misses = misses_by_cause(rows);
    let avoidable = misses.iter().filter(|c| c.cause != "cold_start");
    let (miss_tokens, miss_cost) =
        avoidable.fold((0, 0.0), |(t, c), r| (t + r.tokens, c + r.cost_usd));
    Totals {
        requests: rows.len(),
        sessions: 0,
        threads,
        polls: episodes.iter().map(|e| e.polls).sum(),
        redundant_polls: episodes.iter().map(|e| e.redundant).sum(),
        polls_after_notified: episodes.iter().map(|e| e.after_notified).sum(),
        polls_while_pending: episodes.iter().map(|e| e.while_pending).sum(),
        poll_tokens: episodes
            .iter()
            .map(|e| e.tokens.input() + e.tokens.output)
            .sum(),
        poll_cost_usd: episodes.iter().fold(0.0, |a, e| a + e.cost_usd),
        wasted_tokens: episodes.iter().map(|e| e.wasted_tokens).sum(),
        wasted_cost_usd: episodes.iter().fold(0.0, |a, e| a + e.wasted_cost_usd),
        input_tokens: total.input(),
        cache_read_tokens: total.read,
        cache_write_tokens: total.write(),
        output_tokens: total.output,
        cache_hit_rate: rate(total.read, total.input()),
        misses_by_cause: misses,
        cache_miss_tokens: miss_tokens,
        cache_miss_cost_usd: miss_cost,
        total_cost_usd: cost,
        cost_attribution: CostAttribution::of(rows, episodes),
        unpriced_models: Vec::new(),
        jobs_by_state: jobs_by_state(jobs),
        agreement: (compared > 0).then(|| Agreement {
            compared,
            agreed,
            rate: agreed as f64 / compared as f64,
        }),
    }
}
