//! Output paths at the edges of the one output policy (adversarial round s8): an earlier
//! `record` run's working trace, outputs inside input directories, standard output under
//! another name, chains of links, long names, a trailing slash. Each test is named after
//! what broke.

use crate::common::*;
use std::path::Path;
use std::process::Command;

const CAPTURE: &str = "claude-code/cc2.1.304-subagent.pcap";

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The trace `pcap` writes to `-` for the shared capture: what every other name of
/// standard output must carry too.
fn trace_on_dash() -> Vec<u8> {
    let cap = shared_capture(CAPTURE);
    agentwire_ok(&["pcap", cap.to_str().unwrap(), "-o", "-"]).stdout
}

/// `record --route base-url -o OUT -- COMMAND…`, which must fail (exit 1).
fn record_failing(out: &Path, command: &[&str]) -> std::process::Output {
    let mut args = vec![
        "record",
        "--route",
        "base-url",
        "-o",
        out.to_str().unwrap(),
        "--",
    ];
    args.extend_from_slice(command);
    let r = agentwire(&args);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    r
}

#[test]
fn record_keeps_an_earlier_runs_working_trace_instead_of_truncating_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("session.jsonl");
    let work = dir.path().join("session.jsonl.tmp");
    std::fs::write(&work, b"{\"type\":\"trace\"} an earlier recording\n").unwrap();
    let r = record_failing(&out, &["true"]);
    let e = stderr(&r);
    assert!(
        e.contains("session.jsonl.tmp") && e.contains("agentwire import"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&work).unwrap(),
        b"{\"type\":\"trace\"} an earlier recording\n"
    );
    assert!(!out.exists());
}

#[test]
fn record_names_the_kept_recording_when_its_output_cannot_be_written() {
    // The recorded command creates the output itself; without --force it is not replaced,
    // and the recording stays in the working trace, which the message names.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let script = format!("echo mine > '{}'", out.display());
    let r = record_failing(&out, &["sh", "-c", &script]);
    let e = stderr(&r);
    let kept = dir.path().join("r.jsonl.tmp");
    assert!(e.contains("already exists"), "{e}");
    assert!(e.contains(&format!("kept in {}", kept.display())), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"mine\n");
    let back = dir.path().join("back.jsonl");
    agentwire_ok(&[
        "import",
        kept.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]);
    assert!(agentwire::input::open_trace(&back).is_ok());
}

#[test]
fn import_refuses_an_output_inside_an_input_directory_that_it_would_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    std::os::unix::fs::symlink(shared_capture(CAPTURE), inputs.join("a.pcap")).unwrap();
    let out = inputs.join("out.jsonl");
    let (i, o) = (inputs.to_str().unwrap(), out.to_str().unwrap());
    for extra in [&[][..], &["--force"][..]] {
        let mut args = vec!["import", i, "-o", o];
        args.extend_from_slice(extra);
        let r = agentwire(&args);
        assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
        assert!(stderr(&r).contains("input directory"), "{}", stderr(&r));
        assert!(!out.exists());
    }
    // Next to the directory it is fine: one exchange per exchange of the capture.
    let beside = dir.path().join("out.jsonl");
    agentwire_ok(&["import", i, "-o", beside.to_str().unwrap()]);
}

#[test]
fn dev_stdout_appended_to_a_log_keeps_the_log_and_gets_the_trace_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    std::fs::write(&log, b"earlier line\n").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cap = shared_capture(CAPTURE);
    let r = Command::new(bin())
        .args([
            "pcap",
            cap.to_str().unwrap(),
            "-o",
            "/dev/stdout",
            "--force",
        ])
        .stdout(std::fs::OpenOptions::new().append(true).open(&log).unwrap())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", stderr(&r));
    let mut want = b"earlier line\n".to_vec();
    want.extend(trace_on_dash());
    assert_eq!(std::fs::read(&log).unwrap(), want);
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

#[test]
fn dev_stdout_into_a_pipe_carries_the_trace_without_the_summary() {
    let cap = shared_capture(CAPTURE);
    let r = agentwire_ok(&["pcap", cap.to_str().unwrap(), "-o", "/dev/stdout"]);
    assert_eq!(r.stdout, trace_on_dash());
    assert!(
        stderr(&r).contains("exchange"),
        "the summary goes to stderr"
    );
}

