//! The analyzer's request model: each Messages exchange reduced to what the analyses need —
//! its session and thread (from the api layer's [`Canonicalizer`]), its cached prefix and
//! cache keys ([`CachePrefix`]), recorded usage and whether agentwire made that usage up
//! — and the tool calls, tool results and `<task-notification>`s the conversation
//! carries. Bodies are dropped after this step, so a multi-GB trace is analysed in
//! bounded memory.

use std::collections::HashSet;

use chrono::{DateTime, Utc};

use crate::api::cache::{hash_of, CachePrefix};
use crate::api::view::{exchange_response, Canonicalizer, Parsed};
use crate::api::{BlockKind, MessagesRequest, ResponseBody, ResponseMessage, Usage};
use crate::trace::{header_value, Exchange, SourceKind};

use super::events::{cap, parse_notifications, Notification, ToolCall, ToolResult};

/// One Messages request, reduced.
#[derive(Clone, Debug)]
pub struct Request {
    /// Position among all analysed requests (all traces), from 0.
    pub seq: usize,
    /// Index of the trace among the inputs.
    pub trace: usize,
    /// Exchange id within its trace.
    pub exchange: u64,
    /// Session number (unique across traces).
    pub session: usize,
    /// Global thread number (unique across sessions).
    pub thread: usize,
    /// Turn within the thread: the number of assistant replies in the history.
    pub turn: usize,
    /// When the request started.
    pub at: DateTime<Utc>,
    /// `model` (empty if absent).
    pub model: String,
    /// The cached prefix and cache keys (emptied once simulated, to bound memory).
    pub prefix: CachePrefix,
    /// Estimated input tokens of the prompt (kept after the prefix is dropped).
    pub prompt_tokens: u64,
    /// Usage from the response, if any.
    pub recorded: Option<Usage>,
    /// Why the recorded usage is not the API's, when agentwire made the response up
    /// (`None`: a response from elsewhere).
    pub synthesized: Option<String>,
    /// Estimated output tokens (from the response content's bytes).
    pub output_estimate: u64,
    /// The client's version: `claude-cli/VERSION` of the User-Agent, else the recording
    /// context's `cli_version` (the Parquet tables' partition key).
    pub cli_version: Option<String>,
    /// The agent CLI that sent it (`claude-code`, `codex`, `gemini`, `opencode`): the one
    /// its User-Agent names ([`USER_AGENTS`]), else the recording context's `cli`.
    pub agent: Option<String>,
    /// The wire format it came in (its provider is [`crate::api::Dialect::provider`]).
    pub dialect: crate::api::Dialect,
    /// The API error the response held, `type: message` (an error body such as a 529
    /// `overloaded_error`, or a 200 stream that ended with an `error` event).
    pub api_error: Option<String>,
}

/// User-Agent prefixes of the agent CLIs agentwire knows, and the CLI each names:
/// Claude Code (`claude-cli/2.1.304 (external, sdk-cli)`), Codex (`codex_exec/0.171.0
/// (Debian 12.0.0; x86_64) …`, measured on 0.165.0 and 0.171.0; `codex_cli_rs/…` for its
/// interactive mode), Gemini CLI (`GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64;
/// terminal)`, measured on 0.61.0; the version ends at a space or a slash), opencode
/// (`opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14`, measured on
/// 1.18.33 against all three of its wire formats).
pub const USER_AGENTS: &[(&str, &str)] = &[
    ("claude-cli/", "claude-code"),
    ("codex_exec/", "codex"),
    ("codex_cli_rs/", "codex"),
    ("GeminiCLI-tui/", "gemini"),
    ("GeminiCLI/", "gemini"),
    ("opencode/", "opencode"),
];

/// The agent CLI and version a request names in its User-Agent (`claude-cli/2.1.304
/// (external, sdk-cli)` → `("claude-code", "2.1.304")`).
pub fn user_agent_cli(x: &Exchange) -> Option<(&'static str, String)> {
    let ua = header_value(&x.request.headers, "user-agent")?;
    USER_AGENTS.iter().find_map(|(prefix, cli)| {
        let v = ua.strip_prefix(prefix)?.split([' ', '/']).next()?;
        (!v.is_empty()).then(|| (*cli, v.to_string()))
    })
}

/// The agent CLI version a request names in its User-Agent ([`user_agent_cli`]).
pub fn user_agent_cli_version(x: &Exchange) -> Option<String> {
    user_agent_cli(x).map(|(_, v)| v)
}

