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

mod builtin;
mod openai;
mod table;

pub use builtin::{MINIMUM_SOURCE, PRICE_DATE, PRICE_SOURCE};
pub use openai::OPENAI_CACHE_SOURCE;
pub use table::{ModelPrice, PriceTable, Tokens, UNKNOWN_MIN_CACHEABLE};
