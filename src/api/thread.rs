//! Threads of one session: the main conversation, each subagent, and side calls (titles,
//! summaries, count_tokens), told apart from the conversations themselves. Which session
//! a request belongs to is decided first ([`super::session`]); threads never span
//! sessions.
//!
//! Rule: each request's messages are reduced to digests of their normalized content
//! (role, block types, texts, tool ids and inputs; `cache_control` ignored because clients
//! move breakpoints between turns). A request joins the thread whose latest request's
//! digests are the longest prefix of its own; failing that, a thread that starts with the
//! same first message; otherwise it starts a new thread. The first thread whose requests
//! carry tools is `main`; later threads with tools are `sub-N`; threads without tools and
//! non-messages endpoints are `side-N`.

use xxhash_rust::xxh3::Xxh3;

use super::{BlockKind, Message, MessagesRequest};

/// A 128-bit digest of one message's normalized content.
pub type MessageDigest = [u8; 16];

/// Digest of a message ignoring `cache_control` and whitespace-only formatting (XXH3-128:
/// in-process only, never written; it hashes every message of every request, so a
/// cryptographic hash was 14% of `analyze`'s time).
pub fn message_digest(m: &Message) -> MessageDigest {
    *m.derived.digest.get_or_init(|| digest_of(m))
}

fn digest_of(m: &Message) -> MessageDigest {
    let mut x = Xxh3::new();
    // Each part with its length: ("ab", "c") and ("a", "bc") differ.
    let mut h = |b: &[u8]| {
        x.update(&(b.len() as u64).to_le_bytes());
        x.update(b);
    };
    h(m.role.as_bytes());
    for b in &m.content {
        h(b.block_type().as_bytes());
        match &b.kind {
            BlockKind::Text { text } => h(text.as_bytes()),
            BlockKind::ToolUse { id, name, input }
            | BlockKind::ServerToolUse { id, name, input } => {
                h(id.as_bytes());
                h(name.as_bytes());
                h(input.to_string().as_bytes());
            }
            BlockKind::ToolResult {
                tool_use_id,
                text,
                is_error,
                ..
            } => {
                h(tool_use_id.as_bytes());
                h(text.as_bytes());
                h(&[u8::from(*is_error)]);
            }
            BlockKind::Thinking { thinking, .. } => h(thinking.as_bytes()),
            BlockKind::ToolReference { tool_name } => h(tool_name.as_bytes()),
            BlockKind::Other { raw, .. } => h(raw.to_string().as_bytes()),
            BlockKind::Image { .. } | BlockKind::Document { .. } | BlockKind::RedactedThinking => {}
        }
    }
    x.digest128().to_le_bytes()
}

/// Digests of all messages of a request.
pub fn message_digests(r: &MessagesRequest) -> Vec<MessageDigest> {
    r.messages.iter().map(|m| message_digest(m)).collect()
}

struct ThreadState {
    first: Option<MessageDigest>,
    last: Vec<MessageDigest>,
    has_tools: bool,
    /// Turn of the thread's latest request.
    turn: usize,
    /// The thread's latest request was answered (a 200 response).
    answered: bool,
}

/// How a request matched an existing thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadMatch {
    /// The request extends the thread's latest request (its messages start with them):
    /// `(thread, messages shared)`.
    Prefix(usize, usize),
    /// Only the first message is the same; `advanced` is true when the thread already
    /// went past its first turn.
    FirstMessage {
        /// The thread.
        thread: usize,
        /// The thread's latest request had assistant replies in its history.
        advanced: bool,
    },
}

/// Assigns requests to threads in arrival order (within one session).
#[derive(Default)]
pub struct ThreadTracker {
    threads: Vec<ThreadState>,
    labels: Vec<String>,
    subs: usize,
    sides: usize,
    main: Option<usize>,
}

impl ThreadTracker {
    /// A tracker with no threads.
    pub fn new() -> Self {
        Self::default()
    }

