//! `agentwire replay TRACE --to URL` through the binary against a plain HTTP server on
//! loopback that logs what it receives: `--header` replaces the trace's redaction markers
//! with the user's value, `--rate` spaces the requests' starts, `--compare` names what
//! differs (exit 4), and transport errors exit 1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use agentwire::trace::{Context, TraceWriter};

use crate::common::bin;
use crate::hand_trace::{text, Conv, TraceBuilder};

/// One request as the server saw it: when it arrived, its target and headers.
type Seen = (Instant, String, Vec<(String, String)>);

/// A server answering every request with `reply` (JSON), logging each.
fn server(reply: Value) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    let body = reply.to_string();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { break };
            let (seen, body) = (seen.clone(), body.clone());
            std::thread::spawn(move || {
                let mut r = BufReader::new(c.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let at = Instant::now();
                    let mut headers = Vec::new();
                    let mut len = 0;
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                        let (k, v) = h.trim_end().split_once(':').unwrap();
                        let (k, v) = (k.to_ascii_lowercase(), v.trim().to_string());
                        if k == "content-length" {
                            len = v.parse().unwrap();
                        }
                        headers.push((k, v));
                    }
                    let mut b = vec![0u8; len];
                    r.read_exact(&mut b).unwrap();
                    let target = line.split(' ').nth(1).unwrap_or("").to_string();
                    seen.lock().unwrap().push((at, target, headers));
                    let _ = write!(
                        c,
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                }
            });
        }
    });
    (url, log)
}

/// A trace of `n` Messages requests that carried an API key (a marker once written) and
/// were answered "recorded answer".
fn trace(dir: &std::path::Path, n: usize) -> std::path::PathBuf {
    let mut c = Conv::new("claude-sonnet-4-5");
    c.user(vec![text(40, 'q')]);
    let mut b = TraceBuilder {
        headers: vec![
            (
                "x-api-key".into(),
                "sk-ant-api03-RECORDEDkey0123456789".into(),
            ),
            ("anthropic-version".into(), "2023-06-01".into()),
        ],
        ..Default::default()
    };
    for i in 0..n {
        b.send(
            &c,
            i as f64,
            vec![json!({"type": "text", "text": "recorded answer"})],
            json!({"input_tokens": 1, "output_tokens": 1}),
        );
    }
    let p = dir.join("t.jsonl");
    let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
    p
}

fn answer(text: &str) -> Value {
    json!({"id": "msg_x", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}})
}

fn replay(args: &[&str]) -> std::process::Output {
    Command::new(bin())
        .arg("replay")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn replay_header_replaces_the_recorded_key_marker_and_rate_spaces_the_starts() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 4);
    let (url, log) = server(answer("recorded answer"));
    let o = replay(&[
        t.to_str().unwrap(),
        "--to",
        &url,
        "--rate",
        "4",
        "--header",
        "x-api-key: sk-ant-api03-USERkey",
        "--header",
        "anthropic-beta:  b1 ",
        "--compare",
        "--format",
        "json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"], 4);
    assert_eq!(v["statuses"], json!({"200": 4}));
    assert_eq!(v["differing"], 0);
    let seen = log.lock().unwrap();
    assert_eq!(seen.len(), 4);
    for (_, target, h) in seen.iter() {
        assert_eq!(target, "/v1/messages");
        let all = |k: &str| -> Vec<&str> {
            h.iter()
                .filter(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .collect()
        };
        // The marker the trace holds is not sent; the user's key is, once.
        assert_eq!(all("x-api-key"), ["sk-ant-api03-USERkey"]);
        assert_eq!(all("anthropic-beta"), ["b1"]);
        assert_eq!(all("anthropic-version"), ["2023-06-01"]);
    }
    // 4 per second: request k is started k × 250 ms after the run's start (a schedule,
    // not a gap after the previous one). The server sees each arrive after its start plus
    // a latency; up to 150 ms of it for request 0 is allowed, so request k arrives at
    // least k × 250 − 100 ms after request 0 (without --rate all 4 arrive within ms).
    let mut at: Vec<Instant> = seen.iter().map(|s| s.0).collect();
    at.sort();
    for (k, t) in at.iter().enumerate() {
        let want = Duration::from_millis(250 * k as u64).saturating_sub(Duration::from_millis(150));
        assert!(
            *t - at[0] >= want,
            "request {k}: {:?} < {want:?}",
            *t - at[0]
        );
    }
}

