//! The shareable Markdown and JSON reports: snapshots on hand-made inputs (no capture
//! text), and checks on the real captures' reports through a CommonMark renderer
//! (`pulldown-cmark`): no line cut short with "…", every label explained in the glossary,
//! and no raw HTML from recorded text.

use std::collections::BTreeSet;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use agentwire::input::open_trace;
use agentwire::report::meta::InputMeta;
use agentwire::report::{audit_page, diff_page, DocFormat};

use crate::common::{agentwire_ok, shared_capture};

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z",
        "[timestamp]",
    );
    s.add_filter(r"agentwire \d+\.\d+\.\d+", "agentwire [version]");
    s.add_filter(
        r#""agentwire_version": "[^"]*""#,
        r#""agentwire_version": "[version]""#,
    );
    s
}

fn diff_doc(format: DocFormat) -> String {
    let r = crate::diff_snapshots::report();
    let a = crate::diff_snapshots::resolved("a.jsonl", "{}", "", "");
    let metas = |input: &str, version: &str| {
        let mut m = InputMeta::of(input, &a.trace);
        m.client = Some("test-cli".into());
        m.version = Some(version.into());
        m.route = Some("base-url".into());
        m.settings = vec!["ENABLE_TOOL_SEARCH=true".into()];
        m.settings_recorded = true;
        m
    };
    diff_page::render(
        &r,
        metas("a.jsonl", "1.0.0"),
        metas("b.jsonl", "1.1.0"),
        format,
        &diff_page::Options::default(),
    )
}

fn audit_doc(format: DocFormat) -> String {
    let a = crate::analyze_report::analysis();
    let t = crate::diff_snapshots::resolved("session.jsonl", "{}", "", "");
    audit_page::render(
        &a,
        vec![InputMeta::of("session.jsonl", &t.trace)],
        format,
        &audit_page::Options::default(),
    )
}

#[test]
fn shared_diff_markdown_snapshot() {
    let md = diff_doc(DocFormat::Markdown);
    check_markdown(&md);
    settings().bind(|| insta::assert_snapshot!("share_diff_markdown", md));
}

#[test]
fn shared_diff_json_snapshot() {
    let json = diff_doc(DocFormat::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["report"], "diff");
    assert_eq!(
        v["meta"]["title"],
        "test-cli 1.0.0 → 1.1.0 (base-url route, ENABLE_TOOL_SEARCH=true)"
    );
    settings().bind(|| insta::assert_snapshot!("share_diff_json", json));
}

#[test]
fn shared_audit_markdown_snapshot() {
    let md = audit_doc(DocFormat::Markdown);
    check_markdown(&md);
    settings().bind(|| insta::assert_snapshot!("share_audit_markdown", md));
}

#[test]
fn shared_audit_json_snapshot() {
    let json = audit_doc(DocFormat::Json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["report"], "audit");
    assert_eq!(v["analysis"]["summary"]["redundant_polls"], 1);
    settings().bind(|| insta::assert_snapshot!("share_audit_json", json));
}

