//! Secrets in captured requests never reach the trace `agentwire pcap` writes, nor its
//! output: the request target's query string (`?key=…`), an `authorization` header and a
//! key inside another header are replaced by markers (the one redaction function, applied
//! by the trace writer to every source), while the body is kept byte-exact.

use std::process::Command;

use agentwire::input::open_trace;
use agentwire::trace::redact::marker;

use super::build::{self, Flow};
use super::synth::{exchange_segs, json_body, response};
use crate::common::{bin, count};

const KEY: &str = "sk-ant-api03-PCAPtargetKEY0123456789";
const OAUTH: &str = "sk-ant-oat01-PCAPoauthTOKEN98765";

/// A capture of one request with secrets in its target, in its `authorization` header
/// and inside another header, and its JSON body.
fn capture_with_secrets() -> (Vec<u8>, Vec<u8>) {
    let body = json_body(300, 3);
    let mut req = format!(
        "POST /v1/messages?beta=true&key={KEY}&other=1 HTTP/1.1\r\nHost: api\r\nauthorization: Bearer {OAUTH}\r\nx-note: retry with {KEY}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(&body);
    let mut flow = Flow::new("10.0.0.1:50000", "10.0.0.2:80", 1000, 9000);
    let segs = exchange_segs(&mut flow, &req, &response(b"{\"type\":\"message\"}"), 1400);
    let cap = build::pcap(
        build::ETHERNET,
        false,
        &build::packets(
            &flow,
            &segs,
            build::ETHERNET,
            1 << 20,
            1_700_000_000_000_000_000,
        ),
    );
    (cap, body)
}

#[test]
fn pcap_redacts_secrets_in_request_targets_and_headers() {
    let (cap, body) = capture_with_secrets();
    let dir = tempfile::tempdir().unwrap();
    let (file, trace) = (dir.path().join("c.pcap"), dir.path().join("t.jsonl"));
    std::fs::write(&file, cap).unwrap();
    let o = Command::new(bin())
        .arg("pcap")
        .arg(&file)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read(&trace).unwrap();
    for secret in [KEY, OAUTH, "PCAPtargetKEY", "PCAPoauthTOKEN"] {
        assert_eq!(
            count(&written, secret.as_bytes()),
            0,
            "{secret} in the trace"
        );
        assert_eq!(count(&o.stdout, secret.as_bytes()), 0);
        assert_eq!(count(&o.stderr, secret.as_bytes()), 0);
    }
    let t = open_trace(&trace).unwrap();
    assert_eq!(t.exchanges.len(), 1);
    let r = &t.exchanges[0].request;
    assert_eq!(
        r.target,
        format!("/v1/messages?beta=true&key={}&other=1", marker(KEY))
    );
    let h = |n: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(h("authorization"), marker(&format!("Bearer {OAUTH}")));
    assert_eq!(h("x-note"), format!("retry with {}", marker(KEY)));
    assert_eq!(h("content-type"), "application/json");
    assert_eq!(r.body.bytes, body, "the body is kept byte-exact");
}

/// Found by an adversarial test: `show` read a capture directly and printed the query's
/// key, since only the trace writer redacted targets. Every reading command now gets
/// redacted exchanges from every input that is not a trace.
#[test]
fn reading_a_capture_directly_prints_no_secret_in_any_command_or_format() {
    let (cap, _) = capture_with_secrets();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.pcap");
    std::fs::write(&file, cap).unwrap();
    let f = file.to_str().unwrap();
    let runs: [&[&str]; 8] = [
        &["show", f],
        &["show", f, "--format", "json"],
        &["show", f, "--format", "md"],
        &["show", &format!("{f}#0")],
        &["analyze", f, "--format", "json"],
        &["report", f, "--format", "md"],
        &["diff", f, f, "--format", "json"],
        &["export", "--har", f, "-o", "-"],
    ];
    for args in runs {
        let o = Command::new(bin()).args(args).output().unwrap();
        assert!(
            o.status.code().is_some_and(|c| c != 101),
            "{args:?} panicked"
        );
        for secret in ["PCAPtargetKEY", "PCAPoauthTOKEN"] {
            assert_eq!(
                count(&o.stdout, secret.as_bytes()),
                0,
                "{secret} printed by {args:?}"
            );
            assert_eq!(
                count(&o.stderr, secret.as_bytes()),
                0,
                "{secret} in {args:?}'s errors"
            );
        }
    }
    // The shown target keeps everything but the key.
    let o = Command::new(bin())
        .args(["show", f, "--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("key={}", marker(KEY))), "{text}");
}
