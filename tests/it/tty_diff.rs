//! `diff` of a print-mode and a terminal-mode (`record --tty`) recording of one Claude Code
//! version (2.1.304, as the other tests cache it): what the terminal adds or changes —
//! tools, their bytes, the system prompt's bytes, the beta names — as `diff` names it,
//! each figure checked against both traces by the independent reader
//! (`independent/agent_request.py`, Python).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// What the independent reader says of exchange `id` of `trace`.
fn reader(trace: &Path, id: u64) -> Value {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/agent_request.py"))
        .arg(trace)
        .arg(id.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `record` of claude-code@2.1.304 into `out`, with `extra` arguments.
fn record(out: &Path, extra: &[&str]) {
    let o = Command::new(bin())
        .args([
            "record",
            "--cli",
            "claude-code@2.1.304",
            "--route",
            "base-url",
        ])
        .args(extra)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The value of size metric `m` on side `side` of a comparison.
fn size(c: &Value, m: &str, side: &str) -> u64 {
    let row = c["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == m);
    row.unwrap_or_else(|| panic!("no {m}"))[side]
        .as_u64()
        .unwrap()
}

/// Names of a reader's `tool_sizes`, with their bytes.
fn tools_of(r: &Value) -> BTreeMap<String, u64> {
    let sizes = r["tool_sizes"].as_array().unwrap();
    sizes
        .iter()
        .map(|t| (t[0].as_str().unwrap().to_string(), t[1].as_u64().unwrap()))
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    let a = v.as_array().unwrap();
    a.iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

#[test]
fn diff_of_print_and_terminal_mode_of_one_version_names_the_tools_bytes_and_betas_that_differ() {
    let dir = tempfile::tempdir().unwrap();
    let (print, terminal) = (dir.path().join("print.jsonl"), dir.path().join("tty.jsonl"));
    record(&print, &[]);
    // The default terminal session: `hello` typed, Enter, Ctrl-D.
    record(&terminal, &["--tty"]);
    let o = Command::new(bin())
        .args(["diff", "--format", "json"])
        .args([&print, &terminal])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["comparisons"][0];
    let (a, b) = (
        reader(&print, c["a"]["exchange"].as_u64().unwrap()),
        reader(&terminal, c["b"]["exchange"].as_u64().unwrap()),
    );
    assert!(a["sha256_matches"] == true && b["sha256_matches"] == true);
    for (metric, key) in [
        ("tool_bytes", "tools_bytes"),
        ("system_bytes", "system_bytes"),
        ("body_bytes", "body_bytes"),
        ("tools", "tools"),
    ] {
        let want = (a[key].as_u64().unwrap(), b[key].as_u64().unwrap());
        assert_eq!(
            (size(c, metric, "a"), size(c, metric, "b")),
            want,
            "{metric}"
        );
    }
    // Tools: added, removed and changed by name, each entry's bytes as sent.
    let (ta, tb) = (tools_of(&a), tools_of(&b));
    let added: Vec<&String> = tb.keys().filter(|n| !ta.contains_key(*n)).collect();
    let removed: Vec<&String> = ta.keys().filter(|n| !tb.contains_key(*n)).collect();
    let mut diff_added = strings(&c["tools"]["added"]);
    let mut diff_removed = strings(&c["tools"]["removed"]);
    diff_added.sort();
    diff_removed.sort();
    assert_eq!(diff_added.iter().collect::<Vec<_>>(), added);
    assert_eq!(diff_removed.iter().collect::<Vec<_>>(), removed);
    assert!(
        !added.is_empty() || !removed.is_empty() || ta != tb,
        "the terminal sends other tools: {ta:?} / {tb:?}"
    );
    for e in c["tools"]["entries"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let (ab, bb) = (
            e["a_bytes"].as_u64().unwrap(),
            e["b_bytes"].as_u64().unwrap(),
        );
        assert_eq!(
            ab,
            ta.get(name).copied().unwrap_or(0),
            "{name} in print mode"
        );
        assert_eq!(
            bb,
            tb.get(name).copied().unwrap_or(0),
            "{name} in the terminal"
        );
    }
    // Betas: those the terminal adds, in its order, and those it drops.
    let (ba, bb) = (strings(&a["betas"]), strings(&b["betas"]));
    let more: Vec<&String> = bb.iter().filter(|x| !ba.contains(x)).collect();
    let fewer: Vec<&String> = ba.iter().filter(|x| !bb.contains(x)).collect();
    assert_eq!(
        strings(&c["headers"]["betas_added"])
            .iter()
            .collect::<Vec<_>>(),
        more
    );
    assert_eq!(
        strings(&c["headers"]["betas_removed"])
            .iter()
            .collect::<Vec<_>>(),
        fewer
    );
    // The table a user reads names the same: the added tools and the byte figures.
    let o = Command::new(bin())
        .arg("diff")
        .args([&print, &terminal])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    for n in &added {
        assert!(table.contains(n.as_str()), "{n}:\n{table}");
    }
    let row = table
        .lines()
        .find(|l| l.trim_start().starts_with("tool_bytes "));
    let row: Vec<&str> = row.expect("a tool_bytes row").split_whitespace().collect();
    let want = [a["tools_bytes"].to_string(), b["tools_bytes"].to_string()];
    assert_eq!(row[1..3], want, "{table}");
}
