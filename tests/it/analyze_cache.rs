//! Hand-made traces for every prompt-cache miss cause. Block sizes are chosen so token
//! figures are round: a 4000-byte block is 1000 estimated tokens (4 bytes per token); the
//! model is claude-sonnet-4-5 (minimum cacheable 1024 tokens; $3 input, $3.75 5m write,
//! $0.30 read per MTok) unless a test says otherwise.

use serde_json::json;

use agentwire::analyze::{
    analyze_exchanges, Analysis, AnalyzeConfig, MissCause, TtlMode, UsageMode,
};
use agentwire::trace::SourceKind;

use crate::hand_trace::{body_tokens, cc, text, tool, Conv, TraceBuilder};

const M: &str = "claude-sonnet-4-5";

fn analyze(b: &TraceBuilder, ttl: TtlMode) -> Analysis {
    analyze_exchanges(
        &b.exchanges,
        AnalyzeConfig {
            ttl,
            usage: UsageMode::Auto,
            ..AnalyzeConfig::default()
        },
    )
}

/// tools [T1 1000 tok], system [S1 1000 tok, breakpoint], user U1 1000 tok (breakpoint).
fn base() -> Conv {
    let mut c = Conv::new(M);
    c.tools = vec![tool("T1", 4000)];
    c.system = vec![cc(text(4000, 's'), None)];
    c.user(vec![text(4000, 'u')]);
    c
}

/// base + assistant A1 (1000) + user U2 (1000, breakpoint).
fn grow(c: &mut Conv, a: char, u: char) {
    c.assistant(vec![text(4000, a)]);
    c.user(vec![text(4000, u)]);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn cold_start_hit_then_ttl_expired_with_gap() {
    let mut c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 60.0);
    let c2 = c.clone();
    grow(&mut c, 'b', 'w');
    b.send_text(&c, 361.0);
    let a = analyze(&b, TtlMode::Auto);
    let r = &a.requests;
    // 1: cold: breakpoints at 2000 and 3000 tokens → 3000 written.
    assert_eq!((r[0].tokens.read, r[0].tokens.write_5m), (0, 3000));
    assert_eq!(r[0].cause, Some(MissCause::ColdStart));
    assert_eq!(r[0].tokens.uncached, body_tokens(&base()) - 3000);
    // 2: reads the 3000-token prefix (U1 found 2 blocks before the new breakpoint),
    //    writes A1 + U2 = 2000.
    assert_eq!(
        (r[1].tokens.read, r[1].tokens.write_5m, r[1].status.as_str()),
        (3000, 2000, "hit")
    );
    assert_eq!(r[1].tokens.uncached, body_tokens(&c2) - 5000);
    // 3: 301 s after the last use: every entry expired; 5000 cached tokens missed.
    assert_eq!((r[2].tokens.read, r[2].tokens.write_5m), (0, 7000));
    assert_eq!(
        r[2].cause,
        Some(MissCause::TtlExpired {
            gap_s: 301.0,
            ttl_s: 300
        })
    );
    assert_eq!(r[2].miss_tokens, 5000);
    // 5000 × ($3.75 − $0.30) / 1e6
    assert!(
        close(r[2].miss_cost_usd.unwrap(), 0.01725),
        "{:?}",
        r[2].miss_cost_usd
    );
    assert!(close(a.summary.cache_miss_cost_usd, 0.01725));
    assert_eq!(a.summary.cache_miss_tokens, 5000);
    // Cache hit rate: 3000 read of all input tokens.
    let input: u64 = r.iter().map(|x| x.tokens.input()).sum();
    assert_eq!(a.summary.input_tokens, input);
    assert!(close(a.summary.cache_hit_rate, 3000.0 / input as f64));

    // With one-hour TTLs the third request hits the 5000-token prefix.
    let a = analyze(&b, TtlMode::H1);
    let r3 = &a.requests[2];
    assert_eq!(
        (r3.tokens.read, r3.tokens.write_1h, r3.cause.clone()),
        (5000, 2000, None)
    );
}

#[test]
fn tools_changed_names_the_added_tool() {
    let mut c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.tools.push(tool("T2", 4000));
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(
        r.cause,
        Some(MissCause::ToolsChanged {
            added: vec!["T2".into()],
            removed: vec![],
            changed: vec![]
        })
    );
    // Nothing read; the 3000 tokens the first request cached were written again.
    assert_eq!(
        (r.tokens.read, r.tokens.write_5m, r.miss_tokens),
        (0, 6000, 3000)
    );
    assert_eq!(r.status, "miss");
}

