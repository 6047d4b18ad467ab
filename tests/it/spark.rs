//! Fleet tables on a real engine (issue 34): PySpark (PyPI `pyspark`, pinned in `peers.rs`
//! with the `pyarrow` its workers need, installed into `target/peer-venv` once and reused;
//! Debian's JRE) in local mode `local[2]`. One test, one `spark-submit`, one JVM for both
//! checks (`tests/it/independent/spark_tables.py`): Spark reads `analyze DIR --parquet`'s
//! tables of 200 generated traces, and runs `scripts/spark/analyze_fleet.py` (the job a
//! cluster runs: agentwire shipped with `--files`, run on each of 4 partitions of the
//! files on the workers) whose table set must give the same totals.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{agentwire_ok, bin, repo};
use crate::fleet::{duckdb, write_trace, VERSIONS};

const TRACES: usize = 200;

/// What the generator wrote: requests per (version, date), and polls and redundant polls
/// in all. Trace `i` checks the build log `1 + i % 4` times after the first look: each
/// check's result differs from the one before only in its percentage (redundant) except
/// the last ("build finished: ok").
struct Scenario {
    requests: BTreeMap<String, i64>,
    polls: i64,
    redundant: i64,
}

fn generate(dir: &Path) -> Scenario {
    let mut s = Scenario {
        requests: BTreeMap::new(),
        polls: 0,
        redundant: 0,
    };
    for i in 0..TRACES {
        let n = write_trace(dir, i) as i64;
        let checks = 1 + (i % 4) as i64;
        // `write_trace`'s clock: the session starts at `t0`, polls every 10 s, answers
        // 10 s after the last poll; each request is dated by its own UTC day.
        let t0 = (i % 3) as f64 * 86_400.0 + i as f64 * 600.0;
        let times = std::iter::once(0)
            .chain((0..=checks).map(|k| 10 * (k + 1)))
            .chain([10 * (checks + 2)]);
        let mut sent = 0;
        for dt in times {
            let day = crate::hand_trace::at(t0 + dt as f64).date_naive();
            let key = format!("{}|{day}", VERSIONS[i % VERSIONS.len()]);
            *s.requests.entry(key).or_default() += 1;
            sent += 1;
        }
        assert_eq!(sent, n, "the scenario's requests of trace {i}");
        s.polls += checks + 1;
        s.redundant += checks - 1;
    }
    s
}

/// Run the Spark check; its figures for the single-machine tables and the job's.
fn spark(single: &Path, traces: &Path, fleet: &Path) -> Value {
    assert!(
        Command::new("java").arg("-version").output().is_ok(),
        "PySpark needs a JRE: `make test-deps` installs Debian's default-jre-headless"
    );
    let python = crate::peers::venv_bin("python");
    let o = Command::new(crate::peers::venv_bin("spark-submit"))
        .args(["--master", "local[2]", "--conf", "spark.ui.enabled=false"])
        .arg("--py-files")
        .arg(repo().join("scripts/spark/analyze_fleet.py"))
        .arg("--files")
        .arg(bin())
        .arg(repo().join("tests/it/independent/spark_tables.py"))
        .args([single, traces, fleet])
        .env("PYSPARK_PYTHON", &python)
        .env("PYSPARK_DRIVER_PYTHON", &python)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "spark-submit: {stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SPARK-FIGURES "))
        .unwrap_or_else(|| panic!("no figures from Spark: {stdout}"));
    serde_json::from_str(line).unwrap()
}

fn close(a: &Value, b: f64, what: &str) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{what}: {a}"));
    assert!((a - b).abs() < 1e-9, "{what}: {a} vs {b}");
}

/// Must-show of issue 34: PySpark over `analyze DIR --parquet` gets the scenario's
/// requests, polls and redundant polls and each partition's request count, DuckDB's wasted
/// dollars per CLI version; and the Spark job's table set (agentwire run on the workers)
/// gives exactly the single-machine run's totals, rows per table and partition, files,
/// schema version, agent and provider.
#[test]
fn pyspark_reads_the_fleet_tables_and_the_spark_job_gives_the_single_machine_totals() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("fleet");
    std::fs::create_dir(&traces).unwrap();
    let scenario = generate(&traces);
    let single = dir.path().join("single");
    agentwire_ok(&[
        "analyze",
        "--parquet",
        single.to_str().unwrap(),
        traces.to_str().unwrap(),
    ]);
    let got = spark(&single, &traces, &dir.path().join("spark"));
    let s = &got["single"];
    assert_eq!(
        s["requests"].as_i64(),
        Some(scenario.requests.values().sum())
    );
    assert_eq!(s["polls"].as_i64(), Some(scenario.polls));
    assert_eq!(s["redundant"].as_i64(), Some(scenario.redundant));
    let rows: BTreeMap<String, i64> =
        serde_json::from_value(s["rows"]["requests"].clone()).unwrap();
    assert_eq!(rows, scenario.requests);
    // Wasted dollars per CLI version: DuckDB's sum over the same files.
    let by_version = duckdb(
        &single,
        "select cli_version, sum(wasted_cost_usd) from episodes group by 1 order by 1",
    );
    assert_eq!(by_version.len(), VERSIONS.len());
    for r in &by_version {
        let v = r[0].as_str().unwrap();
        close(&s["wasted_by_version"][v], r[1].as_f64().unwrap(), v);
    }
    assert!(s["wasted_cost_usd"].as_f64().unwrap() > 0.0, "{s}");
    // Every table says who sent its rows and which schema it follows.
    assert_eq!(
        s["origin"]["requests"],
        serde_json::json!(["2|claude-code|anthropic|messages"])
    );
    assert_eq!(s["origin"]["episodes"], s["origin"]["requests"]);

    // The job's tables: the same figures, rows and files.
    let f = &got["fleet"];
    for k in ["requests", "polls", "redundant", "rows", "origin"] {
        assert_eq!(f[k], s[k], "{k}");
    }
    close(
        &f["wasted_cost_usd"],
        s["wasted_cost_usd"].as_f64().unwrap(),
        "total",
    );
    for v in VERSIONS {
        let want = s["wasted_by_version"][v].as_f64().unwrap();
        close(&f["wasted_by_version"][v], want, v);
    }
    let files: Vec<String> = f["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().trim_start_matches("file:").to_string())
        .collect();
    assert_eq!(serde_json::json!(files), s["files"]);
    assert_eq!(files.len(), TRACES);
}