    /// The thread a request with these message digests would join, without joining it.
    pub fn peek(&self, digests: &[MessageDigest], has_tools: bool) -> Option<ThreadMatch> {
        let mut best: Option<(usize, usize)> = None;
        for (i, t) in self.threads.iter().enumerate() {
            if t.has_tools != has_tools || t.last.len() > digests.len() {
                continue;
            }
            if !t.last.is_empty()
                && digests.starts_with(&t.last)
                && best.is_none_or(|(_, l)| t.last.len() > l)
            {
                best = Some((i, t.last.len()));
            }
        }
        if let Some((i, l)) = best {
            return Some(ThreadMatch::Prefix(i, l));
        }
        let first = digests.first().copied()?;
        self.threads
            .iter()
            .enumerate()
            .rev()
            .find(|(_, t)| t.has_tools == has_tools && t.first == Some(first))
            .map(|(i, t)| ThreadMatch::FirstMessage {
                thread: i,
                advanced: t.turn > 0,
            })
    }

    /// Assign a Messages request; returns its thread index (from 0).
    pub fn assign(&mut self, r: &MessagesRequest) -> usize {
        self.assign_digests(message_digests(r), !r.tools.is_empty(), r.turn())
    }

    /// Assign a request given its message digests, whether it carries tools, and its turn.
    pub fn assign_digests(
        &mut self,
        digests: Vec<MessageDigest>,
        has_tools: bool,
        turn: usize,
    ) -> usize {
        let found = match self.peek(&digests, has_tools) {
            Some(ThreadMatch::Prefix(i, _)) | Some(ThreadMatch::FirstMessage { thread: i, .. }) => {
                Some(i)
            }
            None => None,
        };
        match found {
            Some(i) => {
                self.threads[i].last = digests;
                self.threads[i].turn = turn;
                self.threads[i].answered = false;
                i
            }
            None => {
                let i = self.threads.len();
                let label = if has_tools && self.main.is_none() {
                    self.main = Some(i);
                    "main".to_string()
                } else if has_tools {
                    self.subs += 1;
                    format!("sub-{}", self.subs)
                } else {
                    self.sides += 1;
                    format!("side-{}", self.sides)
                };
                self.labels.push(label);
                self.threads.push(ThreadState {
                    first: digests.first().copied(),
                    last: digests,
                    has_tools,
                    turn,
                    answered: false,
                });
                i
            }
        }
    }

    /// Note that thread `i`'s latest request was answered.
    pub fn mark_answered(&mut self, i: usize) {
        if let Some(t) = self.threads.get_mut(i) {
            t.answered = true;
        }
    }

    /// True when thread `i`'s latest request was answered.
    pub fn is_answered(&self, i: usize) -> bool {
        self.threads.get(i).is_some_and(|t| t.answered)
    }

    /// The label of thread `i` (`main`, `sub-N`, `side-N`).
    pub fn label(&self, i: usize) -> &str {
        &self.labels[i]
    }

    /// Number of threads seen.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// True when no thread was seen yet.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(tools: bool, msgs: &[(&str, &str)]) -> MessagesRequest {
        let m: Vec<String> = msgs
            .iter()
            .map(|(r, t)| format!(r#"{{"role":"{r}","content":[{{"type":"text","text":"{t}","cache_control":{{"type":"ephemeral"}}}}]}}"#))
            .collect();
        let tools = if tools {
            r#""tools":[{"name":"Bash"}],"#
        } else {
            ""
        };
        let body = format!(r#"{{{tools}"messages":[{}]}}"#, m.join(","));
        MessagesRequest::parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn interleaved_main_subagent_and_side_call() {
        let mut t = ThreadTracker::new();
        let a = t.assign(&req(true, &[("user", "task")]));
        let title = t.assign(&req(false, &[("user", "make a title")]));
        let sub = t.assign(&req(true, &[("user", "list files")]));
        let sub2 = t.assign(&req(
            true,
            &[("user", "list files"), ("assistant", "x"), ("user", "y")],
        ));
        let a2 = t.assign(&req(
            true,
            &[
                ("user", "task"),
                ("assistant", "calling agent"),
                ("user", "done"),
            ],
        ));
        assert_eq!((a, a2), (0, 0));
        assert_eq!((sub, sub2), (2, 2));
        assert_eq!(t.label(a), "main");
        assert_eq!(t.label(sub), "sub-1");
        assert_eq!(t.label(title), "side-1");
        assert_eq!(t.len(), 3);
    }
}
