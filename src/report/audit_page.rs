//! The shareable audit report (`agentwire report analyze`): an [`Analysis`] with its
//! inputs described, as standalone Markdown, a self-contained HTML page with charts, or
//! JSON. The figures are the analysis layer's; this module words and lays them out: a
//! summary in plain words, key figures, charts (per-request token timeline with TTL gaps
//! and misses by cause, poll episodes over time per target, cost by cause, background
//! jobs per session), the tables, and a glossary of every label shown.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::chart::{self, LaneBar, RequestBar};
use super::glossary::{self, Entry};
use super::meta::{InputMeta, Meta};
use super::page::{self, thousands};
use super::table::{Cell, Table};
use super::DocFormat;
use crate::analyze::Analysis;

/// Rendering options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Show at most this many request rows in Markdown (all in HTML and JSON); `None`:
    /// all.
    pub max_rows: Option<usize>,
}

fn usd(v: f64) -> String {
    format!("${:.4}", v + 0.0)
}

/// The text of a cost the analysis may leave unpriced (`None`: the model is not in the
/// price table).
fn usd_or_unpriced(v: Option<f64>) -> String {
    v.map_or_else(|| "unpriced".to_string(), usd)
}

/// A cost cell: unpriced costs show as such and sort first.
fn cost_cell(v: Option<f64>) -> Cell {
    Cell::num(usd_or_unpriced(v), v.unwrap_or(-1.0))
}

/// The session of a thread label, from the analysis's thread rows.
fn session_of<'a>(a: &'a Analysis, thread: &str) -> &'a str {
    a.threads
        .iter()
        .find(|t| t.thread == thread)
        .map_or("-", |t| t.session.as_str())
}

/// Threads whose requests include unpriced ones (their cost figures leave those out).
fn unpriced_threads(a: &Analysis) -> Vec<&str> {
    let mut v: Vec<&str> = a
        .requests
        .iter()
        .filter(|r| r.cost_usd.is_none())
        .map(|r| r.thread.as_str())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `$1.2345`, or `$1.2345 + unpriced` when some requests behind it are unpriced.
fn total(v: f64, partial: bool) -> String {
    if partial {
        format!("{} + unpriced", usd(v))
    } else {
        usd(v)
    }
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".to_string(), T::to_string)
}

#[derive(Serialize)]
struct Figure {
    label: &'static str,
    value: String,
}

#[derive(Serialize)]
struct Charts {
    timeline: minijinja::Value,
    polls: Option<minijinja::Value>,
    cost: Option<minijinja::Value>,
    jobs: Option<minijinja::Value>,
}

#[derive(Serialize)]
struct Page {
    meta: Meta,
    summary: Vec<String>,
    figures: Vec<Figure>,
    charts: Option<Charts>,
    tables: Vec<Table>,
    notes: Vec<String>,
    glossary: Vec<Entry>,
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    report: &'static str,
    meta: &'a Meta,
    summary: &'a [String],
    glossary: &'a [Entry],
    analysis: &'a Analysis,
}

/// `1 session`, `10,000 requests`.
fn count(n: usize, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        thousands(n as i64),
        if n == 1 { one } else { many }
    )
}

/// Misses the summary names one by one; the rest are counted.
const LISTED_MISSES: usize = 5;

