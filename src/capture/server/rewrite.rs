//! Replay's values learnt from tool results: a recorded answer names values that only the
//! recorded run saw (a background task's id, its output file, an agent id, a PID), which
//! the CLI being replayed to got differently from its own tools. Answering with the
//! recorded values would send the new CLI to poll a foreign file, so before a recorded
//! answer is sent, each such value is rewritten to the new run's, and a value the new run
//! has no counterpart for is named (the match is then not exact).
//!
//! Learning ([`Learnt::between`]): the recorded request's tool results are paired with
//! the live request's by `tool_use_id` (the ids come from the recording, which the CLI
//! echoes), else by position; each pair is cut into tokens and aligned (Myers diff, the
//! `similar` crate); a run of replaced tokens of equal length maps old to new token by
//! token. Only value-like tokens (at least 4 bytes, holding a digit or a `/`) are learnt:
//! words that changed ("running" → "done") are output, not identifiers.
//!
//! Rewriting ([`rewrite`]) works on every string of the answer (a JSON message, or each
//! event of a stream). A value can be split across a stream's deltas (`input_json_delta`
//! pieces of a tool call's input, text deltas, Responses argument deltas, Chat Completions
//! `tool_calls` argument pieces), so each delta channel is assembled first, rewritten as
//! one string, and re-emitted whole in its first event (the channel's other deltas become
//! empty strings); every event keeps its recorded time.

use std::collections::{BTreeMap, HashSet};

use regex::Regex;
use serde_json::Value;

use crate::api::{BlockKind, MessagesRequest};

/// Values learnt from two requests' tool results: what to rewrite, and what has no
/// counterpart in the live run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Learnt {
    /// Recorded value → the live run's value, longest recorded value first.
    map: Vec<(String, String)>,
    /// Value-like tokens of the recorded results that the live request holds nowhere.
    foreign: Vec<String>,
}

/// A rewritten answer.
#[derive(Debug, PartialEq)]
pub(crate) struct Rewritten {
    /// The body to send.
    pub body: Vec<u8>,
    /// Its pieces, `(offset_us, length_bytes)`, each event at its recorded time.
    pub chunks: Vec<(u64, u64)>,
    /// What was replaced: `old → new (N×)`.
    pub replaced: Vec<String>,
    /// Recorded values the answer names that the live run has no counterpart for.
    pub stale: Vec<String>,
}

/// The tool results of a request: `(tool_use_id, text)` in order.
pub(crate) fn tool_results(req: &MessagesRequest) -> Vec<(String, String)> {
    let blocks = req.messages.iter().flat_map(|m| m.content.iter());
    blocks
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_use_id, text, ..
            } => Some((tool_use_id.clone(), text.clone())),
            _ => None,
        })
        .collect()
}

/// Tokens of a text: runs of letters, digits and `._/-~`, without a trailing `.`.
fn tokens(s: &str) -> Vec<&str> {
    let word = |c: char| c.is_alphanumeric() || "._/-~".contains(c);
    s.split(|c: char| !word(c))
        .map(|t| t.trim_end_matches('.'))
        .filter(|t| !t.is_empty())
        .collect()
}

/// An identifier or a path, not a word: at least 4 bytes with a digit or a `/`.
fn value_like(t: &str) -> bool {
    t.len() >= 4 && t.bytes().any(|b| b.is_ascii_digit() || b == b'/')
}

impl Learnt {
    /// Learn from the recorded request's tool results (`recorded`) and the live request
    /// (`live`, its raw body `live_body`).
    pub(crate) fn between(
        recorded: &[(String, String)],
        live: &MessagesRequest,
        live_body: &[u8],
    ) -> Learnt {
        let now = tool_results(live);
        let mut map: BTreeMap<String, Option<String>> = BTreeMap::new();
        for (i, (id, old)) in recorded.iter().enumerate() {
            let new = (now.iter().find(|(n, _)| n == id))
                .or_else(|| now.get(i))
                .map(|(_, t)| t.as_str());
            if let Some(new) = new {
                pair_tokens(old, new, &mut map);
            }
        }
        // Every token the live request holds (its raw body, and its results decoded).
        let live_text = String::from_utf8_lossy(live_body);
        let mut held: HashSet<&str> = tokens(&live_text).into_iter().collect();
        held.extend(now.iter().flat_map(|(_, t)| tokens(t)));
        let mut foreign: Vec<String> = Vec::new();
        let mut seen = HashSet::new();
        for (_, old) in recorded {
            for t in tokens(old).into_iter().filter(|t| value_like(t)) {
                if seen.insert(t) && !map.contains_key(t) && !held.contains(t) {
                    foreign.push(t.to_string());
                }
            }
        }
        // A value mapped two ways is ambiguous: named, not rewritten.
        let mut pairs = Vec::new();
        for (old, new) in map {
            match new {
                Some(new) => pairs.push((old, new)),
                None if !held.contains(old.as_str()) => foreign.push(old),
                None => {}
            }
        }
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Learnt {
            map: pairs,
            foreign,
        }
    }

