//! `-` for stdin and stdout (issue 16, must-show 1): a trace piped from one command into
//! another gives the same report as going through a file. The trace input opener (`-` =
//! stdin, `agentwire::input`) and the output policy (`-` = stdout,
//! `agentwire::output`) are the ones every command uses.

use std::process::{Command, Stdio};

use crate::common::*;

/// `bash -c SCRIPT` with `$AW` set to the binary, in an empty directory (so a `-` taken
/// for a file name can neither be found nor left behind); returns (status, stdout, stderr).
fn sh(script: &str) -> (Option<i32>, String, String) {
    let cwd = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .current_dir(cwd.path())
        .arg("-c")
        .arg(format!("set -o pipefail; {script}"))
        .env("AW", bin())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn pcap_to_stdout_piped_into_show_matches_going_through_a_file() {
    let pcap = shared_capture("claude-code/cc2.1.304-hello.pcap");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.jsonl");
    let (code, _, err) = sh(&format!(
        "\"$AW\" pcap '{}' -o '{}'",
        pcap.display(),
        file.display()
    ));
    assert_eq!(code, Some(0), "{err}");
    let (code, via_file, err) = sh(&format!("\"$AW\" show '{}'", file.display()));
    assert_eq!(code, Some(0), "{err}");
    let (code, via_pipe, err) = sh(&format!(
        "\"$AW\" pcap '{}' -o - | \"$AW\" show -",
        pcap.display()
    ));
    assert_eq!(code, Some(0), "{err}");
    // the capture holds Claude Code 2.1.304 saying hello: at least one Messages exchange
    assert!(via_file.contains("/v1/messages"), "{via_file}");
    assert_eq!(via_pipe, via_file);
    // pcap's summary went to stderr, not into the pipe
    assert!(err.contains("exchanges"), "{err}");
}

#[test]
fn trace_on_stdin_analyzes_like_the_file() {
    let trace = repo().join("captures/sample-session.jsonl");
    let run = |format: &str, piped: bool| {
        let script = if piped {
            format!(
                "cat '{}' | \"$AW\" analyze --format {format} -",
                trace.display()
            )
        } else {
            format!("\"$AW\" analyze --format {format} '{}'", trace.display())
        };
        let (code, out, err) = sh(&script);
        assert_eq!(code, Some(0), "{script}: {err}");
        out
    };
    let via_file = run("table", false);
    // the sample's scenario sent seven requests
    assert!(
        via_file
            .lines()
            .any(|l| l.split_whitespace().eq(["requests", "7"])),
        "{via_file}"
    );
    assert_eq!(run("table", true), via_file);
    // JSON names each input by path (`-` for stdin), and each request its input's file;
    // everything else is the same
    let json = |piped| {
        let mut v: serde_json::Value = serde_json::from_str(&run("json", piped)).unwrap();
        let path = v["inputs"][0]["path"].clone();
        for i in v["inputs"].as_array_mut().unwrap() {
            i["path"] = serde_json::Value::Null;
        }
        for r in v["requests"].as_array_mut().unwrap() {
            assert_eq!(r["file"], path);
            r["file"] = serde_json::Value::Null;
        }
        v
    };
    assert_eq!(json(true), json(false));
}