/// Why a response's usage is agentwire's own: its fake server wrote the response (the
/// `synthesized` note, or a `stub`/`script`/`replay` server source), or the message id
/// says so (`msg_agentwire_…`, visible on the wire, so a packet capture of agentwire's
/// server is recognised too). `None` for responses from elsewhere.
pub fn synthesized(x: &Exchange, m: Option<&ResponseMessage>) -> Option<String> {
    if let Some(n) = x.notes.get("synthesized") {
        let by = n.get("by").and_then(|v| v.as_str()).unwrap_or("agentwire");
        return Some(format!("synthesized by {by}"));
    }
    if x.source.kind == SourceKind::Server {
        let mode = x.source.mode.as_deref().unwrap_or("stub");
        if !mode.starts_with("proxy") {
            return Some(format!("synthesized by agentwire ({mode})"));
        }
    }
    m.and_then(|m| m.id.as_deref())
        .filter(|id| id.starts_with("msg_agentwire_") || id.starts_with("resp_agentwire_"))
        .map(|_| "synthesized by agentwire (message id)".to_string())
}

/// The model and recorded token figures of an exchange's response, if it is a Messages
/// response with usage (read through the one decoder).
pub fn recorded_tokens(x: &Exchange) -> Option<(String, crate::api::prices::Tokens)> {
    let ResponseBody::Message(m) = exchange_response(x)? else {
        return None;
    };
    let tokens = m.usage.tokens()?;
    Some((m.model.clone().unwrap_or_default(), tokens))
}

/// Everything the input stage extracted from one exchange.
pub struct Extracted {
    /// The reduced request.
    pub request: Request,
    /// Tool calls first seen in this exchange (its response, or history not seen before).
    pub calls: Vec<ToolCall>,
    /// `(tool_use_id, result)` pairs first carried by this request.
    pub results: Vec<(String, ToolResult)>,
    /// Task notifications first carried by this request.
    pub notifications: Vec<Notification>,
    /// True when the response's text says something finished (`finished`, `completed`,
    /// `done`, `succeeded`, `passed`): a claim a job's notification may contradict.
    pub claims_done: bool,
    /// Problems reading the response: stream events skipped as impossible
    /// (`ResponseMessage::stream_problems`), a content coding that could not be removed.
    pub stream_problems: Vec<String>,
}

/// What can be read from one exchange without looking at any other: its canonical
/// request, the request's cached prefix and the parsed response. [`prepare`] makes it
/// on any thread; [`InputStage::extract_prepared`] places it, in order.
pub struct Prepared {
    parsed: Parsed,
    prefix: Option<CachePrefix>,
    response: Option<Box<ResponseMessage>>,
    /// Why the response body could not be read, when its content coding failed.
    response_problem: Option<String>,
    /// The API error the response holds (error body or stream `error` event).
    api_error: Option<String>,
}

/// The stateless part of [`InputStage::extract`]: parse the request body (through the
/// one decoder), compute its cached prefix and cache keys, and read the response.
pub fn prepare(x: &Exchange) -> Prepared {
    prepare_parsed(x, crate::api::view::parse(x), exchange_response)
}

/// [`prepare`] of an exchange whose request body [`crate::api::view::parse`] already read;
/// `response` reads its response body ([`exchange_response`], or what a caller read of it
/// before), called only for a Messages request.
pub fn prepare_parsed(
    x: &Exchange,
    parsed: Parsed,
    response: impl FnOnce(&Exchange) -> Option<ResponseBody>,
) -> Prepared {
    let prefix = match &parsed.request {
        Some(c) => CachePrefix::of(&c.req, c.body(x), &c.betas),
        // A continuation is read when placed (it needs the chain); its response now.
        None if parsed.continues => CachePrefix::default(),
        None => {
            return Prepared {
                parsed,
                prefix: None,
                response: None,
                response_problem: None,
                api_error: None,
            }
        }
    };
    let body = response(x);
    let api_error = body.as_ref().and_then(ResponseBody::api_error);
    let (response, response_problem) = match body {
        Some(ResponseBody::Message(m)) => (Some(m), None),
        Some(ResponseBody::Undecodable { reason }) => (None, Some(reason)),
        _ => (None, None),
    };
    Prepared {
        parsed,
        prefix: Some(prefix),
        response,
        response_problem,
        api_error,
    }
}

