//! The simulator on hand-made prefixes: every figure below is worked out by hand from
//! the blocks' token counts, the breakpoints and the times (minimum cacheable length
//! 1024 tokens throughout).

use super::*;
use crate::api::cache::PrefixBlock;

const MIN: u64 = 1024;

/// A block: `(content id, tokens, breakpoint)`; all in the messages region.
type B = (u64, u64, Option<Ttl>);

fn req(seq: usize, thread: usize, at_s: i64, blocks: &[B]) -> Request {
    let blocks: Vec<PrefixBlock> = blocks
        .iter()
        .enumerate()
        .map(|(i, &(hash, tokens, breakpoint))| PrefixBlock {
            region: Region::Messages,
            index: i,
            hash,
            tokens,
            breakpoint,
        })
        .collect();
    let prompt_tokens = blocks.iter().map(|b| b.tokens).sum();
    Request {
        seq,
        trace: 0,
        exchange: seq as u64,
        session: 0,
        thread,
        turn: seq,
        at: chrono::DateTime::from_timestamp(1_800_000_000 + at_s, 0).unwrap(),
        cli_version: None,
        agent: None,
        dialect: crate::api::Dialect::Messages,
        api_error: None,
        model: "m".into(),
        prefix: CachePrefix {
            model: "m".into(),
            blocks,
            prompt_tokens,
            ..CachePrefix::default()
        },
        prompt_tokens,
        recorded: None,
        synthesized: None,
        output_estimate: 0,
    }
}

const M5: Option<Ttl> = Some(Ttl::M5);
const H1: Option<Ttl> = Some(Ttl::H1);

/// A hit refreshes the entry it read: an entry written at 0 s and read at 240 s is
/// still live at 480 s (240 s after its last use), though 480 s > 5 min after it was
/// written. The read at 240 s writes nothing at the hit position (its breakpoint is
/// further on), so only the refresh keeps the entry alive.
#[test]
fn a_cache_hit_refreshes_the_entry() {
    let mut sim = CacheSim::new(TtlMode::Auto);
    // 0 s: blocks 1+2 = 2000 tokens, breakpoint on block 2: written.
    let a = sim.observe(&req(0, 0, 0, &[(1, 1500, None), (2, 500, M5)]), MIN);
    assert_eq!((a.read, a.write_5m, a.uncached), (0, 2000, 0));
    assert_eq!(a.cause, Some(MissCause::ColdStart));
    // 240 s: the conversation grew by block 3 (breakpoint there); the lookback finds
    // the entry at block 2: 2000 read, 300 written.
    let b = sim.observe(
        &req(1, 0, 240, &[(1, 1500, None), (2, 500, None), (3, 300, M5)]),
        MIN,
    );
    assert_eq!((b.read, b.write_5m, b.miss_tokens), (2000, 300, 0));
    assert_eq!(b.cause, None);
    // 480 s, another thread of the session: the same first two blocks, then its own
    // block 4 with a breakpoint: it reads the refreshed entry at block 2.
    let c = sim.observe(
        &req(2, 1, 480, &[(1, 1500, None), (2, 500, None), (4, 100, M5)]),
        MIN,
    );
    assert_eq!((c.read, c.write_5m, c.uncached), (2000, 100, 0));
    assert_eq!(c.cause, None);
    assert_eq!(
        c.reference,
        Some(1),
        "the request sharing the longest prefix"
    );
}

/// The same entry without the hit: at 301 s it expired (TTL 300 s after 0 s), and the
/// miss is explained as such with the gap and the TTL.
#[test]
fn an_entry_expires_one_ttl_after_its_last_use() {
    let blocks: &[B] = &[(1, 1500, None), (2, 500, M5)];
    let mut sim = CacheSim::new(TtlMode::Auto);
    sim.observe(&req(0, 0, 0, blocks), MIN);
    // exactly 300 s later: still live
    let b = sim.observe(&req(1, 0, 300, blocks), MIN);
    assert_eq!((b.read, b.write_5m), (2000, 0));
    // 601 s: 301 s after the read at 300 s
    let c = sim.observe(&req(2, 0, 601, blocks), MIN);
    assert_eq!((c.read, c.write_5m, c.miss_tokens), (0, 2000, 2000));
    assert_eq!(
        c.cause,
        Some(MissCause::TtlExpired {
            gap_s: 301.0,
            ttl_s: 300
        })
    );
    assert_eq!(c.billed_as, BilledAs::Write5m);
}

