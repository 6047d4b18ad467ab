//! `matrix --tty` and `history --tty`: Claude Code 2.1.303 and 2.1.304 recorded in
//! terminal sessions (the default session: `hello`, Enter, Ctrl-D) by both commands; each
//! matrix row's figures checked against its own trace by the independent reader
//! (`independent/agent_request.py`), each cast read by `independent/cast.py`, and the
//! history's recordings cached apart from print mode's, with their casts, and found again.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::*;
use crate::tty::{cast_reader, screen};

const VERSIONS: [&str; 2] = ["2.1.303", "2.1.304"];

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

/// A cache root whose `cli/` links to the user's downloaded CLIs, with no recordings.
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

#[test]
fn matrix_and_history_record_in_a_terminal_and_history_caches_it_apart_from_print_mode() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    let cli: Vec<String> = VERSIONS
        .iter()
        .map(|v| format!("claude-code@{v}"))
        .collect();
    let o = Command::new(bin())
        .args([
            "matrix", "--tty", "--format", "json", "--route", "base-url", "-d",
        ])
        .arg(&runs)
        .args(["--cli", &cli.join(",")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        stderr
            .matches("in a terminal, the scenario finished")
            .count(),
        2,
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    for (row, v) in rows.iter().zip(VERSIONS) {
        let trace = runs.join(format!("claude_code_{v}.jsonl"));
        let r = reader(&trace, row["exchange"].as_u64().unwrap());
        assert!(r["sha256_matches"] == true, "{v}");
        for (col, key) in [
            ("tools", "tools"),
            ("tool_bytes", "tools_bytes"),
            ("system_bytes", "system_bytes"),
            ("body_bytes", "body_bytes"),
        ] {
            assert_eq!(row[col], r[key], "{v} {col}");
        }
        // The cast beside the trace: the typed prompt answered on its last screen.
        let cast = cast_reader(&trace.with_extension("cast"));
        let inputs: Vec<&str> = cast["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i[1].as_str().unwrap())
            .collect();
        assert_eq!(inputs[..2], ["hello", "\r"], "{v}");
        assert!(screen(&cast).contains("❯ hello"), "{v}:\n{}", screen(&cast));
    }

    // history --tty: recorded into the cache as terminal recordings, casts beside them.
    let root = cache_root();
    let out = dir.path().join("h.json");
    let spec = format!("claude-code@{}", VERSIONS.join(","));
    let args = [
        "history",
        "--tty",
        "--route",
        "base-url",
        &spec,
        "-o",
        out.to_str().unwrap(),
    ];
    let first = agentwire_ok_env(&[("AGENTWIRE_CACHE_DIR", root.path())], &args);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("2 recorded now, 0 from the cache"),
        "{stderr}"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for (h, m) in doc["rows"].as_array().unwrap().iter().zip(rows) {
        assert_eq!(
            (&h["tools"], &h["system_bytes"]),
            (&m["tools"], &m["system_bytes"])
        );
    }
    for v in VERSIONS {
        let cached: Vec<String> =
            std::fs::read_dir(root.path().join("recordings/claude-code").join(v))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
        assert!(
            cached
                .iter()
                .any(|n| n.starts_with("base-url-tty-") && n.ends_with(".jsonl")),
            "{cached:?}"
        );
        let cast = cached
            .iter()
            .find(|n| n.ends_with(".cast"))
            .expect("a cast cached");
        let c = cast_reader(
            &root
                .path()
                .join("recordings/claude-code")
                .join(v)
                .join(cast),
        );
        assert_eq!(c["version"], 2);
    }
    // Found again in terminal mode.
    let out2 = dir.path().join("h2.json");
    let args = [
        "history",
        "--tty",
        "--route",
        "base-url",
        &spec,
        "-o",
        out2.to_str().unwrap(),
    ];
    let second = agentwire_ok_env(&[("AGENTWIRE_CACHE_DIR", root.path())], &args);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("0 recorded now, 2 from the cache"),
        "{stderr}"
    );
}
