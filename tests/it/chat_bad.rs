//! Bad input in Chat Completions answers, read back (issue 29, "Bad input"): a tool-call
//! fragment for an `index` no fragment opened, a chunk that is not JSON, a stream cut
//! before `data: [DONE]`, and usage missing from the last chunk. Each is kept as it came,
//! said by `show` and `analyze` (a degraded run: exit 3), usage never reported is "not
//! recorded" (never zero), and the rest of the session still reads.

use std::path::Path;

use agentwire::api::view::exchange_response;
use agentwire::api::ResponseBody;
use agentwire::trace::{
    Body, Context, Exchange, HttpRequest, HttpResponse, Source, SourceKind, TraceWriter,
};
use serde_json::json;

use crate::common::*;

/// A streamed Chat Completions exchange whose answer is the `chunks` (each a `data:` line).
fn exchange(id: u64, prompt: &str, chunks: &[&str]) -> Exchange {
    let body = json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": prompt}]});
    let answer: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    Exchange {
        id,
        started_at: chrono::DateTime::from_timestamp(1_800_000_000 + id as i64 * 10, 0).unwrap(),
        ended_at: None,
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/chat/completions".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("host".into(), "127.0.0.1:9".into()),
                ("content-type".into(), "application/json".into()),
                ("x-session-id".into(), "ses_bad_input".into()),
            ]
            .into(),
            body: Body::new(serde_json::to_vec(&body).unwrap()),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), "text/event-stream".into())].into(),
            body: Body::new(answer.into_bytes()),
            chunks: Vec::new(),
            first_byte_at: None,
        }),
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

const ROLE: &str = r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#;
const TEXT: &str = r#"{"choices":[{"index":0,"delta":{"content":"ok"}}]}"#;
const STOP: &str = r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;
const USAGE: &str = r#"{"choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":1024}}}"#;
const ORPHAN: &str = r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"x\":1}"}}]}}]}"#;

fn write(path: &Path, xs: Vec<Exchange>) {
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    for x in xs {
        w.write_exchange(&x).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn bad_chunks_are_kept_said_and_counted_and_the_session_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad-chat.jsonl");
    write(
        &path,
        vec![
            exchange(0, "a", &[ROLE, TEXT, STOP, USAGE, "[DONE]"]),
            exchange(1, "b", &[ROLE, ORPHAN, TEXT, STOP, USAGE, "[DONE]"]),
            exchange(2, "c", &[ROLE, "{not json", TEXT, STOP, USAGE, "[DONE]"]),
            exchange(3, "d", &[ROLE, TEXT]),
            exchange(4, "e", &[ROLE, TEXT, STOP, "[DONE]"]),
        ],
    );
    let t = agentwire::input::open_trace(&path).unwrap();
    let msg = |i: usize| match exchange_response(&t.exchanges[i]) {
        Some(ResponseBody::Message(m)) => m,
        other => panic!("exchange {i}: {other:?}"),
    };
    let ok = msg(0);
    assert!(
        ok.complete && ok.stream_problems.is_empty(),
        "{:?}",
        ok.stream_problems
    );
    // prompt_tokens 1200 include the 1024 cached: 176 uncached.
    assert_eq!(
        (ok.usage.input_tokens, ok.usage.cache_read_input_tokens),
        (Some(176), Some(1024))
    );
    let orphan = msg(1);
    assert_eq!(orphan.unknown_events[0].0, "tool_call_fragment", "kept raw");
    assert_eq!(orphan.unknown_events[0].1["index"], 2);
    assert_eq!(
        orphan.content[0].text(),
        Some("ok"),
        "the rest of the answer reads"
    );
    assert_eq!(msg(2).malformed_events, 1, "counted");
    let cut = msg(3);
    assert!(!cut.complete);
    assert_eq!(
        cut.usage.input_tokens, None,
        "never reported: not recorded, not zero"
    );
    let no_usage = msg(4);
    assert!(no_usage.complete);
    assert_eq!(no_usage.usage.output_tokens, None, "not recorded, not zero");

    let show = agentwire(&["show", path.to_str().unwrap()]);
    let text =
        String::from_utf8_lossy(&show.stdout).to_string() + &String::from_utf8_lossy(&show.stderr);
    assert!(text.contains("(incomplete)"), "{text}");
    let a = agentwire(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        a.status.code(),
        Some(3),
        "a degraded run: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["summary"]["requests"], 5, "every request is analysed");
    assert_eq!(
        v["summary"]["sessions"], 1,
        "one opencode session (x-session-id)"
    );
    let said = v["warnings"].to_string() + &String::from_utf8_lossy(&a.stderr);
    for what in ["index 2", "not JSON", "[DONE]", "not recorded"] {
        assert!(said.contains(what), "{what}: {said}");
    }
}
