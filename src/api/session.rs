//! Session identity: which run of a client each exchange belongs to. A trace can hold
//! several sessions (two runs recorded by one `serve`, several versions, several input
//! files); threads, turns, jobs and the prompt cache's references never cross a session.
//!
//! Rules, in order (the first that applies decides; documented in `docs/analyze.md`,
//! "Sessions"):
//! 1. **What the client sends.** A session header: Claude Code's
//!    `X-Claude-Code-Session-Id`, Codex's `session-id`, opencode's `x-session-id`; else
//!    the session id inside the body: `metadata.user_id` (Messages: a JSON object with
//!    `session_id`, or the older `user_…_account_…_session_<uuid>` form), or for the
//!    Responses API `client_metadata.session_id` and then `prompt_cache_key` (Codex sets
//!    both to its session id; measured on Codex 0.165.0 and 0.171.0). Equal ids within one
//!    input are one session.
//! 2. **The connection.** A request without an id on a connection an earlier request of a
//!    session used belongs to that session (a connection belongs to one process).
//! 3. **The recording context.** Sessions without ids never continue across input files or
//!    trace header lines ([`Sessions::new_scope`]).
//! 4. **Content.** A request that extends a thread of a session joins it. A request with
//!    no assistant history whose first message equals that of a thread that already went
//!    past its first turn starts a new session (a conversation never goes back to turn
//!    0). Any other new conversation (a subagent, a title request) joins the latest
//!    session of its context.
//! 5. **A repeated run** (Gemini, which sends no id at all): a first-turn request equal
//!    to the latest request of a thread that was already answered is another run of the
//!    same prompt, not a retry (a client retries what failed): it joins the latest session
//!    of its context if that one does not hold the conversation yet (the run's router call
//!    opened it), else it starts a new session. Two `gemini -p` runs of one prompt send
//!    byte-identical requests, each on connections of its own, so only this tells them
//!    apart.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::thread::{message_digests, ThreadMatch, ThreadTracker};
use super::MessagesRequest;
use crate::http::headers::header_value;
use crate::trace::Source;

/// Claude Code's session header (sent on every request of a run).
pub const SESSION_HEADER: &str = "x-claude-code-session-id";

/// Session headers, in the order they are asked: Claude Code's, Codex's (`session-id`,
/// the same value as its `thread-id`), opencode's (`x-session-id`, and `x-session-affinity`
/// with the same `ses_…` value; measured on opencode 1.18.33).
pub const SESSION_HEADERS: &[&str] = &[
    SESSION_HEADER,
    "session-id",
    "x-session-id",
    "x-session-affinity",
];

/// What identified a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    /// The client's session-id header.
    Header,
    /// An id in the body: `metadata.user_id` (Messages), `client_metadata.session_id` or
    /// `prompt_cache_key` (Responses).
    Metadata,
    /// No id: connections, recording context and content.
    Content,
}

/// One session.
#[derive(Clone, Debug, Serialize)]
pub struct SessionInfo {
    /// `s1`, `s2`, … in order of first appearance (across all inputs).
    pub label: String,
    /// The id the client sent, if any.
    pub client_id: Option<String>,
    /// What identified it.
    pub source: SessionSource,
    /// Input / recording context number (from 0).
    pub scope: usize,
}

/// The session id a request carries: the session header, else `metadata.user_id`.
pub fn client_session_id(
    headers: &[(String, String)],
    req: Option<&MessagesRequest>,
) -> Option<(String, SessionSource)> {
    for name in SESSION_HEADERS {
        if let Some(v) = header_value(headers, name) {
            let v = v.trim();
            if !v.is_empty() {
                return Some((v.to_string(), SessionSource::Header));
            }
        }
    }
    let req = req?;
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    if req.dialect == crate::api::Dialect::Responses {
        let id = text(
            req.param("client_metadata")
                .and_then(|m| m.get("session_id")),
        )
        .or_else(|| text(req.param("prompt_cache_key")));
        return id.map(|s| (s, SessionSource::Metadata));
    }
    let user = req.param("metadata")?.get("user_id")?.as_str()?;
    metadata_session(user).map(|s| (s, SessionSource::Metadata))
}

