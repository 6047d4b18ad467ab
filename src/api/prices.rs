//! Model prices and prompt-cache minimums: the built-in table (every row with its source
//! and the date it was read), loading an override file, and matching a model id to a row.
//!
//! Sources of the built-in rows, read 2026-11-30 (stored copies reached through the
//! project's search tool): Anthropic, "Pricing", "Model pricing"
//! (<https://platform.claude.com/docs/en/about-claude/pricing>: base input, 5m and 1h
//! cache writes, cache hits and refreshes, output, USD per million tokens; the cache-hit
//! rate is 0.05× input for Claude Opus 5.5 and Sonnet 5.5 and 0.025× for Fable 5.1 and
//! Mythos 5.1, per "Models overview"); minimum cacheable lengths from "Prompt caching",
//! "Cache limitations" (<https://platform.claude.com/docs/en/build-with-claude/prompt-caching>).
//!
//! A model id matches a row only by its exact id (a `-YYYYMMDD` date suffix and a
//! `[…]` variant suffix such as `[1m]` are ignored). An id no row names is *unpriced*:
//! never priced with another model's row.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ApiError;

/// Where the built-in prices come from.
pub const PRICE_SOURCE: &str = "https://platform.claude.com/docs/en/about-claude/pricing";
/// Where the built-in minimum cacheable lengths come from.
pub const MINIMUM_SOURCE: &str =
    "https://platform.claude.com/docs/en/build-with-claude/prompt-caching#cache-limitations";
/// When the built-in rows were read (ISO date).
pub const PRICE_DATE: &str = "2026-11-30";
/// Minimum cacheable length the simulation assumes for an unpriced model, in tokens (the
/// most common documented minimum); the report's warning says so.
pub const UNKNOWN_MIN_CACHEABLE: u64 = 1024;

/// Prices of one model row, in USD per million tokens, and its minimum cacheable prompt
/// length in tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Row name, e.g. `claude-opus-4-5`.
    pub model: String,
    /// Model ids this row prices, matched exactly (after dropping a `-YYYYMMDD` date
    /// and a `[…]` suffix), e.g. `["claude-opus-4-5"]`.
    #[serde(alias = "matches")]
    pub ids: Vec<String>,
    /// Uncached input, USD per MTok.
    pub input: f64,
    /// Output, USD per MTok.
    pub output: f64,
    /// Cache write with the 5-minute TTL, USD per MTok.
    pub write_5m: f64,
    /// Cache write with the 1-hour TTL, USD per MTok.
    pub write_1h: f64,
    /// Cache read (hit or refresh), USD per MTok.
    pub read: f64,
    /// Minimum cacheable prompt length in tokens: shorter prefixes are never cached.
    pub min_cacheable: u64,
    /// Where the figures come from (defaults to the table's source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When they were read (ISO date; defaults to the table's date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
}

/// A price table: rows plus where they come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// Citation (URL or file) of the figures.
    pub source: String,
    /// Date the figures were read (ISO 8601).
    pub date: String,
    /// Rows.
    pub models: Vec<ModelPrice>,
}

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

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
}

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
fn openai_rows() -> Vec<ModelPrice> {
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
            min_cacheable: super::cache::openai::MIN_CACHEABLE,
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

/// The id without a `-YYYYMMDD` date suffix and a `[…]` variant suffix, lowercase.
fn base_id(model: &str) -> String {
    let mut m = model.trim().to_ascii_lowercase();
    if let Some(i) = m.find('[') {
        m.truncate(i);
    }
    if let Some((head, tail)) = m.rsplit_once('-') {
        if tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit()) {
            m = head.to_string();
        }
    }
    m
}

