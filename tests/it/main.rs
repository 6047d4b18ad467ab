//! Integration tests: one binary, shared helpers in `common`.

mod analyze;
mod analyze_cache;
mod analyze_polls;
mod analyze_report;
mod common;
mod common_tshark;
mod completions;
mod diff;
mod diff_snapshots;
mod exit_codes;
mod features;
mod hand_trace;
mod intercept;
mod matrix;
mod pcap;
mod pipes;
mod proxy;
mod record;
mod replay;
mod server;
mod show;
mod terminal;
mod tshark;
mod versions;
