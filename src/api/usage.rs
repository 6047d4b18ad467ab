//! Token usage as the API reports it, and agentwire's own token estimate.
//!
//! The canonical figures are the Messages API's (source: Messages API reference, `usage`
//! object): `input_tokens` is the *uncached* input, beside `cache_read_input_tokens`,
//! `cache_creation_input_tokens` and the breakdown
//! `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`.
//!
//! OpenAI counts differently (source: OpenAI API reference, Responses `usage` and Chat
//! Completions `usage`; "Prompt caching" guide): its input figure (`input_tokens`,
//! `prompt_tokens`) *includes* the cached tokens (`…_details.cached_tokens`) and, on
//! models that report cache writes, the written ones (`…_details.cache_write_tokens`);
//! reasoning tokens are part of the output. [`Usage::from_openai`] converts: uncached =
//! input − cached − written. A model that reports no write figure leaves
//! `cache_creation_input_tokens` not reported, never zero.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::prices::Tokens;

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
    /// Reasoning tokens, part of `output_tokens` (OpenAI
    /// `output_tokens_details.reasoning_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_output_tokens: Option<u64>,
    /// What was wrong with the figures as reported, one sentence each (a figure above
    /// [`MAX_TOKENS`], clamped; a negative, fractional or non-numeric one, read as not
    /// reported). Readers show them as problems of the response
    /// ([`super::ResponseMessage::stream_problems`]), so no figure is changed silently.
    #[serde(skip)]
    pub problems: Vec<String>,
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

    /// Read an OpenAI usage object whose members are named by `names` (Responses or Chat
    /// Completions), converted to the canonical figures (see the module header).
    pub fn from_openai(v: &Value, names: &OpenAiNames) -> Usage {
        let mut u = Usage::default();
        let details = v.get(names.input_details);
        let mut input = None;
        let mut problems = Vec::new();
        let fields = [
            (&mut input, v.get(names.input), names.input.to_string()),
            (
                &mut u.output_tokens,
                v.get(names.output),
                names.output.to_string(),
            ),
            (
                &mut u.cache_read_input_tokens,
                details.and_then(|d| d.get("cached_tokens")),
                format!("{}.cached_tokens", names.input_details),
            ),
            (
                &mut u.cache_creation_input_tokens,
                details.and_then(|d| d.get("cache_write_tokens")),
                format!("{}.cache_write_tokens", names.input_details),
            ),
            (
                &mut u.reasoning_output_tokens,
                v.get(names.output_details)
                    .and_then(|d| d.get("reasoning_tokens")),
                format!("{}.reasoning_tokens", names.output_details),
            ),
        ];
        for (slot, value, name) in fields {
            take_figure(slot, value, &name, &mut problems);
        }
        let cached = u.cache_read_input_tokens.unwrap_or(0);
        let written = u.cache_creation_input_tokens.unwrap_or(0);
        if let Some(total) = input {
            if cached.saturating_add(written) > total {
                problems.push(format!(
                    "usage.{} is {total}, less than its cached ({cached}) and written ({written}) tokens; uncached input read as 0",
                    names.input
                ));
            }
            u.input_tokens = Some(total.saturating_sub(cached).saturating_sub(written));
        }
        u.ephemeral_5m_input_tokens = None;
        u.problems = problems;
        u
    }

    /// Overwrite the fields present in `v` (streaming usage is cumulative, so later
    /// figures replace earlier ones).
    pub fn merge(&mut self, v: &Value) {
        let cc = v.get("cache_creation");
        let fields = [
            (
                &mut self.input_tokens,
                v.get("input_tokens"),
                "input_tokens",
            ),
            (
                &mut self.output_tokens,
                v.get("output_tokens"),
                "output_tokens",
            ),
            (
                &mut self.cache_creation_input_tokens,
                v.get("cache_creation_input_tokens"),
                "cache_creation_input_tokens",
            ),
            (
                &mut self.cache_read_input_tokens,
                v.get("cache_read_input_tokens"),
                "cache_read_input_tokens",
            ),
            (
                &mut self.ephemeral_5m_input_tokens,
                cc.and_then(|c| c.get("ephemeral_5m_input_tokens")),
                "cache_creation.ephemeral_5m_input_tokens",
            ),
            (
                &mut self.ephemeral_1h_input_tokens,
                cc.and_then(|c| c.get("ephemeral_1h_input_tokens")),
                "cache_creation.ephemeral_1h_input_tokens",
            ),
        ];
        for (slot, value, name) in fields {
            take_figure(slot, value, name, &mut self.problems);
        }
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

    /// The figures as [`Tokens`] (the 1-hour writes are the reported
    /// `ephemeral_1h_input_tokens`, at most all writes; the rest are 5-minute writes).
    /// `None` when the usage has neither input nor output tokens.
    pub fn tokens(&self) -> Option<Tokens> {
        if self.input_tokens.is_none() && self.output_tokens.is_none() {
            return None;
        }
        let write = self.cache_creation_input_tokens.unwrap_or(0);
        let w1 = self.ephemeral_1h_input_tokens.unwrap_or(0).min(write);
        Some(Tokens {
            uncached: self.input_tokens.unwrap_or(0),
            read: self.cache_read_input_tokens.unwrap_or(0),
            write_5m: write - w1,
            write_1h: w1,
            output: self.output_tokens.unwrap_or(0),
        })
    }
}

