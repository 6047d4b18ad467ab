//! A directory input reads as its files named one by one (attack round s7, faults 5 and
//! 6): `analyze DIR` once joined requests of different files into one session (its
//! parallel path lost the file boundaries), and problems found inside a directory named
//! the directory, not the file (`analyze` did not even say it skipped a file).
//!
//! The scenario, by hand: `a.jsonl` holds one conversation (a first turn and its
//! follow-up), `sub/b.jsonl` another one, unrelated and without any session id, so only
//! the file boundary keeps the two apart: 2 sessions, 4 Messages requests, exchange ids 0
//! and 1 in each file. The follow-up of each file (exchange #1) has a response labelled
//! gzip that is not; `sub/cut.jsonl` ends in a truncated line; `notes.txt` is not a trace;
//! `sub/h1.har` and `sub/h2.har` are two copies of the shipped HAR sample (imported
//! exchanges are numbered within their file).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use agentwire::trace::{Context, TraceWriter};

use crate::common::{agentwire, messages_exchange, repo};

const MODEL: &str = "claude-sonnet-4-5-20250929";

fn reply(text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 3}
    }))
    .unwrap()
}

/// A conversation of two requests (`first`, then its follow-up carrying the reply) whose
/// follow-up's response says gzip but is not.
fn conversation(path: &Path, first: &str, at: i64) {
    let user = |t: &str| json!({"role": "user", "content": t});
    let r0 = json!({"model": MODEL, "max_tokens": 100, "messages": [user(first)]});
    let r1 = json!({"model": MODEL, "max_tokens": 100, "messages": [
        user(first), {"role": "assistant", "content": "ok"}, user("go on")]});
    let x0 = messages_exchange(
        0,
        at,
        &serde_json::to_vec(&r0).unwrap(),
        "application/json",
        reply("ok"),
    );
    let mut x1 = messages_exchange(
        1,
        at + 10,
        &serde_json::to_vec(&r1).unwrap(),
        "application/json",
        b"not gzip at all".to_vec(),
    );
    let resp = x1.response.as_mut().unwrap();
    resp.headers
        .push(("content-encoding".into(), "gzip".into()));
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    w.write_exchange(&x0).unwrap();
    w.write_exchange(&x1).unwrap();
    w.finish().unwrap();
}

struct Scenario {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    /// The files agentwire reads, in the order a directory lists them.
    files: Vec<PathBuf>,
    /// Byte offset of the truncated line of `sub/cut.jsonl`.
    cut_at: usize,
}

fn scenario() -> Scenario {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("fleet");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    conversation(&dir.join("a.jsonl"), "plan the build", 1_800_000_000);
    conversation(&dir.join("sub/b.jsonl"), "write a poem", 1_800_000_100);
    // a header, then an exchange line cut short
    let cut = dir.join("sub/cut.jsonl");
    conversation(&cut, "cut short", 1_800_000_200);
    let bytes = std::fs::read(&cut).unwrap();
    let first_nl = bytes.iter().position(|b| *b == b'\n').unwrap();
    std::fs::write(&cut, &bytes[..first_nl + 1 + 120]).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a trace\n").unwrap();
    let har = repo().join("captures/imports/sample-session.har");
    for h in ["sub/h1.har", "sub/h2.har"] {
        std::fs::copy(&har, dir.join(h)).unwrap();
    }
    let files = [
        "a.jsonl",
        "sub/b.jsonl",
        "sub/cut.jsonl",
        "sub/h1.har",
        "sub/h2.har",
    ]
    .iter()
    .map(|f| dir.join(f))
    .collect();
    Scenario {
        _tmp: tmp,
        dir,
        files,
        cut_at: first_nl + 1,
    }
}

fn run(args: &[&str]) -> (Value, String) {
    let o: Output = agentwire(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let out = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}\n{err}"));
    (out, err)
}

