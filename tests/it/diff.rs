//! `agentwire diff` on the real Claude Code captures (traces built with tshark, see
//! `tshark.rs`) and on hand-made requests (snapshots). Expected figures come from the
//! captures' README (what was run) and from tshark / serde_json, not from agentwire.

use std::path::Path;
use std::process::Command;

use agentwire::api::normalize::Normalizer;
use agentwire::api::tools::Mechanism;
use agentwire::diff::text::SegOp;
use agentwire::diff::tools::ToolState;
use agentwire::diff::{self, matrix, Mode, RequestDiff};
use agentwire::input::open_trace;

use crate::common::bin;
use crate::tshark;

const TEN_DEFERRED: [&str; 10] = [
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "NotebookEdit",
    "SendMessage",
    "TaskStop",
    "WebFetch",
    "WebSearch",
];

fn first_diff(dir: &Path, a: &str, b: &str) -> RequestDiff {
    let (pa, pb) = (tshark::trace(dir, a), tshark::trace(dir, b));
    let ra = diff::resolve(pa.to_str().unwrap(), &[]).unwrap();
    let rb = diff::resolve(pb.to_str().unwrap(), &[]).unwrap();
    let mut r = diff::diff_inputs(&ra, &rb, Mode::First, &Normalizer::defaults()).unwrap();
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.comparisons.len(), 1);
    r.comparisons.remove(0)
}

/// Byte length of the `tools` array as sent, computed with serde_json (order-preserving)
/// after checking that re-serializing the body reproduces it byte for byte.
fn tools_len_by_serde(pcap: &str) -> u64 {
    let x = &tshark::exchanges(&crate::common::shared_capture(&format!(
        "claude-code/{pcap}"
    )))[0];
    let body = &x.request.body.bytes;
    let v: serde_json::Value = serde_json::from_slice(body).unwrap();
    assert_eq!(
        &serde_json::to_vec(&v).unwrap(),
        body,
        "body is compact JSON"
    );
    serde_json::to_vec(&v["tools"]).unwrap().len() as u64
}

#[test]
fn hello_2_1_303_vs_2_1_304() {
    let dir = tempfile::tempdir().unwrap();
    let d = first_diff(dir.path(), "cc2.1.303-hello.pcap", "cc2.1.304-hello.pcap");
    let tools = d.size("tools").unwrap();
    assert_eq!((tools.a, tools.b), (20, 12));
    let tb = d.size("tool_bytes").unwrap();
    assert_eq!(tb.a, tools_len_by_serde("cc2.1.303-hello.pcap"));
    assert_eq!(tb.b, tools_len_by_serde("cc2.1.304-hello.pcap"));
    assert_eq!((tb.a, tb.b), (47794, 27876));
    let body = d.size("body_bytes").unwrap();
    assert_eq!(
        (body.a, body.b),
        (63707, 44164),
        "Content-Length per tshark"
    );
    // Claude Code's words: ten deferred tools announced for ToolSearch, and one
    // placeholder definition that is not a tool.
    let b = |m: &str| d.size(m).unwrap().b;
    assert_eq!(
        [
            "deferred_tools",
            "announced_tools",
            "deferred_definitions",
            "placeholder_tools",
            "loaded_tools"
        ]
        .map(b),
        [10, 10, 0, 1, 11]
    );

    let t = &d.tools;
    assert!(!t.identical);
    assert_eq!(t.added, ["ToolSearch", "DeferredToolPlaceholder"]);
    assert_eq!(t.deferred, TEN_DEFERRED);
    for name in TEN_DEFERRED {
        let e = t.entries.iter().find(|e| e.name == name).unwrap();
        assert_eq!(
            (e.a, e.b),
            (ToolState::Loaded, ToolState::Announced),
            "{name}"
        );
        assert_eq!(e.delta, -(e.a_bytes as i64));
    }
    assert!(t.removed.is_empty() && t.changed.is_empty() && t.undeferred.is_empty());
    assert!(t.a_mechanisms.is_empty());
    assert_eq!(
        t.b_mechanisms,
        [Mechanism {
            kind: "client".into(),
            tool: "ToolSearch".into()
        }]
    );
    assert_eq!(t.b_announced, TEN_DEFERRED);

    assert_eq!(d.headers.betas_added, ["advanced-tool-use-2025-11-20"]);
    assert!(d.headers.betas_removed.is_empty());
    assert_eq!(d.headers.a_client_version.as_deref(), Some("2.1.303"));
    assert_eq!(d.headers.b_client_version.as_deref(), Some("2.1.304"));
    assert!(d.headers.changed.is_empty(), "{:?}", d.headers.changed);

    // The system prompt differs only in the version inside the billing header once the
    // fingerprint and the config-dir path are normalized.
    let s = &d.system.text;
    assert!(!s.identical);
    let words: Vec<(SegOp, &str)> = s
        .word_changes()
        .iter()
        .map(|w| (w.op, w.text.as_str()))
        .collect();
    assert_eq!(words, [(SegOp::Delete, "303"), (SegOp::Insert, "304")]);
    assert_eq!((s.deleted_chars, s.inserted_chars), (3, 3));
    assert!(d.system.same_breakpoints);
    let rules: Vec<&str> = d.normalized.iter().map(|n| n.rule.as_str()).collect();
    for r in [
        "billing-fingerprint",
        "memory-dir",
        "session-id",
        "device-id",
        "content-length",
        "host-port",
    ] {
        assert!(rules.contains(&r), "{r} in {rules:?}");
    }
    // The deferred-tools listing arrives in the system-role message.
    assert_eq!(d.injected.len(), 1);
    assert_eq!(
        (d.injected[0].kind.as_str(), d.injected[0].status.as_str()),
        ("system_message", "changed")
    );
    assert!(d.params.iter().all(|p| !p.changed), "{:?}", d.params);
}

