//! How the whole report ([`Analysis`]) is built from the detectors' output
//! ([`Analysis::build`]): every request priced into a row (`request_row`),
//! poll episodes and jobs into theirs, then the totals. Its JSON form is the
//! `--format json` output, described by `schemas/analyze.schema.json`.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use super::analysis::{Analysis, PriceInfo, UsageUsed, SCHEMA_VERSION};
use super::reconcile::{reconcile, usage_choice, Reconciled};
use super::rows::{EpisodeRow, InputInfo, JobRow, RedundantPoll, RequestRow, SkippedFile};
use super::summary::{summarize, thread_rows, Agreement, Totals};
use crate::analyze::cache::TtlMode;
use crate::analyze::cause::{CachePrediction, MissCause};
use crate::analyze::config::{AnalyzeConfig, UsageMode};
use crate::analyze::events::ToolCall;
use crate::analyze::jobs::{decide, Job};
use crate::analyze::mcp::McpAnalysis;
use crate::analyze::polling::Episode;
use crate::analyze::requests::Request;
use crate::api::prices::{ModelPrice, Tokens, UNKNOWN_MIN_CACHEABLE};
use crate::api::session::SessionInfo;
use crate::api::Usage;

/// Where the prices of the analysed requests come from: the table's own citation, and
/// the rows' citations where a row that priced a request cites a source of its own that
/// the table's does not cover (the OpenAI rows cite their model pages); the date is the
/// table's, or the rows' when only such rows priced anything.
fn price_info(table: &crate::api::prices::PriceTable, rows: &[RequestRow]) -> PriceInfo {
    let mut own: Vec<(String, String)> = Vec::new();
    let mut table_rows = false;
    for r in rows {
        let Some(p) = table.lookup(&r.model) else {
            continue;
        };
        match &p.source {
            Some(s) if !s.starts_with(&table.source) => {
                let entry = (
                    s.clone(),
                    p.checked.clone().unwrap_or_else(|| table.date.clone()),
                );
                if !own.contains(&entry) {
                    own.push(entry);
                }
            }
            _ => table_rows = true,
        }
    }
    if own.is_empty() {
        return PriceInfo {
            source: table.source.clone(),
            date: table.date.clone(),
        };
    }
    let mut sources: Vec<String> = own.iter().map(|(s, _)| s.clone()).collect();
    if table_rows {
        sources.insert(0, table.source.clone());
    }
    PriceInfo {
        source: sources.join("; "),
        date: if table_rows {
            table.date.clone()
        } else {
            own[0].1.clone()
        },
    }
}

/// Everything [`Analysis::build`] needs: the settings, what the inputs were, and what the
/// model and the detectors found.
pub struct BuildInput<'a> {
    /// Settings.
    pub cfg: &'a AnalyzeConfig,
    /// Inputs.
    pub inputs: Vec<InputInfo>,
    /// Files of directory inputs not read.
    pub skipped_files: Vec<SkippedFile>,
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
    pub episodes: Vec<Episode>,
    /// Jobs.
    pub jobs: Vec<Job>,
    /// The MCP layer's analysis.
    pub mcp: McpAnalysis,
}

impl Analysis {
    /// Price every request and assemble the report.
    pub fn build(mut input: BuildInput<'_>) -> Analysis {
        let cfg = input.cfg;
        let mut unpriced: Vec<String> = Vec::new();
        let rows: Vec<RequestRow> = std::mem::take(&mut input.requests)
            .into_iter()
            .map(|(r, pred)| {
                let price = cfg.prices.lookup(&r.model);
                if price.is_none() && !unpriced.contains(&r.model) {
                    unpriced.push(r.model.clone());
                }
                input.request_row(r, pred, price)
            })
            .collect();
        let mut warnings = unpriced_warnings(cfg, &unpriced);
        let episodes = input.episode_rows(&rows);
        let jobs = job_rows(&input.jobs);
        let threads = thread_rows(
            &input.labels,
            &input.session_labels(),
            &rows,
            &input.episodes,
        );
        let summary = input.totals(&rows, &episodes, &jobs, threads.len(), unpriced);
        warnings.extend(disagreement_warning(cfg.usage, summary.agreement.as_ref()));
        warnings.extend(rows.iter().filter_map(ttl_warning));
        warnings.extend(api_error_warning(&rows));
        let mut a = Analysis {
            schema_version: SCHEMA_VERSION,
            usage_mode: cfg.usage,
            usage_used: usage_used(&rows),
            ttl: cfg.ttl,
            prices: price_info(&cfg.prices, &rows),
            decisions: input.jobs.iter().map(decide).collect(),
            inputs: input.inputs,
            skipped_files: input.skipped_files,
            sessions: input.sessions,
            warnings,
            summary,
            threads,
            episodes,
            requests: rows,
            jobs,
            mcp: input.mcp,
        };
        super::redact::analysis(&mut a);
        a
    }
}

