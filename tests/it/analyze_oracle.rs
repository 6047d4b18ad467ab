//! The figures `analyze` reports that users act on, checked against values computed
//! independently: by hand from the scenario (recorded usage figures chosen here, list
//! prices, which poll repeated which result, timing), and by a second reader, DuckDB
//! (PyPI, pinned in `peers.rs`, in the one venv `target/peer-venv`), over the `--parquet`
//! tables, with Python's `json` reading the JSON report.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use agentwire::trace::{Context, TraceWriter};

use crate::common::bin;
use crate::hand_trace::{cc, text, tool, tool_result, tool_use, Conv, TraceBuilder};

/// Recorded usage of request k: `(uncached input, cache write, cache read, output)`.
const USAGE: [(u64, u64, u64, u64); 6] = [
    (3000, 1500, 0, 100),
    (200, 40, 1500, 50),
    (210, 40, 1540, 60),
    (220, 40, 1580, 70),
    (230, 40, 1620, 80),
    (1900, 1700, 0, 90),
];

/// Claude Sonnet 4.5 list prices, USD per million tokens: input, 5-minute cache write,
/// cache read, output (Anthropic pricing page).
const PRICE: (f64, f64, f64, f64) = (3.0, 3.75, 0.30, 15.0);

fn cost(k: usize) -> f64 {
    let (i, w, r, o) = USAGE[k];
    (i as f64 * PRICE.0 + w as f64 * PRICE.1 + r as f64 * PRICE.2 + o as f64 * PRICE.3) / 1e6
}

fn tokens(k: usize) -> u64 {
    let (i, w, r, o) = USAGE[k];
    i + w + r + o
}

