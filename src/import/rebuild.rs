//! Rebuilding request bodies from the request records recent Claude Code versions write
//! into their transcripts, and checking them against the recorded digest.
//!
//! The records (names as Claude Code writes them; the rules were established from real
//! transcripts of 2.1.303, 2.1.304 and 2.1.332 next to the wire bodies of the same runs,
//! and are checked by the tests):
//! - `api-request-shape` `{shapeHash, shape: {system, tools}}`: `shapeHash` is the SHA-256
//!   of the canonical JSON ([`super::canonical_json`]) of `shape`;
//! - `api-request-blob` `{hash, message}`: a message by the SHA-256 of its canonical JSON;
//!   messages the transcript holds anyway (user entries, assistant replies merged by
//!   message id) are not written as blobs but named by the same hash;
//! - `api-request` `{id, shapeHash, params, base?, keep, tail, cacheControl,
//!   requestDigest}`: the messages are the first `keep` messages of request `base` followed
//!   by the `tail` hashes; `cacheControl` lists `{path, value}` pairs that put
//!   `cache_control` into `system`, `tools` or `messages`; `params` holds `model`, `betas`
//!   (sent as the `anthropic-beta` header) and the other body parameters in order.
//! - `requestDigest` is the SHA-256 of the canonical JSON of `params` plus `system`,
//!   `tools` and `messages` after `cache_control` is applied.
//!
//! On the wire the client then (a) sends a `system`-role message whose content is one
//! plain text block as a string, and (b) prepends the billing block
//! `x-anthropic-billing-header: cc_version=VERSION.FP; cc_entrypoint=ENTRYPOINT;`
//! (`cc_is_subagent=true;` appended for subagents), where FP is the first 3 hex digits of
//! SHA-256(`59cf53e54c78` + characters 4, 7 and 20 of the first user text, `0` for missing
//! ones, + VERSION). Not in the records: `metadata` (it holds a device id) and `stream`.

use std::collections::HashMap;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use std::sync::Arc;

use super::canonical::{canonical_sha256, write_members, HashWriter};

/// The salt of the billing fingerprint (see the module docs).
const BILLING_SALT: &str = "59cf53e54c78";

/// Request records of one session, accumulated as its lines are read.
#[derive(Default)]
pub struct Records {
    shapes: HashMap<String, Value>,
    blobs: HashMap<String, Arc<Value>>,
    /// Messages of each rebuilt request (shared, so `base`/`keep` costs no copies).
    built: HashMap<String, Vec<Arc<Value>>>,
}

/// Outcome of checking a rebuilt request against `requestDigest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestCheck {
    /// The rebuilt request has the recorded digest.
    Verified,
    /// It does not: some part was rebuilt wrongly.
    Mismatch,
    /// The record has no digest.
    Absent,
}

impl DigestCheck {
    /// `verified`, `mismatch` or `absent`.
    pub fn name(self) -> &'static str {
        match self {
            DigestCheck::Verified => "verified",
            DigestCheck::Mismatch => "mismatch",
            DigestCheck::Absent => "absent",
        }
    }
}

/// A rebuilt request.
#[derive(Debug)]
pub struct Rebuilt {
    /// The body as the client would send it, less `metadata` and `stream`.
    pub body: Value,
    /// `params.betas`, for the `anthropic-beta` header.
    pub betas: Vec<String>,
    /// The digest check.
    pub digest: DigestCheck,
    /// True when the billing block could be rebuilt (an entrypoint was recorded).
    pub billing: bool,
}

/// What the billing block needs besides the request.
pub struct Client<'a> {
    /// Claude Code version of the request record.
    pub version: &'a str,
    /// `entrypoint` of the transcript's entries (`cli`, `sdk-cli`, ...).
    pub entrypoint: Option<&'a str>,
    /// True for a subagent's request.
    pub subagent: bool,
}