#[test]
fn enable_tool_search_flips_each_version_to_the_others_tool_list() {
    let dir = tempfile::tempdir().unwrap();
    let d = first_diff(
        dir.path(),
        "cc2.1.303-hello-toolsearch-on.pcap",
        "cc2.1.304-hello.pcap",
    );
    assert!(d.tools.identical);
    assert_eq!(d.size("tool_bytes").unwrap().delta, 0);
    let d = first_diff(
        dir.path(),
        "cc2.1.304-hello-toolsearch-off.pcap",
        "cc2.1.303-hello.pcap",
    );
    assert!(d.tools.identical);
    assert_eq!(d.size("tools").unwrap().b, 20);
    // And through the binary, as a user reads it.
    let a = tshark::trace(dir.path(), "cc2.1.303-hello-toolsearch-on.pcap");
    let b = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let out = Command::new(bin())
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("tool definitions identical"), "{text}");
    assert!(!text.contains('\x1b'), "no colour when not a terminal");
}

#[test]
fn within_a_trace_shows_tools_loaded_by_tool_search() {
    let dir = tempfile::tempdir().unwrap();
    let p = tshark::trace(dir.path(), "cc2.1.304-toolsearch-load.pcap");
    let r = diff::diff_within(
        &diff::resolve(p.to_str().unwrap(), &[]).unwrap(),
        &Normalizer::defaults(),
    );
    // Scenario: ToolSearch select:CronCreate,CronList, then a CronList call: 3 requests
    // of the main thread, so two steps.
    assert_eq!(r.comparisons.len(), 2);
    let step = &r.comparisons[0];
    assert_eq!((step.a.turn, step.b.turn), (0, 1));
    // Fetched tools come back as definitions that keep `defer_loading: true`.
    assert_eq!(step.tools.fetched, ["CronCreate", "CronList"]);
    assert!(step.tools.undeferred.is_empty());
    assert_eq!(step.size("tools").unwrap().delta, 2);
    assert!(step.tools.added.is_empty());
    assert!(r.comparisons[1].tools.identical);
}

#[test]
fn all_aligns_turns_and_same_trace_reads_as_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let p = tshark::trace(dir.path(), "cc2.1.304-toolsearch-load.pcap");
    let ra = diff::resolve(p.to_str().unwrap(), &[]).unwrap();
    let rb = diff::resolve(p.to_str().unwrap(), &[]).unwrap();
    let r = diff::diff_inputs(&ra, &rb, Mode::All, &Normalizer::defaults()).unwrap();
    let turns: Vec<(usize, usize)> = r.comparisons.iter().map(|c| (c.a.turn, c.b.turn)).collect();
    assert_eq!(turns, [(0, 0), (1, 1), (2, 2)]);
    assert!(r.comparisons.iter().all(|c| c.identical));
    assert!(r.unmatched.is_empty());
    // Against a one-request trace: turns 1 and 2 of A have no partner.
    let h = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let rh = diff::resolve(h.to_str().unwrap(), &[]).unwrap();
    let r = diff::diff_inputs(&ra, &rh, Mode::All, &Normalizer::defaults()).unwrap();
    assert_eq!(r.comparisons.len(), 1);
    let un: Vec<(String, usize)> = r
        .unmatched
        .iter()
        .map(|u| (u.side.clone(), u.turn))
        .collect();
    assert_eq!(un, [("a".to_string(), 1), ("a".to_string(), 2)]);
}

