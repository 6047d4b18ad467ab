//! Gemini `usageMetadata` as canonical usage.
//!
//! Source: Gemini API reference, "Generating content", `UsageMetadata`
//! (`promptTokenCount`, `cachedContentTokenCount`, `candidatesTokenCount`,
//! `toolUsePromptTokenCount`, `thoughtsTokenCount`, `totalTokenCount`), read 2026-12-02
//! through the project's search tool; and Gemini CLI 0.61.0, which reads
//! `promptTokenCount` as *including* `cachedContentTokenCount` (its `--output-format json`
//! gave prompt 1200, cached 1024, input 176 for those figures; `../shared/agents.md` §2.4).
//!
//! Conversion: uncached input = `promptTokenCount` − `cachedContentTokenCount` +
//! `toolUsePromptTokenCount` (the tool-use prompt is input beside the prompt:
//! `totalTokenCount` is the sum of all four counts); cache read = `cachedContentTokenCount`;
//! output = `candidatesTokenCount` + `thoughtsTokenCount` (thinking is billed as output,
//! and `candidatesTokenCount` leaves it out), with the thoughts as the reasoning tokens.
//! Gemini reports no cache write (implicit caching writes for free): the write figure is
//! "not reported", never zero.

use serde_json::Value;

use super::super::usage::{take_figure, Usage};

/// Read a `usageMetadata` object (see the module header). A figure the object does not
/// carry stays "not reported".
pub fn usage_of(v: &Value) -> Usage {
    let mut problems = Vec::new();
    let mut figure = |name: &str| {
        let mut slot = None;
        take_figure(&mut slot, v.get(name), name, &mut problems);
        slot
    };
    let prompt = figure("promptTokenCount");
    let cached = figure("cachedContentTokenCount");
    let tool_prompt = figure("toolUsePromptTokenCount");
    let candidates = figure("candidatesTokenCount");
    let thoughts = figure("thoughtsTokenCount");
    let mut u = Usage {
        cache_read_input_tokens: cached,
        reasoning_output_tokens: thoughts,
        ..Usage::default()
    };
    if prompt.is_some() || tool_prompt.is_some() {
        let total = prompt.unwrap_or(0);
        let read = cached.unwrap_or(0);
        if read > total {
            problems.push(format!(
                "usageMetadata.promptTokenCount is {total}, less than its cachedContentTokenCount ({read}); uncached input read as 0"
            ));
        }
        u.input_tokens = Some(total.saturating_sub(read) + tool_prompt.unwrap_or(0));
    }
    if candidates.is_some() || thoughts.is_some() {
        u.output_tokens = Some(candidates.unwrap_or(0) + thoughts.unwrap_or(0));
    }
    u.problems = problems;
    u
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompt_includes_cached_and_thoughts_are_output() {
        // The figures Gemini CLI 0.61.0 was answered with: 1200 prompt, 1024 cached.
        let u = usage_of(&json!({"promptTokenCount":1200,"candidatesTokenCount":12,
            "totalTokenCount":1212,"cachedContentTokenCount":1024}));
        assert_eq!(u.input_tokens, Some(176));
        assert_eq!(u.cache_read_input_tokens, Some(1024));
        assert_eq!(u.cache_creation_input_tokens, None);
        assert_eq!(u.output_tokens, Some(12));
        // 100 + 7 tool-use prompt = 107 uncached; 20 + 30 thoughts = 50 output.
        let u = usage_of(&json!({"promptTokenCount":100,"toolUsePromptTokenCount":7,
            "candidatesTokenCount":20,"thoughtsTokenCount":30}));
        assert_eq!(u.input_tokens, Some(107));
        assert_eq!(u.cache_read_input_tokens, None);
        assert_eq!(
            (u.output_tokens, u.reasoning_output_tokens),
            (Some(50), Some(30))
        );
        // Nothing reported is not recorded, never zero.
        let u = usage_of(&json!({}));
        assert_eq!((u.input_tokens, u.output_tokens), (None, None));
        let bad = usage_of(&json!({"promptTokenCount":5,"cachedContentTokenCount":9}));
        assert_eq!(bad.input_tokens, Some(0));
        assert_eq!(bad.problems.len(), 1);
    }
}
