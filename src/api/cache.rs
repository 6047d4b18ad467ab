//! The prompt-cache rules: what a request's cached prefix is, block by block, and which
//! request settings invalidate which level of it. `analyze` simulates the cache on top of
//! this; the rules themselves live here, one per row of Anthropic's invalidation table
//! ([`INVALIDATION_RULES`], cited with the date read in `docs/analyze.md`).
//!
//! - The prefix is tools → system → messages; one block per *loaded* tool definition,
//!   system block and message content block. Tools sent with `defer_loading: true` are
//!   not part of it, nor are web search / web fetch server tools (their toggles act on
//!   the system level).
//! - Block hashes ignore `cache_control` (breakpoints move between turns), treat a string
//!   `content` as the equivalent text block, and treat Claude Code's billing system block
//!   as constant: it changes on every request (fingerprint, attestation token, turn and
//!   prompt indexes), yet Claude Code sessions do read the cache, so the API evidently
//!   leaves it out of the key (an inference, documented in `docs/analyze.md`).
//! - Settings that invalidate a level are *keys* of that level: [`CachePrefix::chain`]
//!   mixes the system-level keys in where the system starts and the messages-level keys
//!   where the messages start, so a change there keeps the levels before it cached.

use std::hash::{DefaultHasher, Hash, Hasher};

use serde::Serialize;
use serde_json::Value;

use super::betas::BetaSet;
use super::normalize::canonical_json;
use super::{estimate_tokens, Block, BlockKind, MessagesRequest};

/// Which part of the prompt prefix a block belongs to (the cache prefix order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// A tool definition.
    Tools,
    /// A `system` block.
    System,
    /// A content block of a message.
    Messages,
}

/// Cache TTL of a breakpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Ttl {
    /// 5 minutes (the default `ephemeral`).
    #[serde(rename = "5m")]
    M5,
    /// 1 hour (`"ttl": "1h"`).
    #[serde(rename = "1h")]
    H1,
}

impl Ttl {
    /// Length in microseconds.
    pub fn micros(self) -> i64 {
        match self {
            Ttl::M5 => 300_000_000,
            Ttl::H1 => 3_600_000_000,
        }
    }

    /// The TTL a `cache_control` value asks for.
    pub fn of(cc: &Value) -> Ttl {
        match cc.get("ttl").and_then(Value::as_str) {
            Some("1h") => Ttl::H1,
            _ => Ttl::M5,
        }
    }
}

/// One row of the invalidation table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct InvalidationRule {
    /// Stable id, used as the parameter name in `params_changed` causes.
    pub id: &'static str,
    /// The change, in the documentation's words.
    pub change: &'static str,
    /// The first level it invalidates (that level and every later one).
    pub level: Region,
    /// How agentwire reads it from a request.
    pub reads: &'static str,
}

/// Anthropic's invalidation table, one row per rule (sources and the date read:
/// `docs/analyze.md`, "Invalidation rules").
pub const INVALIDATION_RULES: &[InvalidationRule] = &[
    InvalidationRule {
        id: "model",
        change: "Changing the model",
        level: Region::Tools,
        reads: "`model`",
    },
    InvalidationRule {
        id: "tool_definitions",
        change: "Modifying tool definitions",
        level: Region::Tools,
        reads: "every loaded definition (name, type, description, schema, other members)",
    },
    InvalidationRule {
        id: "deferred_tools",
        change: "Adding, changing or loading tools sent with defer_loading",
        level: Region::Messages,
        reads: "nothing: deferred definitions are not in the prefix; a loaded tool arrives as a tool_reference in the messages",
    },
    InvalidationRule {
        id: "web_search",
        change: "Toggling web search",
        level: Region::System,
        reads: "a server tool of type web_search_*",
    },
    InvalidationRule {
        id: "web_fetch",
        change: "Toggling web fetch",
        level: Region::System,
        reads: "a server tool of type web_fetch_*",
    },
    InvalidationRule {
        id: "citations",
        change: "Toggling citations",
        level: Region::System,
        reads: "any document block with citations.enabled",
    },
    InvalidationRule {
        id: "speed",
        change: "Switching speed (fast mode)",
        level: Region::System,
        reads: "`speed`, effective only with a fast-mode-* beta",
    },
    InvalidationRule {
        id: "tool_choice",
        change: "Changing tool_choice",
        level: Region::Messages,
        reads: "`tool_choice` without disable_parallel_tool_use",
    },
    InvalidationRule {
        id: "disable_parallel_tool_use",
        change: "Changing disable_parallel_tool_use",
        level: Region::Messages,
        reads: "`tool_choice.disable_parallel_tool_use`",
    },
    InvalidationRule {
        id: "images",
        change: "Toggling images present/absent",
        level: Region::Messages,
        reads: "any image block in the messages, tool results included",
    },
    InvalidationRule {
        id: "thinking",
        change: "Changing thinking parameters",
        level: Region::Messages,
        reads: "`thinking` (type, budget_tokens, display)",
    },
    InvalidationRule {
        id: "effort",
        change: "Changing output_config.effort",
        level: Region::Messages,
        reads: "`output_config.effort` (or top-level `effort`); the model's default equals absent",
    },
    InvalidationRule {
        id: "thinking_stripped",
        change: "Non-tool-result user content in a thinking request",
        level: Region::Messages,
        reads: "thinking on, a model that strips earlier thinking blocks, and a last user message with content other than tool results: those blocks leave the prefix",
    },
];