#[test]
fn fail_on_gates_set_exit_code_4() {
    let dir = tempfile::tempdir().unwrap();
    let a = tshark::trace(dir.path(), "cc2.1.303-hello.pcap");
    let b = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let run = |gates: &[&str]| {
        let mut c = Command::new(bin());
        c.arg("diff").arg(&a).arg(&b).args(["--format", "md"]);
        for g in gates {
            c.arg("--fail-on").arg(g);
        }
        let o = c.output().unwrap();
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    assert_eq!(run(&["tools-added"]).0, Some(4));
    assert_eq!(run(&["beta-changed"]).0, Some(4));
    assert_eq!(run(&["system-changed"]).0, Some(4));
    assert_eq!(run(&["tools-removed", "tools-changed"]).0, Some(0));
    // 47794 -> 27876 bytes is -41.7%.
    assert_eq!(run(&["schema-bytes>+5%"]).0, Some(0));
    let (code, text) = run(&["schema-bytes<-40%"]);
    assert_eq!(code, Some(4));
    assert!(text.contains("`schema-bytes<-40%` — TRIPPED"), "{text}");
    assert_eq!(run(&["schema-bytes<-45%"]).0, Some(0));
    let o = Command::new(bin())
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--fail-on", "tools-vanished"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a bad gate is a usage error");
    assert!(String::from_utf8_lossy(&o.stderr).contains("tools-vanished"));
}

