//! OpenAI's price rows (Standard tier), each citing its page.

use super::table::ModelPrice;

/// Where OpenAI's prompt-cache rules and minimum come from.
pub const OPENAI_CACHE_SOURCE: &str =
    "https://developers.openai.com/api/docs/guides/prompt-caching";

/// The OpenAI rows: Standard tier, prompts up to 272K tokens, USD per million tokens
/// (input, output, cache write, cached input), read 2026-12-01 through the project's search
/// tool; each row cites its page. Cache writes are billed only from GPT-5.6 on (1.25×
/// input, "Prompt caching"); for earlier models the write rate is the input rate, since
/// what is written is billed as ordinary input. OpenAI has no 1-hour write: `write_1h`
/// repeats `write_5m`. Minimum cacheable prompt: 1,024 tokens for every model. Models
/// whose rates no page gave (`gpt-6.2-astra`'s cache rates, `gpt-daybreak-*`) are left out:
/// unpriced, never guessed.
pub(super) fn openai_rows() -> Vec<ModelPrice> {
    const OFFICIAL: &str = "https://developers.openai.com/api/docs/models/";
    let r =
        |model: &str, input: f64, read: f64, write: f64, output: f64, source: String| ModelPrice {
            model: model.to_string(),
            ids: vec![model.to_string()],
            input,
            output,
            write_5m: write,
            write_1h: write,
            read,
            min_cacheable: crate::api::cache::openai::MIN_CACHEABLE,
            source: Some(format!("{source}; cache: {OPENAI_CACHE_SOURCE}")),
            checked: Some("2026-12-01".into()),
        };
    let official = |m: &str| format!("{OFFICIAL}{m}");
    vec![
        r("gpt-6.2-sol", 2.00, 0.10, 2.50, 10.00, official("gpt-6.2-sol")),
        r("gpt-6-sol", 2.00, 0.20, 2.50, 10.00, official("gpt-6-sol")),
        r("gpt-5.6-luna", 0.20, 0.02, 0.25, 1.20, official("gpt-5.6-luna")),
        r(
            "gpt-5.6-sol",
            5.00,
            0.50,
            6.25,
            30.00,
            format!("{} (list price; the page's promotion ran until 2026-11-21)", official("gpt-5.6-sol")),
        ),
        r("gpt-6.1-sol", 2.00, 0.10, 2.50, 10.00, "https://github.com/amine123max/Codex-Manager/releases/tag/0.4.7 (quoting the model page, 2026-09-30)".into()),
        r("gpt-6.1-terra", 1.00, 0.05, 1.25, 5.00, "https://docs.litellm.ai/blog/gpt-6-1-terra".into()),
        r("gpt-6-astra", 10.00, 1.00, 12.50, 50.00, "https://github.com/zJay26/codex-usage/releases/tag/v2.3.6 (2026-09-05)".into()),
        r("gpt-6-luna", 0.10, 0.01, 0.125, 0.50, "https://github.com/merefield/codexometer/releases/tag/v0.18.4 (2026-09-22)".into()),
        r("gpt-5.6-terra", 2.00, 0.20, 2.50, 12.00, "https://docs.laozhang.ai/en/announcements/gpt-5-6-pricing-2026-07.md".into()),
        r("gpt-5.5", 5.00, 0.50, 5.00, 30.00, "https://developers.openai.com/api/docs/pricing (the page as captured on 2026-06-17)".into()),
    ]
}