impl Records {
    /// Take what a line defines: a shape or a blob.
    pub fn add_line(&mut self, v: &Value) {
        match v.get("type").and_then(Value::as_str) {
            Some("api-request-shape") => {
                if let (Some(h), Some(s)) =
                    (v.get("shapeHash").and_then(Value::as_str), v.get("shape"))
                {
                    self.shapes.insert(h.to_string(), s.clone());
                }
            }
            Some("api-request-blob") => {
                if let (Some(h), Some(m)) =
                    (v.get("hash").and_then(Value::as_str), v.get("message"))
                {
                    self.blobs.insert(h.to_string(), Arc::new(m.clone()));
                }
            }
            _ => {}
        }
    }

    /// Make a message the transcript holds (a user entry's, or an assistant reply merged
    /// by message id) findable by its hash.
    pub fn add_message(&mut self, m: Value) {
        self.blobs
            .entry(canonical_sha256(&m))
            .or_insert(Arc::new(m));
    }

    /// Rebuild the request of an `api-request` record.
    ///
    /// Errors: a message in words when a shape, base request or message it names is not in
    /// the transcript, or a `cacheControl` path does not exist.
    pub fn rebuild(&mut self, rec: &Value, client: &Client) -> Result<Rebuilt, String> {
        let shape_hash = text(rec, "shapeHash").ok_or("the record names no shape")?;
        let shape = self
            .shapes
            .get(shape_hash)
            .ok_or_else(|| format!("shape {shape_hash} is not in the transcript"))?;
        let system = shape.get("system").cloned().unwrap_or(Value::Array(vec![]));
        let tools = shape.get("tools").cloned().unwrap_or(Value::Array(vec![]));
        let messages = self.messages(rec)?;
        let parts = parts(system, tools, messages, rec)?;
        let params = rec
            .get("params")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let digest = match text(rec, "requestDigest") {
            None => DigestCheck::Absent,
            Some(d) => check_digest(d, &params, &parts)?,
        };
        let (body, billing) = body(parts, &params, client);
        Ok(Rebuilt {
            body,
            betas: betas(&params),
            digest,
            billing,
        })
    }

    /// The messages of an `api-request` record: the first `keep` of request `base`, then
    /// the `tail` hashes. They are kept (shared) under the record's `id` for the requests
    /// built on it; the copy returned is the request's own.
    fn messages(&mut self, rec: &Value) -> Result<Vec<Value>, String> {
        let mut messages = match text(rec, "base") {
            Some(base) => {
                let prior = self
                    .built
                    .get(base)
                    .ok_or_else(|| format!("base request {base} is not in the transcript"))?;
                let keep = rec.get("keep").and_then(Value::as_u64).unwrap_or(0) as usize;
                prior
                    .get(..keep)
                    .ok_or_else(|| {
                        format!("keep {keep} exceeds the {} messages of {base}", prior.len())
                    })?
                    .to_vec()
            }
            None => Vec::new(),
        };
        for h in rec
            .get("tail")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let h = h.as_str().unwrap_or_default();
            let m = self
                .blobs
                .get(h)
                .ok_or_else(|| format!("message {h} is not in the transcript"))?;
            messages.push(m.clone());
        }
        // the one deep copy: the body gets its own messages to place cache_control in
        let owned: Vec<Value> = messages.iter().map(|m| Value::clone(m)).collect();
        if let Some(id) = text(rec, "id") {
            self.built.insert(id.to_string(), messages);
        }
        Ok(owned)
    }
}

/// A string member of a record.
fn text<'a>(rec: &'a Value, key: &str) -> Option<&'a str> {
    rec.get(key).and_then(Value::as_str)
}

/// `system`, `tools` and `messages` as one object, with the record's `cacheControl`
/// applied. Errors: a `cacheControl` path that does not exist.
fn parts(system: Value, tools: Value, messages: Vec<Value>, rec: &Value) -> Result<Value, String> {
    let mut parts = Map::new();
    parts.insert("system".into(), system);
    parts.insert("tools".into(), tools);
    parts.insert("messages".into(), Value::Array(messages));
    let mut parts = Value::Object(parts);
    for cc in rec
        .get("cacheControl")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        apply_cache_control(&mut parts, cc)?;
    }
    Ok(parts)
}

