//! Inputs agentwire does not read, and how inputs are opened (issue 12, must-show 5): one
//! clear line and a non-zero exit for every reading command, never one warning per line;
//! directories, `-`, gzip and packet captures work for every command alike.

use std::path::{Path, PathBuf};

use crate::common::*;

/// The reading commands, each given `input`.
fn commands(input: &str, out: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["show", input]),
        v(&["analyze", input]),
        v(&["diff", input, input]),
        v(&["replay", input, "--to", "http://127.0.0.1:9"]),
        v(&["import", input, "-o", out, "--force"]),
        v(&["export", "--har", input]),
    ]
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn foreign_and_unknown_inputs_get_one_line_and_a_nonzero_exit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut rng = Rng(7);
    let binary: Vec<u8> = (0..65536).map(|_| rng.next() as u8).collect();
    let unknown_transcript: String = (0..40)
        .map(|i| format!("{{\"type\":\"frobnicate\",\"sessionId\":\"s1\",\"uuid\":\"u{i}\"}}\n"))
        .collect();
    let random_jsonl: String = (0..500)
        .map(|i| format!("{{\"id\":{i},\"value\":\"x{i}\"}}\n"))
        .collect();
    let log: String = (0..500)
        .map(|i| format!("2026-01-01 INFO line {i}\n"))
        .collect();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            write(d, "session.jsonl", unknown_transcript.as_bytes()),
            "Claude Code transcript",
        ),
        (
            write(d, "random.jsonl", random_jsonl.as_bytes()),
            "keys id, value",
        ),
        (write(d, "blob.jsonl", &binary), "binary data"),
        (write(d, "app.log", log.as_bytes()), "text that is not JSON"),
        (write(d, "empty.jsonl", b""), "empty file"),
    ];
    let out = d.join("out.jsonl");
    for (input, looks_like) in &cases {
        for args in commands(input.to_str().unwrap(), out.to_str().unwrap()) {
            let o = agentwire(&args.iter().map(String::as_str).collect::<Vec<_>>());
            let stderr = String::from_utf8_lossy(&o.stderr);
            let what = format!("agentwire {}", args.join(" "));
            assert!(!o.status.success(), "{what}: exit 0\n{stderr}");
            assert!(
                o.stdout.is_empty(),
                "{what}: printed a result: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            assert_eq!(
                stderr.lines().count(),
                1,
                "{what}: one line expected:\n{stderr}"
            );
            assert!(
                stderr.contains(input.to_str().unwrap()),
                "{what}: names the input: {stderr}"
            );
            assert!(
                stderr.contains(looks_like),
                "{what}: says what it looks like: {stderr}"
            );
            assert!(stderr.contains("agentwire reads"), "{what}: {stderr}");
        }
    }
}

