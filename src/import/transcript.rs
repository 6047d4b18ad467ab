//! Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`, and
//! each subagent's `<session>/subagents/agent-<id>.jsonl`) read as exchanges: one per
//! model request, with the response rebuilt from the assistant entries (content merged by
//! message id, the recorded usage as the response's `usage`).
//!
//! Two layouts:
//! - **request records** (Claude Code 2.1.303 and later write `api-request*` lines): the
//!   request body is rebuilt from them (see [`super::rebuild`]) and checked against the
//!   recorded digest; headers `user-agent`, `anthropic-beta` and
//!   `x-claude-code-session-id` are set as that client sends them;
//! - **conversation only** (older versions): the request holds `model` and the messages of
//!   the conversation chain (`parentUuid` links) up to the reply; the system prompt, tool
//!   definitions, other parameters and what the client adds (reminders) are absent and
//!   listed in `source.missing`; the session id is carried in `x-claude-code-session-id`
//!   as newer clients send it, so session rules apply alike.
//!
//! Every exchange carries `notes.import`: `session` (the `sessionId`), `agent` and
//! `sidechain` for subagents, `layout`, `request_id`, and for rebuilt requests `digest`
//! (`verified`, `mismatch`, `absent`) and `rebuilt` (which parts were rebuilt by rule).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::rebuild::{Client, Records};
use super::{import_source, imported, json_body, response, Format, ImportError};
use crate::trace::{Exchange, ExchangeError, ReadProblem};

/// Entry types of transcripts this build knows (others are ignored, never fatal).
const KNOWN_TYPES: &[&str] = &[
    "user",
    "assistant",
    "attachment",
    "system",
    "summary",
    "custom-title",
    "file-history-snapshot",
    "queue-operation",
    "api-request",
    "api-request-blob",
    "api-request-shape",
    "last-prompt",
    "cost-state",
    "atis-latch",
    "tools-used",
    "progress",
];

const MISSING_RESPONSE: &[&str] = &[
    "response bytes (rebuilt as a JSON message from the transcript's assistant entries)",
    "response headers other than request-id",
    "response chunk timing",
    "connection addresses",
];
const MISSING_RECORDS: &[&str] = &[
    "metadata (holds a device id the transcript does not record)",
    "stream flag (not recorded)",
    "request headers other than user-agent, anthropic-beta and x-claude-code-session-id",
];
const MISSING_CONVERSATION: &[&str] = &[
    "system prompt",
    "tool definitions",
    "request parameters other than model",
    "messages the client adds (reminders, attachments)",
    "request headers other than user-agent (and the session id, carried over)",
    "request timing (started_at is the time of the last entry before the reply)",
];

/// One transcript file, parsed.
struct TranscriptFile {
    path: PathBuf,
    lines: Vec<Value>,
}

/// The exchanges of one session (its file and its subagents' files).
pub struct Session {
    /// Exchanges in request order (ids from 0 within the session).
    pub exchanges: Vec<Exchange>,
    /// Lines that were not JSON, kept raw.
    pub problems: Vec<(PathBuf, ReadProblem)>,
    /// Files read (the session file first).
    pub files: Vec<PathBuf>,
}

/// The subagent transcripts of a session file: `<dir>/<stem>/subagents/*.jsonl`, sorted.
pub fn subagent_files(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return Vec::new();
    };
    let sub = dir.join(stem).join("subagents");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&sub)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    out.sort();
    out
}

fn read_lines(
    input: impl BufRead,
    path: &Path,
    problems: &mut Vec<(PathBuf, ReadProblem)>,
) -> Result<Vec<Value>, ImportError> {
    let mut lines = Vec::new();
    let mut offset = 0u64;
    for (i, line) in input.split(b'\n').enumerate() {
        let line = line.map_err(|e| ImportError::io(path, e))?;
        let len = line.len() as u64 + 1;
        if !line.iter().all(u8::is_ascii_whitespace) {
            match serde_json::from_slice::<Value>(&line) {
                Ok(v) => lines.push(v),
                Err(e) => problems.push((
                    path.to_path_buf(),
                    ReadProblem {
                        line: i as u64 + 1,
                        offset,
                        truncated: false,
                        message: format!("not a transcript entry: {e}"),
                        raw: line,
                        file: None,
                    },
                )),
            }
        }
        offset += len;
    }
    Ok(lines)
}

