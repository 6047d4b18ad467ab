//! Real Claude Code recordings through the canonical view: two recordings of one version
//! are identical after normalization (and the report lists the rules that fired), and the
//! recording environment is realistic enough that versions do not differ in what the
//! sandbox hid from them (`Shell: unknown`).

use std::process::Command;
use std::sync::OnceLock;

use agentwire::api::normalize::Normalizer;
use agentwire::diff::text::Line;
use agentwire::diff::{self, Mode};
use agentwire::input::open_trace;

use crate::common::{assert_no_key, bin};

/// Recordings shared by the tests of this file: `(304 first-party, 304 first-party again,
/// 304 base-url, 332 base-url)`, made once.
fn recordings() -> &'static [std::path::PathBuf; 4] {
    static R: OnceLock<(tempfile::TempDir, [std::path::PathBuf; 4])> = OnceLock::new();
    let (_, paths) = R.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let runs = [
            ("304-a", "2.1.304", "first-party"),
            ("304-b", "2.1.304", "first-party"),
            ("304-base", "2.1.304", "base-url"),
            ("332-base", "2.1.332", "base-url"),
        ];
        let paths = runs.map(|(name, version, route)| {
            let out = dir.path().join(format!("{name}.jsonl"));
            let o = Command::new(bin())
                .arg("record")
                .args(["--cli", &format!("claude-code@{version}"), "--route", route])
                .arg("-o")
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "record {version} {route}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_no_key(&out);
            out
        });
        (dir, paths)
    });
    paths
}

fn diff_cli(a: &std::path::Path, b: &std::path::Path, fail_on: &str) -> (i32, serde_json::Value) {
    let o = Command::new(bin())
        .arg("diff")
        .arg(a)
        .arg(b)
        .args(["--format", "json", "--fail-on", fail_on])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Reported by a user: Claude Code's per-request billing token (`cch=`) was constant to
/// `analyze` but not to `diff`: two recordings of one version "differed" and
/// `--fail-on system-changed` tripped.
#[test]
fn two_recordings_of_one_version_are_identical_after_normalization() {
    let r = recordings();
    let (code, v) = diff_cli(&r[0], &r[1], "system-changed,any");
    assert_eq!(code, 0, "{v:#}");
    let c = &v["comparisons"][0];
    assert_eq!(c["identical"], true, "{c:#}");
    // The raw texts did differ: the attestation token and the ids were normalized.
    let fired: Vec<&str> = c["normalized"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["rule"].as_str().unwrap())
        .collect();
    for rule in [
        "billing-attestation",
        "billing-fingerprint",
        "session-id",
        "working-directory",
        "device-id",
    ] {
        assert!(fired.contains(&rule), "{rule} not in {fired:?}");
    }
    let system = |p: &std::path::Path| {
        let t = open_trace(p).unwrap();
        let x = t.exchanges.iter().find(|x| x.is_messages()).unwrap();
        let r = agentwire::api::MessagesRequest::parse(&x.request.body.bytes).unwrap();
        r.system.unwrap().text()
    };
    let (a, b) = (system(&r[0]), system(&r[1]));
    assert_ne!(a, b, "the billing block changes between recordings");
    assert!(
        a.contains("cch="),
        "first-party requests carry the attestation token"
    );
    // The text report says so in words.
    let o = Command::new(bin())
        .arg("diff")
        .args([&r[0], &r[1]])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("requests identical after normalization"),
        "{text}"
    );
    assert!(text.contains("billing-attestation"), "{text}");
}

fn shell_lines(p: &std::path::Path) -> Vec<String> {
    let t = open_trace(p).unwrap();
    t.exchanges
        .iter()
        .filter(|x| x.is_messages())
        .flat_map(|x| {
            let r = agentwire::api::MessagesRequest::parse(&x.request.body.bytes).unwrap();
            r.messages.iter().map(|m| m.text()).collect::<Vec<_>>()
        })
        .flat_map(|t| {
            t.lines()
                .filter(|l| l.trim_start().starts_with("- Shell:"))
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Reported by a user: `record` ran the CLI without `SHELL`, so 2.1.304 said `Shell:
/// unknown` and a 2.1.304 → 2.1.332 diff showed `unknown → bash` as a version change.
#[test]
fn recorded_clis_get_a_shell_so_versions_do_not_differ_in_it() {
    let r = recordings();
    for p in [&r[2], &r[3]] {
        let lines = shell_lines(p);
        assert!(!lines.is_empty(), "{}: no Shell line", p.display());
        assert!(
            lines.iter().all(|l| l == "- Shell: bash"),
            "{}: {lines:?}",
            p.display()
        );
        let t = open_trace(p).unwrap();
        for k in ["SHELL", "TERM", "LANG", "PATH", "HOME", "USER"] {
            assert!(t.context.env.contains_key(k), "{k} not in the context");
        }
    }
    let (a, b) = (
        diff::resolve(r[2].to_str().unwrap(), &[]).unwrap(),
        diff::resolve(r[3].to_str().unwrap(), &[]).unwrap(),
    );
    let d = diff::diff_inputs(&a, &b, Mode::First, &Normalizer::defaults()).unwrap();
    let c = &d.comparisons[0];
    assert!(
        !c.injected.is_empty(),
        "2.1.332 changed its environment message"
    );
    for item in &c.injected {
        for line in item.diff.hunks.iter().flat_map(|h| &h.lines) {
            let changed = match line {
                Line::Context { .. } => String::new(),
                Line::Delete { text } | Line::Insert { text } => text.clone(),
                Line::Change { segments } => {
                    segments.iter().map(|s| s.text.clone()).collect::<String>()
                }
            };
            assert!(!changed.contains("Shell:"), "Shell line changed: {changed}");
        }
    }
}
