//! A large audit: a generated trace of 10,000 Messages requests (200 sessions of 50 turns,
//! each with a background job, polls of its output file and, in every fourth session, a
//! pause past the cache TTL) rendered as the HTML audit report. Bodies are kept small
//! (the page's size depends on the number of requests, not their bytes): a price file with
//! a 64-token cache minimum lets a short system prompt be cached. The file stays under
//! 20 MB and the page stays usable in Chromium (the request table pages 100 rows at a
//! time); the load time is printed, not asserted (speed is measured, not timed in tests).

use std::time::Instant;

use serde_json::json;

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig, PriceTable, UsageMode};
use agentwire::report::meta::InputMeta;
use agentwire::report::{audit_page, DocFormat};
use agentwire::trace::{Context, Exchange, Trace};

use crate::common_chromium::{save_screenshot, Browser};
use crate::hand_trace::{cc, text, tool, tool_result, tool_use, Conv, TraceBuilder};

/// Prices for the generated model (`claude-scale-1`), Sonnet's rates, with a 64-token
/// cache minimum.
const PRICES: &str = r#"{"source":"test","date":"2026-01-01","models":[{"model":"scale","ids":["claude-scale-1"],"input":3.0,"output":15.0,"write_5m":3.75,"write_1h":6.0,"read":0.3,"min_cacheable":64}]}"#;

/// Sessions of the generated trace.
pub const SESSIONS: usize = 200;
/// Requests per session.
pub const TURNS: usize = 50;
/// The size limit of the issue: a 10,000-request audit stays under 20 MB.
const LIMIT: usize = 20 << 20;

/// 200 sessions × 50 turns, in time order. Session `s` starts at `30 s × s`, one turn every
/// 10 s; turn 0 starts a background Bash job, every third turn reads its output file
/// (the same answer until the job finishes: redundant polls), turn 30 carries the job's
/// completion notification; sessions with `s % 4 == 0` pause 400 s before turn 25.
pub fn ten_thousand_requests() -> Vec<Exchange> {
    let mut all = Vec::with_capacity(SESSIONS * TURNS);
    for s in 0..SESSIONS {
        let mut c = Conv::new("claude-scale-1");
        c.tools = vec![tool("Bash", 120), tool("Read", 120)];
        // 400 bytes: 100 tokens, above the 64-token cache minimum of `PRICES`.
        c.system = vec![cc(text(400, 's'), None)];
        c.user(vec![text(60, 'u')]);
        let mut b = TraceBuilder {
            headers: vec![("x-claude-code-session-id".into(), format!("session-{s}"))],
            ..TraceBuilder::default()
        };
        let out = format!("/tmp/b{s}.output");
        let mut secs = 30.0 * s as f64;
        for k in 0..TURNS {
            secs += if k == 25 && s % 4 == 0 { 400.0 } else { 10.0 };
            let id = format!("t{s}_{k}");
            let (call, result) = match k {
                0 => (
                    tool_use(&id, "Bash", json!({"command": "make all", "run_in_background": true})),
                    format!("Command running in background with ID: b{s}. Output is being written to: {out}."),
                ),
                k if k % 3 == 0 => (
                    tool_use(&id, "Bash", json!({"command": format!("tail -n 5 {out}")})),
                    if k < 30 { "building…" } else { "done" }.to_string(),
                ),
                k => (
                    tool_use(&id, "Read", json!({"file_path": format!("/f{k}")})),
                    format!("f{k}"),
                ),
            };
            b.send(
                &c,
                secs,
                vec![call.clone()],
                json!({"input_tokens": 10, "output_tokens": 20}),
            );
            c.assistant(vec![call]);
            let mut blocks = vec![tool_result(&id, &result, false)];
            if k == 30 {
                blocks.push(json!({"type": "text", "text": format!("<task-notification>\n<task-id>b{s}</task-id>\n<status>completed</status>\n<summary>Background command completed (exit code 0)</summary>\n</task-notification>")}));
            }
            c.user(blocks);
        }
        all.extend(b.exchanges);
    }
    all.sort_by_key(|x| x.started_at);
    for (i, x) in all.iter_mut().enumerate() {
        x.id = i as u64;
    }
    all
}