/// A trace with many unreadable lines: the first few are listed, then one line counts the
/// rest; exit 3 (degraded), and the good exchanges are still shown.
#[test]
fn unreadable_lines_are_counted_not_listed_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let sample = std::fs::read(repo().join("captures/sample-session.jsonl")).unwrap();
    let mut bytes = sample.clone();
    for i in 0..200 {
        bytes.extend_from_slice(format!("garbage line {i}\n").as_bytes());
    }
    let trace = write(dir.path(), "t.jsonl", &bytes);
    let o = agentwire(&["show", trace.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 4, "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .contains("200 unreadable records (skipped here"),
        "{stderr}"
    );
    let shown = agentwire(&["show", "captures/sample-session.jsonl"]);
    assert_eq!(o.stdout, shown.stdout);
}

#[test]
fn directories_stdin_gzip_and_since_are_read_alike() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sample = repo().join("captures/sample-session.jsonl");
    let bytes = std::fs::read(&sample).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz_path = write(d, "sample.gz", &gz.finish().unwrap());
    let one = agentwire(&["show", sample.to_str().unwrap(), "--format", "json"]);
    assert!(one.status.success());
    let rows = |o: &std::process::Output| -> usize {
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    let n = rows(&one);

    // gzip: the same rows
    let g = agentwire(&["show", gz_path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        g.stdout,
        one.stdout,
        "{}",
        String::from_utf8_lossy(&g.stderr)
    );

    // stdin
    let mut child = std::process::Command::new(bin())
        .args(["show", "-", "--format", "json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &bytes).unwrap();
    let s = child.wait_with_output().unwrap();
    assert_eq!(s.stdout, one.stdout);

    // a directory: the trace, its HAR export and a file that is no trace (skipped, noted)
    let sub = d.join("history");
    std::fs::create_dir_all(sub.join("nested")).unwrap();
    std::fs::copy(&sample, sub.join("a.jsonl")).unwrap();
    let har = sub.join("nested/b.har");
    let e = agentwire(&[
        "export",
        "--har",
        sample.to_str().unwrap(),
        "-o",
        har.to_str().unwrap(),
    ]);
    assert!(e.status.success());
    write(
        &sub,
        "notes.meta.json",
        b"{\"agentType\":\"general-purpose\"}",
    );
    let all = agentwire(&["show", sub.to_str().unwrap(), "--format", "json"]);
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    assert_eq!(rows(&all), 2 * n);
    // two files, two recording contexts: the copy does not run on into the first session
    let sessions = |o: &std::process::Output| -> std::collections::BTreeSet<String> {
        serde_json::from_slice::<serde_json::Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["session"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sessions(&all).len(), 2);
    let both = d.join("both.jsonl");
    let i = agentwire(&[
        "import",
        sample.to_str().unwrap(),
        har.to_str().unwrap(),
        "-o",
        both.to_str().unwrap(),
    ]);
    assert!(i.status.success(), "{}", String::from_utf8_lossy(&i.stderr));
    let shown = agentwire(&["show", both.to_str().unwrap(), "--format", "json"]);
    assert_eq!(rows(&shown), 2 * n);
    assert_eq!(sessions(&shown).len(), 2);
    let note = String::from_utf8_lossy(&all.stderr);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.contains("skipped 1 file not in a format") && note.contains("notes.meta.json"),
        "{note}"
    );

    // --since: the sample was recorded on 2026-11-29
    let since = agentwire(&[
        "show",
        sub.to_str().unwrap(),
        "--since",
        "2026-11-29",
        "--format",
        "json",
    ]);
    assert_eq!(rows(&since), 2 * n);
    let none = agentwire(&[
        "import",
        sub.to_str().unwrap(),
        "--since",
        "2026-11-30T00:00:00Z",
        "-o",
        d.join("x.jsonl").to_str().unwrap(),
    ]);
    assert!(!none.status.success());
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.contains("none since 2026-11-30"), "{err}");
}

/// Every reading command takes a packet capture (pcap, pcapng, gzip-compressed) and sees
/// the exchanges `agentwire pcap` writes from it; a capture cut short keeps what was read
/// before the cut, says where it stopped, and the run is degraded (exit 3).
#[test]
fn packet_captures_are_read_by_every_command_as_agentwire_pcap_extracts_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = shared_capture("claude-code/cc2.1.304-hello.pcap");
    let bytes = std::fs::read(&pcap).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gz_path = write(d, "capture.gz", &gz.finish().unwrap());
    let ok = agentwire_ok;
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for input in [
        pcap.clone(),
        shared_capture("claude-code/cc2.1.304-hello-anyiface.pcapng"),
        gz_path.clone(),
    ] {
        let trace = d.join("extracted.jsonl");
        ok(&["pcap", &s(&input), "-o", &s(&trace), "--force"]);
        let show = |p: &Path| ok(&["show", &s(p), "--format", "json"]).stdout;
        let shown = show(&input);
        let n = serde_json::from_slice::<serde_json::Value>(&shown)
            .unwrap()
            .as_array()
            .unwrap()
            .len();
        assert!(n >= 1, "{}: {n} exchanges", input.display());
        assert_eq!(shown, show(&trace), "{}", input.display());
        let summary = |p: &Path| {
            let o = ok(&["analyze", "--format", "json", "--usage", "simulated", &s(p)]);
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["summary"].clone()
        };
        assert_eq!(summary(&input), summary(&trace), "{}", input.display());
        let diff = ok(&["diff", &s(&input), &s(&trace), "--format", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
        assert_eq!(
            v["comparisons"][0]["identical"],
            true,
            "{}",
            input.display()
        );
        let imported = d.join("imported.jsonl");
        ok(&["import", &s(&input), "-o", &s(&imported), "--force"]);
        assert_eq!(show(&imported).len(), shown.len());
    }
    // Cut the capture in the middle of its last packet.
    let cut = write(d, "cut.pcap", &bytes[..bytes.len() - 40]);
    let o = agentwire(&["show", &s(&cut), "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("is truncated") && stderr.contains(&s(&cut)),
        "{stderr}"
    );
    assert!(!o.stdout.is_empty());
}

/// The shipped HAR sample is the shipped trace exported: read back it gives the same
/// requests, byte for byte (the request digests the trace recorded), and the same answer
/// from `analyze`: 7 requests, and 3 polls of which 2 redundant (the scenario reads the
/// output file of a `sleep 3` job three times before it prints: three empty reads).
#[test]
fn the_shipped_har_sample_reads_as_the_shipped_trace() {
    use agentwire::input::{open_input, InputOptions};
    use agentwire::trace::Record;
    let read = |p: &Path| -> Vec<String> {
        open_input(p, &InputOptions::default())
            .unwrap()
            .filter_map(|r| match r.unwrap() {
                Record::Exchange(x) => Some(x.request.body.sha256()),
                _ => None,
            })
            .collect()
    };
    let trace = read(&repo().join("captures/sample-session.jsonl"));
    let har = read(&repo().join("captures/imports/sample-session.har"));
    assert_eq!(trace.len(), 7);
    assert_eq!(har, trace);
    let o = std::process::Command::new(bin())
        .args(["analyze", "--format", "json"])
        .arg(repo().join("captures/imports/sample-session.har"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["summary"];
    assert_eq!(
        (
            s["requests"].as_u64(),
            s["polls"].as_u64(),
            s["redundant_polls"].as_u64()
        ),
        (Some(7), Some(3), Some(2))
    );
}

/// Blank lines (spaces, CRLF) before the first record neither decide the format nor hide
/// the file: a trace or a bare request body reads as it does without them. Was: "text
/// that starts like JSON but is not valid JSON", or "an empty file (only whitespace)";
/// then (reported by an adversarial tester) 8 KiB of blank lines still did, and each blank
/// line rescanned all those before it.
#[test]
fn blank_lines_before_the_first_record_do_not_decide_the_format() {
    use agentwire::trace::{Context, TraceWriter};
    let dir = tempfile::tempdir().unwrap();
    let body = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
    let trace = dir.path().join("t.jsonl");
    let mut w = TraceWriter::create(&trace, &Context::new()).unwrap();
    for i in 0..2 {
        w.write_exchange(&messages_exchange(
            i,
            1_700_000_000,
            body,
            "application/json",
            b"{}".to_vec(),
        ))
        .unwrap();
    }
    w.finish().unwrap();
    let plain_body = write(dir.path(), "b.json", body);
    let plain_trace = std::fs::read(&trace).unwrap();
    let long = ["\n".repeat(9000), " \r\n".repeat(100_000)];
    for lead in ["\n", "  \r\n", "\n   \n", &long[0], &long[1]] {
        for (name, plain) in [("t.jsonl", plain_trace.clone()), ("b.json", body.to_vec())] {
            let mut bytes = lead.as_bytes().to_vec();
            bytes.extend_from_slice(&plain);
            let led = write(dir.path(), &format!("led-{name}"), &bytes);
            let original = if name == "b.json" {
                plain_body.clone()
            } else {
                trace.clone()
            };
            let a = agentwire_ok(&["show", "--format", "json", original.to_str().unwrap()]);
            let b = agentwire_ok(&["show", "--format", "json", led.to_str().unwrap()]);
            let strip = |o: &[u8]| String::from_utf8_lossy(o).replace(&format!("led-{name}"), name);
            assert_eq!(
                strip(&a.stdout),
                strip(&b.stdout),
                "{} blank bytes before {name}",
                lead.len()
            );
        }
    }
}

/// Reported by an adversarial tester: a gzip'd trace cut short (or followed by bytes that
/// are not gzip) was a fatal read error ("incomplete deflate stream", exit 1) and lost
/// every exchange, where the same trace uncompressed and cut short keeps the whole records
/// and exits 3.
#[test]
fn a_gzip_trace_cut_short_keeps_the_records_before_the_cut() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read(repo().join("captures/sample-session.jsonl")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &plain).unwrap();
    let gz = gz.finish().unwrap();
    for (name, bytes) in [
        ("cut.jsonl.gz", gz[..gz.len() * 3 / 4].to_vec()),
        ("junk.jsonl.gz", [&gz[..], b"junk\n"].concat()),
    ] {
        let path = write(dir.path(), name, &bytes);
        // What decompresses before the error, independently: whole lines are records.
        let mut got = Vec::new();
        let mut d = flate2::read::MultiGzDecoder::new(&bytes[..]);
        let mut buf = [0u8; 512];
        while let Ok(n) = d.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        let whole_lines = got.iter().filter(|&&b| b == b'\n').count();
        let out = agentwire(&["show", path.to_str().unwrap(), "--format", "json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{name}: degraded, not failed: {err}"
        );
        assert!(err.contains("the gzip stream stops with an error"), "{err}");
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        // every whole line but the header is an exchange
        assert_eq!(rows.as_array().unwrap().len(), whole_lines - 1, "{name}");
    }
}

/// Reported by an adversarial tester: a trace whose first line is damaged (its header cut,
/// or `{}`) was refused whole as "not valid JSON" or "JSON whose first object has the
/// keys ," (and read whole into memory first); its records were lost.
#[test]
fn a_trace_whose_first_line_is_damaged_keeps_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let plain = std::fs::read_to_string(repo().join("captures/sample-session.jsonl")).unwrap();
    let (first, rest) = plain.split_once('\n').unwrap();
    let want = agentwire_ok(&[
        "show",
        "--format",
        "json",
        repo()
            .join("captures/sample-session.jsonl")
            .to_str()
            .unwrap(),
    ]);
    let want: serde_json::Value = serde_json::from_slice(&want.stdout).unwrap();
    for (name, damaged) in [("cut", &first[..50]), ("empty", "{}")] {
        let path = write(dir.path(), name, format!("{damaged}\n{rest}").as_bytes());
        let out = agentwire(&["show", "--format", "json", path.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{name}: degraded: {err}");
        assert!(
            err.contains("line 1 (byte 0): not a trace record"),
            "{name}: {err}"
        );
        let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            got.as_array().unwrap().len(),
            want.as_array().unwrap().len(),
            "{name}: every exchange"
        );
    }
}

/// Found by an adversarial test: HAR (`content.text` is decoded, HAR 1.2) and claude-trace
/// (`fetch` decoded the body) keep the response's `content-encoding: gzip` header, and
/// every read of the import tried to gunzip plain JSON, warned and exited 3. The coding is
/// now recorded as already removed.
#[test]
fn imported_bodies_that_other_tools_decoded_are_not_decoded_again() {
    let dir = tempfile::tempdir().unwrap();
    let request =
        r#"{"model":"claude-x","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}"#;
    let reply = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"decoded"}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":2}}"#;
    let har = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "1"},
        "entries": [{"startedDateTime": "2026-11-29T12:00:00.000Z", "time": 120,
            "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages", "httpVersion": "HTTP/1.1",
                "headers": [{"name": "content-type", "value": "application/json"}],
                "postData": {"mimeType": "application/json", "text": request}},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                "headers": [{"name": "content-type", "value": "application/json"},
                            {"name": "Content-Encoding", "value": "gzip"}],
                "content": {"size": 250, "mimeType": "application/json", "text": reply}},
            "timings": {"send": 1, "wait": 100, "receive": 19}}]}});
    let ctrace = serde_json::json!({
        "request": {"timestamp": 1764410000.0, "method": "POST", "url": "https://api.anthropic.com/v1/messages",
            "headers": {"content-type": "application/json"}, "body": serde_json::from_str::<serde_json::Value>(request).unwrap()},
        "response": {"timestamp": 1764410001.0, "status_code": 200,
            "headers": {"content-type": "application/json", "content-encoding": "gzip"},
            "body": serde_json::from_str::<serde_json::Value>(reply).unwrap()},
        "logged_at": "2026-11-29T10:00:01.000Z"});
    let inputs = [
        write(dir.path(), "s.har", har.to_string().as_bytes()),
        write(dir.path(), "c.jsonl", format!("{ctrace}\n").as_bytes()),
    ];
    for input in &inputs {
        let f = input.to_str().unwrap();
        let out = dir.path().join("imported.jsonl");
        let imported = agentwire(&["import", f, "-o", out.to_str().unwrap(), "--force"]);
        assert_eq!(
            imported.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&imported.stderr)
        );
        for source in [f, out.to_str().unwrap()] {
            let o = agentwire(&["analyze", source, "--format", "json"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(0), "{source}: {err}");
            assert!(!err.contains("decode"), "{err}");
            let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            // The reply was read: its 2 output tokens are counted.
            assert_eq!(a["summary"]["requests"], 1, "{source}");
            assert_eq!(a["summary"]["output_tokens"], 2, "{source}");
        }
        let t = agentwire::input::open_trace(&out).unwrap();
        let body = &t.exchanges[0].response.as_ref().unwrap().body;
        assert_eq!(body.bytes, reply.as_bytes());
        assert_eq!(body.content_encoding.as_deref(), Some("gzip"));
    }
}