/// The Markdown report of the real 2.1.303 → 2.1.304 captures: the 35 lines the old
/// report cut short are whole, every label is explained, per-block diffs use `-`/`+`.
#[test]
fn markdown_of_real_captures_has_whole_lines_and_explained_labels() {
    let dir = tempfile::tempdir().unwrap();
    let cap = |n: &str| {
        shared_capture(&format!("claude-code/{n}"))
            .display()
            .to_string()
    };
    let run = |args: &[&str]| String::from_utf8(agentwire_ok(args).stdout).unwrap();
    let md = run(&[
        "report",
        "diff",
        &cap("cc2.1.303-hello.pcap"),
        &cap("cc2.1.304-hello.pcap"),
    ]);
    check_markdown(&md);
    assert!(md.starts_with("# claude-code 2.1.303 → 2.1.304 (base-url route"));
    assert!(md.contains("### System block 0: changed"));
    assert!(!md.contains("[-") && !md.contains("{+"));
    // A small change in words: 2.1.304's system prompt with ToolSearch off is 15 bytes
    // longer (6,009 → 6,024): 0.25%, said as 0.2%, never "grew 0%".
    let small = run(&[
        "report",
        "diff",
        &cap("cc2.1.304-hello.pcap"),
        &cap("cc2.1.304-hello-toolsearch-off.pcap"),
    ]);
    assert!(
        small.contains("The system prompt grew 0.2% (6,009 → 6,024 bytes)"),
        "{small}"
    );
    // `--max-line` shortens on request, and the check sees it: it can fail.
    let short = run(&[
        "report",
        "diff",
        "--max-line",
        "60",
        &cap("cc2.1.303-hello.pcap"),
        &cap("cc2.1.304-hello.pcap"),
    ]);
    let cut = markdown_problems(&short);
    assert!(
        cut.iter().any(|p| p.starts_with("line cut short: ")),
        "lines cut at 60 characters went unnoticed: {cut:?}"
    );
    let audit = dir.path().join("audit.md");
    run(&[
        "report",
        "analyze",
        "--usage",
        "simulated",
        &cap("cc2.1.303-mcp-status-polling.pcap"),
        &cap("cc2.1.304-cache-ttl-gap.pcap"),
        "-o",
        audit.to_str().unwrap(),
    ]);
    check_markdown(&std::fs::read_to_string(&audit).unwrap());
    // The history report and the pairwise diffs it links to.
    let history = dir.path().join("history.md");
    run(&[
        "history",
        &cap("cc2.1.303-hello.pcap"),
        &cap("cc2.1.304-hello.pcap"),
        "-o",
        history.to_str().unwrap(),
    ]);
    check_markdown(&std::fs::read_to_string(&history).unwrap());
    let diffs: Vec<_> = std::fs::read_dir(dir.path().join("history-diffs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    check_markdown(&std::fs::read_to_string(&diffs[0]).unwrap());
    // Recorded markup stays text in Markdown too.
    let (a, b) = crate::report_injection::hostile_pair(dir.path());
    check_markdown(&run(&["report", "diff", &a, &b]));
    check_markdown(&run(&["report", "analyze", &a, &b]));
}

fn s(p: &std::path::Path) -> String {
    p.display().to_string()
}

/// [`markdown_problems`] finds none.
fn check_markdown(md: &str) {
    let problems = markdown_problems(md);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Parse `md` as CommonMark (GFM tables) and list what a reader would trip on: raw HTML,
/// a line of a paragraph, list item, heading, table cell or code block ending in "…", a
/// table header or figure name the glossary does not explain, no glossary at all.
fn markdown_problems(md: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    let mut labels: BTreeSet<String> = BTreeSet::new();
    let mut glossary: BTreeSet<String> = BTreeSet::new();
    let (mut in_head, mut cell, mut col, mut heading, mut in_strong, mut item_start) =
        (false, String::new(), 0usize, String::new(), false, false);
    let mut header_first = String::new();
    let mut in_heading = false;
    let mut block = String::new();
    let mut strong = String::new();
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => {
                problems.push(format!("raw HTML in the report: {h}"))
            }
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                heading.clear();
            }
            Event::Start(Tag::TableHead) => {
                in_head = true;
                col = 0;
            }
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) => col = 0,
            Event::Start(Tag::TableCell) => cell.clear(),
            Event::End(TagEnd::TableCell) => {
                if block.trim_end().ends_with('…') {
                    problems.push(format!("cell cut short: {block}"));
                }
                block.clear();
                if in_head {
                    labels.insert(cell.clone());
                    if col == 0 {
                        header_first = cell.clone();
                    }
                } else if col == 0 && header_first == "figure" {
                    labels.insert(cell.clone());
                }
                col += 1;
            }
            Event::Start(Tag::Item) => item_start = true,
            Event::Start(Tag::Strong) => {
                in_strong = true;
                strong.clear();
            }
            Event::End(TagEnd::Strong) => {
                in_strong = false;
                if item_start && heading == "Glossary" {
                    glossary.insert(strong.clone());
                }
                item_start = false;
            }
            Event::Text(t) | Event::Code(t) => {
                if in_heading {
                    heading.push_str(&t);
                }
                cell.push_str(&t);
                block.push_str(&t);
                if in_strong {
                    strong.push_str(&t);
                } else {
                    item_start = false;
                }
            }
            Event::SoftBreak | Event::HardBreak => block.push('\n'),
            Event::End(
                e @ (TagEnd::Paragraph | TagEnd::CodeBlock | TagEnd::Item | TagEnd::Heading(_)),
            ) => {
                if matches!(e, TagEnd::Heading(_)) {
                    in_heading = false;
                }
                for line in block.lines() {
                    if line.trim_end().ends_with('…') {
                        problems.push(format!("line cut short: {line}"));
                    }
                }
                block.clear();
            }
            _ => {}
        }
    }
    if glossary.is_empty() {
        problems.push("no glossary".into());
    }
    let missing: Vec<&String> = labels.iter().filter(|l| !glossary.contains(*l)).collect();
    if !missing.is_empty() {
        problems.push(format!("labels without a glossary entry: {missing:?}"));
    }
    problems
}