#[test]
fn tool_definition_changed_and_removed() {
    let mut c = base();
    c.tools.push(tool("T2", 400));
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.tools = vec![tool("T1", 4004)];
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(
        r.cause,
        Some(MissCause::ToolsChanged {
            added: vec![],
            removed: vec!["T2".into()],
            changed: vec!["T1".into()]
        })
    );
    assert_eq!(r.cause_detail.as_deref(), Some("-T2, ~T1"));
}

#[test]
fn system_changed_names_block_and_offset() {
    let mut c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    let mut s = "s".repeat(3975);
    s.replace_range(100..101, "x");
    c.system = vec![cc(json!({"type":"text","text": s}), None)];
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(
        r.cause,
        Some(MissCause::SystemChanged {
            block: 0,
            offset: 100
        })
    );
    assert_eq!(
        (r.tokens.read, r.tokens.write_5m, r.miss_tokens),
        (0, 5000, 3000)
    );
}

#[test]
fn history_rewritten_names_the_message() {
    let mut c = base();
    grow(&mut c, 'a', 'v');
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    // The assistant's message 1 is edited (same size), the conversation goes on.
    c.messages[1] = json!({"role":"assistant","content":[text(4000, 'A')]});
    grow(&mut c, 'b', 'w');
    b.send_text(&c, 10.0);
    let a = analyze(&b, TtlMode::Auto);
    let r = &a.requests[1];
    assert_eq!(r.thread, "main");
    assert_eq!(r.cause, Some(MissCause::HistoryRewritten { message: 1 }));
    // Tools + system (2000) still read; the first request had 5000 cached: 3000 missed;
    // written: 7000 − 2000.
    assert_eq!(
        (
            r.tokens.read,
            r.tokens.write_5m,
            r.miss_tokens,
            r.status.as_str()
        ),
        (2000, 5000, 3000, "partial")
    );
}

#[test]
fn model_changed() {
    let mut c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.model = "claude-opus-4-1".into();
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(
        r.cause,
        Some(MissCause::ModelChanged {
            from: M.into(),
            to: "claude-opus-4-1".into()
        })
    );
    assert_eq!((r.tokens.read, r.miss_tokens), (0, 3000));
    // Opus 4.1: 3000 × ($18.75 − $1.50) / 1e6
    assert!(
        close(r.miss_cost_usd.unwrap(), 0.05175),
        "{:?}",
        r.miss_cost_usd
    );
}

#[test]
fn params_changed_keeps_tools_and_system() {
    let mut c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.extra.insert(
        "thinking".into(),
        json!({"type":"enabled","budget_tokens":1024}),
    );
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(
        r.cause,
        Some(MissCause::ParamsChanged {
            params: vec!["thinking".into()]
        })
    );
    assert_eq!(
        (r.tokens.read, r.tokens.write_5m, r.miss_tokens),
        (2000, 3000, 1000)
    );
}

#[test]
fn below_minimum_length() {
    let mut c = Conv::new(M);
    c.system = vec![cc(text(400, 's'), None)];
    c.user(vec![text(400, 'u')]);
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.assistant(vec![text(400, 'a')]);
    c.user(vec![text(400, 'v')]);
    b.send_text(&c, 10.0);
    let a = analyze(&b, TtlMode::Auto);
    let (r1, r2) = (&a.requests[0], &a.requests[1]);
    assert_eq!(
        (r1.tokens.read, r1.tokens.write(), r1.cause.clone()),
        (0, 0, None)
    );
    assert_eq!(r1.status, "uncached");
    // Prefix to the last breakpoint: 4 × 100 = 400 < 1024: the cause says why nothing
    // is cached, but nothing could have been, so no tokens are missed and nothing costs
    // extra (issue 31 item 7; it was a 200-token miss billed as input).
    assert_eq!(
        r2.cause,
        Some(MissCause::BelowMinimum {
            tokens: 400,
            minimum: 1024
        })
    );
    assert_eq!(
        (r2.tokens.read, r2.tokens.write(), r2.miss_tokens),
        (0, 0, 0)
    );
    assert_eq!(r2.status, "uncached");
    assert!(close(r2.miss_cost_usd.unwrap(), 0.0));
}

