//! Integration tests: one binary, shared helpers in `common`.

mod common;
mod record;
mod server;
