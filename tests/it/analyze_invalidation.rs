//! One test per row of Anthropic's cache-invalidation table (docs/analyze.md,
//! "Invalidation rules"; `agentwire::api::cache::INVALIDATION_RULES`). Every test sends
//! the same two-turn conversation with one setting changed on the second turn, and reads
//! off which level stayed cached.
//!
//! The prefix has a breakpoint per level, sizes chosen for round figures (4 bytes per
//! estimated token; claude-sonnet-4-5, minimum 1024 tokens): tool T1 1250 tokens, system
//! S1 1000, user U1 1000. So the second request reads 3250 tokens when nothing was
//! invalidated (the whole previous prefix), 2250 when the messages level was, 1250 when
//! the system level was, and 0 when the tools level was.

use serde_json::{json, Value};

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig, MissCause, RequestRow, UsageMode};

use crate::hand_trace::{cc, text, tool, Conv, TraceBuilder};

const M: &str = "claude-sonnet-4-5";
/// Reads when each level stayed valid.
const ALL: u64 = 3250;
const TOOLS_AND_SYSTEM: u64 = 2250;
const TOOLS: u64 = 1250;

fn base(model: &str) -> Conv {
    let mut c = Conv::new(model);
    c.tools = vec![cc(tool("T1", 5000), None)];
    c.system = vec![cc(text(4000, 's'), None)];
    c.user(vec![text(4000, 'u')]);
    c
}

fn grow(c: &mut Conv) {
    c.assistant(vec![text(400, 'a')]);
    c.user(vec![text(400, 'v')]);
}

fn rows(b: &TraceBuilder) -> Vec<RequestRow> {
    analyze_exchanges(
        &b.exchanges,
        AnalyzeConfig {
            usage: UsageMode::Simulated,
            ..AnalyzeConfig::default()
        },
    )
    .requests
}

/// Send `base`, then the grown conversation with `change` applied; the second row.
fn second(model: &str, change: impl FnOnce(&mut Conv, &mut TraceBuilder)) -> RequestRow {
    second_from(base(model), change)
}

fn second_from(mut c: Conv, change: impl FnOnce(&mut Conv, &mut TraceBuilder)) -> RequestRow {
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    grow(&mut c);
    change(&mut c, &mut b);
    b.send_text(&c, 10.0);
    rows(&b).remove(1)
}

fn params(r: &RequestRow) -> Vec<String> {
    match &r.cause {
        Some(MissCause::ParamsChanged { params }) => params.clone(),
        other => panic!("expected params_changed, got {other:?}"),
    }
}

#[test]
fn nothing_changed_reads_every_level() {
    let r = second(M, |_, _| {});
    assert_eq!((r.tokens.read, r.cause.clone()), (ALL, None));
}

#[test]
fn rule_model_changing_the_model_invalidates_everything() {
    let r = second(M, |c, _| c.model = "claude-sonnet-4-6".into());
    assert_eq!(r.tokens.read, 0);
    assert!(matches!(r.cause, Some(MissCause::ModelChanged { .. })));
}

#[test]
fn rule_tool_definitions_modifying_a_tool_invalidates_everything() {
    let r = second(M, |c, _| c.tools = vec![cc(tool("T1", 5004), None)]);
    assert_eq!(r.tokens.read, 0);
    assert_eq!(
        r.cause,
        Some(MissCause::ToolsChanged {
            added: vec![],
            removed: vec![],
            changed: vec!["T1".into()]
        })
    );
}

#[test]
fn rule_deferred_tools_adding_a_defer_loading_tool_invalidates_nothing() {
    let r = second(M, |c, _| {
        let mut t = tool("Cron", 2000);
        t["defer_loading"] = json!(true);
        c.tools.push(t);
    });
    assert_eq!((r.tokens.read, r.cause.clone()), (ALL, None));
}

#[test]
fn rule_web_search_toggling_it_invalidates_system_and_messages() {
    let r = second(M, |c, _| {
        c.tools
            .push(json!({"type": "web_search_20250305", "name": "web_search"}))
    });
    assert_eq!(r.tokens.read, TOOLS);
    assert_eq!(params(&r), ["web_search"]);
}

#[test]
fn rule_web_fetch_toggling_it_invalidates_system_and_messages() {
    let r = second(M, |c, _| {
        c.tools
            .push(json!({"type": "web_fetch_20250910", "name": "web_fetch"}))
    });
    assert_eq!(r.tokens.read, TOOLS);
    assert_eq!(params(&r), ["web_fetch"]);
}

#[test]
fn rule_citations_toggling_them_invalidates_system_and_messages() {
    let r = second(M, |c, _| {
        let doc = json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a fact"},
            "citations": {"enabled": true}});
        let last = c.messages.last_mut().unwrap();
        last["content"].as_array_mut().unwrap().insert(0, doc);
    });
    assert_eq!(r.tokens.read, TOOLS);
    assert_eq!(params(&r), ["citations"]);
}

#[test]
fn rule_speed_fast_mode_invalidates_system_and_messages_only_with_its_beta() {
    let r = second(M, |c, b| {
        c.extra.insert("speed".into(), json!("fast"));
        b.headers = vec![("anthropic-beta".into(), "fast-mode-2026-02-01".into())];
    });
    assert_eq!(r.tokens.read, TOOLS);
    assert_eq!(params(&r), ["speed"]);
    // Without the beta header the API ignores `speed`: nothing changes.
    let r = second(M, |c, _| {
        c.extra.insert("speed".into(), json!("fast"));
    });
    assert_eq!((r.tokens.read, r.cause.clone()), (ALL, None));
}

