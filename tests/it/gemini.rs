//! Real Gemini CLI from npm under agentwire's fake server (issue 29, the Gemini half): the
//! newest version (0.61.0 on 2026-12-02) and one two releases older (0.59.0), each with
//! and without `--yolo`; every byte figure `diff` gives and every tool count checked
//! against an independent reader (`independent/gemini_body.py`, Python); the router call
//! is a side request of its session; two `gemini -p` runs of the same prompt in one
//! `serve` come out as two sessions. Needs `npm`, `node` and the registry (the package is
//! cached after the first run).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::*;

/// The newest Gemini CLI on the day these tests were written, and one two releases older.
pub(crate) const NEW: &str = "0.61.0";
const OLD: &str = "0.59.0";

/// Record one Gemini CLI run of `hello` into `dir` (`yolo`: with `--yolo`).
fn record(dir: &Path, version: &str, yolo: bool) -> PathBuf {
    let name = format!("{version}{}", if yolo { "-yolo" } else { "" });
    let out = dir.join(format!("{name}.jsonl"));
    let mut cmd = Command::new(bin());
    cmd.args(["record", "--cli", &format!("gemini@{version}")])
        .args(["--timeout", "180", "-o"])
        .arg(&out);
    if yolo {
        cmd.args(["--", "-p", "hello", "--yolo"]);
    }
    let o = cmd.output().unwrap();
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && summary.contains("exit 0"),
        "record {name}: {summary}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The four recordings, made once for every test of this file.
pub(crate) struct Recordings {
    _dir: tempfile::TempDir,
    pub(crate) new: PathBuf,
    new_yolo: PathBuf,
    old: PathBuf,
    old_yolo: PathBuf,
}

pub(crate) fn recordings() -> &'static Recordings {
    static R: OnceLock<Recordings> = OnceLock::new();
    R.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        Recordings {
            new: record(dir.path(), NEW, false),
            new_yolo: record(dir.path(), NEW, true),
            old: record(dir.path(), OLD, false),
            old_yolo: record(dir.path(), OLD, true),
            _dir: dir,
        }
    })
}

/// What the independent reader says of a trace's Gemini requests.
fn python(trace: &Path) -> Vec<Value> {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/gemini_body.py"))
        .arg(trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v.iter().all(|r| r["sha256_matches"] == true),
        "the compact re-serialization is the body as sent, so its byte counts are wire bytes"
    );
    v
}

/// The reader's main request (the streamed one with tools) of a trace.
fn main_request(reader: &[Value]) -> &Value {
    reader
        .iter()
        .find(|r| r["streaming"] == true && !r["tools"].as_array().unwrap().is_empty())
        .expect("a streamed request with tools")
}

