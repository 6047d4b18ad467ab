//! Model prices and prompt-cache minimums: the built-in table (with its source and date),
//! loading an override file, and matching a model id to a row.
//!
//! Source of the built-in figures: Anthropic, "Pricing" (Claude API docs,
//! <https://docs.anthropic.com/en/docs/about-claude/pricing>), columns Base Input Tokens,
//! 5m Cache Writes, 1h Cache Writes, Cache Hits & Refreshes, Output Tokens, in USD per
//! million tokens; minimum cacheable lengths from "Prompt caching"
//! (<https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>), section
//! "Cache limitations". Checked 2026-11-29. Model ids newer than the table (e.g. a later
//! Opus) fall back to the newest row of their family.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::AnalyzeError;

/// Where the built-in prices come from.
pub const PRICE_SOURCE: &str = "https://docs.anthropic.com/en/docs/about-claude/pricing";
/// When the built-in prices were checked (ISO date).
pub const PRICE_DATE: &str = "2026-11-29";

/// Prices of one model row, in USD per million tokens, and its minimum cacheable prompt
/// length in tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Row name, e.g. `claude-opus-4-5`.
    pub model: String,
    /// Model id prefixes this row applies to (longest match wins), e.g.
    /// `["claude-opus-4-5", "claude-opus-4-6"]`.
    pub matches: Vec<String>,
    /// Uncached input, USD per MTok.
    pub input: f64,
    /// Output, USD per MTok.
    pub output: f64,
    /// Cache write with the 5-minute TTL, USD per MTok (1.25 × input).
    pub write_5m: f64,
    /// Cache write with the 1-hour TTL, USD per MTok (2 × input).
    pub write_1h: f64,
    /// Cache read (hit or refresh), USD per MTok (0.1 × input).
    pub read: f64,
    /// Minimum cacheable prompt length in tokens: shorter prefixes are never cached.
    pub min_cacheable: u64,
}

/// A price table: rows plus where they come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PriceTable {
    /// Citation (URL or file) of the figures.
    pub source: String,
    /// Date the figures were checked (ISO 8601).
    pub date: String,
    /// Rows; the row whose `matches` has the longest prefix of the model id applies.
    pub models: Vec<ModelPrice>,
    /// Row name used for model ids no row matches (by family word, else this).
    pub fallback: String,
}

fn row(model: &str, matches: &[&str], input: f64, output: f64, min: u64) -> ModelPrice {
    ModelPrice {
        model: model.to_string(),
        matches: matches.iter().map(|s| s.to_string()).collect(),
        input,
        output,
        write_5m: input * 1.25,
        write_1h: input * 2.0,
        read: input / 10.0,
        min_cacheable: min,
    }
}

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
}

impl PriceTable {
    /// The built-in table (see the module header for source and date).
    pub fn builtin() -> Self {
        PriceTable {
            source: PRICE_SOURCE.to_string(),
            date: PRICE_DATE.to_string(),
            fallback: "claude-sonnet-4-5".to_string(),
            models: vec![
                // Family words last: `claude-opus` matches any Opus the table predates.
                row(
                    "claude-opus-4-5",
                    &["claude-opus-4-5", "claude-opus-4-6", "claude-opus"],
                    5.0,
                    25.0,
                    4096,
                ),
                row(
                    "claude-opus-4-1",
                    &["claude-opus-4-1", "claude-opus-4-0", "claude-opus-4-2"],
                    15.0,
                    75.0,
                    1024,
                ),
                row("claude-opus-4", &["claude-opus-4"], 15.0, 75.0, 1024),
                row("claude-3-opus", &["claude-3-opus"], 15.0, 75.0, 1024),
                row("claude-sonnet-4-6", &["claude-sonnet-4-6"], 3.0, 15.0, 2048),
                row(
                    "claude-sonnet-4-5",
                    &[
                        "claude-sonnet-4-5",
                        "claude-sonnet-4",
                        "claude-sonnet",
                        "claude-3-7-sonnet",
                        "claude-3-5-sonnet",
                    ],
                    3.0,
                    15.0,
                    1024,
                ),
                row(
                    "claude-haiku-4-5",
                    &["claude-haiku-4-5", "claude-haiku"],
                    1.0,
                    5.0,
                    4096,
                ),
                row("claude-3-5-haiku", &["claude-3-5-haiku"], 0.8, 4.0, 2048),
                row("claude-3-haiku", &["claude-3-haiku"], 0.25, 1.25, 2048),
            ],
        }
    }

    /// Read a table from a JSON file with the shape of [`PriceTable`]:
    /// `{"source", "date", "fallback", "models": [{"model", "matches", "input", "output",
    /// "write_5m", "write_1h", "read", "min_cacheable"}]}` (see `docs/analyze.md`).
    ///
    /// Errors: [`AnalyzeError::Prices`] naming the file when it cannot be read or parsed.
    pub fn from_file(path: &Path) -> Result<Self, AnalyzeError> {
        let text = std::fs::read_to_string(path).map_err(|e| AnalyzeError::Prices {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        let t: PriceTable = serde_json::from_str(&text).map_err(|e| AnalyzeError::Prices {
            path: path.display().to_string(),
            message: format!("{e} (expected {{\"source\",\"date\",\"fallback\",\"models\":[{{\"model\",\"matches\",\"input\",\"output\",\"write_5m\",\"write_1h\",\"read\",\"min_cacheable\"}}]}})"),
        })?;
        let bad = |message: String| AnalyzeError::Prices {
            path: path.display().to_string(),
            message,
        };
        if t.models.is_empty() {
            return Err(bad("the table has no models".into()));
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
                    return Err(bad(format!(
                        "model {:?}: {name} = {v} is not a price in USD per million tokens from 0 to 1000000",
                        m.model
                    )));
                }
            }
            if m.min_cacheable > 10_000_000 {
                return Err(bad(format!(
                    "model {:?}: min_cacheable = {} is above 10000000 tokens",
                    m.model, m.min_cacheable
                )));
            }
        }
        Ok(t)
    }

    /// The row for a model id: longest matching prefix; else the fallback row.
    pub fn lookup(&self, model: &str) -> &ModelPrice {
        let m = model.to_ascii_lowercase();
        let mut best: Option<(&ModelPrice, usize)> = None;
        for r in &self.models {
            for p in &r.matches {
                if m.starts_with(p.as_str()) && best.is_none_or(|(_, l)| p.len() > l) {
                    best = Some((r, p.len()));
                }
            }
        }
        best.map(|(r, _)| r).unwrap_or_else(|| {
            self.models
                .iter()
                .find(|r| r.model == self.fallback)
                .unwrap_or(&self.models[0])
        })
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
    fn lookup_by_longest_prefix_and_family() {
        let t = PriceTable::builtin();
        assert_eq!(t.lookup("claude-opus-4-1-20250805").input, 15.0);
        assert_eq!(t.lookup("claude-opus-4-5-20251101").input, 5.0);
        assert_eq!(t.lookup("claude-opus-5-5").model, "claude-opus-4-5");
        assert_eq!(t.lookup("claude-3-5-haiku-20241022").min_cacheable, 2048);
        assert_eq!(t.lookup("something-else").model, "claude-sonnet-4-5");
        let p = t.lookup("claude-sonnet-4-5");
        // 1M uncached + 1M read + 1M 5m write + 1M output = 3 + 0.3 + 3.75 + 15
        let c = p.cost(&Tokens {
            uncached: 1_000_000,
            read: 1_000_000,
            write_5m: 1_000_000,
            write_1h: 0,
            output: 1_000_000,
        });
        assert!((c - 22.05).abs() < 1e-9, "{c}");
    }
}
