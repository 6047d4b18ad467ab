//! The fake server speaking the OpenAI Responses API over HTTP: stub, script (function
//! calls, custom tool calls, captures from tool outputs, injected failures), replay and
//! the recording proxy, every answer assembled with `api::responses::stream`.

use std::sync::Arc;
use std::time::Duration;

use agentwire::api::responses::stream::{assemble_sse, from_json};
use agentwire::api::BlockKind;
use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{Mode, Script, ServerConfig};
use serde_json::{json, Value};

use crate::common::*;

/// A scenario driving a Codex-like classic session: exec_command, a write_stdin poll with
/// the session id captured from the tool output, a code-mode exec, then text.
pub const SCENARIO: &str = r#"{
  "captures": [{"name": "sid", "regex": "Process running with session ID (\\d+)"}],
  "threads": [{"name": "main", "match": {"has_tools": true},
    "turns": [
      {"content": [{"type": "tool_use", "id": "call_1", "name": "exec_command",
                    "input": {"cmd": "sleep 6; echo done", "yield_time_ms": 500}}]},
      {"content": [{"type": "tool_use", "id": "call_2", "name": "write_stdin",
                    "input": {"session_id": "${sid:json}", "chars": "", "yield_time_ms": 1000}}]},
      {"content": [{"type": "tool_use", "name": "exec", "input": "const r = await tools.exec_command({cmd: \"ls\"});\ntext(r);"}]},
      {"content": [{"type": "text", "text": "All done."}]}
    ]}]}"#;

/// A first request: a developer message, the user's prompt, one tool.
pub fn first_input() -> Vec<Value> {
    vec![
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run the job"}]}),
    ]
}

/// A Responses request body.
pub fn body(input: &[Value], stream: bool) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"model": "gpt-5.5", "stream": stream, "input": input,
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
        "store": false}),
    )
    .unwrap()
}

async fn post(url: &str, body: Vec<u8>) -> (u16, String, Vec<u8>) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {TEST_KEY}"))
        .body(body)
        .send()
        .await
        .unwrap();
    let ct = (r.headers().get("content-type"))
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (r.status().as_u16(), ct, r.bytes().await.unwrap().to_vec())
}

fn script_config() -> ServerConfig {
    ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(SCENARIO).unwrap())),
        ..ServerConfig::default()
    }
}

