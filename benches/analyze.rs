//! `analyze` end to end on a generated trace: sessions of 100 requests whose histories grow
//! turn by turn (tool definitions ~30 KB, system ~10 KB, each turn adding a tool call and a
//! ~1.2 KB result, a status poll every fifth turn, a pause past the cache TTL now and
//! then). 10,000 requests make a ~1 GB trace. Set `AGENTWIRE_BENCH_REQUESTS` for a
//! smaller run (e.g. 1000: ~100 MB). Peak RSS (VmHWM) is printed after the run, and once
//! per run the peers on the same file: `wc -l` and a `jq` one-liner extracting one field
//! (`jq -c .request.body.json.model`), with the ratios (wall-clock, and of CPU time, which
//! a busy shared machine distorts less) and the load average.
//!
//! `AGENTWIRE_BENCH_DIALECT` (`messages`, the default; `responses`, `gemini`, `chat`):
//! the same conversations in another API's bodies, to compare the dialects.
//!
//! `cargo bench --bench analyze` (quick: `AGENTWIRE_BENCH_REQUESTS=1000 cargo bench --bench analyze`).
//! `AGENTWIRE_BENCH_WRITE=FILE` only writes the generated trace to FILE and exits (to time
//! `agentwire analyze` as a whole process on it).

use std::path::Path;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};

mod common;

use common::{api, Api};

use common::{load_average, measure, measure_children, peak_rss_kib};

use agentwire::analyze::{analyze_files, AnalyzeConfig, UsageMode};
use agentwire::trace::{
    Body, Context, Exchange, HttpRequest, HttpResponse, Source, SourceKind, TraceWriter,
};

const PER_SESSION: usize = 100;

/// One turn of a generated conversation: the call the reply made and its result.
struct Turn {
    id: String,
    input: Value,
    result: String,
}

/// Tool definitions: 20 tools with 1,400-byte descriptions.
fn tools(api: Api) -> Value {
    let t = |i: usize| {
        (
            format!("Tool{i}"),
            "x".repeat(1400),
            json!({"type": "object"}),
        )
    };
    let list = (0..20).map(t);
    match api {
        Api::Messages => list
            .map(|(n, d, p)| json!({"name": n, "description": d, "input_schema": p}))
            .collect(),
        Api::Responses => list
            .map(|(n, d, p)| json!({"type": "function", "name": n, "description": d, "parameters": p}))
            .collect(),
        Api::Chat => list
            .map(|(n, d, p)| json!({"type": "function", "function": {"name": n, "description": d, "parameters": p}}))
            .collect(),
        Api::Gemini => json!([{"functionDeclarations": list
            .map(|(n, d, p)| json!({"name": n, "description": d, "parameters": p}))
            .collect::<Vec<_>>()}]),
    }
}

