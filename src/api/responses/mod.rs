//! The OpenAI Responses dialect: request bodies (`POST /v1/responses` and
//! WebSocket `response.create` messages), items and content parts ([`items`]), answers written as events ([`events`]), tools
//! declared inside descriptions ([`nested`]), and streamed responses ([`stream`]).

pub mod chain;
pub mod events;
pub mod items;
pub mod nested;
mod request;
pub mod stream;

pub use request::{parse, KNOWN_PARAMS};
