//! `agentwire history` for an agent other than Claude Code (issue 29, "`history` works per
//! agent"): two published Codex versions that `codex.rs` records too (so the CLIs are
//! shared through agentwire's CLI cache), each recorded on Codex's default route; every
//! row's figures checked against the recording by the independent reader
//! (`independent/agent_request.py`, Python), and a second run served from the cache.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{agentwire_ok_env, repo};

const AGENT: &str = "codex";
/// `codex.rs`'s OLD and NEW.
const VERSIONS: [&str; 2] = ["0.165.0", "0.171.0"];

/// A fresh cache root whose `cli/codex/` entries link to the user's downloaded CLIs (so
/// the test downloads only what is missing) and whose recordings start empty.
fn cache_root() -> tempfile::TempDir {
    let real = std::env::var_os("AGENTWIRE_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| dirs::cache_dir().unwrap().join("agentwire"));
    let t = tempfile::tempdir().unwrap();
    let cli = t.path().join("cli").join(AGENT);
    std::fs::create_dir_all(&cli).unwrap();
    for v in VERSIONS {
        let have = real.join("cli").join(AGENT).join(v);
        if have.is_dir() {
            std::os::unix::fs::symlink(&have, cli.join(v)).unwrap();
        }
    }
    t
}

/// The one recording of `version` in the cache root, and the id of its model request.
fn recording(root: &Path, version: &str) -> (PathBuf, u64) {
    let dir = root.join("recordings").join(AGENT).join(version);
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let id = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| {
            r["type"] == "exchange"
                && r["request"]["target"]
                    .as_str()
                    .is_some_and(|t| t.ends_with("/responses"))
        })
        .map(|r| r["id"].as_u64().unwrap())
        .expect("a Responses request");
    (files[0].clone(), id)
}

/// What the independent reader says of exchange `id` of `trace`.
fn reader(trace: &Path, id: u64) -> Value {
    let o = std::process::Command::new("python3")
        .arg(repo().join("tests/it/independent/agent_request.py"))
        .arg(trace)
        .arg(id.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn history_of_two_codex_versions_agrees_with_their_recordings_and_reuses_the_cache() {
    let root = cache_root();
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("{AGENT}@{}", VERSIONS.join(","));
    let out = dir.path().join("h.json");
    let env = [("AGENTWIRE_CACHE_DIR", root.path())];
    let first = agentwire_ok_env(&env, &["history", &spec, "-o", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("2 recorded now, 0 from the cache"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["meta"]["inputs"][0]["client"], AGENT);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, v) in rows.iter().zip(VERSIONS) {
        assert_eq!(row["version"], v);
        assert_eq!(row["recorded"], "new");
        let (trace, id) = recording(root.path(), v);
        let r = reader(&trace, id);
        assert_eq!(r["sha256_matches"], true, "{v}: the body as sent");
        assert_eq!(r["path"], "/v1/responses", "{v}: Codex's default route");
        for (mine, theirs) in [
            ("tools", "tools"),
            ("tool_bytes", "tools_bytes"),
            ("system_bytes", "system_bytes"),
        ] {
            assert_eq!(row[mine], r[theirs], "{v}: {mine}");
        }
    }
    // The step's summary counts what the reader counts on each side.
    let (t0, i0) = recording(root.path(), VERSIONS[0]);
    let (t1, i1) = recording(root.path(), VERSIONS[1]);
    let (a, b) = (reader(&t0, i0), reader(&t1, i1));
    let changes = rows[1]["changes"].as_array().unwrap();
    let first_line = changes[0].as_str().unwrap();
    assert!(
        first_line.contains(&format!("sends {} tool definitions", b["tools"]))
            && first_line.contains(&format!("sends {}", a["tools"])),
        "{changes:?}"
    );

    // Second run: everything from the cache, the same figures.
    let out2 = dir.path().join("h2.json");
    let second = agentwire_ok_env(&env, &["history", &spec, "-o", out2.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("0 recorded now, 2 from the cache"),
        "{stderr}"
    );
    let doc2: Value = serde_json::from_slice(&std::fs::read(&out2).unwrap()).unwrap();
    for (a, b) in rows.iter().zip(doc2["rows"].as_array().unwrap()) {
        assert_eq!(b["recorded"], "cache");
        for k in ["version", "tools", "tool_bytes", "system_bytes", "changes"] {
            assert_eq!(a[k], b[k], "{k}");
        }
    }
}
