//! `record --tty`: real Claude Code (2.1.303 and 2.1.304 from npm) driven interactively in
//! a pseudo-terminal by `captures/scenarios/tty-bg-build.json` (prompt typed, the Bash
//! permission answered, a background job started and its notification handled, `/exit`),
//! and sessions that go wrong (a hang, a crash, an unanswered question, binary output that
//! never stops), each ending at its bound with the trace and cast kept and no process left.
//! Casts are read by an independent reader (`tests/it/independent/cast.py`, json + pyte)
//! and played by `asciinema cat` (under util-linux `script`: asciinema wants a terminal).

use std::path::Path;
use std::process::Command;

use agentwire::api::{BlockKind, MessagesRequest};
use agentwire::input::open_trace;
use serde_json::Value;

use crate::common::*;

/// What the independent reader says of a cast.
pub(crate) fn cast_reader(cast: &Path) -> Value {
    let o = Command::new("/usr/bin/python3")
        .arg(repo().join("tests/it/independent/cast.py"))
        .arg(cast)
        .output()
        .expect("python3 with python3-pyte (make test-deps)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The screen lines of a reader's answer, as one text.
pub(crate) fn screen(v: &Value) -> String {
    v["screen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text of every user message block of a request (text and tool results).
fn user_texts(r: &MessagesRequest) -> Vec<String> {
    r.messages
        .iter()
        .filter(|m| m.role == "user")
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::Text { text } => Some(text.clone()),
            BlockKind::ToolResult { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn claude_code_303_and_304_run_a_terminal_session_with_a_permission_and_a_background_job() {
    let dir = tempfile::tempdir().unwrap();
    let script = repo().join("captures/scenarios/tty-bg-build.json");
    for version in ["2.1.303", "2.1.304"] {
        let out = dir.path().join(format!("{version}.jsonl"));
        let cast = dir.path().join(format!("{version}.cast"));
        let o = Command::new(bin())
            .args(["record", "--cli", &format!("claude-code@{version}")])
            .args(["--route", "base-url", "--tty", "--script"])
            .arg(&script)
            .arg("-o")
            .arg(&out)
            .args(["--", "--permission-mode", "default"])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        assert!(o.status.success(), "{version}: {stdout}\n{stderr}");
        assert!(stdout.contains("the scenario finished"), "{stdout}");
        assert_no_key(&out);
        let t = exchanges_of_the_session(version, &out);
        cast_of_the_session(version, &cast, &t, &stdout);
        played_by_asciinema(version, &cast);
    }
}

/// The trace of the terminal session: the typed prompt, the tool's result after the
/// permission, the job's start and its notification.
fn exchanges_of_the_session(version: &str, out: &Path) -> agentwire::trace::Trace {
    let t = open_trace(out).unwrap();
    let main: Vec<MessagesRequest> = t
        .exchanges
        .iter()
        .filter(|x| x.is_messages())
        .map(|x| MessagesRequest::parse(&x.request.body.bytes).unwrap())
        .filter(|r| !r.tools.is_empty() && user_texts(r).iter().any(|s| s.contains("build")))
        .collect();
    // The typed prompt, the tool's result after the permission, the job's notification.
    assert!(
        main.len() >= 3,
        "{version}: {} main-thread requests",
        main.len()
    );
    assert!(user_texts(&main[0])
        .iter()
        .any(|s| s.contains("run the build")));
    let results: Vec<String> = main[1]
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_use_id,
                text,
                is_error,
                ..
            } if tool_use_id == "toolu_aw_01" => {
                assert!(!is_error, "{version}: the permission was given: {text}");
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1, "{version}: the background start's result");
    // The job started (its id in the tool's result) and its end was notified: Claude
    // Code tells the model of a finished background command by a task notification
    // naming the same id and tool use (the output stays in its file).
    let id = results[0]
        .split("with ID: ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_alphanumeric()).next())
        .unwrap_or_else(|| panic!("{version}: no job id in {:?}", results[0]));
    let done = main.iter().skip(2).flat_map(user_texts).find(|s| {
        s.contains(&format!("<task-id>{id}</task-id>"))
            && s.contains("<tool-use-id>toolu_aw_01</tool-use-id>")
    });
    let done = done.unwrap_or_else(|| panic!("{version}: no notification of job {id}"));
    assert!(done.contains("<status>completed</status>"), "{done}");
    assert!(done.contains("(exit code 0)"), "{done}");
    t
}

/// The cast: every line JSON, one marker per exchange, what was typed into which screen,
/// the session's end on its last screen.
fn cast_of_the_session(version: &str, cast: &Path, t: &agentwire::trace::Trace, stdout: &str) {
    let v = cast_reader(cast);
    assert_eq!(
        (v["version"].as_i64(), v["width"].as_i64()),
        (Some(2), Some(120))
    );
    assert_eq!(v["monotonic"], true);
    let markers = v["markers"].as_array().unwrap();
    assert_eq!(
        markers.len(),
        t.exchanges.len(),
        "{version}: a marker per exchange"
    );
    let last = v["last_time"].as_f64().unwrap();
    for (m, x) in markers.iter().zip(&t.exchanges) {
        assert!(m[1]
            .as_str()
            .unwrap()
            .starts_with(&format!("exchange {}:", x.id)));
        let at = m[0].as_f64().unwrap();
        assert!(
            (0.0..=last).contains(&at),
            "{version}: marker at {at} s of {last} s"
        );
    }
    // Typed: the prompt, Enter, the permission's answer, `/exit`, Enter; the answer
    // went into the screen that asked for it.
    assert!(stdout.contains("1 prompt answered"), "{stdout}");
    let inputs = v["inputs"].as_array().unwrap();
    let typed: Vec<&str> = inputs.iter().map(|i| i[1].as_str().unwrap()).collect();
    assert_eq!(
        typed,
        ["run the build", "\r", "\r", "/exit", "\r"],
        "{version}"
    );
    let asked = inputs[2][2].as_array().unwrap();
    assert!(
        asked
            .iter()
            .any(|l| l.as_str().unwrap().contains("Do you want to proceed?")),
        "{version}: the permission's answer went to {asked:?}"
    );
    let end = screen(&v);
    assert!(
        end.contains("Build done: the job reported"),
        "{version}:\n{end}"
    );
    assert!(
        end.contains("/exit"),
        "{version}: the last screen shows the exit:\n{end}"
    );
}

/// The cast as `asciinema cat` plays it.
fn played_by_asciinema(version: &str, cast: &Path) {
    // asciinema opens /dev/tty: it plays under util-linux `script`, on a terminal.
    let played = Command::new("script")
        .args([
            "-qec",
            &format!("asciinema cat '{}'", cast.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output();
    let played = played.expect("asciinema (make test-deps)");
    assert!(
        played.status.success(),
        "{}",
        String::from_utf8_lossy(&played.stderr)
    );
    // Played as the terminal got it: words placed by cursor moves (`Build\x1b[9Gdone:`).
    let played = String::from_utf8_lossy(&played.stdout);
    assert!(
        played.contains("Build\x1b[9Gdone:") && played.contains("reported"),
        "{version}: {played}"
    );
}

/// The processes whose command line holds `token`.
fn running_with(token: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let cmd = std::fs::read(p.join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(token)
                .then(|| format!("{}: {cmd}", p.display()))
        })
        .collect()
}

/// `record --tty` of a shell command under `terminal` (the scenario's terminal part);
/// returns (success, stdout, stderr, cast reader's answer). The trace and cast must exist.
fn session(
    dir: &Path,
    name: &str,
    terminal: Value,
    command: &str,
    extra: &[&str],
) -> (bool, String, String, Value) {
    let script = dir.join(format!("{name}.json"));
    std::fs::write(
        &script,
        serde_json::json!({"terminal": terminal}).to_string(),
    )
    .unwrap();
    let out = dir.join(format!("{name}.jsonl"));
    let o = Command::new(bin())
        .args(["record", "--route", "base-url", "--tty", "--script"])
        .arg(&script)
        .arg("-o")
        .arg(&out)
        .args(extra)
        .args(["--", "sh", "-c", command])
        .output()
        .unwrap();
    assert!(out.exists(), "{name}: the trace is kept");
    let v = cast_reader(&out.with_extension("cast"));
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        v,
    )
}

#[test]
fn a_session_that_hangs_ends_at_its_bound_with_trace_and_cast_kept_and_no_process_left() {
    let dir = tempfile::tempdir().unwrap();
    // No output, no exit; one job moves into a session of its own.
    let cmd = "setsid sleep 3117 & sleep 3118 & exec sleep 3119";
    let terminal = serde_json::json!({"timeout_s": 2, "steps": [{"wait": "never shown"}]});
    let started = std::time::Instant::now();
    let (ok, stdout, stderr, v) = session(dir.path(), "hang", terminal, cmd, &[]);
    assert!(!ok, "{stdout}");
    assert!(started.elapsed().as_secs() < 20);
    assert!(stderr.contains("passed its bound of 2 s"), "{stderr}");
    assert_eq!(v["version"], 2);
    for token in ["sleep 3117", "sleep 3118", "sleep 3119"] {
        let left = running_with(token);
        assert!(left.is_empty(), "orphans: {left:?}");
    }
}

#[test]
fn a_crash_a_question_and_endless_binary_output_end_with_their_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let wait_done = serde_json::json!({"timeout_s": 20, "step_timeout_s": 1.5, "steps": [{"wait": "all done"}]});
    let (ok, _, stderr, v) = session(
        dir.path(),
        "crash",
        wait_done.clone(),
        "echo boom; exit 3",
        &[],
    );
    assert!(!ok);
    assert!(
        stderr.contains("the CLI exited (code 3) before the scenario finished"),
        "{stderr}"
    );
    assert!(screen(&v).contains("boom"));
    let (ok, _, stderr, v) = session(
        dir.path(),
        "question",
        wait_done,
        "printf 'Overwrite the file? [y/N] '; read a; echo all done",
        &[],
    );
    assert!(!ok);
    assert!(
        stderr.contains("step 1 waited 1.5 s for the screen to show /all done/"),
        "{stderr}"
    );
    assert!(stderr.contains("add it to `answers`"), "{stderr}");
    assert!(screen(&v).contains("Overwrite the file? [y/N]"));
    // The same question answered by the scenario.
    let answered = serde_json::json!({"timeout_s": 20, "step_timeout_s": 5,
        "answers": [{"when": "Overwrite the file\\?", "send": "y", "keys": ["enter"]}],
        "steps": [{"wait": "all done"}, {"exit": true}]});
    let (ok, stdout, stderr, _) = session(
        dir.path(),
        "answered",
        answered,
        "printf 'Overwrite the file? [y/N] '; read a; echo all done $a",
        &[],
    );
    assert!(ok, "{stdout}{stderr}");
    // Binary output that never stops: never idle, the cast stays within its bound.
    let idle =
        serde_json::json!({"timeout_s": 20, "step_timeout_s": 1.5, "steps": [{"idle": 500}]});
    let (ok, stdout, stderr, v) = session(
        dir.path(),
        "binary",
        idle,
        "while :; do head -c 65536 /dev/urandom; done",
        &["--max-cast", "200000"],
    );
    assert!(!ok);
    assert!(stderr.contains("500 ms without output"), "{stderr}");
    assert!(
        stdout.contains("output events past the cast's bound left out"),
        "{stdout}"
    );
    let size = std::fs::metadata(dir.path().join("binary.cast"))
        .unwrap()
        .len();
    assert!(size <= 200_000 + 200, "{size} bytes");
    assert!(v["counts"]["o"].as_i64().unwrap() > 0);
    // Neither the waiting question nor the endless writer outlived its session.
    for token in ["read a; echo all done", "65536 /dev/urandom"] {
        let left = running_with(token);
        assert!(left.is_empty(), "orphans: {left:?}");
    }
}
