//! HTML reports made from the shared Claude Code captures, loaded in a real headless
//! Chromium: the rendered DOM shows the key figures (computed here independently, from
//! tshark's reading of the same captures and from the scenarios), the page does nothing
//! on its own (no console message, no dialog, no network request), and a screenshot is
//! saved (its path printed; `AGENTWIRE_UPDATE_SCREENSHOTS=1` refreshes the README's).
//! A generated 10,000-request audit stays under 20 MB and stays usable in the browser.
//!
//! One browser serves every page (starting Chromium is the slow part): the checks run in
//! order inside one test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agentwire::api::MessagesRequest;

use crate::common::{agentwire_ok, shared_capture};
use crate::common_chromium::{save_screenshot, Browser};
use crate::common_tshark::exchanges_from_pcap;
use crate::report_scale;

/// A reference capture, its path without `..` (the reports and screenshots show it).
fn capture(name: &str) -> PathBuf {
    shared_capture(&format!("claude-code/{name}"))
        .canonicalize()
        .unwrap()
}

/// Tool names of the first Messages request tshark finds in a capture.
fn tool_names(pcap: &Path) -> BTreeSet<String> {
    let xs = exchanges_from_pcap(pcap);
    let x = xs.iter().find(|x| x.is_messages()).unwrap();
    let r = MessagesRequest::parse(&x.request.body.bytes).unwrap();
    r.tools.iter().map(|t| t.name.clone()).collect()
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

/// Must-show 1 (diff): 20 → 12 tool definitions, the ten moved tools named.
fn diff_report_shows_20_to_12_tools_and_names_the_ten_deferred(br: &mut Browser) {
    let (a, b) = (
        capture("cc2.1.303-hello.pcap"),
        capture("cc2.1.304-hello.pcap"),
    );
    // Independently: the tool names tshark's bodies carry. 2.1.303 defines 20; 2.1.304
    // defines 12, two of them new (ToolSearch, its placeholder): the other ten moved.
    let (ta, tb) = (tool_names(&a), tool_names(&b));
    assert_eq!((ta.len(), tb.len()), (20, 12));
    let moved: BTreeSet<String> = ta.difference(&tb).cloned().collect();
    assert_eq!(moved.len(), 10);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("diff.html");
    agentwire_ok(&[
        "report",
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    br.resize(1200, 1500);
    let url = br.open(&out);
    let title = br.eval("document.getElementById('title').textContent");
    assert_eq!(
        title.as_str().unwrap(),
        "claude-code 2.1.303 → 2.1.304 (base-url route (inferred from the Host header), settings not recorded)"
    );
    let row = br.eval(
        "Array.from(document.querySelectorAll('#figures tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent)).find(c => c[0] == 'tool definitions')",
    );
    assert_eq!(strings(&row)[..3], ["tool definitions", "20", "12"]);
    let named = br.eval(
        "Array.from(document.querySelectorAll('li[data-status=\"moved behind ToolSearch\"] code.tool')).map(c => c.textContent)",
    );
    let named: BTreeSet<String> = strings(&named).into_iter().collect();
    assert_eq!(named, moved);
    // The summary says it in words, and the chart drew a bar label per tool.
    let words = br.eval("document.querySelector('.words').textContent");
    assert!(words
        .as_str()
        .unwrap()
        .contains("sends 12 tool definitions where claude-code 2.1.303 sends 20"));
    let svg_labels = br.eval(
        "Array.from(document.querySelectorAll('.chart svg text')).map(t => t.textContent.trim())",
    );
    for t in &moved {
        assert!(strings(&svg_labels).contains(t), "{t} not in the chart");
    }
    // Issue 31 kind 15: the glossary showed Markdown's backticks literally
    // ("size of the `tools` array"); they are code in the page.
    let meanings =
        br.eval("Array.from(document.querySelectorAll('#glossary dd')).map(d => d.textContent)");
    let meanings = strings(&meanings);
    assert!(meanings
        .iter()
        .any(|m| m.contains("size of the tools array")));
    assert!(meanings.iter().all(|m| !m.contains('`')), "{meanings:?}");
    let code = br
        .eval("Array.from(document.querySelectorAll('#glossary dd code')).map(c => c.textContent)");
    assert!(strings(&code).contains(&"tools".to_string()), "{code:?}");
    let m = br.misdeeds(&url);
    assert!(m.none(), "{m:#?}");
    save_screenshot("report-diff", &br.screenshot());
}

/// Issue 31 kind 15: the job lanes and the poll episodes were drawn each on its own time
/// axis (scaled to its own bars), so "the polls came in the first seconds of a long job"
/// could not be seen. Both axes now run from the first request over the same span: the
/// same tick labels, and the session's last request (from tshark's frame times) inside.
fn job_lanes_and_poll_episodes_on_separate_time_axes(br: &mut Browser) {
    let bg = capture("cc2.1.304-bg-polling.pcap");
    let starts: Vec<_> = exchanges_from_pcap(&bg)
        .iter()
        .filter(|x| x.is_messages())
        .map(|x| x.started_at)
        .collect();
    let span = (starts[starts.len() - 1] - starts[0]).num_milliseconds() as f64 / 1e3;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("audit.html");
    agentwire_ok(&[
        "report",
        "analyze",
        bg.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    br.open(&out);
    let mut ticks = |id: &str| -> Vec<f64> {
        let t = br.eval(&format!(
            "Array.from(document.querySelectorAll('#{id} svg text')).map(t => t.textContent.trim())"
        ));
        strings(&t).iter().filter_map(|s| s.parse().ok()).collect()
    };
    let polls = ticks("chart-polls");
    let jobs = ticks("chart-jobs");
    assert!(polls.len() >= 3, "tick labels of the poll chart: {polls:?}");
    assert_eq!(polls, jobs, "one time axis");
    let top = polls.iter().copied().fold(0.0, f64::max);
    assert!(
        top >= span,
        "the axis ({top} s) covers the session ({span} s)"
    );
}

/// Must-show 1 (audit): 19 redundant polls, the 330 s TTL miss.
fn audit_report_shows_19_redundant_polls_and_the_330_s_ttl_miss(br: &mut Browser) {
    let (polls, ttl) = (
        capture("cc2.1.303-mcp-status-polling.pcap"),
        capture("cc2.1.304-cache-ttl-gap.pcap"),
    );
    // Independently: the gap between the second and third Messages requests of the TTL
    // capture, from tshark's frame times.
    let xs = exchanges_from_pcap(&ttl);
    let starts: Vec<_> = xs
        .iter()
        .filter(|x| x.is_messages())
        .map(|x| x.started_at)
        .collect();
    let gap = (starts[2] - starts[1]).num_microseconds().unwrap() as f64 / 1e6;
    assert!(gap > 300.0, "the scenario sleeps 330 s: {gap}");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("audit.html");
    agentwire_ok(&[
        "report",
        "analyze",
        "--usage",
        "simulated",
        polls.to_str().unwrap(),
        ttl.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    br.resize(1200, 1500);
    let url = br.open(&out);
    let figure = br.eval(
        "Array.from(document.querySelectorAll('#figures .figure')).map(f => [f.querySelector('.label').textContent, f.querySelector('.value').textContent])",
    );
    let figure: Vec<Vec<String>> = figure.as_array().unwrap().iter().map(strings).collect();
    // The scenario: 21 get_status polls, the first 20 answered `running`: 19 repeats.
    assert!(figure.contains(&vec!["polls".to_string(), "21".to_string()]));
    assert!(figure.contains(&vec!["redundant polls".to_string(), "19".to_string()]));
    let miss = br.eval(
        "Array.from(document.querySelectorAll('#requests tbody tr')).map(r => Array.from(r.cells).map(c => c.textContent)).filter(c => c[10] == 'ttl_expired')",
    );
    let miss: Vec<Vec<String>> = miss.as_array().unwrap().iter().map(strings).collect();
    assert_eq!(miss.len(), 1, "{miss:?}");
    assert_eq!(miss[0][9], "miss");
    assert_eq!(miss[0][11], format!("gap {gap:.1} s > 300 s"));
    let marked = br.eval(
        "Array.from(document.querySelectorAll('#chart-timeline svg text')).map(t => t.textContent.trim()).filter(t => t.startsWith('TTL gap'))",
    );
    assert_eq!(
        strings(&marked),
        [format!("TTL gap: gap {gap:.1} s > 300 s")]
    );
    let m = br.misdeeds(&url);
    assert!(m.none(), "{m:#?}");
    save_screenshot("report-audit", &br.screenshot());
}

/// The history report's table and step links.
fn history_report_tabulates_tool_counts_per_capture(br: &mut Browser) {
    // 2.1.303 defaults (20 tools), 2.1.303 with ENABLE_TOOL_SEARCH=true (12), 2.1.304
    // defaults (12), 2.1.304 with ENABLE_TOOL_SEARCH=false (20): counts from tshark.
    let caps: Vec<PathBuf> = [
        "cc2.1.303-hello.pcap",
        "cc2.1.303-hello-toolsearch-on.pcap",
        "cc2.1.304-hello.pcap",
        "cc2.1.304-hello-toolsearch-off.pcap",
    ]
    .iter()
    .map(|c| capture(c))
    .collect();
    let want: Vec<String> = caps
        .iter()
        .map(|c| tool_names(c).len().to_string())
        .collect();
    assert_eq!(want, ["20", "12", "12", "20"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("history.html");
    let mut args = vec!["history"];
    args.extend(caps.iter().map(|c| c.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    agentwire_ok(&args);
    br.resize(1200, 1100);
    let url = br.open(&out);
    let tools = br.eval(
        "Array.from(document.querySelectorAll('#history tbody tr')).map(r => r.cells[1].textContent)",
    );
    assert_eq!(strings(&tools), want);
    // Each step links to its pairwise diff, written next to the report.
    let links = br.eval(
        "Array.from(document.querySelectorAll('#changes a')).map(a => a.getAttribute('href'))",
    );
    let links = strings(&links);
    assert_eq!(links.len(), 3);
    for l in &links {
        assert!(dir.path().join(l).is_file(), "{l}");
    }
    let m = br.misdeeds(&url);
    assert!(m.none(), "{m:#?}");
    save_screenshot("report-history", &br.screenshot());
}

#[test]
fn html_reports_in_one_headless_chromium() {
    let mut br = Browser::launch(1200, 1500);
    diff_report_shows_20_to_12_tools_and_names_the_ten_deferred(&mut br);
    audit_report_shows_19_redundant_polls_and_the_330_s_ttl_miss(&mut br);
    job_lanes_and_poll_episodes_on_separate_time_axes(&mut br);
    history_report_tabulates_tool_counts_per_capture(&mut br);
    crate::report_injection::injected_markup_never_runs(&mut br);
    report_scale::ten_thousand_request_audit_stays_usable(&mut br);
}
