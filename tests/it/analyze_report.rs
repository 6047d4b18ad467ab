//! Report formats of `agentwire analyze` (snapshots on hand-made traces only), the JSON
//! Schema, `--fail-on` exit codes and `--parquet` tables, through the binary.

use std::process::Command;

use serde_json::{json, Value};

use agentwire::analyze::{analyze_exchanges, Analysis, AnalyzeConfig, UsageMode};
use agentwire::report::{analyze::render, Format};
use agentwire::trace::{Context, Exchange, TraceWriter};

use crate::analyze_polls::session;
use crate::common::{agentwire_ok, bin, repo, shared_capture};
use crate::common_tshark::{exchanges_from_pcap, have_tshark};
use crate::hand_trace::{tool_use, TraceBuilder};

/// MCP polling plus a background Bash job that fails: every table has rows.
pub fn sample() -> Vec<Exchange> {
    let get = |id: &str| {
        vec![tool_use(
            id,
            "mcp__jobs__get_status",
            json!({"job_id": "j1"}),
        )]
    };
    let note = "<task-notification>\n<task-id>t9</task-id>\n<status>failed</status>\n<summary>Background command failed with exit code 3</summary>\n</task-notification>";
    session(&[
        (vec![tool_use("s0", "mcp__jobs__start_job", json!({}))], vec![("s0", r#"{"job_id": "j1"}"#)], None),
        (get("p1"), vec![("p1", r#"{"status": "running"}"#)], None),
        (get("p2"), vec![("p2", r#"{"status": "running"}"#)], None),
        (get("p3"), vec![("p3", r#"{"status": "done", "path": "/out/r.txt"}"#)], None),
        (vec![tool_use("b0", "Bash", json!({"command": "make", "run_in_background": true}))], vec![("b0", "Command running in background with ID: t9. Output is being written to: /tmp/t9.output.")], None),
        (vec![tool_use("k1", "Bash", json!({"command": "tail -n 1 /tmp/t9.output"}))], vec![("k1", "x")], Some(note)),
        (vec![json!({"type": "text", "text": "ok"})], vec![], None),
    ])
}

pub fn analysis() -> Analysis {
    analyze_exchanges(
        &sample(),
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            ..AnalyzeConfig::default()
        },
    )
}

#[test]
fn snapshot_table() {
    insta::assert_snapshot!("analyze_table", render(&analysis(), Format::Table));
}

#[test]
fn snapshot_markdown() {
    insta::assert_snapshot!("analyze_markdown", render(&analysis(), Format::Markdown));
}

#[test]
fn snapshot_json() {
    insta::assert_snapshot!("analyze_json", render(&analysis(), Format::Json));
}

fn schema() -> jsonschema::Validator {
    let s: Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas/analyze.schema.json")).unwrap())
            .unwrap();
    jsonschema::validator_for(&s).expect("schema compiles")
}

fn assert_valid(a: &Analysis) {
    let v: Value = serde_json::from_str(&render(a, Format::Json)).unwrap();
    let errors: Vec<String> = schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn json_matches_the_committed_schema() {
    assert_valid(&analysis());
    let mut b = TraceBuilder::default();
    let c = crate::hand_trace::Conv::new("claude-sonnet-4-5");
    b.send_text(&c, 0.0);
    assert_valid(&analyze_exchanges(&b.exchanges, AnalyzeConfig::default()));
    // The schema rejects what it should: a wrong decision value.
    let mut v: Value = serde_json::from_str(&render(&analysis(), Format::Json)).unwrap();
    v["decisions"][0]["decision"] = json!("maybe");
    assert!(!schema().is_valid(&v));
}

#[test]
fn json_of_every_capture_matches_the_schema() {
    assert!(
        have_tshark(),
        "tshark is required (`make deps` installs it)"
    );
    for f in [
        "cc2.1.303-mcp-status-polling.pcap",
        "cc2.1.304-bg-polling.pcap",
        "cc2.1.304-bg-job-failed.pcap",
        "cc2.1.304-cache-ttl-gap.pcap",
        "cc2.1.304-subagent.pcap",
        "cc2.1.304-toolsearch-load.pcap",
        "cc2.1.304-hello.pcap",
        "cc2.1.303-hello-toolsearch-on.pcap",
    ] {
        let xs = exchanges_from_pcap(&shared_capture(&format!("claude-code/{f}")));
        assert_valid(&analyze_exchanges(
            &xs,
            AnalyzeConfig {
                usage: UsageMode::Simulated,
                ..AnalyzeConfig::default()
            },
        ));
    }
}

fn write_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("t.jsonl");
    let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
    for x in sample() {
        w.write_exchange(&x).unwrap();
    }
    p
}

#[test]
fn cli_json_fail_on_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    let pq = dir.path().join("tables");
    let out = agentwire_ok(&[
        "analyze",
        "--format",
        "json",
        "--usage",
        "simulated",
        "--parquet",
        pq.to_str().unwrap(),
        trace.to_str().unwrap(),
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["polls"], 4);
    assert_eq!(v["summary"]["redundant_polls"], 1);
    assert_eq!(v["usage_mode"], "simulated");
    for t in ["requests", "episodes", "jobs", "decisions", "threads"] {
        assert!(
            crate::common::files_under(&pq.join(t))
                .iter()
                .any(|f| f.extension().is_some_and(|e| e == "parquet")),
            "{t}"
        );
    }
    // Hive partitions: the sample is one client version on one day.
    let days = crate::common::files_under(&pq.join("requests"));
    assert_eq!(days.len(), 1, "{days:?}");
    let rel = days[0]
        .strip_prefix(&pq)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        rel.starts_with("requests/cli_version=") && rel.contains("/date=20"),
        "{rel}"
    );
    // Parquet files start and end with the magic `PAR1`.
    let bytes = std::fs::read(&days[0]).unwrap();
    assert_eq!(
        (&bytes[..4], &bytes[bytes.len() - 4..]),
        (&b"PAR1"[..], &b"PAR1"[..])
    );

    // The gate trips at 1 redundant poll > 0 (exit 4) and not at > 1.
    let gate = |expr: &str| {
        Command::new(bin())
            .args(["analyze", "--usage", "simulated", "--fail-on", expr])
            .arg(&trace)
            .output()
            .unwrap()
    };
    let o = gate("redundant-polls>0");
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("redundant-polls is 1"));
    assert_eq!(gate("redundant-polls>1").status.code(), Some(0));
    let o = gate("bogus>1");
    assert_eq!(o.status.code(), Some(2), "a bad gate is a usage error");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown metric"));
}

#[test]
fn cli_reads_a_price_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    let prices = dir.path().join("p.json");
    // Everything costs $1 per token-million of input, nothing else.
    std::fs::write(&prices, r#"{"source":"test","date":"2026-01-01","models":[{"model":"x","ids":["claude-sonnet-4-5"],"input":1.0,"output":0.0,"write_5m":0.0,"write_1h":0.0,"read":0.0,"min_cacheable":1000000}]}"#).unwrap();
    let out = Command::new(bin())
        .args([
            "analyze",
            "--format",
            "json",
            "--usage",
            "simulated",
            "--prices",
        ])
        .arg(&prices)
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["prices"]["source"], "test");
    // Nothing is cacheable (minimum 1e6 tokens): cost = all input tokens × $1 / 1e6.
    let input = v["summary"]["input_tokens"].as_u64().unwrap();
    assert_eq!(v["summary"]["cache_read_tokens"], 0);
    assert!((v["summary"]["total_cost_usd"].as_f64().unwrap() - input as f64 / 1e6).abs() < 1e-12);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    let o = Command::new(bin())
        .args(["analyze", "--prices"])
        .arg(&bad)
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json"));
}

#[test]
fn cli_counts_bad_lines_and_bodies_and_goes_on() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    // Where the bad line will start: after every line written so far.
    let before = std::fs::read(&trace).unwrap();
    let (bad_line, bad_byte) = (
        before.iter().filter(|&&b| b == b'\n').count() + 1,
        before.len(),
    );
    let mut bad = sample().remove(0);
    bad.id = 99;
    bad.request.body = agentwire::trace::Body::new(b"{\"model\": ".to_vec());
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&trace)
        .unwrap();
    f.write_all(b"this is not json\n").unwrap();
    // A second writer appends a header and the exchange with the broken body.
    let mut w = TraceWriter::from_writer(Box::new(f), &trace, &Context::new()).unwrap();
    w.write_exchange(&bad).unwrap();
    drop(w);
    let out = Command::new(bin())
        .args(["analyze", "--format", "json", "--usage", "simulated"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "degraded");
    let err = String::from_utf8_lossy(&out.stderr);
    // The unreadable line is named (line, byte offset, why), as `show` names it.
    assert!(
        err.contains(&format!(
            "line {bad_line} (byte {bad_byte}): not a trace record"
        )),
        "{err}"
    );
    assert!(
        err.contains("exchange 99: request body is not valid JSON at byte"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The good exchanges were all analysed.
    assert_eq!(v["summary"]["requests"], 7);
    assert_eq!(v["inputs"][0]["bad_lines"], 1);
}

#[test]
fn several_traces_share_the_cache_and_keep_threads_apart() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path());
    let b = dir.path().join("b.jsonl");
    std::fs::copy(&a, &b).unwrap();
    let out = Command::new(bin())
        .args([
            "analyze",
            "--format",
            "json",
            "--usage",
            "simulated",
            "--ttl",
            "1h",
        ])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads: Vec<&str> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap())
        .collect();
    // Each input is its own recording context, hence its own session.
    assert_eq!(threads, ["s1/main", "s2/main"]);
    assert_eq!(v["summary"]["sessions"], 2);
    // The second trace repeats the first at the same times: with a one-hour TTL its first
    // request reads what the first session cached (entries are keyed by content); it has
    // no reference in its own session, so no miss can be blamed on the other session.
    let r7 = &v["requests"][7];
    assert_eq!(
        (r7["session"].as_str(), r7["thread"].as_str()),
        (Some("s2"), Some("s2/main"))
    );
    assert_eq!(r7["predicted"]["reference"], Value::Null);
    assert_eq!(
        (r7["status"].as_str(), &r7["cause"]),
        (Some("hit"), &Value::Null)
    );
    assert!(r7["tokens"]["read"].as_u64().unwrap() > 0);
    assert_eq!(v["summary"]["polls"], 8);
}

/// Reported by a user: an unknown model was priced silently with another model's row
/// (any `claude-opus-…` as Opus 4.5). Unknown models are unpriced: cost null, a warning
/// naming the model and `--prices`, and every priced row says where its price comes from.
#[test]
fn an_unknown_model_is_unpriced_with_a_warning_not_priced_as_a_relative() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.jsonl");
    let mut b = TraceBuilder::default();
    let mut c = crate::hand_trace::Conv::new("claude-opus-9-1");
    c.user(vec![crate::hand_trace::text(100, 'u')]);
    b.send_text(&c, 0.0);
    let known = crate::hand_trace::Conv {
        model: "claude-sonnet-4-5-20250929".into(),
        ..c.clone()
    };
    b.send_text(&known, 1.0);
    let mut w =
        agentwire::trace::TraceWriter::create(&p, &agentwire::trace::Context::new()).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
    drop(w);
    let out = Command::new(bin())
        .args(["analyze", "--format", "json", "--usage", "simulated"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["requests"][0]["cost_usd"], Value::Null);
    assert_eq!(v["requests"][0]["miss_cost_usd"], Value::Null);
    assert!(v["requests"][1]["cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(v["summary"]["unpriced_models"], json!(["claude-opus-9-1"]));
    // The total is the priced request's cost only.
    assert_eq!(
        v["summary"]["total_cost_usd"].as_f64(),
        v["requests"][1]["cost_usd"].as_f64()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("claude-opus-9-1") && err.contains("--prices"),
        "{err}"
    );
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1);
    let t = agentwire::api::prices::PriceTable::builtin();
    let row = t.lookup("claude-sonnet-4-5-20250929").unwrap();
    assert!(row.source.as_deref().unwrap().contains("pricing"));
    assert_eq!(
        row.checked.as_deref(),
        Some(v["prices"]["date"].as_str().unwrap())
    );
}

/// The terminal table shows the first `TERMINAL_REQUEST_ROWS` requests and counts the
/// rest; Markdown lists every request. Was: one row per request whatever the count (40,000
/// requests: 40,000 rows and 262 MB to lay them out).
#[test]
fn terminal_table_shows_the_first_requests_and_counts_the_rest() {
    use agentwire::report::analyze::TERMINAL_REQUEST_ROWS;
    let n = TERMINAL_REQUEST_ROWS + 7;
    let body = br#"{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
    let xs: Vec<Exchange> = (0..n as u64)
        .map(|i| {
            crate::common::messages_exchange(
                i,
                1_700_000_000 + i as i64,
                body,
                "application/json",
                b"{}".to_vec(),
            )
        })
        .collect();
    let a = analyze_exchanges(&xs, AnalyzeConfig::default());
    assert_eq!(a.requests.len(), n);
    let table = render(&a, Format::Table);
    // Terminal: the title, the column header, then one line per row until a blank line
    // or the count line.
    let table_rows = table
        .lines()
        .skip_while(|l| *l != "Requests")
        .skip(2)
        .take_while(|l| !l.trim().is_empty() && !l.trim_start().starts_with('…'))
        .count();
    assert_eq!(table_rows, TERMINAL_REQUEST_ROWS);
    assert!(table.contains("… and 7 more requests"), "{table}");
    // Markdown: the header, the separator, then every request.
    let md = render(&a, Format::Markdown);
    let md_lines = md
        .lines()
        .skip_while(|l| *l != "## Requests")
        .skip(1)
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| l.starts_with('|'))
        .count();
    assert_eq!(md_lines, n + 2);
    assert!(!md.contains("more requests"));
}

/// Found by an adversarial test: `--parquet DIR --force` removed whole table directories,
/// a user's own file inside one included. `--force` replaces agentwire's tables, and
/// refuses (naming the file) when a table directory holds anything else.
#[test]
fn parquet_force_replaces_tables_but_never_a_users_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write_trace(dir.path());
    let pq = dir.path().join("tables");
    let run = || {
        Command::new(bin())
            .args(["analyze", "--usage", "simulated", "--force", "--parquet"])
            .arg(&pq)
            .arg(&trace)
            .output()
            .unwrap()
    };
    assert_eq!(run().status.code(), Some(0));
    // Agentwire's own tables are replaced.
    assert_eq!(run().status.code(), Some(0));
    let mine = pq.join("requests").join("mine.txt");
    std::fs::write(&mine, "notes").unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("mine.txt") && err.contains("move it elsewhere"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "notes");
    assert!(crate::common::files_under(&pq.join("requests"))
        .iter()
        .any(|f| f.extension().is_some_and(|e| e == "parquet")));
}

/// Issue 31 item 13, "one id for an exchange": `analyze` numbered requests 0..n while
/// `show`, `diff FILE#N` and `prompt FILE#N` use the exchange id. A trace whose first
/// exchange is not a model request (a `GET /v1/models`) has requests 1 and 2: the
/// requests table shows 1 and 2, the ids `show` lists, not 0 and 1.
#[test]
fn the_requests_table_shows_the_exchange_ids_show_and_diff_take() {
    let xs = session(&[
        (vec![json!({"type":"text","text":"a"})], vec![], None),
        (vec![json!({"type":"text","text":"b"})], vec![], None),
    ]);
    let mut models = xs[0].clone();
    models.request.method = "GET".into();
    models.request.target = "/v1/models".into();
    let mut all = vec![models];
    all.extend(xs);
    for (i, x) in all.iter_mut().enumerate() {
        x.id = i as u64;
    }
    let a = analyze_exchanges(&all, AnalyzeConfig::default());
    assert_eq!(
        a.requests
            .iter()
            .map(|r| (r.seq, r.exchange))
            .collect::<Vec<_>>(),
        [(0, 1), (1, 2)]
    );
    let md = render(&a, Format::Markdown);
    let section = md.split("## Requests").nth(1).unwrap();
    let first_cells: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| #") && !l.starts_with("| ---"))
        .map(|l| l.trim_start_matches("| ").split(" |").next().unwrap())
        .collect();
    assert_eq!(first_cells, ["1", "2"], "{section}");
    // The same ids `show` lists for the two requests.
    let trace = agentwire::trace::Trace {
        exchanges: all.clone(),
        ..Default::default()
    };
    let shown: Vec<u64> = agentwire::report::show::rows(&trace)
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.id)
        .collect();
    assert_eq!(shown, [1, 2]);
}
