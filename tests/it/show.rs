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

/// `show DIR` numbered each file's exchanges from 0 again with nothing saying which file a
/// row came from, so the `FILE#N` other commands take could not be read off the listing.
#[test]
fn show_of_a_directory_names_the_file_of_every_row() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.jsonl", "b.jsonl"] {
        std::fs::copy(
            repo().join("captures/sample-session.jsonl"),
            dir.path().join(name),
        )
        .unwrap();
    }
    let o = agentwire_ok(&["show", "--format", "json", dir.path().to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 14, "7 exchanges per copy");
    for (k, r) in rows.iter().enumerate() {
        let (file, id) = (r["file"].as_str().unwrap(), r["id"].as_u64().unwrap());
        let want = if k < 7 { "a.jsonl" } else { "b.jsonl" };
        assert!(file.ends_with(want), "row {k}: {file}");
        // FILE#N from the row names that very exchange.
        let t = agentwire::input::open_trace(std::path::Path::new(file)).unwrap();
        let x = t.exchange(id).unwrap();
        let at = x.started_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        assert_eq!(r["time"], at.as_str(), "row {k}");
    }
    // The table has the file as its first column.
    let t = agentwire_ok(&["show", dir.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&t.stdout).starts_with("file "));
}