impl BuildInput<'_> {
    /// The row of one request: which figures it is costed with and why, its prediction
    /// reconciled with recorded cache fields, its cost at `price` (`None`: unpriced).
    fn request_row(
        &self,
        r: Request,
        mut pred: CachePrediction,
        price: Option<&ModelPrice>,
    ) -> RequestRow {
        let obs = r.recorded.as_ref().and_then(Usage::tokens);
        let has_cache_fields = r.recorded.as_ref().is_some_and(|u| u.has_cache_fields());
        let (use_recorded, reason) = usage_choice(self.cfg.usage, &r, &obs);
        let simulated = simulated(&pred, r.output_estimate);
        let rec = match obs {
            Some(o) if use_recorded && has_cache_fields => reconcile(
                &mut pred,
                &o,
                &simulated,
                r.recorded.as_ref(),
                self.cfg.ttl == TtlMode::Auto,
                price,
            ),
            _ => Reconciled {
                agrees: None,
                written_1h: pred.write_1h,
                ttl_billed: None,
            },
        };
        let (agrees, miss_written_1h) = (rec.agrees, rec.written_1h);
        let tokens = match obs {
            Some(o) if use_recorded => o,
            _ => simulated,
        };
        let cost_usd = price.map(|p| p.cost(&tokens));
        // The extra a miss cost is part of what the request cost, never more.
        let miss_cost_usd = price.zip(cost_usd).map(|(p, cost)| {
            pred.billed_as
                .extra_cost_usd(p, pred.miss_tokens, miss_written_1h)
                .min(cost)
        });
        let usage = if use_recorded {
            "recorded"
        } else {
            "simulated"
        };
        RequestRow {
            seq: r.seq,
            trace: r.trace,
            file: self
                .inputs
                .get(r.trace)
                .map_or_else(String::new, |i| i.path.clone()),
            exchange: r.exchange,
            session: self.session_label(r.thread),
            thread: self.labels.get(r.thread).cloned().unwrap_or_default(),
            turn: r.turn,
            at: r.at,
            model: r.model,
            cli_version: r.cli_version,
            agent: r.agent,
            dialect: r.dialect,
            usage: usage.to_string(),
            usage_reason: reason,
            status: status(&pred.cause, pred.miss_tokens, tokens.read).to_string(),
            cause: pred.cause.clone(),
            cause_detail: pred.cause.as_ref().map(MissCause::detail),
            miss_tokens: pred.miss_tokens,
            miss_cost_usd,
            predicted: pred,
            observed: obs,
            cost_usd,
            tokens,
            agrees,
            ttl_billed: rec.ttl_billed,
            api_error: r.api_error,
        }
    }

    /// Session label of a global thread (empty when unknown).
    fn session_label(&self, thread: usize) -> String {
        self.session_of
            .get(thread)
            .and_then(|s| self.sessions.get(*s))
            .map_or_else(String::new, |s| s.label.clone())
    }

    /// Session label of each global thread.
    fn session_labels(&self) -> Vec<String> {
        self.session_of
            .iter()
            .map(|s| self.sessions[*s].label.clone())
            .collect()
    }

    /// One row per episode, each poll costing its share of the model call its result
    /// triggered (a request's cost is split among the tool results it carried).
    fn episode_rows(&self, rows: &[RequestRow]) -> Vec<EpisodeRow> {
        let mut results_per_req: HashMap<usize, usize> = HashMap::new();
        for c in self.calls {
            if let Some(r) = &c.result {
                *results_per_req.entry(r.carried_by).or_default() += 1;
            }
        }
        // A poll's tokens, cost and cost net of its call's miss extra (its waste if
        // redundant: the miss extra is counted under its cause).
        let share = |seq: usize| -> (Tokens, f64, f64) {
            let row = &rows[seq];
            let n = results_per_req.get(&seq).copied().unwrap_or(1).max(1) as u64;
            let cost = row.cost_usd.unwrap_or(0.0);
            let net = cost - row.miss_cost_usd.unwrap_or(0.0).min(cost);
            let t = row.tokens;
            let t = Tokens {
                uncached: t.uncached / n,
                read: t.read / n,
                write_5m: t.write_5m / n,
                write_1h: t.write_1h / n,
                output: t.output / n,
            };
            (t, cost / n as f64, net / n as f64)
        };
        self.episodes
            .iter()
            .map(|e| episode_row(e, &self.jobs, &share))
            .collect()
    }

    /// The totals of the rows, with the usage of responses whose request was not
    /// captured, the number of sessions and the `unpriced` models.
    fn totals(
        &self,
        rows: &[RequestRow],
        episodes: &[EpisodeRow],
        jobs: &[JobRow],
        threads: usize,
        unpriced: Vec<String>,
    ) -> Totals {
        let compared = rows.iter().filter(|r| r.agrees.is_some()).count();
        let agreed = rows.iter().filter(|r| r.agrees == Some(true)).count();
        let mut summary = summarize(rows, episodes, jobs, threads, (compared, agreed));
        for u in self
            .inputs
            .iter()
            .filter_map(|i| i.responses_without_request.as_ref())
        {
            summary.add_unattributed(&u.tokens, u.cost_usd);
        }
        summary.sessions = self.sessions.len();
        summary.unpriced_models = unpriced;
        summary
    }
}

