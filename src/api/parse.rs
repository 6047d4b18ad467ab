//! Parsing a request body into the canonical [`MessagesRequest`]: the one dispatch from a
//! [`Dialect`] to its parser (`messages`, `responses`, `gemini`, `chat`), kept apart from
//! the model so that the parsers build on `request` and nothing in `request` calls them.

use super::dialect::Dialect;
use super::request::MessagesRequest;
use super::ApiError;

impl MessagesRequest {
    /// Parse a request body of `dialect`.
    ///
    /// Errors: as [`MessagesRequest::parse`]; a dialect agentwire has no parser for yet is
    /// [`ApiError::NoParser`].
    pub fn parse_as(dialect: Dialect, body: &[u8]) -> Result<MessagesRequest, ApiError> {
        super::check_json(body)?;
        Self::parse_known_json_as(dialect, body)
    }

    /// [`MessagesRequest::parse_as`] of a body already known to be valid JSON.
    pub(crate) fn parse_known_json_as(
        dialect: Dialect,
        body: &[u8],
    ) -> Result<MessagesRequest, ApiError> {
        match dialect {
            Dialect::Messages => super::messages::parse_with(body, true),
            Dialect::Responses => super::responses::parse(body),
            Dialect::Gemini => super::gemini::parse(body),
            Dialect::ChatCompletions => super::chat::parse(body),
        }
    }

    /// Parse a Messages request body.
    ///
    /// Errors: [`ApiError::InvalidJson`] (with the byte offset) when the body is not JSON;
    /// [`ApiError::NotAnObject`] when it is JSON but not an object. Missing or oddly typed
    /// fields are not errors: they are left empty.
    pub fn parse(body: &[u8]) -> Result<MessagesRequest, ApiError> {
        super::check_json(body)?;
        super::messages::parse_with(body, true)
    }

    /// Like [`MessagesRequest::parse`] but only the top level: `model`, parameters and the
    /// spans of `system`, `tools` and `messages`, whose contents stay unparsed (empty
    /// `tools` and `messages`). Several times cheaper on large bodies; the stub server uses
    /// it.
    pub fn parse_head(body: &[u8]) -> Result<MessagesRequest, ApiError> {
        super::check_json(body)?;
        super::messages::parse_with(body, false)
    }
}
