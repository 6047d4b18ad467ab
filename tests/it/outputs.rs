//! One output policy for every writer (issue 10, kinds 9 and 10): an existing output is
//! replaced only with `--force`, inputs are checked before any output is opened, outputs
//! appear whole (temp file + rename) and owner-only, and `-` is standard output.

use crate::common::*;

#[cfg(unix)]
fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// `pcap` overwrote existing outputs silently, and a mistyped input path replaced an
/// existing trace with an empty one.
#[test]
fn pcap_keeps_existing_traces_and_checks_inputs_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    std::fs::write(&out, b"precious\n").unwrap();
    let cap = shared_capture("claude-code/cc2.1.304-subagent.pcap");
    let (cap, o) = (cap.to_str().unwrap(), out.to_str().unwrap());
    let typo = agentwire(&["pcap", "/no/such/capture.pcap", "-o", o, "--force"]);
    assert_eq!(typo.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&typo.stderr).contains("/no/such/capture.pcap"));
    assert_eq!(
        std::fs::read(&out).unwrap(),
        b"precious\n",
        "a mistyped input costs nothing"
    );
    let refused = agentwire(&["pcap", cap, "-o", o]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--force"));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious\n");
    let forced = agentwire(&["pcap", cap, "-o", o, "--force", "--format", "json"]);
    assert!(forced.status.success());
    assert_eq!(
        agentwire::input::open_trace(&out).unwrap().exchanges.len(),
        4
    );
    #[cfg(unix)]
    assert_eq!(mode(&out), 0o600, "traces hold bodies: owner-only");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    // `-`: the trace on stdout, the summary on stderr
    let piped = agentwire(&["pcap", cap, "-o", "-", "--format", "json"]);
    assert!(piped.status.success());
    let first = String::from_utf8_lossy(&piped.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(first.contains("\"format\":\"agentwire-trace\""), "{first}");
    let summary: serde_json::Value = serde_json::from_slice(
        &piped.stderr[..piped.stderr.iter().rposition(|b| *b == b'}').unwrap() + 1],
    )
    .unwrap();
    assert_eq!(summary["exchanges"], 4);
}