/// The session part of a `metadata.user_id`: `{"session_id": …}` as JSON text, or the
/// `…_session_<id>` suffix. `None` when it names only a user or device.
fn metadata_session(user: &str) -> Option<String> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(user) {
        return o
            .get("session_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    user.rsplit_once("_session_")
        .map(|(_, s)| s.to_string())
        .filter(|s| !s.is_empty())
}

/// Where an exchange was placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Session index (from 0, all inputs).
    pub session: usize,
    /// Global thread index (from 0, all sessions), for Messages requests.
    pub thread: Option<usize>,
    /// Thread label within the session (`main`, `sub-N`, `side-N`; `side` for other
    /// endpoints).
    pub thread_label: String,
}

struct Session {
    info: SessionInfo,
    threads: ThreadTracker,
    /// Global thread index of each local thread.
    global: Vec<usize>,
}

/// Assigns exchanges to sessions and threads in arrival order.
#[derive(Default)]
pub struct Sessions {
    scope: usize,
    sessions: Vec<Session>,
    by_id: HashMap<(usize, String), usize>,
    by_connection: HashMap<(usize, String), usize>,
    threads: usize,
}

fn connection_key(s: &Source) -> Option<String> {
    match (&s.client, s.connection) {
        (None, None) => None,
        (c, n) => Some(format!("{}#{}", c.as_deref().unwrap_or(""), n.unwrap_or(0))),
    }
}

impl Sessions {
    /// No sessions yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Start a new recording context (the next input file, or a trace header line):
    /// sessions without a client id never continue across it, nor do connections.
    pub fn new_scope(&mut self) {
        if self.sessions.iter().any(|s| s.info.scope == self.scope) {
            self.scope += 1;
        }
    }

    /// The sessions seen so far.
    pub fn infos(&self) -> impl Iterator<Item = &SessionInfo> {
        self.sessions.iter().map(|s| &s.info)
    }

    /// Session `i`.
    pub fn info(&self, i: usize) -> &SessionInfo {
        &self.sessions[i].info
    }

    /// Number of sessions.
    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// True when no exchange was placed yet.
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Number of threads over all sessions.
    pub fn thread_count(&self) -> usize {
        self.threads
    }

    fn create(&mut self, client_id: Option<String>, source: SessionSource) -> usize {
        let i = self.sessions.len();
        if let Some(id) = &client_id {
            self.by_id.insert((self.scope, id.clone()), i);
        }
        self.sessions.push(Session {
            info: SessionInfo {
                label: format!("s{}", i + 1),
                client_id,
                source,
                scope: self.scope,
            },
            threads: ThreadTracker::new(),
            global: Vec::new(),
        });
        i
    }

    /// The first id of a context names the session its earlier id-less exchanges (a
    /// CLI's settings requests before its first Messages request) were put in.
    fn adopt(&mut self, id: String, source: SessionSource) -> Option<usize> {
        let i = self.latest_in_scope()?;
        let s = &mut self.sessions[i];
        if s.info.client_id.is_some() || !s.threads.is_empty() {
            return None;
        }
        s.info.client_id = Some(id.clone());
        s.info.source = source;
        self.by_id.insert((self.scope, id), i);
        Some(i)
    }

    fn latest_in_scope(&self) -> Option<usize> {
        self.sessions
            .iter()
            .rposition(|s| s.info.scope == self.scope)
    }

    /// Place one exchange: its headers, source and (for a Messages request) the parsed
    /// body.
    pub fn place(
        &mut self,
        headers: &[(String, String)],
        source: &Source,
        req: Option<&MessagesRequest>,
    ) -> Placement {
        let digests = req.map(message_digests);
        self.place_digested(headers, source, req, digests)
    }

