//! A property test of `mcp-tap`'s relay through the real binary, with `cat` as the
//! server (it echoes every byte, so both directions are crossed): arbitrary messages
//! (JSON, arbitrary bytes, `\r\n` ends, blank lines, a last message cut short), written
//! in arbitrary splits with reads interleaved. Bytes out == bytes in, and the trace holds
//! one record per message each way whose `size` and `sha256` are the message's (computed
//! here from the bytes sent, not from the trace).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use agentwire::input::open_trace;
use agentwire::trace::mcp::McpDirection;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::common::{bin, sha256_hex, wait_bounded};

/// One message's bytes (no `\n` inside).
fn message() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        (0u32..1000, "[a-z ]{0,40}").prop_map(|(id, s)| format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"q":"{s}"}}}}"#
        )
        .into_bytes()),
        prop::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            0..300
        ),
        Just(Vec::new()),
    ]
}

/// Messages, each with `true` when it ends with `\r\n`, and a last one with no end.
type Stream = (Vec<(Vec<u8>, bool)>, Option<Vec<u8>>);

/// A stream: messages each ended by `\n` or `\r\n`, and maybe a last one with no end.
fn stream() -> impl Strategy<Value = Stream> {
    (
        prop::collection::vec((message(), any::<bool>()), 0..24),
        prop::option::of(prop::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            1..50,
        )),
    )
}

/// The records the relay must make of `lines`: blank ones skipped, a `\r` before the
/// `\n` not part of the message.
fn expected(lines: &[(Vec<u8>, bool)], tail: &Option<Vec<u8>>) -> Vec<(u64, String, bool)> {
    let mut out: Vec<(u64, String, bool)> = Vec::new();
    for (m, crlf) in lines {
        let mut m = m.clone();
        if *crlf {
            m.push(b'\r');
        }
        if m.last() == Some(&b'\r') {
            m.pop();
        }
        if m.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.push((m.len() as u64, sha256_hex(&m), false));
    }
    if let Some(t) = tail
        .as_ref()
        .filter(|t| !t.iter().all(u8::is_ascii_whitespace))
    {
        let mut t = t.clone();
        if t.last() == Some(&b'\r') {
            t.pop();
        }
        out.push((t.len() as u64, sha256_hex(&t), true));
    }
    out
}

fn one_case(
    lines: &[(Vec<u8>, bool)],
    tail: &Option<Vec<u8>>,
    splits: &[usize],
) -> Result<(), TestCaseError> {
    let mut bytes = Vec::new();
    for (m, crlf) in lines {
        bytes.extend_from_slice(m);
        bytes.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
    }
    if let Some(t) = tail {
        bytes.extend_from_slice(t);
    }
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let mut tap = Command::new(bin())
        .args(["mcp-tap", "--name", "echo", "-o"])
        .arg(&trace)
        .args(["--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = tap.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        out.read_to_end(&mut got).unwrap();
        got
    });
    let mut stdin = tap.stdin.take().unwrap();
    let (mut at, mut k) = (0, 0);
    while at < bytes.len() {
        let n = splits[k % splits.len()].min(bytes.len() - at);
        stdin.write_all(&bytes[at..at + n]).unwrap();
        stdin.flush().unwrap();
        if k % 5 == 4 {
            std::thread::sleep(Duration::from_millis(1)); // let the echo interleave
        }
        at += n;
        k += 1;
    }
    drop(stdin);
    let status = wait_bounded(&mut tap, Duration::from_secs(30), "mcp-tap relay");
    let got = reader.join().unwrap();
    prop_assert!(status.success(), "{status}");
    prop_assert_eq!(
        sha256_hex(&got),
        sha256_hex(&bytes),
        "bytes out != bytes in"
    );
    let want = expected(lines, tail);
    let t = open_trace(&trace).unwrap();
    for dir in [McpDirection::ToServer, McpDirection::ToClient] {
        let rec: Vec<(u64, String, bool)> = t
            .mcp
            .iter()
            .filter(|r| r.direction == dir)
            .map(|r| (r.size, r.sha256.clone(), r.truncated))
            .collect();
        prop_assert_eq!(&rec, &want, "{:?}", dir);
    }
    Ok(())
}

/// What it guards: the relay re-framing, dropping or reordering bytes under splits that
/// cut messages anywhere, and its records not matching the wire.
#[test]
fn mcp_tap_relay_is_byte_identical_under_arbitrary_splits() {
    let mut cfg = Config::with_cases(24);
    cfg.failure_persistence = None;
    let mut runner = TestRunner::new_with_rng(
        cfg,
        TestRng::from_seed(RngAlgorithm::ChaCha, b"agentwire mcp-tap relay seed 01."),
    );
    let strategy = (stream(), prop::collection::vec(1usize..400, 1..16));
    if let Err(e) = runner.run(&strategy, |((lines, tail), splits)| {
        one_case(&lines, &tail, &splits)
    }) {
        panic!("{e}");
    }
}