/// The member names of an OpenAI usage object.
#[derive(Clone, Copy, Debug)]
pub struct OpenAiNames {
    /// All input tokens (`input_tokens`, `prompt_tokens`).
    pub input: &'static str,
    /// Output tokens (`output_tokens`, `completion_tokens`).
    pub output: &'static str,
    /// The input breakdown (`input_tokens_details`, `prompt_tokens_details`).
    pub input_details: &'static str,
    /// The output breakdown (`output_tokens_details`, `completion_tokens_details`).
    pub output_details: &'static str,
}

/// The Responses API's usage names.
pub const RESPONSES_USAGE: OpenAiNames = OpenAiNames {
    input: "input_tokens",
    output: "output_tokens",
    input_details: "input_tokens_details",
    output_details: "output_tokens_details",
};

/// The Chat Completions API's usage names.
pub const CHAT_USAGE: OpenAiNames = OpenAiNames {
    input: "prompt_tokens",
    output: "completion_tokens",
    input_details: "prompt_tokens_details",
    output_details: "completion_tokens_details",
};

/// Store the figure `value` (named `name` in messages) in `slot`: absent or null leaves
/// it; a value that is not a count replaces it with "not reported" (a stream's final
/// figure overrides its placeholder) and says so in `problems`, once.
pub(super) fn take_figure(
    slot: &mut Option<u64>,
    value: Option<&Value>,
    name: &str,
    problems: &mut Vec<String>,
) {
    let value = match value {
        None | Some(Value::Null) => return,
        Some(value) => value,
    };
    let (n, problem) = figure(value);
    *slot = n.map(|n| n.min(MAX_TOKENS));
    if let Some(why) = problem {
        let p = format!("usage.{name} is {value}: {why}", value = short(value));
        if !problems.contains(&p) {
            problems.push(p);
        }
    }
}

/// A reported figure as a token count, and what was wrong with it: a count above
/// [`MAX_TOKENS`] (an integer or an integral number such as `1e30`) is kept, to be clamped;
/// anything else that is not a non-negative whole number is not a count.
fn figure(v: &Value) -> (Option<u64>, Option<String>) {
    let above = format!("above {MAX_TOKENS} tokens, clamped to that bound");
    if let Some(n) = v.as_u64() {
        let problem = (n > MAX_TOKENS).then_some(above);
        return (Some(n), problem);
    }
    match v.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 => {
            // Integral and non-negative, written as a float; `as` saturates.
            let n = f as u64;
            (Some(n), (n > MAX_TOKENS).then_some(above))
        }
        _ => (
            None,
            Some("not a token count (a non-negative whole number), read as not reported".into()),
        ),
    }
}

