//! Prompt-cache simulation: predicts, for every request, cache-read, cache-write and
//! uncached tokens, and names the cause of every miss.
//!
//! What the prefix is and which settings invalidate which level are the api layer's rules
//! ([`crate::api::cache`]); this module runs them over time (source: Anthropic, "Prompt
//! caching", <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>):
//! - A block with `cache_control` is a breakpoint; at most 4 count (top-level
//!   `cache_control` puts one on the last block). An entry is the hash of the whole
//!   prefix up to and including a breakpoint; it is written at every breakpoint whose
//!   prefix reaches the model's minimum cacheable length.
//! - A lookup at each breakpoint checks that block and the 20 blocks before it for a live
//!   entry; the longest hit is read. Tokens from the hit to the last breakpoint are
//!   written; the rest is uncached input.
//! - An entry lives `ttl` (5 minutes, or 1 hour for `"ttl":"1h"`) after its last use; a
//!   hit refreshes it. Entries are keyed by content only, so threads and sessions with the
//!   same prefix share them.
//!
//! A *miss* is a request that read fewer tokens than its reference (the previous request
//! of its thread; for a thread's first request, the earlier request of the same session
//! that shares the longest prefix) had in the cache. A session's first request has no
//! reference: it is a cold start, whatever other sessions cached. The cause of a miss is
//! found by comparing with the reference: where the prefixes diverge, or, when they do
//! not, why the entry was gone.

use std::collections::HashMap;

use serde::Serialize;

use super::cause::{divergence, BilledAs, CachePrediction, MissCause};
use super::requests::Request;
use crate::api::cache::{
    openai, CachePrefix, CacheRules, Chain, Region, Ttl, LOOKBACK_BLOCKS, MAX_BREAKPOINTS,
};

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

/// What the simulation remembers of a thread's latest request.
struct Prev {
    seq: usize,
    session: usize,
    /// The prefix without its blocks (keys, tools, system texts).
    prefix: CachePrefix,
    chain: Vec<u64>,
    regions: Vec<(Region, usize)>,
    /// Blocks of the prefix in the cache after this request (0: none).
    cached_blocks: usize,
    /// Entry positions (block index) this request wrote or read.
    entry_positions: Vec<usize>,
}

/// The breakpoints of one request.
struct Breakpoints {
    /// `(block, ttl)`, at most [`MAX_BREAKPOINTS`].
    all: Vec<(usize, Ttl)>,
    /// Those whose prefix reaches the minimum cacheable length.
    cacheable: Vec<(usize, Ttl)>,
}

impl Breakpoints {
    /// Blocks up to the last cacheable breakpoint (0: none).
    fn last_cacheable(&self) -> usize {
        self.cacheable.last().map_or(0, |&(b, _)| b + 1)
    }
    /// Blocks up to the last breakpoint.
    fn last(&self) -> usize {
        self.all.last().map_or(0, |b| b.0 + 1)
    }
}

/// What a lookup found: the longest live hit, and (for diagnosis) the longest entry,
/// live or not, with its last use.
struct Lookup {
    hit: Option<usize>,
    any: Option<(usize, i64)>,
}

impl Lookup {
    fn read_blocks(&self) -> usize {
        self.hit.map_or(0, |p| p + 1)
    }
}

/// The simulator: feed requests in time order.
pub struct CacheSim {
    ttl_mode: TtlMode,
    entries: HashMap<u64, Entry>,
    prev: HashMap<usize, Prev>,
}

fn tok(chain: &Chain, upto: usize) -> u64 {
    if upto == 0 {
        0
    } else {
        chain.tokens[upto - 1]
    }
}

