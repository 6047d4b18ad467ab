//! The built-in price rows: Anthropic's (this file), OpenAI's ([`super::openai`]) and
//! Google's ([`crate::api::gemini::prices`]), assembled into [`PriceTable::builtin`].

use super::openai::openai_rows;
use super::table::{ModelPrice, PriceTable};

/// Where the built-in prices come from.
pub const PRICE_SOURCE: &str = "https://platform.claude.com/docs/en/about-claude/pricing";
/// Where the built-in minimum cacheable lengths come from.
pub const MINIMUM_SOURCE: &str =
    "https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations";
/// When the built-in rows were read (ISO date).
pub const PRICE_DATE: &str = "2026-11-30";
/// One Anthropic row: (row name, model ids, input, output, cache read, minimum).
type AnthropicRow = (&'static str, &'static [&'static str], f64, f64, f64, u64);

/// Anthropic's rows as the pricing page lists them: (row name, the model ids it prices,
/// input, output, cache read in USD per million tokens, minimum cacheable prompt in
/// tokens). Cache writes follow the standard multipliers ([`row`]).
const ANTHROPIC: &[AnthropicRow] = &[
    (
        "claude-fable-5-1",
        &["claude-fable-5-1"],
        10.0,
        50.0,
        0.25,
        512,
    ),
    (
        "claude-mythos-5-1",
        &["claude-mythos-5-1"],
        10.0,
        50.0,
        0.25,
        512,
    ),
    ("claude-fable-5", &["claude-fable-5"], 10.0, 50.0, 1.0, 512),
    (
        "claude-mythos-5",
        &["claude-mythos-5"],
        10.0,
        50.0,
        1.0,
        512,
    ),
    (
        "claude-opus-5-5",
        &["claude-opus-5-5"],
        4.0,
        20.0,
        0.20,
        512,
    ),
    ("claude-opus-5", &["claude-opus-5"], 5.0, 25.0, 0.50, 512),
    (
        "claude-opus-4-8",
        &["claude-opus-4-8"],
        5.0,
        25.0,
        0.50,
        1024,
    ),
    (
        "claude-opus-4-7",
        &["claude-opus-4-7"],
        5.0,
        25.0,
        0.50,
        2048,
    ),
    (
        "claude-opus-4-6",
        &["claude-opus-4-6"],
        5.0,
        25.0,
        0.50,
        4096,
    ),
    (
        "claude-opus-4-5",
        &["claude-opus-4-5"],
        5.0,
        25.0,
        0.50,
        4096,
    ),
    (
        "claude-opus-4-1",
        &["claude-opus-4-1"],
        15.0,
        75.0,
        1.50,
        1024,
    ),
    (
        "claude-opus-4",
        &["claude-opus-4", "claude-opus-4-0"],
        15.0,
        75.0,
        1.50,
        1024,
    ),
    ("claude-3-opus", &["claude-3-opus"], 15.0, 75.0, 1.50, 1024),
    (
        "claude-sonnet-5-5",
        &["claude-sonnet-5-5"],
        2.0,
        10.0,
        0.10,
        512,
    ),
    (
        "claude-sonnet-5",
        &["claude-sonnet-5"],
        2.0,
        10.0,
        0.20,
        1024,
    ),
    (
        "claude-sonnet-4-6",
        &["claude-sonnet-4-6"],
        3.0,
        15.0,
        0.30,
        1024,
    ),
    (
        "claude-sonnet-4-5",
        &["claude-sonnet-4-5"],
        3.0,
        15.0,
        0.30,
        1024,
    ),
    (
        "claude-sonnet-4",
        &["claude-sonnet-4", "claude-sonnet-4-0"],
        3.0,
        15.0,
        0.30,
        1024,
    ),
    (
        "claude-3-7-sonnet",
        &["claude-3-7-sonnet", "claude-3-7-sonnet-latest"],
        3.0,
        15.0,
        0.30,
        1024,
    ),
    (
        "claude-haiku-4-5",
        &["claude-haiku-4-5"],
        1.0,
        5.0,
        0.10,
        4096,
    ),
    (
        "claude-3-5-haiku",
        &["claude-3-5-haiku", "claude-3-5-haiku-latest"],
        0.8,
        4.0,
        0.08,
        2048,
    ),
    (
        "claude-3-haiku",
        &["claude-3-haiku"],
        0.25,
        1.25,
        0.03,
        2048,
    ),
];

/// A row with the standard cache multipliers (5m write 1.25×, 1h write 2× input) and the
/// given cache-read price.
fn row(model: &str, ids: &[&str], input: f64, output: f64, read: f64, min: u64) -> ModelPrice {
    ModelPrice {
        model: model.to_string(),
        ids: ids.iter().map(|s| s.to_string()).collect(),
        input,
        output,
        write_5m: input * 1.25,
        write_1h: input * 2.0,
        read,
        min_cacheable: min,
        source: None,
        checked: None,
    }
}

impl PriceTable {
    /// The built-in table (see the module header of [`crate::api::prices`] for sources and
    /// date).
    pub fn builtin() -> Self {
        let mut models: Vec<ModelPrice> = ANTHROPIC
            .iter()
            .map(|&(model, ids, input, output, read, min)| {
                row(model, ids, input, output, read, min)
            })
            .collect();
        // Claude Haiku 3's cache writes are not 1.25×/2× input on the pricing page.
        if let Some(h) = models.iter_mut().find(|r| r.model == "claude-3-haiku") {
            h.write_5m = 0.30;
            h.write_1h = 0.50;
        }
        for r in &mut models {
            r.source = Some(format!("{PRICE_SOURCE}; minimum: {MINIMUM_SOURCE}"));
            r.checked = Some(PRICE_DATE.to_string());
        }
        models.extend(openai_rows());
        models.extend(crate::api::gemini::prices::rows());
        PriceTable {
            source: PRICE_SOURCE.to_string(),
            date: PRICE_DATE.to_string(),
            models,
        }
    }
}