/// A model the price table lacks is shown as unpriced everywhere a cost appears — never
/// as $0 — and the summary says which model and how many requests.
#[test]
fn unpriced_models_show_as_unpriced_not_as_zero() {
    use agentwire::analyze::{analyze_exchanges, AnalyzeConfig, PriceTable, UsageMode};
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("p.json");
    // The table prices one model, not the one the sample's requests use.
    std::fs::write(&prices, r#"{"source":"test","date":"2026-01-01","models":[{"model":"other","ids":["claude-other-1"],"input":1.0,"output":1.0,"write_5m":1.0,"write_1h":1.0,"read":1.0,"min_cacheable":1024}]}"#).unwrap();
    let sample = crate::analyze_report::sample();
    let models: BTreeSet<String> = sample
        .iter()
        .filter(|x| x.is_messages())
        .filter_map(|x| {
            let v: serde_json::Value = serde_json::from_slice(&x.request.body.bytes).ok()?;
            Some(v["model"].as_str()?.to_string())
        })
        .collect();
    let requests = sample.iter().filter(|x| x.is_messages()).count();
    assert_eq!(models.len(), 1);
    let model = models.first().unwrap();
    let a = analyze_exchanges(
        &sample,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            prices: PriceTable::from_file(&prices).unwrap(),
            ..AnalyzeConfig::default()
        },
    );
    let t = crate::diff_snapshots::resolved("session.jsonl", "{}", "", "");
    let md = audit_page::render(
        &a,
        vec![InputMeta::of("session.jsonl", &t.trace)],
        DocFormat::Markdown,
        &audit_page::Options::default(),
    );
    check_markdown(&md);
    assert!(
        md.contains(&format!(
            "Unpriced: {requests} requests of model {} (not in the price table)",
            model.replace('_', "\\_")
        )),
        "{md}"
    );
    assert!(md.contains("| total cost | $0.0000 + unpriced |"), "{md}");
    // Every request row's last cell (cost) says unpriced.
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "## Requests")
        .skip(4) // heading, blank line, header, separator
        .take_while(|l| l.starts_with("| "))
        .collect();
    assert_eq!(rows.len(), requests, "{md}");
    assert!(
        rows.iter().all(|r| r.ends_with("| unpriced | ")),
        "{rows:#?}"
    );
    assert!(md.contains("- **unpriced**:"));
    // Reported by a new user: `analyze`'s own summary said "total cost $0.0000" for the
    // same analysis.
    use agentwire::report::{analyze::render, Format};
    for format in [Format::Table, Format::Markdown] {
        let out = render(&a, format);
        assert!(out.contains("$0.0000 + unpriced"), "{out}");
    }
}

/// `report diff --all`: the summary covers every compared pair, not only the first. Two
/// hand-made two-turn conversations agree on turn 0; in turn 1 B also sends a `Monitor`
/// tool. The summary counts both pairs and names the change at turn 1.
#[test]
fn all_mode_summary_covers_every_comparison() {
    use crate::hand_trace::{text, tool, Conv, TraceBuilder};
    use agentwire::trace::{Context, TraceWriter};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, extra_tool_in_turn_1: bool| {
        let mut conv = Conv::new("claude-sonnet-4-5");
        conv.tools = vec![tool("Bash", 200)];
        conv.system = vec![text(100, 's')];
        conv.user(vec![text(40, 'u')]);
        let mut t = TraceBuilder::default();
        t.send_text(&conv, 0.0);
        conv.assistant(vec![text(30, 'a')])
            .user(vec![text(40, 'v')]);
        if extra_tool_in_turn_1 {
            conv.tools.push(tool("Monitor", 120));
        }
        t.send_text(&conv, 10.0);
        let p = dir.path().join(name);
        let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
        for x in &t.exchanges {
            w.write_exchange(x).unwrap();
        }
        p
    };
    let (a, b) = (write("a.jsonl", false), write("b.jsonl", true));
    let out = dir.path().join("r.json");
    let (a, b, out_s) = (s(&a), s(&b), s(&out));
    agentwire_ok(&["report", "diff", "--all", &a, &b, "-o", &out_s]);
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let summary: Vec<&str> = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        summary[0],
        "2 request pairs compared, aligned by session, thread and turn: 1 identical after normalization (conversation messages aside), 1 differ."
    );
    assert_eq!(summary.len(), 2, "{summary:#?}");
    assert!(
        summary[1].starts_with("At s1/main turn 1: "),
        "{}",
        summary[1]
    );
    assert!(
        summary[1].contains("1 tool added: Monitor."),
        "{}",
        summary[1]
    );
    // The Markdown carries the same sentences.
    let md = String::from_utf8(agentwire_ok(&["report", "diff", "--all", &a, &b]).stdout).unwrap();
    check_markdown(&md);
    assert!(md.contains("At s1/main turn 1: "), "{md}");
}