fn common_prefix(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
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
        let chain = r.prefix.chain();
        let rules = r.prefix.rules;
        let bps = self.breakpoints(&r.prefix, &chain, min_cacheable);
        let lookup = self.lookup(&chain, &bps, now, rules);
        let (w5, w1) = match rules {
            // Writes are free under the automatic regime: nothing is billed as one.
            CacheRules::AutomaticPrefix { .. } | CacheRules::ImplicitPrefix { .. } => (0, 0),
            _ => writes(&chain, &bps, lookup.read_blocks()),
        };
        self.update(&chain, &bps, lookup.hit, now);
        let read = match rules {
            CacheRules::AutomaticPrefix { .. } => {
                openai::round_read(tok(&chain, lookup.read_blocks()))
            }
            _ => tok(&chain, lookup.read_blocks()),
        };
        let mut pred = CachePrediction {
            read,
            write_5m: w5,
            write_1h: w1,
            uncached: r.prompt_tokens.saturating_sub(read + w5 + w1),
            // The automatic regime has no breakpoints (every prefix is a cache point).
            breakpoints: match rules {
                CacheRules::AutomaticPrefix { .. } | CacheRules::ImplicitPrefix { .. } => 0,
                _ => bps.all.len(),
            },
            reference: None,
            miss_tokens: 0,
            billed_as: BilledAs::Write5m,
            cause: None,
        };
        self.diagnose(r, &chain, &bps, &lookup, min_cacheable, &mut pred);
        pred.billed_as = BilledAs::of(pred.miss_tokens, w5, w1);
        self.remember(r, chain, &bps, lookup.hit);
        pred
    }

    /// Breakpoints (at most 4, the automatic one last) and the cacheable ones. Under
    /// OpenAI's automatic regime every block is one (the longest matching prefix is read
    /// and every prefix is written); under its newer regime the one implicit breakpoint.
    fn breakpoints(&self, p: &CachePrefix, chain: &Chain, min_cacheable: u64) -> Breakpoints {
        let n = p.blocks.len();
        let openai = match p.rules {
            CacheRules::Breakpoints => None,
            CacheRules::AutomaticPrefix { ttl } | CacheRules::ImplicitPrefix { ttl } => {
                Some(((0..n).collect::<Vec<_>>(), ttl))
            }
            CacheRules::ImplicitBreakpoint => {
                Some((p.implicit_breakpoint.into_iter().collect(), Ttl::M30))
            }
        };
        if let Some((points, ttl)) = openai {
            let all: Vec<(usize, Ttl)> = points.into_iter().map(|b| (b, ttl)).collect();
            let cacheable = all
                .iter()
                .copied()
                .filter(|&(b, _)| chain.tokens[b] >= min_cacheable)
                .collect();
            return Breakpoints { all, cacheable };
        }
        let mut all: Vec<(usize, Ttl)> = p
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.breakpoint.map(|t| (i, self.ttl(t))))
            .take(MAX_BREAKPOINTS)
            .collect();
        if let (Some(t), true) = (p.auto_breakpoint, n > 0) {
            if all.len() < MAX_BREAKPOINTS && all.last().is_none_or(|&(b, _)| b != n - 1) {
                all.push((n - 1, self.ttl(t)));
            }
        }
        let cacheable = all
            .iter()
            .copied()
            .filter(|&(b, _)| chain.tokens[b] >= min_cacheable)
            .collect();
        Breakpoints { all, cacheable }
    }

    /// For each breakpoint, the block itself and the 20 before it, latest first. Under
    /// OpenAI's rules a lookup has no window: the longest live entry anywhere in the
    /// prefix is read (entries exist only where earlier requests wrote them).
    fn lookup(&self, chain: &Chain, bps: &Breakpoints, now: i64, rules: CacheRules) -> Lookup {
        let mut l = Lookup {
            hit: None,
            any: None,
        };
        let (points, lookback) = match rules {
            CacheRules::Breakpoints => (bps.all.clone(), LOOKBACK_BLOCKS),
            _ => (
                chain
                    .hashes
                    .len()
                    .checked_sub(1)
                    .map(|last| (last, Ttl::M5))
                    .into_iter()
                    .collect(),
                usize::MAX,
            ),
        };
        for &(b, _) in &points {
            for p in (b.saturating_sub(lookback)..=b).rev() {
                if let Some(e) = self.entries.get(&chain.hashes[p]) {
                    if l.any.is_none_or(|(q, _)| p > q) {
                        l.any = Some((p, e.last_used));
                    }
                    if now - e.last_used <= e.ttl {
                        l.hit = l.hit.max(Some(p));
                        break;
                    }
                }
            }
        }
        l
    }

    /// Refresh the entry read and write an entry at every cacheable breakpoint.
    fn update(&mut self, chain: &Chain, bps: &Breakpoints, hit: Option<usize>, now: i64) {
        if let Some(e) = hit.and_then(|p| self.entries.get_mut(&chain.hashes[p])) {
            e.last_used = now;
        }
        for &(b, ttl) in &bps.cacheable {
            self.entries.insert(
                chain.hashes[b],
                Entry {
                    last_used: now,
                    ttl: ttl.micros(),
                },
            );
        }
    }

    fn entry_ttl(&self, chain: &Chain, p: usize) -> i64 {
        self.entries
            .get(&chain.hashes[p])
            .map_or(Ttl::M5.micros(), |e| e.ttl)
    }

    /// The previous request of the thread, else the latest request of another thread of
    /// the same session that shares the longest prefix with `chain`.
    fn reference(&self, session: usize, thread: usize, chain: &[u64]) -> Option<&Prev> {
        if let Some(p) = self.prev.get(&thread) {
            return Some(p);
        }
        self.prev
            .values()
            .filter(|p| p.session == session)
            .map(|p| (p, common_prefix(&p.chain, chain)))
            .filter(|&(_, c)| c > 0)
            .max_by_key(|&(p, c)| (c, p.seq))
            .map(|(p, _)| p)
    }

    /// Compare with the reference: set the reference, missed tokens and cause.
    fn diagnose(
        &self,
        r: &Request,
        chain: &Chain,
        bps: &Breakpoints,
        lookup: &Lookup,
        min_cacheable: u64,
        pred: &mut CachePrediction,
    ) {
        let written = pred.write_5m + pred.write_1h;
        let Some(p) = self.reference(r.session, r.thread, &chain.hashes) else {
            if written > 0 {
                pred.cause = Some(MissCause::ColdStart);
                pred.miss_tokens = written;
            }
            return;
        };
        pred.reference = Some(p.seq);
        let common = common_prefix(&p.chain, &chain.hashes);
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
        // In this request's own token counts (where the prefixes diverged, the blocks at
        // the same positions stand in for the reference's).
        let expected = tok(chain, expected_blocks.min(chain.hashes.len()));
        // Under the automatic regime reads come in whole increments: what could have been
        // read is rounded the same way, so the rounding is no miss.
        let expected = match r.prefix.rules {
            CacheRules::AutomaticPrefix { .. } => openai::round_read(expected),
            _ => expected,
        };
        let cap = if bps.cacheable.is_empty() {
            r.prompt_tokens
        } else {
            match r.prefix.rules {
                CacheRules::AutomaticPrefix { .. } => {
                    openai::round_read(tok(chain, bps.last_cacheable()))
                }
                _ => tok(chain, bps.last_cacheable()),
            }
        };
        let missed = expected.min(cap).saturating_sub(pred.read);
        if missed > 0 {
            pred.miss_tokens = missed;
            pred.cause = Some(if common < expected_blocks {
                divergence(&r.prefix, &p.prefix, &p.regions, chain, common)
            } else {
                self.lost_entry(chain, bps, lookup, expected_blocks, r, min_cacheable)
            });
        } else if pred.read == 0 && written > 0 && expected == 0 {
            // Nothing of this prefix was cached before (a new thread with its own
            // prefix, or a conversation that just reached the minimum).
            pred.cause = Some(MissCause::ColdStart);
            pred.miss_tokens = written;
        } else if pred.read == 0 && common > 0 {
            // (Nothing was written either: a write needs a cacheable breakpoint, and with
            // one `cap` is positive, so a miss or a cold start was found above.)
            self.nothing_cacheable(chain, bps, common, min_cacheable, pred);
        }
    }

    /// The prefix is the reference's, yet the entry was not read: why.
    fn lost_entry(
        &self,
        chain: &Chain,
        bps: &Breakpoints,
        lookup: &Lookup,
        expected_blocks: usize,
        r: &Request,
        min_cacheable: u64,
    ) -> MissCause {
        let now = r.at.timestamp_micros();
        if bps.all.is_empty() {
            MissCause::NoBreakpoint
        } else if bps.cacheable.is_empty() {
            MissCause::BelowMinimum {
                tokens: tok(chain, bps.last()),
                minimum: min_cacheable,
            }
        } else if let Some((q, last)) = lookup.any.filter(|&(q, _)| Some(q) > lookup.hit) {
            MissCause::TtlExpired {
                gap_s: (now - last) as f64 / 1e6,
                ttl_s: (self.entry_ttl(chain, q) / 1_000_000) as u64,
            }
        } else if let Some(nb) = bps
            .all
            .iter()
            .map(|b| b.0)
            .find(|&b| b + 1 >= expected_blocks)
        {
            MissCause::LookbackExceeded {
                blocks: nb + 1 - expected_blocks,
            }
        } else {
            MissCause::Unexplained
        }
    }

    /// Nothing is cacheable although a prefix repeats: no breakpoint (a miss: a breakpoint
    /// would have cached it), or too short (no miss: nothing could have been cached).
    fn nothing_cacheable(
        &self,
        chain: &Chain,
        bps: &Breakpoints,
        common: usize,
        min_cacheable: u64,
        pred: &mut CachePrediction,
    ) {
        let repeated = tok(chain, common);
        if bps.all.is_empty() && repeated >= min_cacheable {
            pred.cause = Some(MissCause::NoBreakpoint);
            pred.miss_tokens = repeated;
        } else if !bps.all.is_empty() && bps.cacheable.is_empty() {
            // The cause says why nothing is cached, but nothing could have been: no tokens
            // are missed and nothing costs extra (the prompt is below the model's minimum).
            pred.cause = Some(MissCause::BelowMinimum {
                tokens: tok(chain, bps.last()),
                minimum: min_cacheable,
            });
            pred.miss_tokens = 0;
        }
    }

    /// Keep what the next request of the thread is compared with.
    fn remember(&mut self, r: &Request, chain: Chain, bps: &Breakpoints, hit: Option<usize>) {
        let read_blocks = hit.map_or(0, |p| p + 1);
        let mut entry_positions: Vec<usize> = bps.cacheable.iter().map(|&(b, _)| b).collect();
        entry_positions.extend(hit);
        entry_positions.sort_unstable();
        // Compared later by model, tools, system texts and keys only: the blocks go.
        let mut prefix = r.prefix.clone();
        prefix.blocks = Vec::new();
        self.prev.insert(
            r.thread,
            Prev {
                seq: r.seq,
                session: r.session,
                prefix,
                chain: chain.hashes,
                regions: r
                    .prefix
                    .blocks
                    .iter()
                    .map(|b| (b.region, b.index))
                    .collect(),
                cached_blocks: read_blocks.max(bps.last_cacheable()),
                entry_positions,
            },
        );
    }
}

/// Cache-read and cache-write tokens: each cacheable breakpoint past the hit writes the
/// tokens since the previous written point, at its TTL. Returns `(5m, 1h)` writes.
fn writes(chain: &Chain, bps: &Breakpoints, read_blocks: usize) -> (u64, u64) {
    let (mut w5, mut w1, mut from) = (0u64, 0u64, tok(chain, read_blocks));
    for &(b, ttl) in &bps.cacheable {
        if b + 1 > read_blocks {
            let seg = chain.tokens[b].saturating_sub(from);
            match ttl {
                // OpenAI's writes (30 minutes) are priced at the row's 5-minute rate.
                Ttl::M5 | Ttl::M30 | Ttl::H24 => w5 += seg,
                Ttl::H1 => w1 += seg,
            }
            from = from.max(chain.tokens[b]);
        }
    }
    (w5, w1)
}

#[cfg(test)]
mod tests;
