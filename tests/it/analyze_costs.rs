//! Costs that add up (issue 31, items 5–8): recorded usage bounds a miss, a redundant poll
//! that also missed the cache is counted once, nothing that could not be cached is a miss
//! with a cost, a TTL billed other than asked is said; and over every trace of the test
//! corpus the cost attribution sums to the total cost to the cent.

use std::path::{Path, PathBuf};

use serde_json::json;

use agentwire::analyze::{analyze_exchanges, Analysis, AnalyzeConfig, MissCause, UsageMode};
use agentwire::trace::SourceKind;

use crate::analyze_polls::session;
use crate::hand_trace::{at, cc, text, tool, tool_use, Conv, TraceBuilder};

fn analyze(xs: &[agentwire::trace::Exchange], usage: UsageMode) -> Analysis {
    analyze_exchanges(
        xs,
        AnalyzeConfig {
            usage,
            ..AnalyzeConfig::default()
        },
    )
}

/// The parts of the attribution, checked against the total: each part non-negative, their
/// sum the total cost to the cent, and no request's miss extra above its own cost.
fn assert_counted_once(a: &Analysis, what: &str) {
    let c = &a.summary.cost_attribution;
    let parts: f64 = c.parts().iter().map(|(_, v, _)| v).sum();
    for (part, v, _) in c.parts() {
        assert!(v >= -1e-12, "{what}: {part} is negative: {v}");
    }
    assert!(
        (parts - a.summary.total_cost_usd).abs() < 0.005,
        "{what}: the parts add to {parts}, the total is {}",
        a.summary.total_cost_usd
    );
    assert!(
        (c.total_usd - a.summary.total_cost_usd).abs() < 1e-9,
        "{what}"
    );
    // The overlap the attribution removes: redundant polls plus every miss cause were
    // 170% of the total on a real session.
    let misses: f64 = a.summary.misses_by_cause.iter().map(|m| m.cost_usd).sum();
    assert!(
        misses + a.summary.wasted_cost_usd <= a.summary.total_cost_usd + 0.005,
        "{what}: misses {misses} + redundant polls {} exceed the total {}",
        a.summary.wasted_cost_usd,
        a.summary.total_cost_usd
    );
    for r in &a.requests {
        if let (Some(m), Some(cost)) = (r.miss_cost_usd, r.cost_usd) {
            assert!(
                m <= cost + 1e-12,
                "{what}#{}: miss {m} > cost {cost}",
                r.exchange
            );
        }
    }
}

/// Item 5. A session's first request that *read* 2,500 cached tokens (another session
/// wrote them: Claude Code's `scope: global` system block) and wrote 500: the simulation
/// calls it a cold start that wrote the whole 3,000-token prefix, but the recorded usage
/// says it wrote 500, so it missed 500, not 3,000 (on main it was the predicted write,
/// and the extra cost exceeded what the request cost).
/// Cost by hand (claude-sonnet-4-5, $/MTok: input 3, write 3.75, read 0.30, output 15):
/// 10 × 3 + 500 × 3.75 + 2,500 × 0.30 + 5 × 15 = 2,730 → $0.00273; the miss extra is
/// 500 × (3.75 − 0.30) = 1,725 → $0.001725.
#[test]
fn a_cold_start_that_read_another_sessions_cache_misses_only_what_it_wrote() {
    let mut c = Conv::new("claude-sonnet-4-5");
    c.tools = vec![tool("T1", 4000)];
    c.system = vec![cc(text(4000, 's'), None)];
    c.user(vec![text(4000, 'u')]);
    let mut b = TraceBuilder {
        kind: Some(SourceKind::Pcap),
        ..TraceBuilder::default()
    };
    b.send(
        &c,
        0.0,
        vec![json!({"type":"text","text":"ok"})],
        json!({"input_tokens":10,"cache_creation_input_tokens":500,"cache_read_input_tokens":2500,"output_tokens":5}),
    );
    let a = analyze(&b.exchanges, UsageMode::Auto);
    let r = &a.requests[0];
    assert_eq!(r.usage, "recorded");
    assert!(
        r.predicted.write_5m >= 3000,
        "the simulation wrote the prefix"
    );
    assert_eq!(
        (r.cause.clone(), r.miss_tokens),
        (Some(MissCause::ColdStart), 500)
    );
    assert!((r.cost_usd.unwrap() - 0.00273).abs() < 1e-12);
    assert!((r.miss_cost_usd.unwrap() - 0.001725).abs() < 1e-12);
    assert_counted_once(&a, "cold start");
}

