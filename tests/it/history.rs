//! `agentwire history` over four real published Claude Code versions (npm): the table's
//! tool counts agree with what `record` itself reports for each recording, a second run
//! records nothing new, and `cache list|prune` see and remove the recordings.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::agentwire_ok_env;

const VERSIONS: [&str; 4] = ["2.1.303", "2.1.304", "2.1.318", "2.1.332"];

/// A fresh cache root whose `cli/` entries link to the user's downloaded CLIs (so the
/// test downloads only what is missing) and whose recordings start empty.
fn cache_root() -> tempfile::TempDir {
    let real = std::env::var_os("AGENTWIRE_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs::cache_dir().unwrap().join("agentwire"));
    let t = tempfile::tempdir().unwrap();
    let cli = t.path().join("cli/claude-code");
    std::fs::create_dir_all(&cli).unwrap();
    for v in VERSIONS {
        let have = real.join("cli/claude-code").join(v);
        if have.is_dir() {
            std::os::unix::fs::symlink(&have, cli.join(v)).unwrap();
        }
    }
    t
}

fn run(root: &Path, args: &[&str]) -> Output {
    agentwire_ok_env(&[("AGENTWIRE_CACHE_DIR", root)], args)
}

/// `record`'s own summary lines: version → tools.
fn recorded_tools(stderr: &str) -> Vec<(String, u64)> {
    stderr
        .lines()
        .filter_map(|l| {
            let (who, rest) = l.split_once(": exit 0; ")?;
            let v = who.strip_prefix("claude-code@")?;
            let tools = rest.split(", ").nth(1)?.strip_suffix(" tools")?;
            Some((v.to_string(), tools.parse().ok()?))
        })
        .collect()
}

#[test]
fn history_of_four_published_versions_matches_record_and_reuses_the_cache() {
    let root = cache_root();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("h.json");
    let spec = format!("claude-code@{}", VERSIONS.join(","));
    let args = ["history", spec.as_str(), "-o", out.to_str().unwrap()];
    let first = run(root.path(), &args);
    let stderr = String::from_utf8_lossy(&first.stderr);
    let mut recorded = recorded_tools(&stderr);
    recorded.sort();
    assert_eq!(recorded.len(), 4, "{stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let table: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["version"].as_str().unwrap().to_string(),
                r["tools"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(table, recorded);
    assert!(rows.iter().all(|r| r["recorded"] == "new"));
    assert!(
        stderr.contains("4 recorded now, 0 from the cache"),
        "{stderr}"
    );

    // Second run: everything from the cache, same figures.
    let out2 = dir.path().join("h2.json");
    let second = run(
        root.path(),
        &[
            "history",
            spec.as_str(),
            "-o",
            out2.to_str().unwrap(),
            "--force",
        ],
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(recorded_tools(&stderr).is_empty(), "{stderr}");
    assert!(
        stderr.contains("0 recorded now, 4 from the cache"),
        "{stderr}"
    );
    let doc2: Value = serde_json::from_slice(&std::fs::read(&out2).unwrap()).unwrap();
    for (a, b) in rows.iter().zip(doc2["rows"].as_array().unwrap()) {
        assert_eq!(b["recorded"], "cache");
        for k in [
            "version",
            "tools",
            "loaded",
            "deferred",
            "announced",
            "tool_bytes",
            "system_bytes",
        ] {
            assert_eq!(a[k], b[k], "{k}");
        }
    }

    // The cache: four recordings listed; pruning recordings keeping the newest two
    // removes 2.1.303's and 2.1.304's, and leaves the CLIs.
    let list = String::from_utf8(run(root.path(), &["cache", "list"]).stdout).unwrap();
    assert_eq!(
        list.lines().filter(|l| l.starts_with("recording")).count(),
        4,
        "{list}"
    );
    let pruned = String::from_utf8(
        run(
            root.path(),
            &["cache", "prune", "--recordings", "--keep", "2"],
        )
        .stdout,
    )
    .unwrap();
    assert!(pruned.contains("removed 2 entries"), "{pruned}");
    let list = String::from_utf8(run(root.path(), &["cache", "list"]).stdout).unwrap();
    let left: Vec<&str> = list
        .lines()
        .filter(|l| l.starts_with("recording"))
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(left, ["2.1.318", "2.1.332"]);
    for v in VERSIONS {
        assert!(
            root.path().join("cli/claude-code").join(v).exists(),
            "{v} CLI kept"
        );
    }
}

/// Two captures of each version (303, 304, then 303 and 304 with other settings) gave two
/// steps one diff file name: the run failed on its own file, or with `--force` linked
/// steps 1 and 3 to the same diff; and rows 1 and 3 had the same label.
#[test]
fn history_with_a_version_pair_twice_writes_one_diff_per_step() {
    use crate::common::{agentwire_ok, shared_capture};
    let dir = tempfile::tempdir().unwrap();
    let caps = [
        "cc2.1.303-hello.pcap",
        "cc2.1.304-hello.pcap",
        "cc2.1.303-hello-toolsearch-on.pcap",
        "cc2.1.304-hello-toolsearch-off.pcap",
    ]
    .map(|c| shared_capture(&format!("claude-code/{c}")));
    let out = dir.path().join("h.md");
    let mut args = vec!["history".to_string()];
    args.extend(caps.iter().map(|c| c.display().to_string()));
    args.extend(["-o".into(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    agentwire_ok(&args);
    let page = std::fs::read_to_string(&out).unwrap();
    let diffs = dir.path().join("h-diffs");
    let mut texts = Vec::new();
    for k in 1..=3 {
        let name = std::fs::read_dir(&diffs)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .find(|n| n.starts_with(&format!("{k}-")))
            .unwrap_or_else(|| panic!("no diff for step {k}"));
        assert!(
            page.contains(&format!("h-diffs/{name}")),
            "step {k} links {name}"
        );
        texts.push(std::fs::read_to_string(diffs.join(name)).unwrap());
    }
    assert!(texts[0] != texts[2] && texts[0] != texts[1] && texts[1] != texts[2]);
    // The rows of one version name their captures.
    assert!(page.contains("(cc2.1.303-hello.pcap)"), "{page}");
    assert!(
        page.contains("(cc2.1.303-hello-toolsearch-on.pcap)"),
        "{page}"
    );
}