/// A reported value for a message: its JSON text, cut at 40 characters.
fn short(v: &Value) -> String {
    let t = v.to_string();
    match t.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t,
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

    /// OpenAI's input includes the cached and written tokens (the Prompt caching guide's
    /// example: 2,600 input = 2,000 read + 400 written + 200 neither).
    #[test]
    fn openai_input_includes_cached_and_written_tokens() {
        let u = Usage::from_openai(
            &json!({"input_tokens":2600,"input_tokens_details":{"cached_tokens":2000,"cache_write_tokens":400},
                    "output_tokens":12,"output_tokens_details":{"reasoning_tokens":5},"total_tokens":2612}),
            &RESPONSES_USAGE,
        );
        assert_eq!(u.input_tokens, Some(200));
        assert_eq!(u.cache_read_input_tokens, Some(2000));
        assert_eq!(u.cache_creation_input_tokens, Some(400));
        assert_eq!(u.output_tokens, Some(12));
        assert_eq!(u.reasoning_output_tokens, Some(5));
        assert_eq!(u.total_input(), 2600);
        // No write figure (models before GPT-5.6): not reported, not zero.
        let u = Usage::from_openai(
            &json!({"prompt_tokens":1200,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens":3}),
            &CHAT_USAGE,
        );
        assert_eq!(
            (
                u.input_tokens,
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens
            ),
            (Some(176), Some(1024), None)
        );
        let u = Usage::from_openai(
            &json!({"input_tokens":10,"input_tokens_details":{"cached_tokens":20}}),
            &RESPONSES_USAGE,
        );
        assert_eq!(u.input_tokens, Some(0));
        assert!(
            u.problems[0].contains("less than its cached (20)"),
            "{:?}",
            u.problems
        );
    }

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
    fn odd_figures_are_named_never_changed_silently() {
        // Found by an adversarial test: -5, 1e30 and "12" were read as 0 without a word.
        let u = Usage::from_value(&json!({"input_tokens":-5,"output_tokens":1e30,
            "cache_read_input_tokens":"12","cache_creation_input_tokens":null,
            "cache_creation":{"ephemeral_5m_input_tokens":2.5,"ephemeral_1h_input_tokens":4.0}}));
        assert_eq!(u.input_tokens, None);
        assert_eq!(u.output_tokens, Some(MAX_TOKENS));
        assert!(u.problems.iter().any(|p| p.contains("clamped")));
        assert_eq!(u.cache_read_input_tokens, None);
        assert_eq!(
            u.cache_creation_input_tokens, None,
            "null is not reported, no problem"
        );
        assert_eq!(u.ephemeral_5m_input_tokens, None);
        assert_eq!(u.ephemeral_1h_input_tokens, Some(4));
        assert_eq!(u.problems.len(), 4, "{:?}", u.problems);
        assert!(u.problems[0].starts_with("usage.input_tokens is -5: not a token count"));
        assert!(
            u.problems[1].starts_with("usage.output_tokens is 1e")
                && u.problems[1].contains(": above 4294967296 tokens, clamped"),
            "{}",
            u.problems[1]
        );
        assert!(u.problems[2].starts_with("usage.cache_read_input_tokens is \"12\": not a"));
        assert!(u.problems[3].starts_with("usage.cache_creation.ephemeral_5m_input_tokens is 2.5"));
        // The same figure merged twice (message_start, message_delta) is named once.
        let mut v = Usage::from_value(&json!({"output_tokens":-1}));
        v.merge(&json!({"output_tokens":-1}));
        assert_eq!(v.problems.len(), 1);
        // Found by a second round: a bad final figure left the stream's placeholder (1)
        // in place while the warning said "read as not reported".
        let mut w = Usage::from_value(&json!({"input_tokens":5,"output_tokens":1}));
        w.merge(&json!({"output_tokens":-9}));
        assert_eq!((w.input_tokens, w.output_tokens), (Some(5), None));
        assert!(Usage::from_value(&json!({"input_tokens":7}))
            .problems
            .is_empty());
    }

    #[test]
    fn estimate_rounds_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(8), 2);
        assert_eq!(estimate_tokens(9), 3);
    }
}
