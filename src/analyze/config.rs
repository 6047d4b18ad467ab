//! The analysis settings ([`AnalyzeConfig`]): TTL choice, which usage figures to trust,
//! and the price table. The CLI converts its flags into these.

use serde::Serialize;

use super::cache::TtlMode;
use crate::api::prices::PriceTable;

/// Which usage figures to trust.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageMode {
    /// The response's `usage` (falls back to simulated where a response has none).
    Recorded,
    /// agentwire's simulation and token estimates.
    Simulated,
    /// Simulated for responses agentwire synthesized (see
    /// [`super::requests::synthesized`]), recorded where responses carry cache fields,
    /// simulated elsewhere.
    Auto,
}

/// Analysis settings (the CLI converts its flags into this).
#[derive(Clone, Debug)]
pub struct AnalyzeConfig {
    /// TTL choice.
    pub ttl: TtlMode,
    /// Usage figures to trust.
    pub usage: UsageMode,
    /// Prices and minimum cacheable lengths.
    pub prices: PriceTable,
}

impl Default for AnalyzeConfig {
    fn default() -> Self {
        AnalyzeConfig {
            ttl: TtlMode::Auto,
            usage: UsageMode::Auto,
            prices: PriceTable::builtin(),
        }
    }
}
