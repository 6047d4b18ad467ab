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