    /// [`Sessions::place`] of a request whose message digests ([`message_digests`]) were
    /// computed beforehand, possibly on another thread.
    pub fn place_digested(
        &mut self,
        headers: &[(String, String)],
        source: &Source,
        req: Option<&MessagesRequest>,
        digests: Option<Vec<super::thread::MessageDigest>>,
    ) -> Placement {
        let conn = connection_key(source).map(|c| (self.scope, c));
        let session = if let Some((id, src)) = client_session_id(headers, req) {
            match self.by_id.get(&(self.scope, id.clone())) {
                Some(&s) => s,
                None => self
                    .adopt(id.clone(), src)
                    .unwrap_or_else(|| self.create(Some(id), src)),
            }
        } else if let Some(&s) = conn.as_ref().and_then(|c| self.by_connection.get(c)) {
            s
        } else {
            match (req, &digests) {
                (Some(r), Some(d)) => self.by_content(r, d),
                _ => match self.latest_in_scope() {
                    Some(s) => s,
                    None => self.create(None, SessionSource::Content),
                },
            }
        };
        if let Some(c) = conn {
            self.by_connection.entry(c).or_insert(session);
        }
        let (Some(r), Some(d)) = (req, digests) else {
            return Placement {
                session,
                thread: None,
                thread_label: "side".into(),
            };
        };
        let s = &mut self.sessions[session];
        let local = s.threads.assign_digests(d, !r.tools.is_empty(), r.turn());
        while s.global.len() < s.threads.len() {
            s.global.push(self.threads);
            self.threads += 1;
        }
        Placement {
            session,
            thread: Some(s.global[local]),
            thread_label: s.threads.label(local).to_string(),
        }
    }

    /// Note that the request placed at `p` was answered (rule 5 reads it).
    pub fn answered(&mut self, p: &Placement) {
        let (Some(s), Some(t)) = (self.sessions.get_mut(p.session), p.thread) else {
            return;
        };
        if let Some(local) = s.global.iter().position(|&g| g == t) {
            s.threads.mark_answered(local);
        }
    }

