//! The shareable audit report (`agentwire report analyze`): an [`Analysis`] with its
//! inputs described, as standalone Markdown, a self-contained HTML page with charts, or
//! JSON. The figures are the analysis layer's; this module words and lays them out: a
//! summary in plain words, key figures, charts (per-request token timeline with TTL gaps
//! and misses by cause, poll episodes over time per target, cost by cause, background
//! jobs per session), the tables, and a glossary of every label shown.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::analysis_tables::{self as tables, session_of, total};
use super::chart::{self, LaneBar, RequestBar};
use super::glossary::{self, Entry};
use super::meta::{InputMeta, Meta};
use super::page;
use super::table::Table;
use super::DocFormat;
use crate::analyze::{Analysis, MissCause};
use crate::text::fmt::{noun_form, pct_of_rate as pct, thousands, usd};

/// Rendering options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Show at most this many request rows in Markdown (all in HTML and JSON); `None`:
    /// all.
    pub max_rows: Option<usize>,
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
    format!("{} {}", thousands(n as i64), noun_form(n as u64, one, many))
}

/// Misses the summary names one by one; the rest are counted.
const LISTED_MISSES: usize = 5;

/// The summary in plain words: what was read, polling, the cache, background jobs, cost.
fn summary(a: &Analysis) -> Vec<String> {
    let s = &a.summary;
    let mut out = vec![format!(
        "{} in {}, {}, from {}.",
        count(s.requests, "Messages request", "Messages requests"),
        count(s.sessions, "session", "sessions"),
        count(s.threads, "thread", "threads"),
        count(a.inputs.len(), "input", "inputs"),
    )];
    out.extend(polling_sentences(a));
    out.push(cache_sentence(a));
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
    out.extend(cost_sentences(a));
    out
}

/// Polling: none, or the polls, episodes and their waste, and the longest episode.
fn polling_sentences(a: &Analysis) -> Vec<String> {
    let s = &a.summary;
    if s.polls == 0 {
        return vec![
            "No polling: no tool call asked again for something it had asked before.".into(),
        ];
    }
    let mut out = vec![format!(
        "{} in {}; {} redundant (the answer had not changed since the previous poll), and the model calls they triggered cost {} tokens ({}).",
        count(s.polls, "poll", "polls"),
        count(a.episodes.len(), "episode", "episodes"),
        thousands(s.redundant_polls as i64),
        thousands(s.wasted_tokens as i64),
        usd(s.wasted_cost_usd)
    )];
    if let Some(e) = a.episodes.iter().max_by_key(|e| e.polls) {
        out.push(format!(
            "The longest episode: {} on {} in thread {}, {} polls, {} redundant.",
            e.tool, e.target, e.thread, e.polls, e.redundant
        ));
    }
    out
}

/// The cache: the hit rate, and the misses beyond cold starts by cause, the first few
/// named by request.
fn cache_sentence(a: &Analysis) -> String {
    let s = &a.summary;
    let misses: Vec<String> = a
        .requests
        .iter()
        .filter_map(|r| {
            let c = r.cause.as_ref()?.name();
            // A cause with no missed tokens (below the cacheable minimum) is no miss.
            if c == "cold_start" || r.miss_tokens == 0 {
                return None;
            }
            let detail = r.cause_detail.clone().filter(|d| !d.is_empty());
            let id = tables::exchange_ref(a, r);
            Some(match detail {
                Some(d) => format!("#{id} {c} ({d})"),
                None => format!("#{id} {c}"),
            })
        })
        .collect();
    let uncacheable = a
        .requests
        .iter()
        .filter(|r| r.miss_tokens == 0 && matches!(r.cause, Some(MissCause::BelowMinimum { .. })))
        .count();
    let below = if uncacheable == 0 {
        String::new()
    } else {
        format!(
            " {} below the model's minimum cacheable length: nothing could be cached, no miss.",
            count(uncacheable, "request was", "requests were")
        )
    };
    if misses.is_empty() {
        return format!(
            "Cache hit rate {}; no cache misses beyond cold starts.{below}",
            pct(s.cache_hit_rate)
        );
    }
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
    format!(
        "Cache hit rate {}; {} beyond cold starts ({}) cost {} tokens, {} extra: {listed}.{below}",
        pct(s.cache_hit_rate),
        count(misses.len(), "cache miss", "cache misses"),
        by_cause.join(", "),
        thousands(s.cache_miss_tokens as i64),
        usd(s.cache_miss_cost_usd),
    )
}

