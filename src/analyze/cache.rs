//! Prompt-cache simulation: predicts, for every request, cache-read, cache-write and
//! uncached tokens, and names the cause of every miss.
//!
//! The model (source: Anthropic, "Prompt caching",
//! <https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>):
//! - The prefix is tools → system → messages; each tool definition, system block and
//!   message content block is one block. A block with `cache_control` is a breakpoint; at
//!   most 4 count (top-level `cache_control` puts one on the last block).
//! - An entry is the hash of the whole prefix up to and including a breakpoint block; it is
//!   written at every breakpoint whose prefix has at least the model's minimum cacheable
//!   length. The model id seeds the hash (another model never shares entries); the
//!   parameters that invalidate the message cache (`thinking`, `tool_choice`, betas) are
//!   mixed in where the messages start, so tools and system stay cached when they change.
//! - A lookup at each breakpoint checks that block and the 20 blocks before it for a live
//!   entry; the longest hit is read. Tokens from the hit to the last breakpoint are
//!   written; the rest is uncached input.
//! - An entry lives `ttl` (5 minutes, or 1 hour for `"ttl":"1h"`) after its last use; a
//!   hit refreshes it. Entries are keyed by content only, so threads with the same prefix
//!   share them.
//!
//! A *miss* is a request that read fewer tokens than its reference (the previous request
//! of its thread; for a thread's first request, the earlier request of any thread that
//! shares the longest prefix) had in the cache. Its cause is found by comparing with the
//! reference: where the prefixes diverge, or, when they do not, why the entry was gone.

use std::collections::HashMap;

use serde::Serialize;

use super::cause::{BilledAs, CachePrediction, MissCause};
use super::input::{Region, Request, Ttl};

/// Blocks before a breakpoint that a lookup also checks.
pub const LOOKBACK_BLOCKS: usize = 20;
/// Breakpoints a request may carry; further ones are ignored (the API rejects them).
pub const MAX_BREAKPOINTS: usize = 4;

/// How TTLs are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TtlMode {
    /// Each breakpoint's own `ttl` (default 5 minutes).
    Auto,
    /// Every breakpoint 5 minutes.
    #[serde(rename = "5m")]
    M5,
    /// Every breakpoint 1 hour.
    #[serde(rename = "1h")]
    H1,
}

struct Entry {
    last_used: i64,
    ttl: i64,
}

struct Prev {
    seq: usize,
    model: String,
    params: Vec<(String, String)>,
    chain: Vec<u64>,
    regions: Vec<(Region, usize)>,
    tools: Vec<(String, u64)>,
    system: Vec<String>,
    /// Blocks of the prefix in the cache after this request (0: none).
    cached_blocks: usize,
    /// Entry positions (block index) this request wrote or read.
    entry_positions: Vec<usize>,
}

/// The simulator: feed requests in time order.
pub struct CacheSim {
    ttl_mode: TtlMode,
    entries: HashMap<u64, Entry>,
    prev: HashMap<usize, Prev>,
}

fn mix(a: u64, b: u64) -> u64 {
    super::input::hash_of(&[&a.to_le_bytes(), &b.to_le_bytes()])
}

impl CacheSim {
    /// An empty cache.
    pub fn new(ttl_mode: TtlMode) -> Self {
        CacheSim {
            ttl_mode,
            entries: HashMap::new(),
            prev: HashMap::new(),
        }
    }

    fn ttl(&self, t: Ttl) -> Ttl {
        match self.ttl_mode {
            TtlMode::Auto => t,
            TtlMode::M5 => Ttl::M5,
            TtlMode::H1 => Ttl::H1,
        }
    }