/// Recorded terminal escapes, a bell and a bidi override in a prompt and a tool
/// description never reach standard output raw, in any report format (they show as
/// visible escapes), whether or not a terminal is attached.
#[test]
fn recorded_control_characters_never_reach_stdout_raw() {
    use crate::hand_trace::{text, Conv, TraceBuilder};
    use agentwire::trace::{Context, TraceWriter};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &str| {
        let mut conv = Conv::new("claude-sonnet-4-5");
        conv.tools = vec![
            serde_json::json!({"name": "Bash", "description": format!("run\u{7} it{extra}"), "input_schema": {}}),
        ];
        conv.system = vec![
            serde_json::json!({"type": "text", "text": format!("clear\u{1b}[2J now\u{202e}desrever {extra}")}),
        ];
        conv.user(vec![text(40, 'u')]);
        let mut t = TraceBuilder::default();
        t.send_text(&conv, 0.0);
        let p = dir.path().join(name);
        let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
        w.write_exchange(&t.exchanges[0]).unwrap();
        p.display().to_string()
    };
    let (a, b) = (write("a.jsonl", "1"), write("b.jsonl", "2"));
    let runs: Vec<Vec<&str>> = vec![
        vec!["report", "diff", &a, &b],
        vec!["report", "diff", &a, &b, "--format", "json"],
        vec!["report", "diff", &a, &b, "--format", "html"],
        vec!["report", "analyze", &a, &b],
        vec!["report", "analyze", &a, &b, "--format", "html"],
        vec!["prompt", &a],
        vec!["prompt", &a, "--format", "json"],
    ];
    for args in runs {
        let out = String::from_utf8(agentwire_ok(&args).stdout).unwrap();
        for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!out.contains(bad), "{args:?} printed {bad:?} raw");
        }
        if args.iter().any(|a| *a == "prompt" || *a == "diff") {
            assert!(
                out.contains("\\u{1b}[2J") || out.contains("\\u001b[2J"),
                "{args:?}: the escape is not shown"
            );
        }
    }
}

/// `report analyze` streams its inputs (it never holds a whole trace) and describes each
/// from the records going past: the same description as from the whole trace in memory,
/// for a recorded trace with a header (the demo's kind) and for pcap files (no header:
/// version and route from the first request).
#[test]
fn streamed_input_description_matches_the_whole_trace() {
    use agentwire::input::open_input;
    use agentwire::report::meta::MetaCollector;
    let dir = tempfile::tempdir().unwrap();
    let (recorded, _) = crate::report_injection::hostile_pair(dir.path());
    let inputs = [
        std::path::PathBuf::from(recorded),
        shared_capture("claude-code/cc2.1.304-cache-ttl-gap.pcap"),
        shared_capture("claude-code/cc2.1.303-hello-toolsearch-on.pcap"),
    ];
    for p in &inputs {
        let name = p.display().to_string();
        let mut c = MetaCollector::default();
        for r in open_input(p, &Default::default()).unwrap() {
            c.record(&r.unwrap());
        }
        let streamed = serde_json::to_value(c.finish(&name)).unwrap();
        let whole = serde_json::to_value(InputMeta::of(&name, &open_trace(p).unwrap())).unwrap();
        assert_eq!(streamed, whole, "{name}");
        assert!(whole["exchanges"].as_u64().unwrap() > 0, "{whole}");
        assert!(whole["version"].is_string(), "{whole}");
    }
}
