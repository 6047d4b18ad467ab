//! How `mcp-tap` ends and what it refuses (issue 32 kinds 12–14): a stop signal is
//! forwarded to the server, which is killed after `--stop-grace` if it stays, and the
//! trace ends with an `exited` record; records that cannot be written (a file-size limit
//! standing in for a full disk) are an error in the exit code, a `lost` marker or a gap
//! that `show` and `analyze` warn about; `-o` naming the relay's own standard output is
//! refused.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentwire::input::open_trace;

use crate::common::{bin, signal, wait_bounded};
use crate::mcp_tap::jobs_server;

/// A server that writes its pid to `pid`, then (with `ignore_term`) ignores SIGTERM, and
/// reads its standard input until it closes.
fn server(pid: &Path, ignore_term: bool) -> Vec<String> {
    let script = format!(
        "import os, signal, sys\nopen({:?}, 'w').write(str(os.getpid()))\n{}\nsys.stdin.read()\n",
        pid.display().to_string(),
        if ignore_term {
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
        } else {
            ""
        }
    );
    vec!["python3".into(), "-c".into(), script]
}

fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Start the tap around `server`, wait for the server's pid, send `sig` to the tap.
fn stop_tap(dir: &Path, server_argv: &[String], pid_file: &Path, sig: i32) -> (i32, i32, f64) {
    let trace = dir.join("t.jsonl");
    let mut tap = Command::new(bin())
        .args(["mcp-tap", "--name", "s", "--stop-grace", "1s", "-o"])
        .arg(&trace)
        .arg("--")
        .args(server_argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let pid = loop {
        if let Some(p) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
        {
            break p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "server never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let sent = Instant::now();
    signal(tap.id(), sig);
    let status = wait_bounded(&mut tap, Duration::from_secs(20), "mcp-tap after a signal");
    let took = sent.elapsed().as_secs_f64();
    (status.code().unwrap_or(-1), pid, took)
}

/// What broke: SIGTERM killed the tap and left the server running as an orphan, and the
/// trace had no `exited` record.
#[test]
fn mcp_tap_sigterm_left_the_server_orphaned() {
    let d = tempfile::tempdir().unwrap();
    let pid_file = d.path().join("pid");
    let (code, pid, _) = stop_tap(
        d.path(),
        &server(&pid_file, false),
        &pid_file,
        libc::SIGTERM,
    );
    assert!(!alive(pid), "the server {pid} outlived the tap");
    // the server died of the forwarded SIGTERM: the tap exits as it did
    assert_eq!(code, 128 + libc::SIGTERM);
    let t = open_trace(&d.path().join("t.jsonl")).unwrap();
    let last = t.mcp.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("exited"));
    let detail = last.detail.as_deref().unwrap();
    assert!(detail.contains("signal: 15"), "{detail}");
    assert!(detail.contains("after SIGTERM was forwarded"), "{detail}");
}

/// What broke: a server that ignores the signal kept running after the tap was gone.
/// Now it is killed once `--stop-grace` (1 s here) has passed.
#[test]
fn mcp_tap_sighup_to_a_server_that_stays_kills_it_after_the_grace() {
    let d = tempfile::tempdir().unwrap();
    let pid_file = d.path().join("pid");
    // SIGHUP is forwarded as SIGHUP: python ignores SIGTERM here, SIGHUP kills it, so
    // use SIGTERM on the ignoring server to reach the kill.
    let (code, pid, took) = stop_tap(d.path(), &server(&pid_file, true), &pid_file, libc::SIGTERM);
    assert!(!alive(pid), "the server {pid} outlived the tap");
    assert_eq!(code, 128 + libc::SIGKILL);
    assert!(took >= 1.0, "killed before the grace time ({took} s)");
    let t = open_trace(&d.path().join("t.jsonl")).unwrap();
    let detail = t.mcp.last().unwrap().detail.clone().unwrap();
    assert!(detail.contains("killed (SIGKILL) after 1 s"), "{detail}");

    let pid_file = d.path().join("pid2");
    std::fs::remove_file(d.path().join("t.jsonl")).unwrap();
    let (code, pid, _) = stop_tap(d.path(), &server(&pid_file, true), &pid_file, libc::SIGHUP);
    assert!(!alive(pid));
    assert_eq!(code, 128 + libc::SIGHUP);
}

/// What broke: `-o /dev/stdout` wrote trace lines into the relayed MCP stream, `-o -`
/// wrote a file named `-`.
#[test]
fn mcp_tap_output_on_its_own_stdout_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let redirected = d.path().join("out");
    for (name, stdout) in [
        ("-", Stdio::piped()),
        ("/dev/stdout", Stdio::piped()),
        ("/proc/self/fd/1", Stdio::piped()),
        (
            redirected.to_str().unwrap(),
            Stdio::from(std::fs::File::create(&redirected).unwrap()),
        ),
    ] {
        let o = Command::new(bin())
            .current_dir(d.path())
            .args(["mcp-tap", "-o", name, "--", "python3", &jobs_server()])
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("own standard output"), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}: wrote to stdout");
    }
    assert!(!d.path().join("-").exists());
    assert_eq!(std::fs::metadata(&redirected).unwrap().len(), 0);
}

/// What broke: on a full disk the tap dropped records and exited 0, the trace ended
/// with a clean `exited` record and no reader warned. A file-size limit (`ulimit -f`,
/// SIGXFSZ ignored: writes past it fail with EFBIG) stands in for the full disk.
#[test]
fn mcp_tap_on_a_full_disk_lost_records_and_exited_0() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    // 4 blocks of 512 bytes: the header and the first records fit, the rest do not
    let script = format!(
        "trap '' XFSZ; ulimit -f 4; exec {:?} mcp-tap --name jobs -o {:?} -- python3 {:?}",
        bin().display().to_string(),
        trace.display().to_string(),
        jobs_server()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::{BufRead, Write};
        let mut stdin = child.stdin.take().unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        for id in 1..=12 {
            let msg = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"pad":"{}"}}}}"#,
                "p".repeat(100)
            );
            writeln!(stdin, "{msg}").unwrap();
            stdin.flush().unwrap();
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            // the relay itself goes on: every answer reaches the client
            assert!(line.contains(&format!("\"id\":{id}")), "{line}");
        }
    }
    let status = wait_bounded(&mut child, Duration::from_secs(20), "mcp-tap");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("records could not be written"), "{err}");
    assert!(std::fs::metadata(&trace).unwrap().len() <= 2048);

    // 1 started + 24 messages + 1 exited were made; the readers say some are missing
    let t = open_trace(&trace).unwrap();
    assert!(t.mcp.len() < 26, "{}", t.mcp.len());
    for cmd in [&["show", "--mcp"][..], &["analyze"][..]] {
        let o = Command::new(bin()).args(cmd).arg(&trace).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            text.contains("without the server's `exited` record")
                || text.contains("missing from the trace")
                || text.contains("lost (seq"),
            "{cmd:?}: {text}"
        );
    }
}