#[test]
fn no_breakpoint() {
    let mut c = base();
    c.system = vec![text(4000, 's')];
    c.cc_last = false;
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    grow(&mut c, 'a', 'v');
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    assert_eq!(r.cause, Some(MissCause::NoBreakpoint));
    assert_eq!(
        (r.tokens.read, r.tokens.write(), r.miss_tokens),
        (0, 0, 3000)
    );
    assert_eq!(r.tokens.uncached, body_tokens(&c));
    assert!(close(r.miss_cost_usd.unwrap(), 3000.0 * 2.7 / 1e6));
}

#[test]
fn lookback_exceeded_after_25_new_blocks() {
    // System 4400 bytes = 1100 tokens (above the 1024 minimum on its own).
    let mut c = Conv::new(M);
    c.system = vec![cc(text(4400, 's'), None)];
    c.user(vec![text(4000, 'u')]);
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    for i in 0..25 {
        if i % 2 == 0 {
            c.assistant(vec![text(400, 'a')]);
        } else {
            c.user(vec![text(400, 'v')]);
        }
    }
    b.send_text(&c, 10.0);
    let r = &analyze(&b, TtlMode::Auto).requests[1];
    // The system entry is read (1100); U1's entry (2100) is 25 blocks before the
    // breakpoint; written: 2100 + 25 × 100 − 1100 = 3500.
    assert_eq!(r.cause, Some(MissCause::LookbackExceeded { blocks: 25 }));
    assert_eq!(
        (r.tokens.read, r.tokens.write_5m, r.miss_tokens),
        (1100, 3500, 1000)
    );
}

#[test]
fn threads_share_the_cache_by_prefix() {
    let c = base();
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    let mut sub = Conv::new(M);
    sub.tools = c.tools.clone();
    sub.system = c.system.clone();
    sub.user(vec![text(4000, 'z')]);
    b.send_text(&sub, 5.0);
    let a = analyze(&b, TtlMode::Auto);
    let r = &a.requests[1];
    assert_eq!(r.thread, "sub-1");
    assert_eq!(
        (
            r.tokens.read,
            r.tokens.write_5m,
            r.cause.clone(),
            r.status.as_str()
        ),
        (2000, 1000, None, "hit")
    );
    assert_eq!(a.summary.threads, 2);
}

#[test]
fn unexplained_when_recorded_usage_says_miss() {
    let mut c = base();
    let mut b = TraceBuilder {
        kind: Some(SourceKind::Pcap),
        ..TraceBuilder::default()
    };
    let reply = vec![json!({"type":"text","text":"ok"})];
    b.send(&c, 0.0, reply.clone(), json!({"input_tokens":10,"cache_creation_input_tokens":3000,"cache_read_input_tokens":0,"output_tokens":5}));
    grow(&mut c, 'a', 'v');
    b.send(&c, 10.0, reply, json!({"input_tokens":10,"cache_creation_input_tokens":5000,"cache_read_input_tokens":0,"output_tokens":5}));
    let a = analyze(&b, TtlMode::Auto);
    let r = &a.requests[1];
    assert_eq!(r.usage, "recorded");
    assert_eq!(r.cause, Some(MissCause::Unexplained));
    assert_eq!(r.miss_tokens, 3000);
    assert_eq!(
        (r.predicted.read, r.tokens.read, r.tokens.write_5m),
        (3000, 0, 5000)
    );
    // Observed wins for cost: 10 × $3 + 5000 × $3.75 + 5 × $15, per MTok.
    assert!(
        close(r.cost_usd.unwrap(), (30.0 + 18750.0 + 75.0) / 1e6),
        "{:?}",
        r.cost_usd
    );
    let g = a.summary.agreement.as_ref().unwrap();
    assert_eq!((g.compared, g.agreed), (2, 1));
    assert_eq!((a.usage_used.recorded, a.usage_used.simulated), (2, 0));
    // The table shows predicted figures and agreement next to the recorded ones.
    let table = agentwire::report::analyze::render(&a, agentwire::report::Format::Table);
    assert!(
        table.contains("pred read") && table.contains("agrees"),
        "{table}"
    );
    // `--usage simulated` ignores the recorded figures.
    let s = analyze_exchanges(
        &b.exchanges,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            ..AnalyzeConfig::default()
        },
    );
    assert_eq!(
        (s.requests[1].tokens.read, s.requests[1].cause.clone()),
        (3000, None)
    );
}
