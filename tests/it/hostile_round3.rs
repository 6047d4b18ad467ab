//! Issue 32, the kinds left from round 3, each through the real binary: raw bytes the
//! redaction cannot read are not kept (an HTTP/2 prior-knowledge request with the key
//! in its HPACK block), `--redact-body` on a key split across `text_delta` events and
//! on a JSON-escaped key, Parquet partition names bounded, private directories 0700
//! under umask 000, `FILE#N` refused when ids repeat, `/dev/null` and FIFOs as inputs.

use std::io::{Read, Write};
use std::time::Duration;

use agentwire::input::open_trace;
use agentwire::trace::redact::marker;
use serde_json::Value;

use crate::common::{agentwire, bin, count, raw_exchange, sha256_hex, ServeProcess};

const KEY: &str = "sk-ant-api03-r3HardenUniqueKeyQ7w2Zp9Lm4Xc8Vb6Nn1Tt0Yy";

/// An HPACK literal field without indexing, new name, no Huffman (RFC 7541 §6.2.2).
fn literal(block: &mut Vec<u8>, name: &str, value: &str) {
    block.push(0x00);
    block.push(name.len() as u8);
    block.extend_from_slice(name.as_bytes());
    block.push(value.len() as u8);
    block.extend_from_slice(value.as_bytes());
}

/// What broke: an HTTP/2 prior-knowledge request was kept as `malformed_http`, "secrets
/// redacted", while its HEADERS frame held the `x-api-key` in clear.
#[test]
fn http2_prior_knowledge_kept_its_hpack_key_raw() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let s = ServeProcess::start(&["-o", trace.to_str().unwrap()], &[]);
    let mut block = Vec::new();
    for (n, v) in [
        (":method", "POST"),
        (":scheme", "http"),
        (":path", "/v1/messages"),
        (":authority", "a"),
        ("x-api-key", KEY),
    ] {
        literal(&mut block, n, v);
    }
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]); // SETTINGS, empty
    let n = block.len();
    bytes.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8, 1, 5, 0, 0, 0, 1]);
    bytes.extend_from_slice(&block);
    let _ = raw_exchange(s.addr(), &bytes, Duration::from_secs(3));
    let (_, printed) = s.stop();
    let file = std::fs::read(&trace).unwrap();
    assert_eq!(count(&file, KEY.as_bytes()), 0, "the key is in the trace");
    assert_eq!(count(printed.as_bytes(), KEY.as_bytes()), 0);
    let t = open_trace(&trace).unwrap();
    let x = t
        .exchanges
        .iter()
        .find(|x| x.notes.contains_key("raw_sha256"))
        .expect("the connection is recorded, by size and digest");
    assert_eq!(x.notes["raw_sha256"], Value::from(sha256_hex(&bytes)));
    assert_eq!(x.notes["raw_bytes"], Value::from(bytes.len() as u64));
    assert!(x.request.body.bytes.is_empty());
    let message = &x.error.as_ref().unwrap().message;
    assert!(message.contains("HTTP/2"), "{message}");
    assert!(message.contains("not kept"), "{message}");
}

/// A one-connection upstream: reads one request, answers with `body` as an event stream;
/// returns the request bytes it read.
fn upstream(body: Vec<u8>) -> (std::net::SocketAddr, std::thread::JoinHandle<Vec<u8>>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = s.read(&mut buf).unwrap_or(0);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if got.len() >= end + 4 + len {
                    break;
                }
            }
        }
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&body).unwrap();
        got
    });
    (addr, h)
}