    /// True when nothing was learnt.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty() && self.foreign.is_empty()
    }
}

/// Align the tokens of one recorded result (`old`) and its live counterpart (`new`) and
/// add the value-like replacements to `map` (`None`: the value was seen mapped two ways).
fn pair_tokens(old: &str, new: &str, map: &mut BTreeMap<String, Option<String>>) {
    let (a, b) = (tokens(old), tokens(new));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b);
    for op in ops {
        let similar::DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } = op
        else {
            continue;
        };
        if old_len != new_len {
            continue;
        }
        for k in 0..old_len {
            let (o, n) = (a[old_index + k], b[new_index + k]);
            if o == n || !value_like(o) {
                continue;
            }
            let slot = map
                .entry(o.to_string())
                .or_insert_with(|| Some(n.to_string()));
            if slot.as_deref() != Some(n) {
                *slot = None;
            }
        }
    }
}

/// One alternation of the given values, longest first (so a path wins over the task id
/// inside it); `None` for no values.
fn alternation<'a>(values: impl Iterator<Item = &'a str>) -> Option<Regex> {
    let mut v: Vec<&str> = values.collect();
    v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    if v.is_empty() {
        return None;
    }
    let pattern = v
        .iter()
        .map(|s| regex::escape(s))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&pattern).ok()
}

/// The replacing and naming of one answer.
struct Pass<'l> {
    learnt: &'l Learnt,
    old: Option<Regex>,
    foreign: Option<Regex>,
    counts: BTreeMap<usize, u64>,
    stale: Vec<String>,
}

