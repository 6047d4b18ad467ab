//! Building a request's [`CachePrefix`]: its blocks (loaded tools, system blocks, message
//! content blocks) with hashes and token estimates, and the system- and messages-level
//! keys the invalidation rules read.

use serde_json::Value;

use super::rules::{default_effort, strips_thinking};
use super::{hash_of, CachePrefix, CacheRules, PrefixBlock, Region, Ttl};
use crate::api::betas::BetaSet;
use crate::api::normalize::comparison_key;
use crate::api::span::object_members;
use crate::api::{estimate_tokens, Block, BlockKind, Dialect, MessagesRequest};

/// Prefix of the system block in which Claude Code sends its per-request billing
/// fingerprint and attestation token (`x-anthropic-billing-header: cc_version=…; cch=…`).
pub const BILLING_HEADER: &str = "x-anthropic-billing-header";

fn toggle_tool(req: &MessagesRequest, prefix: &str) -> bool {
    req.tools.iter().any(|t| {
        t.tool_type
            .as_deref()
            .is_some_and(|ty| ty.starts_with(prefix))
    })
}

fn is_toggle_tool(ty: Option<&str>) -> bool {
    ty.is_some_and(|t| t.starts_with("web_search_") || t.starts_with("web_fetch_"))
}

fn block_hash(b: &Block, body: &[u8], system: bool) -> u64 {
    let t = b.block_type().as_bytes();
    match &b.kind {
        BlockKind::Text { text } if system && text.starts_with(BILLING_HEADER) => {
            hash_of(&[t, BILLING_HEADER.as_bytes()])
        }
        BlockKind::Text { text } => hash_of(&[t, text.as_bytes()]),
        BlockKind::ToolUse { id, name, input } | BlockKind::ServerToolUse { id, name, input } => {
            hash_of(&[
                t,
                id.as_bytes(),
                name.as_bytes(),
                input.to_string().as_bytes(),
            ])
        }
        BlockKind::ToolResult {
            tool_use_id,
            text,
            is_error,
            references,
            images,
        } => hash_of(&[
            t,
            tool_use_id.as_bytes(),
            text.as_bytes(),
            &[u8::from(*is_error)],
            references.join("\n").as_bytes(),
            &images.to_le_bytes(),
        ]),
        BlockKind::Thinking {
            thinking,
            signature,
        } => hash_of(&[
            t,
            thinking.as_bytes(),
            signature.as_deref().unwrap_or("").as_bytes(),
        ]),
        BlockKind::ToolReference { tool_name } => hash_of(&[t, tool_name.as_bytes()]),
        BlockKind::Other { raw, .. } => {
            let mut v = raw.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("cache_control");
            }
            hash_of(&[t, v.to_string().as_bytes()])
        }
        BlockKind::Image { .. } | BlockKind::Document { .. } | BlockKind::RedactedThinking => {
            hash_of(&[t, b.span.slice(body)])
        }
    }
}

/// Hash of a tool definition as sent, member by member (key and raw value bytes, in the
/// order sent: key order matters to the cache), without `cache_control`.
fn tool_hash(body: &[u8], span: crate::api::Span) -> u64 {
    let mut parts: Vec<&[u8]> = Vec::new();
    let members = object_members(body, span);
    for m in members.iter().filter(|m| m.key != "cache_control") {
        parts.push(m.key.as_bytes());
        parts.push(m.value.slice(body));
    }
    hash_of(&parts)
}

/// Bytes a `cache_control` member adds to its object: `,"cache_control":` + value.
fn cc_bytes(cc: &Option<Value>) -> usize {
    cc.as_ref().map_or(0, |c| 17 + c.to_string().len())
}

/// Estimated tokens of a block as the prompt sees it: its wire bytes without the
/// `cache_control` member, a string `content` counted as the equivalent text block.
fn block_tokens(b: &Block, string_form: bool) -> u64 {
    let mut bytes = b.span.len();
    if string_form {
        bytes += 23; // `{"type":"text","text":` + `}`
    }
    estimate_tokens(bytes.saturating_sub(cc_bytes(&b.cache_control)))
}

fn raw_citations(v: &Value) -> bool {
    v.pointer("/citations/enabled").and_then(Value::as_bool) == Some(true)
}

fn has_images(req: &MessagesRequest) -> bool {
    req.messages
        .iter()
        .flat_map(|m| &m.content)
        .any(|b| match &b.kind {
            BlockKind::Image { .. } => true,
            BlockKind::ToolResult { images, .. } => *images > 0,
            _ => false,
        })
}