/// The summary in plain words.
fn summary(a: &Analysis) -> Vec<String> {
    let s = &a.summary;
    let mut out = vec![format!(
        "{} in {}, {}, from {}.",
        count(s.requests, "Messages request", "Messages requests"),
        count(s.sessions, "session", "sessions"),
        count(s.threads, "thread", "threads"),
        count(a.inputs.len(), "input", "inputs"),
    )];
    if s.polls == 0 {
        out.push("No polling: no tool call asked again for something it had asked before.".into());
    } else {
        out.push(format!(
            "{} in {}; {} redundant (the answer had not changed since the previous poll), and the model calls they triggered cost {} tokens ({}).",
            count(s.polls, "poll", "polls"),
            count(a.episodes.len(), "episode", "episodes"),
            thousands(s.redundant_polls as i64),
            thousands(s.wasted_tokens as i64),
            usd(s.wasted_cost_usd)
        ));
        if let Some(e) = a.episodes.iter().max_by_key(|e| e.polls) {
            out.push(format!(
                "The longest episode: {} on {} in thread {}, {} polls, {} redundant.",
                e.tool, e.target, e.thread, e.polls, e.redundant
            ));
        }
    }
    let misses: Vec<String> = a
        .requests
        .iter()
        .filter_map(|r| {
            let c = r.cause.as_ref()?.name();
            if c == "cold_start" {
                return None;
            }
            let detail = r.cause_detail.clone().filter(|d| !d.is_empty());
            Some(match detail {
                Some(d) => format!("#{} {c} ({d})", r.seq),
                None => format!("#{} {c}", r.seq),
            })
        })
        .collect();
    if misses.is_empty() {
        out.push(format!(
            "Cache hit rate {}; no cache misses beyond cold starts.",
            pct(s.cache_hit_rate)
        ));
    } else {
        let by_cause: Vec<String> = s
            .misses_by_cause
            .iter()
            .filter(|c| c.cause != "cold_start")
            .map(|c| format!("{} {}", thousands(c.requests as i64), c.cause))
            .collect();
        let mut listed = misses[..misses.len().min(LISTED_MISSES)].join("; ");
        if misses.len() > LISTED_MISSES {
            listed.push_str(&format!(
                "; and {} more (Requests table)",
                thousands((misses.len() - LISTED_MISSES) as i64)
            ));
        }
        out.push(format!(
            "Cache hit rate {}; {} beyond cold starts ({}) cost {} tokens, {} extra: {listed}.",
            pct(s.cache_hit_rate),
            count(misses.len(), "cache miss", "cache misses"),
            by_cause.join(", "),
            thousands(s.cache_miss_tokens as i64),
            usd(s.cache_miss_cost_usd),
        ));
    }
    if !a.jobs.is_empty() {
        let states: Vec<String> = s
            .jobs_by_state
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        out.push(format!(
            "{}: {}.",
            count(a.jobs.len(), "background job", "background jobs"),
            states.join(", ")
        ));
    }
    out.push(format!(
        "Total cost {} at the prices of {} (checked {}); usage figures: {} simulated, {} recorded.",
        total(s.total_cost_usd, !s.unpriced_models.is_empty()),
        a.prices.source,
        a.prices.date,
        thousands(a.usage_used.simulated as i64),
        thousands(a.usage_used.recorded as i64)
    ));
    if !s.unpriced_models.is_empty() {
        let n = a.requests.iter().filter(|r| r.cost_usd.is_none()).count();
        out.push(format!(
            "Unpriced: {} of model{} {} (not in the price table) cost nothing in these figures; give their prices with --prices FILE.",
            count(n, "request", "requests"),
            if s.unpriced_models.len() == 1 { "" } else { "s" },
            names(&s.unpriced_models)
        ));
    }
    out
}

fn names(v: &[String]) -> String {
    v.join(", ")
}

fn figures(a: &Analysis) -> Vec<Figure> {
    let s = &a.summary;
    vec![
        Figure {
            label: "requests",
            value: thousands(s.requests as i64),
        },
        Figure {
            label: "sessions",
            value: thousands(s.sessions as i64),
        },
        Figure {
            label: "threads",
            value: thousands(s.threads as i64),
        },
        Figure {
            label: "polls",
            value: thousands(s.polls as i64),
        },
        Figure {
            label: "redundant polls",
            value: thousands(s.redundant_polls as i64),
        },
        Figure {
            label: "wasted $",
            value: usd(s.wasted_cost_usd),
        },
        Figure {
            label: "cache hit rate",
            value: pct(s.cache_hit_rate),
        },
        Figure {
            label: "miss tokens",
            value: thousands(s.cache_miss_tokens as i64),
        },
        Figure {
            label: "total cost",
            value: total(s.total_cost_usd, !s.unpriced_models.is_empty()),
        },
    ]
}

/// Most lanes a lane chart draws; the table below it lists every row.
const MAX_LANES: usize = 40;

