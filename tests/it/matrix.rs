//! `agentwire matrix` recorded live from npm: versions × ENABLE_TOOL_SEARCH (issue 3,
//! must-show 3) and versions × routes (issue 7, must-show 2).

use crate::common::*;

fn matrix(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(bin())
        .args(["matrix", "--format", "json", "-d"])
        .arg(dir.path())
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in std::fs::read_dir(dir.path()).unwrap() {
        assert_no_key(&f.unwrap().path());
    }
    serde_json::from_slice(&o.stdout).unwrap()
}

fn rows(v: &serde_json::Value) -> Vec<(String, u64, String)> {
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["tools"].as_u64().unwrap(),
                r["tool_group"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn versions_by_tool_search_setting_six_rows() {
    let v = matrix(&[
        "--cli",
        "claude-code@2.1.303,claude-code@2.1.304",
        "--env",
        "ENABLE_TOOL_SEARCH=unset,true,false",
        "--route",
        "base-url",
    ]);
    let r = rows(&v);
    let tools: Vec<u64> = r.iter().map(|x| x.1).collect();
    assert_eq!(tools, [20, 12, 20, 12, 12, 20]);
    // 303 default = 303 false = 304 false; 303 true = 304 default = 304 true
    let g: Vec<&str> = r.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(g[0], g[2]);
    assert_eq!(g[0], g[5]);
    assert_eq!(g[1], g[3]);
    assert_eq!(g[1], g[4]);
    assert_ne!(g[0], g[1]);
    assert_eq!(v["identical_tools"].as_array().unwrap().len(), 2);
}

#[test]
fn versions_by_route_four_rows() {
    let v = matrix(&[
        "--cli",
        "claude-code@2.1.303,claude-code@2.1.304",
        "--route",
        "first-party,base-url",
    ]);
    let r = rows(&v);
    let labels: Vec<&str> = r.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(
        labels,
        [
            "claude-code@2.1.303 route=first-party",
            "claude-code@2.1.303 route=base-url",
            "claude-code@2.1.304 route=first-party",
            "claude-code@2.1.304 route=base-url"
        ]
    );
    assert_eq!(r.iter().map(|x| x.1).collect::<Vec<_>>(), [12, 20, 12, 12]);
    // first-party 2.1.303 already has 2.1.304's tool list; only 2.1.303 via base URL differs
    assert_eq!(r[0].2, r[2].2);
    assert_eq!(r[0].2, r[3].2);
    assert_ne!(r[0].2, r[1].2);
}

#[test]
fn a_version_range_records_each_published_version() {
    // 2.1.303..2.1.304: both ends are published for linux-x64 and nothing lies between
    let r = rows(&matrix(&[
        "--cli",
        "claude-code@2.1.303..2.1.304",
        "--route",
        "base-url",
    ]));
    let got: Vec<(&str, u64)> = r.iter().map(|x| (x.0.as_str(), x.1)).collect();
    // on the base-url route 2.1.303 sends 20 tools, 2.1.304 twelve (tests/it/record.rs)
    assert_eq!(
        got,
        [("claude-code@2.1.303", 20), ("claude-code@2.1.304", 12)]
    );
}

/// A version that cannot be fetched failed every cell of the matrix, each under the other
/// cells' labels, and no cell recorded; now it fails its own cell only (exit 3, the
/// others recorded) and names its own version and npm's reason once.
#[test]
fn matrix_fetch_failure_of_one_version_failed_every_cell() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let o = std::process::Command::new(bin())
        .args(["matrix", "--format", "json", "-d"])
        .arg(&runs)
        .args(["--cli", "claude-code@2.1.304,claude-code@9.9.999"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let labels: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["claude-code@2.1.304"]);
    assert!(runs.join("claude_code_2.1.304.jsonl").is_file());
    assert!(!runs.join("claude_code_9.9.999.jsonl").exists());
    let failed: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert!(failed[0].contains("claude-code@9.9.999"), "{err}");
    assert!(failed[0].contains("not published"), "{err}");
    assert!(
        failed[0].contains("`npm view @anthropic-ai/claude-code-")
            && failed[0].contains(" versions`"),
        "the hint names the package looked up: {err}"
    );
    assert!(!failed[0].contains("is npm installed"), "{err}");
}