/// Import a session: the transcript read from `input` (named `path`) and, when `path` is
/// a file, its subagents' transcripts.
///
/// Errors: [`ImportError::UnknownLayout`] when no line is an entry this build knows;
/// [`ImportError::Empty`] when the transcript holds no model request; read errors.
pub fn import(input: impl BufRead, path: &Path) -> Result<Session, ImportError> {
    let mut problems = Vec::new();
    let mut files = vec![TranscriptFile {
        path: path.to_path_buf(),
        lines: read_lines(input, path, &mut problems)?,
    }];
    for sub in subagent_files(path) {
        let f = std::fs::File::open(&sub).map_err(|e| ImportError::io(&sub, e))?;
        let lines = read_lines(std::io::BufReader::new(f), &sub, &mut problems)?;
        files.push(TranscriptFile { path: sub, lines });
    }
    check_layout(&files[0], path)?;
    let mut exchanges = Vec::new();
    for f in &files {
        exchanges.extend(import_file(f));
    }
    if exchanges.is_empty() {
        return Err(ImportError::Empty {
            path: path.display().to_string(),
            detail:
                "the transcript holds no model request (no assistant reply, no api-request record)"
                    .into(),
        });
    }
    exchanges.sort_by_key(|x| x.started_at);
    for (i, x) in exchanges.iter_mut().enumerate() {
        x.id = i as u64;
    }
    Ok(Session {
        exchanges,
        problems,
        files: files.into_iter().map(|f| f.path).collect(),
    })
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

fn check_layout(f: &TranscriptFile, path: &Path) -> Result<(), ImportError> {
    let usable = f.lines.iter().any(|v| match type_of(v) {
        "user" | "assistant" => v.get("message").is_some_and(Value::is_object),
        "api-request" => true,
        _ => false,
    });
    if usable || f.lines.iter().all(|v| KNOWN_TYPES.contains(&type_of(v))) {
        return Ok(());
    }
    let mut types: Vec<&str> = f.lines.iter().map(type_of).collect();
    types.sort_unstable();
    types.dedup();
    let shown: Vec<String> = types.iter().take(8).map(|t| format!("{t:?}")).collect();
    Err(ImportError::UnknownLayout {
        path: path.display().to_string(),
        format: "Claude Code transcript",
        detail: format!(
            "none of its {} entries is a user or assistant message or a request record (entry types: {})",
            f.lines.len(),
            shown.join(", ")
        ),
    })
}

/// The assistant entries of one reply, in order.
struct Reply<'a> {
    entries: Vec<&'a Value>,
}

impl Reply<'_> {
    fn last(&self) -> &Value {
        self.entries[self.entries.len() - 1]
    }

    /// The reply as the API's message object: the last entry's message with the content
    /// of all entries.
    fn message(&self) -> Value {
        // A `message` that is not an object (a string, by hand or by a newer layout) reads
        // as an empty one: indexing a string to set `content` panicked.
        let mut m = match self.last().get("message") {
            Some(Value::Object(o)) => Value::Object(o.clone()),
            _ => json!({}),
        };
        let content: Vec<Value> = self
            .entries
            .iter()
            .flat_map(|e| {
                e["message"]["content"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        m["content"] = Value::Array(content);
        m
    }

    /// The reply as it appears in later requests: role and content only.
    fn as_history(&self) -> Value {
        json!({"role": "assistant", "content": self.message()["content"]})
    }

    fn is_api_error(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true))
    }
}

fn time_of(v: &Value) -> Option<DateTime<Utc>> {
    super::parse_time(v.get("timestamp").and_then(Value::as_str))
}

