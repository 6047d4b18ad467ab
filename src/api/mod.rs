//! A typed, tolerant view of Anthropic Messages API bodies: requests with byte spans for
//! every part ([`MessagesRequest`]), content blocks ([`Block`]), streamed responses
//! assembled from SSE ([`sse`], the one event-stream parser), usage ([`Usage`]) and a
//! token estimate; [`decode`] is the one content decoder every reader sees bodies through;
//! and the **canonical view** every command uses ([`view::Canonicalizer`]): session identity
//! ([`session`]), threads ([`thread`]), volatile-value normalization ([`normalize`]),
//! beta sets ([`betas`]), loaded/deferred/announced tools ([`tools`]), the prompt-cache
//! prefix and invalidation rules ([`cache`]), and model prices ([`prices`]).
//!
//! Tolerance: unknown top-level keys, block types, tool types and stream events are kept
//! and shown, never dropped and never fatal.

pub mod betas;
pub mod cache;
pub mod chat;
mod content;
pub mod decode;
pub mod dialect;
pub mod gemini;
pub mod memo;
mod messages;
pub mod normalize;
mod parse;
pub mod prices;
mod request;
mod response;
pub mod responses;
pub mod session;
pub mod span;
pub mod sse;
pub mod thread;
pub mod tools;
mod usage;
pub mod view;

pub use content::{Block, BlockKind};
pub use decode::{decode_body, request_body, response_body, Decoded};
pub use dialect::{Dialect, Provider};
pub use messages::KNOWN_PARAMS;
pub use request::{
    Message, MessageDerived, MessagesRequest, NestedTool, Param, System, Tool, ToolDerived,
};
pub use response::{error_text, ResponseBody, ResponseMessage};
pub use span::Span;
pub use usage::{estimate_tokens, OpenAiNames, Usage, CHAT_USAGE, MAX_TOKENS, RESPONSES_USAGE};
pub use view::read_response;

/// True when `text` (a configuration file: rules, prices) is a JSON object, a byte-order
/// mark and whitespace aside. Checked before reading it into a struct: serde reads a
/// struct from an array too, field by position, so `[false]` would silently mean
/// `{"defaults": false}`.
pub(crate) fn is_object_text(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

/// Errors of the api module.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The body is not valid JSON.
    #[error(
        "request body is not valid JSON at byte {offset} (line {line}, column {column}): {message}"
    )]
    InvalidJson {
        /// Byte offset of the error (approximate for errors at end of input).
        offset: usize,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// A dialect agentwire recognises but does not parse yet.
    #[error("{dialect} request bodies are not read by this agentwire yet; upgrade agentwire")]
    NoParser {
        /// The dialect's name.
        dialect: &'static str,
    },
    /// Valid JSON, but not an object.
    #[error("request body is JSON but not an object; a Messages request is a JSON object")]
    NotAnObject,
    /// A price file could not be used.
    #[error("cannot use price file {path}: {message} (see docs/analyze.md, \"Prices\")")]
    Prices {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A normalization rules file or rule is bad.
    #[error("normalization rules ({origin}): {message}")]
    Rules {
        /// File or `built-in rules`.
        origin: String,
        /// What is wrong.
        message: String,
    },
}

/// Check that `body` is one valid JSON document in UTF-8.
pub fn check_json(body: &[u8]) -> Result<(), ApiError> {
    if let Err(e) = std::str::from_utf8(body) {
        let offset = e.valid_up_to();
        let line = body[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset
            - body[..offset]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        return Err(ApiError::InvalidJson {
            offset,
            line,
            column,
            message: "invalid UTF-8 (JSON text must be UTF-8)".into(),
        });
    }
    match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        Ok(_) => Ok(()),
        Err(e) => {
            let (line, column) = (e.line(), e.column());
            let offset = body
                .split(|&b| b == b'\n')
                .take(line.saturating_sub(1))
                .map(|l| l.len() + 1)
                .sum::<usize>()
                + column.saturating_sub(1);
            Err(ApiError::InvalidJson {
                offset,
                line,
                column,
                message: e.to_string(),
            })
        }
    }
}