#[test]
fn replay_compare_reports_a_changed_answer_and_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 2);
    let (url, _) = server(answer("another answer"));
    let o = replay(&[t.to_str().unwrap(), "--to", &url, "--compare"]);
    assert_eq!(o.status.code(), Some(4));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.matches(r#"text "recorded answer" -> "another answer""#)
            .count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("responses differing from the recording"),
        "{out}"
    );
}

#[test]
fn replay_with_no_server_listening_exits_1_and_names_the_transport_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 3);
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = replay(&[
        t.to_str().unwrap(),
        "--to",
        &format!("http://{closed}"),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("some requests got no response"), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["statuses"], json!({"error": 3}));
    assert!(v["outcomes"][0]["error"]
        .as_str()
        .unwrap()
        .contains("error"));
    // A new user read the refused connections' times as a server's latency and rate:
    // with no response there are none.
    assert_eq!(v["latency_ms"], Value::Null);
    let table = replay(&[t.to_str().unwrap(), "--to", &format!("http://{closed}")]);
    let table = String::from_utf8_lossy(&table.stdout);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{table}"))
            .to_string()
    };
    assert!(row("latency").ends_with("- (no response)"), "{table}");
    assert!(row("requests/s").trim_end().ends_with('-'), "{table}");
}

/// Fault s7-4 (client): a HAR that Chrome's devtools saved from an HTTP/2 session holds
/// the pseudo-headers `:authority`, `:method`, `:path`, `:scheme`; every request failed
/// with "builder error: invalid HTTP header name", naming neither header nor exchange.
/// Now those (and a value with a control character) are left out and named once each.
#[test]
fn replay_client_sends_an_http2_har_without_its_pseudo_headers() {
    let dir = tempfile::tempdir().unwrap();
    let body = json!({"model":"claude-sonnet-4-5","max_tokens":100,
        "messages":[{"role":"user","content":"hello"}]})
    .to_string();
    let entry = |t: &str| {
        json!({"startedDateTime": t, "time": 50,
        "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages",
            "httpVersion": "http/2.0", "headers": [
                {"name": ":authority", "value": "api.anthropic.com"},
                {"name": ":method", "value": "POST"},
                {"name": ":path", "value": "/v1/messages"},
                {"name": ":scheme", "value": "https"},
                {"name": "x-trace", "value": "a\u{1}b"},
                {"name": "anthropic-version", "value": "2023-06-01"},
                {"name": "content-type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": body}},
        "response": {"status": 200, "httpVersion": "http/2.0",
            "headers": [{"name": "content-type", "value": "application/json"}],
            "content": {"size": 10, "mimeType": "application/json",
                "text": answer("recorded answer").to_string()}},
        "timings": {"send": 1, "wait": 40, "receive": 9}})
    };
    let har = json!({"log": {"version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "entries": [entry("2026-11-29T12:00:00.000Z"), entry("2026-11-29T12:00:01.000Z")]}});
    let path = dir.path().join("h2.har");
    std::fs::write(&path, har.to_string()).unwrap();
    let (url, log) = server(answer("recorded answer"));
    let o = replay(&[path.to_str().unwrap(), "--to", &url, "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["statuses"], json!({"200": 2}), "both requests answered");
    let seen = log.lock().unwrap();
    assert_eq!(seen.len(), 2);
    for (_, target, headers) in seen.iter() {
        assert_eq!(target, "/v1/messages");
        let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
        assert!(names.contains(&"anthropic-version"), "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with(':') || *n == "x-trace"));
    }
    for h in [":authority", ":method", ":path", ":scheme", "x-trace"] {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains(&format!("\"{h}\"")))
            .collect();
        assert_eq!(lines.len(), 1, "one note per header: {err}");
        assert!(
            lines[0].contains("in 2 requests (first: exchange #0)"),
            "{}",
            lines[0]
        );
    }
}
