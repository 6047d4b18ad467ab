//! Integration tests: one binary, shared helpers in `common`.

mod common;
mod diff;
mod diff_snapshots;
mod intercept;
mod matrix;
mod proxy;
mod record;
mod replay;
mod server;
mod tshark;
