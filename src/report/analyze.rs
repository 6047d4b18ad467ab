//! Rendering of `agentwire analyze`: the summary first (polls, redundant polls, wasted
//! tokens and $, cache hit rate, misses by cause, jobs by state), then the per-thread,
//! per-episode, per-request and per-job tables and the decision records. Terminal table,
//! Markdown, or JSON (the [`Analysis`] itself; schema `schemas/analyze.schema.json`).

use crate::analyze::Analysis;

use super::{markdown_table, Format};

/// Render an analysis.
pub fn render(a: &Analysis, format: Format) -> String {
    match format {
        Format::Json => super::json(a),
        Format::Table | Format::Markdown => text(a, format == Format::Markdown),
    }
}

fn usd(v: f64) -> String {
    // `+ 0.0` turns a negative zero (an empty float sum) into zero.
    format!("${:.4}", v + 0.0)
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "-".to_string(), T::to_string)
}

struct Section {
    title: String,
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

/// The report's sections, in order.
fn sections(a: &Analysis) -> Vec<Section> {
    vec![
        summary_section(a),
        misses_section(a),
        threads_section(a),
        episodes_section(a),
        requests_section(a),
        jobs_section(a),
        decisions_section(a),
    ]
}

/// The summary: polls, waste, cache figures, cost, jobs by state.
fn summary_section(a: &Analysis) -> Section {
    let s = &a.summary;
    let reasons: Vec<String> = a
        .usage_used
        .reasons
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    let mut sum = vec![
        vec!["requests".into(), s.requests.to_string()],
        vec!["sessions".into(), s.sessions.to_string()],
        vec!["threads".into(), s.threads.to_string()],
        vec!["polls".into(), s.polls.to_string()],
        vec!["redundant polls".into(), s.redundant_polls.to_string()],
        vec![
            "polls after notification".into(),
            s.polls_after_notified.to_string(),
        ],
        vec![
            "polls while notification pending".into(),
            s.polls_while_pending.to_string(),
        ],
        vec![
            "poll tokens / cost".into(),
            format!("{} / {}", s.poll_tokens, usd(s.poll_cost_usd)),
        ],
        vec![
            "wasted tokens / cost (redundant polls)".into(),
            format!("{} / {}", s.wasted_tokens, usd(s.wasted_cost_usd)),
        ],
        vec![
            "cache hit rate (read / input tokens)".into(),
            pct(s.cache_hit_rate),
        ],
        vec![
            "input / read / write / output tokens".into(),
            format!(
                "{} / {} / {} / {}",
                s.input_tokens, s.cache_read_tokens, s.cache_write_tokens, s.output_tokens
            ),
        ],
        vec![
            "cache miss tokens / cost (excl. cold start)".into(),
            format!("{} / {}", s.cache_miss_tokens, usd(s.cache_miss_cost_usd)),
        ],
        vec!["total cost".into(), usd(s.total_cost_usd)],
        vec!["usage figures from".into(), reasons.join("; ")],
    ];
    if !s.unpriced_models.is_empty() {
        sum.push(vec![
            "unpriced models (cost left out)".into(),
            s.unpriced_models.join(", "),
        ]);
    }
    let jobs: Vec<String> = s
        .jobs_by_state
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    sum.push(vec![
        "jobs by state".into(),
        if jobs.is_empty() {
            "-".into()
        } else {
            jobs.join(", ")
        },
    ]);
    if let Some(g) = &s.agreement {
        sum.push(vec![
            "predicted vs observed agreement".into(),
            format!("{}/{} ({})", g.agreed, g.compared, pct(g.rate)),
        ]);
    }
    Section {
        title: format!(
            "Summary (usage: {} — {} simulated, {} recorded; ttl {}; prices {} as of {})",
            serde_json::to_value(a.usage_mode)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            a.usage_used.simulated,
            a.usage_used.recorded,
            serde_json::to_value(a.ttl)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            a.prices.source,
            a.prices.date
        ),
        header: vec!["metric", "value"],
        rows: sum,
    }
}

/// Cache misses grouped by cause.
fn misses_section(a: &Analysis) -> Section {
    let s = &a.summary;
    Section {
        title: "Cache misses by cause".into(),
        header: vec!["cause", "requests", "missed tokens", "extra cost"],
        rows: s
            .misses_by_cause
            .iter()
            .map(|c| {
                vec![
                    c.cause.clone(),
                    c.requests.to_string(),
                    c.tokens.to_string(),
                    usd(c.cost_usd),
                ]
            })
            .collect(),
    }
}

/// One row per thread.
fn threads_section(a: &Analysis) -> Section {
    Section {
        title: "Threads".into(),
        header: vec![
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
        rows: a
            .threads
            .iter()
            .map(|t| {
                vec![
                    t.session.clone(),
                    t.thread.clone(),
                    t.requests.to_string(),
                    t.polls.to_string(),
                    t.redundant_polls.to_string(),
                    t.tokens.input().to_string(),
                    t.tokens.read.to_string(),
                    t.tokens.write().to_string(),
                    t.tokens.output.to_string(),
                    pct(t.cache_hit_rate),
                    t.miss_tokens.to_string(),
                    usd(t.miss_cost_usd),
                    usd(t.cost_usd),
                ]
            })
            .collect(),
    }
}

/// One row per polling episode.
fn episodes_section(a: &Analysis) -> Section {
    Section {
        title: "Poll episodes".into(),
        header: vec![
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
        rows: a
            .episodes
            .iter()
            .map(|e| {
                vec![
                    e.thread.clone(),
                    e.kind.clone(),
                    e.tool.clone(),
                    e.target.chars().take(60).collect(),
                    opt(&e.job),
                    e.polls.to_string(),
                    e.redundant.to_string(),
                    e.after_notified.to_string(),
                    e.while_pending.to_string(),
                    opt(&e.mean_interval_s.map(|v| format!("{v:.1}"))),
                    opt(&e.job_duration_s.map(|v| format!("{v:.1}"))),
                    (e.tokens.input() + e.tokens.output).to_string(),
                    usd(e.cost_usd),
                    usd(e.wasted_cost_usd),
                ]
            })
            .collect(),
    }
}

/// One row per background job.
fn jobs_section(a: &Analysis) -> Section {
    Section {
        title: "Background jobs".into(),
        header: vec![
            "job",
            "kind",
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
        rows: a
            .jobs
            .iter()
            .map(|j| {
                let k = serde_json::to_value(j.job.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string));
                vec![
                    j.job.reference.clone(),
                    k.unwrap_or_default(),
                    j.job.thread_label.clone(),
                    j.job.tool.clone(),
                    j.job.state.name().to_string(),
                    opt(&j.job.exit_code),
                    j.job.started_at.format("%H:%M:%S%.3f").to_string(),
                    opt(&j
                        .job
                        .notified_at
                        .map(|t| t.format("%H:%M:%S%.3f").to_string())),
                    opt(&j.duration_s.map(|v| format!("{v:.1}"))),
                    j.job.polls.to_string(),
                    opt(&j.job.duplicate_of),
                    opt(&j.job.artifact),
                ]
            })
            .collect(),
    }
}

/// One decision record per job.
fn decisions_section(a: &Analysis) -> Section {
    Section {
        title: "Decision records".into(),
        header: vec![
            "job_reference",
            "thread",
            "observed_state",
            "acceptance_result",
            "decision",
            "unresolved_fact",
        ],
        rows: a
            .decisions
            .iter()
            .map(|d| {
                let thread = a.jobs.iter().find(|j| j.job.reference == d.job_reference);
                vec![
                    d.job_reference.clone(),
                    thread.map_or_else(|| "-".to_string(), |j| j.job.thread_label.clone()),
                    d.observed_state.clone(),
                    d.acceptance_result.clone(),
                    d.decision.clone(),
                    opt(&d.unresolved_fact),
                ]
            })
            .collect(),
    }
}

fn text(a: &Analysis, md: bool) -> String {
    let mut out = String::new();
    for s in sections(a) {
        if md {
            out.push_str(&format!("## {}\n\n", super::printable(&s.title)));
            if s.rows.is_empty() {
                out.push_str("(none)\n\n");
            } else {
                out.push_str(&markdown_table(&s.header, &s.rows));
                out.push('\n');
            }
        } else {
            out.push_str(&format!("{}\n", super::printable(&s.title)));
            if s.rows.is_empty() {
                out.push_str("  (none)\n\n");
            } else {
                let mut t = super::table(&s.header);
                for r in &s.rows {
                    super::add_row(&mut t, r.clone());
                }
                out.push_str(&format!("{t}\n\n"));
            }
        }
    }
    out.push_str(&super::mcp::analysis_text(&a.mcp, md));
    out
}

/// Per-request table; with recorded cache figures, predicted read/write and agreement too.
fn requests_section(a: &Analysis) -> Section {
    let compare = a.summary.agreement.is_some();
    let mut header = vec![
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
        header.extend(["pred read", "pred write", "agrees"]);
    }
    let rows = a
        .requests
        .iter()
        .map(|r| {
            let mut row = vec![
                r.seq.to_string(),
                r.session.clone(),
                r.thread.clone(),
                r.at.format("%H:%M:%S%.3f").to_string(),
                r.usage.clone(),
                r.tokens.uncached.to_string(),
                r.tokens.read.to_string(),
                r.tokens.write().to_string(),
                r.tokens.output.to_string(),
                r.status.clone(),
                opt(&r.cause.as_ref().map(|c| c.name())),
                r.cause_detail
                    .clone()
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| "-".into()),
                r.miss_tokens.to_string(),
                r.cost_usd.map_or_else(|| "unpriced".to_string(), usd),
            ];
            if compare {
                row.push(r.predicted.read.to_string());
                row.push((r.predicted.write_5m + r.predicted.write_1h).to_string());
                row.push(opt(&r.agrees.map(|b| if b { "yes" } else { "no" })));
            }
            row
        })
        .collect();
    Section {
        title: "Requests".into(),
        header,
        rows,
    }
}