/// `--ttl auto` keeps each breakpoint's own TTL: a `"ttl": "1h"` entry written at 0 s
/// is read at 30 min; the write is billed at the 1-hour rate. `--ttl 5m` treats the
/// same breakpoint as 5 minutes (expired at 30 min), `--ttl 1h` like auto.
#[test]
fn ttl_auto_keeps_a_breakpoints_one_hour_ttl() {
    let blocks: &[B] = &[(1, 1500, None), (2, 500, H1)];
    let run = |mode| {
        let mut sim = CacheSim::new(mode);
        let a = sim.observe(&req(0, 0, 0, blocks), MIN);
        let b = sim.observe(&req(1, 0, 1800, blocks), MIN);
        (a, b)
    };
    let (a, b) = run(TtlMode::Auto);
    assert_eq!(
        (a.write_5m, a.write_1h, a.billed_as),
        (0, 2000, BilledAs::Write1h)
    );
    assert_eq!((b.read, b.write_1h, b.cause), (2000, 0, None));
    let (a, b) = run(TtlMode::H1);
    assert_eq!((a.write_1h, b.read), (2000, 2000));
    let (a, b) = run(TtlMode::M5);
    assert_eq!(
        (a.write_5m, a.write_1h, a.billed_as),
        (2000, 0, BilledAs::Write5m)
    );
    assert_eq!((b.read, b.write_5m, b.miss_tokens), (0, 2000, 2000));
    assert_eq!(
        b.cause,
        Some(MissCause::TtlExpired {
            gap_s: 1800.0,
            ttl_s: 300
        })
    );
    // Auto with a 5-minute breakpoint is 5 minutes, not 1 hour.
    let mut sim = CacheSim::new(TtlMode::Auto);
    sim.observe(&req(0, 0, 0, &[(1, 1500, None), (2, 500, M5)]), MIN);
    let b = sim.observe(&req(1, 0, 1800, &[(1, 1500, None), (2, 500, M5)]), MIN);
    assert_eq!(b.read, 0);
}

/// The same request with top-level `cache_control` (automatic caching).
fn auto(mut r: Request, ttl: Ttl) -> Request {
    r.prefix.auto_breakpoint = Some(ttl);
    r
}

/// A prefix whose only breakpoint lies below the minimum caches nothing; repeated, it
/// has the cause `below_minimum` naming the tokens up to that breakpoint (block 2: 300 +
/// 200 = 500), not the whole prompt (2000), but no missed tokens: nothing could have been
/// cached, so nothing costs extra (issue 31 item 7: it was a 500-token miss billed as
/// input). A first request caching nothing has no cause; a
/// request sharing nothing with its thread's previous one has none either.
#[test]
fn a_prefix_below_the_minimum_names_its_tokens_up_to_the_last_breakpoint() {
    let blocks: &[B] = &[(1, 300, None), (2, 200, M5), (3, 1500, None)];
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, blocks), MIN);
    assert_eq!((a.read, a.write_5m, a.uncached), (0, 0, 2000));
    assert_eq!((a.breakpoints, a.miss_tokens, a.cause), (1, 0, None));
    let b = sim.observe(&req(1, 0, 10, blocks), MIN);
    assert_eq!((b.reference, b.read, b.uncached), (Some(0), 0, 2000));
    assert_eq!(
        b.cause,
        Some(MissCause::BelowMinimum {
            tokens: 500,
            minimum: MIN
        })
    );
    assert_eq!(b.miss_tokens, 0);
    // 20 s: other content (300 tokens, breakpoint below the minimum): nothing repeats.
    let c = sim.observe(&req(2, 0, 20, &[(9, 300, M5)]), MIN);
    assert_eq!((c.reference, c.miss_tokens, c.cause), (Some(1), 0, None));

    // The thread's previous request cached blocks 1+2 (1200 tokens); this one moved the
    // breakpoint to block 1 (600 tokens, below the minimum): the 1200 are missed.
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, &[(1, 600, None), (2, 600, M5)]), MIN);
    assert_eq!(a.write_5m, 1200);
    let b = sim.observe(&req(1, 0, 10, &[(1, 600, M5), (2, 600, None)]), MIN);
    assert_eq!((b.read, b.write_5m, b.uncached), (0, 0, 1200));
    assert_eq!(
        b.cause,
        Some(MissCause::BelowMinimum {
            tokens: 600,
            minimum: MIN
        })
    );
    assert_eq!((b.miss_tokens, b.billed_as), (1200, BilledAs::Input));
}

