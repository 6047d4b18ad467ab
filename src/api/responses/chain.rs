//! Whole conversations from `previous_response_id` chains. A Responses request may carry
//! only the items that are new since a previous response it names (source: OpenAI API
//! reference, `previous_response_id`; "WebSocket mode": a continuation sends
//! `previous_response_id` and only the new input items, with the same semantics as over
//! HTTP). Codex does this on every turn of its WebSocket route (measured on Codex 0.165.0
//! and 0.171.0). To read such a request as the prompt the model saw, it is rebuilt:
//!
//! full input = the previous request's full input + that response's output items + this
//! request's input.
//!
//! `instructions` and `tools` are not carried over (the API's rule: they apply to the
//! request that sends them), so the rebuilt body keeps this request's own. A request whose
//! previous response is not in the trace (a trace that starts mid-session, a response that
//! failed) cannot be rebuilt: it is read as sent and the problem is said.
//!
//! Memory is bounded: links are kept for at most [`MAX_LINK_BYTES`] bytes of items, oldest
//! dropped first (a request naming a dropped link is read as sent, and says why).

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

/// Bytes of item JSON the chain keeps before dropping its oldest links.
pub const MAX_LINK_BYTES: usize = 256 << 20;

/// One response, as later requests may continue from it.
struct Link {
    /// The response it continued from, if any.
    parent: Option<String>,
    /// The items its request sent (only the new ones, when it had a parent).
    input: Vec<Value>,
    /// The response's output items.
    output: Vec<Value>,
    /// Bytes of JSON in `input` and `output` (for the bound).
    bytes: usize,
    /// Its request named a previous response the trace does not hold: the conversation
    /// before it was not recorded.
    partial: Option<String>,
}

/// A rebuilt request body.
#[derive(Debug)]
pub struct Rebuilt {
    /// The body with `input` replaced by the whole conversation (JSON, compact).
    pub body: Vec<u8>,
    /// The previous response it continued from.
    pub previous: String,
    /// How many responses the chain went back through.
    pub depth: usize,
    /// The earliest previous response the trace does not hold, when the chain starts
    /// mid-session: the rebuilt conversation lacks what came before it.
    pub missing_root: Option<String>,
}

/// The responses seen so far, by id.
#[derive(Default)]
pub struct Chains {
    links: HashMap<String, Link>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Chains {
    /// No responses yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `previous_response_id` of a Responses request body, if it names one.
    pub fn previous_of(body: &Value) -> Option<&str> {
        body.get("previous_response_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    }

    /// Rebuild `body` (a Responses request that names a previous response) as the whole
    /// conversation. Errors: why it cannot be (the previous response is unknown), in
    /// words for `show` and the problem counts.
    pub fn rebuild(&self, body: &Value) -> Result<Rebuilt, String> {
        let Some(previous) = Self::previous_of(body) else {
            return Err("the request names no previous response".into());
        };
        let mut chain = Vec::new();
        let mut at = Some(previous.to_string());
        while let Some(id) = at {
            let Some(link) = self.links.get(&id) else {
                return Err(if chain.is_empty() {
                    format!(
                        "previous_response_id {id} names no response earlier in this trace (it starts mid-session, or that response was not recorded); read as sent: only the new items"
                    )
                } else {
                    format!(
                        "the chain back from previous_response_id {previous} breaks at {id}, which is not in this trace; read as sent: only the new items"
                    )
                });
            };
            chain.push(link);
            at = link.parent.clone();
            if chain.len() > self.links.len() {
                return Err(format!(
                    "previous_response_id {previous} leads into a cycle; read as sent"
                ));
            }
        }
        let missing_root = chain.last().and_then(|l| l.partial.clone());
        let mut input = Vec::new();
        for link in chain.iter().rev() {
            input.extend(link.input.iter().cloned());
            input.extend(link.output.iter().cloned());
        }
        input.extend(own_input(body));
        let mut out: Map<String, Value> = body.as_object().cloned().unwrap_or_default();
        out.insert("input".into(), Value::Array(input));
        Ok(Rebuilt {
            body: serde_json::to_vec(&Value::Object(out)).unwrap_or_default(),
            previous: previous.to_string(),
            depth: chain.len(),
            missing_root,
        })
    }

    /// Remember the response `id` to `body` (the request as sent), with its output items.
    pub fn record(&mut self, id: &str, body: &Value, output: Vec<Value>) {
        if id.is_empty() {
            return;
        }
        let input = own_input(body);
        let bytes = input
            .iter()
            .chain(&output)
            .map(|v| v.to_string().len())
            .sum();
        // A parent the trace does not hold ends the chain here, said as partial.
        let named = Self::previous_of(body).map(str::to_string);
        let (parent, partial) = match named {
            Some(p) if self.links.contains_key(&p) => (Some(p), None),
            Some(p) => (None, Some(p)),
            None => (None, None),
        };
        let link = Link {
            parent,
            input,
            output,
            bytes,
            partial,
        };
        self.bytes += link.bytes;
        if let Some(old) = self.links.insert(id.to_string(), link) {
            self.bytes -= old.bytes;
        } else {
            self.order.push_back(id.to_string());
        }
        while self.bytes > MAX_LINK_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(l) = self.links.remove(&oldest) {
                self.bytes -= l.bytes;
            }
        }
    }
}

/// The items a request sent: its `input` array, or a string `input` as one user message.
fn own_input(body: &Value) -> Vec<Value> {
    match body.get("input") {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::String(s)) => vec![serde_json::json!({"role": "user", "content": s})],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_follow_up_is_the_previous_input_and_output_then_its_own_items() {
        let mut c = Chains::new();
        let prewarm = json!({"type":"response.create","generate":false,"input":[]});
        c.record("resp_0", &prewarm, vec![]);
        let first = json!({"previous_response_id":"resp_0","input":[{"role":"user","content":"run it"}],"tools":[{"type":"function","name":"exec_command"}]});
        c.record("resp_1", &first, vec![json!({"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"})]);
        let follow = json!({"previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c1","output":"Process running with session ID 7"}]});
        let r = c.rebuild(&follow).unwrap();
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        let types: Vec<&str> = v["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.get("type").and_then(Value::as_str).unwrap_or("message"))
            .collect();
        assert_eq!(types, ["message", "function_call", "function_call_output"]);
        assert_eq!(r.depth, 2);
        assert_eq!(r.previous, "resp_1");
        // Tools are not carried over: the follow-up sent none.
        assert!(v.get("tools").is_none());
        // A response that continued one the trace lacks starts a partial chain.
        c.record(
            "resp_x",
            &json!({"previous_response_id":"resp_gone","input":[{"role":"user","content":"a"}]}),
            vec![],
        );
        let r = c
            .rebuild(&json!({"previous_response_id":"resp_x","input":[]}))
            .unwrap();
        assert_eq!(r.missing_root.as_deref(), Some("resp_gone"));
        // A chain into a response the trace does not hold is read as sent, and says why.
        let e = c
            .rebuild(&json!({"previous_response_id":"resp_9","input":[]}))
            .unwrap_err();
        assert!(e.contains("resp_9") && e.contains("mid-session"), "{e}");
    }
}
