//! Anthropic's cache-invalidation table, one [`InvalidationRule`] per row, the lookup
//! rules ([`LOOKBACK_BLOCKS`], [`MAX_BREAKPOINTS`]; the TTLs are [`super::Ttl`]), and the
//! model facts two rows need (which models strip earlier thinking blocks, each model's
//! default effort). Sources and the date read: `docs/analyze.md`, "Invalidation rules".

use serde::Serialize;

use super::Region;

/// Blocks before a breakpoint that a cache lookup also checks (Anthropic, "Prompt
/// caching": the lookback window of 20 blocks).
pub const LOOKBACK_BLOCKS: usize = 20;

/// Breakpoints a request may carry; further ones are ignored (the API rejects them).
pub const MAX_BREAKPOINTS: usize = 4;

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