/// A repeated prefix without any breakpoint: 2000 tokens (over the minimum) are a
/// `no_breakpoint` miss of all 2000, billed as input; 500 repeated tokens (under it)
/// could not have been cached anyway: no cause.
#[test]
fn a_repeated_prefix_without_breakpoints_is_a_no_breakpoint_miss_past_the_minimum() {
    let long: &[B] = &[(1, 1500, None), (2, 500, None)];
    let short: &[B] = &[(7, 300, None), (8, 200, None)];
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, long), MIN);
    assert_eq!((a.breakpoints, a.uncached, a.cause), (0, 2000, None));
    let b = sim.observe(&req(1, 0, 10, long), MIN);
    assert_eq!(
        (b.reference, b.cause),
        (Some(0), Some(MissCause::NoBreakpoint))
    );
    assert_eq!((b.miss_tokens, b.billed_as), (2000, BilledAs::Input));
    // Thread 1 shares nothing with thread 0 (its first block differs): no reference.
    let c = sim.observe(&req(2, 1, 20, short), MIN);
    assert_eq!((c.reference, c.cause), (None, None));
    let d = sim.observe(&req(3, 1, 30, short), MIN);
    assert_eq!((d.reference, d.uncached), (Some(2), 500));
    assert_eq!((d.miss_tokens, d.cause), (0, None));
}

/// Top-level `cache_control` puts a breakpoint on the last block, unless that block has
/// one already or four explicit ones are there (the API allows 4).
#[test]
fn automatic_caching_adds_a_last_block_breakpoint_within_the_four() {
    let three: &[B] = &[(1, 1100, None), (2, 500, None), (3, 400, None)];
    let run = |r: Request| CacheSim::new(TtlMode::Auto).observe(&r, MIN);
    // Only the automatic one: blocks 1..3 = 2000 tokens written at its TTL.
    let p = run(auto(req(0, 0, 0, three), Ttl::M5));
    assert_eq!((p.breakpoints, p.write_5m, p.uncached), (1, 2000, 0));
    let p = run(auto(req(0, 0, 0, three), Ttl::H1));
    assert_eq!((p.breakpoints, p.write_1h, p.write_5m), (1, 2000, 0));
    // An explicit one on block 1 (1100 tokens) and the automatic one on block 3:
    // 1100 + (2000 - 1100) = 900 written.
    let first: &[B] = &[(1, 1100, M5), (2, 500, None), (3, 400, None)];
    let p = run(auto(req(0, 0, 0, first), Ttl::H1));
    assert_eq!((p.breakpoints, p.write_5m, p.write_1h), (2, 1100, 900));
    // The last block already has one (5m): the automatic 1h one is not added.
    let last: &[B] = &[(1, 1100, None), (2, 500, None), (3, 400, M5)];
    let p = run(auto(req(0, 0, 0, last), Ttl::H1));
    assert_eq!((p.breakpoints, p.write_5m, p.write_1h), (1, 2000, 0));
    // Four explicit ones on blocks 1-4 of six (400 tokens each: 400, 800, 1200, 1600);
    // those at 1200 and 1600 are cacheable: 1200 + 400 written, blocks 5-6 uncached.
    let six: Vec<B> = (0..6)
        .map(|i| (i + 1, 400, if i < 4 { M5 } else { None }))
        .collect();
    let p = run(auto(req(0, 0, 0, &six), Ttl::M5));
    assert_eq!((p.breakpoints, p.write_5m, p.uncached), (4, 1600, 800));
    // An empty prefix has no last block to mark.
    let p = run(auto(req(0, 0, 0, &[]), Ttl::M5));
    assert_eq!(
        (p.breakpoints, p.write_5m, p.read, p.cause),
        (0, 0, 0, None)
    );
}

/// Four blocks with entries at blocks 2 (600 + 600 = 1200 tokens) and 4 (+ 300 + 300 =
/// 1800).
const FOUR: &[B] = &[(1, 600, None), (2, 600, M5), (3, 300, None), (4, 300, M5)];