/// The scenario: request 0 starts an MCP job; requests 1–3 each poll its status
/// (`running`, `running` again, then `done`); request 4 answers; request 5 comes 10
/// minutes later, after the 5-minute cache entry expired. Requests 10 s apart otherwise.
fn scenario(dir: &Path) -> PathBuf {
    let mut c = Conv::new("claude-sonnet-4-5");
    c.tools = vec![tool("Bash", 400)];
    c.system = vec![cc(text(4400, 's'), None)];
    c.user(vec![text(100, 'g')]);
    let get = |id: &str| tool_use(id, "mcp__jobs__get_status", json!({"job_id": "j1"}));
    let steps: [(Value, Option<(&str, &str)>); 6] = [
        (
            tool_use("s0", "mcp__jobs__start_job", json!({})),
            Some(("s0", r#"{"job_id": "j1", "status": "accepted"}"#)),
        ),
        (
            get("p1"),
            Some(("p1", r#"{"job_id": "j1", "status": "running"}"#)),
        ),
        (
            get("p2"),
            Some(("p2", r#"{"job_id": "j1", "status": "running"}"#)),
        ),
        (
            get("p3"),
            Some(("p3", r#"{"job_id": "j1", "status": "done"}"#)),
        ),
        (json!({"type": "text", "text": "the job is done"}), None),
        (json!({"type": "text", "text": "hello again"}), None),
    ];
    let mut b = TraceBuilder::default();
    let times = [0.0, 10.0, 20.0, 30.0, 40.0, 640.0];
    for (k, (reply, result)) in steps.iter().enumerate() {
        let (i, w, r, o) = USAGE[k];
        b.send(
            &c,
            times[k],
            vec![reply.clone()],
            json!({"input_tokens": i, "cache_creation_input_tokens": w,
                   "cache_read_input_tokens": r, "output_tokens": o}),
        );
        c.assistant(vec![reply.clone()]);
        match result {
            Some((id, t)) => c.user(vec![tool_result(id, t, false)]),
            None => c.user(vec![text(30, 'u')]),
        };
    }
    let p = dir.join("scenario.jsonl");
    let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
    p
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn analyze(trace: &Path, parquet: &Path) -> Value {
    let o = Command::new(bin())
        .args([
            "analyze",
            "--usage",
            "recorded",
            "--format",
            "json",
            "--parquet",
        ])
        .arg(parquet)
        .arg(trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn analyze_figures_match_a_hand_computation_from_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let v = analyze(&scenario(dir.path()), &dir.path().join("pq"));
    let s = &v["summary"];
    assert_eq!(v["usage_used"]["recorded"], 6, "{}", v["usage_used"]);
    assert_eq!(s["requests"], 6);
    // Polls: p1, p2, p3 (one same_call episode); p2 repeated p1's `running`.
    assert_eq!(s["polls"], 3);
    assert_eq!(s["redundant_polls"], 1);
    let e = &v["episodes"][0];
    assert_eq!(
        (e["kind"].as_str(), e["polls"].as_u64()),
        (Some("same_call"), Some(3))
    );
    assert_eq!(e["redundant_calls"][0]["call"], "p2");
    assert_eq!(e["mean_interval_s"], 10.0);
    // p1..p3's results triggered requests 2..4; p2's (the redundant one) request 3.
    assert_eq!(s["poll_tokens"], tokens(2) + tokens(3) + tokens(4));
    assert!(close(
        s["poll_cost_usd"].as_f64().unwrap(),
        cost(2) + cost(3) + cost(4)
    ));
    assert_eq!(s["wasted_tokens"], tokens(3));
    assert!(close(s["wasted_cost_usd"].as_f64().unwrap(), cost(3)));
    // Totals and the hit rate: reads over all input (uncached + writes + reads).
    let sum = |f: fn(&(u64, u64, u64, u64)) -> u64| USAGE.iter().map(f).sum::<u64>();
    let (read, write) = (sum(|u| u.2), sum(|u| u.1));
    let input = sum(|u| u.0) + read + write;
    assert_eq!(s["input_tokens"], input);
    assert_eq!(s["cache_read_tokens"], read);
    assert_eq!(s["cache_write_tokens"], write);
    assert_eq!(s["output_tokens"], sum(|u| u.3));
    assert!(close(
        s["cache_hit_rate"].as_f64().unwrap(),
        read as f64 / input as f64
    ));
    let total: f64 = (0..6).map(cost).sum();
    assert!(close(s["total_cost_usd"].as_f64().unwrap(), total));
    for (k, r) in v["requests"].as_array().unwrap().iter().enumerate() {
        assert!(
            close(r["cost_usd"].as_f64().unwrap(), cost(k)),
            "request {k}"
        );
        assert_eq!(r["tokens"]["read"], USAGE[k].2, "request {k}");
    }
    // Request 5 came 600 s after request 4's use of the entry: expired (TTL 300 s).
    let r5 = &v["requests"][5];
    assert_eq!(
        r5["cause"],
        json!({"kind": "ttl_expired", "gap_s": 600.0, "ttl_s": 300}),
        "{r5:#}"
    );
    // A missed token costs the write price instead of the read price.
    let missed = r5["miss_tokens"].as_f64().unwrap();
    assert!(missed > 0.0);
    assert!(close(
        r5["miss_cost_usd"].as_f64().unwrap(),
        missed * (PRICE.1 - PRICE.2) / 1e6
    ));
    // Request 0 is the session's cold start; request 5 the only other miss.
    let causes: Vec<(&str, u64)> = s["misses_by_cause"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cause"].as_str().unwrap(),
                c["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(causes, [("cold_start", 1), ("ttl_expired", 1)]);
    assert_eq!(
        s["cache_miss_tokens"], r5["miss_tokens"],
        "cold starts are not counted"
    );
    // The job: started by request 0's call, `done` reported by p3's result (request 4).
    let j = &v["jobs"][0];
    assert_eq!(
        (j["reference"].as_str(), j["state"].as_str()),
        (Some("j1"), Some("completed"))
    );
    assert_eq!(j["polls"], 3);
}

/// Python reads the JSON report with `json` and the Parquet tables with DuckDB, and prints
/// both views: the row figures side by side and the SQL aggregates.
const READ_BACK: &str = r#"
import duckdb, json, sys
report = json.load(open(sys.argv[1]))
pq = sys.argv[2]
def rows(table, cols, order=""):
    return [list(r) for r in duckdb.sql(f"select {cols} from {t(table)} {order}").fetchall()]
def t(table):
    # one directory per table, Hive-partitioned by cli_version and date
    return f"read_parquet('{pq}/{table}/*/*/*.parquet', hive_partitioning = true)"
out = {
  "requests": rows("requests", "seq, session, thread, uncached, read, write_5m, write_1h, output, cost_usd, status, cause, miss_tokens, miss_cost_usd", "order by seq"),
  "requests_json": [[r["seq"], r["session"], r["thread"], r["tokens"]["uncached"], r["tokens"]["read"],
      r["tokens"]["write_5m"], r["tokens"]["write_1h"], r["tokens"]["output"], r["cost_usd"], r["status"],
      r["cause"] and r["cause"]["kind"], r["miss_tokens"], r["miss_cost_usd"]] for r in report["requests"]],
  "episodes": rows("episodes", "thread, kind, tool, target, job, polls, redundant, after_notified, while_pending, mean_interval_s, cost_usd, wasted_tokens, wasted_cost_usd"),
  "episodes_json": [[e["thread"], e["kind"], e["tool"], e["target"], e["job"], e["polls"], e["redundant"],
      e["after_notified"], e["while_pending"], e["mean_interval_s"], e["cost_usd"], e["wasted_tokens"],
      e["wasted_cost_usd"]] for e in report["episodes"]],
  "threads": rows("threads", "session, thread, requests, polls, redundant_polls, read, output, cache_hit_rate, miss_tokens, cost_usd"),
  "threads_json": [[t["session"], t["thread"], t["requests"], t["polls"], t["redundant_polls"], t["tokens"]["read"],
      t["tokens"]["output"], t["cache_hit_rate"], t["miss_tokens"], t["cost_usd"]] for t in report["threads"]],
  "jobs": rows("jobs", "job_reference, kind, state, exit_code, polls, artifact"),
  "jobs_json": [[j["reference"], j["kind"], j["state"], j["exit_code"], j["polls"], j["artifact"]] for j in report["jobs"]],
  "decisions": rows("decisions", "job_reference, observed_state, acceptance_result, decision"),
  "decisions_json": [[d["job_reference"], d["observed_state"], d["acceptance_result"], d["decision"]] for d in report["decisions"]],
  "sql": duckdb.sql(f"""select
      (select sum(cost_usd) from {t('requests')}),
      (select sum(read)::double / sum(uncached + read + write_5m + write_1h) from {t('requests')}),
      (select sum(polls) from {t('episodes')}),
      (select sum(redundant) from {t('episodes')}),
      (select sum(wasted_cost_usd) from {t('episodes')}),
      (select count(*) from {t('requests')} where cause = 'ttl_expired')""").fetchall()[0],
}
print(json.dumps(out))
"#;

#[test]
fn parquet_tables_read_back_by_duckdb_equal_the_json_report() {
    let dir = tempfile::tempdir().unwrap();
    let pq = dir.path().join("pq");
    let v = analyze(&scenario(dir.path()), &pq);
    let report = dir.path().join("report.json");
    std::fs::write(&report, v.to_string()).unwrap();
    let o = Command::new(crate::peers::venv_bin("python"))
        .args(["-c", READ_BACK])
        .arg(&report)
        .arg(&pq)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    for table in ["requests", "episodes", "threads", "jobs", "decisions"] {
        let (a, b) = (&got[table], &got[&format!("{table}_json")]);
        assert_eq!(
            a.as_array().unwrap().len(),
            b.as_array().unwrap().len(),
            "{table}"
        );
        assert!(!a.as_array().unwrap().is_empty(), "{table} has rows");
        assert_eq!(a, b, "{table}: Parquet (left) vs JSON (right)");
    }
    let sql = &got["sql"];
    let s = &v["summary"];
    assert!(close(
        sql[0].as_f64().unwrap(),
        s["total_cost_usd"].as_f64().unwrap()
    ));
    assert!(close(
        sql[1].as_f64().unwrap(),
        s["cache_hit_rate"].as_f64().unwrap()
    ));
    assert_eq!(sql[2], s["polls"]);
    assert_eq!(sql[3], s["redundant_polls"]);
    assert!(close(
        sql[4].as_f64().unwrap(),
        s["wasted_cost_usd"].as_f64().unwrap()
    ));
    assert_eq!(sql[5], 1);
    // and against the hand computation
    assert!(close(sql[0].as_f64().unwrap(), (0..6).map(cost).sum()));
    assert_eq!((sql[2].as_u64(), sql[3].as_u64()), (Some(3), Some(1)));
}

/// The figures of the three `analyze` report snapshots (`analyze_report::sample`), from
/// the scenario and by hand: which polls there are and which one repeated a result, the
/// jobs' timing (requests 10 s apart), and every summary figure recomputed from the
/// per-request token counts at list prices. The per-request token counts themselves are
/// the cache simulation's (checked against hand computations in `analyze::cache`'s unit
/// tests); the snapshots keep the layout.
#[test]
fn analyze_snapshot_figures_follow_from_the_scenario_and_the_request_rows() {
    use agentwire::report::{analyze::render, Format};
    let v: Value =
        serde_json::from_str(&render(&crate::analyze_report::analysis(), Format::Json)).unwrap();
    let s = &v["summary"];
    let rq = v["requests"].as_array().unwrap();
    assert_eq!(rq.len(), 7);
    let tok = |k: usize, f: &str| rq[k]["tokens"][f].as_u64().unwrap();
    let all = |k: usize| {
        ["uncached", "read", "write_5m", "write_1h", "output"]
            .iter()
            .map(|f| tok(k, f))
            .sum::<u64>()
    };
    let usd = |k: usize| {
        (tok(k, "uncached") as f64 * PRICE.0
            + tok(k, "write_5m") as f64 * PRICE.1
            + tok(k, "read") as f64 * PRICE.2
            + tok(k, "output") as f64 * PRICE.3)
            / 1e6
    };
    for (k, r) in rq.iter().enumerate() {
        assert!(
            close(r["cost_usd"].as_f64().unwrap(), usd(k)),
            "request {k}"
        );
        assert_eq!(tok(k, "write_1h"), 0, "no 1 h breakpoint in the sample");
    }
    // Polls: p1, p2, p3 (same_call of get_status) and k1 (tail of t9's output file); p2
    // repeated p1's `running`; k1's result came with t9's notification (request 6).
    assert_eq!(
        (s["polls"].as_u64(), s["redundant_polls"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(
        (
            s["polls_while_pending"].as_u64(),
            s["polls_after_notified"].as_u64()
        ),
        (Some(1), Some(0))
    );
    let ep = |k: usize, f: &str| v["episodes"][k][f].clone();
    assert_eq!(ep(0, "calls"), json!(["p1", "p2", "p3"]));
    assert_eq!(ep(0, "redundant_calls")[0]["call"], "p2");
    assert_eq!(ep(1, "calls"), json!(["k1"]));
    assert_eq!(ep(0, "mean_interval_s"), 10.0);
    // A poll costs the request its result triggered: p1..p3 → requests 2..4, k1 → 6.
    let polls = [2, 3, 4, 6];
    assert_eq!(s["poll_tokens"], polls.iter().map(|&k| all(k)).sum::<u64>());
    assert!(close(
        s["poll_cost_usd"].as_f64().unwrap(),
        polls.iter().map(|&k| usd(k)).sum()
    ));
    assert_eq!(
        ep(0, "tokens")["read"],
        tok(2, "read") + tok(3, "read") + tok(4, "read")
    );
    assert_eq!(s["wasted_tokens"], all(3));
    assert!(close(s["wasted_cost_usd"].as_f64().unwrap(), usd(3)));
    // Totals, hit rate (reads over all input), total cost.
    let sum = |f: &str| (0..7).map(|k| tok(k, f)).sum::<u64>();
    let input = sum("uncached") + sum("read") + sum("write_5m");
    assert_eq!(s["input_tokens"], input);
    assert_eq!(s["cache_read_tokens"], sum("read"));
    assert_eq!(s["cache_write_tokens"], sum("write_5m"));
    assert_eq!(s["output_tokens"], sum("output"));
    assert!(close(
        s["cache_hit_rate"].as_f64().unwrap(),
        sum("read") as f64 / input as f64
    ));
    assert!(close(
        s["total_cost_usd"].as_f64().unwrap(),
        (0..7).map(usd).sum()
    ));
    // The only miss is the cold start: all of request 0's writes, at write minus read price.
    let cold = &s["misses_by_cause"][0];
    assert_eq!(
        (cold["cause"].as_str(), cold["requests"].as_u64()),
        (Some("cold_start"), Some(1))
    );
    assert_eq!(cold["tokens"], tok(0, "write_5m"));
    assert!(close(
        cold["cost_usd"].as_f64().unwrap(),
        tok(0, "write_5m") as f64 * (PRICE.1 - PRICE.2) / 1e6
    ));
    assert_eq!(s["misses_by_cause"].as_array().unwrap().len(), 1);
    assert_eq!(s["cache_miss_tokens"], 0, "cold starts are not counted");
    // Jobs: j1 started by s0's result (request 1, 08:00:10), done in p3's result (request
    // 4, 08:00:40): 30 s, 3 polls; t9 started by b0's result (request 5), failed with exit
    // code 3 notified in request 6: 10 s, 1 poll.
    let job = |k: usize| {
        let j = &v["jobs"][k];
        (
            j["reference"].as_str().unwrap().to_string(),
            j["state"].as_str().unwrap().to_string(),
            j["exit_code"].as_i64(),
            j["polls"].as_u64().unwrap(),
            j["artifact"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        job(0),
        (
            "j1".into(),
            "completed".into(),
            None,
            3,
            "/out/r.txt".into()
        )
    );
    assert_eq!(
        job(1),
        (
            "t9".into(),
            "failed".into(),
            Some(3),
            1,
            "/tmp/t9.output".into()
        )
    );
    assert_eq!(
        (ep(0, "job_duration_s"), ep(1, "job_duration_s")),
        (json!(30.0), json!(10.0))
    );
    assert_eq!(s["jobs_by_state"], json!({"completed": 1, "failed": 1}));
    let d: Vec<&str> = v["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["decision"].as_str().unwrap())
        .collect();
    assert_eq!(d, ["keep", "investigate"]);
}
