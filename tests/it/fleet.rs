//! Fleet tables: `analyze DIR --parquet OUT` over 50 generated traces (five CLI versions,
//! three days, background builds polled with status checks), read back by DuckDB (PyPI
//! `duckdb`, pinned in `peers.rs`, installed into `target/peer-venv` once and reused),
//! whose totals must equal agentwire's own JSON summary, and whose Hive partitions must
//! hold each trace's requests under the version and day the generator gave it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use agentwire::trace::{Context, TraceWriter};

use crate::common::agentwire_ok;
use crate::hand_trace::{text, tool, tool_result, tool_use, Conv, TraceBuilder};

pub(crate) const VERSIONS: [&str; 5] = ["2.1.300", "2.1.301", "2.1.302", "2.1.303", "2.1.304"];
const TRACES: usize = 50;

/// Trace `i`: a Claude Code session of version `VERSIONS[i % 5]` on day `i % 3`, whose
/// model starts a build and checks its log `1 + i % 4` times (the log changes only in its
/// percentage, so every check after the first is a redundant poll) before it finishes.
/// Traces with `i % 7 == 0` name their version only in the recording context, the others
/// only in the User-Agent. Returns the number of Messages requests written.
pub(crate) fn write_trace(dir: &Path, i: usize) -> usize {
    let version = VERSIONS[i % VERSIONS.len()];
    let mut ctx = Context::new();
    let ua = format!("claude-cli/{version} (external, cli)");
    let mut b = TraceBuilder {
        kind: Some(agentwire::trace::SourceKind::Proxy),
        headers: vec![(
            "x-claude-code-session-id".into(),
            format!("6f1c2d3e-0000-4000-8000-{i:012}"),
        )],
        ..Default::default()
    };
    if i % 7 == 0 {
        ctx.cli = Some("claude-code".into());
        ctx.cli_version = Some(version.into());
    } else {
        b.headers.push(("user-agent".into(), ua));
    }
    let day = (i % 3) as f64 * 86_400.0;
    let t0 = day + i as f64 * 600.0;
    let mut conv = Conv::new("claude-sonnet-4-5");
    conv.tools = vec![tool("Bash", 600)];
    conv.system = vec![text(400, 's')];
    conv.user(vec![
        json!({"type": "text", "text": format!("build project {i}")}),
    ]);
    let usage = |input: u64| json!({"input_tokens": input, "output_tokens": 40, "cache_read_input_tokens": 0});
    let start = format!("toolu_{i}_start");
    let call = |id: &str, cmd: &str| tool_use(id, "Bash", json!({"command": cmd}));
    b.send(
        &conv,
        t0,
        vec![call(&start, "make build > build.log 2>&1 &")],
        usage(300),
    );
    conv.assistant(vec![call(&start, "make build > build.log 2>&1 &")]);
    conv.user(vec![tool_result(&start, "started", false)]);
    let checks = 1 + i % 4;
    for k in 0..=checks {
        let id = format!("toolu_{i}_poll{k}");
        b.send(
            &conv,
            t0 + 10.0 * (k + 1) as f64,
            vec![call(&id, "tail -n 5 build.log")],
            usage(400 + 50 * k as u64),
        );
        conv.assistant(vec![call(&id, "tail -n 5 build.log")]);
        let log = if k == checks {
            "build finished: ok".to_string()
        } else {
            format!("compiling... {}%", 10 * (k + 1))
        };
        conv.user(vec![tool_result(&id, &log, false)]);
    }
    b.send(
        &conv,
        t0 + 10.0 * (checks + 2) as f64,
        vec![json!({"type": "text", "text": "The build is done."})],
        usage(900),
    );
    let mut w = TraceWriter::create(&dir.join(format!("trace-{i:02}.jsonl")), &ctx).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
    w.finish().unwrap();
    checks + 3
}

/// Run `sql` in DuckDB over the tables in `tables`; rows as JSON arrays.
pub(crate) fn duckdb(tables: &Path, sql: &str) -> Vec<Value> {
    let script = format!(
        "import duckdb, json, sys\ncon = duckdb.connect()\nfor t in ['requests', 'episodes', 'jobs', 'decisions', 'threads']:\n    con.execute(f\"create view {{t}} as select * from read_parquet('{root}/{{t}}/*/*/*.parquet', hive_partitioning = true)\")\nfor row in con.execute(sys.argv[1]).fetchall():\n    print(json.dumps([str(v) if not isinstance(v, (int, float, type(None))) else v for v in row]))\n",
        root = tables.display()
    );
    let o = Command::new(crate::peers::venv_bin("python"))
        .args(["-c", &script, sql])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Must-show 4: DuckDB over the Hive-partitioned tables of 50 traces gets the same
/// requests, polls, redundant polls and wasted dollars as agentwire's JSON summary, and
/// each version's and day's request count the generator wrote.
#[test]
fn duckdb_over_fleet_parquet_matches_the_json_summary() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("fleet");
    std::fs::create_dir(&traces).unwrap();
    let mut expected: BTreeMap<(String, String), i64> = BTreeMap::new();
    for i in 0..TRACES {
        let n = write_trace(&traces, i);
        // at(0) is 2027-01-15T08:00:00Z; day i % 3 after it (no trace crosses midnight).
        let date = format!("2027-01-{}", 15 + i % 3);
        *expected
            .entry((VERSIONS[i % VERSIONS.len()].to_string(), date))
            .or_default() += n as i64;
    }
    let tables = dir.path().join("tables");
    let out = agentwire_ok(&[
        "analyze",
        "--format",
        "json",
        "--parquet",
        tables.to_str().unwrap(),
        traces.to_str().unwrap(),
    ]);
    let summary = &serde_json::from_slice::<Value>(&out.stdout).unwrap()["summary"];
    let requests = summary["requests"].as_i64().unwrap();
    assert_eq!(requests, expected.values().sum::<i64>());
    assert!(
        summary["redundant_polls"].as_i64().unwrap() > 0,
        "{summary}"
    );
    assert!(
        summary["wasted_cost_usd"].as_f64().unwrap() > 0.0,
        "{summary}"
    );

    let totals = duckdb(
        &tables,
        "select (select count(*) from requests), sum(polls), sum(redundant), sum(wasted_cost_usd) from episodes",
    );
    let t = &totals[0];
    assert_eq!(t[0].as_i64(), Some(requests));
    assert_eq!(t[1].as_i64(), summary["polls"].as_i64());
    assert_eq!(t[2].as_i64(), summary["redundant_polls"].as_i64());
    let wasted = summary["wasted_cost_usd"].as_f64().unwrap();
    assert!(
        (t[3].as_f64().unwrap() - wasted).abs() < 1e-9,
        "duckdb {} vs json {wasted}",
        t[3]
    );

    // Partitions: every version and day holds exactly the requests written for it.
    let rows = duckdb(
        &tables,
        "select cli_version, date, count(*) from requests group by all order by all",
    );
    let got: BTreeMap<(String, String), i64> = rows
        .iter()
        .map(|r| {
            (
                (
                    r[0].as_str().unwrap().to_string(),
                    r[1].as_str().unwrap().to_string(),
                ),
                r[2].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    // The README's query: redundant polls and wasted dollars by CLI version.
    let by_version = duckdb(
        &tables,
        "select cli_version, sum(redundant) from episodes group by 1 order by 1",
    );
    assert_eq!(by_version.len(), VERSIONS.len(), "{by_version:?}");
}
