//! Diff of two generated ~1 MB request bodies (200 tools, a long system prompt, 500
//! messages): parse both, normalize, and compare every part. Goal: < 20 ms (issue 15).
//! Run: `cargo bench --bench diff`. `AGENTWIRE_BENCH_WRITE=DIR` only writes the two bodies
//! to `DIR/a.json` and `DIR/b.json` (to time `agentwire diff` as a whole process).
//! Each timed pass starts with an empty parse memo ([`agentwire::api::memo::forget`]), as a
//! new process would.

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

use agentwire::api::normalize::Normalizer;
use agentwire::diff::{diff_requests, RequestSide};

/// A request body of about 1 MB; `variant` 1 changes a few tools, one system line and
/// adds messages, as a new CLI version would.
fn body(variant: u32) -> Vec<u8> {
    let words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ";
    let tools: Vec<Value> = (0..200)
        .map(|i| {
            let mut desc = format!("Tool number {i}. ");
            desc.push_str(&words.repeat(34));
            if variant == 1 && i % 20 == 0 {
                desc.push_str("A new sentence in this version.");
            }
            let mut props = serde_json::Map::new();
            for p in 0..8 {
                props.insert(
                    format!("param_{p}"),
                    json!({"type": if variant == 1 && i % 40 == 0 && p == 0 { "integer" } else { "string" },
                           "description": format!("Parameter {p} of tool {i}: {}", &words[..40])}),
                );
            }
            json!({"name": format!("Tool{i}"), "description": desc,
                   "input_schema": {"type": "object", "properties": props, "required": ["param_0"]}})
        })
        .collect();
    let mut system_text = String::new();
    for l in 0..1500 {
        let v = if variant == 1 && l == 700 {
            "changed"
        } else {
            "stable"
        };
        system_text.push_str(&format!(
            "Line {l} of the system prompt is {v}: {}\n",
            &words[..30]
        ));
    }
    system_text
        .push_str("Session 11111111-2222-3333-4444-555555555555; Today's date is 2026-01-01.\n");
    let n_messages = if variant == 1 { 500 } else { 496 };
    let messages: Vec<Value> = (0..n_messages)
        .map(|m| {
            let role = if m % 2 == 0 { "user" } else { "assistant" };
            let text = if m % 10 == 0 {
                format!(
                    "<system-reminder>\nReminder {m}: {}\n</system-reminder>",
                    words.repeat(6)
                )
            } else {
                format!("Message {m}: {}", words.repeat(6))
            };
            json!({"role": role, "content": [{"type": "text", "text": text}]})
        })
        .collect();
    let v = json!({"model": "m", "max_tokens": 32000 + variant,
        "system": [{"type": "text", "text": "billing"}, {"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}],
        "tools": tools, "messages": messages, "stream": true,
        "metadata": {"user_id": format!("device {}", "ab".repeat(32))}});
    serde_json::to_vec(&v).unwrap()
}

fn bench(c: &mut Criterion) {
    let (a, b) = (body(0), body(1));
    if let Some(dir) = std::env::var_os("AGENTWIRE_BENCH_WRITE") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::write(dir.join("a.json"), &a).unwrap();
        std::fs::write(dir.join("b.json"), &b).unwrap();
        eprintln!(
            "wrote {} and {} bytes to {}/{{a,b}}.json",
            a.len(),
            b.len(),
            dir.display()
        );
        std::process::exit(0);
    }
    eprintln!("body sizes: A {} bytes, B {} bytes", a.len(), b.len());
    let headers = vec![("anthropic-beta".to_string(), "x,y".to_string())];
    let norm = Normalizer::defaults();
    let side = |label: &str, body: &'static [u8]| RequestSide {
        label: label.into(),
        exchange: Some(0),
        session: Some("s1".into()),
        thread: Some("main".into()),
        headers: Box::leak(headers.clone().into_boxed_slice()),
        body,
    };
    let (a, b): (&'static [u8], &'static [u8]) = (a.leak(), b.leak());
    let (sa, sb) = (side("a", a), side("b", b));
    let d = diff_requests(&sa, &sb, &norm).unwrap();
    assert_eq!(d.tools.changed.len(), 10);
    c.bench_function("parse 2 x 1 MB requests (part of the diff)", |bench| {
        bench.iter(|| {
            agentwire::api::memo::forget();
            (
                agentwire::api::MessagesRequest::parse(a).unwrap(),
                agentwire::api::MessagesRequest::parse(b).unwrap(),
            )
        })
    });
    c.bench_function("diff 2 x 1 MB requests", |bench| {
        bench.iter(|| {
            agentwire::api::memo::forget();
            diff_requests(&sa, &sb, &norm).unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
