//! The cache rules on request bodies: which blocks form the prefix and with what hashes
//! and tokens (worked out by hand from the bytes: tokens are ⌈bytes / 4⌉), where the
//! level keys are mixed in, and which invalidation rule reads what.

use super::*;
use crate::api::betas::BetaSet;
use crate::api::MessagesRequest;

fn prefix(body: &str, betas: &[&str]) -> CachePrefix {
    let r = MessagesRequest::parse(body.as_bytes()).unwrap();
    let h: Vec<(String, String)> = std::iter::once(("host".to_string(), "x".to_string()))
        .chain(
            betas
                .iter()
                .map(|b| ("anthropic-beta".to_string(), b.to_string())),
        )
        .collect();
    CachePrefix::of(&r, body.as_bytes(), &BetaSet::from_headers(&h))
}

/// The value of the system- or messages-level key `k`.
fn key(p: &CachePrefix, k: &str) -> String {
    p.system_keys
        .iter()
        .chain(&p.messages_keys)
        .find(|(n, _)| *n == k)
        .unwrap()
        .1
        .clone()
}

#[test]
fn deferred_and_toggle_tools_are_not_prefix_blocks() {
    let p = prefix(
        r#"{"model":"m","tools":[{"name":"A"},{"name":"B","defer_loading":true},{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"hi"}]}"#,
        &[],
    );
    assert_eq!(p.tools.len(), 1);
    assert_eq!(
        p.blocks
            .iter()
            .filter(|b| b.region == Region::Tools)
            .count(),
        1
    );
    assert_eq!(p.system_keys[0], ("web_search", "on".to_string()));
}

#[test]
fn speed_counts_only_with_the_fast_mode_beta_and_effort_default_equals_absent() {
    let body = r#"{"model":"claude-opus-4-6","speed":"fast","messages":[]}"#;
    assert_eq!(key(&prefix(body, &[]), "speed"), "standard");
    assert_eq!(
        key(&prefix(body, &["fast-mode-2026-02-01"]), "speed"),
        "fast"
    );
    let explicit = prefix(
        r#"{"model":"claude-opus-5-5","output_config":{"effort":"medium"},"messages":[]}"#,
        &[],
    );
    let omitted = prefix(r#"{"model":"claude-opus-5-5","messages":[]}"#, &[]);
    assert_eq!(explicit.messages_keys, omitted.messages_keys);
}

#[test]
fn every_key_is_a_table_row_at_its_level() {
    let p = prefix(r#"{"model":"m","messages":[]}"#, &[]);
    for (level, keys) in [
        (Region::System, &p.system_keys),
        (Region::Messages, &p.messages_keys),
    ] {
        for (id, _) in keys {
            let row = INVALIDATION_RULES.iter().find(|r| r.id == *id).unwrap();
            assert_eq!(row.level, level, "{id}");
        }
    }
    // Every system- or messages-level row is a key, except the two that act on the
    // blocks themselves.
    let keyed: Vec<&str> = p
        .system_keys
        .iter()
        .chain(&p.messages_keys)
        .map(|(k, _)| *k)
        .collect();
    for r in INVALIDATION_RULES
        .iter()
        .filter(|r| r.level != Region::Tools)
    {
        assert!(
            keyed.contains(&r.id) || ["deferred_tools", "thinking_stripped"].contains(&r.id),
            "{}",
            r.id
        );
    }
}

#[test]
fn every_table_row_has_a_unique_id() {
    let mut ids: Vec<&str> = INVALIDATION_RULES.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), INVALIDATION_RULES.len());
}

fn keys<'a>(k: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    k.iter().map(|(a, b)| (*a, b.as_str())).collect()
}

