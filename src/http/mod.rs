//! HTTP/1.1 rules in one place, at the bottom layer (it imports nothing of `trace`, `api`
//! or `capture`): every source that reads or writes HTTP messages — the capture reader,
//! the fake server and its byte ledger, the proxies, replay and resend — and every reader
//! of recorded headers goes through these.
//!
//! - [`framing`]: the message [`Head`](framing::Head) and its body length (RFC 9112 §6.3);
//! - [`chunked`]: the chunked transfer coding, one incremental decoder (RFC 9112 §7.1);
//! - [`fields`]: list fields, hop-by-hop fields, the event-stream media type (RFC 9110);
//! - [`headers`]: [`Headers`], the recorded header fields with their lookups;
//! - [`host`]: host names in one form for comparisons;
//! - [`websocket`]: WebSocket frames read passively, reassembled and inflated (RFC 6455, 7692).

pub mod chunked;
pub mod fields;
pub mod framing;
pub mod headers;
pub mod host;
pub mod target;
pub mod websocket;

pub use fields::is_event_stream;
pub use headers::Headers;
