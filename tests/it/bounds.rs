//! Bounded expansion (issue 32, kind 1): every expansion of a user's file or a relayed
//! answer has a bound, and going past it is an error naming the input, the bound and the
//! flag that raises it: claude-tap blob references (cycles, doubling chains), a gzip'd
//! document read whole, and `mcp-tap --http` answers that are not event streams.

use std::io::{Read, Write};
use std::sync::Arc;

use agentwire::capture::mcp::{http, McpSink};
use agentwire::input::open_trace;
use agentwire::trace::mcp::McpDirection;

use crate::common::*;

/// A claude-tap bundle of one record whose request body is blob `start`, with `blobs`.
fn bundle(start: &str, blobs: serde_json::Value) -> Vec<u8> {
    let r = |h: &str| serde_json::json!({"__claude_tap_blob_ref__": {"hash": h}});
    serde_json::to_vec(&serde_json::json!({
        "__claude_tap_compact_trace__": {"version": 1},
        "records": [
            {"timestamp": "2026-01-01T00:00:00Z", "request": {"method": "POST", "path": "/v1/messages",
                "body": {"model": "m", "messages": [], "tools": r(start)}}},
            {"timestamp": "2026-01-01T00:00:01Z", "request": {"method": "POST", "path": "/v1/messages",
                "body": {"model": "m", "messages": []}}}
        ],
        "blobs": blobs
    }))
    .unwrap()
}

