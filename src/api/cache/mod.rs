//! The prompt-cache rules: what a request's cached prefix is, block by block, and which
//! request settings invalidate which level of it. `analyze` simulates the cache on top of
//! this; the rules themselves live here, one per row of Anthropic's invalidation table
//! ([`INVALIDATION_RULES`], cited with the date read in `docs/analyze.md`).
//!
//! - The prefix is tools → system → messages; one block per *loaded* tool definition,
//!   system block and message content block. Tools sent with `defer_loading: true` are
//!   not part of it, nor are web search / web fetch server tools (their toggles act on
//!   the system level).
//! - Block hashes ignore `cache_control` (breakpoints move between turns), treat a string
//!   `content` as the equivalent text block, and treat Claude Code's billing system block
//!   as constant: it changes on every request (fingerprint, attestation token, turn and
//!   prompt indexes), yet Claude Code sessions do read the cache, so the API evidently
//!   leaves it out of the key (an inference, documented in `docs/analyze.md`).
//! - Settings that invalidate a level are *keys* of that level: [`CachePrefix::chain`]
//!   mixes the system-level keys in where the system starts and the messages-level keys
//!   where the messages start, so a change there keeps the levels before it cached.

pub mod openai;
mod prefix;
mod rules;

use serde::Serialize;
use serde_json::Value;
use xxhash_rust::xxh3::Xxh3;

pub use prefix::BILLING_HEADER;
pub use rules::{
    default_effort, strips_thinking, InvalidationRule, INVALIDATION_RULES, LOOKBACK_BLOCKS,
    MAX_BREAKPOINTS,
};

/// Which part of the prompt prefix a block belongs to (the cache prefix order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// A tool definition.
    Tools,
    /// A `system` block.
    System,
    /// A content block of a message.
    Messages,
}

/// Cache TTL of a breakpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Ttl {
    /// 5 minutes (the default `ephemeral`).
    #[serde(rename = "5m")]
    M5,
    /// 1 hour (`"ttl": "1h"`).
    #[serde(rename = "1h")]
    H1,
    /// 30 minutes (OpenAI, GPT-5.6 and later).
    #[serde(rename = "30m")]
    M30,
    /// 24 hours (OpenAI `prompt_cache_retention: "24h"`).
    #[serde(rename = "24h")]
    H24,
}

/// Which provider's cache rules a prefix is simulated under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CacheRules {
    /// Anthropic: explicit breakpoints (`cache_control`), at most four, each looking back
    /// [`LOOKBACK_BLOCKS`] blocks; writes billed at the TTL's rate.
    #[default]
    Breakpoints,
    /// OpenAI before GPT-5.6: the longest matching prefix is read, in whole increments
    /// ([`openai`]); writes are free; entries live `ttl` idle.
    AutomaticPrefix {
        /// How long an idle entry lives.
        ttl: Ttl,
    },
    /// OpenAI GPT-5.6 and later: one implicit breakpoint at the latest user or tool
    /// message, read by exact match; writes billed; entries live 30 minutes.
    ImplicitBreakpoint,
    /// Gemini's implicit caching: the longest matching prefix is read, not rounded;
    /// writes are free; entries live `ttl` idle ([`crate::api::gemini::cache`]).
    ImplicitPrefix {
        /// How long an idle entry lives.
        ttl: Ttl,
    },
}

impl Ttl {
    /// Length in microseconds.
    pub fn micros(self) -> i64 {
        match self {
            Ttl::M5 => 300_000_000,
            Ttl::H1 => 3_600_000_000,
            Ttl::M30 => 1_800_000_000,
            Ttl::H24 => 86_400_000_000,
        }
    }

    /// The TTL a `cache_control` value asks for.
    pub fn of(cc: &Value) -> Ttl {
        match cc.get("ttl").and_then(Value::as_str) {
            Some("1h") => Ttl::H1,
            _ => Ttl::M5,
        }
    }
}

/// One block of the prompt prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixBlock {
    /// Region of the prefix.
    pub region: Region,
    /// Tool index, system block index, or message index.
    pub index: usize,
    /// Hash of the block's content as the cache sees it.
    pub hash: u64,
    /// Estimated tokens: [`crate::api::estimate_tokens`] of the block's bytes without `cache_control`.
    pub tokens: u64,
    /// `Some(ttl)` when the block carries `cache_control` (a cache breakpoint).
    pub breakpoint: Option<Ttl>,
}

