//! Faults an adversarial tester found, one test per kind: an allocation sized by an
//! untrusted number (a stream event's block index), directory walks that hung on a FIFO or
//! read one trace many times through a symlink loop, and `serve -o -` that kept running
//! after its trace pipe closed. Flag values and silent drops are rows of `exit_codes`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentwire::trace::{Context, Exchange};

use crate::common::*;

/// Run `agentwire ARGS`, killing it (and failing) if it has not ended after 60 s.
fn run_bounded(args: &[&str]) -> std::process::Output {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = wait_bounded(
        &mut child,
        Duration::from_secs(60),
        &format!("agentwire {args:?}"),
    );
    std::process::Output {
        status,
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
    }
}

/// A streamed Messages exchange whose second event names content block 4294967295.
fn huge_index_exchange() -> Exchange {
    let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":4294967295,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let req = br#"{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    messages_exchange(
        0,
        1_764_000_000,
        req,
        "text/event-stream",
        sse.as_bytes().to_vec(),
    )
}

/// A stream event naming content block 4294967295 made `show`, `analyze` and `report`
/// grow the block list to that length (abort, or 23 GB). The event is now a bad part of
/// the exchange: skipped, named on stderr, exit 3; the rest of the exchange is read.
#[test]
fn huge_stream_block_index_is_skipped_with_a_warning_not_allocated() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bomb.jsonl");
    let mut w = agentwire::trace::TraceWriter::create(&trace, &Context::new()).unwrap();
    w.write_exchange(&huge_index_exchange()).unwrap();
    w.finish().unwrap();
    let t = trace.to_str().unwrap();
    let md = dir.path().join("a.md");
    for args in [
        vec!["show", t, "--format", "json"],
        vec!["analyze", t, "--format", "json"],
        vec!["report", "analyze", t, "-o", md.to_str().unwrap()],
    ] {
        let o = run_bounded(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("content block 4294967295"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // the exchange itself is still shown, with its usage
    let o = run_bounded(&["show", t, "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!(rows[0]["usage"], "5/0/0/1");
}

/// A FIFO inside an input directory made `show DIR` wait forever; a symlink back up the
/// tree (`sub/up -> ..`) made `analyze` read the sample 40 times (280 requests instead of
/// 7). Now the FIFO is skipped with a note and every file is read once.
#[test]
fn directory_walk_skips_fifos_and_reads_each_file_once_through_symlink_loops() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::copy(
        repo().join("captures/sample-session.jsonl"),
        d.join("a.jsonl"),
    )
    .unwrap();
    let fifo = d.join("b.jsonl");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("..", d.join("sub/up")).unwrap();
    std::os::unix::fs::symlink("a.jsonl", d.join("same.jsonl")).unwrap();
    let ds = d.to_str().unwrap();

    let o = run_bounded(&["show", ds, "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // the sample holds 7 exchanges (8 lines: a header, then one per exchange)
    assert_eq!(rows.as_array().unwrap().len(), 7, "{err}");
    assert!(
        err.contains("b.jsonl") && err.contains("not a regular file"),
        "{err}"
    );

    let o = run_bounded(&["analyze", ds, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["requests"], 7);
}

/// `serve -o - | head -c 10`: after the pipe closed the server answered every client 503
/// ("cannot write trace -: Broken pipe") and ran on. Like every command whose output pipe
/// closes, it now stops, exit 0.
#[test]
fn serve_stops_cleanly_when_its_trace_pipe_closes() {
    use std::io::BufRead;
    let mut child = Command::new(bin())
        .args(["serve", "-o", "-", "--addr", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // With `-o -` the base URL is the first stderr line.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut url = String::new();
    err.read_line(&mut url).unwrap();
    let addr = url.trim().trim_start_matches("http://").to_string();
    // Read the trace header, then close the pipe, as `head -c 10` does.
    let mut out = child.stdout.take().unwrap();
    let mut head = [0u8; 10];
    out.read_exact(&mut head).unwrap();
    drop(out);
    let body = br#"{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut statuses = Vec::new();
    let start = Instant::now();
    // Each request's exchange is written after it is answered: the first write meets the
    // closed pipe and the server stops; later connections are refused.
    while start.elapsed() < Duration::from_secs(30) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let Ok(mut s) = std::net::TcpStream::connect(&addr) else {
            break;
        };
        let _ = write!(
            s,
            "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        let _ = s.write_all(body);
        let mut resp = String::new();
        let _ = s.read_to_string(&mut resp);
        if let Some(code) = resp.split(' ').nth(1) {
            statuses.push(code.to_string());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = wait_bounded(
        &mut child,
        Duration::from_secs(40),
        &format!("serve after its trace pipe closed (answers {statuses:?})"),
    );
    let mut rest = String::new();
    let _ = err.read_to_string(&mut rest);
    assert_eq!(status.code(), Some(0), "{rest}");
    assert_eq!(statuses.first().map(String::as_str), Some("200"), "{rest}");
    assert!(
        statuses.iter().filter(|s| *s == "503").count() <= 1,
        "answers {statuses:?}"
    );
    assert!(!rest.contains("free space"), "{rest}");
}
