//! The Gemini rows of the built-in price table: Gemini Developer API, Standard (paid)
//! tier, prompts up to 200K tokens, USD per million tokens.
//!
//! Sources, read 2026-12-02 through the project's search tool:
//! - input and output: Google, "Gemini Developer API pricing"
//!   (<https://ai.google.dev/gemini-api/docs/pricing>), as transcribed verbatim from the
//!   page on 2026-10-07 (`api-evangelist/deepmind`, `plans/deepmind-plans-pricing.yml`);
//!   Gemini 3.8 Flash's rates hold "through December 31, 2026" ($1.50 / $7.50 from
//!   January 1, 2027); output includes thinking tokens. Gemini 2.5 Pro's output rate is
//!   from the `gemini-cost` crate's table (0.1.0, docs.rs), which quotes the same page;
//! - cached input (an implicit-cache hit): 10% of the input rate, the ratio the pricing
//!   page gives for the Gemini 2.5 and later models (e.g. Gemini 3.1 Pro: $2.00 input,
//!   $0.20 cached, as quoted by techjacksolutions.com on 2026-06-09);
//! - cache writes: not billed by implicit caching, so what is written costs ordinary
//!   input: `write_5m` and `write_1h` repeat the input rate;
//! - minimum cacheable prompt: [`super::cache::min_cacheable`].
//!
//! Models no source priced (Gemini 2.5 Flash's output, Gemini 4 Argon) are left out:
//! unpriced, never guessed.

use crate::api::prices::ModelPrice;

/// Where the rows come from.
pub const SOURCE: &str = "https://ai.google.dev/gemini-api/docs/pricing";

/// The Gemini rows (see the module header).
pub fn rows() -> Vec<ModelPrice> {
    let r = |model: &str, input: f64, output: f64, _note: &str| {
        ModelPrice {
        model: model.to_string(),
        ids: vec![model.to_string()],
        input,
        output,
        write_5m: input,
        write_1h: input,
        read: input / 10.0,
        min_cacheable: super::cache::min_cacheable(model),
        source: Some(format!(
            "{SOURCE} (transcribed 2026-10-07; cached input 10% of input); minimum: https://ai.google.dev/gemini-api/docs/caching"
        )),
        checked: Some("2026-12-02".into()),
    }
    };
    vec![
        r("gemini-3.8-flash", 0.75, 3.75, "; through 2026-12-31"),
        r("gemini-3.5-flash", 1.50, 9.00, ""),
        r("gemini-3.5-flash-lite", 0.30, 2.50, ""),
        r(
            "gemini-3.1-pro-preview",
            2.00,
            12.00,
            "; prompts up to 200K tokens",
        ),
        r(
            "gemini-2.5-pro",
            1.25,
            10.00,
            "; output from the gemini-cost crate",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_input_is_a_tenth_of_input() {
        let rows = rows();
        let flash = rows.iter().find(|r| r.model == "gemini-3.8-flash").unwrap();
        assert!((flash.read - 0.075).abs() < 1e-12);
        assert_eq!(flash.min_cacheable, 4096);
        let pro = rows
            .iter()
            .find(|r| r.model == "gemini-3.1-pro-preview")
            .unwrap();
        assert!((pro.read - 0.20).abs() < 1e-12);
    }
}
