//! Codex session files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) read as a trace
//! of `POST /v1/responses` exchanges, one per model response.
//!
//! A rollout is JSON Lines of `{"timestamp", "type", "payload"}` (Codex 0.165.0 and
//! 0.171.0 add `ordinal` and, on some lines, `metadata`). What each type holds, as read from
//! real rollouts written next to the request bodies the API received in the same runs:
//! - `session_meta`: the session id (`session_id`/`id`), `cli_version`, `originator`,
//!   `model_provider` (`openai` for the built-in provider), `base_instructions.text`;
//! - `turn_context`: the `model` of the turn, sandbox and approval settings;
//! - `response_item`: the Responses API items in the order Codex adds them to its history:
//!   what it sends (developer and user messages, `additional_tools`, tool outputs) and the
//!   model's output items (reasoning, `function_call`, `custom_tool_call`, assistant
//!   messages), each with Codex's `internal_chat_message_metadata_passthrough`;
//! - `token_usage_record`: written when a response completes: `response_id`, `turn_id`,
//!   `thread_id`, `usage` (`input_tokens` including `cached_input_tokens`,
//!   `cache_write_input_tokens` — 0 when the API reported none —, `output_tokens`,
//!   `reasoning_output_tokens`, `total_tokens`);
//! - `event_msg` (UI events: `task_started`, `token_count`, `item_completed`, …) and
//!   `world_state` (the state the developer messages are made from): not needed, not used;
//! - `compacted`: the history was compacted; `replacement_history`, when present, is the
//!   history from then on.
//!
//! The request of response N is every item before N's first output item (in code mode that
//! includes the base instructions and the `additional_tools` list; in classic mode the base
//! instructions are only in `session_meta` and are put first by rule, the tool list is not
//! recorded). Requests that got no completed response (errors, retries, WebSocket
//! prewarms) leave nothing in a rollout. Rules and checks: `history.rs`, `docs/import.md`.

mod exchange;
mod history;
mod lines;
mod raw;
mod reader;
mod responses;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::Value;

pub use reader::Rollout;

/// Line types of a rollout this build knows.
pub const LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "token_usage_record",
    "world_state",
    "compacted",
];

/// Codex versions whose rollouts were checked against the request bodies of the same runs.
pub const CHECKED_VERSIONS: &[&str] = &["0.165.0", "0.171.0"];

/// Most bytes of conversation held for one session (and the longest line read): 64 MiB,
/// far past a model's context window. A rollout past it is read up to there, and the
/// problem says where it stopped.
pub const MAX_HISTORY: usize = 64 << 20;

/// True when `v` (a line's JSON) is a rollout line: a known `type`, a `timestamp` string
/// and a `payload`.
pub fn is_rollout_line(v: &Value) -> bool {
    v.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| LINE_TYPES.contains(&t))
        && v.get("timestamp").is_some_and(Value::is_string)
        && v.get("payload").is_some()
}

/// What `session_meta` says, and the file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Meta {
    /// The file read.
    pub file: PathBuf,
    /// `session_id` (else `id`).
    pub session: Option<String>,
    /// `cli_version`.
    pub cli_version: Option<String>,
    /// `originator` (`codex_exec`, `codex_cli_rs`, …).
    pub originator: Option<String>,
    /// `model_provider`.
    pub provider: Option<String>,
    /// `base_instructions.text`.
    pub base: Option<String>,
}

impl Meta {
    /// Take a `session_meta` payload.
    fn take(&mut self, p: &Value) {
        let s = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
        self.session = s("session_id").or_else(|| s("id"));
        self.cli_version = s("cli_version");
        self.originator = s("originator");
        self.provider = s("model_provider");
        self.base = p
            .pointer("/base_instructions/text")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
}
