//! Replay: a recorded session answers a new client (real Claude Code 2.1.304 driven by a
//! 2.1.303 recording; the sample agent with a changed prompt), timing is reproduced, and
//! the replay client re-sends traffic and compares responses.

use std::sync::Arc;
use std::time::Instant;

use agentwire::api::{read_response, BlockKind, MessagesRequest, ResponseBody};
use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::{Mode, ServerConfig};
use agentwire::input::open_trace;
use agentwire::trace::Trace;

use crate::common::*;

fn tool_calls(t: &Trace) -> Vec<(String, String)> {
    t.exchanges
        .iter()
        .filter_map(|x| x.response.as_ref())
        .filter_map(
            |r| match read_response(Some("text/event-stream"), &r.body.bytes) {
                ResponseBody::Message(m) => Some(
                    m.tool_calls()
                        .map(|(id, n, _)| (id.to_string(), n.to_string()))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            },
        )
        .flatten()
        .collect()
}

/// A session recorded with 2.1.303 (the background-build scenario) and 2.1.304 driven by
/// that recording: recorded once, shared by the tests that read the pair.
fn replayed_pair() -> &'static (std::path::PathBuf, std::path::PathBuf) {
    static PAIR: std::sync::OnceLock<(std::path::PathBuf, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    PAIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let (old, new) = (dir.join("303.jsonl"), dir.join("304.jsonl"));
        let script = repo().join("captures/scenarios/bg-build.json");
        let args = ["--", "-p", "run the build", "--allowedTools", "Bash"];
        let mut a = vec![
            "record",
            "--cli",
            "claude-code@2.1.303",
            "--route",
            "base-url",
            "--script",
            script.to_str().unwrap(),
            "-o",
            old.to_str().unwrap(),
        ];
        a.extend(args);
        agentwire_ok(&a);
        let mut b = vec![
            "record",
            "--cli",
            "claude-code@2.1.304",
            "--route",
            "base-url",
            "--replay",
            old.to_str().unwrap(),
            "-o",
            new.to_str().unwrap(),
        ];
        b.extend(args);
        agentwire_ok(&b);
        (old, new)
    })
}

