//! Numbers read from a trace are range-checked (issue 10, kind 15): crafted chunk offsets
//! and lengths, huge recorded delays, and usage figures up to `u64::MAX` never panic or hang
//! a replay, `show` or `analyze`, and totals saturate instead of overflowing.

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig, PriceTable, TtlMode, UsageMode};
use agentwire::capture::server::playback::{pieces, Timing, MAX_DELAY};
use agentwire::trace::Exchange;
use proptest::prelude::*;

fn exchange(id: u64, usage: [u64; 4], chunks: Vec<(u64, u64)>, end_s: i64) -> Exchange {
    let req = br#"{"model":"claude-sonnet-4-5","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}"#;
    let resp = serde_json::json!({
        "type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],
        "stop_reason":"end_turn",
        "usage":{"input_tokens":usage[0],"output_tokens":usage[1],
                 "cache_creation_input_tokens":usage[2],"cache_read_input_tokens":usage[3]}
    });
    let mut x = crate::common::messages_exchange(
        id,
        1_700_000_000 + id as i64,
        req,
        "application/json",
        serde_json::to_vec(&resp).unwrap(),
    );
    x.ended_at = chrono::DateTime::from_timestamp(1_700_000_000i64.saturating_add(end_s), 0);
    x.response.as_mut().unwrap().chunks = chunks;
    x
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trace_numbers_never_panic(
        usage in prop::array::uniform4(prop_oneof![any::<u64>(), Just(u64::MAX), 0u64..10_000]),
        chunks in prop::collection::vec((any::<u64>(), any::<u64>()), 0..6),
        end_s in prop_oneof![any::<i32>().prop_map(i64::from), Just(0i64)],
        body_len in 0usize..10_000,
        speed in prop_oneof![Just(Timing::Recorded), Just(Timing::None), (0.001f64..1e6).prop_map(Timing::Speed)],
    ) {
        let xs: Vec<Exchange> = (0..3).map(|i| exchange(i, usage, chunks.clone(), end_s)).collect();
        for usage_mode in [UsageMode::Recorded, UsageMode::Auto] {
            let a = analyze_exchanges(&xs, AnalyzeConfig {
                ttl: TtlMode::Auto,
                usage: usage_mode,
                prices: PriceTable::builtin(),
            });
            prop_assert!(a.summary.total_cost_usd.is_finite());
        }
        agentwire::report::show::rows(&agentwire::trace::Trace {
            exchanges: xs.clone(),
            ..Default::default()
        });
        let limit = xs[0].duration_us().and_then(|d| u64::try_from(d).ok());
        let p = pieces(body_len, &chunks, limit, speed);
        let mut last = std::time::Duration::ZERO;
        let mut at = 0;
        for (d, r) in &p {
            prop_assert!(*d <= MAX_DELAY && *d >= last, "delays only move forward, bounded");
            prop_assert!(r.start == at && r.end <= body_len && r.start <= r.end);
            last = *d;
            at = r.end;
        }
        prop_assert_eq!(at, body_len, "the pieces cover the body");
    }
}

/// Usage figures above the bound are clamped and said so (exit 3 with a warning).
#[test]
fn absurd_usage_is_clamped_and_reported() {
    let xs = vec![exchange(0, [u64::MAX; 4], Vec::new(), 1)];
    let a = analyze_exchanges(
        &xs,
        AnalyzeConfig {
            ttl: TtlMode::Auto,
            usage: UsageMode::Recorded,
            prices: PriceTable::builtin(),
        },
    );
    assert!(
        a.inputs[0].bad_bodies.iter().any(|b| b.contains("clamped")),
        "{:?}",
        a.inputs
    );
    assert!(a.summary.total_cost_usd.is_finite());
}

/// A price file with a negative or absurd price was accepted (costs went negative or
/// infinite); it is refused on load, naming the model and field.
#[test]
fn price_files_are_validated_on_load() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("prices.json");
    let mut t = serde_json::to_value(PriceTable::builtin()).unwrap();
    t["models"][0]["output"] = serde_json::json!(-15.0);
    std::fs::write(&p, serde_json::to_vec(&t).unwrap()).unwrap();
    let Err(e) = PriceTable::from_file(&p) else {
        panic!("a negative price was accepted")
    };
    let e = e.to_string();
    assert!(e.contains("output") && e.contains("-15"), "{e}");
    t["models"][0]["output"] = serde_json::json!(1e300);
    std::fs::write(&p, serde_json::to_vec(&t).unwrap()).unwrap();
    assert!(PriceTable::from_file(&p).is_err());
}

