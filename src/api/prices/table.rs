//! The price table's shape ([`PriceTable`], [`ModelPrice`], [`Tokens`]), loading an override
//! file, and matching a model id to a row.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::api::ApiError;

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

impl Default for PriceTable {
    fn default() -> Self {
        PriceTable::builtin()
    }
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
        if !crate::api::is_object_text(&text) {
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
    /// documented minimum (Gemini: [`crate::api::gemini::cache::min_cacheable`]), else
    /// [`UNKNOWN_MIN_CACHEABLE`].
    pub fn min_cacheable(&self, model: &str) -> u64 {
        let unknown = if base_id(model).starts_with("gemini-") {
            crate::api::gemini::cache::min_cacheable(model)
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