/// Declaration names of a reader row.
fn names(r: &Value) -> BTreeSet<String> {
    r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// `diff` of the main requests of `a` and `b`, every size checked against the reader.
fn diff_checked(a: &Path, b: &Path) -> Value {
    let (ra, rb) = (python(a), python(b));
    let (ma, mb) = (main_request(&ra), main_request(&rb));
    let arg = |p: &Path, r: &Value| format!("{}#{}", p.display(), r["id"]);
    let d = json_of(&["diff", &arg(a, ma), &arg(b, mb)]);
    let c = &d["comparisons"][0];
    let size = |m: &str, side: &str| {
        c["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == m)
            .unwrap()[side]
            .as_u64()
            .unwrap()
    };
    for (side, r) in [("a", ma), ("b", mb)] {
        assert_eq!(size("body_bytes", side), r["body_bytes"].as_u64().unwrap());
        assert_eq!(size("tool_bytes", side), r["tools_bytes"].as_u64().unwrap());
        assert_eq!(
            size("system_bytes", side),
            r["system_bytes"].as_u64().unwrap()
        );
        assert_eq!(
            size("tools", side),
            r["tools"].as_array().unwrap().len() as u64
        );
    }
    let bytes = |r: &Value, n: &str| {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .map_or(0, |t| t["bytes"].as_u64().unwrap())
    };
    for e in c["tools"]["entries"].as_array().unwrap() {
        let n = e["name"].as_str().unwrap();
        assert_eq!(e["a_bytes"].as_u64(), Some(bytes(ma, n)), "{n} in A");
        assert_eq!(e["b_bytes"].as_u64(), Some(bytes(mb, n)), "{n} in B");
    }
    let list = |k: &str| -> BTreeSet<String> {
        c["tools"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(list("added"), &names(mb) - &names(ma), "added");
    assert_eq!(list("removed"), &names(ma) - &names(mb), "removed");
    d
}

/// Must-show: both versions with and without `--yolo`; `--yolo` adds the shell tools,
/// among them the two background-job polls; every figure agrees with the reader.
#[test]
fn gemini_versions_and_yolo_diff_with_bytes_an_independent_reader_agrees_with() {
    let r = recordings();
    for (a, b) in [
        (&r.new, &r.new_yolo),
        (&r.old, &r.old_yolo),
        (&r.old, &r.new),
        (&r.old_yolo, &r.new_yolo),
    ] {
        diff_checked(a, b);
    }
    let (plain, yolo) = (python(&r.new), python(&r.new_yolo));
    let added = &names(main_request(&yolo)) - &names(main_request(&plain));
    for t in [
        "run_shell_command",
        "read_background_output",
        "list_background_processes",
    ] {
        assert!(added.contains(t), "--yolo adds {t}: {added:?}");
    }
}

/// The router call (`:generateContent`, structured output, no tools) is a side request
/// of the run's session; the turn is the session's main thread, with the model the URL
/// names and usage the fake server reported.
#[test]
fn the_router_call_is_a_side_request_of_its_session() {
    let r = recordings();
    for trace in [&r.new, &r.old_yolo] {
        let reader = python(trace);
        let show = json_of(&["show", trace.to_str().unwrap()]);
        let rows = show.as_array().unwrap();
        let router = reader
            .iter()
            .find(|x| x["router"] == true)
            .expect("a router call");
        assert_eq!(router["streaming"], false);
        let row = |id: &Value| rows.iter().find(|x| &x["id"] == id).unwrap();
        let (rr, mr) = (row(&router["id"]), row(&main_request(&reader)["id"]));
        assert_eq!(rr["session"], mr["session"]);
        assert!(rr["thread"].as_str().unwrap().starts_with("side"), "{rr}");
        assert_eq!(mr["thread"], "main");
        assert_eq!(mr["model"], main_request(&reader)["model"]);
        assert_eq!(rr["tools"], 0);
        // The fake server's usage estimate: request bytes / 4, rounded up.
        let est = main_request(&reader)["body_bytes"]
            .as_u64()
            .unwrap()
            .div_ceil(4);
        assert_eq!(
            mr["usage"].as_str().unwrap().split('/').next(),
            Some(est.to_string().as_str())
        );
    }
}

/// Must-show: two `gemini -p hello` runs in one `serve` send byte-identical requests,
/// with no session id; they come out as two sessions of two requests each (router +
/// turn), not one.
#[test]
fn two_gemini_runs_of_the_same_prompt_are_two_sessions() {
    let _ = recordings(); // the package is cached by now
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("two.jsonl");
    let serve = ServeProcess::start(&["-o", trace.to_str().unwrap()], &[]);
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#,
    )
    .unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let cache = std::env::var_os("AGENTWIRE_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs_cache().join("agentwire"));
    let gemini = cache.join(format!("cli/gemini/{NEW}/linux-x64/bundle/gemini.js"));
    for _ in 0..2 {
        let o = Command::new(&gemini)
            .args(["-p", "hello"])
            .current_dir(&work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .env("HOME", &home)
            .env("GOOGLE_GEMINI_BASE_URL", &serve.url)
            .env("GEMINI_API_KEY", "agentwire-fake-gemini-key")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (code, _) = serve.stop();
    assert_eq!(code, Some(0));
    let reader = python(&trace);
    assert_eq!(reader.len(), 4, "router + turn, twice");
    assert_eq!(
        reader[1]["body_bytes"], reader[3]["body_bytes"],
        "the runs' turns are the same bytes"
    );
    let show = json_of(&["show", trace.to_str().unwrap()]);
    let sessions: Vec<&str> = show
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["s1", "s1", "s2", "s2"]);
}

/// The user cache directory as `dirs::cache_dir` finds it on Linux.
fn dirs_cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"))
}

/// Must-show: `captures/scenarios/gemini-bg.json` drives real Gemini CLI `--yolo` through
/// a background `sleep 6` and its polls. Worked out from the scenario: 1 job (`pid:N`,
/// N from the start call's result); `read_background_output` polled 3 times ("Log is
/// empty." twice, the second redundant, then after 7 s "Full Log Output:"), and
/// `list_background_processes` twice (the same `[PID N] RUNNING` line: the second is
/// redundant): 5 polls, 2 redundant.
#[test]
fn a_gemini_background_job_and_its_polls_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bg.jsonl");
    let o = Command::new(bin())
        .args([
            "record",
            "--cli",
            &format!("gemini@{NEW}"),
            "--timeout",
            "180",
            "--script",
        ])
        .arg(repo().join("captures/scenarios/gemini-bg.json"))
        .arg("-o")
        .arg(&trace)
        .args(["--", "-p", "build it", "--yolo"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The pid, read from the raw trace: the start call's result as the CLI sent it.
    let raw = std::fs::read_to_string(&trace).unwrap();
    let at = raw
        .find("Command moved to background (PID: ")
        .expect("a start result")
        + 34;
    let pid: String = raw[at..].chars().take_while(char::is_ascii_digit).collect();
    let a = json_of(&["analyze", trace.to_str().unwrap()]);
    let jobs = a["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["reference"], format!("pid:{pid}"));
    assert_eq!(jobs[0]["kind"], "gemini_background");
    assert_eq!(jobs[0]["command"], "sleep 6; echo build-finished");
    assert_eq!(jobs[0]["polls"], 5);
    let episodes = a["episodes"].as_array().unwrap();
    let by_tool = |t: &str| {
        episodes
            .iter()
            .find(|e| e["tool"] == t)
            .unwrap_or_else(|| panic!("{t}: {episodes:?}"))
    };
    let read = by_tool("read_background_output");
    assert_eq!(
        (read["polls"].as_u64(), read["redundant"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(read["job"], format!("pid:{pid}"));
    let list = by_tool("list_background_processes");
    assert_eq!(
        (list["polls"].as_u64(), list["redundant"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(a["summary"]["polls"], 5);
    assert_eq!(a["summary"]["redundant_polls"], 2);
}

/// Replay mode: a recorded Gemini run answers a new run of the same version, in the shape
/// its URL asks for (the body says nothing of streaming).
#[test]
fn a_gemini_recording_replays_to_gemini_cli() {
    let r = recordings();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("replayed.jsonl");
    let o = Command::new(bin())
        .args([
            "record",
            "--cli",
            &format!("gemini@{NEW}"),
            "--timeout",
            "180",
            "--replay",
        ])
        .arg(&r.new)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let show = json_of(&["show", out.to_str().unwrap()]);
    let rows = show.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter()
            .all(|x| x["status"] == 200 && x["stop"] == "STOP"),
        "{show}"
    );
}