#[test]
fn json_report_validates_against_the_committed_schema() {
    let schema: serde_json::Value = serde_json::from_slice(
        &std::fs::read(crate::common::repo().join("schemas/diff.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = tshark::trace(dir.path(), "cc2.1.303-hello.pcap");
    let b = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let w = tshark::trace(dir.path(), "cc2.1.304-toolsearch-load.pcap");
    let runs: [Vec<&std::ffi::OsStr>; 2] = [
        vec![
            a.as_os_str(),
            b.as_os_str(),
            "--fail-on".as_ref(),
            "tools-added".as_ref(),
        ],
        vec!["--within".as_ref(), w.as_os_str()],
    ];
    for args in runs {
        let o = Command::new(bin())
            .arg("diff")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&v)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
    // The schema is strict: an unknown member is rejected.
    let o = Command::new(bin())
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["comparisons"][0]["tools"]["surprise"] = 1.into();
    assert!(!validator.is_valid(&v));
}

#[test]
fn normalization_rules_decide_what_counts_as_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let a = tshark::trace(dir.path(), "cc2.1.303-hello-toolsearch-on.pcap");
    let b = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let ra = diff::resolve(a.to_str().unwrap(), &[]).unwrap();
    let rb = diff::resolve(b.to_str().unwrap(), &[]).unwrap();
    let changed = |n: &Normalizer| -> Vec<String> {
        let r = diff::diff_inputs(&ra, &rb, Mode::First, n).unwrap();
        r.comparisons[0]
            .headers
            .changed
            .iter()
            .map(|c| c.name.clone())
            .collect()
    };
    // Raw: the session id, the server port and the body length differ (tshark shows them).
    let raw = changed(&Normalizer::none());
    for h in ["x-claude-code-session-id", "host", "content-length"] {
        assert!(raw.contains(&h.to_string()), "{h} in {raw:?}");
    }
    assert!(changed(&Normalizer::defaults()).is_empty());
    // A rules file that disables the UUID rule brings the session id back.
    let rules = dir.path().join("rules.json");
    std::fs::write(&rules, r#"{"disable":["session-id"]}"#).unwrap();
    assert_eq!(
        changed(&Normalizer::from_file(&rules).unwrap()),
        ["x-claude-code-session-id"]
    );
    let out = Command::new(bin())
        .arg("diff")
        .arg(&a)
        .arg(&b)
        .arg("--rules")
        .arg(&rules)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("x-claude-code-session-id"), "{text}");
}

#[test]
fn bad_inputs_are_named_with_a_fix() {
    let dir = tempfile::tempdir().unwrap();
    let t = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let t = t.to_str().unwrap();
    let run = |a: &str, b: &str| {
        let o = Command::new(bin()).args(["diff", a, b]).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = run(t, "/nonexistent/x.jsonl");
    assert_eq!(code, Some(1));
    assert!(
        err.contains("/nonexistent/x.jsonl") && err.contains("no such"),
        "{err}"
    );
    let (code, err) = run(t, &format!("{t}#7"));
    assert_eq!(code, Some(1));
    assert!(
        err.contains("exchange #7 not found") && err.contains("1 exchanges"),
        "{err}"
    );
    // what follows '#' is what the user typed wrong: a usage error
    let (code, err) = run(t, &format!("{t}#x"));
    assert_eq!(code, Some(2));
    assert!(err.contains("not an exchange id"), "{err}");
    // A bare request body works as an input and equals exchange 0 of the trace.
    let x = &tshark::exchanges(&crate::common::shared_capture(
        "claude-code/cc2.1.304-hello.pcap",
    ))[0];
    let body = dir.path().join("body.json");
    std::fs::write(&body, &x.request.body.bytes).unwrap();
    let o = Command::new(bin())
        .args(["diff", &format!("{t}#0")])
        .arg(&body)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["comparisons"][0]["tools"]["identical"], true);
    let body_bytes = v["comparisons"][0]["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "body_bytes")
        .unwrap();
    assert_eq!(body_bytes["delta"], 0, "body_bytes equal");
}

/// Reported by a user: diffing against a bare request body (no headers) reported every
/// beta "removed" and tripped `--fail-on beta-removed`. Absent information is unknown.
#[test]
fn a_bare_body_has_unknown_betas_never_removed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let t = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let x = &tshark::exchanges(&crate::common::shared_capture(
        "claude-code/cc2.1.304-hello.pcap",
    ))[0];
    assert!(
        x.request
            .headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("anthropic-beta") && v.contains(',')),
        "the recorded request sends several betas"
    );
    let body = dir.path().join("body.json");
    std::fs::write(&body, &x.request.body.bytes).unwrap();
    for (a, b) in [(t.as_path(), body.as_path()), (body.as_path(), t.as_path())] {
        let o = Command::new(bin())
            .arg("diff")
            .arg(a)
            .arg(b)
            .args([
                "--format",
                "json",
                "--fail-on",
                "beta-removed,beta-added,headers-changed",
            ])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let h = &v["comparisons"][0]["headers"];
        assert_eq!(h["betas_removed"], serde_json::json!([]));
        assert_eq!(h["betas_added"], serde_json::json!([]));
        assert!(h["a_betas"].is_null() || h["b_betas"].is_null());
        assert_eq!(v["comparisons"][0]["identical"], true);
    }
}

/// Reported by a user: the report said `deferred_tools 1 → 1` while Claude Code lists
/// ten deferred tools: the one `defer_loading` definition is a placeholder. Deferred is
/// Claude Code's word (announced for ToolSearch or sent with `defer_loading`), and the
/// placeholder and the announced list are named separately, in diff and matrix alike.
#[test]
fn deferred_tools_counts_what_claude_code_announces_not_the_placeholder() {
    let dir = tempfile::tempdir().unwrap();
    let t = tshark::trace(dir.path(), "cc2.1.304-toolsearch-load.pcap");
    let r = diff::diff_within(
        &diff::resolve(t.to_str().unwrap(), &[]).unwrap(),
        &Normalizer::defaults(),
    );
    let step = &r.comparisons[0];
    let row = |m: &str| {
        let s = step.size(m).unwrap();
        (s.a, s.b)
    };
    // Ten tools announced before and after ToolSearch fetched CronCreate and CronList;
    // the fetched two are now deferred definitions; the placeholder stays one.
    assert_eq!(row("deferred_tools"), (10, 10));
    assert_eq!(row("announced_tools"), (10, 10));
    assert_eq!(row("deferred_definitions"), (0, 2));
    assert_eq!(row("placeholder_tools"), (1, 1));
    assert_eq!(row("loaded_tools"), (11, 11));
    let trace = agentwire::input::open_trace(&t).unwrap();
    let m = matrix::build(&[("304".to_string(), &trace)], &Normalizer::defaults());
    assert_eq!(
        (
            m.rows[0].deferred_tools,
            m.rows[0].announced_tools,
            m.rows[0].placeholder_tools
        ),
        (10, 10, 1)
    );
}

#[test]
fn unreadable_request_is_a_problem_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let mut xs = tshark::exchanges(&crate::common::shared_capture(
        "claude-code/cc2.1.304-toolsearch-load.pcap",
    ));
    xs[1].request.body = agentwire::trace::Body::new(b"{\"messages\": [".to_vec());
    let p = dir.path().join("t.jsonl");
    let mut w =
        agentwire::trace::TraceWriter::create(&p, &agentwire::trace::Context::new()).unwrap();
    for x in &xs {
        w.write_exchange(x).unwrap();
    }
    drop(w);
    let o = Command::new(bin())
        .arg("diff")
        .arg("--within")
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "degraded");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("#1: request body skipped"), "{err}");
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("#0 (s1/main, turn 0) →") && text.contains("#2 (s1/main, turn 2)"),
        "{text}"
    );
}

