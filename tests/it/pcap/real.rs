//! Real Claude Code captures (`../shared/captures/claude-code/`): exchange counts from the
//! README table, every body byte-equal to tshark's HTTP object export, and every SSE reply
//! assembled into the content the scenario file scripted (read at test time).

use agentwire::api::{sse, BlockKind, MessagesRequest};
use serde_json::Value;

use super::{extract_file, our_objects, tshark_objects};
use crate::common::shared_capture;

/// (file, scenario, `/v1/messages` requests) from `claude-code/README.md`.
const CAPTURES: &[(&str, Option<&str>, usize)] = &[
    ("cc2.1.303-hello.pcap", None, 1),
    ("cc2.1.304-hello.pcap", None, 1),
    ("cc2.1.303-hello-toolsearch-on.pcap", None, 1),
    ("cc2.1.304-hello-toolsearch-off.pcap", None, 1),
    ("cc2.1.304-hello-anyiface.pcapng", None, 1),
    ("cc2.1.304-bg-polling.pcap", Some("bg-polling.json"), 6),
    (
        "cc2.1.304-bg-job-failed.pcap",
        Some("bg-job-failed.json"),
        7,
    ),
    (
        "cc2.1.303-mcp-status-polling.pcap",
        Some("mcp-status-polling.json"),
        23,
    ),
    (
        "cc2.1.304-cache-ttl-gap.pcap",
        Some("cache-ttl-gap.json"),
        4,
    ),
    (
        "cc2.1.304-toolsearch-load.pcap",
        Some("toolsearch-load.json"),
        3,
    ),
    ("cc2.1.304-subagent.pcap", Some("subagent.json"), 4),
];

#[test]
fn every_claude_code_capture_matches_readme_and_tshark() {
    let mut seen = 0;
    for (file, _, want) in CAPTURES {
        let path = shared_capture(&format!("claude-code/{file}"));
        let (xs, summary) = extract_file(&path);
        let messages: Vec<_> = xs.iter().filter(|x| x.is_messages()).collect();
        assert_eq!(messages.len(), *want, "{file}: /v1/messages exchanges");
        assert_eq!(summary.incomplete, 0, "{file}: {:?}", summary.errors);
        for x in &messages {
            assert!(x.error.is_none(), "{file} #{}: {:?}", x.id, x.error);
            let resp = x.response.as_ref().expect("every request was answered");
            assert_eq!(resp.status, 200);
            assert!(!x.request.body.truncated);
            // A Messages request body parses, and its size is the Content-Length sent.
            MessagesRequest::parse(&x.request.body.bytes).unwrap();
            let cl = x
                .request
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"));
            assert_eq!(
                cl.map(|c| c.1.parse::<usize>().unwrap()),
                Some(x.request.body.len()),
                "{file}"
            );
            // The fake key is redacted before anything leaves the extractor.
            for (k, v) in &x.request.headers {
                if k.eq_ignore_ascii_case("x-api-key") {
                    assert!(v.starts_with("[redacted sk-ant-api03 fp="), "{v}");
                }
            }
            assert!(x.ended_at.unwrap() >= x.started_at);
            let (a, b) = x.source.frames.unwrap();
            assert!(a >= 1 && b >= a);
        }
        // Byte for byte: the multiset of request and response bodies equals tshark's export.
        assert_eq!(
            our_objects(&xs),
            tshark_objects(&path),
            "{file}: bodies differ from tshark"
        );
        seen += 1;
    }
    let on_disk = std::fs::read_dir(shared_capture("claude-code"))
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name().into_string().unwrap();
            n.ends_with(".pcap") || n.ends_with(".pcapng")
        })
        .count();
    assert_eq!(
        seen, on_disk,
        "a capture in claude-code/ is not covered by this test"
    );
}

/// One reply block in comparable form: ("text", text) or ("tool_use", id, name, input).
fn block_key(kind: &BlockKind) -> Option<Value> {
    match kind {
        BlockKind::Text { text } => Some(serde_json::json!(["text", text])),
        BlockKind::ToolUse { id, name, input } => {
            Some(serde_json::json!(["tool_use", id, name, input]))
        }
        _ => None,
    }
}

#[test]
fn sse_replies_assemble_into_the_scripted_content() {
    for (file, scenario, _) in CAPTURES {
        let Some(scenario) = scenario else { continue };
        let script: Vec<Vec<Value>> = serde_json::from_slice(
            &std::fs::read(shared_capture(&format!("claude-code/scenarios/{scenario}"))).unwrap(),
        )
        .unwrap();
        let (xs, _) = extract_file(&shared_capture(&format!("claude-code/{file}")));
        // The server answered requests that carry tools with the next scripted reply, in
        // arrival order, then `ok`; requests without tools got `ok`.
        let mut turn = 0;
        for x in xs.iter().filter(|x| x.is_messages()) {
            let req = MessagesRequest::parse(&x.request.body.bytes).unwrap();
            let resp = x.response.as_ref().unwrap();
            let ct = resp
                .headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"));
            assert!(ct.unwrap().1.starts_with("text/event-stream"), "{file}");
            let msg = sse::assemble(&resp.body.bytes);
            assert!(msg.complete, "{file} #{}: stream did not complete", x.id);
            let got: Vec<Value> = msg
                .content
                .iter()
                .filter_map(|b| block_key(&b.kind))
                .collect();
            let want: Vec<Value> = if !req.tools.is_empty() && turn < script.len() {
                turn += 1;
                script[turn - 1]
                    .iter()
                    .map(|b| match b["type"].as_str().unwrap() {
                        "text" => serde_json::json!(["text", b["text"]]),
                        _ => serde_json::json!(["tool_use", b["id"], b["name"], b["input"]]),
                    })
                    .collect()
            } else {
                vec![serde_json::json!(["text", "ok"])]
            };
            assert_eq!(got, want, "{file} #{}", x.id);
            let tool_call = want.iter().any(|w| w[0] == "tool_use");
            let stop = if tool_call { "tool_use" } else { "end_turn" };
            assert_eq!(msg.stop_reason.as_deref(), Some(stop), "{file} #{}", x.id);
        }
        assert_eq!(turn, script.len(), "{file}: every scripted reply was sent");
    }
}

#[test]
fn pcap_command_writes_a_trace_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let path = shared_capture("claude-code/cc2.1.304-subagent.pcap");
    let run = std::process::Command::new(crate::common::bin())
        .args([
            "pcap",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let summary: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["exchanges"], 4);
    assert_eq!(summary["messages_exchanges"], 4);
    assert_eq!(summary["incomplete"], 0);
    assert_eq!(summary["connections"], 1);
    let t = agentwire::input::open_trace(&out).unwrap();
    assert_eq!(t.exchanges.len(), 4);
    assert!(t.problems.is_empty());
    assert_eq!(
        t.exchanges.iter().map(|x| x.id).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert!(t.exchanges.iter().all(|x| x.request.body.verify()));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("sk-ant-api03-REDACTED"),
        "the API key must be redacted"
    );
    // --port that matches nothing: no exchange, every segment filtered out.
    let run = std::process::Command::new(crate::common::bin())
        .args([
            "pcap",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--port",
            "1",
            "--force",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let summary: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["exchanges"], 0);
    assert_eq!(summary["filtered_out"], summary["packets"]);
}