#[test]
fn a_ttl_of_1h_is_one_hour_and_anything_else_five_minutes() {
    use serde_json::json;
    assert_eq!(Ttl::of(&json!({"type": "ephemeral", "ttl": "1h"})), Ttl::H1);
    assert_eq!(Ttl::of(&json!({"type": "ephemeral", "ttl": "5m"})), Ttl::M5);
    assert_eq!(Ttl::of(&json!({"type": "ephemeral"})), Ttl::M5);
    let p = prefix(
        r#"{"model":"m","system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":"1h"}}],"messages":[{"role":"user","content":[{"type":"text","text":"u","cache_control":{"type":"ephemeral"}}]}],"cache_control":{"type":"ephemeral","ttl":"1h"}}"#,
        &[],
    );
    let bps: Vec<Option<Ttl>> = p.blocks.iter().map(|b| b.breakpoint).collect();
    assert_eq!(bps, [Some(Ttl::H1), Some(Ttl::M5)]);
    assert_eq!(p.auto_breakpoint, Some(Ttl::H1));
}

/// Tools (block 0), system (block 1), messages (blocks 2, 3): a system-level setting
/// changes the hashes from block 1 on, a messages-level one from block 2 on; tokens
/// add up block by block.
#[test]
fn level_keys_are_mixed_in_where_their_level_starts() {
    let body = |web: &str, choice: &str| {
        format!(
            r#"{{"model":"m","tools":[{{"name":"A"}}{web}],{choice}"system":"sys","messages":[{{"role":"user","content":"a"}},{{"role":"assistant","content":"b"}}]}}"#
        )
    };
    let base = prefix(&body("", ""), &[]);
    let c = base.chain();
    assert_eq!((c.system_start, c.messages_start), (Some(1), Some(2)));
    let tokens: Vec<u64> = base.blocks.iter().map(|b| b.tokens).collect();
    // {"name":"A"} = 12 bytes: 3; "sys" + 23 = 28: 7; "a", "b" + 23 = 26: 7 each.
    assert_eq!(tokens, [3, 7, 7, 7]);
    assert_eq!(c.tokens, [3, 10, 17, 24]);
    let web = prefix(
        &body(r#",{"type":"web_search_20250305","name":"web_search"}"#, ""),
        &[],
    )
    .chain();
    let same = |a: &Chain, n: usize| (0..4).filter(|&i| a.hashes[i] == c.hashes[i]).count() == n;
    assert!(
        same(&web, 1),
        "system key: only the tools block keeps its hash"
    );
    let choice = prefix(&body("", r#""tool_choice":{"type":"any"},"#), &[]).chain();
    assert!(
        same(&choice, 2),
        "messages key: tools and system keep theirs"
    );
    assert_eq!(choice.hashes[..2], c.hashes[..2]);
    // Without a system, the messages start both levels.
    let p = prefix(
        r#"{"model":"m","tools":[{"name":"A"}],"messages":[{"role":"user","content":"a"}]}"#,
        &[],
    );
    let c = p.chain();
    assert_eq!((c.system_start, c.messages_start), (Some(1), Some(1)));
}

#[test]
fn changed_keys_names_the_rules_whose_setting_differs_at_that_level() {
    let a = prefix(
        r#"{"model":"m","tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"auto"},"messages":[]}"#,
        &[],
    );
    let b = prefix(
        r#"{"model":"m","tool_choice":{"type":"any"},"messages":[]}"#,
        &[],
    );
    assert_eq!(
        keys(&a.system_keys),
        [
            ("web_search", "on"),
            ("web_fetch", "off"),
            ("citations", "off"),
            ("speed", "standard")
        ]
    );
    assert_eq!(
        keys(&b.system_keys)[..2],
        [("web_search", "off"), ("web_fetch", "off")]
    );
    assert_eq!(a.changed_keys(&b, Region::System), ["web_search"]);
    assert_eq!(a.changed_keys(&b, Region::Messages), ["tool_choice"]);
    assert!(a.changed_keys(&b, Region::Tools).is_empty());
    assert!(a.changed_keys(&a, Region::System).is_empty());
    let f = prefix(
        r#"{"model":"m","tools":[{"type":"web_fetch_20250910","name":"web_fetch"}],"messages":[]}"#,
        &[],
    );
    assert_eq!(
        keys(&f.system_keys)[..2],
        [("web_search", "off"), ("web_fetch", "on")]
    );
}

/// `citations` is on only for a document block with `citations.enabled: true`;
/// `images` for an image block or a tool result holding one.
#[test]
fn citations_and_images_keys_read_the_blocks_that_carry_them() {
    let key = |body: &str, k: &str| key(&prefix(body, &[]), k);
    let doc = |c: &str| {
        format!(
            r#"{{"model":"m","messages":[{{"role":"user","content":[{{"type":"document","source":{{"type":"text","media_type":"text/plain","data":"d"}}{c}}}]}}]}}"#
        )
    };
    assert_eq!(
        key(&doc(r#","citations":{"enabled":true}"#), "citations"),
        "on"
    );
    assert_eq!(
        key(&doc(r#","citations":{"enabled":false}"#), "citations"),
        "off"
    );
    assert_eq!(key(&doc(""), "citations"), "off");
    let user = |content: &str| {
        format!(r#"{{"model":"m","messages":[{{"role":"user","content":[{content}]}}]}}"#)
    };
    let image =
        r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}"#;
    assert_eq!(key(&user(image), "images"), "on");
    let result = |c: &str| {
        user(&format!(
            r#"{{"type":"tool_result","tool_use_id":"t","content":[{{"type":"text","text":"x"}}{c}]}}"#
        ))
    };
    assert_eq!(key(&result(&format!(",{image}")), "images"), "on");
    assert_eq!(key(&result(""), "images"), "off");
    assert_eq!(key(&user(r#"{"type":"text","text":"x"}"#), "images"), "off");
}

/// Earlier thinking blocks leave the prefix only when thinking is on, the model strips
/// them, and the last user message has content other than tool results.
#[test]
fn thinking_blocks_are_stripped_only_on_new_user_content_with_thinking_on_older_models() {
    let body = |model: &str, thinking: &str, last_user: &str| {
        format!(
            r#"{{"model":"{model}","thinking":{{"type":"{thinking}","budget_tokens":1024}},"messages":[{{"role":"user","content":"q"}},{{"role":"assistant","content":[{{"type":"thinking","thinking":"t","signature":"s"}},{{"type":"tool_use","id":"u","name":"A","input":{{}}}}]}},{{"role":"user","content":[{last_user}]}}]}}"#
        )
    };
    let text = r#"{"type":"text","text":"more"}"#;
    let result = r#"{"type":"tool_result","tool_use_id":"u","content":"r"}"#;
    // (model, thinking type, last user content) -> stripped
    let cases = [
        ("claude-sonnet-4-5", "enabled", text, true),
        ("claude-sonnet-4-5", "disabled", text, false),
        ("claude-sonnet-4-5", "enabled", result, false),
        ("claude-opus-4-5", "enabled", text, false),
    ];
    for (model, thinking, last, stripped) in cases {
        let p = prefix(&body(model, thinking, last), &[]);
        // Blocks: "q", thinking, tool_use, the last user block; minus the thinking one.
        assert_eq!(p.thinking_stripped, stripped, "{model} {thinking} {last}");
        assert_eq!(
            p.blocks.len(),
            if stripped { 3 } else { 4 },
            "{model} {thinking}"
        );
    }
    // The assistant's text is not user content: a tool-result-only user turn after an
    // assistant text block strips nothing.
    let p = prefix(
        r#"{"model":"claude-sonnet-4-5","thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"u","content":"r"}]},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"}]}]}"#,
        &[],
    );
    assert_eq!((p.thinking_stripped, p.blocks.len()), (false, 3));
}

/// Anthropic, "Prompt caching", "Caching with thinking blocks": preserved from Claude
/// Opus 4.5 and Sonnet 4.6 on; earlier models and Haiku strip them.
#[test]
fn models_before_opus_4_5_and_sonnet_4_6_and_haiku_strip_thinking() {
    for m in [
        "claude-3-7-sonnet-20250219",
        "claude-haiku-4-5",
        "claude-sonnet-4-5-20250929",
        "Claude-Sonnet-4-5",
        "claude-sonnet-4-0",
        "claude-sonnet-4-20250514",
        "claude-sonnet-4",
        "claude-opus-4-0",
        "claude-opus-4-1-20250805",
        "claude-opus-4-20250514",
        "claude-opus-4",
    ] {
        assert!(strips_thinking(m), "{m}");
    }
    for m in [
        "claude-opus-4-5",
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-5-5",
    ] {
        assert!(!strips_thinking(m), "{m}");
    }
}

/// Hashes: content only (not `cache_control`), a string `content` as its text block,
/// tool definitions member by member, Claude Code's billing block constant in the
/// system only. Tokens leave `cache_control` out and count a string as its text block.
#[test]
fn block_hashes_and_tokens_see_the_content_as_the_cache_does() {
    let msgs = |content: &str| {
        prefix(
            &format!(r#"{{"model":"m","messages":[{{"role":"user","content":{content}}}]}}"#),
            &[],
        )
        .blocks[0]
            .clone()
    };
    // `{"type":"text","text":"hello"}` = 30 bytes: 8 tokens, with or without the 37
    // bytes of `,"cache_control":{"type":"ephemeral"}`; `"hello"` + 23 = 30 likewise.
    let plain = msgs(r#"[{"type":"text","text":"hello"}]"#);
    let marked = msgs(r#"[{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]"#);
    let string = msgs(r#""hello""#);
    assert_eq!((plain.tokens, marked.tokens, string.tokens), (8, 8, 8));
    assert_eq!((marked.hash, string.hash), (plain.hash, plain.hash));
    assert_ne!(msgs(r#""hallo""#).hash, plain.hash);
    // `"hi"` + 23 = 27 bytes: 7 tokens.
    assert_eq!(msgs(r#""hi""#).tokens, 7);
    // In the messages, a text starting with the billing header is ordinary text.
    let h = |s: &str| msgs(&format!(r#""{BILLING_HEADER}: {s}""#)).hash;
    assert_ne!(h("cch=1"), h("cch=2"));

    let system = |texts: &[&str]| {
        let blocks: Vec<String> = texts
            .iter()
            .map(|t| format!(r#"{{"type":"text","text":"{t}"}}"#))
            .collect();
        let p = prefix(
            &format!(
                r#"{{"model":"m","system":[{}],"messages":[]}}"#,
                blocks.join(",")
            ),
            &[],
        );
        p.blocks.iter().map(|b| b.hash).collect::<Vec<_>>()
    };
    let billing = |s: &str| format!("{BILLING_HEADER}: cc_version=1; cch={s};");
    assert_eq!(system(&[&billing("1")]), system(&[&billing("2")]));
    let two = system(&["you are a", "you are b"]);
    assert_ne!(two[0], two[1]);

    let tools = |defs: &str| {
        prefix(
            &format!(r#"{{"model":"m","tools":[{defs}],"messages":[]}}"#),
            &[],
        )
        .tools
    };
    let t = tools(
        r#"{"name":"A","description":"x"},{"name":"A","description":"y"},{"name":"A","description":"x","cache_control":{"type":"ephemeral"}},{"description":"x","name":"A"}"#,
    );
    assert_ne!(t[0].1, t[1].1, "another description");
    assert_eq!(
        t[0].1, t[2].1,
        "cache_control is not part of the definition"
    );
    assert_ne!(t[0].1, t[3].1, "member order matters");
    let p = prefix(
        r#"{"model":"m","tools":[{"name":"A","description":"x","cache_control":{"type":"ephemeral"}}],"messages":[]}"#,
        &[],
    );
    // `{"name":"A","description":"x"}` = 30 bytes: 8 tokens.
    assert_eq!(p.blocks[0].tokens, 8);
}

/// Deferred definitions are not prompt tokens: the body less their bytes, ⌈/ 4⌉.
#[test]
fn deferred_definitions_are_not_counted_as_prompt_tokens() {
    let deferred = r#"{"name":"B","description":"a deferred tool","defer_loading":true}"#;
    let body = format!(r#"{{"model":"m","tools":[{{"name":"A"}},{deferred}],"messages":[]}}"#);
    let p = prefix(&body, &[]);
    let expect = (body.len() - deferred.len()).div_ceil(4) as u64;
    assert_eq!(p.prompt_tokens, expect);
    assert!(expect < (body.len() as u64).div_ceil(4));
}
