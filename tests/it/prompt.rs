//! `agentwire prompt`: the system blocks and tool definitions of one request, whole,
//! checked against the request body tshark extracts from the same capture (parsed here
//! with serde_json, not agentwire's API model).

use serde_json::Value;

use crate::common::{agentwire_ok, shared_capture};
use crate::common_tshark::exchanges_from_pcap;

#[test]
fn prompt_export_holds_every_system_block_and_tool_definition_whole() {
    let pcap = shared_capture("claude-code/cc2.1.304-hello.pcap");
    let xs = exchanges_from_pcap(&pcap);
    let x = xs.iter().find(|x| x.is_messages()).unwrap();
    let body: Value = serde_json::from_slice(&x.request.body.bytes).unwrap();

    let out = agentwire_ok(&["prompt", pcap.to_str().unwrap(), "--format", "json"]);
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sys = body["system"].as_array().unwrap();
    let got = p["system"].as_array().unwrap();
    assert_eq!(got.len(), sys.len());
    for (g, s) in got.iter().zip(sys) {
        assert_eq!(g["text"], s["text"]);
        assert_eq!(
            g["cache_control"].is_null(),
            s.get("cache_control").is_none()
        );
    }
    let tools = body["tools"].as_array().unwrap();
    let got = p["tools"].as_array().unwrap();
    assert_eq!(got.len(), 12);
    for (g, t) in got.iter().zip(tools) {
        assert_eq!(g["name"], t["name"]);
        assert_eq!(g["description"], t["description"]);
        let schema: Value = serde_json::from_str(g["input_schema"].as_str().unwrap()).unwrap();
        assert_eq!(schema, t["input_schema"]);
        assert_eq!(
            g["defer_loading"],
            t.get("defer_loading")
                .cloned()
                .unwrap_or(Value::Bool(false))
        );
    }
    assert_eq!(p["announced"].as_array().unwrap().len(), 10);

    // Markdown: one section per block and per tool, every description whole.
    // Roles in the api layer's words: 2.1.304 sends its tools without defer_loading
    // except the `DeferredToolPlaceholder`, which stands for no tool.
    for (g, t) in got.iter().zip(tools) {
        let want = match (t.get("defer_loading"), t["name"].as_str().unwrap()) {
            (Some(Value::Bool(true)), "DeferredToolPlaceholder") => "placeholder",
            (Some(Value::Bool(true)), _) => "deferred definition",
            _ => "loaded",
        };
        assert_eq!(g["role"], want, "{}", t["name"]);
    }
    assert!(got.iter().any(|g| g["role"] == "placeholder"));

    let md = String::from_utf8(agentwire_ok(&["prompt", pcap.to_str().unwrap()]).stdout).unwrap();
    let injected = p["injected"].as_array().unwrap().len();
    assert_eq!(
        md.matches("\n### ").count(),
        sys.len() + tools.len() + injected
    );
    for t in tools {
        assert!(md.contains(t["description"].as_str().unwrap()));
    }
}

/// Reported by an adversarial tester: a schema serde_json cannot read into a value (a
/// number such as `1e400`) was shown as `null`, hiding the definition.
#[test]
fn a_schema_serde_cannot_read_is_shown_as_sent_not_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let schema = r#"{"type":"object","properties":{"n":{"type":"number","maximum":1e400}}}"#;
    let body = format!(
        r#"{{"model":"m","max_tokens":1,"tools":[{{"name":"Big","description":"d","input_schema":{schema}}}],"messages":[{{"role":"user","content":"hi"}}]}}"#
    );
    let path = dir.path().join("body.json");
    std::fs::write(&path, body).unwrap();
    let out = agentwire_ok(&["prompt", path.to_str().unwrap(), "--format", "json"]);
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(p["tools"][0]["input_schema"], schema);
}

/// Issue 31 item 13: `prompt` takes a CLI spec (recorded on the fly, as `report diff` does)
/// and `-o` like `report`, and lists the context Claude Code injects into the messages
/// (`<system-reminder>` blocks), marked as such: as many as the recorded body holds,
/// counted here with serde_json.
#[test]
fn prompt_of_a_cli_spec_to_a_file_lists_the_injected_context() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("prompt.json");
    let o = std::process::Command::new(crate::common::bin())
        .args(["prompt", "claude-code@2.1.304", "--route", "base-url", "-o"])
        .arg(&out)
        .arg("--record-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let t = agentwire::input::open_trace(&dir.path().join("claude-code-2.1.304.jsonl")).unwrap();
    let x = t.exchanges.iter().find(|x| x.is_messages()).unwrap();
    let body: Value = serde_json::from_slice(&x.request.body.bytes).unwrap();
    // A `system`-role message (Claude Code sends one) or a text block opening with
    // `<system-reminder>`, in order.
    let mut reminders: Vec<&str> = Vec::new();
    for m in body["messages"].as_array().unwrap() {
        let blocks = match &m["content"] {
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            v => v.as_array().cloned().unwrap_or_default(),
        };
        for b in blocks.iter().filter(|b| b["type"] == "text") {
            let t = b["text"].as_str().unwrap_or("");
            if m["role"] == "system" {
                reminders.push("system_message");
            } else if t.trim_start().starts_with("<system-reminder>") {
                reminders.push("system_reminder");
            }
        }
    }
    let got: Vec<&str> = p["injected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(got, reminders);
    assert!(
        got.contains(&"system_message"),
        "Claude Code 2.1.304 sends a system-role context message"
    );
    // Markdown to a file names the section.
    let md = dir.path().join("prompt.md");
    agentwire_ok(&[
        "prompt",
        &format!(
            "{}#{}",
            dir.path().join("claude-code-2.1.304.jsonl").display(),
            x.id
        ),
        "-o",
        md.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Injected context"), "{text}");
}
