//! Fuzz target: `props::trace_lines` (see `fuzz/props.rs`), `cargo +nightly fuzz run trace_line`. The same
//! property runs on stable, bounded, in `tests/it/fuzz_props.rs`.

#![no_main]

#[path = "../props.rs"]
mod props;

libfuzzer_sys::fuzz_target!(|data: &[u8]| props::trace_lines(data));