fn import_file(f: &TranscriptFile) -> Vec<Exchange> {
    // Replies: by requestRef (request-record layout), else by message id.
    let mut order: Vec<String> = Vec::new();
    let mut replies: HashMap<String, Reply> = HashMap::new();
    for v in f.lines.iter().filter(|v| type_of(v) == "assistant") {
        let key = v
            .get("requestRef")
            .or_else(|| v.pointer("/message/id"))
            .or_else(|| v.get("requestId"))
            .or_else(|| v.get("uuid"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        replies
            .entry(key.clone())
            .or_insert_with(|| {
                order.push(key);
                Reply {
                    entries: Vec::new(),
                }
            })
            .entries
            .push(v);
    }
    let first_with = |k: &str| {
        f.lines
            .iter()
            .find_map(|v| v.get(k).and_then(Value::as_str))
    };
    let who = Who {
        session: first_with("sessionId").unwrap_or_default(),
        entrypoint: first_with("entrypoint"),
        user_type: first_with("userType").unwrap_or("external"),
        version: first_with("version").unwrap_or_default(),
        file: &f.path,
    };
    let has_records = f.lines.iter().any(|v| type_of(v) == "api-request");
    if has_records {
        from_records(f, &replies, &who)
    } else {
        order
            .iter()
            .map(|k| from_conversation(f, &replies[k], &who))
            .collect()
    }
}

/// Who sent a transcript's requests.
struct Who<'a> {
    session: &'a str,
    entrypoint: Option<&'a str>,
    user_type: &'a str,
    version: &'a str,
    file: &'a Path,
}

impl Who<'_> {
    fn user_agent(&self, version: &str) -> Option<(String, String)> {
        let e = self.entrypoint?;
        Some((
            "user-agent".into(),
            format!("claude-cli/{version} ({}, {e})", self.user_type),
        ))
    }

    /// The exchange's note; `entry` is the transcript entry it was read from (its own
    /// `isSidechain` / `agentId` say whether it is a subagent's).
    fn note(&self, layout: &str, entry: &Value) -> serde_json::Map<String, Value> {
        let mut n = serde_json::Map::new();
        n.insert("session".into(), json!(self.session));
        n.insert("layout".into(), json!(layout));
        if let Some(sub) = Subagent::of(entry) {
            if let Some(a) = sub.agent {
                n.insert("agent".into(), json!(a));
            }
            n.insert("sidechain".into(), json!(true));
        }
        n
    }
}

/// A subagent's entry: decided per entry, since one file can mix main-thread and
/// sidechain entries.
struct Subagent<'a> {
    /// Its `agentId`, where the entry has one.
    agent: Option<&'a str>,
}

impl<'a> Subagent<'a> {
    /// `isSidechain: true` (with or without `agentId`), or no `isSidechain` and an
    /// `agentId` (older layouts); `isSidechain: false` is the main thread whatever else
    /// the entry says.
    fn of(entry: &'a Value) -> Option<Self> {
        let agent = entry.get("agentId").and_then(Value::as_str);
        match entry.get("isSidechain").and_then(Value::as_bool) {
            Some(false) => None,
            Some(true) => Some(Subagent { agent }),
            None => agent.map(|a| Subagent { agent: Some(a) }),
        }
    }
}

