//! The exit-code table (`agentwire --help` footer, README "Exit codes"): one row per command
//! and situation, each run through the binary. The expected code follows from the
//! situation alone (0 ok, 1 error, 2 usage, 3 degraded input, 4 gate tripped); the stderr
//! fragment checks the message names the bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agentwire::capture::server::ServerConfig;

use crate::common::*;

/// Inputs for the rows, made in a temp dir from the shipped sample and the shared captures.
struct Fixtures {
    dir: tempfile::TempDir,
    good: PathBuf,
    truncated: PathBuf,
    missing: PathBuf,
    text: PathBuf,
    pcap: PathBuf,
    cut_pcap: PathBuf,
    bad_prices: PathBuf,
    existing: PathBuf,
    lt999: PathBuf,
    no_iface: PathBuf,
    bad_har: PathBuf,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = tempfile::tempdir().unwrap();
        let good = repo().join("captures/sample-session.jsonl");
        // The sample with its last line cut in half, as a crash mid-write leaves it.
        let bytes = std::fs::read(&good).unwrap();
        let last_start = bytes[..bytes.len() - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .unwrap()
            + 1;
        let cut = last_start + (bytes.len() - last_start) / 2;
        let truncated = dir.path().join("truncated.jsonl");
        std::fs::write(&truncated, &bytes[..cut]).unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "not a capture\n").unwrap();
        let pcap = shared_capture("claude-code/cc2.1.304-hello.pcap");
        // A capture cut 100 bytes into its last packet record.
        let pb = std::fs::read(&pcap).unwrap();
        let cut_pcap = dir.path().join("cut.pcap");
        std::fs::write(&cut_pcap, &pb[..pb.len() - 100]).unwrap();
        let bad_prices = dir.path().join("prices.json");
        std::fs::write(&bad_prices, "{").unwrap();
        let existing = dir.path().join("existing.jsonl");
        std::fs::copy(&good, &existing).unwrap();
        // One 4-byte packet in a pcap of link type 999 (no such LINKTYPE).
        let lt999 = dir.path().join("lt999.pcap");
        let mut b = Vec::new();
        for w in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 999] {
            b.extend(w.to_le_bytes());
        }
        for w in [1_764_000_000u32, 0, 4, 4] {
            b.extend(w.to_le_bytes());
        }
        b.extend(b"abcd");
        std::fs::write(&lt999, &b).unwrap();
        // A pcapng section header, then an Enhanced Packet Block naming interface 0,
        // which no Interface Description Block declared.
        let no_iface = dir.path().join("noiface.pcapng");
        let mut b = Vec::new();
        for w in [
            0x0a0d_0d0au32,
            28,
            0x1a2b_3c4d,
            1,
            0xffff_ffff,
            0xffff_ffff,
            28,
        ] {
            b.extend(w.to_le_bytes());
        }
        for w in [6u32, 36, 0, 0, 0, 4, 4] {
            b.extend(w.to_le_bytes());
        }
        b.extend(b"abcd");
        b.extend(36u32.to_le_bytes());
        std::fs::write(&no_iface, &b).unwrap();
        // A HAR whose entry 1 has a null header value; entry 0 is fine.
        let bad_har = dir.path().join("bad.har");
        let entry = |value: &str| {
            format!(
                r#"{{"startedDateTime":"2026-01-02T03:04:05Z","request":{{"method":"GET","url":"http://h/x","headers":[{{"name":"a","value":{value}}}]}},"response":{{"status":200}}}}"#
            )
        };
        std::fs::write(
            &bad_har,
            format!(
                r#"{{"log":{{"version":"1.2","entries":[{},{}]}}}}"#,
                entry("\"ok\""),
                entry("null")
            ),
        )
        .unwrap();
        Fixtures {
            lt999,
            no_iface,
            bad_har,
            missing: dir.path().join("missing.jsonl"),
            dir,
            good,
            truncated,
            text,
            pcap,
            cut_pcap,
            bad_prices,
            existing,
        }
    }

    fn out(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// One row: a name, the argv after `agentwire`, the expected exit code, and a fragment the
/// stderr must contain (empty: anything).
type Row = (&'static str, Vec<String>, i32, String);

fn rows(f: &Fixtures, stub_url: &str) -> Vec<Row> {
    let (good, trunc, missing) = (s(&f.good), s(&f.truncated), s(&f.missing));
    let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        // the program as a whole
        ("help", v(&["--help"]), 0, String::new()),
        ("version", v(&["--version"]), 0, String::new()),
        ("no subcommand", v(&[]), 2, "Usage".into()),
        (
            "unknown subcommand",
            v(&["frobnicate"]),
            2,
            "frobnicate".into(),
        ),
        // show
        ("show ok", v(&["show", &good]), 0, String::new()),
        (
            "show missing trace",
            v(&["show", &missing]),
            1,
            "missing.jsonl".into(),
        ),
        (
            "show truncated trace",
            v(&["show", &trunc]),
            3,
            "truncated.jsonl".into(),
        ),
        (
            "show bad format",
            v(&["show", "--format", "xml", &good]),
            2,
            "xml".into(),
        ),
        // diff
        (
            "diff identical",
            v(&["diff", &good, &good]),
            0,
            String::new(),
        ),
        (
            "diff missing input",
            v(&["diff", &good, &missing]),
            1,
            "missing.jsonl".into(),
        ),
        (
            "diff truncated input",
            v(&["diff", &good, &trunc]),
            3,
            "truncated.jsonl".into(),
        ),
        (
            "diff unknown gate",
            v(&["diff", &good, &good, "--fail-on", "tools-vanished"]),
            2,
            "tools-vanished".into(),
        ),
        (
            // exchange 0 is the title side call (no tools), 1 the main turn (2 tools)
            "diff gate tripped",
            v(&[
                "diff",
                &format!("{good}#0"),
                &format!("{good}#1"),
                "--fail-on",
                "tools-added",
            ]),
            4,
            "tools-added".into(),
        ),
        // analyze
        ("analyze ok", v(&["analyze", &good]), 0, String::new()),
        (
            "analyze missing trace",
            v(&["analyze", &missing]),
            1,
            "missing.jsonl".into(),
        ),
        (
            "analyze truncated trace",
            v(&["analyze", &trunc]),
            3,
            "truncated.jsonl".into(),
        ),
        (
            "analyze unknown metric",
            v(&["analyze", &good, "--fail-on", "bogus>1"]),
            2,
            "bogus".into(),
        ),
        (
            // seven requests cost more than nothing
            "analyze gate tripped",
            v(&[
                "analyze",
                &good,
                "--usage",
                "simulated",
                "--fail-on",
                "total-cost>0",
            ]),
            4,
            "total-cost".into(),
        ),
        (
            "analyze unreadable price file",
            v(&["analyze", &good, "--prices", &s(&f.bad_prices)]),
            1,
            "prices.json".into(),
        ),
        // pcap
        (
            "pcap ok",
            v(&["pcap", &s(&f.pcap), "-o", &f.out("p1.jsonl")]),
            0,
            String::new(),
        ),
        (
            "pcap missing capture",
            v(&[
                "pcap",
                &s(&f.dir.path().join("nope.pcap")),
                "-o",
                &f.out("p2.jsonl"),
            ]),
            1,
            "nope.pcap".into(),
        ),
        (
            "pcap not a capture",
            v(&["pcap", &s(&f.text), "-o", &f.out("p3.jsonl")]),
            1,
            "notes.txt".into(),
        ),
        (
            "pcap missing among good captures",
            v(&[
                "pcap",
                &s(&f.pcap),
                &s(&f.dir.path().join("nope.pcap")),
                "-o",
                &f.out("p4.jsonl"),
            ]),
            1,
            "nope.pcap".into(),
        ),
        (
            "pcap truncated capture",
            v(&["pcap", &s(&f.cut_pcap), "-o", &f.out("p5.jsonl")]),
            3,
            "cut.pcap".into(),
        ),
        (
            "pcap bad port",
            v(&["pcap", &s(&f.pcap), "--port", "http"]),
            2,
            "http".into(),
        ),
        // capture (live)
        (
            "capture bad duration",
            v(&["capture", "--iface", "lo", "--duration", "soon"]),
            2,
            "soon".into(),
        ),
        (
            "capture on no such interface",
            v(&[
                "capture",
                "--iface",
                "nosuchif0",
                "--duration",
                "1",
                "-o",
                &f.out("c.jsonl"),
            ]),
            1,
            if cfg!(feature = "libpcap") {
                "nosuchif0"
            } else {
                "libpcap"
            }
            .into(),
        ),
        // record
        (
            "record nothing to run",
            v(&["record", "-o", &f.out("r1.jsonl")]),
            2,
            "command".into(),
        ),
        (
            "record unknown CLI",
            v(&["record", "--cli", "vim@9.0.1", "-o", &f.out("r2.jsonl")]),
            2,
            "vim".into(),
        ),
        (
            "record bad --env",
            v(&[
                "record",
                "--env",
                "NOEQUALS",
                "-o",
                &f.out("r3.jsonl"),
                "--",
                "true",
            ]),
            2,
            "NOEQUALS".into(),
        ),
        (
            "record command fails",
            v(&[
                "record",
                "--route",
                "base-url",
                "-o",
                &f.out("r4.jsonl"),
                "--",
                "false",
            ]),
            1,
            "did not finish cleanly".into(),
        ),
        (
            "record command succeeds",
            v(&[
                "record",
                "--route",
                "base-url",
                "-o",
                &f.out("r5.jsonl"),
                "--",
                "true",
            ]),
            0,
            String::new(),
        ),
        (
            "record existing output",
            v(&[
                "record",
                "--route",
                "base-url",
                "-o",
                &s(&f.existing),
                "--",
                "true",
            ]),
            1,
            "--force".into(),
        ),
        // matrix
        (
            "matrix unknown CLI",
            v(&["matrix", "--cli", "vim@9.0.1"]),
            2,
            "vim".into(),
        ),
        // replay
        (
            "replay missing trace",
            v(&["replay", &missing, "--to", stub_url]),
            1,
            "missing.jsonl".into(),
        ),
        (
            "replay bad header",
            v(&["replay", &good, "--to", stub_url, "--header", "nocolon"]),
            2,
            "nocolon".into(),
        ),
        (
            // the sample was answered by a scenario; the stub answers other text
            "replay --compare finds differences",
            v(&["replay", &good, "--to", stub_url, "--compare"]),
            4,
            String::new(),
        ),
        (
            "replay identical statuses",
            v(&["replay", &good, "--to", stub_url]),
            0,
            String::new(),
        ),
        // bad flag values are usage errors naming the flag (they once exited 1, or were
        // accepted and every request failed)
        (
            "replay --to not a URL",
            v(&["replay", &good, "--to", "not a url"]),
            2,
            "--to".into(),
        ),
        (
            "replay --to another scheme",
            v(&["replay", &good, "--to", "ftp://x/"]),
            2,
            "ftp".into(),
        ),
        (
            "replay --header with a line break",
            v(&[
                "replay",
                &good,
                "--to",
                stub_url,
                "--header",
                "x: a\r\nInjected: 1",
            ]),
            2,
            "--header".into(),
        ),
        (
            "serve --addr with no IP",
            v(&["serve", "--addr", "999.0.0.1:80", "-o", &f.out("s1.jsonl")]),
            2,
            "--addr".into(),
        ),
        (
            "serve --addr port out of range",
            v(&[
                "serve",
                "--addr",
                "127.0.0.1:99999",
                "-o",
                &f.out("s2.jsonl"),
            ]),
            2,
            "99999".into(),
        ),
        (
            "serve --upstream another scheme",
            v(&["serve", "--upstream", "ftp://x/", "-o", &f.out("s3.jsonl")]),
            2,
            "--upstream".into(),
        ),
        (
            "serve --intercept naming no host",
            v(&["serve", "--intercept", ",", "-o", &f.out("s4.jsonl")]),
            2,
            "--intercept".into(),
        ),
        (
            "diff FILE#N beyond any id",
            v(&["diff", &format!("{good}#99999999999999999999999"), &good]),
            2,
            "99999999999999999999999".into(),
        ),
        (
            "diff FILE# without a number",
            v(&["diff", &format!("{good}#"), &good]),
            2,
            "after '#'".into(),
        ),
        // packets and entries skipped unread are said and make the run degraded (they
        // once exited 0 silently)
        (
            "pcap of a link type not decoded",
            v(&["pcap", &s(&f.lt999), "-o", &f.out("p6.jsonl")]),
            3,
            "link type 999".into(),
        ),
        (
            "pcapng packet naming an undeclared interface",
            v(&["pcap", &s(&f.no_iface), "-o", &f.out("p7.jsonl")]),
            3,
            "did not declare".into(),
        ),
        (
            "show HAR with a bad entry",
            v(&["show", &s(&f.bad_har)]),
            3,
            "entry 1".into(),
        ),
        // serve
        (
            "serve bad replay timing",
            v(&[
                "serve",
                "--replay",
                &good,
                "--timing",
                "fast",
                "-o",
                &f.out("s.jsonl"),
            ]),
            2,
            "fast".into(),
        ),
        // report, prompt, history
        (
            "report diff ok",
            v(&["report", "diff", &good, &s(&f.pcap), "-o", &f.out("r.html")]),
            0,
            "r.html".into(),
        ),
        (
            "report diff existing output",
            v(&[
                "report",
                "diff",
                &good,
                &good,
                "--format",
                "md",
                "-o",
                &s(&f.existing),
            ]),
            1,
            "--force".into(),
        ),
        (
            "report diff unknown extension",
            v(&["report", "diff", &good, &good, "-o", &f.out("r.txt")]),
            2,
            "r.txt".into(),
        ),
        (
            "report diff --max-line 0",
            v(&["report", "diff", &good, &good, "--max-line", "0"]),
            2,
            "--max-line".into(),
        ),
        (
            "report analyze truncated trace",
            v(&["report", "analyze", &trunc, "-o", &f.out("a.md")]),
            3,
            "truncated.jsonl".into(),
        ),
        (
            "report analyze missing trace",
            v(&["report", "analyze", &missing]),
            1,
            "missing.jsonl".into(),
        ),
        ("prompt ok", v(&["prompt", &good]), 0, String::new()),
        (
            "prompt no such exchange",
            v(&["prompt", &format!("{good}#99")]),
            1,
            "99".into(),
        ),
        (
            "history --step 0",
            v(&["history", "claude-code@2.1.303..2.1.304", "--step", "0"]),
            2,
            "--step".into(),
        ),
        (
            "history unknown CLI",
            v(&["history", "vim@9.0.1"]),
            2,
            "vim".into(),
        ),
        // import and export
        (
            "import an agentwire trace",
            v(&["import", &good, "-o", &f.out("i1.jsonl")]),
            0,
            String::new(),
        ),
        (
            "import missing input",
            v(&["import", &missing, "-o", &f.out("i2.jsonl")]),
            1,
            "missing.jsonl".into(),
        ),
        (
            "import bad --since",
            v(&[
                "import",
                &good,
                "--since",
                "yesterday",
                "-o",
                &f.out("i3.jsonl"),
            ]),
            2,
            "yesterday".into(),
        ),
        (
            "export to HAR",
            v(&["export", "--har", &good, "-o", &f.out("e1.har")]),
            0,
            String::new(),
        ),
        (
            "export missing trace",
            v(&["export", "--har", &missing, "-o", &f.out("e2.har")]),
            1,
            "missing.jsonl".into(),
        ),
        // mcp-tap relays a server; its exit is the server's fate, not a report
        (
            "mcp-tap without a command",
            v(&["mcp-tap", "-o", &f.out("m.jsonl")]),
            2,
            "COMMAND".into(),
        ),
        // completions and man pages
        (
            "completions bash",
            v(&["completions", "bash"]),
            0,
            String::new(),
        ),
        (
            "completions unknown shell",
            v(&["completions", "tcsh"]),
            2,
            "tcsh".into(),
        ),
        ("man page", v(&["man"]), 0, String::new()),
        (
            "man pages into a dir",
            v(&["man", "--dir", &f.out("man")]),
            0,
            "man pages".into(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_follows_the_exit_code_table() {
    let f = Fixtures::new();
    let stub = TestServer::start(ServerConfig::default()).await;
    let url = stub.server.base_url().trim_end_matches('/').to_string();
    let data = tempfile::tempdir().unwrap();
    let table = rows(&f, &url);
    let data_dir = data.path().to_path_buf();
    let failures = tokio::task::spawn_blocking(move || {
        let mut failures = Vec::new();
        for (name, args, want, fragment) in &table {
            let o = Command::new(bin())
                .args(args)
                .env("AGENTWIRE_DATA_DIR", &data_dir)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            if o.status.code() != Some(*want) || !err.contains(fragment.as_str()) {
                failures.push(format!(
                    "{name}: `agentwire {}` exited {:?}, want {want} with {fragment:?} on stderr; stderr: {err}",
                    args.join(" "),
                    o.status.code()
                ));
            }
        }
        failures
    })
    .await
    .unwrap();
    stub.finish().await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_closed_stdout_pipe_exits_0() {
    // `agentwire completions bash | head -c 10`: the pipe closes long before the script ends.
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; '{}' completions bash | head -c 10 >/dev/null",
            bin().display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The table in `--help` and the README's table list the same codes with the same names.
#[test]
fn help_footer_and_readme_agree_on_the_table() {
    let o = Command::new(bin()).arg("--help").output().unwrap();
    let help = String::from_utf8(o.stdout).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let footer: Vec<(String, String)> = help
        .lines()
        .skip_while(|l| *l != "Exit codes:")
        .skip(1)
        .filter_map(|l| {
            let (code, rest) = l.trim().split_once("  ")?;
            Some((code.to_string(), rest.split(':').next()?.to_string()))
        })
        .collect();
    assert_eq!(footer.len(), 5, "{help}");
    for (code, name) in &footer {
        let row = format!("| {code} | {name} |");
        assert!(
            readme.contains(&row),
            "README lacks the row starting {row:?}"
        );
    }
    // every subcommand's --help carries the footer too
    let o = Command::new(bin())
        .args(["pcap", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("4  gate tripped"));
}
