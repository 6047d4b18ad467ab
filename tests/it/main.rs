//! Integration tests: one binary, shared helpers in `common`.

mod common;
mod diff;
mod diff_snapshots;
mod record;
mod server;
mod tshark;
