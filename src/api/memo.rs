//! Parsed request parts remembered between requests. A conversation resends its whole
//! history and tool list with every turn, so request N+1 carries request N's messages and
//! tools byte for byte, at the same offsets (Claude Code and the SDKs write `messages`
//! and `tools` before anything that changes between turns). Parsing a part depends only on
//! its bytes and where it starts, so a part whose bytes *and* span match one parsed
//! earlier is the same value: it is shared ([`Arc`]) instead of parsed again.
//!
//! A [`Memo`] is generic over the part it holds; the parser keeps one per kind (messages,
//! tool definitions) and passes its parse function to [`remembered`].
//!
//! The memo is per thread (the analyzer prepares requests on every core) and bounded:
//! per kind of part, two generations of at most [`GENERATION_BYTES`] each (bytes of the
//! parts' spans);
//! a full generation becomes the old one and the older one is dropped, so what recent
//! requests used stays and memory stays flat on any trace.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::LocalKey;

use xxhash_rust::xxh3::xxh3_128;

use super::span::Span;

/// Bytes of request parts (span lengths) one generation remembers per thread.
pub const GENERATION_BYTES: usize = 6 << 20;

/// Parts shorter than this many bytes are parsed every time (cheaper than the lookup).
pub const MIN_PART_BYTES: usize = 96;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    span: Span,
    /// XXH3-128 of the part's bytes.
    digest: u128,
}

thread_local! {
    /// Bumped by [`forget`]: a memo remembered under an older epoch is emptied before
    /// its next use.
    static EPOCH: Cell<u64> = const { Cell::new(0) };
}

/// Two generations of parsed parts of one kind (`T`: a message, a tool definition). The
/// parser keeps one per kind in a `thread_local!` and asks it through [`remembered`].
pub struct Memo<T> {
    current: HashMap<Key, Arc<T>>,
    previous: HashMap<Key, Arc<T>>,
    current_bytes: usize,
    /// The [`EPOCH`] its parts were remembered under.
    epoch: u64,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo {
            current: HashMap::new(),
            previous: HashMap::new(),
            current_bytes: 0,
            epoch: EPOCH.with(Cell::get),
        }
    }
}

impl<T> Memo<T> {
    fn get(&mut self, key: &Key) -> Option<Arc<T>> {
        if let Some(p) = self.current.get(key) {
            return Some(p.clone());
        }
        let p = self.previous.remove(key)?;
        self.insert(*key, p.clone());
        Some(p)
    }

    fn insert(&mut self, key: Key, part: Arc<T>) {
        if self.current_bytes + key.span.len() > GENERATION_BYTES {
            self.previous = std::mem::take(&mut self.current);
            self.current_bytes = 0;
        }
        self.current_bytes += key.span.len();
        self.current.insert(key, part);
    }

    /// Empty it if [`forget`] was called since its parts were remembered.
    fn refresh(&mut self) {
        let epoch = EPOCH.with(Cell::get);
        if self.epoch != epoch {
            *self = Memo::default();
        }
    }
}

/// Forget every part this thread remembers (benchmarks use it to time parsing itself);
/// each memo lets go of its parts at its next use.
pub fn forget() {
    EPOCH.with(|e| e.set(e.get() + 1));
}

/// The part at `span` of `body`: the one `memo` holds from the same bytes at the same
/// span, else `parse()`'s (remembered for the next request).
pub fn remembered<T>(
    memo: &'static LocalKey<RefCell<Memo<T>>>,
    body: &[u8],
    span: Span,
    parse: impl FnOnce() -> T,
) -> Arc<T> {
    if span.len() < MIN_PART_BYTES || span.end > body.len() {
        return Arc::new(parse());
    }
    let key = Key {
        span,
        digest: xxh3_128(span.slice(body)),
    };
    let found = memo.with(|m| {
        let mut m = m.borrow_mut();
        m.refresh();
        m.get(&key)
    });
    if let Some(p) = found {
        return p;
    }
    let p = Arc::new(parse());
    memo.with(|m| m.borrow_mut().insert(key, p.clone()));
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{Message, Tool};

    thread_local! {
        static MESSAGES: RefCell<Memo<Message>> = RefCell::new(Memo::default());
        static TOOLS: RefCell<Memo<Tool>> = RefCell::new(Memo::default());
    }

    fn message(body: &[u8], span: Span, parse: impl FnOnce() -> Message) -> Arc<Message> {
        remembered(&MESSAGES, body, span, parse)
    }

    fn tool(body: &[u8], span: Span, parse: impl FnOnce() -> Tool) -> Arc<Tool> {
        remembered(&TOOLS, body, span, parse)
    }

    fn parsed_message(role: &str) -> Message {
        Message {
            span: Span::new(0, 0),
            role: role.into(),
            content_is_string: true,
            content: Vec::new(),
            derived: Default::default(),
        }
    }

    #[test]
    fn same_bytes_at_the_same_span_are_parsed_once() {
        let body = format!(r#"{{"role":"user","content":"{}"}}"#, "x".repeat(200));
        let span = Span::new(0, body.len());
        let mut parses = 0;
        let a = message(body.as_bytes(), span, || {
            parses += 1;
            parsed_message("user")
        });
        let b = message(body.as_bytes(), span, || {
            parses += 1;
            parsed_message("other")
        });
        assert_eq!(parses, 1);
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[test]
    fn other_bytes_or_another_span_are_parsed_again() {
        let one = format!(r#"{{"role":"user","content":"{}"}}"#, "y".repeat(200));
        let two = one.replace("yy", "yz");
        let span = Span::new(0, one.len());
        let a = message(one.as_bytes(), span, || parsed_message("one"));
        let b = message(two.as_bytes(), span, || parsed_message("two"));
        assert_eq!((a.role.as_str(), b.role.as_str()), ("one", "two"));
        // The same bytes one byte further on: spans inside the part differ, so no reuse.
        let shifted = format!(" {one}");
        let c = message(shifted.as_bytes(), Span::new(1, one.len() + 1), || {
            parsed_message("shifted")
        });
        assert_eq!(c.role, "shifted");
    }

    #[test]
    fn a_tool_and_a_message_with_the_same_bytes_do_not_mix() {
        let body = format!(r#"{{"name":"{}"}}"#, "t".repeat(200));
        let span = Span::new(0, body.len());
        let _ = message(body.as_bytes(), span, || parsed_message("m"));
        let t = tool(body.as_bytes(), span, || Tool {
            span,
            name: "T".into(),
            ..Tool::default()
        });
        assert_eq!(t.name, "T");
    }

    #[test]
    fn memory_is_bounded_by_two_generations() {
        let mut m = Memo::default();
        let part = Arc::new(parsed_message("u"));
        let len = 1 << 20;
        for i in 0..100usize {
            m.insert(
                Key {
                    span: Span::new(i * len, (i + 1) * len),
                    digest: i as u128,
                },
                part.clone(),
            );
        }
        let kept = (m.current.len() + m.previous.len()) * len;
        assert!(kept <= 2 * GENERATION_BYTES, "{kept} bytes kept");
        // The most recent part is still there.
        let last = Key {
            span: Span::new(99 * len, 100 * len),
            digest: 99,
        };
        assert!(m.get(&last).is_some());
    }
}