/// Input state over all traces: sessions and threads, and what each session already
/// carried (tool-use ids repeat across sessions of scripted runs).
#[derive(Default)]
pub struct InputStage {
    trace: usize,
    /// `cli_version` of the current trace's recording context.
    context_version: Option<String>,
    /// `cli` of the current trace's recording context.
    context_cli: Option<String>,
    canon: Canonicalizer,
    seen_results: HashSet<(usize, String)>,
    seen_calls: HashSet<(usize, String)>,
    seen_notes: HashSet<(usize, u64)>,
    /// Session and label of each global thread, in order.
    pub threads: Vec<(usize, String)>,
}

impl InputStage {
    /// No input yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Start trace number `trace` (a new recording context: sessions without client ids
    /// do not continue into it).
    pub fn begin_trace(&mut self, trace: usize) {
        self.trace = trace;
        self.context_version = None;
        self.context_cli = None;
        self.canon.new_context();
    }

    /// A new recording context within the current trace (a header line): sessions without
    /// client ids do not continue into it.
    pub fn new_context(&mut self) {
        self.context_version = None;
        self.context_cli = None;
        self.canon.new_context();
    }

    /// The current trace's recording context says which CLI version made it.
    pub fn set_cli_version(&mut self, version: Option<String>) {
        self.context_version = version;
    }

    /// The current trace's recording context says which agent CLI made it (`cli`).
    pub fn set_cli(&mut self, cli: Option<String>) {
        self.context_cli = cli;
    }

    /// The canonicalizer (sessions seen so far).
    pub fn canon(&self) -> &Canonicalizer {
        &self.canon
    }

    /// Reduce one exchange. `Ok(None)` for exchanges that are not Messages requests;
    /// `Err(message)` (naming the exchange and the byte offset) when a Messages request's
    /// body is not a JSON object — the caller counts it and goes on.
    pub fn extract(&mut self, x: &Exchange, seq: usize) -> Result<Option<Extracted>, String> {
        self.extract_prepared(x, prepare(x), seq)
    }

    /// [`InputStage::extract`] of an exchange whose stateless part [`prepare`] already
    /// read (possibly on another thread). Exchanges must come in arrival order.
    pub fn extract_prepared(
        &mut self,
        x: &Exchange,
        prepared: Prepared,
        seq: usize,
    ) -> Result<Option<Extracted>, String> {
        let Prepared {
            parsed,
            prefix,
            response,
            response_problem,
            api_error,
        } = prepared;
        let continues = parsed.continues;
        let view = self.canon.place(x, parsed);
        if let Some(e) = view.error {
            return Err(format!("exchange {}: {e}", x.id));
        }
        let (Some(c), Some(prefix)) = (view.request, prefix) else {
            return Ok(None);
        };
        // A prewarm generates nothing: not a turn of the conversation.
        if c.prewarm {
            return Ok(None);
        }
        let prefix = if continues {
            CachePrefix::of(&c.req, c.body(x), &c.betas)
        } else {
            prefix
        };
        let thread = view.place.thread.expect("a Messages request has a thread");
        let session = view.place.session;
        if thread == self.threads.len() {
            self.threads.push((session, view.place.thread_label));
        }
        let at = (seq, session, thread);
        let response = response.as_deref();
        let mut request = self.request(x, at, c.turn, prefix, response);
        request.api_error = api_error;
        request.dialect = c.req.dialect;
        let mut out = Extracted::new(request, response, response_problem);
        out.stream_problems.extend(c.chain_problem.clone());
        self.scan_history(&c.req, x, at, &mut out);
        if let Some(m) = response {
            self.response_calls(m, x, at, &mut out);
        }
        Ok(Some(out))
    }

    /// The reduced request of exchange `x` at `(seq, session, thread)`.
    fn request(
        &self,
        x: &Exchange,
        (seq, session, thread): (usize, usize, usize),
        turn: usize,
        prefix: CachePrefix,
        response: Option<&ResponseMessage>,
    ) -> Request {
        Request {
            seq,
            trace: self.trace,
            exchange: x.id,
            session,
            thread,
            turn,
            at: x.started_at,
            model: prefix.model.clone(),
            prompt_tokens: prefix.prompt_tokens,
            prefix,
            recorded: response.map(|m| m.usage.clone()),
            synthesized: synthesized(x, response),
            output_estimate: crate::api::estimate_tokens(response.map_or(0, output_bytes)),
            cli_version: user_agent_cli_version(x).or_else(|| self.context_version.clone()),
            agent: user_agent_cli(x)
                .map(|(cli, _)| cli.to_string())
                .or_else(|| self.context_cli.clone()),
            dialect: crate::api::Dialect::default(),
            api_error: None,
        }
    }