/// The simulation's figures of a request, with `output` estimated tokens.
fn simulated(pred: &CachePrediction, output: u64) -> Tokens {
    Tokens {
        uncached: pred.uncached,
        read: pred.read,
        write_5m: pred.write_5m,
        write_1h: pred.write_1h,
        output,
    }
}

fn secs(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    (b - a).num_microseconds().unwrap_or(0) as f64 / 1e6
}

/// A request's cache status: `cold`, `partial`, `miss`, `hit` or `uncached`. A cause with
/// no missed tokens (the prompt is below the cacheable minimum) says why nothing was
/// cached, not a miss: `uncached`.
fn status(cause: &Option<MissCause>, miss_tokens: u64, read: u64) -> &'static str {
    match (cause, read > 0) {
        (Some(MissCause::ColdStart), _) => "cold",
        (Some(_), false) if miss_tokens == 0 => "uncached",
        (Some(_), true) => "partial",
        (Some(_), false) => "miss",
        (None, true) => "hit",
        (None, false) => "uncached",
    }
}

/// Requests per figures used and per reason.
fn usage_used(rows: &[RequestRow]) -> UsageUsed {
    let mut used = UsageUsed::default();
    for r in rows {
        *used.reasons.entry(r.usage_reason.clone()).or_default() += 1;
        if r.usage == "recorded" {
            used.recorded += 1;
        } else {
            used.simulated += 1;
        }
    }
    used
}

/// One warning per model without a price row.
fn unpriced_warnings(cfg: &AnalyzeConfig, unpriced: &[String]) -> Vec<String> {
    unpriced
        .iter()
        .map(|m| {
            format!(
                "model {m:?} is not in the price table ({}, {}): its requests are unpriced (cost null) and simulated with a {UNKNOWN_MIN_CACHEABLE}-token cache minimum; give its prices with --prices FILE",
                cfg.prices.source, cfg.prices.date
            )
        })
        .collect()
}

fn job_rows(jobs: &[Job]) -> Vec<JobRow> {
    jobs.iter()
        .map(|j| JobRow {
            duration_s: j.notified_at.map(|n| secs(j.started_at, n)),
            job: j.clone(),
        })
        .collect()
}

fn episode_row(
    e: &Episode,
    jobs: &[Job],
    share: &dyn Fn(usize) -> (Tokens, f64, f64),
) -> EpisodeRow {
    let (mut tokens, mut cost, mut wasted, mut wasted_cost) = (Tokens::default(), 0.0, 0u64, 0.0);
    for p in &e.polls {
        if let Some(seq) = p.triggered {
            let (t, c, net) = share(seq);
            tokens.add(&t);
            cost += c;
            if p.redundant {
                wasted += t.input() + t.output;
                wasted_cost += net;
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

/// One warning counting the requests whose response held an API error, by type, with
/// the first of each (`2 requests ended with an API error: overloaded_error ×2 (first:
/// trace.jsonl#4, "overloaded_error: Overloaded")`).
fn api_error_warning(rows: &[RequestRow]) -> Option<String> {
    let mut by_type: BTreeMap<&str, (usize, &RequestRow)> = BTreeMap::new();
    for r in rows {
        if let Some(e) = &r.api_error {
            let kind = e.split(": ").next().unwrap_or(e);
            by_type.entry(kind).or_insert((0, r)).0 += 1;
        }
    }
    let n: usize = by_type.values().map(|(n, _)| n).sum();
    (n > 0).then(|| {
        let kinds: Vec<String> = by_type
            .iter()
            .map(|(k, (c, r))| {
                format!(
                    "{k} ×{c} (first: {}#{}, {:?})",
                    r.file,
                    r.exchange,
                    r.api_error.as_deref().unwrap_or("")
                )
            })
            .collect();
        let s = if n == 1 { "" } else { "s" };
        format!(
            "{n} request{s} ended with an API error: {}",
            kinds.join("; ")
        )
    })
}

/// A warning for a request whose writes were billed at another TTL than asked.
fn ttl_warning(r: &RequestRow) -> Option<String> {
    let t = r.ttl_billed.as_ref()?;
    let money = t.cost_difference_usd.map_or_else(String::new, |d| {
        let how = if d < 0.0 { "less" } else { "more" };
        format!(" ({} {how})", crate::text::fmt::usd(d.abs()))
    });
    let expiry = if t.billed == "5m" {
        "; those entries expire after 5 minutes, not 1 hour"
    } else {
        ""
    };
    Some(format!(
        "{}#{} asked for {} cache writes; {} tokens were billed at the {} rate{money}{expiry}",
        r.file, r.exchange, t.asked, t.tokens, t.billed
    ))
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