    /// Simulate one request; `min_cacheable` is its model's minimum (tokens).
    pub fn observe(&mut self, r: &Request, min_cacheable: u64) -> CachePrediction {
        let now = r.at.timestamp_micros();
        let n = r.blocks.len();
        // Cumulative hashes and tokens.
        let params_key = super::input::hash_of(&[format!("{:?}", r.params).as_bytes()]);
        let mut chain = Vec::with_capacity(n);
        let mut cum = Vec::with_capacity(n);
        let mut h = super::input::hash_of(&[r.model.as_bytes()]);
        let (mut t, mut first_message) = (0u64, None);
        for (i, b) in r.blocks.iter().enumerate() {
            if b.region == Region::Messages && first_message.is_none() {
                first_message = Some(i);
                h = mix(h, params_key);
            }
            h = mix(h, b.hash);
            t += b.tokens;
            chain.push(h);
            cum.push(t);
        }
        let tok = |upto: usize| if upto == 0 { 0 } else { cum[upto - 1] };
        // Breakpoints: (position, ttl), at most 4.
        let mut bps: Vec<(usize, Ttl)> = r
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.breakpoint.map(|t| (i, self.ttl(t))))
            .take(MAX_BREAKPOINTS)
            .collect();
        if let (Some(t), true) = (r.auto_breakpoint, n > 0) {
            if bps.len() < MAX_BREAKPOINTS && bps.last().is_none_or(|&(p, _)| p != n - 1) {
                bps.push((n - 1, self.ttl(t)));
            }
        }
        let cacheable: Vec<(usize, Ttl)> = bps
            .iter()
            .copied()
            .filter(|&(p, _)| cum[p] >= min_cacheable)
            .collect();
        // Lookup: live hits and (for diagnosis) any entry, live or not.
        let (mut hit, mut any): (Option<usize>, Option<(usize, i64)>) = (None, None);
        for &(b, _) in &bps {
            for p in (b.saturating_sub(LOOKBACK_BLOCKS)..=b).rev() {
                if let Some(e) = self.entries.get(&chain[p]) {
                    if any.is_none_or(|(q, _)| p > q) {
                        any = Some((p, e.last_used));
                    }
                    if now - e.last_used <= e.ttl {
                        hit = hit.max(Some(p));
                        break;
                    }
                }
            }
        }
        let read_blocks = hit.map_or(0, |p| p + 1);
        let read = tok(read_blocks);
        // Writes: each cacheable breakpoint past the hit writes the tokens since the
        // previous written point, at its TTL.
        let (mut w5, mut w1, mut from) = (0u64, 0u64, read);
        for &(b, ttl) in &cacheable {
            if b + 1 > read_blocks {
                let seg = cum[b].saturating_sub(from);
                match ttl {
                    Ttl::M5 => w5 += seg,
                    Ttl::H1 => w1 += seg,
                }
                from = from.max(cum[b]);
            }
        }
        let uncached = r.total_tokens.saturating_sub(read + w5 + w1);
        // Update the cache.
        if let Some(p) = hit {
            if let Some(e) = self.entries.get_mut(&chain[p]) {
                e.last_used = now;
            }
        }
        for &(b, ttl) in &cacheable {
            self.entries.insert(
                chain[b],
                Entry {
                    last_used: now,
                    ttl: ttl.micros(),
                },
            );
        }
        let last_cacheable = cacheable.last().map(|&(b, _)| b + 1).unwrap_or(0);
        let cached_blocks = read_blocks.max(last_cacheable);
        let mut entry_positions: Vec<usize> = cacheable.iter().map(|&(b, _)| b).collect();
        entry_positions.extend(hit);
        entry_positions.sort_unstable();

        // Diagnosis against the reference.
        let reference = self.reference(r.thread, &chain);
        let mut pred = CachePrediction {
            read,
            write_5m: w5,
            write_1h: w1,
            uncached,
            breakpoints: bps.len(),
            reference: reference.map(|p| p.seq),
            miss_tokens: 0,
            billed_as: if w1 > 0 && w5 == 0 {
                BilledAs::Write1h
            } else {
                BilledAs::Write5m
            },
            cause: None,
        };
        let common = reference.map_or(0, |p| {
            p.chain
                .iter()
                .zip(&chain)
                .take_while(|(a, b)| a == b)
                .count()
        });
        match reference {
            None => {
                if w5 + w1 > 0 {
                    pred.cause = Some(MissCause::ColdStart);
                    pred.miss_tokens = w5 + w1;
                }
            }
            Some(p) => {
                let same_thread = self.prev.get(&r.thread).is_some_and(|q| q.seq == p.seq);
                // Blocks the reference had cached that this request could have read.
                let expected_blocks = if same_thread {
                    p.cached_blocks
                } else {
                    p.entry_positions
                        .iter()
                        .rev()
                        .find(|&&q| q < common)
                        .map_or(0, |&q| q + 1)
                };
                // In this request's own token counts (where the prefixes diverged, the
                // blocks at the same positions stand in for the reference's).
                let expected = tok(expected_blocks.min(n));
                let cap = if cacheable.is_empty() {
                    r.total_tokens
                } else {
                    tok(last_cacheable)
                };
                let missed = expected.min(cap).saturating_sub(read);
                if missed > 0 {
                    pred.miss_tokens = missed;
                    pred.cause = Some(if common < expected_blocks {
                        divergence(r, p, common, first_message)
                    } else if bps.is_empty() {
                        MissCause::NoBreakpoint
                    } else if cacheable.is_empty() {
                        MissCause::BelowMinimum {
                            tokens: tok(bps.last().map_or(0, |b| b.0 + 1)),
                            minimum: min_cacheable,
                        }
                    } else if let Some((q, last)) = any.filter(|&(q, _)| Some(q) > hit) {
                        MissCause::TtlExpired {
                            gap_s: (now - last) as f64 / 1e6,
                            ttl_s: (self.entry_ttl(&chain, q) / 1_000_000) as u64,
                        }
                    } else if let Some(nb) =
                        bps.iter().map(|b| b.0).find(|&b| b + 1 >= expected_blocks)
                    {
                        MissCause::LookbackExceeded {
                            blocks: nb + 1 - expected_blocks,
                        }
                    } else {
                        MissCause::Unexplained
                    });
                } else if read == 0 && w5 + w1 > 0 && expected == 0 {
                    // Nothing of this prefix was cached before (a new thread with its own
                    // prefix, or a conversation that just reached the minimum).
                    pred.cause = Some(MissCause::ColdStart);
                    pred.miss_tokens = w5 + w1;
                } else if read == 0 && w5 + w1 == 0 && common > 0 {
                    // Nothing cacheable although a prefix repeats.
                    let repeated = tok(common);
                    if bps.is_empty() && repeated >= min_cacheable {
                        pred.cause = Some(MissCause::NoBreakpoint);
                        pred.miss_tokens = repeated;
                    } else if !bps.is_empty() && cacheable.is_empty() {
                        pred.cause = Some(MissCause::BelowMinimum {
                            tokens: tok(bps.last().map_or(0, |b| b.0 + 1)),
                            minimum: min_cacheable,
                        });
                        pred.miss_tokens = repeated.min(tok(bps.last().map_or(0, |b| b.0 + 1)));
                    }
                }
            }
        }
        if matches!(
            pred.cause,
            Some(MissCause::NoBreakpoint | MissCause::BelowMinimum { .. })
        ) {
            pred.billed_as = BilledAs::Input;
        }
        self.prev.insert(
            r.thread,
            Prev {
                seq: r.seq,
                model: r.model.clone(),
                params: r.params.clone(),
                chain,
                regions: r.blocks.iter().map(|b| (b.region, b.index)).collect(),
                tools: r.tools.clone(),
                system: r.system.clone(),
                cached_blocks,
                entry_positions,
            },
        );
        pred
    }

    fn entry_ttl(&self, chain: &[u64], p: usize) -> i64 {
        self.entries
            .get(&chain[p])
            .map_or(Ttl::M5.micros(), |e| e.ttl)
    }

    /// The previous request of the thread, else the latest request of another thread that
    /// shares the longest prefix with `chain`.
    fn reference(&self, thread: usize, chain: &[u64]) -> Option<&Prev> {
        if let Some(p) = self.prev.get(&thread) {
            return Some(p);
        }
        self.prev
            .values()
            .map(|p| {
                (
                    p,
                    p.chain
                        .iter()
                        .zip(chain)
                        .take_while(|(a, b)| a == b)
                        .count(),
                )
            })
            .filter(|&(_, c)| c > 0)
            .max_by_key(|&(p, c)| (c, p.seq))
            .map(|(p, _)| p)
    }
}