/// Issue 5, must-show 1 (the replay half): a session recorded with 2.1.303 drives 2.1.304
/// through the same conversation.
#[test]
fn recording_of_2_1_303_drives_2_1_304_through_the_same_conversation() {
    let (old, new) = replayed_pair();
    let (t_old, t_new) = (open_trace(old).unwrap(), open_trace(new).unwrap());
    assert_eq!(
        tool_calls(&t_new),
        tool_calls(&t_old),
        "same tool calls, same order"
    );
    assert_eq!(tool_calls(&t_new).len(), 4);
    let matched: Vec<(u64, bool)> = t_new
        .exchanges
        .iter()
        .map(|x| {
            (
                x.notes["replay"]["recorded_id"].as_u64().unwrap(),
                x.notes["replay"]["exact"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(u64, bool)> = (0..t_old.exchanges.len() as u64)
        .map(|i| (i, true))
        .collect();
    assert_eq!(
        matched, expected,
        "each request answered by the recorded request of its turn"
    );
    // `diff --all` aligns the two conversations turn by turn and shows what changed
    let o = std::process::Command::new(bin())
        .args([
            "diff",
            "--all",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let comparisons = d["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), t_old.exchanges.len());
    for c in comparisons {
        assert_eq!(
            c["headers"]["betas_added"],
            serde_json::json!(["advanced-tool-use-2025-11-20"])
        );
        assert_eq!(
            (c["sizes"][0]["a"].as_u64(), c["sizes"][0]["b"].as_u64()),
            (Some(20), Some(12))
        );
    }
    // and the versions really differ on the wire
    let tools = |t: &Trace| {
        MessagesRequest::parse(&t.exchanges[0].request.body.bytes)
            .unwrap()
            .tools
            .len()
    };
    assert_eq!((tools(&t_old), tools(&t_new)), (20, 12));
}

/// Divergence: a client whose conversation differs gets the closest recorded answers and
/// each approximate match names what differed.
/// The output file a run's background Bash call writes to, as its tool result says.
fn output_file(t: &Trace) -> String {
    let re = regex::Regex::new(r"Output is being written to: (\S+\.output)").unwrap();
    t.exchanges
        .iter()
        .filter_map(|x| MessagesRequest::parse(&x.request.body.bytes).ok())
        .flat_map(|r| {
            (r.messages.iter().flat_map(|m| m.content.clone()))
                .filter_map(|b| match b.kind {
                    BlockKind::ToolResult { text, .. } => Some(text),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .find_map(|text| re.captures(&text).map(|c| c[1].to_string()))
        .expect("a background launch result")
}

/// Issue 31, kind 12: replaying a recording re-sent the old run's values. The recorded
/// polls say `tail -n 1 <the 2.1.303 run's output file>`; 2.1.304 started its own build,
/// whose output goes to another file (another session id and task id), so it polled a
/// foreign file while `show` said "exact match". Now each replayed poll names the new
/// run's own file, learnt by pairing the two runs' tool results, and the note says what
/// was rewritten. Expected values come from each trace's own tool result.
#[test]
fn replay_sent_the_old_runs_output_path_to_the_new_run() {
    let (old, new) = replayed_pair();
    let (t_old, t_new) = (open_trace(old).unwrap(), open_trace(new).unwrap());
    let (p_old, p_new) = (output_file(&t_old), output_file(&t_new));
    assert_ne!(p_old, p_new, "each run has its own output file");
    let polls = |t: &Trace| -> Vec<String> {
        t.exchanges
            .iter()
            .filter_map(|x| x.response.as_ref())
            .filter_map(
                |r| match read_response(Some("text/event-stream"), &r.body.bytes) {
                    ResponseBody::Message(m) => Some(m),
                    _ => None,
                },
            )
            .flat_map(|m| {
                m.tool_calls()
                    .filter_map(|(_, _, input)| input["command"].as_str().map(str::to_string))
                    .filter(|c| c.starts_with("tail"))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(polls(&t_old), vec![format!("tail -n 1 {p_old}"); 3]);
    assert_eq!(polls(&t_new), vec![format!("tail -n 1 {p_new}"); 3]);
    let rewritten: Vec<String> = t_new
        .exchanges
        .iter()
        .flat_map(|x| {
            x.notes["replay"]["rewritten"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert_eq!(rewritten, vec![format!("{p_old} → {p_new} (1×)"); 3]);
    // and `show` says which answers were rewritten
    let out = agentwire_ok(&["show", new.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.matches("rewritten").count(), 3, "{out}");
}

#[test]
fn diverging_client_gets_closest_answers_and_divergences_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.jsonl");
    let sample = repo().join("captures/sample-session.jsonl");
    let agent = repo().join("captures/clients/mini_agent.py");
    agentwire_ok(&[
        "record",
        "--replay",
        sample.to_str().unwrap(),
        "-o",
        new.to_str().unwrap(),
        "--",
        "python3",
        agent.to_str().unwrap(),
        "compile everything",
    ]);
    let t = open_trace(&new).unwrap();
    let messages: Vec<_> = t.exchanges.iter().filter(|x| x.is_messages()).collect();
    let approx: Vec<&serde_json::Value> = messages
        .iter()
        .map(|x| &x.notes["replay"])
        .filter(|r| r["exact"] == false)
        .collect();
    assert_eq!(
        approx.len(),
        messages.len(),
        "a new first prompt: no request matches exactly"
    );
    assert!(approx.iter().all(|r| r["differences"][0]
        .as_str()
        .unwrap()
        .contains("first user message")));
    // the divergence log: `show` names the recorded request used and why
    let o = std::process::Command::new(bin())
        .args(["show", new.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("replay ~#").count(), messages.len(), "{text}");
    // the session still completes with the recorded tool calls
    assert_eq!(tool_calls(&t), tool_calls(&open_trace(&sample).unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_timing_is_reproduced_and_replay_client_finds_no_difference() {
    // Record a reply that took 400 ms to start.
    let script = agentwire::capture::server::Script::parse(
        r#"{"threads":[{"name":"m","match":{},"turns":[{"content":[{"type":"text","text":"slow answer"}],"delay_ms":400}]}]}"#,
    )
    .unwrap();
    let rec = TestServer::start(ServerConfig {
        mode: Mode::Script(Arc::new(script)),
        ..Default::default()
    })
    .await;
    let body = r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}"#;
    let c = reqwest::Client::new();
    c.post(rec.url("/v1/messages"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let recorded = rec.finish().await;
    assert!(recorded.exchanges[0].response.as_ref().unwrap().chunks[0].0 >= 400_000);

    for (timing, lo, hi) in [
        (Timing::Recorded, 380, 2000),
        (Timing::Speed(4.0), 90, 350),
        (Timing::None, 0, 90),
    ] {
        let replay = Replay::from_trace(
            Trace {
                exchanges: recorded.exchanges.clone(),
                ..Default::default()
            },
            timing,
        );
        let srv = TestServer::start(ServerConfig {
            mode: Mode::Replay(Arc::new(replay)),
            ..Default::default()
        })
        .await;
        let t = Instant::now();
        let got = c
            .post(srv.url("/v1/messages"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let ms = t.elapsed().as_millis();
        assert!(ms >= lo && ms < hi, "{timing:?}: {ms} ms");
        assert_eq!(
            got,
            recorded.exchanges[0].response.as_ref().unwrap().body.bytes,
            "event for event"
        );
        srv.finish().await;
    }

    // The replay client against a replay server of the same trace: all 200, no difference.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let mut w =
        agentwire::trace::TraceWriter::create(&path, &agentwire::trace::Context::new()).unwrap();
    for _ in 0..5 {
        w.write_exchange(&recorded.exchanges[0]).unwrap();
    }
    drop(w);
    let replay = Replay::from_trace(open_trace(&path).unwrap(), Timing::None);
    let srv = TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..Default::default()
    })
    .await;
    let o = tokio::task::spawn_blocking({
        let (url, path) = (srv.server.base_url(), path.clone());
        move || {
            std::process::Command::new(bin())
                .args([
                    "replay",
                    path.to_str().unwrap(),
                    "--to",
                    &url,
                    "--compare",
                    "--concurrency",
                    "3",
                    "--format",
                    "json",
                ])
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"], 5);
    assert_eq!(v["statuses"]["200"], 5);
    assert_eq!(v["differing"], 0);
    srv.finish().await;
}

/// A recording from packets keeps header names as they were on the wire (`Connection`,
/// `Transfer-Encoding`). The replay server frames its own answer: the recorded framing
/// headers, whatever their case, are not sent again (a recorded `Connection: close`
/// would end every kept-alive connection after one answer), and the body arrives whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replayed_answers_drop_recorded_framing_headers_whatever_their_case() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"q"}]}"#;
    let answer = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;
    let mut x = agentwire::trace::Exchange {
        id: 0,
        started_at: chrono::Utc::now(),
        ended_at: None,
        source: agentwire::trace::Source::new(agentwire::trace::SourceKind::Pcap),
        request: agentwire::trace::HttpRequest {
            method: "POST".into(),
            target: "/v1/messages".into(),
            version: "HTTP/1.1".into(),
            headers: vec![("Content-Type".into(), "application/json".into())].into(),
            body: agentwire::trace::Body::new(body.as_bytes().to_vec()),
        },
        response: None,
        error: None,
        notes: Default::default(),
        websocket: None,
    };
    x.response = Some(agentwire::trace::HttpResponse {
        status: 200,
        version: "HTTP/1.1".into(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            ("Connection".into(), "close".into()),
            ("Keep-Alive".into(), "timeout=5".into()),
            ("Content-Length".into(), "7".into()),
            ("Request-Id".into(), "req_recorded".into()),
        ]
        .into(),
        body: agentwire::trace::Body::new(answer.as_bytes().to_vec()),
        chunks: Vec::new(),
        first_byte_at: None,
    });
    let replay = Replay::from_trace(
        Trace {
            exchanges: vec![x],
            ..Default::default()
        },
        Timing::None,
    );
    let srv = TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..Default::default()
    })
    .await;
    let r = reqwest::Client::new()
        .post(srv.url("/v1/messages"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let h = r.headers().clone();
    assert_eq!(h.get("connection"), None, "{h:?}");
    assert_eq!(h.get("keep-alive"), None, "hop-by-hop: {h:?}");
    let lengths: Vec<_> = h.get_all("content-length").iter().collect();
    assert!(
        lengths.len() <= 1 && !lengths.iter().any(|v| *v == "7"),
        "{h:?}"
    );
    let ids: Vec<_> = h.get_all("request-id").iter().collect();
    assert_eq!(ids, ["req_recorded"], "the recorded request id, once");
    assert_eq!(r.text().await.unwrap(), answer, "the whole recorded body");
    srv.finish().await;
}

/// Send one Messages request for "hello" with `stream` to a server; returns the status,
/// the content type and the body.
async fn ask(url: &str, stream: bool) -> (u16, String, Vec<u8>) {
    let body = serde_json::json!({"model":"m","max_tokens":5,"stream":stream,
        "messages":[{"role":"user","content":"hello"}]});
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, r.bytes().await.unwrap().to_vec())
}

/// A replay server over `exchanges`.
async fn replay_server(exchanges: Vec<agentwire::trace::Exchange>) -> TestServer {
    let replay = Replay::from_trace(
        Trace {
            exchanges,
            ..Default::default()
        },
        Timing::None,
    );
    TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..Default::default()
    })
    .await
}

/// The texts of a response body read as a message (SSE or JSON, as the body is).
fn texts(ct: &str, body: &[u8]) -> Vec<String> {
    match read_response(Some(ct), body) {
        ResponseBody::Message(m) => m
            .content
            .iter()
            .filter_map(|b| b.text().map(str::to_string))
            .collect(),
        other => panic!("not a message: {other:?}"),
    }
}

/// Fault s7-3: the request's `stream` flag decides the answer's shape. A client that asked
/// for one JSON message got the recorded SSE stream (an SDK cannot parse it), and the
/// exchange was noted as an exact match. Now the same-shape recording is preferred, and
/// when only the other shape was recorded it is converted, with the difference named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_does_not_answer_a_non_streaming_request_with_sse() {
    // Record "hello" with the stub: streamed (exchange 0), then not (exchange 1).
    let rec = TestServer::start(ServerConfig::default()).await;
    let url = rec.url("/v1/messages");
    let (_, sse_ct, sse_body) = ask(&url, true).await;
    let (_, json_ct, json_body) = ask(&url, false).await;
    let recorded = rec.finish().await;
    assert!(sse_ct.starts_with("text/event-stream") && json_ct == "application/json");
    let want = texts(&sse_ct, &sse_body);
    assert_eq!(want, texts(&json_ct, &json_body));

    let replay_note = |t: &Trace| t.exchanges[0].notes["replay"].clone();
    // Only the stream recorded; the client asks for one message.
    let srv = replay_server(vec![recorded.exchanges[0].clone()]).await;
    let (status, ct, body) = ask(&srv.url("/v1/messages"), false).await;
    assert_eq!((status, ct.as_str()), (200, "application/json"));
    let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(message["type"], "message");
    assert_eq!(
        texts(&ct, &body),
        want,
        "the recorded stream's text, as one message"
    );
    let t = srv.finish().await;
    let note = replay_note(&t);
    assert_eq!(note["exact"], false);
    assert_eq!(note["differences"][0], "stream: recorded true, now false");

    // Only the message recorded; the client asks for a stream.
    let srv = replay_server(vec![recorded.exchanges[1].clone()]).await;
    let (status, ct, body) = ask(&srv.url("/v1/messages"), true).await;
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/event-stream"), "{ct}");
    let m = agentwire::api::sse::assemble(&body);
    assert!(m.complete, "a whole stream: message_start … message_stop");
    assert_eq!(texts(&ct, &body), want);
    let t = srv.finish().await;
    assert_eq!(
        replay_note(&t)["differences"][0],
        "stream: recorded false, now true"
    );

    // Both recorded: each request gets its own shape, byte for byte, as an exact match.
    let srv = replay_server(recorded.exchanges.clone()).await;
    let (_, ct, body) = ask(&srv.url("/v1/messages"), false).await;
    assert_eq!(
        (ct.as_str(), body.as_slice()),
        ("application/json", &json_body[..])
    );
    let (_, ct, body) = ask(&srv.url("/v1/messages"), true).await;
    assert!(ct.starts_with("text/event-stream"));
    assert_eq!(body, sse_body);
    let t = srv.finish().await;
    for (x, recorded_id) in t.exchanges.iter().zip([1, 0]) {
        let note = &x.notes["replay"];
        assert_eq!(note["recorded_id"], recorded_id);
        assert_eq!(note["exact"], true, "{note}");
    }
}

/// Fault s7-3, when the other shape cannot be built: a recorded stream cut before
/// `message_stop` makes no whole message, so a non-streaming request gets an error that
/// names the recorded exchange and why, not a half message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_refuses_to_assemble_a_recorded_stream_that_was_cut_short() {
    let rec = TestServer::start(ServerConfig::default()).await;
    let (_, _, sse_body) = ask(&rec.url("/v1/messages"), true).await;
    let mut x = rec.finish().await.exchanges.remove(0);
    let end = sse_body
        .windows(19)
        .position(|w| w == b"event: message_stop")
        .unwrap();
    let resp = x.response.as_mut().unwrap();
    resp.body = agentwire::trace::Body::new(sse_body[..end].to_vec());
    resp.chunks.clear();
    let srv = replay_server(vec![x]).await;
    let (status, ct, body) = ask(&srv.url("/v1/messages"), false).await;
    assert_eq!((status, ct.as_str()), (400, "application/json"));
    let e: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("recorded exchange #0"), "{msg}");
    assert!(msg.contains("no message_stop"), "{msg}");
    let t = srv.finish().await;
    assert_eq!(t.exchanges[0].error.as_ref().unwrap().kind, "replay_shape");
}

/// Fault s7-4 (server): a recorded response header HTTP/1.1 cannot carry (an HTTP/2
/// pseudo-header from a browser's HAR, a value with a control character) made the
/// response builder fail; the client got an empty 200 and the trace a false
/// `client_disconnected`. Now those headers are dropped and named, the rest is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_drops_recorded_headers_http1_cannot_carry_instead_of_answering_empty() {
    let req = br#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hello"}]}"#;
    let answer = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"recorded answer"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":3}}"#;
    let mut x = messages_exchange(0, 1_800_000_000, req, "application/json", answer.into());
    let resp = x.response.as_mut().unwrap();
    for (k, v) in [(":status", "200"), ("x-bad", "a\u{1}b"), ("x-ok", "1")] {
        resp.headers.push((k.into(), v.into()));
    }
    let srv = replay_server(vec![x]).await;
    let r = reqwest::Client::new()
        .post(srv.url("/v1/messages"))
        .header("content-type", "application/json")
        .body(&req[..])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ok"], "1");
    assert!(r.headers().get("x-bad").is_none());
    assert_eq!(r.text().await.unwrap(), answer, "the whole recorded body");
    let t = srv.finish().await;
    let x = &t.exchanges[0];
    assert!(x.error.is_none(), "{:?}", x.error);
    let sent = x.response.as_ref().unwrap();
    assert_eq!(sent.body.bytes, answer.as_bytes());
    let names: Vec<&str> = sent.headers.iter().map(|(k, _)| k.as_str()).collect();
    assert!(
        !names.contains(&":status") && !names.contains(&"x-bad"),
        "{names:?}"
    );
    let dropped: Vec<String> =
        serde_json::from_value(x.notes["replay"]["dropped_headers"].clone()).unwrap();
    assert_eq!(dropped.len(), 2, "{dropped:?}");
    assert!(dropped[0].starts_with("\":status\" (an HTTP/2 pseudo-header"));
    assert!(dropped[1].starts_with("\"x-bad\" (its value holds a control character"));
}

/// Fault s7-8: `serve --replay` and `record --replay` read the recording and dropped its
/// unreadable lines without a word, so recorded turns went missing unnoticed. Now both
/// print the warnings `show` prints for that file, say how many recorded requests are
/// replayed, and exit 3 (degraded) like every reader that skipped input.
#[test]
fn replay_server_reports_the_recordings_unreadable_lines_and_what_it_replays() {
    let dir = tempfile::tempdir().unwrap();
    let req = |q: &str| {
        serde_json::json!({"model":"m","max_tokens":5,"messages":[{"role":"user","content":q}]})
            .to_string()
    };
    let answer = |t: &str| {
        serde_json::json!({"id":"msg_1","type":"message","role":"assistant","model":"m",
            "content":[{"type":"text","text":t}],"stop_reason":"end_turn",
            "usage":{"input_tokens":1,"output_tokens":1}})
        .to_string()
    };
    let good = dir.path().join("good.jsonl");
    let mut w = agentwire::trace::TraceWriter::create(&good, &Default::default()).unwrap();
    for (id, t) in [(0, "first"), (1, "second")] {
        let x = messages_exchange(
            id,
            1_800_000_000,
            req("hello").as_bytes(),
            "application/json",
            answer(t).into_bytes(),
        );
        w.write_exchange(&x).unwrap();
    }
    drop(w);
    // Cut exchange 0's line short and add a line that is no JSON: 1 of 3 readable.
    let text = std::fs::read_to_string(&good).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "header and two exchanges");
    let cut = &lines[1][..lines[1].len() / 2];
    let bad = dir.path().join("damaged.jsonl");
    std::fs::write(
        &bad,
        format!("{}\n{cut}\n{{not json\n{}\n", lines[0], lines[2]),
    )
    .unwrap();

    let show = agentwire(&["show", bad.to_str().unwrap()]);
    let show_err = String::from_utf8_lossy(&show.stderr).into_owned();
    let warnings: Vec<&str> = show_err
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{show_err}");
    let count_line = "replaying 1 of 3 recorded requests; 2 lines unreadable";

    let out = dir.path().join("out.jsonl");
    let srv = ServeProcess::start(
        &[
            "--replay",
            bad.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let body = req("hello");
    let got = raw_exchange(
        srv.addr(),
        format!(
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
        std::time::Duration::from_secs(10),
    );
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 200"), "{got}");
    assert!(
        got.contains(r#""text":"second""#),
        "the one readable recording: {got}"
    );
    let (code, printed) = srv.stop();
    for w in &warnings {
        assert!(printed.contains(w), "missing {w:?} in:\n{printed}");
    }
    assert!(printed.contains(count_line), "{printed}");
    assert_eq!(code, Some(3), "{printed}");

    let rec = agentwire(&[
        "record",
        "--replay",
        bad.to_str().unwrap(),
        "-o",
        dir.path().join("rec.jsonl").to_str().unwrap(),
        "--",
        "true",
    ]);
    let err = String::from_utf8_lossy(&rec.stderr);
    for w in &warnings {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    assert!(err.contains(count_line), "{err}");
    assert_eq!(rec.status.code(), Some(3), "{err}");
}
