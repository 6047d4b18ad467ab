//! One content decoder and one SSE parser for every source and reader (issue 17, kinds 6
//! and 7): a gzip'd SSE reply through the recording proxy is stored as sent and read with
//! its usage by `show` and `analyze`; a gzip'd request body through the server is read by
//! the server, `diff` and replay; a bare-CR event stream with an `error` event fails its
//! exchange on the pcap path as everywhere else.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig};
use agentwire::api::{request_body, response_body, MessagesRequest};
use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{Mode, ServerConfig};
use agentwire::report::show;
use agentwire::trace::{Context, TraceWriter};
use serde_json::Value;

use crate::common::*;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

const SSE: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":23,\"output_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"zipped\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":7}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

/// A real upstream on loopback that answers every request with `SSE`, gzip'd.
fn gzip_upstream() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { return };
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            r.read_exact(&mut body).unwrap();
            // Chunked, as the Messages API streams (two chunks).
            let gz = gzip(SSE.as_bytes());
            let mut out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            for piece in gz.chunks(gz.len() / 2 + 1) {
                out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
            c.write_all(&out).unwrap();
        }
    });
    url
}

const REQUEST: &[u8] =
    br#"{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"zip it"}]}"#;

/// A request through the recording proxy to [`gzip_upstream`]: the trace and the bytes
/// the client got.
async fn gzip_sse_through_the_proxy() -> (agentwire::trace::Trace, bytes::Bytes) {
    let up = Upstream::new(&gzip_upstream(), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(up)),
        ..Default::default()
    })
    .await;
    let r = reqwest::Client::new()
        .post(proxy.url("/v1/messages"))
        .header("content-type", "application/json")
        .header("x-api-key", TEST_KEY)
        .body(REQUEST)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let got = r.bytes().await.unwrap();
    (proxy.finish().await, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_reply_cut_short_is_named_by_show_and_analyze_not_read_as_nothing() {
    let (mut trace, _) = gzip_sse_through_the_proxy().await;
    let x = &mut trace.exchanges[0];
    let body = &mut x.response.as_mut().unwrap().body;
    let cut = body.bytes[..body.bytes.len() / 2].to_vec();
    *body = agentwire::trace::Body::new(cut);
    let id = x.id;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.jsonl");
    let mut w = TraceWriter::create(&path, &Context::new()).unwrap();
    w.write_exchange(&trace.exchanges[0]).unwrap();
    w.finish().unwrap();
    for args in [&["show"][..], &["analyze", "--format", "json"][..]] {
        let out = std::process::Command::new(bin())
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?} is degraded: {err}");
        assert!(
            err.contains(&format!("{id}"))
                && err.contains("response body: cannot decode gzip body"),
            "{args:?}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_sse_through_the_recording_proxy_is_stored_as_sent_and_read_with_its_usage() {
    let (trace, got) = gzip_sse_through_the_proxy().await;
    let x = &trace.exchanges[0];
    let resp = x.response.as_ref().unwrap();
    // The source stores the bytes as they crossed the wire ...
    assert_eq!(resp.body.bytes, got.to_vec());
    assert_eq!(resp.body.bytes, gzip(SSE.as_bytes()));
    // ... and the one decoder keeps both sizes.
    let d = response_body(resp);
    assert_eq!(d.bytes, SSE.as_bytes());
    assert_eq!(
        (d.wire_size, d.decoded_size()),
        (got.len() as u64, SSE.len() as u64)
    );
    // show: complete, with the stream's usage.
    let rows = show::rows(&trace);
    assert_eq!(rows[0].stop.as_deref(), Some("end_turn"), "{:?}", x.error);
    assert_eq!(rows[0].usage.as_deref(), Some("23/0/0/7"));
    // analyze: the recorded figures.
    let a = analyze_exchanges(&trace.exchanges, AnalyzeConfig::default());
    let obs = a.requests[0].observed.unwrap();
    assert_eq!((obs.uncached, obs.output), (23, 7));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_request_body_through_the_server_is_read_by_the_server_diff_and_replay() {
    let srv = TestServer::start(ServerConfig::default()).await;
    let c = reqwest::Client::new();
    for (encoding, body) in [("gzip", gzip(REQUEST)), ("identity", REQUEST.to_vec())] {
        let r = c
            .post(srv.url("/v1/messages"))
            .header("content-type", "application/json")
            .header("content-encoding", encoding)
            .header("x-api-key", TEST_KEY)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{encoding}: the server reads the body");
        r.bytes().await.unwrap();
    }
    let trace = srv.finish().await;
    let zipped = &trace.exchanges[0];
    assert_eq!(zipped.request.body.bytes, gzip(REQUEST), "stored as sent");
    assert_eq!(request_body(&zipped.request).bytes, REQUEST);
    let ids = [trace.exchanges[0].id, trace.exchanges[1].id];
    // diff: the two requests have the same content and sizes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let mut w = TraceWriter::create(&path, &Context::new()).unwrap();
    for x in &trace.exchanges {
        w.write_exchange(x).unwrap();
    }
    drop(w);
    let t = path.to_str().unwrap();
    let out = std::process::Command::new(bin())
        .args([
            "diff",
            &format!("{t}#0"),
            &format!("{t}#1"),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let cmp = &d["comparisons"][0];
    let sizes = cmp["sizes"].as_array().unwrap();
    let body = sizes.iter().find(|s| s["metric"] == "body_bytes").unwrap();
    assert_eq!(
        (body["a"].as_u64(), body["b"].as_u64()),
        (Some(REQUEST.len() as u64), Some(REQUEST.len() as u64)),
        "{cmp}"
    );
    assert!(d["problems"].as_array().is_none_or(|p| p.is_empty()), "{d}");
    // replay: the gzip'd recording answers a plain request like the plain one does.
    let replay = Replay::from_trace(trace, Timing::None);
    assert_eq!(replay.len(), 2, "both recordings are readable");
    let (hit, m) = replay
        .find(&MessagesRequest::parse(REQUEST).unwrap())
        .unwrap();
    assert!(m.exact, "{:?}", m.differences);
    assert!(ids.contains(&hit.id));
}

/// Reported by an adversarial tester: `history` over traces whose requests are gzip'd
/// sliced the parsed request's spans (which index the decoded body) out of the still
/// compressed bytes and panicked ("range end index … out of range"); every other diff
/// path used the decoded body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_reads_gzip_request_bodies_decoded_not_their_compressed_bytes() {
    let tools: Vec<Value> = (0..40)
        .map(|k| serde_json::json!({"name": format!("Tool{k}"), "description": "does a thing ".repeat(20),
            "input_schema": {"type": "object", "properties": {"x": {"type": "string"}}}}))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (k, n) in [40usize, 39].into_iter().enumerate() {
        let body = serde_json::to_vec(&serde_json::json!({"model": "m", "max_tokens": 1,
            "tools": tools[..n], "messages": [{"role": "user", "content": "zip it"}]}))
        .unwrap();
        let srv = TestServer::start(ServerConfig::default()).await;
        let r = reqwest::Client::new()
            .post(srv.url("/v1/messages"))
            .header("content-type", "application/json")
            .header("content-encoding", "gzip")
            .header("x-api-key", TEST_KEY)
            .body(gzip(&body))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        let trace = srv.finish().await;
        assert!(
            trace.exchanges[0].request.body.bytes.len() < body.len() / 4,
            "compressed"
        );
        let path = dir.path().join(format!("v{k}.jsonl"));
        let mut w = TraceWriter::create(&path, &Context::new()).unwrap();
        w.write_exchange(&trace.exchanges[0]).unwrap();
        w.finish().unwrap();
        paths.push(path);
    }
    let out = std::process::Command::new(bin())
        .arg("history")
        .args(&paths)
        .args(["--format", "json", "-o", "-"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let h: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{err}"));
    let text = h.to_string();
    // The one tool dropped between the versions is named, read from the decoded bodies.
    assert!(text.contains("Tool39"), "{text}");
}
