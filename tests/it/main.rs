//! Integration tests: one binary, shared helpers in `common`.

mod analyze;
mod analyze_cache;
mod analyze_polls;
mod analyze_report;
mod common;
mod common_tshark;
mod connect;
mod diff;
mod diff_snapshots;
mod framing;
mod hand_trace;
mod hostile;
mod intercept;
mod limits;
mod matrix;
mod numbers;
mod outputs;
mod pcap;
mod proxy;
mod record;
mod replay;
mod secrets;
mod server;
mod show;
mod tshark;
