//! The tables of an analysis, one builder each, shared by `agentwire analyze` (terminal,
//! Markdown) and the shareable audit report (Markdown, HTML with sortable and paged
//! tables): the cost attribution, misses by cause, threads, poll episodes, requests, background jobs, decision
//! records. Every header is a glossary label ([`super::glossary`]); numbers keep a sort
//! value next to their text; a model the price table lacks shows as `unpriced`.

use super::table::{Cell, Table};
use crate::analyze::Analysis;
use crate::text::fmt::{pct_of_rate, usd, usd_or_unpriced};

/// A cost cell: unpriced costs show as such and sort first.
pub(crate) fn cost_cell(v: Option<f64>) -> Cell {
    Cell::num(usd_or_unpriced(v), v.unwrap_or(-1.0))
}

/// The session of a thread label, from the analysis's thread rows.
pub(crate) fn session_of<'a>(a: &'a Analysis, thread: &str) -> &'a str {
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
pub(crate) fn total(v: f64, partial: bool) -> String {
    if partial {
        format!("{} + unpriced", usd(v))
    } else {
        usd(v)
    }
}

/// The id other commands take for a request's exchange: its exchange id (`show`'s `#`,
/// `diff FILE#N`, `prompt FILE#N`), with its file when the analysis read several
/// (`b.jsonl#3`).
pub(crate) fn exchange_ref(a: &Analysis, r: &crate::analyze::RequestRow) -> String {
    if a.inputs.len() > 1 {
        format!("{}#{}", r.file, r.exchange)
    } else {
        r.exchange.to_string()
    }
}

/// The value, or `-`.
pub(crate) fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".to_string(), T::to_string)
}

/// Every table, in report order.
pub fn all(a: &Analysis, max_rows: Option<usize>) -> Vec<Table> {
    vec![
        attribution(a),
        causes(a),
        threads(a),
        episodes(a),
        requests(a, max_rows),
        jobs(a),
        decisions(a),
    ]
}

/// The cost with every dollar counted once: useful work, redundant polls, each miss
/// cause's extra, unattributed usage; shares of the total.
pub fn attribution(a: &Analysis) -> Table {
    let c = &a.summary.cost_attribution;
    let mut t = Table::new(
        "attribution",
        "Cost, every dollar counted once",
        &["part", "cost", "share", "contains"],
    );
    for (part, v, contains) in c.parts() {
        let share = if c.total_usd > 0.0 {
            v / c.total_usd
        } else {
            0.0
        };
        t.push(
            "",
            vec![
                Cell::text(part),
                Cell::num(usd(v), v),
                Cell::num(pct_of_rate(share), share),
                Cell::text(contains),
            ],
        );
    }
    t
}

/// Cache misses by cause (cold starts included).
pub fn causes(a: &Analysis) -> Table {
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
    t
}

/// One row per thread, with its session; costs say `+ unpriced` when some of the
/// thread's requests are unpriced.
pub fn threads(a: &Analysis) -> Table {
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
                Cell::num(pct_of_rate(r.cache_hit_rate), r.cache_hit_rate),
                Cell::int(r.miss_tokens),
                Cell::num(total(r.miss_cost_usd, partial), r.miss_cost_usd),
                Cell::num(total(r.cost_usd, partial), r.cost_usd),
            ],
        );
    }
    t
}

/// One row per poll episode.
pub fn episodes(a: &Analysis) -> Table {
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
    t
}

/// One row per request (paged in HTML; `max_rows` keeps the first N); with recorded
/// cache figures, the predicted read and write and whether they agree.
pub fn requests(a: &Analysis, max_rows: Option<usize>) -> Table {
    let compare = a.summary.agreement.is_some();
    let mut headers = vec![
        "#",
        "session",
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
    ];
    if compare {
        headers.extend(["pred read", "pred write", "agrees"]);
    }
    let mut t = Table::new("requests", "Requests", &headers);
    t.paged = true;
    for r in a.requests.iter().take(max_rows.unwrap_or(usize::MAX)) {
        let class = match r.status.as_str() {
            "miss" | "partial" => r.status.as_str(),
            _ => "",
        };
        let mut cells = vec![
            Cell::num(exchange_ref(a, r), r.seq as f64),
            Cell::code(&r.session),
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
        ];
        if compare {
            cells.push(Cell::int(r.predicted.read));
            cells.push(Cell::int(r.predicted.write_5m + r.predicted.write_1h));
            cells.push(Cell::text(opt(&r
                .agrees
                .map(|b| if b { "yes" } else { "no" }))));
        }
        t.push(class, cells);
    }
    t.omitted = a.requests.len() - t.rows.len();
    t
}

/// One row per background job, with its session.
pub fn jobs(a: &Analysis) -> Table {
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
    t
}

/// One decision record per job.
pub fn decisions(a: &Analysis) -> Table {
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
    t
}