#[test]
fn rule_tool_choice_changing_it_invalidates_messages() {
    let r = second(M, |c, _| {
        c.extra.insert("tool_choice".into(), json!({"type": "any"}));
    });
    assert_eq!(r.tokens.read, TOOLS_AND_SYSTEM);
    assert_eq!(params(&r), ["tool_choice"]);
}

#[test]
fn rule_disable_parallel_tool_use_changing_it_invalidates_messages() {
    let mut c = base(M);
    c.extra
        .insert("tool_choice".into(), json!({"type": "auto"}));
    let r = second_from(c, |c, _| {
        c.extra.insert(
            "tool_choice".into(),
            json!({"type": "auto", "disable_parallel_tool_use": true}),
        );
    });
    assert_eq!(r.tokens.read, TOOLS_AND_SYSTEM);
    assert_eq!(params(&r), ["disable_parallel_tool_use"]);
}

fn image() -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
}

#[test]
fn rule_images_toggling_their_presence_invalidates_messages_even_at_the_end() {
    let mut c = base(M);
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    // The first image arrives in the newest message, after everything cached.
    c.assistant(vec![text(400, 'a')]);
    c.user(vec![image(), text(400, 'v')]);
    b.send_text(&c, 10.0);
    // A second image: images were already present, nothing is invalidated.
    c.assistant(vec![text(400, 'b')]);
    c.user(vec![image(), text(400, 'w')]);
    b.send_text(&c, 20.0);
    let r = rows(&b);
    assert_eq!(r[1].tokens.read, TOOLS_AND_SYSTEM);
    assert_eq!(params(&r[1]), ["images"]);
    assert_eq!((r[2].status.as_str(), r[2].cause.clone()), ("hit", None));
    assert!(r[2].tokens.read > ALL);
}

#[test]
fn rule_thinking_changing_its_budget_invalidates_messages() {
    let mut c = base(M);
    c.extra.insert(
        "thinking".into(),
        json!({"type": "enabled", "budget_tokens": 2000}),
    );
    let r = second_from(c, |c, _| {
        c.extra.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": 4000}),
        );
    });
    assert_eq!(r.tokens.read, TOOLS_AND_SYSTEM);
    assert_eq!(params(&r), ["thinking"]);
}

#[test]
fn rule_effort_changing_it_invalidates_messages_and_the_default_equals_absent() {
    let r = second(M, |c, _| {
        c.extra
            .insert("output_config".into(), json!({"effort": "low"}));
    });
    assert_eq!(r.tokens.read, TOOLS_AND_SYSTEM);
    assert_eq!(params(&r), ["effort"]);
    // `high` is the model's default: sending it explicitly changes nothing.
    let r = second(M, |c, _| {
        c.extra
            .insert("output_config".into(), json!({"effort": "high"}));
    });
    assert_eq!((r.tokens.read, r.cause.clone()), (ALL, None));
}

/// Turn 1 answers with thinking and a tool call; turn 2 carries only the tool result
/// (thinking kept); turn 3 adds a user question.
fn thinking_session(model: &str) -> Vec<RequestRow> {
    let mut c = base(model);
    c.extra.insert(
        "thinking".into(),
        json!({"type": "enabled", "budget_tokens": 2000}),
    );
    let mut b = TraceBuilder::default();
    b.send_text(&c, 0.0);
    c.assistant(vec![
        json!({"type": "thinking", "thinking": "t".repeat(2000), "signature": "sig"}),
        json!({"type": "tool_use", "id": "toolu_1", "name": "T1", "input": {}}),
    ]);
    c.user(vec![
        json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "r".repeat(400)}),
    ]);
    b.send_text(&c, 10.0);
    c.assistant(vec![text(400, 'a')]);
    c.user(vec![text(400, 'q')]);
    b.send_text(&c, 20.0);
    rows(&b)
}

#[test]
fn rule_thinking_stripped_new_user_content_drops_earlier_thinking_on_older_models() {
    let r = thinking_session(M);
    assert_eq!((r[1].status.as_str(), r[1].cause.clone()), ("hit", None));
    // claude-sonnet-4-5 strips the thinking block (message 1) once the user writes again:
    // everything from it on is gone from the prefix.
    assert_eq!(r[2].cause, Some(MissCause::ThinkingStripped { message: 1 }));
    assert_eq!(r[2].tokens.read, ALL);
    // Sonnet 4.6 keeps earlier thinking blocks: the same session is a plain hit.
    let r = thinking_session("claude-sonnet-4-6");
    assert_eq!((r[2].status.as_str(), r[2].cause.clone()), ("hit", None));
}

/// Reported by a user: betas sent as repeated header lines or with other spacing were
/// reported as `params_changed(anthropic-beta)`; they are one set, and no beta is a row
/// of the invalidation table.
#[test]
fn betas_sent_as_repeated_lines_or_respaced_are_one_set_not_a_params_change() {
    let mut c = base(M);
    let mut b = TraceBuilder {
        headers: vec![(
            "anthropic-beta".into(),
            "claude-code-20250219,effort-2025-11-24".into(),
        )],
        ..TraceBuilder::default()
    };
    b.send_text(&c, 0.0);
    grow(&mut c);
    b.headers = vec![
        ("Anthropic-Beta".into(), " effort-2025-11-24".into()),
        ("anthropic-beta".into(), "claude-code-20250219 ".into()),
    ];
    b.send_text(&c, 10.0);
    let r = rows(&b);
    assert_eq!((r[1].tokens.read, r[1].cause.clone()), (ALL, None));
}
