//! Integration tests: one binary, shared helpers in `common`.

mod common;
mod intercept;
mod proxy;
mod record;
mod replay;
mod server;