/// One block of the prompt prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixBlock {
    /// Region of the prefix.
    pub region: Region,
    /// Tool index, system block index, or message index.
    pub index: usize,
    /// Hash of the block's content as the cache sees it.
    pub hash: u64,
    /// Estimated tokens: [`estimate_tokens`] of the block's bytes without `cache_control`.
    pub tokens: u64,
    /// `Some(ttl)` when the block carries `cache_control` (a cache breakpoint).
    pub breakpoint: Option<Ttl>,
}

/// A request's cached prefix and cache keys.
#[derive(Clone, Debug, Default)]
pub struct CachePrefix {
    /// `model` (empty if absent); seeds every hash.
    pub model: String,
    /// The prefix, tools → system → messages.
    pub blocks: Vec<PrefixBlock>,
    /// System-level keys: `(rule id, canonical value)` for every system-level rule.
    pub system_keys: Vec<(&'static str, String)>,
    /// Messages-level keys.
    pub messages_keys: Vec<(&'static str, String)>,
    /// Top-level `cache_control` (automatic caching: a breakpoint on the last block).
    pub auto_breakpoint: Option<Ttl>,
    /// Estimated input tokens of the prompt: the body without deferred definitions.
    pub prompt_tokens: u64,
    /// Loaded tool names and definition hashes, in order.
    pub tools: Vec<(String, u64)>,
    /// System block texts as the cache sees them (to locate a change by byte offset).
    pub system: Vec<String>,
    /// True when the `thinking_stripped` rule removed thinking blocks from the prefix.
    pub thinking_stripped: bool,
}

/// Cumulative hashes and tokens of a prefix, block by block.
#[derive(Clone, Debug, Default)]
pub struct Chain {
    /// Hash of the whole prefix up to and including each block.
    pub hashes: Vec<u64>,
    /// Tokens up to and including each block.
    pub tokens: Vec<u64>,
    /// Index of the first system-or-later block (where system keys are mixed in).
    pub system_start: Option<usize>,
    /// Index of the first messages block (where messages keys are mixed in).
    pub messages_start: Option<usize>,
}

/// A stable 64-bit hash (SipHash with fixed keys).
pub fn hash_of(parts: &[&[u8]]) -> u64 {
    let mut h = DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

fn mix(a: u64, b: u64) -> u64 {
    hash_of(&[&a.to_le_bytes(), &b.to_le_bytes()])
}

/// Prefix of the system block in which Claude Code sends its per-request billing
/// fingerprint and attestation token (`x-anthropic-billing-header: cc_version=…; cch=…`).
pub const BILLING_HEADER: &str = "x-anthropic-billing-header";

/// Models that strip earlier thinking blocks when a request adds non-tool-result user
/// content (Anthropic, "Prompt caching", "Caching with thinking blocks": preserved by
/// default from Claude Opus 4.5 and Sonnet 4.6 on; earlier models and Haiku strip them).
pub fn strips_thinking(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.starts_with("claude-3")
        || m.starts_with("claude-haiku-4")
        || m.starts_with("claude-sonnet-4-5")
        || m.starts_with("claude-sonnet-4-0")
        || m.starts_with("claude-sonnet-4-2")
        || m == "claude-sonnet-4"
        || m.starts_with("claude-opus-4-0")
        || m.starts_with("claude-opus-4-1")
        || m.starts_with("claude-opus-4-2")
        || m == "claude-opus-4"
}

/// A model's default effort (Anthropic, "Models overview", "Default effort"; setting it
/// explicitly equals omitting it): `medium` for Claude Opus 5.5 and Haiku 5.5, `high`
/// for every other model with effort.
pub fn default_effort(model: &str) -> &'static str {
    let m = model.to_ascii_lowercase();
    if m.starts_with("claude-opus-5-5") || m.starts_with("claude-haiku-5-5") {
        "medium"
    } else {
        "high"
    }
}

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

impl CachePrefix {
    /// The cached prefix and keys of a request (`body`: the bytes it was parsed from)
    /// sent with `betas`.
    pub fn of(req: &MessagesRequest, body: &[u8], betas: &BetaSet) -> CachePrefix {
        let model = req.model.clone().unwrap_or_default();
        let mut blocks = Vec::new();
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
            let mut v: Value = serde_json::from_slice(t.span.slice(body)).unwrap_or(Value::Null);
            if let Some(o) = v.as_object_mut() {
                o.remove("cache_control");
            }
            let h = hash_of(&[canonical_json(&v, &[]).as_bytes()]);
            tools.push((t.name.clone(), h));
            blocks.push(PrefixBlock {
                region: Region::Tools,
                index: i,
                hash: h,
                tokens: estimate_tokens(t.span.len().saturating_sub(cc_bytes(&t.cache_control))),
                breakpoint: t.cache_control.as_ref().map(Ttl::of),
            });
        }
        let mut system = Vec::new();
        if let Some(s) = &req.system {
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
        }
        let strip = thinking_on(req) && strips_thinking(&model) && new_user_content(req);
        let mut thinking_stripped = false;
        for (mi, m) in req.messages.iter().enumerate() {
            for b in &m.content {
                if strip
                    && matches!(
                        b.kind,
                        BlockKind::Thinking { .. } | BlockKind::RedactedThinking
                    )
                {
                    thinking_stripped = true;
                    continue;
                }
                blocks.push(PrefixBlock {
                    region: Region::Messages,
                    index: mi,
                    hash: hash_of(&[m.role.as_bytes(), &block_hash(b, body, false).to_le_bytes()]),
                    tokens: block_tokens(b, m.content_is_string),
                    breakpoint: b.cache_control.as_ref().map(Ttl::of),
                });
            }
        }
        let flag = |b: bool| if b { "on" } else { "off" }.to_string();
        let speed = match req.param("speed").and_then(Value::as_str) {
            Some(s) if betas.has_prefix("fast-mode-") => s.to_string(),
            _ => "standard".to_string(),
        };
        let system_keys = vec![
            ("web_search", flag(toggle_tool(req, "web_search_"))),
            ("web_fetch", flag(toggle_tool(req, "web_fetch_"))),
            ("citations", flag(document_citations(req, body))),
            ("speed", speed),
        ];
        let choice = req.param("tool_choice").cloned();
        let parallel = choice
            .as_ref()
            .and_then(|c| c.get("disable_parallel_tool_use"))
            .map_or_else(|| "-".to_string(), Value::to_string);
        let choice = choice.map_or_else(
            || "-".to_string(),
            |c| canonical_json(&c, &["disable_parallel_tool_use"]),
        );
        let effort = req
            .param("output_config")
            .and_then(|o| o.get("effort"))
            .or_else(|| req.param("effort"))
            .and_then(Value::as_str)
            .unwrap_or(default_effort(&model))
            .to_string();
        let messages_keys = vec![
            ("tool_choice", choice),
            ("disable_parallel_tool_use", parallel),
            ("images", flag(has_images(req))),
            (
                "thinking",
                req.param("thinking")
                    .map_or_else(|| "-".to_string(), |t| canonical_json(t, &[])),
            ),
            ("effort", effort),
        ];
        CachePrefix {
            model,
            blocks,
            system_keys,
            messages_keys,
            auto_breakpoint: req.param("cache_control").map(Ttl::of),
            prompt_tokens: estimate_tokens(req.body_bytes.saturating_sub(deferred_bytes)),
            tools,
            system,
            thinking_stripped,
        }
    }

    /// Cumulative hashes and tokens: the model seeds the hash; the system-level keys are
    /// mixed in before the first system (or messages) block, the messages-level keys
    /// before the first messages block.
    pub fn chain(&self) -> Chain {
        let key = |k: &[(&str, String)]| hash_of(&[format!("{k:?}").as_bytes()]);
        let (sys, msg) = (key(&self.system_keys), key(&self.messages_keys));
        let mut c = Chain::default();
        let mut h = hash_of(&[self.model.as_bytes()]);
        let mut t = 0u64;
        for (i, b) in self.blocks.iter().enumerate() {
            if b.region >= Region::System && c.system_start.is_none() {
                c.system_start = Some(i);
                h = mix(h, sys);
            }
            if b.region == Region::Messages && c.messages_start.is_none() {
                c.messages_start = Some(i);
                h = mix(h, msg);
            }
            h = mix(h, b.hash);
            t += b.tokens;
            c.hashes.push(h);
            c.tokens.push(t);
        }
        c
    }

    /// Ids of the rules at `level` whose keys differ between `self` and `other`.
    pub fn changed_keys(&self, other: &CachePrefix, level: Region) -> Vec<&'static str> {
        let (a, b) = match level {
            Region::System => (&self.system_keys, &other.system_keys),
            Region::Messages => (&self.messages_keys, &other.messages_keys),
            Region::Tools => return Vec::new(),
        };
        a.iter()
            .zip(b)
            .filter(|(x, y)| x.1 != y.1)
            .map(|(x, _)| x.0)
            .collect()
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let key = |p: &CachePrefix, k: &str| {
            p.system_keys
                .iter()
                .chain(&p.messages_keys)
                .find(|(n, _)| *n == k)
                .unwrap()
                .1
                .clone()
        };
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
    fn every_table_row_has_a_unique_id() {
        let mut ids: Vec<&str> = INVALIDATION_RULES.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), INVALIDATION_RULES.len());
    }
}