impl<'l> Pass<'l> {
    fn new(learnt: &'l Learnt) -> Pass<'l> {
        Pass {
            learnt,
            old: alternation(learnt.map.iter().map(|(o, _)| o.as_str())),
            foreign: alternation(learnt.foreign.iter().map(String::as_str)),
            counts: BTreeMap::new(),
            stale: Vec::new(),
        }
    }

    /// `s` with every learnt value replaced (`None`: nothing to replace); stale values
    /// are noted.
    fn text(&mut self, s: &str) -> Option<String> {
        if let Some(f) = &self.foreign {
            for m in f.find_iter(s) {
                if !self.stale.iter().any(|x| x == m.as_str()) {
                    self.stale.push(m.as_str().to_string());
                }
            }
        }
        let re = self.old.as_ref()?;
        if !re.is_match(s) {
            return None;
        }
        let out = re.replace_all(s, |c: &regex::Captures| {
            let i = (self.learnt.map.iter())
                .position(|(o, _)| o == &c[0])
                .unwrap_or(0);
            *self.counts.entry(i).or_default() += 1;
            self.learnt.map[i].1.clone()
        });
        Some(out.into_owned())
    }

    /// Every string of `v` except at the pointers in `skip`; true when one changed.
    fn value(&mut self, v: &mut Value, at: &mut String, skip: &HashSet<String>) -> bool {
        let mut changed = false;
        match v {
            Value::String(s) if !skip.contains(at.as_str()) => {
                if let Some(n) = self.text(s) {
                    *s = n;
                    changed = true;
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    changed |= self.value(item, at, skip);
                    at.truncate(len);
                }
            }
            Value::Object(members) => {
                for (k, item) in members.iter_mut() {
                    let len = at.len();
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    changed |= self.value(item, at, skip);
                    at.truncate(len);
                }
            }
            _ => {}
        }
        changed
    }

    fn replaced(&self) -> Vec<String> {
        (self.counts.iter())
            .map(|(&i, n)| {
                let (o, new) = &self.learnt.map[i];
                format!("{o} → {new} ({n}×)")
            })
            .collect()
    }
}

/// The delta slots of one stream event: `(channel, JSON pointer)` of each string that is a
/// piece of a longer value (see the module doc for the dialects' pieces).
fn delta_slots(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let ty = v["type"].as_str().unwrap_or("");
    if ty == "content_block_delta" {
        for f in ["partial_json", "text", "thinking"] {
            if v["delta"][f].is_string() {
                out.push((format!("m{}{f}", v["index"]), format!("/delta/{f}")));
            }
        }
    } else if ty.starts_with("response.") && ty.ends_with(".delta") && v["delta"].is_string() {
        let key = format!(
            "{ty}{}{}{}",
            v["item_id"], v["output_index"], v["content_index"]
        );
        out.push((key, "/delta".into()));
    }
    for (c, choice) in v["choices"].as_array().into_iter().flatten().enumerate() {
        if choice["delta"]["content"].is_string() {
            out.push((format!("c{c}"), format!("/choices/{c}/delta/content")));
        }
        let calls = choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten();
        for (j, call) in calls.enumerate() {
            if call["function"]["arguments"].is_string() {
                out.push((
                    format!("c{c}t{}", call["index"]),
                    format!("/choices/{c}/delta/tool_calls/{j}/function/arguments"),
                ));
            }
        }
    }
    out
}

/// `body` (a recorded answer, cut into `chunks` as recorded) with the learnt values
/// rewritten; `None` when the answer names none of them.
pub(crate) fn rewrite(body: &[u8], chunks: &[(u64, u64)], learnt: &Learnt) -> Option<Rewritten> {
    if learnt.is_empty() {
        return None;
    }
    if crate::api::sse::looks_like_event_stream(body) {
        return rewrite_stream(body, chunks, learnt);
    }
    let mut v: Value = serde_json::from_slice(body).ok()?;
    let mut pass = Pass::new(learnt);
    let changed = pass.value(&mut v, &mut String::new(), &HashSet::new());
    if !changed && pass.stale.is_empty() {
        return None;
    }
    let body = if changed {
        serde_json::to_vec(&v).ok()?
    } else {
        body.to_vec()
    };
    let end = chunks.iter().map(|c| c.0).max().unwrap_or(0);
    Some(Rewritten {
        chunks: vec![(end, body.len() as u64)],
        body,
        replaced: pass.replaced(),
        stale: pass.stale,
    })
}

/// [`rewrite`] for an event stream: each delta channel assembled, rewritten and put back
/// whole into its first event; each event re-emitted at the recorded time of its last
/// byte. Long because it is one walk over the events in three steps (parse, channels,
/// emit) that share their indexes.
fn rewrite_stream(body: &[u8], chunks: &[(u64, u64)], learnt: &Learnt) -> Option<Rewritten> {
    let events = crate::api::sse::parse_events(body);
    let mut values: Vec<Option<Value>> = (events.iter())
        .map(|e| serde_json::from_str(&e.data).ok())
        .collect();
    let mut channels: BTreeMap<String, Vec<(usize, String)>> = BTreeMap::new();
    let mut skip: Vec<HashSet<String>> = vec![HashSet::new(); events.len()];
    for (i, v) in values.iter().enumerate() {
        for (key, ptr) in v.as_ref().map(delta_slots).unwrap_or_default() {
            skip[i].insert(ptr.clone());
            channels.entry(key).or_default().push((i, ptr));
        }
    }
    let mut pass = Pass::new(learnt);
    let mut changed = vec![false; events.len()];
    for slots in channels.values() {
        let whole: String = (slots.iter())
            .filter_map(|(i, p)| {
                values[*i]
                    .as_ref()?
                    .pointer(p)?
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        let Some(new) = pass.text(&whole) else {
            continue;
        };
        for (k, (i, p)) in slots.iter().enumerate() {
            if let Some(s) = values[*i].as_mut().and_then(|v| v.pointer_mut(p)) {
                *s = Value::String(if k == 0 { new.clone() } else { String::new() });
                changed[*i] = true;
            }
        }
    }
    for (i, v) in values.iter_mut().enumerate() {
        if let Some(v) = v {
            changed[i] |= pass.value(v, &mut String::new(), &skip[i]);
        }
    }
    if !changed.contains(&true) && pass.stale.is_empty() {
        return None;
    }
    // When each event's recorded last byte went out (µs).
    let mut ends = Vec::with_capacity(chunks.len());
    let mut at = 0u64;
    for (offset, len) in chunks {
        at = at.saturating_add(*len);
        ends.push((at, *offset));
    }
    let time_of = |byte: u64| {
        (ends.iter().find(|(end, _)| *end > byte))
            .or(ends.last())
            .map_or(0, |e| e.1)
    };
    let mut out = Vec::with_capacity(body.len());
    let mut out_chunks: Vec<(u64, u64)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let start = e.offset as usize;
        let end = events.get(i + 1).map_or(body.len(), |n| n.offset as usize);
        let before = out.len();
        if changed[i] {
            let data = values[i].as_ref().map(Value::to_string).unwrap_or_default();
            if let Some(name) = &e.event {
                out.extend_from_slice(format!("event: {name}\n").as_bytes());
            }
            out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
        } else {
            out.extend_from_slice(&body[start.min(body.len())..end.min(body.len())]);
        }
        let t = time_of(end.saturating_sub(1) as u64);
        let len = (out.len() - before) as u64;
        match out_chunks.last_mut() {
            Some(last) if last.0 == t => last.1 += len,
            _ => out_chunks.push((t, len)),
        }
    }
    Some(Rewritten {
        body: out,
        chunks: out_chunks,
        replaced: pass.replaced(),
        stale: pass.stale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learnt(map: &[(&str, &str)], foreign: &[&str]) -> Learnt {
        Learnt {
            map: map
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            foreign: foreign.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn background_task_id_and_output_path_are_learnt_from_aligned_results() {
        let old = "Command running in background with ID: b1x2. Output is being written to: /tmp/c/S1/tasks/b1x2.output";
        let new = "Command running in background with ID: q9z8. Output is being written to: /tmp/c/S2/tasks/q9z8.output";
        let mut map = BTreeMap::new();
        pair_tokens(old, new, &mut map);
        assert_eq!(map.get("b1x2"), Some(&Some("q9z8".to_string())));
        assert_eq!(
            map.get("/tmp/c/S1/tasks/b1x2.output"),
            Some(&Some("/tmp/c/S2/tasks/q9z8.output".to_string()))
        );
        // words that changed are output, not identifiers
        let mut words = BTreeMap::new();
        pair_tokens("build running", "build done", &mut words);
        assert!(words.is_empty());
    }

    #[test]
    fn a_path_split_across_input_json_deltas_is_rewritten_whole() {
        // The recorded stream cuts the old path in the middle: `tail -n 1 /tmp/a/b1` +
        // `x2.out`; a per-event replacement would never see it.
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"tail -n 1 /tmp/a/b1\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x2.out\\\"}\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        );
        let n = body.len() as u64;
        let l = learnt(&[("/tmp/a/b1x2.out", "/tmp/b/q9z8.out")], &[]);
        let r = rewrite(body.as_bytes(), &[(10, n / 2), (20, n - n / 2)], &l).unwrap();
        let m = crate::api::sse::assemble_message(&r.body).unwrap();
        assert_eq!(
            m["content"][0]["input"]["command"],
            "tail -n 1 /tmp/b/q9z8.out"
        );
        assert_eq!(r.replaced, ["/tmp/a/b1x2.out → /tmp/b/q9z8.out (1×)"]);
        assert_eq!(
            r.chunks.iter().map(|c| c.1).sum::<u64>(),
            r.body.len() as u64
        );
        assert_eq!(
            r.chunks.last().unwrap().0,
            20,
            "the last event keeps its time"
        );
    }

    #[test]
    fn a_recorded_value_without_counterpart_is_named_stale() {
        let body = br#"{"type":"message","content":[{"type":"tool_use","id":"t","name":"TaskOutput","input":{"task_id":"b1x2"}}]}"#;
        let r = rewrite(body, &[(5, body.len() as u64)], &learnt(&[], &["b1x2"])).unwrap();
        assert_eq!(r.stale, ["b1x2"]);
        assert_eq!(r.body, body.to_vec(), "nothing to rewrite it to");
    }

    #[test]
    fn chat_completions_argument_pieces_are_one_channel() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"id\\\":\\\"b1\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"x2\\\"}\"}}]}}]}\n\n",
            "data: [DONE]\n\n",
        );
        let r = rewrite(body.as_bytes(), &[], &learnt(&[("b1x2", "q9z8")], &[])).unwrap();
        let text = String::from_utf8(r.body).unwrap();
        assert!(text.contains(r#"{\"id\":\"q9z8\"}"#), "{text}");
        assert!(text.ends_with("data: [DONE]\n\n"));
    }
}