impl PriceTable {
    /// The built-in table (see the module header for sources and date). A data table, one
    /// row per model as the pricing page lists them: it is long because the table is, and
    /// splitting it would scatter the rows a reader checks against the page.
    pub fn builtin() -> Self {
        let mut models = vec![
            row(
                "claude-fable-5-1",
                &["claude-fable-5-1"],
                10.0,
                50.0,
                0.25,
                512,
            ),
            row(
                "claude-mythos-5-1",
                &["claude-mythos-5-1"],
                10.0,
                50.0,
                0.25,
                512,
            ),
            row("claude-fable-5", &["claude-fable-5"], 10.0, 50.0, 1.0, 512),
            row(
                "claude-mythos-5",
                &["claude-mythos-5"],
                10.0,
                50.0,
                1.0,
                512,
            ),
            row(
                "claude-opus-5-5",
                &["claude-opus-5-5"],
                4.0,
                20.0,
                0.20,
                512,
            ),
            row("claude-opus-5", &["claude-opus-5"], 5.0, 25.0, 0.50, 512),
            row(
                "claude-opus-4-8",
                &["claude-opus-4-8"],
                5.0,
                25.0,
                0.50,
                1024,
            ),
            row(
                "claude-opus-4-7",
                &["claude-opus-4-7"],
                5.0,
                25.0,
                0.50,
                2048,
            ),
            row(
                "claude-opus-4-6",
                &["claude-opus-4-6"],
                5.0,
                25.0,
                0.50,
                4096,
            ),
            row(
                "claude-opus-4-5",
                &["claude-opus-4-5"],
                5.0,
                25.0,
                0.50,
                4096,
            ),
            row(
                "claude-opus-4-1",
                &["claude-opus-4-1"],
                15.0,
                75.0,
                1.50,
                1024,
            ),
            row(
                "claude-opus-4",
                &["claude-opus-4", "claude-opus-4-0"],
                15.0,
                75.0,
                1.50,
                1024,
            ),
            row("claude-3-opus", &["claude-3-opus"], 15.0, 75.0, 1.50, 1024),
            row(
                "claude-sonnet-5-5",
                &["claude-sonnet-5-5"],
                2.0,
                10.0,
                0.10,
                512,
            ),
            row(
                "claude-sonnet-5",
                &["claude-sonnet-5"],
                2.0,
                10.0,
                0.20,
                1024,
            ),
            row(
                "claude-sonnet-4-6",
                &["claude-sonnet-4-6"],
                3.0,
                15.0,
                0.30,
                1024,
            ),
            row(
                "claude-sonnet-4-5",
                &["claude-sonnet-4-5"],
                3.0,
                15.0,
                0.30,
                1024,
            ),
            row(
                "claude-sonnet-4",
                &["claude-sonnet-4", "claude-sonnet-4-0"],
                3.0,
                15.0,
                0.30,
                1024,
            ),
            row(
                "claude-3-7-sonnet",
                &["claude-3-7-sonnet", "claude-3-7-sonnet-latest"],
                3.0,
                15.0,
                0.30,
                1024,
            ),
            row(
                "claude-haiku-4-5",
                &["claude-haiku-4-5"],
                1.0,
                5.0,
                0.10,
                4096,
            ),
            row(
                "claude-3-5-haiku",
                &["claude-3-5-haiku", "claude-3-5-haiku-latest"],
                0.8,
                4.0,
                0.08,
                2048,
            ),
            row(
                "claude-3-haiku",
                &["claude-3-haiku"],
                0.25,
                1.25,
                0.03,
                2048,
            ),
        ];
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
        models.extend(super::gemini::prices::rows());
        PriceTable {
            source: PRICE_SOURCE.to_string(),
            date: PRICE_DATE.to_string(),
            models,
        }
    }

    /// Read a table from a JSON file with the shape of [`PriceTable`]:
    /// `{"source", "date", "models": [{"model", "ids", "input", "output", "write_5m",
    /// "write_1h", "read", "min_cacheable", optional "source", "checked"}]}` (see
    /// `docs/analyze.md`).
    ///
    /// Errors: [`ApiError::Prices`] naming the file when it cannot be read or parsed.
    pub fn from_file(path: &Path) -> Result<Self, ApiError> {
        let err = |message: String| ApiError::Prices {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        if !super::is_object_text(&text) {
            return Err(err(
                "a price table is one JSON object: {\"source\", \"date\", \"models\": [...]}"
                    .into(),
            ));
        }
        let t: PriceTable = serde_json::from_str(&text).map_err(|e| {
            err(format!("{e} (expected {{\"source\",\"date\",\"models\":[{{\"model\",\"ids\",\"input\",\"output\",\"write_5m\",\"write_1h\",\"read\",\"min_cacheable\"}}]}})"))
        })?;
        if t.models.is_empty() {
            return Err(err("the table has no models".into()));
        }
        // Every price is a finite, non-negative USD amount per million tokens, at most
        // $1,000,000 (so costs stay finite); minimum cacheable prompts are at most 10M.
        for m in &t.models {
            for (name, v) in [
                ("input", m.input),
                ("output", m.output),
                ("write_5m", m.write_5m),
                ("write_1h", m.write_1h),
                ("read", m.read),
            ] {
                if !v.is_finite() || !(0.0..=1e6).contains(&v) {
                    return Err(err(format!(
                        "model {:?}: {name} = {v} is not a price in USD per million tokens from 0 to 1000000",
                        m.model
                    )));
                }
            }
            if m.min_cacheable > 10_000_000 {
                return Err(err(format!(
                    "model {:?}: min_cacheable = {} is above 10000000 tokens",
                    m.model, m.min_cacheable
                )));
            }
        }
        Ok(t)
    }

    /// The row that prices a model id, or `None` when no row names it (the model is then
    /// reported as unpriced).
    pub fn lookup(&self, model: &str) -> Option<&ModelPrice> {
        let id = base_id(model);
        self.models
            .iter()
            .find(|r| r.ids.iter().any(|m| base_id(m) == id))
    }

    /// The model's minimum cacheable length, or for an unpriced model its provider's
    /// documented minimum (Gemini: [`super::gemini::cache::min_cacheable`]), else
    /// [`UNKNOWN_MIN_CACHEABLE`].
    pub fn min_cacheable(&self, model: &str) -> u64 {
        let unknown = if base_id(model).starts_with("gemini-") {
            super::gemini::cache::min_cacheable(model)
        } else {
            UNKNOWN_MIN_CACHEABLE
        };
        self.lookup(model).map_or(unknown, |r| r.min_cacheable)
    }
}

/// Tokens of one model call by how they are billed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    /// Uncached input tokens.
    pub uncached: u64,
    /// Cache-read tokens.
    pub read: u64,
    /// Cache-write tokens with the 5-minute TTL.
    pub write_5m: u64,
    /// Cache-write tokens with the 1-hour TTL.
    pub write_1h: u64,
    /// Output tokens.
    pub output: u64,
}

