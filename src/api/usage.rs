//! Token usage as the API reports it, and agentwire's own token estimate.
//!
//! Source: Messages API reference, `usage` object: `input_tokens`, `output_tokens`,
//! `cache_creation_input_tokens`, `cache_read_input_tokens`, and the breakdown
//! `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Usage figures in tokens. Every field is optional: absent means "not reported".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens (cumulative in streaming `message_delta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    /// Cache writes with a 5-minute TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_5m_input_tokens: Option<u64>,
    /// Cache writes with a 1-hour TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_1h_input_tokens: Option<u64>,
    /// True when a reported figure was above [`MAX_TOKENS`] and was clamped to it
    /// (numbers read from a trace are not trusted to be sane).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clamped: bool,
}

/// Largest usage figure taken from a response: 2^32 tokens, far above any context window,
/// so totals over billions of requests cannot overflow.
pub const MAX_TOKENS: u64 = 1 << 32;

impl Usage {
    /// Read a `usage` object; unknown fields are ignored.
    pub fn from_value(v: &Value) -> Usage {
        let mut u = Usage::default();
        u.merge(v);
        u
    }

    /// Overwrite the fields present in `v` (streaming usage is cumulative, so later
    /// figures replace earlier ones).
    pub fn merge(&mut self, v: &Value) {
        let get = |k: &str| v.get(k).and_then(Value::as_u64);
        let mut clamped = false;
        let mut set = |slot: &mut Option<u64>, val: Option<u64>| {
            if let Some(n) = val {
                clamped |= n > MAX_TOKENS;
                *slot = Some(n.min(MAX_TOKENS));
            }
        };
        set(&mut self.input_tokens, get("input_tokens"));
        set(&mut self.output_tokens, get("output_tokens"));
        set(
            &mut self.cache_creation_input_tokens,
            get("cache_creation_input_tokens"),
        );
        set(
            &mut self.cache_read_input_tokens,
            get("cache_read_input_tokens"),
        );
        if let Some(cc) = v.get("cache_creation") {
            let g = |k: &str| cc.get(k).and_then(Value::as_u64);
            set(
                &mut self.ephemeral_5m_input_tokens,
                g("ephemeral_5m_input_tokens"),
            );
            set(
                &mut self.ephemeral_1h_input_tokens,
                g("ephemeral_1h_input_tokens"),
            );
        }
        self.clamped |= clamped;
    }

    /// True when the response reports any cache field (so cache figures are observed).
    pub fn has_cache_fields(&self) -> bool {
        self.cache_creation_input_tokens.is_some() || self.cache_read_input_tokens.is_some()
    }

    /// All input tokens: uncached + cache write + cache read.
    pub fn total_input(&self) -> u64 {
        self.input_tokens
            .unwrap_or(0)
            .saturating_add(self.cache_creation_input_tokens.unwrap_or(0))
            .saturating_add(self.cache_read_input_tokens.unwrap_or(0))
    }
}

/// agentwire's token estimate for `bytes` of request JSON: one token per 4 bytes, rounded
/// up. A documented heuristic (English prose and JSON average 3.5–4.5 bytes per token for
/// Claude models); used where no recorded usage exists, and always labelled an estimate.
pub fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_is_cumulative_overwrite() {
        let mut u = Usage::from_value(&json!({"input_tokens":10,"output_tokens":1,
            "cache_read_input_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":3}}));
        u.merge(&json!({"output_tokens":42}));
        assert_eq!(u.output_tokens, Some(42));
        assert_eq!(u.input_tokens, Some(10));
        assert_eq!(u.ephemeral_5m_input_tokens, Some(3));
        assert_eq!(u.total_input(), 15);
        assert!(u.has_cache_fields());
    }

    #[test]
    fn estimate_rounds_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(8), 2);
        assert_eq!(estimate_tokens(9), 3);
    }
}