/// Diagnosis names the longest entry the lookup found, live or not, with its own last
/// use. Entries at blocks 2 (1200 tokens) and 4 (1800) written at 0 s; thread 1 reads
/// block 2's at 200 s (refreshing it); at 600 s both are expired, block 4's since 0 s:
/// gap 600 s, not block 2's 400 s.
#[test]
fn the_lookup_reports_the_longest_expired_entry_with_its_own_last_use() {
    let blocks = FOUR;
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, blocks), MIN);
    assert_eq!(a.write_5m, 1800);
    let b = sim.observe(&req(1, 1, 200, &blocks[..2]), MIN);
    assert_eq!((b.read, b.reference, b.cause), (1200, Some(0), None));
    let c = sim.observe(&req(2, 0, 600, blocks), MIN);
    assert_eq!((c.read, c.write_5m, c.miss_tokens), (0, 1800, 1800));
    assert_eq!(
        c.cause,
        Some(MissCause::TtlExpired {
            gap_s: 600.0,
            ttl_s: 300
        })
    );
}

/// A thread's first request is compared with the request of its session sharing the
/// longest prefix; one sharing none has no reference. Either way, with nothing of its
/// prefix cached before, it is a cold start that missed all it wrote.
#[test]
fn a_new_thread_sharing_no_cached_prefix_is_a_cold_start() {
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, &[(1, 1500, None), (2, 500, M5)]), MIN);
    assert_eq!(
        (a.reference, a.cause, a.miss_tokens),
        (None, Some(MissCause::ColdStart), 2000)
    );
    // Thread 1: its own first block: no reference.
    let b = sim.observe(&req(1, 1, 10, &[(5, 1200, M5)]), MIN);
    assert_eq!((b.reference, b.cause), (None, Some(MissCause::ColdStart)));
    assert_eq!((b.miss_tokens, b.write_5m), (1200, 1200));
    // Thread 2 shares block 1 with request 0, whose only entry (block 2) lies past the
    // shared part: reference 0, nothing expected, 1500 + 700 written and missed.
    let c = sim.observe(&req(2, 2, 20, &[(1, 1500, None), (6, 700, M5)]), MIN);
    assert_eq!((c.reference, c.read, c.write_5m), (Some(0), 0, 2200));
    assert_eq!((c.cause, c.miss_tokens), (Some(MissCause::ColdStart), 2200));
}

/// The thread's previous request cached blocks 1-4 (1800 tokens: entries at 1200 and
/// 1800); this one changed message 2 (block 3): it reads 1200 and misses the 600 after,
/// because history was rewritten there.
#[test]
fn a_rewritten_message_misses_what_the_thread_had_cached_after_it() {
    let mut sim = CacheSim::new(TtlMode::Auto);
    sim.observe(&req(0, 0, 0, FOUR), MIN);
    let b = sim.observe(
        &req(1, 0, 10, &[FOUR[0], FOUR[1], (30, 300, None), FOUR[3]]),
        MIN,
    );
    assert_eq!((b.read, b.write_5m, b.miss_tokens), (1200, 600, 600));
    assert_eq!(b.cause, Some(MissCause::HistoryRewritten { message: 2 }));
}

/// A new thread expects, of its reference, the entries before the point where their
/// prefixes diverge: request 0 has entries at blocks 2 and 4; thread 1 diverges at block
/// 3, so it expects block 2's (1200 tokens). At 400 s that entry had expired (written
/// at 0 s): 1200 missed for a TTL expiry, not 1800 for a divergence.
#[test]
fn a_new_thread_expects_the_reference_entries_before_the_divergence() {
    let mut sim = CacheSim::new(TtlMode::Auto);
    sim.observe(&req(0, 0, 0, FOUR), MIN);
    let b = sim.observe(
        &req(1, 1, 400, &[FOUR[0], FOUR[1], (5, 300, None), (6, 300, M5)]),
        MIN,
    );
    assert_eq!((b.reference, b.read, b.write_5m), (Some(0), 0, 1800));
    assert_eq!(b.miss_tokens, 1200);
    assert_eq!(
        b.cause,
        Some(MissCause::TtlExpired {
            gap_s: 400.0,
            ttl_s: 300
        })
    );
}

/// The previous request cached blocks 1-3 (entries at block 1, 1100 tokens, and block
/// 3, 1200). The conversation grew by 22 blocks of 10 tokens with the breakpoint on the
/// last (block 25): its lookback reaches block 5, not block 3, 22 blocks before it. The
/// breakpoint on block 1 still reads 1100: 100 missed, 1420 - 1100 = 320 written.
#[test]
fn a_miss_past_the_lookback_names_how_many_blocks_too_far() {
    let mut sim = CacheSim::new(TtlMode::Auto);
    let start: Vec<B> = vec![(100, 1100, M5), (101, 50, None), (102, 50, M5)];
    let a = sim.observe(&req(0, 0, 0, &start), MIN);
    assert_eq!(a.write_5m, 1200);
    let mut grown = start.clone();
    grown[2].2 = None;
    grown.extend((0..22).map(|i| (200 + i, 10, if i == 21 { M5 } else { None })));
    let b = sim.observe(&req(1, 0, 10, &grown), MIN);
    assert_eq!((b.read, b.write_5m, b.uncached), (1100, 320, 0));
    assert_eq!(b.miss_tokens, 100);
    assert_eq!(b.cause, Some(MissCause::LookbackExceeded { blocks: 22 }));
    assert_eq!(b.cause.unwrap().detail(), "22 blocks > 20");
}