/// Item 6. The same MCP status poll session as `analyze_polls`, but the requests from
/// the 3rd on come 400 s later (past the 5-minute TTL): request 3, which the redundant
/// poll p2 triggered, misses the cache (`ttl_expired`). Its extra over a hit belongs to
/// the miss; the redundant poll is charged what the call cost beyond that (on main the
/// poll was charged the whole call, so the miss extra was counted twice).
#[test]
fn a_redundant_poll_that_also_missed_the_cache_is_counted_once() {
    let get = |id: &str| {
        vec![tool_use(
            id,
            "mcp__jobs__get_status",
            json!({"job_id": "j1"}),
        )]
    };
    let run = r#"{"job_id": "j1", "status": "running"}"#;
    let fin = r#"{"job_id": "j1", "status": "finished"}"#;
    let mut xs = session(&[
        (
            vec![tool_use("s0", "mcp__jobs__start_job", json!({"name": "b"}))],
            vec![("s0", r#"{"job_id": "j1", "status": "accepted"}"#)],
            None,
        ),
        (get("p1"), vec![("p1", run)], None),
        (get("p2"), vec![("p2", run)], None),
        (get("p3"), vec![("p3", fin)], None),
        (vec![json!({"type":"text","text":"done"})], vec![], None),
    ]);
    for x in xs.iter_mut().skip(3) {
        let s = (x.started_at - at(0.0)).num_milliseconds() as f64 / 1000.0 + 400.0;
        x.started_at = at(s);
        x.ended_at = Some(at(s + 0.5));
    }
    let a = analyze(&xs, UsageMode::Simulated);
    let r3 = &a.requests[3];
    assert!(
        matches!(r3.cause, Some(MissCause::TtlExpired { .. })),
        "{:?}",
        r3.cause
    );
    let (cost, miss) = (r3.cost_usd.unwrap(), r3.miss_cost_usd.unwrap());
    assert!(miss > 0.0);
    assert_eq!(a.summary.redundant_polls, 1);
    // p2 is the only result request 3 carried: the poll's waste is the call less its miss.
    assert!(
        (a.summary.wasted_cost_usd - (cost - miss)).abs() < 1e-12,
        "{} vs {}",
        a.summary.wasted_cost_usd,
        cost - miss
    );
    let c = &a.summary.cost_attribution;
    assert!((c.redundant_polls_usd - (cost - miss)).abs() < 1e-12);
    assert!((c.cache_misses_usd["ttl_expired"] - miss).abs() < 1e-12);
    assert_counted_once(&a, "poll with a miss");
}

/// Item 7. claude-opus-4-5 caches nothing below 4,096 tokens; a 1,766-token-ish prompt
/// asked twice cached nothing and could never have: no missed tokens, no cost, status
/// `uncached` (on main: a `below_minimum` miss of the repeated tokens, with a cost).
#[test]
fn a_prompt_below_the_models_minimum_is_no_miss_and_costs_nothing_extra() {
    let mut c = Conv::new("claude-opus-4-5");
    c.system = vec![cc(text(4000, 's'), None)];
    c.user(vec![text(2000, 'u')]);
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.assistant(vec![text(400, 'a')]);
    c.user(vec![text(400, 'v')]);
    b.send_text(&c, 10.0);
    let a = analyze(&b.exchanges, UsageMode::Auto);
    let r = &a.requests[1];
    assert!(matches!(
        r.cause,
        Some(MissCause::BelowMinimum { minimum: 4096, .. })
    ));
    assert_eq!(
        (r.miss_tokens, r.miss_cost_usd, r.status.as_str()),
        (0, Some(0.0), "uncached")
    );
    assert!(
        a.summary.misses_by_cause.is_empty(),
        "{:?}",
        a.summary.misses_by_cause
    );
    assert_eq!(a.summary.cache_miss_tokens, 0);
    // The audit's summary says so, and lists no miss (a new user saw "5 cache misses
    // beyond cold starts () cost 0 tokens" when every one was below the minimum).
    use agentwire::report::{audit_page, meta::InputMeta, DocFormat};
    let md = audit_page::render(
        &a,
        vec![InputMeta::of(
            "t.jsonl",
            &agentwire::trace::Trace::default(),
        )],
        DocFormat::Markdown,
        &audit_page::Options::default(),
    );
    assert!(!md.contains("()"), "{md}");
    assert!(md.contains("no cache misses beyond cold starts"), "{md}");
    assert!(
        md.contains("1 request was below the model's minimum cacheable length"),
        "{md}"
    );
}

/// Item 8. Breakpoints that ask for the 1-hour TTL, billed at the 5-minute rate
/// (`cache_creation.ephemeral_5m_input_tokens`): the prediction does not agree, and the
/// analysis says so with the tokens and the price difference: 3,000 tokens ×
/// (3.75 − 6.00) $/MTok = −$0.00675 (billed less; the entries expire after 5 minutes).
#[test]
fn one_hour_ttl_asked_and_five_minutes_billed_is_a_disagreement_with_its_price() {
    let mut c = Conv::new("claude-sonnet-4-5");
    c.cc_last = false;
    c.tools = vec![tool("T1", 4000)];
    c.system = vec![text(4000, 's')];
    c.user(vec![cc(text(4000, 'u'), Some("1h"))]);
    let mut b = TraceBuilder {
        kind: Some(SourceKind::Pcap),
        ..TraceBuilder::default()
    };
    b.send(
        &c,
        0.0,
        vec![json!({"type":"text","text":"ok"})],
        json!({"input_tokens":10,"cache_creation_input_tokens":3000,"cache_read_input_tokens":0,
               "cache_creation":{"ephemeral_5m_input_tokens":3000,"ephemeral_1h_input_tokens":0},
               "output_tokens":5}),
    );
    let a = analyze(&b.exchanges, UsageMode::Auto);
    let r = &a.requests[0];
    assert!(r.predicted.write_1h > 0, "the breakpoint asked for 1 hour");
    assert_eq!(r.agrees, Some(false));
    let t = r.ttl_billed.as_ref().expect("the TTL billed is said");
    assert_eq!((t.asked, t.billed, t.tokens), ("1h", "5m", 3000));
    assert!((t.cost_difference_usd.unwrap() + 0.00675).abs() < 1e-12);
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("asked for 1h cache writes")
                && w.contains("3000 tokens were billed at the 5m rate")
                && w.contains(&format!("({} less)", agentwire::text::fmt::usd(0.00675)))),
        "{:?}",
        a.warnings
    );
}

/// Every trace file of the corpus: agentwire's own samples and the shared real captures.
fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("captures"), root.join("../shared/captures")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("jsonl" | "pcap" | "pcapng")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Item 6 as a property: over every trace of the corpus, with recorded and with simulated
/// usage, the attributed dollars sum to the total cost to the cent.
#[test]
fn over_every_corpus_trace_the_attributed_dollars_sum_to_the_total() {
    let files = corpus();
    assert!(files.len() >= 20, "the corpus is there: {}", files.len());
    let mut priced = 0;
    for f in &files {
        let Ok(t) = agentwire::input::open_trace(f) else {
            continue;
        };
        for usage in [UsageMode::Auto, UsageMode::Simulated] {
            let a = analyze(&t.exchanges, usage);
            if a.summary.total_cost_usd > 0.0 {
                priced += 1;
            }
            assert_counted_once(&a, &format!("{} ({usage:?})", f.display()));
        }
    }
    assert!(priced >= 20, "{priced} priced analyses");
}
