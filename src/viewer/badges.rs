//! `analyze`'s answers put on the turns they concern: each request row's cost, cache
//! status and miss cause on its exchange; a poll badge on the turn whose response made
//! the poll call (a `redundant` one when `analyze` found its answer unchanged); a job's
//! start on the turn that called it and its notification on the request that carried it.

use std::collections::HashMap;

use crate::analyze::Analysis;
use crate::text::fmt::usd;

use super::model::{Badge, Model};

/// Put `analyze`'s answers on `m`'s turns (cost, cache status, miss cause, poll and job
/// badges) and keep the analysis in `m`.
pub fn attach(m: &mut Model, a: Analysis) {
    apply(m, &a);
    m.analysis = Some(a);
}

/// Apply `a` to `m`'s rows (badges from an earlier analysis are replaced).
fn apply(m: &mut Model, a: &Analysis) {
    for t in &mut m.turns {
        t.badges.retain(|b| b.kind == "error");
    }
    let by_key: HashMap<(&str, u64), usize> = m
        .extra
        .iter()
        .zip(&m.turns)
        .map(|(e, t)| ((e.file_key.as_str(), t.id), t.n))
        .collect();
    let mut rows = Vec::new();
    for r in &a.requests {
        if let Some(&n) = by_key.get(&(r.file.as_str(), r.exchange)) {
            rows.push((n, r));
        }
    }
    for (n, r) in rows {
        let t = &mut m.turns[n];
        t.cost_usd = r.cost_usd;
        t.cache = Some(r.status.clone());
        t.cause = r.cause_detail.clone();
        t.cause_name = r.cause.as_ref().map(|c| c.name().to_string());
        t.miss_cost_usd = r.miss_cost_usd;
        if r.status == "miss" || r.status == "partial" {
            let cost = r.miss_cost_usd.map_or_else(|| "unpriced".to_string(), usd);
            let cause = r.cause_detail.as_deref().unwrap_or("unknown cause");
            push(
                m,
                n,
                "miss",
                format!("{}: {cause}, +{cost}", r.status),
                None,
            );
        }
    }
    polls(m, a);
    jobs(m, a);
}

fn push(m: &mut Model, n: usize, kind: &'static str, text: String, episode: Option<usize>) {
    m.turns[n].badges.push(Badge {
        kind,
        text,
        episode,
    });
}

/// A badge per poll call of each episode, on the turn that made the call.
fn polls(m: &mut Model, a: &Analysis) {
    for (i, e) in a.episodes.iter().enumerate() {
        for (k, call) in e.calls.iter().enumerate() {
            let Some(n) = m.turn_of_call(call) else {
                continue;
            };
            let redundant = e.redundant_calls.iter().any(|r| &r.call == call);
            let text = format!(
                "poll {}/{} of {} {}{}",
                k + 1,
                e.calls.len(),
                e.tool,
                e.target,
                if redundant { " (redundant)" } else { "" }
            );
            let kind = if redundant { "redundant" } else { "poll" };
            push(m, n, kind, text, Some(i));
        }
    }
}

/// A badge where each job started and where its end was notified.
fn jobs(m: &mut Model, a: &Analysis) {
    for j in &a.jobs {
        let job = &j.job;
        if let Some(n) = m.turn_of_call(&job.start_call) {
            push(
                m,
                n,
                "job_started",
                format!("job {} started: {}", job.reference, job.tool),
                None,
            );
        }
        let Some(at) = job.notified_at else { continue };
        let at = at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let thread = &job.thread_label;
        let found = m.turns.iter().position(|t| {
            (thread == &t.thread || thread.ends_with(&format!("/{}", t.thread))) && t.time >= at
        });
        if let Some(n) = found {
            let state = format!("{:?}", job.state).to_lowercase();
            push(
                m,
                n,
                "job_notified",
                format!("job {} notified: {state}", job.reference),
                None,
            );
        }
    }
}