/// The total cost with the prices it used, and the unpriced requests left out of it.
fn cost_sentences(a: &Analysis) -> Vec<String> {
    let s = &a.summary;
    let mut out = vec![format!(
        "Total cost {} at the prices of {} (checked {}); usage figures: {} simulated, {} recorded.",
        total(s.total_cost_usd, !s.unpriced_models.is_empty()),
        a.prices.source,
        a.prices.date,
        thousands(a.usage_used.simulated as i64),
        thousands(a.usage_used.recorded as i64)
    )];
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

/// A lane chart of at most [`MAX_LANES`] lanes, the busiest; its title says so when
/// lanes were left out; its time axis covers at least `span_s` seconds (charts of one
/// page share it). `what` names the lanes, their weight and the table that lists
/// every row (`("targets", "polls", "Poll episodes")`).
fn lane_chart(
    title: &str,
    bars: Vec<LaneBar>,
    span_s: f64,
    what: (&str, &str, &str),
) -> minijinja::Value {
    let (lanes, weight, table) = what;
    let (bars, total) = chart::busiest_lanes(bars, MAX_LANES);
    let title = if total <= MAX_LANES {
        title.to_string()
    } else {
        format!("{title}: {MAX_LANES} of {total} {lanes}, those with the most {weight} (all in the {table} table)")
    };
    page::svg(chart::lanes(&title, &bars, span_s))
}

/// The poll episodes as lanes, in seconds from `t0`.
fn poll_lanes(a: &Analysis, t0: DateTime<Utc>) -> Vec<LaneBar> {
    a.episodes
        .iter()
        .map(|e| LaneBar {
            lane: format!("{}: {}", e.thread, e.target),
            start_s: secs(t0, e.first_at),
            end_s: secs(t0, e.last_at),
            label: format!("{} polls, {} redundant", e.polls, e.redundant),
            category: e.kind.clone(),
            weight: e.polls as u64,
        })
        .collect()
}

/// The background jobs as lanes (a job runs until its notification, else the last
/// request), in seconds from `t0`.
fn job_lanes(a: &Analysis, t0: DateTime<Utc>) -> Vec<LaneBar> {
    let last = a.requests.iter().map(|r| r.at).max();
    a.jobs
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
        .collect()
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
    let poll_lanes = t0
        .filter(|_| !a.episodes.is_empty())
        .map(|t0| poll_lanes(a, t0));
    let job_lanes = t0.filter(|_| !a.jobs.is_empty()).map(|t0| job_lanes(a, t0));
    // One time axis for both lane charts (a 0.4 s poll episode in a 320 s job shows as
    // such): from the first request to the last request or bar end.
    let last = a.requests.iter().map(|r| r.at).max();
    let span = t0.zip(last).map_or(0.0, |(t0, l)| secs(t0, l));
    let span = (poll_lanes.iter().chain(&job_lanes))
        .flatten()
        .map(|b| b.end_s)
        .fold(span, f64::max);
    let polls = poll_lanes.map(|lanes| {
        lane_chart(
            "Poll episodes over time, per target",
            lanes,
            span,
            ("targets", "polls", "Poll episodes"),
        )
    });
    let jobs = job_lanes.map(|lanes| {
        lane_chart(
            "Background jobs per session",
            lanes,
            span,
            ("sessions", "jobs", "Background jobs"),
        )
    });
    // Every dollar once (the parts sum to the total cost).
    let cost: Vec<(String, f64)> = a
        .summary
        .cost_attribution
        .parts()
        .into_iter()
        .filter(|(_, v, _)| *v > 0.0)
        .map(|(part, v, _)| (part, v))
        .collect();
    let cost = (!cost.is_empty()).then(|| {
        page::svg(chart::hbars(
            "Cost by cause, every dollar counted once (USD)",
            &cost,
            "USD",
        ))
    });
    Charts {
        timeline: page::svg(chart::request_timeline(&bars, &causes)),
        polls,
        cost,
        jobs,
    }
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
    let tables = tables::all(a, if html { None } else { o.max_rows });
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
        return crate::text::safe_json::pretty(&doc);
    }
    let mut notes = Vec::new();
    for t in tables.iter().filter(|t| t.omitted > 0) {
        let what = t.title.to_lowercase();
        notes.push(format!(
            "The {what} table shows the first {} of {} {what} (--max-rows).",
            t.rows.len(),
            t.rows.len() + t.omitted
        ));
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
