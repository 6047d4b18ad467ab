//! OpenAI's prompt-cache rules (Responses and Chat Completions), as the simulation needs
//! them. Source: OpenAI, "Prompt caching"
//! (<https://developers.openai.com/api/docs/guides/prompt-caching>, read 2026-12-01
//! through the project's search tool), which gives two regimes:
//!
//! | | models before GPT-5.6 | GPT-5.6 and later |
//! | --- | --- | --- |
//! | what is cached | the longest matching prefix, in 128-token increments | the prefix up to an implicit breakpoint at the latest user or tool message (exact match) |
//! | minimum | 1,024 tokens (the guide: "varies by model from 1,024 to 2,048") | 1,024 tokens |
//! | writes | free | billed (`cache_write_tokens`, 1.25× input) |
//! | lifetime | in memory: evicted after 5–10 minutes idle, at most 1 hour; `prompt_cache_retention: "24h"` keeps it 24 hours | 30 minutes, refreshed on each use |
//! | routing | the prefix's hash, combined with `prompt_cache_key` | `prompt_cache_key`, the prefix hash second |
//!
//! Where the guide is silent, agentwire assumes, and `docs/analyze.md` says so: the
//! prefix is rendered tools → `instructions` → input items (Codex sends its tools as
//! `input[0]` in code mode, so there the order is the items' own); an idle entry of the
//! in-memory policy lives the 5 minutes the guide guarantees (a miss after 5–10 minutes
//! is "expired", and the gap says how long it was); requests with different
//! `prompt_cache_key`s never share an entry.

use super::{CacheRules, Ttl};

/// Minimum cacheable prompt of every OpenAI model, tokens.
pub const MIN_CACHEABLE: u64 = 1024;

/// Cache hits of the automatic-prefix regime come in increments of this many tokens.
pub const INCREMENT: u64 = 128;

/// The regime a model's requests are cached under, given the request's
/// `prompt_cache_retention` (`in_memory`, `24h`; absent: the default).
pub fn rules_for(model: &str, retention: Option<&str>) -> CacheRules {
    if implicit_breakpoints(model) {
        return CacheRules::ImplicitBreakpoint;
    }
    let ttl = match retention {
        Some("24h") => Ttl::H24,
        _ => Ttl::M5,
    };
    CacheRules::AutomaticPrefix { ttl }
}

/// True for GPT-5.6 and later (`gpt-5.6…`, `gpt-5.7…`, `gpt-6…` and up): the models the
/// guide's newer regime names.
pub fn implicit_breakpoints(model: &str) -> bool {
    let m = model.trim().to_ascii_lowercase();
    let Some(v) = m.strip_prefix("gpt-") else {
        return false;
    };
    let mut parts = v.split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = if v[major.to_string().len()..].starts_with('.') {
        parts.next().and_then(|p| p.parse().ok()).unwrap_or(0)
    } else {
        0
    };
    major > 5 || (major == 5 && minor >= 6)
}

/// Cached tokens as the automatic regime reports them: nothing below the minimum, then
/// whole increments of [`INCREMENT`] above it.
pub fn round_read(tokens: u64) -> u64 {
    if tokens < MIN_CACHEABLE {
        0
    } else {
        MIN_CACHEABLE + (tokens - MIN_CACHEABLE) / INCREMENT * INCREMENT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newer_regime_starts_at_gpt_5_6() {
        for (m, want) in [
            ("gpt-5.5", false),
            ("gpt-5", false),
            ("gpt-5-codex", false),
            ("gpt-4.1", false),
            ("gpt-5.6-sol", true),
            ("gpt-5.10", true),
            ("gpt-6.2-sol", true),
            ("gpt-6-luna", true),
            ("o3", false),
            ("my-local-model", false),
        ] {
            assert_eq!(implicit_breakpoints(m), want, "{m}");
        }
        assert_eq!(
            rules_for("gpt-5.5", Some("24h")),
            CacheRules::AutomaticPrefix { ttl: Ttl::H24 }
        );
        assert_eq!(
            rules_for("gpt-6.2-sol", None),
            CacheRules::ImplicitBreakpoint
        );
    }

    #[test]
    fn reads_are_whole_increments_from_the_minimum() {
        assert_eq!(round_read(1023), 0);
        assert_eq!(round_read(1024), 1024);
        assert_eq!(round_read(1151), 1024);
        assert_eq!(round_read(1152), 1152);
        assert_eq!(round_read(10_000), 1024 + 70 * 128);
    }
}