/// `analyze --parquet` replaced existing tables silently; now it refuses before the
/// analysis, and `--force` replaces them whole.
#[test]
fn analyze_parquet_needs_force_to_replace_tables() {
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("pq");
    let trace = repo().join("captures/sample-session.jsonl");
    let (t, p) = (trace.to_str().unwrap(), pq.to_str().unwrap());
    assert!(
        agentwire(&["analyze", t, "--parquet", p, "--format", "json"])
            .status
            .success()
    );
    let tables = || {
        let mut f = crate::common::files_under(&pq);
        f.sort();
        f.iter()
            .map(|p| (p.clone(), std::fs::read(p).unwrap()))
            .collect::<Vec<_>>()
    };
    let before = tables();
    assert!(before.len() >= 5, "{before:?}");
    // Reported by an adversarial tester: a regular file given as the directory was
    // called "a directory; give a file path", the reverse of the truth.
    let file = dir.path().join("ex.txt");
    std::fs::write(&file, "keep").unwrap();
    let onto_file = agentwire(&["analyze", t, "--parquet", file.to_str().unwrap()]);
    assert_eq!(onto_file.status.code(), Some(1));
    let err = String::from_utf8_lossy(&onto_file.stderr);
    assert!(
        err.contains("is a file") && err.contains("give a directory path"),
        "{err}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");
    let again = agentwire(&["analyze", t, "--parquet", p, "--format", "json"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(again.stdout.is_empty(), "refused before the analysis ran");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert!(tables() == before, "the tables were left as they were");
    assert!(
        agentwire(&["analyze", t, "--parquet", p, "--force", "--format", "json"])
            .status
            .success()
    );
    #[cfg(unix)]
    for (f, _) in tables() {
        assert_eq!(mode(&f), 0o600, "{}", f.display());
    }
}

/// `matrix` replaced earlier runs' traces; now it refuses before recording anything.
#[test]
fn matrix_refuses_to_replace_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let earlier = dir
        .path()
        .join(agentwire::capture::matrix::file_name("claude-code@2.1.303"));
    std::fs::write(&earlier, b"earlier run\n").unwrap();
    let o = agentwire(&[
        "matrix",
        "--cli",
        "claude-code@2.1.303",
        "--route",
        "base-url",
        "-d",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--force"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&earlier).unwrap(), b"earlier run\n");
}

/// `capture` replaced an existing trace; the interface is opened first, then the output
/// is refused without `--force`.
#[test]
fn capture_keeps_existing_traces() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: live capture needs root (CI runs as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.jsonl");
    std::fs::write(&out, b"precious\n").unwrap();
    let o = agentwire(&[
        "capture",
        "--iface",
        "lo",
        "--duration",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&out).unwrap(), b"precious\n");
}

/// Reported by a new user: `mcp-tap -o FILE` replaced an earlier recording without a
/// word, and `--force` was rejected, against the one output policy. A second tap onto the
/// same file is refused before the server starts (the file keeps its bytes); with
/// `--force` it is replaced by a trace of the new session.
#[test]
fn mcp_tap_keeps_an_existing_recording_without_force() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tap.jsonl");
    std::fs::write(&out, b"precious\n").unwrap();
    let server =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures/mcp/jobs_server.py");
    let tap = |force: bool| {
        let mut args = vec!["mcp-tap", "--name", "jobs", "-o", out.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        args.extend(["--", "python3", server.to_str().unwrap()]);
        let mut child = std::process::Command::new(bin())
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let refused = tap(false);
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("--force"), "{err}");
    assert!(refused.stdout.is_empty(), "the server never ran");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious\n");
    let replaced = tap(true);
    assert!(
        replaced.status.success(),
        "{}",
        String::from_utf8_lossy(&replaced.stderr)
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("{\"type\":\"trace\""), "{text}");
    assert_eq!(text.matches("\"method\":\"ping\"").count(), 1, "{text}");
}

/// Reported by an adversarial tester: with `--force`, `report analyze t.jsonl -o t.jsonl`
/// (and `pcap x.pcap -o x.pcap`) replaced the input being read with the output. `--force`
/// replaces earlier outputs, never an input: under its own name, another spelling of the
/// path, or a symlink, the input is refused and keeps its bytes.
#[test]
fn force_never_replaces_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    std::fs::copy(repo().join("captures/sample-session.jsonl"), &t).unwrap();
    let before = std::fs::read(&t).unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&t, &link).unwrap();
    let (t_s, link_s) = (t.to_str().unwrap(), link.to_str().unwrap());
    let dotted = format!("{}/./t.jsonl", dir.path().display());
    for args in [
        vec![
            "report", "analyze", t_s, "-o", t_s, "--format", "md", "--force",
        ],
        vec![
            "report",
            "diff",
            &format!("{t_s}#0"),
            t_s,
            "-o",
            &dotted,
            "--format",
            "md",
            "--force",
        ],
        vec!["import", link_s, "-o", t_s, "--force"],
        vec!["export", "--har", t_s, "-o", link_s, "--force"],
    ] {
        let o = agentwire(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("is also an input"), "{args:?}: {err}");
        assert_eq!(
            std::fs::read(&t).unwrap(),
            before,
            "{args:?} changed the input"
        );
    }
}

/// Reported by an adversarial tester: `pcap garbage.bin -o o.jsonl` and `pcap good.pcap
/// garbage.bin -o o.jsonl` exited 1 but still wrote `o.jsonl` (a header-only trace, or the
/// good file's exchanges), so a re-run needed `--force`; a directory as input did the
/// same. Every input is now recognised as a capture (magic number) before the output is
/// opened, and `-o` naming an input is refused even with `--force`.
#[test]
fn pcap_writes_nothing_when_an_input_is_not_a_capture() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.bin");
    std::fs::write(
        &garbage,
        (0..5000u32)
            .map(|i| (i * 7919 % 251) as u8)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let good = shared_capture("claude-code/cc2.1.304-hello.pcap");
    let out = dir.path().join("o.jsonl");
    let (g, o) = (garbage.to_str().unwrap(), out.to_str().unwrap());
    for args in [
        vec!["pcap", g, "-o", o],
        vec!["pcap", good.to_str().unwrap(), g, "-o", o],
        vec!["pcap", dir.path().to_str().unwrap(), "-o", o],
    ] {
        let r = agentwire(&args);
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains("no output was written"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    let copy = dir.path().join("c.pcap");
    std::fs::copy(&good, &copy).unwrap();
    let before = std::fs::read(&copy).unwrap();
    let c = copy.to_str().unwrap();
    let r = agentwire(&["pcap", c, "-o", c, "--force"]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        before,
        "the capture was replaced"
    );
}

/// Reported by an adversarial tester: a trace written to a pipe (`-o -`) passed through
/// the terminal filter, which rewrote a BOM, ZWJ, soft hyphen, U+2028, DEL, C1 or bidi
/// character inside a body embedded verbatim as `\uXXXX`: the body no longer matched its
/// `sha256` and `show -` dropped every such exchange.
#[test]
fn a_trace_piped_with_o_dash_is_the_file_trace_byte_for_byte_whatever_its_bodies_hold() {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body.json");
    let text = "bom \u{feff} zwj \u{1f468}\u{200d}\u{1f4bb} shy \u{ad} ls \u{2028} del \u{7f} c1 \u{9b} rlo \u{202e}";
    let request = serde_json::json!({"model": "m", "max_tokens": 1,
        "messages": [{"role": "user", "content": text}]});
    std::fs::write(&body, serde_json::to_vec(&request).unwrap()).unwrap();
    let file = dir.path().join("t.jsonl");
    let (b, f) = (body.to_str().unwrap(), file.to_str().unwrap());
    assert!(agentwire(&["import", b, "-o", f]).status.success());
    let piped = agentwire(&["import", b, "-o", "-"]);
    assert!(piped.status.success());
    assert_eq!(
        piped.stdout,
        std::fs::read(&file).unwrap(),
        "same bytes as -o FILE"
    );
    // Read back from the pipe's bytes: the exchange is there, its body intact.
    let trace =
        agentwire::trace::Trace::from_reader(&piped.stdout[..], std::path::Path::new("-")).unwrap();
    assert!(trace.problems.is_empty(), "{:?}", trace.problems);
    assert_eq!(trace.exchanges.len(), 1);
    let got: serde_json::Value =
        serde_json::from_slice(&trace.exchanges[0].request.body.bytes).unwrap();
    assert_eq!(got["messages"][0]["content"], text);
}

/// Reported by an adversarial tester: `export --har` on a full disk said "cannot write
/// trace HAR output" instead of naming the file (and it is not a trace).
#[cfg(target_os = "linux")]
#[test]
fn a_har_that_cannot_be_written_names_its_path() {
    let trace = repo().join("captures/sample-session.jsonl");
    let out = agentwire(&[
        "export",
        "--har",
        trace.to_str().unwrap(),
        "-o",
        "/dev/full",
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot write /dev/full: No space left on device"),
        "{err}"
    );
    assert!(
        !err.contains("HAR output") && !err.contains("trace"),
        "{err}"
    );
}