/// Check `params` and `parts` against the recorded `requestDigest` (hex SHA-256).
fn check_digest(
    digest: &str,
    params: &Map<String, Value>,
    parts: &Value,
) -> Result<DigestCheck, String> {
    // params and parts as one object, keys sorted, hashed without copying
    let mut members: Vec<(&str, &Value)> = params
        .iter()
        .filter(|(k, _)| parts.get(k.as_str()).is_none())
        .chain(parts.as_object().into_iter().flatten())
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    members.sort_unstable_by_key(|(k, _)| *k);
    let mut h = HashWriter::default();
    write_members(members.into_iter(), &mut h).map_err(|e| e.to_string())?;
    Ok(if h.hex() == digest {
        DigestCheck::Verified
    } else {
        DigestCheck::Mismatch
    })
}

/// The body as the client sends it: `model`, the messages (system-role messages
/// collapsed), `system` (after the billing block, when an entrypoint was recorded),
/// `tools`, then the other parameters in order. Returns whether the billing block was
/// built.
fn body(parts: Value, params: &Map<String, Value>, client: &Client) -> (Value, bool) {
    let Value::Object(mut parts) = parts else {
        unreachable!("built as an object")
    };
    let mut messages = parts.remove("messages").unwrap_or_default();
    collapse_system_messages(&mut messages);
    let mut system = match parts.remove("system") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    let billing = client
        .entrypoint
        .map(|e| billing_block(&messages, client, e));
    if let Some(b) = &billing {
        system.insert(0, b.clone());
    }
    let mut body = Map::new();
    body.insert(
        "model".into(),
        params.get("model").cloned().unwrap_or(Value::Null),
    );
    body.insert("messages".into(), messages);
    body.insert("system".into(), Value::Array(system));
    body.insert("tools".into(), parts.remove("tools").unwrap_or_default());
    for (k, v) in params {
        if k != "model" && k != "betas" {
            body.insert(k.clone(), v.clone());
        }
    }
    (Value::Object(body), billing.is_some())
}

/// `params.betas`, for the `anthropic-beta` header.
fn betas(params: &Map<String, Value>) -> Vec<String> {
    params
        .get("betas")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Set `cache_control` at `{path, value}`.
fn apply_cache_control(root: &mut Value, cc: &Value) -> Result<(), String> {
    let path = cc
        .get("path")
        .and_then(Value::as_array)
        .ok_or("cacheControl entry without a path")?;
    let mut node = &mut *root;
    for step in path {
        node = match step {
            Value::String(k) => node.get_mut(k.as_str()),
            Value::Number(n) => n.as_u64().and_then(|i| node.get_mut(i as usize)),
            _ => None,
        }
        .ok_or_else(|| {
            format!(
                "cacheControl path {} does not exist",
                Value::Array(path.clone())
            )
        })?;
    }
    let obj = node.as_object_mut().ok_or_else(|| {
        format!(
            "cacheControl path {} is not an object",
            Value::Array(path.clone())
        )
    })?;
    obj.insert(
        "cache_control".into(),
        cc.get("value").cloned().unwrap_or(Value::Null),
    );
    Ok(())
}

/// A `system`-role message whose content is one plain text block goes out as a string.
fn collapse_system_messages(messages: &mut Value) {
    for m in messages.as_array_mut().into_iter().flatten() {
        if m.get("role").and_then(Value::as_str) != Some("system") {
            continue;
        }
        let text = match m
            .get("content")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            Some([b])
                if b.as_object().is_some_and(|o| o.len() == 2)
                    && b.get("type").and_then(Value::as_str) == Some("text") =>
            {
                b.get("text").and_then(Value::as_str).map(str::to_string)
            }
            _ => None,
        };
        if let Some(t) = text {
            m["content"] = Value::String(t);
        }
    }
}

