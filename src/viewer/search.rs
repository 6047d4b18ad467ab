//! Search across the trace: the text of messages, tool names, tool inputs and tool
//! results, case-insensitive. Each turn is searched in what it added to its thread (the
//! messages after those of the previous request, so a line of the history is found
//! where it first appeared, not on every later turn) and in its response.

use serde::Serialize;

use crate::api::view::{exchange_response, parse};
use crate::api::{Block, BlockKind, ResponseBody};

use super::model::Model;

/// Most hits returned by one search.
pub const MAX_HITS: usize = 200;

/// One place the words were found.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    /// The turn.
    pub n: usize,
    /// `request` or `response`.
    pub side: &'static str,
    /// The block's kind (`text`, `tool_use`, `tool_result`, …).
    pub kind: String,
    /// Up to 160 characters around the match.
    pub snippet: String,
}

/// Turns (among `turns`, in order) whose added items or response contain `query`; at most
/// [`MAX_HITS`]. Turns that cannot be read back are skipped.
pub fn search(m: &Model, query: &str, turns: impl Iterator<Item = usize>) -> Vec<Hit> {
    let q = query.to_lowercase();
    let mut hits = Vec::new();
    if q.is_empty() {
        return hits;
    }
    for n in turns {
        let Ok(x) = super::detail::load(m, n) else {
            continue;
        };
        let skip = m.extra[n].prev_in_thread.map_or(0, |p| m.turns[p].messages);
        let parsed = parse(&x);
        if let Some(c) = &parsed.request {
            for msg in c.req.messages.iter().skip(skip) {
                for blk in &msg.content {
                    find(&mut hits, n, "request", blk, &q);
                }
            }
        }
        if let Some(ResponseBody::Message(r)) = exchange_response(&x) {
            for blk in &r.content {
                find(&mut hits, n, "response", blk, &q);
            }
        }
        if hits.len() >= MAX_HITS {
            hits.truncate(MAX_HITS);
            break;
        }
    }
    hits
}

/// Add a hit when a block's searchable text holds `q` (already lowercase).
fn find(hits: &mut Vec<Hit>, n: usize, side: &'static str, blk: &Block, q: &str) {
    let text = match &blk.kind {
        BlockKind::ToolUse { name, input, .. } | BlockKind::ServerToolUse { name, input, .. } => {
            format!("{name} {input}")
        }
        _ => match blk.text() {
            Some(t) => t.to_string(),
            None => return,
        },
    };
    let lower = text.to_lowercase();
    let Some(at) = lower.find(q) else { return };
    hits.push(Hit {
        n,
        side,
        kind: blk.block_type().to_string(),
        snippet: snippet(&lower, &text, at, q.len()),
    });
}

/// About 160 characters of `text` around byte `at` of its lowercase form.
fn snippet(lower: &str, text: &str, at: usize, len: usize) -> String {
    // Lowercasing can change byte lengths; fall back to the lowercase text then.
    let src = if lower.len() == text.len() {
        text
    } else {
        lower
    };
    let mut start = at.saturating_sub(60);
    while !src.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + len + 100).min(src.len());
    while !src.is_char_boundary(end) {
        end += 1;
    }
    src[start..end].replace('\n', " ")
}
