//! The Responses WebSocket (OpenAI "WebSocket mode"): `GET …/responses` with
//! `Upgrade: websocket`, then one `response.create` text message per request, each
//! answered with the response's events as JSON text messages (no `event:` line).
//!
//! The handshake is hyper's upgrade (`hyper::upgrade::on`), so the server's own
//! connection layer keeps counting bytes (the ledger hands the connection over as a
//! tunnel); the protocol is `tokio-tungstenite`'s, through a [`tap`] that notes every
//! frame for the trace ([`record`]). `permessage-deflate` is never accepted (tungstenite
//! has none): the 101 carries no `Sec-WebSocket-Extensions`, so clients send plain frames.
//!
//! Stub, script and replay modes answer here ([`session`]); in proxy mode the upgrade is
//! relayed to the upstream ([`relay`]). [`crate::capture::server::config::WebSocketOptions`]
//! can refuse the upgrade (426, so clients fall back to `POST`) or close a connection
//! after N generated responses.

mod accept;
mod chain;
mod handshake;
mod record;
mod relay;
mod session;
mod tap;

pub(crate) use accept::upgrade;
pub(crate) use chain::{outcome, Chain};
pub(crate) use handshake::wants;
