//! `agentwire show` on the shipped sample (made by agentwire; its times are fixed in the
//! file, so the report is deterministic), snapshot-tested in each format.

use crate::common::*;

fn show(format: &str) -> String {
    let o = std::process::Command::new(bin())
        .args(["show", "--format", format])
        .arg(repo().join("captures/sample-session.jsonl"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn show_table_of_the_sample_session() {
    let t = show("table");
    // independent facts of the scenario: a title side call, then six main-thread turns
    // (four tool calls, two end_turn replies)
    assert_eq!(t.lines().count(), 1 + 7);
    assert_eq!(t.matches(" main ").count(), 6);
    assert_eq!(t.matches("tool_use").count(), 4);
    assert!(t.lines().all(|l| !l.ends_with(' ')), "no trailing spaces");
    insta::assert_snapshot!("show_table", t);
}

#[test]
fn show_markdown_and_json_of_the_sample_session() {
    insta::assert_snapshot!("show_md", show("md"));
    let v: serde_json::Value = serde_json::from_str(&show("json")).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert_eq!(rows[1]["note"], "script main/0");
    assert_eq!(rows[0]["thread"], "side-1");
}
