//! Integration tests: one binary, shared helpers in `common`.

mod common;
mod pcap;
mod record;
mod server;