    /// Rule 4 (content) for a request without a client id or known connection.
    fn by_content(
        &mut self,
        r: &MessagesRequest,
        digests: &[super::thread::MessageDigest],
    ) -> usize {
        let has_tools = !r.tools.is_empty();
        let in_scope: Vec<usize> = (0..self.sessions.len())
            .rev()
            .filter(|&i| self.sessions[i].info.scope == self.scope)
            .collect();
        let mut first_message = None;
        let mut repeated = None;
        let gemini = r.dialect == crate::api::Dialect::Gemini;
        for &i in &in_scope {
            match self.sessions[i].threads.peek(digests, has_tools) {
                Some(ThreadMatch::Prefix(t, shared))
                    if gemini
                        && shared == digests.len()
                        && r.turn() == 0
                        && self.sessions[i].threads.is_answered(t) =>
                {
                    repeated.get_or_insert(i);
                }
                Some(ThreadMatch::Prefix(..)) => return i,
                Some(ThreadMatch::FirstMessage { advanced, .. }) if first_message.is_none() => {
                    first_message = Some((i, advanced));
                }
                _ => {}
            }
        }
        if let Some(i) = repeated {
            return match in_scope.first() {
                Some(&latest) if latest != i => latest,
                _ => self.create(None, SessionSource::Content),
            };
        }
        match first_message {
            Some((_, true)) if r.turn() == 0 => self.create(None, SessionSource::Content),
            Some((i, _)) => i,
            None => match in_scope.first() {
                Some(&i) => i,
                None => self.create(None, SessionSource::Content),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::SourceKind;

    fn req(msgs: &[(&str, &str)], tools: bool) -> MessagesRequest {
        let m: Vec<String> = msgs
            .iter()
            .map(|(r, t)| format!(r#"{{"role":"{r}","content":"{t}"}}"#))
            .collect();
        let tools = if tools {
            r#""tools":[{"name":"Bash"}],"#
        } else {
            ""
        };
        MessagesRequest::parse(format!(r#"{{{tools}"messages":[{}]}}"#, m.join(",")).as_bytes())
            .unwrap()
    }

    fn src(conn: u64) -> Source {
        let mut s = Source::new(SourceKind::Server);
        s.client = Some("127.0.0.1:5000".into());
        s.connection = Some(conn);
        s
    }

    fn hdr(id: &str) -> Vec<(String, String)> {
        vec![
            ("host".into(), "x".into()),
            ("X-Claude-Code-Session-Id".into(), id.into()),
        ]
    }

    #[test]
    fn client_ids_from_header_and_metadata() {
        let r = MessagesRequest::parse(
            br#"{"metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"\",\"session_id\":\"bc43\"}"},"messages":[]}"#,
        )
        .unwrap();
        assert_eq!(
            client_session_id(&[], Some(&r)),
            Some(("bc43".into(), SessionSource::Metadata))
        );
        assert_eq!(
            client_session_id(&hdr("h1"), Some(&r)),
            Some(("h1".into(), SessionSource::Header))
        );
        let legacy = MessagesRequest::parse(
            br#"{"metadata":{"user_id":"user_ab12_account__session_9f0c"},"messages":[]}"#,
        )
        .unwrap();
        assert_eq!(client_session_id(&[], Some(&legacy)).unwrap().0, "9f0c");
        let user_only =
            MessagesRequest::parse(br#"{"metadata":{"user_id":"user_ab12"},"messages":[]}"#)
                .unwrap();
        assert_eq!(client_session_id(&[], Some(&user_only)), None);
    }

    #[test]
    fn same_first_prompt_two_session_ids_two_sessions_each_with_its_main_thread() {
        let mut s = Sessions::new();
        let first = req(&[("user", "run the build")], true);
        let later = req(
            &[("user", "run the build"), ("assistant", "a"), ("user", "r")],
            true,
        );
        let a0 = s.place(&hdr("A"), &src(0), Some(&first));
        let a1 = s.place(&hdr("A"), &src(0), Some(&later));
        let b0 = s.place(&hdr("B"), &src(1), Some(&first));
        let b1 = s.place(&hdr("B"), &src(2), Some(&later));
        assert_eq!(
            (a0.session, a1.session, b0.session, b1.session),
            (0, 0, 1, 1)
        );
        assert_eq!(
            [&a0, &b0].map(|p| p.thread_label.as_str()),
            ["main", "main"]
        );
        assert_ne!(a0.thread, b0.thread);
        assert_eq!(b0.thread, b1.thread);
        assert_eq!(s.info(1).label, "s2");
        // A request without an id on B's connection belongs to B.
        let other = s.place(&[("host".into(), "x".into())], &src(2), None);
        assert_eq!((other.session, other.thread_label.as_str()), (1, "side"));
    }

    #[test]
    fn requests_before_the_first_session_id_join_that_session() {
        let mut s = Sessions::new();
        let host = vec![("host".to_string(), "x".to_string())];
        assert_eq!(s.place(&host, &src(0), None).session, 0);
        assert_eq!(s.place(&host, &src(1), None).session, 0);
        let first = req(&[("user", "hello")], true);
        assert_eq!(s.place(&hdr("A"), &src(3), Some(&first)).session, 0);
        assert_eq!(s.len(), 1);
        assert_eq!(s.info(0).client_id.as_deref(), Some("A"));
    }

    #[test]
    fn without_ids_a_conversation_restarting_at_turn_zero_is_a_new_session() {
        let mut s = Sessions::new();
        let first = req(&[("user", "run the build")], true);
        let later = req(
            &[("user", "run the build"), ("assistant", "a"), ("user", "r")],
            true,
        );
        let title = req(&[("user", "make a title")], false);
        let none = Source::new(SourceKind::Import);
        let p: Vec<usize> = [&first, &first, &title, &later, &first, &later]
            .iter()
            .map(|r| s.place(&[], &none, Some(r)).session)
            .collect();
        // A retry of the first request stays; once the thread advanced, turn 0 again is
        // another run.
        assert_eq!(p, [0, 0, 0, 0, 1, 1]);
        assert_eq!(s.info(1).source, SessionSource::Content);
        // A new input never continues a session without ids.
        s.new_scope();
        assert_eq!(s.place(&[], &none, Some(&later)).session, 2);
    }
}
