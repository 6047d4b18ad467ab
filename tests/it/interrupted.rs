//! A run stopped by a signal (attack s8, fault 5, kind "an interrupted run leaves a temp
//! file"): Ctrl-C (SIGINT), SIGTERM or SIGHUP during a batch output removes its hidden
//! temporary sibling and ends the process by that signal; an ignored signal stays ignored;
//! the commands that stop gracefully on a signal (`serve`, `record`) still do.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `agentwire pcap CAPTURE×copies -o DIR/out.jsonl --force`, with `sig` set to `action`
/// in the child (`SIG_DFL` or `SIG_IGN`, as a shell would leave it), started once the
/// child exists; returns it after its temporary output appeared.
fn pcap_running(
    dir: &Path,
    copies: usize,
    sig: i32,
    action: libc::sighandler_t,
) -> std::process::Child {
    let cap = shared_capture("claude-code/cc2.1.303-mcp-status-polling.pcap");
    let mut cmd = Command::new(bin());
    cmd.arg("pcap")
        .args(std::iter::repeat_n(&cap, copies))
        .arg("-o")
        .arg(dir.join("out.jsonl"))
        .arg("--force")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: signal(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(sig, action);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    while !names(dir).iter().any(|n| n.ends_with(".tmp")) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no temporary output after 30 s: {:?}",
            names(dir)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// Before: SIGINT and SIGTERM during `pcap -o FILE` left `.out.jsonl.XXXXXX.tmp`, up to
/// the whole trace's size, hidden next to the output. Now the process still dies by the
/// signal (the shell shows 130, 143, 129), the directory holds no temporary file, and the
/// old trace replaced with `--force` is still the old one.
#[test]
fn a_signal_during_pcap_leaves_no_temporary_file_and_the_old_trace() {
    for (sig, shell_status) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.jsonl");
        std::fs::write(&out, b"the old trace\n").unwrap();
        // 300 copies take seconds to read: the run is still writing when signalled.
        let mut child = pcap_running(dir.path(), 300, sig, libc::SIG_DFL);
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(sig), "signal {sig}: {status:?}");
        assert_eq!(128 + status.signal().unwrap(), shell_status);
        assert_eq!(names(dir.path()), ["out.jsonl"], "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), b"the old trace\n");
    }
}

/// A signal the process ignores (`nohup`, a background job of a non-interactive shell)
/// must stay ignored: the run completes and commits the whole trace.
#[test]
fn an_ignored_sigint_during_pcap_stays_ignored_and_the_trace_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let cap = shared_capture("claude-code/cc2.1.303-mcp-status-polling.pcap");
    let one = dir.path().join("one.jsonl");
    agentwire_ok(&["pcap", cap.to_str().unwrap(), "-o", one.to_str().unwrap()]);
    let per_copy = agentwire::input::open_trace(&one).unwrap().exchanges.len();
    std::fs::remove_file(&one).unwrap();
    let mut child = pcap_running(dir.path(), 10, libc::SIGINT, libc::SIG_IGN);
    signal(child.id(), libc::SIGINT);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(names(dir.path()), ["out.jsonl"]);
    let t = agentwire::input::open_trace(&dir.path().join("out.jsonl")).unwrap();
    assert_eq!(t.exchanges.len(), 10 * per_copy);
}

/// `serve` stops gracefully on Ctrl-C (exit 0, the answered exchange saved), also with
/// `--intercept` on a fresh CA directory: writing the CA files starts the cleanup
/// listener before `serve` installs its own handler, which must keep the signal.
#[test]
fn serve_still_stops_gracefully_on_sigint_after_writing_its_ca() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for intercept in [false, true] {
        let trace = dir.path().join(format!("t-{intercept}.jsonl"));
        let mut args = vec!["-o", trace.to_str().unwrap()];
        if intercept {
            args.extend(["--intercept", "api.anthropic.com"]);
        }
        let serve = ServeProcess::start(&args, &[("AGENTWIRE_DATA_DIR", &data)]);
        let reply = raw_exchange(
            serve.addr(),
            b"GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
            Duration::from_secs(5),
        );
        assert!(reply.starts_with(b"HTTP/1.1 200"), "{intercept}");
        let (code, printed) = serve.stop_with(libc::SIGINT);
        assert_eq!(code, Some(0), "intercept {intercept}: {printed}");
        let t = agentwire::input::open_trace(&trace).unwrap();
        assert_eq!(t.exchanges.len(), 1, "intercept {intercept}");
    }
    assert!(data.join("ca/ca.pem").exists());
    assert!(!names(&data.join("ca")).iter().any(|n| n.ends_with(".tmp")));
}

/// `record` stops the recorded command on Ctrl-C and still writes its trace (exit 1: the
/// command did not finish), leaving no working or temporary trace next to it. The same
/// on SIGHUP (a closed terminal, a dropped ssh session), which used to end agentwire
/// and leave the recorded command running, its sandbox and its working trace behind.
#[test]
fn record_still_saves_its_trace_on_sigint() {
    record_stopped_by(libc::SIGINT);
}

#[test]
fn record_saves_its_trace_and_stops_the_command_on_sighup() {
    record_stopped_by(libc::SIGHUP);
}

fn record_stopped_by(sig: i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rec.jsonl");
    let mut cmd = Command::new(bin());
    cmd.current_dir(dir.path())
        .args(["record", "-o"])
        .arg(&out)
        .args(["--", "sh", "-c", "touch started; exec sleep 60"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // As a terminal session would leave it, whatever the test runner's disposition.
    // SAFETY: signal(2) is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(sig, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    while !dir.path().join("started").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the command never ran"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(child.id(), sig);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{:?} {err}", o.status);
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(names(dir.path()), ["rec.jsonl", "started"]);
    assert!(agentwire::input::open_trace(&out).is_ok());
}