fn divergence(r: &Request, p: &Prev, common: usize, first_message: Option<usize>) -> MissCause {
    if r.model != p.model {
        return MissCause::ModelChanged {
            from: p.model.clone(),
            to: r.model.clone(),
        };
    }
    let region = r.blocks.get(common).map(|b| (b.region, b.index));
    let prev_region = p.regions.get(common).copied();
    let in_tools = matches!(region, Some((Region::Tools, _)))
        || matches!(prev_region, Some((Region::Tools, _)));
    if in_tools {
        let names = |t: &[(String, u64)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        let (now, before) = (names(&r.tools), names(&p.tools));
        let added: Vec<String> = now
            .iter()
            .filter(|n| !before.contains(n))
            .cloned()
            .collect();
        let removed: Vec<String> = before
            .iter()
            .filter(|n| !now.contains(n))
            .cloned()
            .collect();
        let mut changed: Vec<String> = r
            .tools
            .iter()
            .filter(|(n, h)| p.tools.iter().any(|(pn, ph)| pn == n && ph != h))
            .map(|(n, _)| n.clone())
            .collect();
        if added.is_empty() && removed.is_empty() && changed.is_empty() {
            changed.push("(order)".to_string());
        }
        return MissCause::ToolsChanged {
            added,
            removed,
            changed,
        };
    }
    let in_system = matches!(region, Some((Region::System, _)))
        || matches!(prev_region, Some((Region::System, _)));
    if in_system {
        let block = match (region, prev_region) {
            (Some((Region::System, i)), _) | (_, Some((Region::System, i))) => i,
            _ => 0,
        };
        let a = p.system.get(block).map_or("", String::as_str).as_bytes();
        let b = r.system.get(block).map_or("", String::as_str).as_bytes();
        let offset = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        return MissCause::SystemChanged { block, offset };
    }
    if first_message == Some(common) && r.params != p.params {
        let mut names: Vec<String> = Vec::new();
        for (k, v) in r.params.iter().chain(&p.params) {
            let other = if r.params.contains(&(k.clone(), v.clone())) {
                &p.params
            } else {
                &r.params
            };
            if !other.iter().any(|(k2, v2)| k2 == k && v2 == v) && !names.contains(k) {
                names.push(k.clone());
            }
        }
        return MissCause::ParamsChanged { params: names };
    }
    let message = match (region, prev_region) {
        (Some((Region::Messages, i)), _) | (_, Some((Region::Messages, i))) => i,
        _ => 0,
    };
    MissCause::HistoryRewritten { message }
}