/// The request path and body of session `s`'s next request, after `turns`.
fn request(
    api: Api,
    s: usize,
    tools: &Value,
    system: &str,
    turns: &[Turn],
) -> (&'static str, Value) {
    let task = format!("task {s}");
    let mut items = Vec::new();
    match api {
        Api::Messages => {
            items.push(json!({"role": "user", "content": task}));
            for t in turns {
                items.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": t.id, "name": "Bash", "input": t.input}]}));
                items.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": t.id, "content": t.result}]}));
            }
            if let Some(Value::Array(b)) = items.last_mut().and_then(|m| m.get_mut("content")) {
                if let Some(o) = b.last_mut().and_then(Value::as_object_mut) {
                    o.insert("cache_control".into(), json!({"type": "ephemeral"}));
                }
            }
            let system =
                json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]);
            (
                "/v1/messages",
                json!({"model": "claude-sonnet-4-5", "max_tokens": 32000, "tools": tools,
                "system": system, "messages": items, "stream": false}),
            )
        }
        Api::Responses => {
            items.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": task}]}));
            for t in turns {
                items.push(json!({"type": "function_call", "call_id": t.id, "name": "Bash", "arguments": t.input.to_string()}));
                items.push(
                    json!({"type": "function_call_output", "call_id": t.id, "output": t.result}),
                );
            }
            (
                "/v1/responses",
                json!({"model": "gpt-5", "instructions": system, "tools": tools,
                "input": items, "store": false, "stream": false, "prompt_cache_key": format!("s{s}")}),
            )
        }
        Api::Chat => {
            items.push(json!({"role": "system", "content": system}));
            items.push(json!({"role": "user", "content": task}));
            for t in turns {
                items.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": t.id, "type": "function",
                    "function": {"name": "Bash", "arguments": t.input.to_string()}}]}));
                items.push(json!({"role": "tool", "tool_call_id": t.id, "content": t.result}));
            }
            (
                "/v1/chat/completions",
                json!({"model": "gpt-5", "tools": tools, "messages": items, "stream": false}),
            )
        }
        Api::Gemini => {
            items.push(json!({"role": "user", "parts": [{"text": task}]}));
            for t in turns {
                items.push(json!({"role": "model", "parts": [{"functionCall": {"name": "Bash", "args": t.input, "id": t.id}}]}));
                items.push(json!({"role": "user", "parts": [{"functionResponse": {"name": "Bash", "id": t.id, "response": {"output": t.result}}}]}));
            }
            (
                "/v1beta/models/gemini-2.5-pro:generateContent",
                json!({"systemInstruction": {"parts": [{"text": system}]},
                "tools": tools, "contents": items}),
            )
        }
    }
}

/// The (not streamed) reply calling `Bash` with `input`.
fn reply(api: Api, id: &str, input: &Value) -> Value {
    match api {
        Api::Messages => {
            json!({"type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": input}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 40}})
        }
        Api::Responses => {
            json!({"id": format!("resp_{id}"), "object": "response", "status": "completed", "model": "gpt-5",
            "output": [{"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": "Bash", "arguments": input.to_string(), "status": "completed"}],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 50}})
        }
        Api::Chat => {
            json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion", "model": "gpt-5",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "Bash", "arguments": input.to_string()}}]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 40, "total_tokens": 50}})
        }
        Api::Gemini => {
            json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "Bash", "args": input, "id": id}}]},
            "finishReason": "STOP", "index": 0}], "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 40, "totalTokenCount": 50},
            "modelVersion": "gemini-2.5-pro"})
        }
    }
}

