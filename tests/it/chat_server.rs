//! The fake server speaking the OpenAI Chat Completions API: stub (chunks with and without
//! the usage chunk, one `chat.completion` object), script (tool calls as `tool_calls`,
//! injected statuses as OpenAI error bodies), the recording proxy and replay (reshaped
//! between a stream and one object), every answer assembled with `api::chat::stream`.

use std::sync::Arc;
use std::time::Duration;

use agentwire::api::chat::stream::{assemble_sse, from_json};
use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{Mode, Script, ServerConfig};
use serde_json::{json, Value};

use crate::common::*;

/// A scenario: a tool call, then text; the third request is refused with a 429.
const SCENARIO: &str = r#"{"threads": [{"name": "main", "match": {"has_tools": true}, "turns": [
  {"content": [{"type": "text", "text": "Starting."},
               {"type": "tool_use", "id": "call_a", "name": "bash", "input": {"command": "make"}}]},
  {"content": [{"type": "text", "text": "Built."}]},
  {"content": [{"type": "text", "text": "late"}], "fail": {"status": 429, "message": "slow down"}}]}]}"#;

/// A Chat Completions request body: a system message, `history`, one tool.
fn body(history: &[Value], stream: bool, usage: bool) -> Vec<u8> {
    let mut messages = vec![
        json!({"role": "system", "content": "You are terse."}),
        json!({"role": "user", "content": "build it"}),
    ];
    messages.extend_from_slice(history);
    let mut b = json!({"model": "m", "stream": stream, "messages": messages,
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]});
    if usage {
        b["stream_options"] = json!({"include_usage": true});
    }
    serde_json::to_vec(&b).unwrap()
}

async fn post(url: &str, body: Vec<u8>) -> (u16, Vec<u8>) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.bytes().await.unwrap().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stub_and_script_answer_chunks_objects_and_errors() {
    let s = TestServer::start(ServerConfig::default()).await;
    let url = s.url("/v1/chat/completions");
    let with = assemble_sse(&post(&url, body(&[], true, true)).await.1);
    assert!(with.complete, "{:?}", with.stream_problems);
    assert_eq!(with.content[0].text(), Some("Hello from agentwire."));
    // Usage is the estimate: prompt tokens = body bytes / 4, rounded up.
    let n = body(&[], true, true).len().div_ceil(4) as u64;
    assert_eq!(with.usage.input_tokens, Some(n));
    let (_, raw) = post(&url, body(&[], true, false)).await;
    let without = assemble_sse(&raw);
    assert_eq!(
        without.usage.input_tokens, None,
        "no usage chunk unless asked"
    );
    assert!(String::from_utf8_lossy(&raw).ends_with("data: [DONE]\n\n"));
    let (st, one) = post(&url, body(&[], false, false)).await;
    let v: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!((st, v["object"].as_str()), (200, Some("chat.completion")));
    s.finish().await;

    let s = TestServer::start(ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(SCENARIO).unwrap())),
        ..ServerConfig::default()
    })
    .await;
    let url = s.url("/v1/chat/completions");
    let m = assemble_sse(&post(&url, body(&[], true, true)).await.1);
    assert_eq!(m.stop_reason.as_deref(), Some("tool_calls"));
    let calls: Vec<_> = m.tool_calls().collect();
    assert_eq!(calls, [("call_a", "bash", &json!({"command": "make"}))]);
    let history = [
        json!({"role": "assistant", "content": "Starting.", "tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "bash", "arguments": "{\"command\":\"make\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_a", "content": "ok"}),
    ];
    let (_, one) = post(&url, body(&history, false, false)).await;
    let m = from_json(&serde_json::from_slice(&one).unwrap());
    assert_eq!(
        (m.content[0].text(), m.stop_reason.as_deref()),
        (Some("Built."), Some("stop"))
    );
    let mut more = history.to_vec();
    more.push(json!({"role": "assistant", "content": "Built."}));
    more.push(json!({"role": "user", "content": "again"}));
    let (st, err) = post(&url, body(&more, true, true)).await;
    let e: Value = serde_json::from_slice(&err).unwrap();
    assert_eq!(
        (st, e["error"]["message"].as_str()),
        (429, Some("slow down"))
    );
    s.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_records_and_replay_answers_in_either_shape() {
    let upstream = TestServer::start(ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(SCENARIO).unwrap())),
        ..ServerConfig::default()
    })
    .await;
    let up = Upstream::new(&upstream.server.base_url(), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(up)),
        ..ServerConfig::default()
    })
    .await;
    let (st, sse) = post(&proxy.url("/v1/chat/completions"), body(&[], true, true)).await;
    assert_eq!(st, 200);
    let m = assemble_sse(&sse);
    let recorded = proxy.finish().await;
    upstream.finish().await;
    assert_eq!(
        recorded.exchanges[0].response.as_ref().unwrap().body.bytes,
        sse
    );
    let replay = Replay::from_trace(recorded, Timing::None);
    assert_eq!(replay.len(), 1);
    let s = TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..ServerConfig::default()
    })
    .await;
    let url = s.url("/v1/chat/completions");
    let again = assemble_sse(&post(&url, body(&[], true, true)).await.1);
    assert_eq!(
        again.tool_calls().collect::<Vec<_>>(),
        m.tool_calls().collect::<Vec<_>>()
    );
    let (st, one) = post(&url, body(&[], false, false)).await;
    assert_eq!(st, 200);
    let o = from_json(&serde_json::from_slice(&one).unwrap());
    assert_eq!(
        o.tool_calls().collect::<Vec<_>>(),
        m.tool_calls().collect::<Vec<_>>()
    );
    assert_eq!(
        o.usage.cache_read_input_tokens,
        m.usage.cache_read_input_tokens
    );
    let t = s.finish().await;
    assert!(t.exchanges[1].notes["replay"]["converted"]
        .as_str()
        .unwrap()
        .contains("chat.completion"));
}
