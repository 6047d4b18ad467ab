//! Replay: a recorded session answers a new client (real Claude Code 2.1.304 driven by a
//! 2.1.303 recording; the sample agent with a changed prompt), timing is reproduced, and
//! the replay client re-sends traffic and compares responses.

use std::sync::Arc;
use std::time::Instant;

use agentwire::api::{read_response, MessagesRequest, ResponseBody};
use agentwire::capture::server::replay::{Replay, Timing};
use agentwire::capture::server::{Mode, ServerConfig};
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

/// Issue 5, must-show 1 (the replay half): a session recorded with 2.1.303 drives 2.1.304
/// through the same conversation.
#[test]
fn recording_of_2_1_303_drives_2_1_304_through_the_same_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("303.jsonl"), dir.path().join("304.jsonl"));
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
    let (t_old, t_new) = (Trace::open(&old).unwrap(), Trace::open(&new).unwrap());
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
    let t = Trace::open(&new).unwrap();
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
    assert_eq!(tool_calls(&t), tool_calls(&Trace::open(&sample).unwrap()));
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
    let replay = Replay::load(&path, Timing::None).unwrap();
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
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: agentwire::trace::Body::new(body.as_bytes().to_vec()),
        },
        response: None,
        error: None,
        notes: Default::default(),
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
        ],
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