fn attach_reply(
    x: &mut Exchange,
    reply: Option<&Reply>,
    note: &mut serde_json::Map<String, Value>,
) {
    let Some(r) = reply else {
        x.source
            .missing
            .push("response (the transcript has no reply to this request)".into());
        return;
    };
    x.ended_at = time_of(r.last()).or(x.ended_at);
    let rid = r.last().get("requestId").and_then(Value::as_str);
    if let Some(rid) = rid {
        note.insert("request_id".into(), json!(rid));
    }
    if r.is_api_error() {
        x.error = Some(ExchangeError {
            kind: "api_error".into(),
            message: r.message()["content"][0]["text"]
                .as_str()
                .unwrap_or("API error")
                .to_string(),
        });
        return;
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(rid) = rid {
        headers.push(("request-id".into(), rid.to_string()));
    }
    x.response = Some(response(200, headers, json_body(&r.message())));
}

/// The entry that says whose an `api-request` record is: the record itself where it
/// carries `isSidechain` or `agentId`, else its reply's first entry.
fn entry_of<'a>(record: &'a Value, reply: Option<&Reply<'a>>) -> &'a Value {
    let own = record.get("isSidechain").is_some() || record.get("agentId").is_some();
    match reply {
        Some(r) if !own => r.entries[0],
        _ => record,
    }
}

fn from_records(f: &TranscriptFile, replies: &HashMap<String, Reply>, who: &Who) -> Vec<Exchange> {
    let mut records = Records::default();
    let mut out = Vec::new();
    let mut seen_replies: HashMap<&str, ()> = HashMap::new();
    for v in &f.lines {
        records.add_line(v);
        match type_of(v) {
            "user" => {
                if let Some(c) = v.pointer("/message/content") {
                    records.add_message(json!({"role": "user", "content": c}));
                }
            }
            "assistant" => {
                let key = v
                    .get("requestRef")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if let Some(r) = replies.get(key) {
                    // history form once the reply is complete (its last entry read)
                    if std::ptr::eq(r.last(), v) && seen_replies.insert(key, ()).is_none() {
                        records.add_message(r.as_history());
                    }
                } else if let Some(m) = v.get("message") {
                    records.add_message(json!({"role": "assistant", "content": m["content"]}));
                }
            }
            "api-request" => out.push(request_record(v, &mut records, replies, who, f)),
            _ => {}
        }
    }
    out
}

/// The exchange of an `api-request` record: its request rebuilt from the request records
/// (else from the conversation, saying why), with its reply attached.
fn request_record(
    v: &Value,
    records: &mut Records,
    replies: &HashMap<String, Reply>,
    who: &Who,
    f: &TranscriptFile,
) -> Exchange {
    let version = v.get("version").and_then(Value::as_str).unwrap_or_default();
    let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
    let reply = replies.get(id);
    let client = Client {
        version,
        entrypoint: who.entrypoint,
        subagent: Subagent::of(entry_of(v, reply)).is_some(),
    };
    let started = time_of(v).unwrap_or(DateTime::UNIX_EPOCH);
    let mut note = who.note("request-records", entry_of(v, reply));
    let mut x = match records.rebuild(v, &client) {
        Ok(r) => rebuilt_request(r, who, version, started, &mut note),
        Err(why) => {
            // records incomplete: fall back to the conversation, and say why
            let mut x = match reply {
                Some(r) => from_conversation(f, r, who),
                None => imported(
                    import_source(Format::ClaudeCodeTranscript, who.file, &[]),
                    started,
                    "POST",
                    "/v1/messages".into(),
                    vec![],
                    Vec::new(),
                ),
            };
            x.started_at = started;
            x.source
                .missing
                .push(format!("request records incomplete: {why}"));
            note = x
                .notes
                .remove("import")
                .and_then(|n| n.as_object().cloned())
                .unwrap_or(note);
            x.notes.insert("import".into(), Value::Object(note));
            return x;
        }
    };
    for k in ["querySource", "thread"] {
        if let Some(q) = v.get(k) {
            note.insert(k.to_string(), q.clone());
        }
    }
    attach_reply(&mut x, reply, &mut note);
    x.notes.insert("import".into(), Value::Object(note));
    x
}

/// The request rebuilt from the request records, with the headers Claude Code `version`
/// sends; what was rebuilt (and the digest check) goes into `note`.
fn rebuilt_request(
    r: super::rebuild::Rebuilt,
    who: &Who,
    version: &str,
    started: DateTime<Utc>,
    note: &mut serde_json::Map<String, Value>,
) -> Exchange {
    let mut missing: Vec<&str> = MISSING_RESPONSE.to_vec();
    missing.extend(MISSING_RECORDS);
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    headers.extend(who.user_agent(version));
    if !r.betas.is_empty() {
        headers.push(("anthropic-beta".into(), r.betas.join(",")));
    }
    headers.push(("x-claude-code-session-id".into(), who.session.to_string()));
    note.insert("digest".into(), json!(r.digest.name()));
    let mut rebuilt = vec!["request body from the request records"];
    if r.billing {
        rebuilt.push("system billing block (cc_version fingerprint rule)");
    } else {
        missing.push("system billing block (no entrypoint recorded)");
    }
    rebuilt.push("request headers user-agent, anthropic-beta, x-claude-code-session-id");
    note.insert("rebuilt".into(), json!(rebuilt));
    imported(
        import_source(Format::ClaudeCodeTranscript, who.file, &missing),
        started,
        "POST",
        "/v1/messages?beta=true".into(),
        headers,
        json_body(&r.body),
    )
}

/// The request of a reply rebuilt from the conversation chain (older layouts).
fn from_conversation(f: &TranscriptFile, reply: &Reply, who: &Who) -> Exchange {
    let by_uuid: HashMap<&str, &Value> = f
        .lines
        .iter()
        .filter_map(|v| Some((v.get("uuid")?.as_str()?, v)))
        .collect();
    let first = reply.entries[0];
    let mut chain: Vec<&Value> = Vec::new();
    let mut cur = first.get("parentUuid").and_then(Value::as_str);
    let mut guard = 0;
    while let Some(u) = cur {
        let Some(v) = by_uuid.get(u) else { break };
        chain.push(v);
        cur = v.get("parentUuid").and_then(Value::as_str);
        guard += 1;
        if guard > by_uuid.len() {
            break; // a cycle: stop rather than loop
        }
    }
    chain.reverse();
    let started = chain
        .last()
        .and_then(|v| time_of(v))
        .or_else(|| time_of(first))
        .unwrap_or(DateTime::UNIX_EPOCH);
    let messages = history(&chain);
    let model = reply
        .last()
        .pointer("/message/model")
        .cloned()
        .unwrap_or(Value::Null);
    let version = first
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or(who.version);
    let body = json!({"model": model, "messages": messages});
    let mut missing: Vec<&str> = MISSING_RESPONSE.to_vec();
    missing.extend(MISSING_CONVERSATION);
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    headers.extend(who.user_agent(version));
    // the session as newer clients send it, so session rules apply to old transcripts too
    headers.push(("x-claude-code-session-id".into(), who.session.to_string()));
    let mut x = imported(
        import_source(Format::ClaudeCodeTranscript, who.file, &missing),
        started,
        "POST",
        "/v1/messages".into(),
        headers,
        json_body(&body),
    );
    let mut note = who.note("conversation", first);
    note.insert(
        "rebuilt".into(),
        json!(["request messages from the conversation chain"]),
    );
    attach_reply(&mut x, Some(reply), &mut note);
    x.notes.insert("import".into(), Value::Object(note));
    x
}

/// Messages of a chain of entries: user entries as they are, assistant entries merged by
/// message id, consecutive messages of one role merged (as the client sends them).
fn history(chain: &[&Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut last_msg_id: Option<String> = None;
    for v in chain {
        let role = match type_of(v) {
            "user" => "user",
            "assistant" => "assistant",
            _ => continue,
        };
        let Some(content) = v.pointer("/message/content") else {
            continue;
        };
        let blocks = match content {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => continue,
        };
        let msg_id = v
            .pointer("/message/id")
            .and_then(Value::as_str)
            .map(str::to_string);
        let same_role = out.last().is_some_and(|m| m["role"] == role);
        let merge = same_role && (role == "user" || msg_id.is_some() && msg_id == last_msg_id);
        if merge {
            let last = out.last_mut().expect("checked");
            if let Some(a) = last["content"].as_array_mut() {
                a.extend(blocks);
            }
        } else if role == "user" && content.is_string() {
            out.push(json!({"role": role, "content": content}));
        } else {
            out.push(json!({"role": role, "content": blocks}));
        }
        last_msg_id = msg_id;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import_text(t: &str) -> Result<Session, ImportError> {
        import(t.as_bytes(), Path::new("s.jsonl"))
    }

    #[test]
    fn conversation_layout_merges_split_replies_and_keeps_usage() {
        let t = r#"{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:00Z","entrypoint":"cli","version":"1.0.0","message":{"role":"user","content":"run it"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:01Z","requestId":"req_1","message":{"id":"msg_1","model":"m","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-01T00:00:02Z","requestId":"req_1","message":{"id":"msg_1","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_read_input_tokens":7,"output_tokens":5}}}
{"type":"user","uuid":"u2","parentUuid":"a2","sessionId":"S","timestamp":"2026-01-01T00:00:03Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]}}
not json
{"type":"assistant","uuid":"a3","parentUuid":"u2","sessionId":"S","timestamp":"2026-01-01T00:00:04Z","requestId":"req_2","message":{"id":"msg_2","model":"m","role":"assistant","content":[{"type":"text","text":"fine"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":2}}}
"#;
        let s = import_text(t).unwrap();
        assert_eq!(s.exchanges.len(), 2);
        assert_eq!(s.problems.len(), 1);
        assert_eq!(s.problems[0].1.line, 5);
        let body: Value = serde_json::from_slice(&s.exchanges[1].request.body.bytes).unwrap();
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
        assert_eq!(body["messages"][1]["content"].as_array().unwrap().len(), 2);
        let resp: Value =
            serde_json::from_slice(&s.exchanges[0].response.as_ref().unwrap().body.bytes).unwrap();
        assert_eq!(resp["usage"]["cache_read_input_tokens"], 7);
        assert_eq!(resp["stop_reason"], "tool_use");
        assert_eq!(s.exchanges[0].notes["import"]["session"], "S");
        let ua = &s.exchanges[0].request.headers[1];
        assert_eq!(ua.1, "claude-cli/1.0.0 (external, cli)");
    }

    #[test]
    fn unknown_layout_and_empty_transcripts_are_errors() {
        let e = import_text("{\"type\":\"zzz\",\"sessionId\":\"S\"}\n")
            .err()
            .unwrap();
        assert!(e.to_string().contains("\"zzz\""), "{e}");
        let e = import_text("{\"type\":\"summary\",\"summary\":\"x\"}\n")
            .err()
            .unwrap();
        assert!(e.to_string().contains("no model request"), "{e}");
    }
}