/// A lane chart's title, saying so when only the [`MAX_LANES`] busiest of `total` lanes
/// are drawn.
fn capped(title: &str, total: usize, lanes: &str, weight: &str, table: &str) -> String {
    if total <= MAX_LANES {
        title.to_string()
    } else {
        format!("{title}: {MAX_LANES} of {total} {lanes}, those with the most {weight} (all in the {table} table)")
    }
}

fn secs(t0: DateTime<Utc>, t: DateTime<Utc>) -> f64 {
    (t - t0).num_microseconds().unwrap_or(0) as f64 / 1e6
}

fn charts(a: &Analysis) -> Charts {
    let mut causes: Vec<String> = Vec::new();
    let bars: Vec<RequestBar> = a
        .requests
        .iter()
        .map(|r| {
            let cause = r
                .cause
                .as_ref()
                .map(|c| c.name().to_string())
                .filter(|c| c != "cold_start");
            if let Some(c) = &cause {
                if !causes.contains(c) {
                    causes.push(c.clone());
                }
            }
            RequestBar {
                uncached: r.tokens.uncached,
                write: r.tokens.write(),
                read: r.tokens.read,
                gap: (cause.as_deref() == Some("ttl_expired"))
                    .then(|| format!("TTL gap: {}", r.cause_detail.clone().unwrap_or_default())),
                miss: cause,
            }
        })
        .collect();
    let t0 = a.requests.iter().map(|r| r.at).min();
    let polls = t0.filter(|_| !a.episodes.is_empty()).map(|t0| {
        let lanes: Vec<LaneBar> = a
            .episodes
            .iter()
            .map(|e| LaneBar {
                lane: format!("{}: {}", e.thread, e.target),
                start_s: secs(t0, e.first_at),
                end_s: secs(t0, e.last_at),
                label: format!("{} polls, {} redundant", e.polls, e.redundant),
                category: e.kind.clone(),
                weight: e.polls as u64,
            })
            .collect();
        let (lanes, total) = chart::busiest_lanes(lanes, MAX_LANES);
        let title = capped(
            "Poll episodes over time, per target",
            total,
            "targets",
            "polls",
            "Poll episodes",
        );
        page::svg(chart::lanes(&title, &lanes))
    });
    let mut cost: Vec<(String, f64)> = a
        .summary
        .misses_by_cause
        .iter()
        .map(|c| (c.cause.clone(), c.cost_usd))
        .collect();
    if a.summary.wasted_cost_usd > 0.0 {
        cost.push(("redundant polls".into(), a.summary.wasted_cost_usd));
    }
    let cost =
        (!cost.is_empty()).then(|| page::svg(chart::hbars("Cost by cause (USD)", &cost, "USD")));
    let last = a.requests.iter().map(|r| r.at).max();
    let jobs = t0.filter(|_| !a.jobs.is_empty()).map(|t0| {
        let lanes: Vec<LaneBar> = a
            .jobs
            .iter()
            .map(|j| {
                let end = j.job.notified_at.or(last).unwrap_or(j.job.started_at);
                LaneBar {
                    lane: session_of(a, &j.job.thread_label).to_string(),
                    start_s: secs(t0, j.job.started_at),
                    end_s: secs(t0, end),
                    label: format!(
                        "{} ({}, {}, thread {})",
                        j.job.reference,
                        j.job.tool,
                        j.job.state.name(),
                        j.job.thread_label
                    ),
                    category: j.job.state.name().to_string(),
                    weight: 1,
                }
            })
            .collect();
        let (lanes, total) = chart::busiest_lanes(lanes, MAX_LANES);
        let title = capped(
            "Background jobs per session",
            total,
            "sessions",
            "jobs",
            "Background jobs",
        );
        page::svg(chart::lanes(&title, &lanes))
    });
    Charts {
        timeline: page::svg(chart::request_timeline(&bars, &causes)),
        polls,
        cost,
        jobs,
    }
}