#[test]
fn matrix_groups_runs_with_identical_tool_definitions() {
    use agentwire::trace::Trace;
    let dir = tempfile::tempdir().unwrap();
    let runs = [
        ("2.1.303 unset", "cc2.1.303-hello.pcap"),
        ("2.1.303 true", "cc2.1.303-hello-toolsearch-on.pcap"),
        ("2.1.304 unset", "cc2.1.304-hello.pcap"),
        ("2.1.304 false", "cc2.1.304-hello-toolsearch-off.pcap"),
    ];
    let traces: Vec<(String, Trace)> = runs
        .iter()
        .map(|(l, p)| {
            (
                l.to_string(),
                open_trace(&tshark::trace(dir.path(), p)).unwrap(),
            )
        })
        .collect();
    let input: Vec<(String, &Trace)> = traces.iter().map(|(l, t)| (l.clone(), t)).collect();
    let m = matrix::build(&input, &Normalizer::defaults());
    let figures: Vec<(usize, usize, usize, &str)> = m
        .rows
        .iter()
        .map(|r| {
            (
                r.tools,
                r.announced_tools,
                r.tool_bytes,
                r.tool_group.as_str(),
            )
        })
        .collect();
    assert_eq!(
        figures,
        [
            (20, 0, 47794, "A"),
            (12, 10, 27876, "B"),
            (12, 10, 27876, "B"),
            (20, 0, 47794, "A")
        ]
    );
    assert_eq!(
        m.identical_tools,
        [
            vec!["2.1.303 unset", "2.1.304 false"],
            vec!["2.1.303 true", "2.1.304 unset"]
        ]
    );
    let text = agentwire::report::matrix::render_matrix(&m, &[], agentwire::report::Format::Table);
    assert!(
        text.contains("tool definitions identical: 2.1.303 true = 2.1.304 unset"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

/// CLI specs are recorded on the fly (needs npm and the registry, like `record`'s tests).
#[test]
fn cli_specs_are_recorded_and_diffed() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args([
            "diff",
            "claude-code@2.1.303",
            "claude-code@2.1.304",
            "--format",
            "json",
            "--route",
            "base-url",
        ])
        .args(["--fail-on", "tools-added", "--record-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["comparisons"][0];
    assert_eq!(
        c["tools"]["added"],
        serde_json::json!(["ToolSearch", "DeferredToolPlaceholder"])
    );
    assert_eq!(c["tools"]["deferred"], serde_json::json!(TEN_DEFERRED));
    assert_eq!(
        c["headers"]["betas_added"],
        serde_json::json!(["advanced-tool-use-2025-11-20"])
    );
    // tool_bytes of each side = the tools array of the recorded body, by serde_json.
    for (side, file) in [
        ("a", "claude-code-2.1.303.jsonl"),
        ("b", "claude-code-2.1.304.jsonl"),
    ] {
        let t = agentwire::input::open_trace(&dir.path().join(file)).unwrap();
        let body = &t
            .exchanges
            .iter()
            .find(|x| x.is_messages())
            .unwrap()
            .request
            .body
            .bytes;
        let bv: serde_json::Value = serde_json::from_slice(body).unwrap();
        assert_eq!(&serde_json::to_vec(&bv).unwrap(), body);
        let len = serde_json::to_vec(&bv["tools"]).unwrap().len();
        let row = c["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == "tool_bytes")
            .unwrap();
        assert_eq!(row[side], len, "{side}");
    }
    // With ENABLE_TOOL_SEARCH=true for both, 2.1.303 sends 2.1.304's tool list.
    let o = Command::new(bin())
        .args([
            "diff",
            "claude-code@2.1.303",
            "claude-code@2.1.304",
            "--env",
            "ENABLE_TOOL_SEARCH=true",
            "--route",
            "base-url",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("tool definitions identical"));
}

#[test]
fn within_keeps_main_and_subagent_threads_apart() {
    // Scenario: main turn 0, subagent turns 0 and 1, main turn 1 (README of the captures).
    let dir = tempfile::tempdir().unwrap();
    let p = tshark::trace(dir.path(), "cc2.1.304-subagent.pcap");
    let r = diff::diff_within(
        &diff::resolve(p.to_str().unwrap(), &[]).unwrap(),
        &Normalizer::defaults(),
    );
    let steps: Vec<(Option<u64>, Option<u64>, String)> = r
        .comparisons
        .iter()
        .map(|c| (c.a.exchange, c.b.exchange, c.a.thread.clone().unwrap()))
        .collect();
    assert_eq!(
        steps,
        [
            (Some(1), Some(2), "sub-1".to_string()),
            (Some(0), Some(3), "main".to_string())
        ]
    );
    assert!(r.comparisons.iter().all(|c| c.tools.identical));
}

/// Reported by a new user: `report diff a.jsonl capture.pcap --route base-url` ignored
/// `--route` (it only applies to CLI specs) without a word. With two files it is named as
/// ignored on stderr; the report and the exit code are what they are without it, and
/// without `--route` nothing is said.
#[test]
fn route_with_no_cli_spec_is_named_as_ignored() {
    let t = crate::common::repo().join("captures/sample-session.jsonl");
    let t = t.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    for (args, warned) in [
        (vec!["diff", t, t, "--route", "base-url"], true),
        (vec!["diff", t, t], false),
        (
            vec![
                "report",
                "diff",
                t,
                t,
                "--route",
                "first-party",
                "-o",
                md.to_str().unwrap(),
            ],
            true,
        ),
    ] {
        let o = Command::new(bin()).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err.contains("--route applies to inputs given as CLI specs"),
            warned,
            "{args:?}: {err}"
        );
    }
    let plain = Command::new(bin()).args(["diff", t, t]).output().unwrap();
    let routed = Command::new(bin())
        .args(["diff", t, t, "--route", "base-url"])
        .output()
        .unwrap();
    assert_eq!(plain.stdout, routed.stdout, "the report does not change");
}

/// Retries (the same turn sent again) get repeat numbers 0, 1, …; `--all` pairs requests
/// by (session, thread, turn, repeat) and `--within` compares each request with the one
/// before it in its thread. Was: a scan of every earlier request per request (100,000
/// requests: 134 s for `--within`, minutes for `--all`); now keyed maps.
#[test]
fn retries_are_numbered_and_paired_by_key_in_all_and_within() {
    use agentwire::trace::{Context, TraceWriter};
    let dir = tempfile::tempdir().unwrap();
    let turn0 =
        br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"list the files"}]}"#;
    let turn1 = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"list the files"},{"role":"assistant","content":"a b"},{"role":"user","content":"thanks"}]}"#;
    let write = |name: &str, bodies: &[&[u8]]| {
        let p = dir.path().join(name);
        let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
        for (i, b) in bodies.iter().enumerate() {
            let x = crate::common::messages_exchange(
                i as u64,
                1_700_000_000 + i as i64,
                b,
                "application/json",
                b"{}".to_vec(),
            );
            w.write_exchange(&x).unwrap();
        }
        w.finish().unwrap();
        p
    };
    let a = write("a.jsonl", &[turn0, turn0, turn1]);
    let b = write("b.jsonl", &[turn0, turn1]);
    let ra = diff::resolve(a.to_str().unwrap(), &[]).unwrap();
    let rb = diff::resolve(b.to_str().unwrap(), &[]).unwrap();
    let pairs = |r: &diff::DiffReport| -> Vec<(u64, u64)> {
        r.comparisons
            .iter()
            .map(|c| (c.a.exchange.unwrap(), c.b.exchange.unwrap()))
            .collect()
    };
    let r = diff::diff_inputs(&ra, &rb, Mode::All, &Normalizer::defaults()).unwrap();
    assert_eq!(pairs(&r), [(0, 0), (2, 1)]);
    let un: Vec<(String, u64, usize)> = r
        .unmatched
        .iter()
        .map(|u| (u.side.clone(), u.exchange, u.turn))
        .collect();
    assert_eq!(
        un,
        [("a".to_string(), 1, 0)],
        "the retry has no partner in B"
    );
    let w = diff::diff_within(&ra, &Normalizer::defaults());
    assert_eq!(pairs(&w), [(0, 1), (1, 2)]);
}