#[test]
fn an_output_through_a_chain_of_dangling_links_creates_the_last_target() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c.jsonl"),
    );
    std::os::unix::fs::symlink("b", &a).unwrap();
    std::os::unix::fs::symlink("c.jsonl", &b).unwrap();
    let cap = shared_capture(CAPTURE);
    agentwire_ok(&["pcap", cap.to_str().unwrap(), "-o", a.to_str().unwrap()]);
    assert_eq!(std::fs::read(&c).unwrap(), trace_on_dash());
    for link in [&a, &b] {
        assert!(std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // A loop of links is refused, naming the path given, and both links stay.
    let (l1, l2) = (dir.path().join("l1"), dir.path().join("l2"));
    std::os::unix::fs::symlink("l2", &l1).unwrap();
    std::os::unix::fs::symlink("l1", &l2).unwrap();
    let r = agentwire(&[
        "pcap",
        cap.to_str().unwrap(),
        "-o",
        l1.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(
        stderr(&r).contains(&l1.display().to_string()) && stderr(&r).contains("symbolic links"),
        "{}",
        stderr(&r)
    );
    for link in [&l1, &l2] {
        assert!(std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn output_names_up_to_the_file_systems_255_bytes_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let cap = shared_capture(CAPTURE);
    for len in [243usize, 244, 255] {
        let name = format!("{}.jsonl", "n".repeat(len - 6));
        let out = dir.path().join(&name);
        agentwire_ok(&["pcap", cap.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert_eq!(std::fs::read(&out).unwrap(), trace_on_dash(), "{len} bytes");
    }
}

#[test]
fn an_output_ending_in_a_slash_is_refused_before_anything_is_read() {
    // (`/.` and `/..` endings: round s8b.)
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl").display().to_string();
    let cap = shared_capture(CAPTURE);
    for out in [format!("{t}/"), format!("{t}/."), format!("{t}/..")] {
        let r = agentwire(&["pcap", cap.to_str().unwrap(), "-o", &out]);
        assert_eq!(r.status.code(), Some(1), "{out}");
        assert!(stderr(&r).contains("is a directory"), "{}", stderr(&r));
        assert!(
            !stderr(&r).contains("packets"),
            "refused before extracting: {}",
            stderr(&r)
        );
        assert!(!Path::new(&t).exists());
    }
}

/// Run `script` in `sh -c` with `$AW` set to the agentwire binary, in `dir`.
fn sh(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("AW", bin())
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Round s8b: a standard output redirected into an input (`-o - >> u.jsonl`, or into the
/// input directory) skipped the input checks: each run appended to what it read.
#[test]
fn standard_output_redirected_into_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("u.jsonl");
    std::fs::copy(repo().join("captures/sample-session.jsonl"), &trace).unwrap();
    let before = std::fs::read(&trace).unwrap();
    for o in ["-", "/dev/stdout"] {
        let r = sh(
            dir.path(),
            &format!("\"$AW\" import u.jsonl -o {o} >> u.jsonl"),
        );
        assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
        assert!(stderr(&r).contains("also an input"), "{}", stderr(&r));
        assert_eq!(std::fs::read(&trace).unwrap(), before);
    }
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::copy(&trace, dir.path().join("d/u.jsonl")).unwrap();
    let r = sh(dir.path(), "\"$AW\" import d -o /dev/stdout >> d/all.jsonl");
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("input directory"), "{}", stderr(&r));
    assert_eq!(std::fs::read(dir.path().join("d/all.jsonl")).unwrap(), b"");
}

/// Round s8b: `-o /dev/stderr` with standard error appended to a log replaced the log
/// with a new 0600 file holding the trace alone.
#[test]
fn dev_stderr_appended_to_a_log_keeps_the_log() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log.txt");
    std::fs::write(&log, b"earlier line\n").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    let cap = shared_capture(CAPTURE);
    for o in ["/dev/stderr", "/proc/self/fd/2"] {
        let r = sh(
            dir.path(),
            &format!(
                "\"$AW\" pcap '{}' -o {o} --force 2>> log.txt",
                cap.display()
            ),
        );
        assert!(r.status.success(), "{o}");
    }
    let got = std::fs::read(&log).unwrap();
    assert!(got.starts_with(b"earlier line\n"));
    let trace = trace_on_dash();
    let n = got
        .windows(trace.len())
        .filter(|w| *w == &trace[..])
        .count();
    assert_eq!(n, 2, "both traces appended whole");
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

/// Round s8b: a link inside the input directory pointing outside it let the output be
/// written there, and the next run read it back.
#[test]
fn an_output_linked_from_inside_an_input_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (d, outside) = (dir.path().join("d"), dir.path().join("outside"));
    std::fs::create_dir(&d).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::copy(
        repo().join("captures/sample-session.jsonl"),
        d.join("u.jsonl"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("out.jsonl"), d.join("out.jsonl")).unwrap();
    let r = agentwire(&[
        "import",
        d.to_str().unwrap(),
        "-o",
        d.join("out.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
    assert!(stderr(&r).contains("input directory"), "{}", stderr(&r));
    assert!(!outside.join("out.jsonl").exists());
}

/// Round s8b: `record -o /dev/null` put its working trace at `/dev/null.jsonl.tmp`
/// (refused to a normal user, a stray file in /dev for root).
#[test]
fn record_to_a_device_keeps_its_working_trace_out_of_the_devices_directory() {
    let stray = Path::new("/dev/null.jsonl.tmp");
    assert!(
        !stray.exists(),
        "left by an earlier run: remove {}",
        stray.display()
    );
    let r = agentwire(&[
        "record",
        "--route",
        "base-url",
        "-o",
        "/dev/null",
        "--",
        "true",
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(!stray.exists());
}

/// Round s8b (minor, the same kind): `analyze DIR --parquet DIR/pq` wrote its tables
/// inside the input directory, and the next run met them among its inputs.
#[test]
fn parquet_tables_inside_an_input_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("fleet");
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(
        repo().join("captures/sample-session.jsonl"),
        d.join("s.jsonl"),
    )
    .unwrap();
    for tables in [d.join("pq"), d.clone()] {
        let r = agentwire(&[
            "analyze",
            d.to_str().unwrap(),
            "--parquet",
            tables.to_str().unwrap(),
            "--force",
        ]);
        assert_eq!(r.status.code(), Some(1), "{}", stderr(&r));
        assert!(stderr(&r).contains("input directory"), "{}", stderr(&r));
    }
    assert!(!d.join("pq").exists());
    // Beside it, the tables are written.
    let beside = dir.path().join("pq");
    agentwire_ok(&[
        "analyze",
        d.to_str().unwrap(),
        "--parquet",
        beside.to_str().unwrap(),
    ]);
    for table in ["requests", "episodes", "jobs", "decisions", "threads"] {
        assert!(beside.join(table).is_dir(), "{table}");
    }
}