/// A trace at `path` of one Messages exchange per usage object, ids from 0, each answered
/// by a message holding that `usage`.
fn usage_trace(path: &std::path::Path, usages: &[serde_json::Value]) {
    use agentwire::trace::{Context, TraceWriter};
    let req = br#"{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    for (id, usage) in usages.iter().enumerate() {
        let resp = serde_json::json!({"type":"message","role":"assistant",
            "content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":usage});
        let x = crate::common::messages_exchange(
            id as u64,
            1_700_000_000 + id as i64,
            req,
            "application/json",
            serde_json::to_vec(&resp).unwrap(),
        );
        w.write_exchange(&x).unwrap();
    }
    w.finish().unwrap();
}

/// Found by an adversarial test: usage figures of -5, 1e30 and "12" were read as 0 (or
/// clamped) by `show` without a warning, and `analyze` named only a clamped one; a HAR
/// response status of 70000 became "no response" and its body was dropped. Every odd
/// number is now named, per exchange, and the run is degraded (exit 3).
#[test]
fn odd_numbers_in_traces_and_imports_are_named_not_coerced_silently() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.jsonl");
    usage_trace(
        &path,
        &[
            serde_json::json!({"input_tokens": -5, "output_tokens": 3}),
            serde_json::json!({"input_tokens": 5, "output_tokens": 1e30}),
            serde_json::json!({"input_tokens": "12", "output_tokens": 3}),
            serde_json::json!({"input_tokens": 4, "output_tokens": 3}),
        ],
    );
    let f = path.to_str().unwrap();
    for args in [vec!["show", f], vec!["analyze", f, "--format", "json"]] {
        let o = crate::common::agentwire(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        for (id, named) in [
            (0, "usage.input_tokens is -5"),
            (1, "usage.output_tokens is 1e"),
            (2, "usage.input_tokens is \"12\""),
        ] {
            assert!(
                err.lines()
                    .any(|l| l.contains(&format!("exchange #{id}:")) && l.contains(named)),
                "{args:?} did not name {named} of exchange #{id}:\n{err}"
            );
        }
        assert!(!err.contains("exchange #3:"), "{err}");
    }
    // analyze: the unreadable figures are not counted (3+0+3+3 output tokens would be 9
    // with 1e30 read as 0; it is clamped to 2^32 instead, and said so above).
    let o = crate::common::agentwire(&["analyze", f, "--format", "json", "--usage", "recorded"]);
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["summary"]["output_tokens"], 3 + (1u64 << 32) + 3 + 3);

    // The second round: a string, float or null status dropped the whole entry.
    let odd = [
        serde_json::json!(70000),
        serde_json::json!("200"),
        serde_json::json!(200.5),
        serde_json::Value::Null,
    ];
    let entries: Vec<serde_json::Value> = odd
        .iter()
        .map(|status| {
            serde_json::json!({"startedDateTime": "2026-11-29T12:00:00.000Z", "time": 1,
                "request": {"method": "POST", "url": "https://h/v1/messages", "headers": [],
                    "postData": {"mimeType": "application/json", "text": "{}"}},
                "response": {"status": status, "headers": [],
                    "content": {"size": 2, "mimeType": "application/json", "text": "{}"}},
                "timings": {}})
        })
        .collect();
    let har = serde_json::json!({"log": {"version": "1.2",
        "creator": {"name": "t", "version": "1"}, "entries": entries}});
    let har_path = dir.path().join("s.har");
    std::fs::write(&har_path, har.to_string()).unwrap();
    let t = agentwire::input::open_trace(&har_path).unwrap();
    assert_eq!(t.exchanges.len(), odd.len(), "every entry is kept");
    for (x, status) in t.exchanges.iter().zip(&odd) {
        let r = x.response.as_ref().expect("the response is kept");
        assert_eq!((r.status, r.body.bytes.as_slice()), (0, &b"{}"[..]));
        let named = if status.is_null() {
            "response status".to_string()
        } else {
            format!("the file says {status}, not an HTTP status code")
        };
        assert!(
            x.source.missing.iter().any(|m| m.contains(&named)),
            "{named}: {:?}",
            x.source.missing
        );
        assert!(x.error.is_none(), "{:?}", x.error);
    }
}

/// Found by a second adversarial round: past the listed few, problems were summed up as
/// "N unreadable lines … skipped", though exchanges with a bad usage figure are kept.
#[test]
fn many_response_problems_are_summed_up_as_kept_exchanges_not_skipped_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.jsonl");
    usage_trace(
        &path,
        &vec![serde_json::json!({"input_tokens": -1, "output_tokens": 1}); 6],
    );
    let o = crate::common::agentwire(&["show", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    let last = err.lines().last().unwrap();
    assert!(
        last.contains("6 exchanges with a bad part (kept) in all (3 more not listed)"),
        "{err}"
    );
    assert!(!err.contains("unreadable"), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        rows.as_array()
            .map(Vec::len)
            .or_else(|| rows["exchanges"].as_array().map(Vec::len)),
        Some(6)
    );
}