fn thinking_on(req: &MessagesRequest) -> bool {
    req.param("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t != "disabled")
}

/// True when the last user message carries something other than tool results.
fn new_user_content(req: &MessagesRequest) -> bool {
    req.messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .is_some_and(|m| {
            m.content
                .iter()
                .any(|b| !matches!(b.kind, BlockKind::ToolResult { .. }))
        })
}

/// True when a `document` block asks for citations. Read from the raw block bytes,
/// since the parsed [`BlockKind::Document`] keeps only the title.
fn document_citations(req: &MessagesRequest, body: &[u8]) -> bool {
    req.messages
        .iter()
        .flat_map(|m| &m.content)
        .filter(|b| matches!(b.kind, BlockKind::Document { .. }))
        .any(|b| {
            serde_json::from_slice::<Value>(b.span.slice(body)).is_ok_and(|v| raw_citations(&v))
        })
}

impl CachePrefix {
    /// The cached prefix and keys of a request (`body`: the bytes it was parsed from)
    /// sent with `betas`, under its provider's rules.
    pub fn of(req: &MessagesRequest, body: &[u8], betas: &BetaSet) -> CachePrefix {
        match req.dialect {
            Dialect::Messages => Self::of_messages(req, body, betas),
            Dialect::Gemini => Self::of_gemini(req, body),
            _ => Self::of_openai(req, body),
        }
    }

    /// The Messages API's prefix (Anthropic's rules).
    fn of_messages(req: &MessagesRequest, body: &[u8], betas: &BetaSet) -> CachePrefix {
        let model = req.model.clone().unwrap_or_default();
        let mut blocks = Vec::new();
        let (tools, deferred_bytes) = tool_blocks(req, body, &mut blocks);
        let system = system_blocks(req, body, &mut blocks);
        let thinking_stripped = message_blocks(req, body, &model, &mut blocks);
        CachePrefix {
            system_keys: system_keys(req, body, betas),
            messages_keys: messages_keys(req, &model),
            model,
            blocks,
            auto_breakpoint: req.param("cache_control").map(Ttl::of),
            prompt_tokens: estimate_tokens(req.body_bytes.saturating_sub(deferred_bytes)),
            tools,
            system,
            thinking_stripped,
            rules: CacheRules::Breakpoints,
            routing_key: None,
            implicit_breakpoint: None,
        }
    }

    /// A Gemini request's prefix ([`crate::api::gemini::cache`]): the OpenAI shape (tools,
    /// system, conversation; no keys) under the implicit-prefix rules, with no routing key.
    fn of_gemini(req: &MessagesRequest, body: &[u8]) -> CachePrefix {
        CachePrefix {
            rules: CacheRules::ImplicitPrefix { ttl: Ttl::M5 },
            routing_key: None,
            implicit_breakpoint: None,
            ..Self::of_openai(req, body)
        }
    }

    /// An OpenAI request's prefix ([`super::openai`]): tools, then instructions and
    /// opening developer messages, then the conversation; no invalidation keys (OpenAI
    /// documents none beyond the prefix itself); routed by `prompt_cache_key`.
    fn of_openai(req: &MessagesRequest, body: &[u8]) -> CachePrefix {
        let model = req.model.clone().unwrap_or_default();
        let mut blocks = Vec::new();
        let (tools, deferred_bytes) = tool_blocks(req, body, &mut blocks);
        let system = system_blocks(req, body, &mut blocks);
        message_blocks(req, body, "", &mut blocks);
        let retention = req.param("prompt_cache_retention").and_then(Value::as_str);
        let implicit_breakpoint = last_user_block(req, &blocks);
        CachePrefix {
            system_keys: Vec::new(),
            messages_keys: Vec::new(),
            rules: super::openai::rules_for(&model, retention),
            routing_key: req
                .param("prompt_cache_key")
                .and_then(Value::as_str)
                .map(str::to_string),
            model,
            blocks,
            auto_breakpoint: None,
            prompt_tokens: estimate_tokens(req.body_bytes.saturating_sub(deferred_bytes)),
            tools,
            system,
            thinking_stripped: false,
            implicit_breakpoint,
        }
    }
}

/// The last prefix block of the latest user-side message (a user message or tool
/// outputs), where OpenAI's newer regime puts its implicit breakpoint.
fn last_user_block(req: &MessagesRequest, blocks: &[PrefixBlock]) -> Option<usize> {
    let message = req.messages.iter().rposition(|m| m.role == "user")?;
    blocks
        .iter()
        .rposition(|b| b.region == Region::Messages && b.index == message)
}

/// The blocks of the loaded tool definitions (deferred ones and the web search / web
/// fetch toggles are not in the prefix), pushed onto `blocks`; returns each loaded tool's
/// name and hash, and the bytes of the deferred definitions.
fn tool_blocks(
    req: &MessagesRequest,
    body: &[u8],
    blocks: &mut Vec<PrefixBlock>,
) -> (Vec<(String, u64)>, usize) {
    let mut tools = Vec::new();
    let mut deferred_bytes = 0usize;
    for (i, t) in req.tools.iter().enumerate() {
        if t.defer_loading {
            deferred_bytes += t.span.len();
            continue;
        }
        if is_toggle_tool(t.tool_type.as_deref()) {
            continue;
        }
        let h = *t.derived.cache_hash.get_or_init(|| tool_hash(body, t.span));
        tools.push((t.qualified_name(), h));
        blocks.push(PrefixBlock {
            region: Region::Tools,
            index: i,
            hash: h,
            tokens: estimate_tokens(t.span.len().saturating_sub(cc_bytes(&t.cache_control))),
            breakpoint: t.cache_control.as_ref().map(Ttl::of),
        });
    }
    (tools, deferred_bytes)
}

/// The system blocks, pushed onto `blocks`; returns their texts (the billing block as
/// its constant prefix).
fn system_blocks(req: &MessagesRequest, body: &[u8], blocks: &mut Vec<PrefixBlock>) -> Vec<String> {
    let mut system = Vec::new();
    let Some(s) = &req.system else {
        return system;
    };
    for (i, b) in s.blocks.iter().enumerate() {
        let text = b.text().unwrap_or("");
        system.push(
            if text.starts_with(BILLING_HEADER) {
                BILLING_HEADER
            } else {
                text
            }
            .to_string(),
        );
        blocks.push(PrefixBlock {
            region: Region::System,
            index: i,
            hash: block_hash(b, body, true),
            tokens: block_tokens(b, s.is_string),
            breakpoint: b.cache_control.as_ref().map(Ttl::of),
        });
    }
    system
}

/// The message content blocks, pushed onto `blocks`, without the earlier thinking
/// blocks a thinking request on a stripping model drops; returns whether any were
/// dropped.
fn message_blocks(
    req: &MessagesRequest,
    body: &[u8],
    model: &str,
    blocks: &mut Vec<PrefixBlock>,
) -> bool {
    let strip = thinking_on(req) && strips_thinking(model) && new_user_content(req);
    let mut thinking_stripped = false;
    for (mi, m) in req.messages.iter().enumerate() {
        let hashes = m.derived.block_hashes.get_or_init(|| {
            m.content
                .iter()
                .map(|b| hash_of(&[m.role.as_bytes(), &block_hash(b, body, false).to_le_bytes()]))
                .collect()
        });
        for (b, &hash) in m.content.iter().zip(hashes) {
            let thinking = matches!(
                b.kind,
                BlockKind::Thinking { .. } | BlockKind::RedactedThinking
            );
            if strip && thinking {
                thinking_stripped = true;
                continue;
            }
            blocks.push(PrefixBlock {
                region: Region::Messages,
                index: mi,
                hash,
                tokens: block_tokens(b, m.content_is_string),
                breakpoint: b.cache_control.as_ref().map(Ttl::of),
            });
        }
    }
    thinking_stripped
}

fn flag(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

/// The system-level keys: web search, web fetch, citations, speed.
fn system_keys(req: &MessagesRequest, body: &[u8], betas: &BetaSet) -> Vec<(&'static str, String)> {
    let speed = match req.param("speed").and_then(Value::as_str) {
        Some(s) if betas.has_prefix("fast-mode-") => s.to_string(),
        _ => "standard".to_string(),
    };
    vec![
        ("web_search", flag(toggle_tool(req, "web_search_"))),
        ("web_fetch", flag(toggle_tool(req, "web_fetch_"))),
        ("citations", flag(document_citations(req, body))),
        ("speed", speed),
    ]
}

/// The messages-level keys: tool choice, parallel tool use, images, thinking, effort (the
/// model's default effort equals an absent one).
fn messages_keys(req: &MessagesRequest, model: &str) -> Vec<(&'static str, String)> {
    let choice = req.param("tool_choice").cloned();
    let parallel = choice
        .as_ref()
        .and_then(|c| c.get("disable_parallel_tool_use"))
        .map_or_else(|| "-".to_string(), Value::to_string);
    let choice = choice.map_or_else(
        || "-".to_string(),
        |c| comparison_key(&c, &["disable_parallel_tool_use"]),
    );
    let effort = req
        .param("output_config")
        .and_then(|o| o.get("effort"))
        .or_else(|| req.param("effort"))
        .and_then(Value::as_str)
        .unwrap_or(default_effort(model))
        .to_string();
    vec![
        ("tool_choice", choice),
        ("disable_parallel_tool_use", parallel),
        ("images", flag(has_images(req))),
        (
            "thinking",
            req.param("thinking")
                .map_or_else(|| "-".to_string(), |t| comparison_key(t, &[])),
        ),
        ("effort", effort),
    ]
}