fn analyze_json(inputs: &[&Path], extra: &[&str]) -> (Value, String) {
    let mut args = vec!["analyze", "--format", "json", "--usage", "simulated"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend(extra);
    run(&args)
}

/// `(file, exchange, session)` of each request row.
fn rows(a: &Value) -> Vec<(String, u64, String)> {
    a["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap_or("(none)").to_string(),
                r["exchange"].as_u64().unwrap(),
                r["session"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn analyze_dir_does_not_join_sessions_across_files() {
    let s = scenario();
    let (by_dir, _) = analyze_json(&[&s.dir], &[]);
    let named: Vec<&Path> = s.files.iter().map(|p| p.as_path()).collect();
    let (by_files, _) = analyze_json(&named, &[]);

    // the two hand-built conversations are one session each, in their own file
    let f = |n: &str| s.dir.join(n).display().to_string();
    let ours: Vec<_> = rows(&by_dir)
        .into_iter()
        .filter(|(file, _, _)| !file.ends_with(".har"))
        .collect();
    assert_eq!(
        ours,
        vec![
            (f("a.jsonl"), 0, "s1".to_string()),
            (f("a.jsonl"), 1, "s1".to_string()),
            (f("sub/b.jsonl"), 0, "s2".to_string()),
            (f("sub/b.jsonl"), 1, "s2".to_string()),
        ],
        "each file's conversation is its own session, and each row names its file"
    );
    // (file, exchange) names one request: ids repeat across files, never within one
    let mut keys: Vec<_> = rows(&by_dir).into_iter().map(|(f, x, _)| (f, x)).collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(
        keys.len(),
        n,
        "a request row is found again by file and exchange"
    );

    // every figure is the same as naming the files one by one (the directory adds only
    // the files it skipped)
    let without_skipped = |v: &Value| {
        let mut rest = v.clone();
        let skipped = rest
            .as_object_mut()
            .unwrap()
            .remove("skipped_files")
            .unwrap();
        (rest, skipped)
    };
    let (dir_rest, skipped) = without_skipped(&by_dir);
    let (files_rest, none) = without_skipped(&by_files);
    assert_eq!(none, json!([]));
    assert_eq!(skipped.as_array().unwrap().len(), 1);
    assert_eq!(
        dir_rest, files_rest,
        "analyze DIR differs from analyze with its files named one by one"
    );
    let har_sessions = by_files["summary"]["sessions"].as_u64().unwrap() - 2;
    assert!(har_sessions >= 1, "the HAR copies hold a session");

    // show agrees on the sessions of the hand-built files
    let (shown, _) = run(&["show", "--format", "json", s.dir.to_str().unwrap()]);
    let sessions: Vec<&str> = shown.as_array().unwrap()[..4]
        .iter()
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["s1", "s1", "s2", "s2"]);

    // the Parquet request table carries the file and the same sessions
    let tables = s._tmp.path().join("tables");
    let (_, err) = analyze_json(&[&s.dir], &["--parquet", tables.to_str().unwrap()]);
    assert!(err.contains("wrote 5 Parquet tables"), "{err}");
    let got = crate::fleet::duckdb(
        &tables,
        "select file, exchange, session from requests where file not like '%.har' order by seq",
    );
    let want: Vec<Value> = ours.iter().map(|(f, x, s)| json!([f, x, s])).collect();
    assert_eq!(got, want);
}

#[test]
fn problems_inside_a_directory_name_their_file() {
    let s = scenario();
    let dir = s.dir.to_str().unwrap();
    let cut = s.dir.join("sub/cut.jsonl").display().to_string();
    let truncated = format!(
        "warning: {cut}: line 2 (byte {}): last line is truncated",
        s.cut_at
    );
    let gzip = |f: &str| {
        format!(
            "warning: {}: exchange #1: response body: cannot decode gzip body",
            s.dir.join(f).display()
        )
    };
    let note = format!(
        "note: {dir}: skipped 1 file not in a format agentwire reads (first: {}",
        s.dir.join("notes.txt").display()
    );

    let (_, show_err) = run(&["show", "--format", "json", dir]);
    let (analysis, analyze_err) = analyze_json(&[&s.dir], &[]);
    for (cmd, err) in [("show", &show_err), ("analyze", &analyze_err)] {
        assert!(err.contains(&truncated), "{cmd}: {err}");
        assert!(err.contains(&gzip("a.jsonl")), "{cmd}: {err}");
        assert!(err.contains(&gzip("sub/b.jsonl")), "{cmd}: {err}");
        assert!(err.contains(&note), "{cmd}: {err}");
        assert!(
            !err.contains(&format!("{dir}: line")) && !err.contains(&format!("{dir}: exchange")),
            "{cmd} names the directory where it should name the file: {err}"
        );
    }
    assert_eq!(
        analysis["skipped_files"],
        json!([{
            "input": dir,
            "path": s.dir.join("notes.txt").display().to_string(),
            "reason": analysis["skipped_files"][0]["reason"],
        }])
    );
    assert!(analysis["skipped_files"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("not JSON"));
    // the input the truncated line is in counts it, the others do not
    let bad: Vec<(String, u64)> = analysis["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                i["bad_lines"].as_u64().unwrap(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(bad, vec![(cut.clone(), 1)]);

    // import and export read directories the same way
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("all.jsonl");
    let o = agentwire(&["import", dir, "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&truncated) && err.contains(&note),
        "import: {err}"
    );
    let har = tmp.path().join("all.har");
    let o = agentwire(&["export", "--har", dir, "-o", har.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&truncated) && err.contains(&note),
        "export: {err}"
    );
}

/// Found by a second adversarial round: `diff`, `diff --within`, `prompt` and `report
/// diff` refused a directory with "no such file", though every reading command takes one.
#[test]
fn diff_and_prompt_read_a_directory_as_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let sample = repo().join("captures/sample-session.jsonl");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::copy(&sample, d.join("s.jsonl")).unwrap();
    }
    let s = sample.to_str().unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for (by_dir, by_file) in [
        (vec!["prompt", a], vec!["prompt", s]),
        (
            vec!["diff", "--within", a, "--format", "json"],
            vec!["diff", "--within", s, "--format", "json"],
        ),
    ] {
        let (d, f) = (agentwire(&by_dir), agentwire(&by_file));
        assert_eq!(
            d.status.code(),
            f.status.code(),
            "{by_dir:?}: {}",
            String::from_utf8_lossy(&d.stderr)
        );
        let strip = |o: &Output| {
            String::from_utf8_lossy(&o.stdout)
                .replace(a, "X")
                .replace(s, "X")
        };
        assert!(!d.stdout.is_empty());
        assert_eq!(
            strip(&d).lines().count(),
            strip(&f).lines().count(),
            "{by_dir:?}"
        );
    }
    let o = agentwire(&["diff", a, b, "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["comparisons"][0]["identical"], true, "{v}");
    assert_eq!(
        v["comparisons"][0]["a"]["label"].as_str().unwrap(),
        format!("{a}/s.jsonl#1")
    );
}

/// Found by a second adversarial round: a dangling symbolic link inside a directory was
/// skipped without a word. It is named among the skipped files, like a FIFO.
#[test]
fn a_dangling_link_in_a_directory_is_named_among_the_skipped_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("captures/sample-session.jsonl"),
        dir.path().join("s.jsonl"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("gone.jsonl"),
        dir.path().join("dangling.jsonl"),
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let o = agentwire(&["analyze", d, "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("skipped 1 file"), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let skipped = v["skipped_files"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{v}");
    assert!(
        skipped[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("dangling.jsonl"),
        "{v}"
    );
    // The readable file is read in full: as many requests as naming it alone gives.
    let alone = agentwire(&[
        "analyze",
        dir.path().join("s.jsonl").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let alone: Value = serde_json::from_slice(&alone.stdout).unwrap();
    assert_eq!(v["summary"]["requests"], alone["summary"]["requests"]);
    assert!(alone["summary"]["requests"].as_u64().unwrap() > 0);
}
