//! The `cargo fuzz` targets' properties (`fuzz/props.rs`) on stable, bounded: each reader
//! (stream assemblers, trace lines, every import through the input layer, pcap files)
//! gets arbitrary bytes and mutations of real inputs (the repository's sample trace,
//! HAR, Codex rollout, and the stream bodies inside the trace): no panic, reading ends.
//! A fixed seed per run keeps CI repeatable; `PROPTEST_CASES` raises the count.

#[path = "../../fuzz/props.rs"]
mod props;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::common::repo;

/// Real inputs to mutate: files of `captures/`, and the response bodies of the sample
/// trace (event streams).
fn seeds() -> Vec<Vec<u8>> {
    let c = repo().join("captures");
    let mut out: Vec<Vec<u8>> = [
        "sample-session.jsonl",
        "imports/sample-session.har",
        "imports/codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-01a30000-0000-7000-8000-00000000c1a5.jsonl",
    ]
    .iter()
    .map(|p| std::fs::read(c.join(p)).unwrap())
    .collect();
    let t = agentwire::input::open_trace(&c.join("sample-session.jsonl")).unwrap();
    out.extend(
        t.exchanges
            .iter()
            .filter_map(|x| x.response.as_ref())
            .map(|r| r.body.bytes.clone())
            .filter(|b| !b.is_empty())
            .take(6),
    );
    out
}

/// A seed with up to 8 bytes changed, a slice cut out, and possibly truncated.
fn mutated(seeds: &[Vec<u8>]) -> impl Strategy<Value = Vec<u8>> + '_ {
    (
        0..seeds.len(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        any::<prop::sample::Index>(),
        0usize..64,
        any::<prop::sample::Index>(),
    )
        .prop_map(move |(i, edits, cut_at, cut_len, end)| {
            let mut b = seeds[i].clone();
            for (at, byte) in edits {
                let n = b.len().max(1);
                if let Some(x) = b.get_mut(at.index(n)) {
                    *x = byte;
                }
            }
            if !b.is_empty() {
                let at = cut_at.index(b.len());
                let to = (at + cut_len).min(b.len());
                b.drain(at..to);
            }
            if !b.is_empty() && end.index(4) == 0 {
                let keep = end.index(b.len());
                b.truncate(keep);
            }
            b
        })
}

fn run(name: &str, cases: u32, strategy: impl Strategy<Value = Vec<u8>>, f: fn(&[u8])) {
    let mut cfg = Config::with_cases(cases);
    cfg.failure_persistence = None;
    let seed = *b"agentwire fuzz props: seed 0001.";
    let mut runner = TestRunner::new_with_rng(cfg, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    if let Err(e) = runner.run(&strategy, |data| {
        f(&data);
        Ok(())
    }) {
        panic!("{name}: {e}");
    }
}

fn arbitrary() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..2048)
}

#[test]
fn fuzz_props_stream_assemblers() {
    let s = seeds();
    run("sse (arbitrary)", 256, arbitrary(), props::sse);
    run("sse (mutated)", 256, mutated(&s), props::sse);
}

#[test]
fn fuzz_props_trace_lines() {
    let s = seeds();
    run(
        "trace lines (arbitrary)",
        256,
        arbitrary(),
        props::trace_lines,
    );
    run(
        "trace lines (mutated)",
        256,
        mutated(&s),
        props::trace_lines,
    );
}

#[test]
fn fuzz_props_imports() {
    let s = seeds();
    run("imports (arbitrary)", 128, arbitrary(), props::import_file);
    run("imports (mutated)", 192, mutated(&s), props::import_file);
}

#[test]
fn fuzz_props_pcap_files() {
    // a real pcap header (little-endian, Ethernet) before arbitrary bytes, so the
    // records reader is reached, not only the magic check
    let header = [
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
    ];
    let framed = arbitrary().prop_map(move |b| [&header[..], &b].concat());
    run("pcap (framed)", 256, framed, props::pcap_file);
    run("pcap (arbitrary)", 64, arbitrary(), props::pcap_file);
}
