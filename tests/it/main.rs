//! Integration tests: one binary, shared helpers in `common`.

mod analyze;
mod analyze_cache;
mod analyze_polls;
mod analyze_report;
mod common;
mod common_chromium;
mod common_tshark;
mod diff;
mod diff_snapshots;
mod hand_trace;
mod history;
mod intercept;
mod matrix;
mod pcap;
mod prompt;
mod proxy;
mod record;
mod replay;
mod report_html;
mod report_injection;
mod report_md;
mod server;
mod show;
mod tshark;