impl Tokens {
    /// All cache-write tokens.
    pub fn write(&self) -> u64 {
        self.write_5m.saturating_add(self.write_1h)
    }

    /// All input tokens.
    pub fn input(&self) -> u64 {
        self.uncached
            .saturating_add(self.read)
            .saturating_add(self.write())
    }

    /// Field-wise sum, saturating (figures are clamped on read, see
    /// [`crate::api::MAX_TOKENS`], so this only matters for absurd totals).
    pub fn add(&mut self, o: &Tokens) {
        self.uncached = self.uncached.saturating_add(o.uncached);
        self.read = self.read.saturating_add(o.read);
        self.write_5m = self.write_5m.saturating_add(o.write_5m);
        self.write_1h = self.write_1h.saturating_add(o.write_1h);
        self.output = self.output.saturating_add(o.output);
    }
}

impl ModelPrice {
    /// Cost in USD of `t` tokens at this row's prices.
    pub fn cost(&self, t: &Tokens) -> f64 {
        (t.uncached as f64 * self.input
            + t.read as f64 * self.read
            + t.write_5m as f64 * self.write_5m
            + t.write_1h as f64 * self.write_1h
            + t.output as f64 * self.output)
            / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_ids_with_date_and_variant_suffixes() {
        let t = PriceTable::builtin();
        assert_eq!(t.lookup("claude-opus-4-1-20250805").unwrap().input, 15.0);
        assert_eq!(t.lookup("claude-opus-4-5-20251101").unwrap().input, 5.0);
        assert_eq!(t.lookup("claude-opus-5-5[1m]").unwrap().read, 0.20);
        assert_eq!(
            t.lookup("claude-3-5-haiku-20241022").unwrap().min_cacheable,
            2048
        );
        let p = t.lookup("claude-sonnet-4-5").unwrap();
        // 1M uncached + 1M read + 1M 5m write + 1M output = 3 + 0.3 + 3.75 + 15
        let c = p.cost(&Tokens {
            uncached: 1_000_000,
            read: 1_000_000,
            write_5m: 1_000_000,
            write_1h: 0,
            output: 1_000_000,
        });
        assert!((c - 22.05).abs() < 1e-9, "{c}");
        assert!(t
            .models
            .iter()
            .all(|r| r.source.is_some() && r.checked.is_some()));
    }

    #[test]
    fn an_unknown_model_is_unpriced_not_priced_with_a_family_row() {
        let t = PriceTable::builtin();
        for m in [
            "claude-opus-5-7",
            "claude-opus-9",
            "something-else",
            "claude-haiku-5-5",
        ] {
            assert!(t.lookup(m).is_none(), "{m}");
            assert_eq!(t.min_cacheable(m), UNKNOWN_MIN_CACHEABLE);
        }
    }

    #[test]
    fn a_price_table_that_is_an_array_is_refused_not_read_by_position() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("prices.json");
        std::fs::write(&p, r#"["s", "d", [{"model": "m", "ids": ["m"]}]]"#).unwrap();
        let e = PriceTable::from_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("prices.json") && e.contains("one JSON object"),
            "{e}"
        );
    }
}