/// The first user text that is not a `<system-reminder>`.
fn first_user_text(messages: &Value) -> String {
    let first = messages.as_array().and_then(|a| {
        a.iter()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
    });
    match first.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .find(|t| !t.starts_with("<system-reminder>"))
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

fn billing_block(messages: &Value, client: &Client, entrypoint: &str) -> Value {
    let text: Vec<char> = first_user_text(messages).chars().collect();
    let picked: String = [4, 7, 20]
        .iter()
        .map(|&i| text.get(i).copied().unwrap_or('0'))
        .collect();
    let digest = Sha256::digest(format!("{BILLING_SALT}{picked}{}", client.version).as_bytes());
    let fp = &hex::encode(digest)[..3];
    let sub = if client.subagent {
        " cc_is_subagent=true;"
    } else {
        ""
    };
    serde_json::json!({
        "type": "text",
        "text": format!(
            "x-anthropic-billing-header: cc_version={}.{fp}; cc_entrypoint={entrypoint};{sub}",
            client.version
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn base_keep_tail_and_cache_control() {
        let mut r = Records::default();
        let shape = json!({"system": [{"type": "text", "text": "S"}], "tools": []});
        let sh = canonical_sha256(&shape);
        r.add_line(&json!({"type": "api-request-shape", "shapeHash": sh, "shape": shape}));
        let u = json!({"role": "user", "content": [{"type": "text", "text": "hello there, world wide"}]});
        let sys = json!({"role": "system", "content": [{"type": "text", "text": "env"}]});
        let a = json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}]});
        for m in [&u, &sys, &a] {
            r.add_message(m.clone());
        }
        let h = |m: &Value| canonical_sha256(m);
        let client = Client {
            version: "9.9.9",
            entrypoint: Some("cli"),
            subagent: false,
        };
        let first = json!({"type": "api-request", "id": "r1", "shapeHash": sh, "keep": 0,
            "params": {"model": "m", "betas": ["b1"], "max_tokens": 5},
            "tail": [h(&u), h(&sys)], "cacheControl": [{"path": ["system", 0], "value": {"type": "ephemeral"}}]});
        let one = r.rebuild(&first, &client).unwrap();
        assert_eq!(one.digest, DigestCheck::Absent);
        assert_eq!(one.betas, ["b1"]);
        assert_eq!(one.body["messages"][1]["content"], "env");
        assert_eq!(one.body["system"][1]["cache_control"]["type"], "ephemeral");
        let text = one.body["system"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("x-anthropic-billing-header: cc_version=9.9.9."),
            "{text}"
        );
        assert!(text.ends_with("cc_entrypoint=cli;"), "{text}");
        let second = json!({"type": "api-request", "id": "r2", "shapeHash": sh, "base": "r1", "keep": 1,
            "params": {"model": "m"}, "tail": [h(&a)], "cacheControl": []});
        let two = r.rebuild(&second, &client).unwrap();
        assert_eq!(two.body["messages"].as_array().unwrap().len(), 2);
        assert_eq!(two.body["messages"][1], a);
        let bad = json!({"type": "api-request", "id": "r3", "shapeHash": sh, "keep": 0, "tail": ["nope"]});
        assert!(r.rebuild(&bad, &client).unwrap_err().contains("nope"));
    }

    #[test]
    fn digest_covers_params_and_parts() {
        let mut r = Records::default();
        let shape = json!({"system": [], "tools": []});
        let sh = canonical_sha256(&shape);
        r.add_line(&json!({"type": "api-request-shape", "shapeHash": sh, "shape": shape}));
        let want =
            canonical_sha256(&json!({"model": "m", "system": [], "tools": [], "messages": []}));
        let rec = json!({"id": "r", "shapeHash": sh, "keep": 0, "tail": [], "params": {"model": "m"}, "requestDigest": want});
        let client = Client {
            version: "1",
            entrypoint: None,
            subagent: true,
        };
        let out = r.rebuild(&rec, &client).unwrap();
        assert_eq!(out.digest, DigestCheck::Verified);
        assert!(!out.billing);
    }
}