    /// The tool calls of the response not seen before in the session.
    fn response_calls(
        &mut self,
        m: &ResponseMessage,
        x: &Exchange,
        (seq, session, thread): (usize, usize, usize),
        out: &mut Extracted,
    ) {
        let issued_at = x.ended_at.unwrap_or(x.started_at);
        let gemini = crate::api::Dialect::of(x) == Some(crate::api::Dialect::Gemini);
        for (id, name, input) in m.tool_calls() {
            // A Gemini call the API sent without an id has a made-up one; the client
            // echoes it with an id of its own, and that echo is the call.
            if gemini && crate::api::gemini::parts::is_made_up(id) {
                continue;
            }
            if self.seen_calls.insert((session, id.to_string())) {
                out.calls.push(ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    input: input.clone(),
                    session,
                    thread,
                    issued_by: seq,
                    issued_at,
                    result: None,
                });
            }
        }
    }

    /// What the history carries for the first time: calls whose response was not
    /// captured, tool results and task notifications.
    fn scan_history(
        &mut self,
        r: &MessagesRequest,
        x: &Exchange,
        at: (usize, usize, usize),
        out: &mut Extracted,
    ) {
        let (seq, session, thread) = at;
        for m in &r.messages {
            for b in &m.content {
                match &b.kind {
                    // A call first seen in history: its response was not captured.
                    BlockKind::ToolUse { id, name, input }
                        if m.role == "assistant"
                            && self.seen_calls.insert((session, id.clone())) =>
                    {
                        out.calls.push(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            input: input.clone(),
                            session,
                            thread,
                            issued_by: seq.saturating_sub(1),
                            issued_at: x.started_at,
                            result: None,
                        });
                    }
                    BlockKind::ToolResult {
                        tool_use_id,
                        text,
                        is_error,
                        references,
                        ..
                    } if self.seen_results.insert((session, tool_use_id.clone())) => {
                        let r = tool_result(text, references, *is_error, seq, x.started_at);
                        out.results.push((tool_use_id.clone(), r));
                    }
                    BlockKind::Text { text } if text.contains("<task-notification>") => {
                        self.notifications(text, x, at, out);
                    }
                    _ => {}
                }
            }
        }
    }

    /// The task notifications of a text block, unless the thread carried it before.
    fn notifications(
        &mut self,
        text: &str,
        x: &Exchange,
        (seq, _, thread): (usize, usize, usize),
        out: &mut Extracted,
    ) {
        let key = (thread, hash_of(&[text.as_bytes()]));
        if self.seen_notes.insert(key) {
            for mut n in parse_notifications(text) {
                n.thread = thread;
                n.carried_by = seq;
                n.at = x.started_at;
                out.notifications.push(n);
            }
        }
    }
}

impl Extracted {
    /// `request` and what its `response` says, before the calls, results and
    /// notifications are added.
    fn new(
        request: Request,
        response: Option<&ResponseMessage>,
        response_problem: Option<String>,
    ) -> Extracted {
        Extracted {
            request,
            calls: Vec::new(),
            results: Vec::new(),
            notifications: Vec::new(),
            claims_done: response.is_some_and(claims_done),
            stream_problems: response
                .map(|m| m.stream_problems.clone())
                .unwrap_or_default()
                .into_iter()
                .chain(response_problem)
                .collect(),
        }
    }
}

/// A tool result as request `seq` (started `at`) carries it: its text with the tool
/// references, capped, and the hash of the whole.
fn tool_result(
    text: &str,
    references: &[String],
    is_error: bool,
    seq: usize,
    at: DateTime<Utc>,
) -> ToolResult {
    let mut full = text.to_string();
    if !references.is_empty() {
        full.push_str(&references.join("\n"));
    }
    ToolResult {
        hash: hash_of(&[full.as_bytes()]),
        text: cap(&full),
        is_error,
        carried_by: seq,
        at,
    }
}

fn claims_done(m: &ResponseMessage) -> bool {
    const WORDS: &[&str] = &["finished", "completed", "done", "succeeded", "passed"];
    m.content.iter().any(|b| match &b.kind {
        BlockKind::Text { text } => text
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|w| WORDS.contains(&w.to_ascii_lowercase().as_str())),
        _ => false,
    })
}

fn output_bytes(m: &ResponseMessage) -> usize {
    m.content
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { text } => text.len(),
            BlockKind::Thinking { thinking, .. } => thinking.len(),
            BlockKind::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
            _ => 0,
        })
        .sum()
}