#[test]
fn a_self_referencing_claude_tap_blob_is_a_skipped_record_not_a_stack_overflow() {
    // Before: `show` aborted ("thread 'main' has overflowed its stack", SIGABRT) on this
    // 300-byte bundle; now the record is skipped with a reason and the other is read.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cycle.ctap.json");
    let r = serde_json::json!({"__claude_tap_blob_ref__": {"hash": "a"}});
    std::fs::write(&p, bundle("a", serde_json::json!({"a": {"payload": [r]}}))).unwrap();
    let o = agentwire(&["show", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(3),
        "degraded input, not a crash: {err}"
    );
    assert!(
        err.contains("record 0: blob \"a\" refers to itself"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout)
            .matches("/v1/messages")
            .count(),
        1
    );
}

#[test]
fn a_doubling_chain_of_claude_tap_blobs_stops_at_the_expansion_bound() {
    // Before: 15 levels of [ref k-1, ref k-1] over a 64 KiB leaf (2 GiB expanded) ran
    // out of memory or minutes; now the record stops at --max-expanded (1 MB here).
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("double.ctap.json");
    let mut blobs = serde_json::Map::new();
    blobs.insert(
        "b0".into(),
        serde_json::json!({"payload": "x".repeat(65536)}),
    );
    for k in 1..16 {
        let prev = serde_json::json!({"__claude_tap_blob_ref__": {"hash": format!("b{}", k - 1)}});
        blobs.insert(
            format!("b{k}"),
            serde_json::json!({"payload": [prev, prev]}),
        );
    }
    std::fs::write(&p, bundle("b15", blobs.into())).unwrap();
    let t = std::time::Instant::now();
    let o = agentwire(&["show", "--max-expanded", "1000000", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        t.elapsed().as_secs() < 20,
        "bounded time: {:?}",
        t.elapsed()
    );
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("double.ctap.json")
            && err.contains(
                "larger than 1000000 bytes, the bound; raise it with --max-expanded BYTES"
            ),
        "{err}"
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

#[test]
fn a_gzip_har_past_the_decompression_bound_names_the_file_the_bound_and_the_flag() {
    // Before: a gzip'd HAR was decompressed whole whatever its size (1 MB of .gz took
    // 1.15 GB RSS and 17 s); the bound did not exist and `show` read it.
    let dir = tempfile::tempdir().unwrap();
    let har = std::fs::read(repo().join("captures/imports/sample-session.har")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&har).unwrap();
    doc["log"]["comment"] = " ".repeat(3 << 20).into();
    let p = dir.path().join("big.har.gz");
    std::fs::write(&p, gzip(&serde_json::to_vec(&doc).unwrap())).unwrap();
    assert!(
        std::fs::metadata(&p).unwrap().len() < 64 << 10,
        "a small file"
    );
    let path = p.to_str().unwrap();
    let o = agentwire(&["show", "--max-decompressed", "2000000", path]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("big.har.gz")
            && err.contains(
                "larger than 2000000 bytes, the bound; raise it with --max-decompressed BYTES"
            ),
        "{err}"
    );
    // raised, the same file reads: the sample's exchanges (7 lines of /v1/ requests)
    let ok = agentwire_ok(&["show", "--max-decompressed", "4000000", path]);
    assert!(String::from_utf8_lossy(&ok.stdout).contains("/v1/messages"));
}

/// Issue 32, kind 16 (plain files): a JSON document that is not gzip'd was read whole
/// with no bound at all (a 22 MB file in a `--within` directory took 161 MB and 1.16 s
/// before it was found to be no trace). Now every input read whole has a bound: 1 GiB by
/// default, `--max-document` raises it, and past it the error names the file, the bound
/// and the flag. The sample HAR padded with a 3 MiB comment is about 3.2 MB on disk.
#[test]
fn a_plain_document_read_whole_had_no_bound() {
    let dir = tempfile::tempdir().unwrap();
    let har = std::fs::read(repo().join("captures/imports/sample-session.har")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&har).unwrap();
    doc["log"]["comment"] = " ".repeat(3 << 20).into();
    let p = dir.path().join("big.har");
    std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
    let path = p.to_str().unwrap();
    let o = agentwire(&["show", "--max-document", "2000000", path]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("big.har")
            && err.contains(
                "a document read whole is larger than 2000000 bytes, the bound; raise it with --max-document BYTES"
            ),
        "{err}"
    );
    // the default bound (1 GiB) reads it: the sample's exchanges
    let ok = agentwire_ok(&["show", path]);
    assert!(String::from_utf8_lossy(&ok.stdout).contains("/v1/messages"));
}

/// An MCP server over plain HTTP answering every POST with one JSON answer of `size`
/// bytes (a JSON-RPC result padded with spaces), then closing.
fn big_answer_server(size: usize) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 65536];
            let _ = s.read(&mut buf);
            let head = r#"{"jsonrpc":"2.0","id":1,"result":{}"#;
            let mut body = head.as_bytes().to_vec();
            body.resize(size - 1, b' ');
            body.push(b'}');
            let h = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n");
            let _ = s.write_all(h.as_bytes());
            let _ = s.write_all(&body);
        }
    });
    format!("http://{addr}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_http_json_answer_past_the_record_bound_is_relayed_whole_and_recorded_cut() {
    // Before: the proxy buffered the whole answer and recorded it whole (a 200 MB answer
    // took 1.1 GB RSS); the record held all 40 MiB and no error said anything.
    let size = 40 << 20;
    let url = big_answer_server(size);
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("mcp.jsonl");
    let sink = Arc::new(McpSink::create(&trace_path, "test").unwrap());
    let tap = http::start("big", &url, sink.clone()).await.unwrap();
    let resp = reqwest::Client::new()
        .post(&tap.url)
        .header("content-type", "application/json")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    let got = resp.bytes().await.unwrap();
    assert_eq!(got.len(), size, "relayed whole");
    assert!(got.starts_with(br#"{"jsonrpc":"2.0","id":1,"result":{}"#) && got.ends_with(b" }"));
    tap.stop().await;
    drop(sink);
    let t = open_trace(&trace_path).unwrap();
    let down = t
        .mcp
        .iter()
        .find(|r| r.direction == McpDirection::ToClient)
        .expect("the answer is recorded");
    assert!(down.truncated, "recorded cut");
    assert_eq!(down.size, size as u64, "the wire size, not the bytes kept");
    let kept = down.raw.as_deref().unwrap_or("").len();
    assert_eq!(kept, http::MAX_BODY, "the first 32 MiB kept");
    let event = t
        .mcp
        .iter()
        .find(|r| r.event.as_deref() == Some("error"))
        .unwrap();
    let detail = event.detail.as_deref().unwrap();
    assert!(
        detail
            .contains("answer of 41943040 bytes relayed whole; recorded its first 33554432 bytes"),
        "{detail}"
    );
}