fn tables(a: &Analysis, o: &Options, html: bool) -> Vec<Table> {
    let mut out = Vec::new();
    let mut t = Table::new(
        "causes",
        "Cache misses by cause",
        &["cause", "requests", "miss tokens", "extra cost"],
    );
    for c in &a.summary.misses_by_cause {
        t.push(
            "",
            vec![
                Cell::code(&c.cause),
                Cell::int(c.requests as u64),
                Cell::int(c.tokens),
                Cell::num(usd(c.cost_usd), c.cost_usd),
            ],
        );
    }
    out.push(t);
    let mut t = Table::new(
        "threads",
        "Threads",
        &[
            "session",
            "thread",
            "requests",
            "polls",
            "redundant",
            "input",
            "read",
            "write",
            "output",
            "hit rate",
            "miss tokens",
            "miss cost",
            "cost",
        ],
    );
    let unpriced = unpriced_threads(a);
    for r in &a.threads {
        let partial = unpriced.contains(&r.thread.as_str());
        t.push(
            "",
            vec![
                Cell::code(&r.session),
                Cell::code(&r.thread),
                Cell::int(r.requests as u64),
                Cell::int(r.polls as u64),
                Cell::int(r.redundant_polls as u64),
                Cell::int(r.tokens.input()),
                Cell::int(r.tokens.read),
                Cell::int(r.tokens.write()),
                Cell::int(r.tokens.output),
                Cell::num(pct(r.cache_hit_rate), r.cache_hit_rate),
                Cell::int(r.miss_tokens),
                Cell::num(total(r.miss_cost_usd, partial), r.miss_cost_usd),
                Cell::num(total(r.cost_usd, partial), r.cost_usd),
            ],
        );
    }
    out.push(t);
    let mut t = Table::new(
        "episodes",
        "Poll episodes",
        &[
            "thread",
            "kind",
            "tool",
            "target",
            "job",
            "polls",
            "redundant",
            "after notif.",
            "pending",
            "interval s",
            "job s",
            "tokens",
            "cost",
            "wasted $",
        ],
    );
    for e in &a.episodes {
        t.push(
            "",
            vec![
                Cell::code(&e.thread),
                Cell::text(&e.kind),
                Cell::code(&e.tool),
                Cell::code(&e.target),
                Cell::code(opt(&e.job)),
                Cell::int(e.polls as u64),
                Cell::int(e.redundant as u64),
                Cell::int(e.after_notified as u64),
                Cell::int(e.while_pending as u64),
                Cell::text(opt(&e.mean_interval_s.map(|v| format!("{v:.1}")))),
                Cell::text(opt(&e.job_duration_s.map(|v| format!("{v:.1}")))),
                Cell::int(e.tokens.input() + e.tokens.output),
                Cell::num(usd(e.cost_usd), e.cost_usd),
                Cell::num(usd(e.wasted_cost_usd), e.wasted_cost_usd),
            ],
        );
    }
    out.push(t);
    let mut t = Table::new(
        "requests",
        "Requests",
        &[
            "#",
            "thread",
            "time",
            "usage",
            "uncached",
            "read",
            "write",
            "output",
            "status",
            "cause",
            "detail",
            "miss tokens",
            "cost",
        ],
    );
    t.paged = true;
    let limit = if html { None } else { o.max_rows };
    for r in a.requests.iter().take(limit.unwrap_or(usize::MAX)) {
        let class = match r.status.as_str() {
            "miss" | "partial" => r.status.as_str(),
            _ => "",
        };
        t.push(
            class,
            vec![
                Cell::int(r.seq as u64),
                Cell::code(&r.thread),
                Cell::text(r.at.format("%H:%M:%S%.3f").to_string()),
                Cell::text(&r.usage),
                Cell::int(r.tokens.uncached),
                Cell::int(r.tokens.read),
                Cell::int(r.tokens.write()),
                Cell::int(r.tokens.output),
                Cell::text(&r.status),
                Cell::code(opt(&r.cause.as_ref().map(|c| c.name()))),
                Cell::text(
                    r.cause_detail
                        .clone()
                        .filter(|d| !d.is_empty())
                        .unwrap_or_else(|| "-".into()),
                ),
                Cell::int(r.miss_tokens),
                cost_cell(r.cost_usd),
            ],
        );
    }
    out.push(t);
    let mut t = Table::new(
        "jobs",
        "Background jobs",
        &[
            "job",
            "kind",
            "session",
            "thread",
            "tool",
            "state",
            "exit",
            "started",
            "notified",
            "duration s",
            "polls",
            "duplicate of",
            "artifact",
        ],
    );
    for j in &a.jobs {
        let kind = serde_json::to_value(j.job.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        t.push(
            "",
            vec![
                Cell::code(&j.job.reference),
                Cell::text(kind),
                Cell::code(session_of(a, &j.job.thread_label)),
                Cell::code(&j.job.thread_label),
                Cell::code(&j.job.tool),
                Cell::text(j.job.state.name()),
                Cell::text(opt(&j.job.exit_code)),
                Cell::text(j.job.started_at.format("%H:%M:%S%.3f").to_string()),
                Cell::text(opt(&j
                    .job
                    .notified_at
                    .map(|t| t.format("%H:%M:%S%.3f").to_string()))),
                Cell::text(opt(&j.duration_s.map(|v| format!("{v:.1}")))),
                Cell::int(j.job.polls as u64),
                Cell::code(opt(&j.job.duplicate_of)),
                Cell::code(opt(&j.job.artifact)),
            ],
        );
    }
    out.push(t);
    let mut t = Table::new(
        "decisions",
        "Decision records",
        &[
            "job",
            "thread",
            "state",
            "acceptance",
            "decision",
            "unresolved",
        ],
    );
    for d in &a.decisions {
        let thread = a.jobs.iter().find(|j| j.job.reference == d.job_reference);
        t.push(
            "",
            vec![
                Cell::code(&d.job_reference),
                Cell::code(thread.map_or_else(|| "-".to_string(), |j| j.job.thread_label.clone())),
                Cell::text(&d.observed_state),
                Cell::text(&d.acceptance_result),
                Cell::text(&d.decision),
                Cell::text(opt(&d.unresolved_fact)),
            ],
        );
    }
    out.push(t);
    out
}

/// Title of an audit report: the clients, routes and settings of its inputs.
pub fn title(inputs: &[InputMeta]) -> String {
    let mut who: Vec<String> = Vec::new();
    for i in inputs {
        let s = format!("{} ({})", i.name(), i.setup());
        if !who.contains(&s) {
            who.push(s);
        }
    }
    format!("Audit: {}", who.join("; "))
}

/// Render an audit report for sharing. `inputs` describe the analysed traces, in order.
pub fn render(a: &Analysis, inputs: Vec<InputMeta>, format: DocFormat, o: &Options) -> String {
    let meta = Meta::new(title(&inputs), inputs);
    let summary = summary(a);
    let html = format == DocFormat::Html;
    let tables = tables(a, o, html);
    let figures = figures(a);
    let mut terms: Vec<String> = figures.iter().map(|f| f.label.to_string()).collect();
    for t in &tables {
        terms.extend(t.headers.iter().cloned());
    }
    terms.extend(a.summary.misses_by_cause.iter().map(|c| c.cause.clone()));
    if !a.summary.unpriced_models.is_empty() {
        terms.push("unpriced".into());
    }
    terms.extend(
        [
            "figure",
            "value",
            "TTL",
            "cache read",
            "cache write",
            "uncached",
        ]
        .map(String::from),
    );
    let glossary = glossary::for_terms(terms.iter().map(String::as_str));
    if format == DocFormat::Json {
        let doc = JsonDoc {
            report: "audit",
            meta: &meta,
            summary: &summary,
            glossary: &glossary,
            analysis: a,
        };
        return super::json(&doc);
    }
    let mut notes = Vec::new();
    if !html {
        if let Some(m) = o.max_rows.filter(|m| a.requests.len() > *m) {
            notes.push(format!(
                "The requests table shows the first {m} of {} requests (--max-rows).",
                a.requests.len()
            ));
        }
    }
    let page = Page {
        meta,
        summary,
        figures,
        charts: html.then(|| charts(a)),
        tables,
        notes,
        glossary,
    };
    page::render(if html { "audit.html" } else { "audit.md" }, page)
}
