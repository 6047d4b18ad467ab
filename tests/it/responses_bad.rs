//! Bad input on the Responses WebSocket, read back (issue 28, "Bad input"): a trace that
//! starts mid-session (a `previous_response_id` naming no earlier response), a server
//! message that is not JSON, an event type no one knows, a stream that ends without
//! `response.completed`. Each is kept as it came, said by `show`, counted by `analyze` (a
//! degraded run: exit 3), and the rest of the session still reads.

use std::path::Path;

use agentwire::trace::websocket::{Direction, Frame, WebSocketMessage};
use agentwire::trace::{
    Body, Context, Exchange, HttpRequest, HttpResponse, Source, SourceKind, TraceWriter,
};
use serde_json::json;

use crate::common::*;

/// A WebSocket message exchange on the connection of upgrade 0: the client's `message`,
/// the server's `answers` (one per line).
fn ws(id: u64, seq: u64, message: serde_json::Value, answers: &[&str]) -> Exchange {
    let body = serde_json::to_vec(&message).unwrap();
    let mut answer = Vec::new();
    for a in answers {
        answer.extend_from_slice(a.as_bytes());
        answer.push(b'\n');
    }
    let mut frames = vec![Frame {
        dir: Direction::Client,
        at_us: 0,
        opcode: 1,
        fin: true,
        compressed: false,
        wire_bytes: body.len() as u64 + 14,
        payload_bytes: body.len() as u64,
    }];
    frames.extend(answers.iter().enumerate().map(|(i, a)| Frame {
        dir: Direction::Server,
        at_us: 1000 * (i as i64 + 1),
        opcode: 1,
        fin: true,
        compressed: false,
        wire_bytes: a.len() as u64 + 4,
        payload_bytes: a.len() as u64,
    }));
    Exchange {
        id,
        started_at: chrono::DateTime::from_timestamp(1_800_000_000 + id as i64, 0).unwrap(),
        ended_at: None,
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: "GET".into(),
            target: "/v1/responses".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("host".into(), "127.0.0.1:9".into()),
                ("upgrade".into(), "websocket".into()),
                ("session-id".into(), "01a2-mid-session".into()),
            ]
            .into(),
            body: Body::new(body),
        },
        response: Some(HttpResponse {
            status: 101,
            version: "HTTP/1.1".into(),
            headers: vec![("upgrade".into(), "websocket".into())].into(),
            body: Body::new(answer),
            chunks: Vec::new(),
            first_byte_at: None,
        }),
        error: None,
        notes: Default::default(),
        websocket: Some(Box::new(WebSocketMessage {
            upgrade: 0,
            seq,
            extensions: String::new(),
            frames,
            closed: None,
        })),
    }
}

fn turn(prev: Option<&str>, text: &str) -> serde_json::Value {
    let mut m = json!({"type":"response.create","model":"gpt-5.5","store":false,
        "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":text}]}]});
    if let Some(p) = prev {
        m["previous_response_id"] = json!(p);
    }
    m
}

fn completed(id: &str, text: &str) -> String {
    json!({"type":"response.completed","response":{"id":id,"status":"completed","model":"gpt-5.5",
        "output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":text}]}],
        "usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":0},"output_tokens":3}}})
    .to_string()
}

fn write(path: &Path, xs: Vec<Exchange>) {
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    for x in xs {
        w.write_exchange(&x).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn a_mid_session_websocket_trace_with_bad_messages_reads_says_and_counts_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad-ws.jsonl");
    write(
        &path,
        vec![
            // Continues a response recorded before the trace began.
            ws(
                1,
                0,
                turn(Some("resp_before_the_trace"), "go on"),
                &[
                    r#"{"type":"response.created","response":{"id":"resp_a","status":"in_progress"}}"#,
                    r#"{"type":"response.future_event","x":1}"#,
                    &completed("resp_a", "ok"),
                ],
            ),
            // Continues resp_a (in the trace): rebuilt; one server message is not JSON,
            // and the stream ends without response.completed.
            ws(
                2,
                1,
                turn(Some("resp_a"), "and then"),
                &[
                    r#"{"type":"response.created","response":{"id":"resp_b","status":"in_progress"}}"#,
                    "this is not json",
                ],
            ),
        ],
    );
    let show = agentwire(&["show", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(
        text.contains(
            "previous_response_id resp_before_the_trace names no response earlier in this trace"
        ),
        "{text}"
    );
    assert!(text.contains("continues resp_a: rebuilt"), "{text}");
    assert!(
        text.contains("(incomplete)"),
        "a stream without response.completed: {text}"
    );
    let a = agentwire(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        a.status.code(),
        Some(3),
        "a degraded run: {}",
        String::from_utf8_lossy(&a.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["summary"]["requests"], 2, "both turns are analysed");
    let warnings = v["warnings"].to_string() + &String::from_utf8_lossy(&a.stderr);
    assert!(warnings.contains("resp_before_the_trace"), "{warnings}");
    assert!(warnings.contains("not JSON"), "{warnings}");
    // The unknown event is kept (shown by the response's unknown events), never fatal:
    // the first turn still reads as complete, with its text.
    let t = agentwire::input::open_trace(&path).unwrap();
    let Some(agentwire::api::ResponseBody::Message(m)) =
        agentwire::api::view::exchange_response(&t.exchanges[0])
    else {
        panic!("the first answer reads as a response");
    };
    assert!(m.complete);
    assert_eq!(m.unknown_events[0].0, "response.future_event");
    assert_eq!(m.content[0].text(), Some("ok"));
}