/// A request's cached prefix and cache keys.
#[derive(Clone, Debug, Default)]
pub struct CachePrefix {
    /// `model` (empty if absent); seeds every hash.
    pub model: String,
    /// The prefix, tools → system → messages.
    pub blocks: Vec<PrefixBlock>,
    /// System-level keys: `(rule id, canonical value)` for every system-level rule.
    pub system_keys: Vec<(&'static str, String)>,
    /// Messages-level keys.
    pub messages_keys: Vec<(&'static str, String)>,
    /// Top-level `cache_control` (automatic caching: a breakpoint on the last block).
    pub auto_breakpoint: Option<Ttl>,
    /// Estimated input tokens of the prompt: the body without deferred definitions.
    pub prompt_tokens: u64,
    /// Loaded tool names and definition hashes, in order.
    pub tools: Vec<(String, u64)>,
    /// System block texts as the cache sees them (to locate a change by byte offset).
    pub system: Vec<String>,
    /// True when the `thinking_stripped` rule removed thinking blocks from the prefix.
    pub thinking_stripped: bool,
    /// The provider's rules this prefix is cached under.
    pub rules: CacheRules,
    /// What routes the request to a cache besides its content (OpenAI
    /// `prompt_cache_key`): requests with different keys share no entry.
    pub routing_key: Option<String>,
    /// The block of the implicit breakpoint ([`CacheRules::ImplicitBreakpoint`]): the last
    /// block of the latest user-side message.
    pub implicit_breakpoint: Option<usize>,
}

/// Cumulative hashes and tokens of a prefix, block by block.
#[derive(Clone, Debug, Default)]
pub struct Chain {
    /// Hash of the whole prefix up to and including each block.
    pub hashes: Vec<u64>,
    /// Tokens up to and including each block.
    pub tokens: Vec<u64>,
    /// Index of the first system-or-later block (where system keys are mixed in).
    pub system_start: Option<usize>,
    /// Index of the first messages block (where messages keys are mixed in).
    pub messages_start: Option<usize>,
}

/// A stable 64-bit hash of a sequence of byte strings (XXH3, each part preceded by its
/// length, so `["ab", "c"]` and `["a", "bc"]` differ). In-process only: never written.
pub fn hash_of(parts: &[&[u8]]) -> u64 {
    let mut h = Xxh3::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.digest()
}

fn mix(a: u64, b: u64) -> u64 {
    hash_of(&[&a.to_le_bytes(), &b.to_le_bytes()])
}

impl CachePrefix {
    /// Cumulative hashes and tokens: the model seeds the hash; the system-level keys are
    /// mixed in before the first system (or messages) block, the messages-level keys
    /// before the first messages block.
    pub fn chain(&self) -> Chain {
        let key = |k: &[(&str, String)]| hash_of(&[format!("{k:?}").as_bytes()]);
        let (sys, msg) = (key(&self.system_keys), key(&self.messages_keys));
        let mut c = Chain::default();
        let mut h = match &self.routing_key {
            None => hash_of(&[self.model.as_bytes()]),
            Some(k) => hash_of(&[self.model.as_bytes(), k.as_bytes()]),
        };
        let mut t = 0u64;
        for (i, b) in self.blocks.iter().enumerate() {
            if b.region >= Region::System && c.system_start.is_none() {
                c.system_start = Some(i);
                h = mix(h, sys);
            }
            if b.region == Region::Messages && c.messages_start.is_none() {
                c.messages_start = Some(i);
                h = mix(h, msg);
            }
            h = mix(h, b.hash);
            t += b.tokens;
            c.hashes.push(h);
            c.tokens.push(t);
        }
        c
    }

    /// Ids of the rules at `level` whose keys differ between `self` and `other`.
    pub fn changed_keys(&self, other: &CachePrefix, level: Region) -> Vec<&'static str> {
        let (a, b) = match level {
            Region::System => (&self.system_keys, &other.system_keys),
            Region::Messages => (&self.messages_keys, &other.messages_keys),
            Region::Tools => return Vec::new(),
        };
        a.iter()
            .zip(b)
            .filter(|(x, y)| x.1 != y.1)
            .map(|(x, _)| x.0)
            .collect()
    }
}

#[cfg(test)]
mod tests;
