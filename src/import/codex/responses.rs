//! How a rollout's conversation lines become exchanges: items join the history, a usage
//! record (or, in rollouts without them, a `token_count` event) ends a response, a
//! compaction replaces the history; each response's exchange is made from the history
//! before its first output item.

use std::io::BufRead;

use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use serde_json::Value;

use super::exchange::{exchange, Answer, Base, End, Request};
use super::history::{as_sent, base_message, classify, is_base_message, wire, Kind, Provider};
use super::lines::Line;
use super::raw;
use super::reader::{Pending, Rollout};
use crate::trace::Record;

impl<R: BufRead> Rollout<R> {
    /// A `response_item` line: an item of the history.
    pub(super) fn item(&mut self, l: &Line, line_text: &str, p: &Value) {
        let Some(text) = raw::member(line_text, "payload").filter(|_| p.is_object()) else {
            return self.bad(
                l,
                "a response_item whose payload is not a JSON object; skipped".into(),
            );
        };
        let Kind::Item(item) = classify(text, p) else {
            return;
        };
        let pending_outputs = self.pending.as_ref().is_some_and(|p| !p.outputs.is_empty());
        if !item.output && pending_outputs && self.end == Some(End::UsageRecord) {
            // the previous response's items ended without its usage record
            self.close(None, End::Unmarked, 0, None);
        }
        if self.bytes + item.text.len() > self.max {
            return self.stop(l);
        }
        let at = self.items.len();
        if item.output && self.pending.is_none() {
            self.pending = Some(Pending {
                input_len: at,
                outputs: Vec::new(),
                started: self.last_time,
            });
        }
        if self.base_at.is_none()
            && self
                .meta
                .base
                .as_deref()
                .is_some_and(|b| is_base_message(p, b))
        {
            self.base_at = Some(at);
        }
        if item.tools && self.tools_at.is_none() {
            self.tools_at = Some(at);
        }
        if let (true, Some(pending)) = (item.output, self.pending.as_mut()) {
            pending.outputs.push(at);
        }
        self.bytes += item.text.len();
        self.items.push(item);
    }

    /// The history passed [`MAX_HISTORY`]: the rest of the file is not read.
    fn stop(&mut self, l: &Line) {
        let message = format!(
            "the conversation passes {} bytes at this line; it and the rest of the file are not read ({} responses were)",
            self.max, self.exchanges
        );
        self.pending = None;
        self.bad(l, message);
        self.finish();
    }

    /// A `token_usage_record` line: the end of a response.
    pub(super) fn usage_record(&mut self, p: &Value, line: u64, time: Option<DateTime<Utc>>) {
        if self.end == Some(End::TokenCount) {
            return;
        }
        self.end = Some(End::UsageRecord);
        self.close(Some(p), End::UsageRecord, line, time);
    }

    /// An `event_msg` line: a `token_count` ends a response in rollouts without usage
    /// records; the other events are not needed.
    pub(super) fn event(&mut self, p: &Value, line: u64, time: Option<DateTime<Utc>>) {
        let usage = p.pointer("/info/last_token_usage").filter(|u| {
            u.is_object() && p.get("type").and_then(Value::as_str) == Some("token_count")
        });
        if usage.is_none() || self.end == Some(End::UsageRecord) || self.pending.is_none() {
            return;
        }
        self.end = Some(End::TokenCount);
        let record = serde_json::json!({ "usage": usage });
        self.close(Some(&record), End::TokenCount, line, time);
    }

    /// A `compacted` line: the history from here on is its `replacement_history`, or not
    /// known.
    pub(super) fn compacted(&mut self, line_text: &str, line: u64) {
        if self.pending.as_ref().is_some_and(|p| !p.outputs.is_empty()) {
            self.close(None, End::Unmarked, 0, None);
        }
        self.pending = None;
        let replacement = raw::member(line_text, "payload")
            .and_then(|t| raw::member(t, "replacement_history"))
            .and_then(|t| serde_json::from_str::<Vec<&RawValue>>(t).ok());
        self.items.clear();
        (self.bytes, self.base_at, self.tools_at) = (0, None, None);
        let Some(replacement) = replacement else {
            self.caveats.push(format!("the conversation before the compaction on line {line} (the rollout does not record what replaced it; the input holds only the items after it)"));
            return;
        };
        self.caveats.push(format!("the input items up to the compaction on line {line} are its replacement_history (not checked against a request body)"));
        for t in replacement {
            let v: Value = serde_json::from_str(t.get()).unwrap_or(Value::Null);
            if let Kind::Item(mut item) = classify(t.get(), &v) {
                item.output = false;
                if self
                    .meta
                    .base
                    .as_deref()
                    .is_some_and(|b| is_base_message(&v, b))
                {
                    self.base_at.get_or_insert(self.items.len());
                }
                if item.tools {
                    self.tools_at.get_or_insert(self.items.len());
                }
                self.bytes += item.text.len();
                self.items.push(item);
            }
        }
    }

    /// Make the exchange of the pending response (or of an empty one), ended by `record`.
    pub(super) fn close(
        &mut self,
        record: Option<&Value>,
        end: End,
        line: u64,
        time: Option<DateTime<Utc>>,
    ) {
        let (input_len, outputs, started) = match self.pending.take() {
            Some(p) => (p.input_len, p.outputs, p.started),
            None => (self.items.len(), Vec::new(), self.last_time),
        };
        let s = |k: &str| {
            record
                .and_then(|r| r.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let ans = Answer {
            outputs: outputs.iter().map(|&i| as_sent(&self.items[i])).collect(),
            usage: record.and_then(|r| r.get("usage")).cloned(),
            response_id: s("response_id"),
            turn_id: s("turn_id"),
            thread_id: s("thread_id"),
            ended: time.or(self.last_time),
            end,
            line,
        };
        let provider = Provider::of(self.meta.provider.as_deref());
        let lite = self.tools_at.is_some_and(|t| t < input_len);
        let base = match (self.base_at, &self.meta.base) {
            (Some(b), _) if b < input_len => Base::InHistory,
            (_, Some(_)) => Base::Prepended,
            _ => Base::Unknown,
        };
        let mut input: Vec<std::borrow::Cow<str>> = Vec::with_capacity(input_len + 1);
        if let (Base::Prepended, Some(b)) = (base, &self.meta.base) {
            input.push(base_message(b).into());
        }
        input.extend(
            self.items[..input_len]
                .iter()
                .map(|i| wire(i, provider, lite)),
        );
        let req = Request {
            model: self.model.as_deref(),
            input,
            base,
            tools_in_input: lite,
            started,
        };
        let x = exchange(&self.meta, req, ans, &self.caveats_now());
        self.ready.push_back(Record::Exchange(Box::new(x)));
        self.exchanges += 1;
    }

    /// The caveats of an exchange made now: compactions and unreadable lines so far.
    fn caveats_now(&self) -> Vec<String> {
        let mut c = self.caveats.clone();
        let (named, more) = &self.gaps;
        if !named.is_empty() {
            let lines: Vec<String> = named.iter().map(u64::to_string).collect();
            let more = if *more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            c.push(format!("what line(s) {}{more} held (they could not be read; if one was an item of the conversation, this request lacks it)", lines.join(", ")));
        }
        c
    }
}