/// What broke: `--redact-body` missed a key streamed across `text_delta` events (the
/// concatenated deltas gave it back) and a key spelled with JSON escapes.
#[test]
fn redact_body_missed_split_and_escaped_keys() {
    let ev = |i: u32, t: &str| {
        format!(
            "event: content_block_delta\ndata: {}\n\n",
            serde_json::json!({"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":t}})
        )
    };
    let (a, rest) = KEY.split_at(6);
    let (b, c) = rest.split_at(20);
    let sse = [
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n".to_string(),
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n".to_string(),
        ev(0, &format!("the key is {a}")),
        ev(0, b),
        ev(0, &format!("{c}, keep it")),
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_string(),
    ]
    .concat();
    let (addr, seen) = upstream(sse.clone().into_bytes());
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let s = ServeProcess::start(
        &[
            "-o",
            trace.to_str().unwrap(),
            "--upstream",
            &format!("http://{addr}"),
            "--redact-body",
        ],
        &[],
    );
    // the key in the request body with an escaped first letter and escaped dashes
    let escaped = KEY.replacen('s', "\\u0073", 1).replace('-', "\\u002d");
    let body = format!(
        r#"{{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{{"role":"user","content":"use {escaped} \/ now"}}]}}"#
    );
    let req = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: a\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = raw_exchange(s.addr(), req.as_bytes(), Duration::from_secs(10));
    let (_, printed) = s.stop();
    // the proxy forwards both as they were: only the trace is redacted
    assert!(count(&seen.join().unwrap(), escaped.as_bytes()) == 1);
    assert!(count(&answer, b.as_bytes()) == 1);

    let file = std::fs::read(&trace).unwrap();
    let tail = &KEY[20..];
    for needle in [KEY, tail, &escaped, b] {
        assert_eq!(
            count(&file, needle.as_bytes()),
            0,
            "{needle:?} in the trace"
        );
    }
    assert_eq!(count(printed.as_bytes(), b.as_bytes()), 0);
    let t = open_trace(&trace).unwrap();
    let x = &t.exchanges[0];
    // the request, read as JSON by serde (not agentwire), says the marker where the key was
    let req: Value = serde_json::from_slice(&x.request.body.bytes).unwrap();
    assert_eq!(
        req["messages"][0]["content"],
        Value::from(format!("use {} / now", marker(KEY)))
    );
    // the deltas of block 0, concatenated here, read the marker where the key was
    let r = x.response.as_ref().unwrap();
    assert!(r.body.redacted);
    let text: String = String::from_utf8_lossy(&r.body.bytes)
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter(|v| v["type"] == "content_block_delta")
        .map(|v| v["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, format!("the key is {}, keep it", marker(KEY)));
}

/// What broke: a long client version made a `cli_version=…` partition name over 255
/// bytes, and the whole `--parquet` run failed.
#[test]
fn parquet_partition_name_too_long_for_a_long_cli_version() {
    use agentwire::trace::{Context, TraceWriter};
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let version = format!("2.{}", "1".repeat(400));
    let mut x = crate::common::messages_exchange(
        0,
        1_764_000_000,
        br#"{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#,
        "application/json",
        br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"output_tokens":1}}"#.to_vec(),
    );
    x.request.headers.push((
        "user-agent".into(),
        format!("claude-cli/{version} (external, cli)"),
    ));
    let mut w = TraceWriter::create(&trace, &Context::new()).unwrap();
    w.write_exchange(&x).unwrap();
    w.finish().unwrap();
    let pq = d.path().join("pq");
    let o = agentwire(&[
        "analyze",
        trace.to_str().unwrap(),
        "--parquet",
        pq.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let parts: Vec<String> = std::fs::read_dir(pq.join("requests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(parts.len(), 1, "{parts:?}");
    let name = &parts[0];
    assert!(
        name.len() <= "cli_version=".len() + 96,
        "{} bytes",
        name.len()
    );
    assert!(
        name.starts_with(&format!("cli_version=2.{}", "1".repeat(40))),
        "{name}"
    );
}

/// What broke: private directories were created with the umask's mode (0777 under
/// umask 000) instead of 0700.
#[test]
fn private_directories_created_with_the_umask_mode() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("new/data");
    let o = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "umask 000; exec {:?} ca --path",
                bin().display().to_string()
            ),
        ])
        .env("AGENTWIRE_DATA_DIR", &data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for dir in [d.path().join("new"), data.clone(), data.join("ca")] {
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{} is {mode:o}", dir.display());
    }
}

/// What broke: `FILE#N` took the first of several exchanges with id N (recordings
/// joined in one file each number from 0), and `diff /dev/null X` or a FIFO said "no
/// such file".
#[test]
fn file_n_picked_one_of_repeated_ids_and_devices_were_no_such_file() {
    let one = crate::common::repo().join("captures/sample-session.jsonl");
    let d = tempfile::tempdir().unwrap();
    let joined = d.path().join("joined.jsonl");
    let bytes = std::fs::read(&one).unwrap();
    std::fs::write(&joined, [&bytes[..], &bytes[..]].concat()).unwrap();
    let o = agentwire(&[
        "diff",
        &format!("{}#0", joined.display()),
        &format!("{}#0", one.display()),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("exchange #0 is ambiguous: 2 exchanges"),
        "{err}"
    );

    let o = agentwire(&["diff", "/dev/null", one.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("no such file"), "{err}");

    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a path in our temporary directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, bytes).unwrap())
    };
    let o = agentwire(&["diff", fifo.to_str().unwrap(), one.to_str().unwrap()]);
    writer.join().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