/// The canonical call of an answer's first block: (call id, name, input).
fn call(m: &agentwire::api::ResponseMessage) -> (String, String, Value) {
    match &m.content[0].kind {
        BlockKind::ToolUse { id, name, input } => (id.clone(), name.clone(), input.clone()),
        k => panic!("not a call: {k:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stub_answers_sse_and_json_with_agentwire_ids_and_estimated_usage() {
    let s = TestServer::start(ServerConfig::default()).await;
    let b = body(&first_input(), true);
    let (st, ct, sse) = post(&s.url("/v1/responses"), b.clone()).await;
    assert_eq!((st, ct.starts_with("text/event-stream")), (200, true));
    let m = assemble_sse(&sse);
    assert!(m.complete, "{:?}", m.stream_problems);
    assert_eq!(m.content[0].text(), Some("Hello from agentwire."));
    assert!(m.id.as_deref().unwrap().starts_with("resp_agentwire_"));
    assert_eq!(m.usage.output_tokens.map(|n| n > 0), Some(true));
    // Every event has its sequence number, in order.
    let seqs: Vec<u64> = agentwire::api::sse::parse_events(&sse)
        .iter()
        .map(|e| {
            serde_json::from_str::<Value>(&e.data).unwrap()["sequence_number"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    let (st, _, one) = post(
        &s.url("/backend-api/codex/responses"),
        body(&first_input(), false),
    )
    .await;
    assert_eq!(st, 200);
    let v: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(
        (v["object"].as_str(), v["status"].as_str()),
        (Some("response"), Some("completed"))
    );
    let total = v["usage"]["total_tokens"].as_u64().unwrap();
    assert_eq!(
        v["usage"]["input_tokens"].as_u64().unwrap(),
        body(&first_input(), false).len().div_ceil(4) as u64
    );
    assert!(total > v["usage"]["input_tokens"].as_u64().unwrap());
    assert_eq!(v["usage"]["input_tokens_details"]["cached_tokens"], 0);
    let t = s.finish().await;
    assert_eq!(t.exchanges.len(), 2);
    assert_eq!(t.exchanges[0].notes["synthesized"]["by"], "agentwire");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scenario_drives_calls_custom_calls_and_captures_from_tool_outputs() {
    let s = TestServer::start(script_config()).await;
    let url = s.url("/v1/responses");
    let mut input = first_input();
    let m = assemble_sse(&post(&url, body(&input, true)).await.2);
    let (id, name, args) = call(&m);
    assert_eq!((id.as_str(), name.as_str()), ("call_1", "exec_command"));
    assert_eq!(args["cmd"], "sleep 6; echo done");
    // The client sends the call back and its output, as Codex does.
    input.push(
        json!({"type": "function_call", "call_id": "call_1", "name": "exec_command",
        "arguments": args.to_string()}),
    );
    input.push(json!({"type": "function_call_output", "call_id": "call_1",
        "output": "Chunk ID: 1\nProcess running with session ID 99109\nOutput:\n"}));
    let m = assemble_sse(&post(&url, body(&input, true)).await.2);
    let (_, name, args) = call(&m);
    assert_eq!(
        (name.as_str(), args["session_id"].as_u64()),
        ("write_stdin", Some(99109))
    );
    input.push(json!({"type": "function_call", "call_id": "call_2", "name": "write_stdin", "arguments": args.to_string()}));
    input.push(json!({"type": "function_call_output", "call_id": "call_2", "output": "Process exited with code 0"}));
    let (_, _, one) = post(&url, body(&input, false)).await;
    let v: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(v["output"][0]["type"], "custom_tool_call");
    let m = from_json(&v);
    let (cid, name, js) = call(&m);
    assert_eq!(name, "exec");
    assert!(js
        .as_str()
        .unwrap()
        .starts_with("const r = await tools.exec_command"));
    input.push(v["output"][0].clone());
    input.push(json!({"type": "custom_tool_call_output", "call_id": cid,
        "output": [{"type": "input_text", "text": "Script completed"}]}));
    let m = assemble_sse(&post(&url, body(&input, true)).await.2);
    assert_eq!(m.content[0].text(), Some("All done."));
    let t = s.finish().await;
    let turns: Vec<u64> = (t.exchanges.iter())
        .map(|x| x.notes["script"]["turn"].as_u64().unwrap())
        .collect();
    assert_eq!(turns, [0, 1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_failures_use_openai_error_shapes() {
    let scenario = r#"{"threads":[
        {"name":"s","match":{"first_user_contains":"stream"},"turns":[
        {"content":[{"type":"text","text":"partial answer"}],"fail":{"sse_error":"server_error","after_events":3}}]},
        {"name":"m","turns":[
        {"content":[{"type":"text","text":"x"}],"fail":{"status":429,"message":"slow down"}}]}]}"#;
    let config = ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(scenario).unwrap())),
        ..ServerConfig::default()
    };
    let s = TestServer::start(config).await;
    let url = s.url("/v1/responses");
    let stream_input = [json!({"role": "user", "content": "stream please"})];
    let m = assemble_sse(&post(&url, body(&stream_input, true)).await.2);
    assert!(!m.complete);
    assert_eq!(m.stop_reason.as_deref(), Some("failed"));
    assert_eq!(m.stream_errors[0]["code"], "server_error");
    let (st, _, b) = post(
        &url,
        body(&[json!({"role": "user", "content": "hi"})], true),
    )
    .await;
    assert_eq!(st, 429);
    let v: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (v["error"]["message"].as_str(), v["error"]["type"].as_str()),
        (Some("slow down"), Some("rate_limit_exceeded"))
    );
    // The failure fires once: the retry is answered.
    let (st, _, _) = post(
        &url,
        body(&[json!({"role": "user", "content": "hi"})], true),
    )
    .await;
    assert_eq!(st, 200);
    let t = s.finish().await;
    let kinds: Vec<Option<&str>> = (t.exchanges.iter())
        .map(|x| x.error.as_ref().map(|e| e.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [Some("injected_sse_error"), Some("injected_status"), None]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_answers_responses_in_either_shape_and_proxy_tees_sse() {
    // Record a scripted session through the recording proxy (upstream: a script server).
    let upstream = TestServer::start(script_config()).await;
    let up = Upstream::new(&upstream.server.base_url(), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(up)),
        ..ServerConfig::default()
    })
    .await;
    let (st, ct, sse) = post(&proxy.url("/v1/responses"), body(&first_input(), true)).await;
    assert_eq!((st, ct.starts_with("text/event-stream")), (200, true));
    let m = assemble_sse(&sse);
    assert_eq!(call(&m).1, "exec_command");
    let recorded = proxy.finish().await;
    upstream.finish().await;
    let x = &recorded.exchanges[0];
    assert_eq!(
        x.response.as_ref().unwrap().body.bytes,
        sse,
        "the proxy recorded the stream as relayed"
    );
    assert!(
        x.response.as_ref().unwrap().chunks.len() > 1,
        "teed piece by piece"
    );
    // Replay the recording: the same request, as a stream and as one object.
    let replay = Replay::from_trace(recorded, Timing::None);
    assert_eq!(replay.len(), 1);
    let s = TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..ServerConfig::default()
    })
    .await;
    let again = assemble_sse(
        &post(&s.url("/v1/responses"), body(&first_input(), true))
            .await
            .2,
    );
    assert_eq!(call(&again), call(&m));
    let (st, ct, one) = post(&s.url("/v1/responses"), body(&first_input(), false)).await;
    assert_eq!((st, ct.as_str()), (200, "application/json"));
    assert_eq!(
        call(&from_json(&serde_json::from_slice(&one).unwrap())),
        call(&m)
    );
    let t = s.finish().await;
    assert_eq!(t.exchanges[0].notes["replay"]["exact"], true);
    assert!(t.exchanges[1].notes["replay"]["converted"]
        .as_str()
        .unwrap()
        .contains("one response"));
}