/// Prices of Claude Sonnet 4.5 (USD/MTok): input 3, 5m write 3.75, 1h write 6, read 0.3.
fn sonnet() -> crate::api::prices::ModelPrice {
    serde_json::from_value(serde_json::json!({"model": "s", "ids": ["s"], "input": 3.0,
        "output": 15.0, "write_5m": 3.75, "write_1h": 6.0, "read": 0.3, "min_cacheable": 1024}))
    .unwrap()
}

/// A request writing both TTLs (1h breakpoint on block 2 at 2000 tokens, 5m on block 3
/// at 3000): a cold start misses all 3000, the first 2000 written at the 1-hour rate,
/// the 1000 after at the 5-minute rate: 2000 × (6 − 0.3) + 1000 × (3.75 − 0.3) =
/// 11 400 + 3450 µ$ = $0.01485 beyond reading them (all at the 5-minute rate would be
/// $0.01035). At 400 s only the 5m entry expired: 2000 read, 1000 missed and rewritten
/// at 5m: 1000 × 3.45 µ$ = $0.00345.
#[test]
fn a_miss_writing_both_ttls_costs_the_one_hour_rate_first() {
    let blocks: &[B] = &[(1, 1500, None), (2, 500, H1), (3, 1000, M5)];
    let p = sonnet();
    let mut sim = CacheSim::new(TtlMode::Auto);
    let a = sim.observe(&req(0, 0, 0, blocks), MIN);
    assert_eq!((a.write_1h, a.write_5m, a.miss_tokens), (2000, 1000, 3000));
    assert_eq!(a.billed_as, BilledAs::Write1h5m);
    let usd = a.billed_as.extra_cost_usd(&p, a.miss_tokens, a.write_1h);
    assert!((usd - 0.01485).abs() < 1e-12, "{usd}");
    let b = sim.observe(&req(1, 0, 400, blocks), MIN);
    assert_eq!(
        (b.read, b.write_1h, b.write_5m, b.miss_tokens),
        (2000, 0, 1000, 1000)
    );
    assert_eq!(
        b.cause,
        Some(MissCause::TtlExpired {
            gap_s: 400.0,
            ttl_s: 300
        })
    );
    assert_eq!(b.billed_as, BilledAs::Write5m);
    let usd = b.billed_as.extra_cost_usd(&p, b.miss_tokens, b.write_1h);
    assert!((usd - 0.00345).abs() < 1e-12, "{usd}");
}

/// How missed tokens were billed, from the request's writes, and what that cost beyond
/// a read at the Sonnet prices above (tokens × (rate − 0.3) / 10⁶).
#[test]
fn missed_tokens_are_billed_at_the_rate_they_were_written_or_as_input() {
    let p = sonnet();
    let cases = [
        // (miss, write_5m, write_1h) -> billed, USD
        ((1500, 1000, 2000), BilledAs::Write1h, 1500.0 * 5.7),
        (
            (2500, 1000, 2000),
            BilledAs::Write1h5m,
            2000.0 * 5.7 + 500.0 * 3.45,
        ),
        ((2000, 0, 2000), BilledAs::Write1h, 2000.0 * 5.7),
        ((100, 100, 0), BilledAs::Write5m, 100.0 * 3.45),
        ((700, 0, 0), BilledAs::Input, 700.0 * 2.7),
        ((0, 0, 0), BilledAs::Write5m, 0.0),
        ((0, 300, 2000), BilledAs::Write1h, 0.0),
    ];
    for ((miss, w5, w1), billed, usd) in cases {
        let b = BilledAs::of(miss, w5, w1);
        assert_eq!(b, billed, "{miss} {w5} {w1}");
        let got = b.extra_cost_usd(&p, miss, w1);
        assert!((got - usd / 1e6).abs() < 1e-12, "{miss} {w5} {w1}: {got}");
    }
}