fn generate(path: &Path, requests: usize) -> u64 {
    let api = api();
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    let tools = tools(api);
    let system = "s".repeat(10_000);
    // No host for Messages: its trace stays byte for byte the one earlier runs measured.
    let host = match api {
        Api::Messages => None,
        Api::Gemini => Some("generativelanguage.googleapis.com"),
        _ => Some("api.openai.com"),
    };
    let t0 = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let mut id = 0u64;
    let mut secs = 0.0f64;
    for s in 0..requests.div_ceil(PER_SESSION) {
        let mut turns: Vec<Turn> = Vec::new();
        for k in 0..PER_SESSION {
            if id as usize >= requests {
                break;
            }
            secs += if k % 37 == 36 { 400.0 } else { 8.0 };
            let (target, body) = request(api, s, &tools, &system, &turns);
            let call_id = format!("toolu_{s}_{k}");
            let input = if k % 5 == 0 {
                json!({"command": "sleep 30; tail -n 5 build.log"})
            } else {
                json!({"command": format!("grep -n fn src/file{k}.rs")})
            };
            let reply = reply(api, &call_id, &input);
            let at = t0 + chrono::Duration::milliseconds((secs * 1000.0) as i64);
            let head: Vec<(String, String)> = host
                .map(|h| ("host".to_string(), h.to_string()))
                .into_iter()
                .chain([("content-type".into(), "application/json".into())])
                .collect();
            let x = Exchange {
                id,
                started_at: at,
                ended_at: Some(at + chrono::Duration::seconds(2)),
                source: Source::new(SourceKind::Proxy),
                request: HttpRequest {
                    method: "POST".into(),
                    target: target.into(),
                    version: "HTTP/1.1".into(),
                    headers: head.into(),
                    body: Body::new(serde_json::to_vec(&body).unwrap()),
                },
                response: Some(HttpResponse {
                    status: 200,
                    version: "HTTP/1.1".into(),
                    headers: vec![("content-type".into(), "application/json".into())].into(),
                    body: Body::new(serde_json::to_vec(&reply).unwrap()),
                    chunks: vec![],
                    first_byte_at: None,
                }),
                error: None,
                notes: Default::default(),
                websocket: None,
            };
            w.write_exchange(&x).unwrap();
            id += 1;
            let result = if k % 5 == 0 {
                "still building".to_string()
            } else {
                format!("{k}: ").repeat(300)
            };
            turns.push(Turn {
                id: call_id,
                input,
                result,
            });
        }
    }
    drop(w);
    std::fs::metadata(path).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let n: usize = std::env::var("AGENTWIRE_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    if let Some(out) = std::env::var_os("AGENTWIRE_BENCH_WRITE") {
        let bytes = generate(Path::new(&out), n);
        eprintln!(
            "wrote {n} requests, {bytes} bytes to {}",
            Path::new(&out).display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.jsonl");
    let bytes = generate(&path, n);
    eprintln!(
        "generated {n} requests, {:.1} MB; RSS after generating: {} KiB",
        bytes as f64 / 1e6,
        peak_rss_kib()
    );
    let cfg = || AnalyzeConfig {
        usage: UsageMode::Simulated,
        ..AnalyzeConfig::default()
    };
    let (_, ours) = measure(|| analyze_files(&[path.as_path()], cfg()).unwrap());
    eprintln!(
        "agentwire analyze: {}; load average {}",
        ours.rates(bytes),
        load_average()
    );
    for (label, cmd) in [
        ("wc -l", format!("wc -l < '{}'", path.display())),
        (
            "jq -c .request.body.json.model",
            format!(
                "jq -c .request.body.json.model '{}' > /dev/null",
                path.display()
            ),
        ),
    ] {
        match measure_children(|| std::process::Command::new("sh").args(["-c", &cmd]).output()) {
            (Ok(o), took) if o.status.success() => {
                eprintln!(
                    "{label}: {}; agentwire takes {:.2}x its time (wall), {:.2}x its CPU time",
                    took.rates(bytes),
                    ours.wall / took.wall,
                    ours.cpu / took.cpu
                );
            }
            _ => eprintln!("{label}: not available, no comparison"),
        }
    }
    let mut g = c.benchmark_group("analyze");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(5));
    g.throughput(criterion::Throughput::Bytes(bytes));
    g.bench_function(format!("end_to_end_{n}_requests"), |b| {
        b.iter(|| {
            let a = analyze_files(&[path.as_path()], cfg()).unwrap();
            assert_eq!(a.summary.requests, n);
            a
        })
    });
    g.finish();
    let cfg = AnalyzeConfig {
        usage: UsageMode::Simulated,
        ..AnalyzeConfig::default()
    };
    let a = analyze_files(&[path.as_path()], cfg).unwrap();
    let s = &a.summary;
    eprintln!(
        "sessions {}, threads {}, polls {} ({} redundant), poll cost ${:.2}, total cost ${:.2}, cache hit rate {:.1}%",
        s.sessions,
        s.threads,
        s.polls,
        s.redundant_polls,
        s.poll_cost_usd,
        s.total_cost_usd,
        s.cache_hit_rate * 100.0
    );
    eprintln!("peak RSS (VmHWM): {} KiB", peak_rss_kib());
}

criterion_group!(benches, bench);
criterion_main!(benches);
