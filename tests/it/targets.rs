//! Request targets that would escape the upstream (issue 32, kind 10): `serve --upstream
//! http://u:PASS@host/prefix/` normalizes each target once (dot segments, `%2e`, `\`,
//! absolute form); one that climbs above the base path is refused with 400 and recorded
//! as refused; `replay --to …/prefix/` refuses to send it.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire::input::open_trace;

use crate::common::*;

/// An upstream answering `{}` to everything, keeping each request line it got.
fn upstream() -> (std::net::SocketAddr, Arc<Mutex<Vec<String>>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = vec![0u8; 65536];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            s2.lock()
                .unwrap()
                .push(head.lines().next().unwrap_or("").to_string());
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}");
        }
    });
    (addr, seen)
}

#[test]
fn a_target_climbing_out_of_the_upstream_prefix_is_refused_and_recorded() {
    // Before: `/v1/../../admin/delete` (and `%2e%2e`, `\`, absolute form) reached
    // `host/admin/delete` with the upstream URL's Basic credentials, and the trace kept
    // the target as sent.
    let (up, seen) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    let srv = ServeProcess::start(
        &[
            "-o",
            trace.to_str().unwrap(),
            "--upstream",
            &format!("http://u:PASSx9@{up}/prefix/"),
        ],
        &[],
    );
    let send = |target: &str| {
        let req = format!("POST {target} HTTP/1.1\r\nhost: {up}\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}");
        String::from_utf8_lossy(&raw_exchange(
            srv.addr(),
            req.as_bytes(),
            Duration::from_secs(10),
        ))
        .into_owned()
    };
    let escapes = [
        "/v1/../../admin/delete".to_string(),
        "/v1/%2e%2e/%2E%2E/admin/delete".to_string(),
        "/v1\\..\\..\\admin\\delete".to_string(),
        format!("http://{up}/v1/../../admin/delete"),
    ];
    for t in &escapes {
        let got = send(t);
        assert!(got.starts_with("HTTP/1.1 400"), "{t}: {got}");
    }
    let ok = send("/v1/./x/../messages?beta=true");
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    srv.stop();
    let lines = seen.lock().unwrap().clone();
    assert_eq!(
        lines,
        ["POST /prefix/v1/messages?beta=true HTTP/1.1"],
        "only the normalized one arrived"
    );
    let t = open_trace(&trace).unwrap();
    let refused: Vec<_> = t
        .exchanges
        .iter()
        .filter(|x| x.error.as_ref().is_some_and(|e| e.kind == "refused_target"))
        .collect();
    assert_eq!(refused.len(), 4, "each escape is recorded as refused");
    assert!(
        t.exchanges
            .iter()
            .any(|x| x.request.target == "/v1/messages?beta=true"),
        "recorded normalized"
    );
}