/// `-` reads one input from standard input (a trace or a bare body), with the same result
/// as naming the file; both inputs cannot be `-` (usage error). Was: "-: no such file".
#[test]
fn one_input_may_come_from_standard_input() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let a = tshark::trace(dir.path(), "cc2.1.303-hello.pcap");
    let b = tshark::trace(dir.path(), "cc2.1.304-hello.pcap");
    let run = |args: &[&std::ffi::OsStr], stdin: Option<&Path>| {
        let mut c = Command::new(bin());
        c.arg("diff").args(args).args(["--format", "json"]);
        c.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(p) = stdin {
            input.write_all(&std::fs::read(p).unwrap()).unwrap();
        }
        drop(input);
        let o = child.wait_with_output().unwrap();
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    let named = run(&[a.as_os_str(), b.as_os_str()], None);
    let piped = run(&["-".as_ref(), b.as_os_str()], Some(&a));
    assert_eq!(named.0, Some(0));
    assert_eq!(piped.0, Some(0));
    let a_name = a.display().to_string();
    assert_eq!(named.1.replace(&a_name, "-"), piped.1);
    assert_eq!(run(&["-".as_ref(), "-".as_ref()], Some(&a)).0, Some(2));
}

/// Issue 31 item 14, "counts that explain themselves": `diff` printed "16 tools unchanged"
/// (loaded and announced tools in one count), unchanged `anthropic-version` lines, and
/// `--within` repeated the same tool diff for every turn. Now: unchanged tools counted
/// per category (the loaded tools whose definitions are byte-identical in both bodies,
/// counted here with serde_json from tshark's bodies), unchanged rows hidden unless
/// `--unchanged`, and sections common to every turn shown once.
#[test]
fn diff_counts_per_category_hides_unchanged_rows_and_rolls_up_common_turns() {
    let run = |args: &[&str]| {
        let o = Command::new(bin()).args(args).output().unwrap();
        String::from_utf8(o.stdout).unwrap()
    };
    let (a, b) = (
        crate::common::shared_capture("claude-code/cc2.1.303-hello.pcap"),
        crate::common::shared_capture("claude-code/cc2.1.304-hello.pcap"),
    );
    let tools = |p: &Path| -> Vec<serde_json::Value> {
        let x = tshark::exchanges(p)
            .into_iter()
            .find(|x| x.is_messages())
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&x.request.body.bytes).unwrap();
        v["tools"].as_array().unwrap().clone()
    };
    let (ta, tb) = (tools(&a), tools(&b));
    let same = ta
        .iter()
        .filter(|t| t.get("defer_loading").is_none() && tb.contains(t))
        .count();
    let text = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        text.contains(&format!("unchanged: {same} loaded")),
        "{text}"
    );
    assert!(!text.contains("anthropic-version"), "{text}");
    let all = run(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--unchanged",
    ]);
    assert!(
        all.contains("anthropic-version: 2023-06-01 → 2023-06-01"),
        "{all}"
    );
    // Five turn-to-turn comparisons of one session: the tool diff once, not five times.
    let pcap = crate::common::shared_capture("claude-code/cc2.1.304-bg-polling.pcap");
    let within = run(&["diff", "--within", pcap.to_str().unwrap()]);
    assert_eq!(
        within.matches("Common to all 5 comparisons").count(),
        1,
        "{within}"
    );
    assert_eq!(within.matches("\nTools\n").count(), 1, "{within}");
    assert_eq!(
        within.matches("as in every comparison (above)").count(),
        5,
        "{within}"
    );
}
