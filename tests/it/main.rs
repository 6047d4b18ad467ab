//! Integration tests: one binary, shared helpers in `common`.

mod analyze;
mod analyze_cache;
mod analyze_polls;
mod analyze_report;
mod common;
mod common_tshark;
mod hand_trace;
