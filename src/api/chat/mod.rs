//! The OpenAI Chat Completions dialect (`POST /v1/chat/completions`): request bodies read
//! into the canonical request ([`parse`]), and answers, streamed as
//! `chat.completion.chunk` deltas or sent as one `chat.completion` object, assembled into
//! the canonical response ([`stream`]).
//!
//! Source: OpenAI API reference, "Create chat completion" and "The chat completion chunk
//! object"; the shapes opencode 1.18.33 sends through an `@ai-sdk/openai-compatible`
//! provider were measured on 2026-12-01.

pub mod events;
mod request;
pub mod stream;

pub use request::{parse, KNOWN_PARAMS};