/// Generate, analyse and render the 10,000-request audit; assert its size; load it in
/// `br` and check that the figures and the paged table are there.
pub fn ten_thousand_request_audit_stays_usable(br: &mut Browser) {
    let t = Instant::now();
    let xs = ten_thousand_requests();
    assert_eq!(xs.len(), 10_000);
    let generated = t.elapsed().as_secs_f64();
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(&prices, PRICES).unwrap();
    let a = analyze_exchanges(
        &xs,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            prices: PriceTable::from_file(&prices).unwrap(),
            ..AnalyzeConfig::default()
        },
    );
    assert!(a.summary.cache_read_tokens > 0, "the prefix is cached");
    let trace = Trace {
        path: "generated.jsonl".into(),
        context: Context::new(),
        exchanges: xs,
        others: vec![],
        problems: vec![],
        mcp: vec![],
        parts: vec![],
    };
    let analysed = t.elapsed().as_secs_f64();
    let html = audit_page::render(
        &a,
        vec![InputMeta::of("generated.jsonl", &trace)],
        DocFormat::Html,
        &audit_page::Options::default(),
    );
    println!(
        "10,000-request audit: generated in {generated:.1} s, analysed by {analysed:.1} s, rendered by {:.1} s, {} bytes",
        t.elapsed().as_secs_f64(),
        html.len()
    );
    assert!(
        html.len() < LIMIT,
        "the 10,000-request audit is {} bytes, over the 20 MB limit",
        html.len()
    );
    // Kept under target/ (not shipped) for measuring its load time outside the tests.
    let page = crate::common::repo().join("target/screenshots/report-audit-10000.html");
    std::fs::create_dir_all(page.parent().unwrap()).unwrap();
    std::fs::write(&page, &html).unwrap();
    println!("page: {}", page.display());

    br.resize(1200, 1500);
    let t = Instant::now();
    let url = br.open(&page);
    let waited = t.elapsed().as_secs_f64();
    // The browser's own navigation timing, milliseconds from navigation start.
    let nav = br.eval(
        "(n => [n.domContentLoadedEventEnd, n.loadEventEnd].map(Math.round))(performance.getEntriesByType('navigation')[0])",
    );
    println!(
        "10,000-request audit: DOM ready at {} ms, load event done at {} ms (navigation timing); {waited:.2} s until the test's 300 ms settle after load ended",
        nav[0], nav[1]
    );
    let requests = br.eval(
        "Array.from(document.querySelectorAll('#figures .figure')).find(f => f.querySelector('.label').textContent == 'requests').querySelector('.value').textContent",
    );
    assert_eq!(requests, json!("10,000"));
    let words = br.eval("document.querySelector('.words').textContent");
    assert!(
        words
            .as_str()
            .unwrap()
            .contains(&format!("10,000 Messages requests in {SESSIONS} sessions")),
        "{words}"
    );
    // Every row is in the page; one page of 100 is shown, the pager says where.
    let rows = br.eval(
        "[document.querySelectorAll('#requests tbody tr').length, document.querySelectorAll('#requests tbody tr:not(.hidden)').length, document.querySelector('#requests-section .pager span').textContent]",
    );
    assert_eq!(rows, json!([10_000, 100, "rows 1–100 of 10000"]));
    // Job lanes are per session, top to bottom; of 200 sessions the chart draws 40 (one
    // job each, so the first 40) and says so; the jobs table lists all 200.
    let jobs = br.eval(
        "[Array.from(document.querySelectorAll('#chart-jobs svg text')).filter(t => /^s\\d+$/.test(t.textContent.trim())).sort((a, b) => a.getBBox().y - b.getBBox().y).map(t => t.textContent.trim()), document.querySelectorAll('#jobs tbody tr').length]",
    );
    let first_40: Vec<String> = (1..=40).map(|i| format!("s{i}")).collect();
    assert_eq!(jobs, json!([first_40, SESSIONS]));
    let titles = br.eval(
        "Array.from(document.querySelectorAll('#chart-jobs svg text, #chart-polls svg text')).map(t => t.textContent.trim()).filter(t => t.includes(' of 200 '))",
    );
    assert_eq!(
        titles,
        json!([
            "Poll episodes over time, per target: 40 of 200 targets, those with the most polls (all in the Poll episodes table)",
            "Background jobs per session: 40 of 200 sessions, those with the most jobs (all in the Background jobs table)"
        ])
    );
    let m = br.misdeeds(&url);
    assert!(m.none(), "{m:#?}");
    save_screenshot("report-audit-10000", &br.screenshot());
}
