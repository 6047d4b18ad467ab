//! The fake model-API server: answers like the Anthropic Messages API and the OpenAI
//! Responses API (streaming included, and the Responses WebSocket) so a CLI runs to
//! completion at no cost, and records every exchange — malformed ones too — to a trace.
//!
//! Endpoints: `POST /v1/messages` (any query, e.g. `?beta=true`), `POST
//! /v1/messages/count_tokens`, `GET /v1/models`; `POST …/responses` (any prefix:
//! `/v1/responses`, `/backend-api/codex/responses`) and `GET …/responses` upgraded to a
//! WebSocket; everything else is recorded and answered 404 in the API's error shape.
//! Modes: stub (a short text reply), script (see [`script`]), proxy ([`proxy`]) and replay
//! ([`playback`]: answering with a recorded trace; re-sending one is `capture::resend`), for every endpoint and transport.
//!
//! One file per part: [`config`] (what the server is told), `state` (what its connections
//! share), `run` (start and shutdown), `conn` (accepting and serving connections, with
//! `tee` accounting for every byte received and `unclaimed` recording what no handler
//! got), [`intercept`] (CONNECT and TLS interception), `handler` (reading and routing a
//! request), `draft` (an exchange being answered), [`reply`] (what the server says in
//! Messages terms), `responses` (the Responses API over HTTP), `websocket` (the Responses
//! WebSocket: sessions, frames, relay), [`proxy`], [`playback`] (with `replay_responses`),
//! [`script`], [`recorder`] (the trace writer thread), [`tls`].

mod chat;
pub mod config;
mod conn;
mod draft;
mod error;
mod gemini;
mod handler;
pub mod intercept;
pub mod playback;
pub mod proxy;
pub mod recorder;
mod replay_chat;
mod replay_responses;
pub mod reply;
mod responses;
mod rewrite;
mod run;
pub mod script;
pub mod script_agents;
mod state;
mod tee;
pub mod tls;
mod unclaimed;
mod websocket;

pub use config::{InterceptConfig, Mode, ServerConfig, WebSocketOptions};
pub use error::ServerError;
pub use run::{bind, start, start_on, RunningServer, SHUTDOWN_GRACE};
pub use script::Script;
