//! One turn's detail, loaded on demand: the exchange read back from the trace by its
//! byte range (or from memory), its request items by role and kind, the system prompt
//! and tool definitions with their byte sizes, the response as assembled, usage and how
//! `analyze` billed it, "what this request added" (the items appended since the previous
//! request of its thread) and, for a miss, what changed before the cache breakpoint.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::api::view::{exchange_response, parse};
use crate::api::{Block, BlockKind, MessagesRequest, ResponseBody};
use crate::trace::{Exchange, Record, TraceReader};

use super::model::{BodyRef, Model};
use super::ViewerError;

/// Largest exchange line read back for its detail: 64 MiB (a bigger one is marked, so the
/// server's memory stays bounded).
pub const MAX_DETAIL_BYTES: u64 = 64 << 20;

/// The exchange of turn `n`, read back.
///
/// Errors: no such turn, the file cannot be read, the line is larger than
/// [`MAX_DETAIL_BYTES`], or it no longer reads as an exchange (the file changed).
pub fn load(m: &Model, n: usize) -> Result<Arc<Exchange>, ViewerError> {
    let extra = m.extra.get(n).ok_or(ViewerError::NoTurn(n))?;
    let (offset, len) = match &extra.body {
        BodyRef::Held(x) => return Ok(x.clone()),
        BodyRef::At { offset, len } => (*offset, *len),
    };
    if len > MAX_DETAIL_BYTES {
        return Err(ViewerError::TooLarge {
            turn: n,
            bytes: len,
        });
    }
    let path = m.file.as_deref().unwrap_or(&m.input);
    let open = |e| ViewerError::Open {
        path: path.display().to_string(),
        source: e,
    };
    let mut f = std::fs::File::open(path).map_err(open)?;
    f.seek(SeekFrom::Start(offset)).map_err(open)?;
    let mut buf = Vec::with_capacity(len as usize);
    f.take(len).read_to_end(&mut buf).map_err(open)?;
    match TraceReader::new(std::io::Cursor::new(buf), path).next() {
        Some(Ok(Record::Exchange(x))) => Ok(Arc::from(x)),
        Some(Ok(Record::Bad(p))) => Err(ViewerError::Unreadable {
            turn: n,
            why: p.message,
        }),
        _ => Err(ViewerError::Unreadable {
            turn: n,
            why: "the line is no longer an exchange (the file changed?)".into(),
        }),
    }
}

/// The detail of turn `n` as the page reads it (strings not yet redacted: the server
/// redacts every string it sends).
///
/// Errors: as [`load`].
pub fn detail(m: &Model, n: usize) -> Result<Value, ViewerError> {
    let x = load(m, n)?;
    let parsed = parse(&x);
    let req = parsed.request.as_ref().map(|c| (&c.req, c.body(&x)));
    let prev = m.extra[n].prev_in_thread;
    let prev_x = prev.and_then(|p| load(m, p).ok());
    let prev_parsed = prev_x.as_ref().map(|p| parse(p));
    let prev_req = prev_parsed
        .as_ref()
        .zip(prev_x.as_ref())
        .and_then(|(pp, px)| pp.request.as_ref().map(|c| (&c.req, c.body(px))));
    let billing = m.analysis.as_ref().and_then(|a| {
        let key = &m.extra[n].file_key;
        a.requests
            .iter()
            .find(|r| &r.file == key && r.exchange == x.id)
            .map(|r| serde_json::to_value(r).unwrap_or(Value::Null))
    });
    let mut out = json!({
        "row": m.turns[n],
        "request": req.map(|(r, b)| request_json(r, b)),
        "request_error": parsed.error.as_ref().map(|e| e.to_string()),
        "response": response_json(&x),
        "billing": billing,
        "headers": x.request.headers,
        "curl": curl(&x),
        "body_json": body_text(&x),
    });
    if let Some((r, b)) = req {
        let start = prev_req.map_or(0, |(p, pb)| common_prefix(p, pb, r, b));
        let items: Vec<Value> = r.messages[start..]
            .iter()
            .enumerate()
            .flat_map(|(i, msg)| message_items(start + i, &msg.role, &msg.content, b))
            .collect();
        out["added"] = json!({"previous": prev, "from_message": start, "items": items});
        if m.turns[n].cause.is_some() {
            out["cache_change"] = json!(cache_change(prev_req, r, b, m.turns[n].cause.clone()));
        }
    }
    Ok(out)
}

/// Messages the two requests share from the start: the same bytes, or the same JSON once
/// `cache_control` markers are dropped and string contents read as their text block
/// (clients move the breakpoint to the newest message and re-send a message in the other
/// form; neither makes it new).
fn common_prefix(p: &MessagesRequest, pb: &[u8], r: &MessagesRequest, b: &[u8]) -> usize {
    p.messages
        .iter()
        .zip(&r.messages)
        .take_while(|(a, c)| {
            let (x, y) = (a.span.slice(pb), c.span.slice(b));
            x == y || without_markers(x).is_some_and(|v| Some(v) == without_markers(y))
        })
        .count()
}

/// A message's JSON without its `cache_control` members, a plain string `content` as the
/// one text block it means (`None`: not JSON).
fn without_markers(bytes: &[u8]) -> Option<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                o.remove("cache_control");
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_slice(bytes).ok()?;
    strip(&mut v);
    if let Some(c) = v.get_mut("content").filter(|c| c.is_string()) {
        *c = json!([{"type": "text", "text": c.take()}]);
    }
    Some(v)
}

/// What changed before the cache breakpoint, compared with the previous request of the
/// thread: the system prompt, the tool list, the first message that differs.
fn cache_change(
    prev: Option<(&MessagesRequest, &[u8])>,
    r: &MessagesRequest,
    b: &[u8],
    cause: Option<String>,
) -> Value {
    let Some((p, pb)) = prev else {
        return json!({"cause": cause, "changes": ["no earlier request in this thread"]});
    };
    let mut changes = Vec::new();
    let sys = |q: &MessagesRequest, qb: &[u8]| q.system.as_ref().map(|s| s.span.slice(qb).to_vec());
    if sys(p, pb) != sys(r, b) {
        changes.push(format!(
            "system prompt changed ({} → {} bytes)",
            p.system_bytes(),
            r.system_bytes()
        ));
    }
    let (pn, rn) = (p.tool_names(), r.tool_names());
    let added: Vec<&&str> = rn.iter().filter(|t| !pn.contains(t)).collect();
    let removed: Vec<&&str> = pn.iter().filter(|t| !rn.contains(t)).collect();
    if !added.is_empty() || !removed.is_empty() {
        changes.push(format!("tools added {added:?}, removed {removed:?}"));
    } else if p.tools_bytes() != r.tools_bytes() {
        changes.push(format!(
            "tool definitions changed ({} → {} bytes)",
            p.tools_bytes(),
            r.tools_bytes()
        ));
    }
    let common = common_prefix(p, pb, r, b);
    if common < p.messages.len() {
        changes.push(format!(
            "message {common} differs from the previous request's (history rewritten)"
        ));
    }
    if changes.is_empty() {
        changes
            .push("nothing before the breakpoint changed (time to live, or another cause)".into());
    }
    json!({"cause": cause, "changes": changes})
}

/// The request as the page renders it.
fn request_json(r: &MessagesRequest, b: &[u8]) -> Value {
    let system = r.system.as_ref().map(|s| {
        let blocks: Vec<Value> = s
            .blocks
            .iter()
            .map(|blk| json!({"bytes": blk.span.len(), "text": blk.text().unwrap_or("")}))
            .collect();
        json!({"bytes": s.bytes(), "blocks": blocks})
    });
    let tools: Vec<Value> = r
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.qualified_name(),
                "bytes": t.span.len(),
                "description": t.description,
                "schema": t.input_schema(b).map(|s| pretty(&s)),
            })
        })
        .collect();
    let items: Vec<Value> = r
        .messages
        .iter()
        .enumerate()
        .flat_map(|(i, msg)| message_items(i, &msg.role, &msg.content, b))
        .collect();
    let params: serde_json::Map<String, Value> = r
        .params
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    json!({
        "dialect": format!("{:?}", r.dialect),
        "model": r.model,
        "bytes": r.body_bytes,
        "system": system,
        "tools": {"bytes": r.tools_bytes(), "list": tools},
        "messages": r.messages.len(),
        "items": items,
        "params": params,
    })
}

/// One item per content block of a message.
fn message_items(i: usize, role: &str, blocks: &[Block], b: &[u8]) -> Vec<Value> {
    blocks
        .iter()
        .map(|blk| block_json(Some(i), role, blk, b))
        .collect()
}

/// A block as an item: its role, kind and what the kind shows.
fn block_json(message: Option<usize>, role: &str, blk: &Block, b: &[u8]) -> Value {
    let mut v = json!({"message": message, "role": role, "kind": blk.block_type(), "bytes": blk.span.len()});
    match &blk.kind {
        BlockKind::Text { text } => v["text"] = json!(text),
        BlockKind::Thinking { thinking, .. } => v["text"] = json!(thinking),
        BlockKind::ToolUse { id, name, input } | BlockKind::ServerToolUse { id, name, input } => {
            v["id"] = json!(id);
            v["name"] = json!(name);
            v["input"] = json!(pretty(input));
        }
        BlockKind::ToolResult {
            tool_use_id,
            is_error,
            text,
            images,
            ..
        } => {
            v["id"] = json!(tool_use_id);
            v["is_error"] = json!(is_error);
            v["text"] = json!(text);
            v["images"] = json!(images);
        }
        BlockKind::Image { media_type } => v["media_type"] = json!(media_type),
        BlockKind::Document { title } => v["text"] = json!(title),
        BlockKind::ToolReference { tool_name } => v["name"] = json!(tool_name),
        BlockKind::RedactedThinking => {}
        BlockKind::Other { raw, .. } => {
            let _ = b;
            v["text"] = json!(pretty(raw));
        }
    }
    v
}

/// The response as the stream assembled it.
fn response_json(x: &Exchange) -> Value {
    let status = x.response.as_ref().and_then(|r| r.known_status());
    match exchange_response(x) {
        Some(ResponseBody::Message(m)) => {
            let blocks: Vec<Value> = m
                .content
                .iter()
                .map(|blk| block_json(None, "assistant", blk, &[]))
                .collect();
            json!({
                "status": status,
                "stop": m.stop_reason,
                "complete": m.complete,
                "items": blocks,
                "usage": {
                    "input_tokens": m.usage.input_tokens,
                    "cache_read_input_tokens": m.usage.cache_read_input_tokens,
                    "cache_creation_input_tokens": m.usage.cache_creation_input_tokens,
                    "output_tokens": m.usage.output_tokens,
                },
                "problems": m.stream_problems,
            })
        }
        Some(ResponseBody::Error {
            error_type,
            message,
        }) => {
            json!({"status": status, "error": {"type": error_type, "message": message}})
        }
        Some(ResponseBody::Undecodable { reason }) => {
            json!({"status": status, "problems": [reason]})
        }
        Some(ResponseBody::Other) => json!({
            "status": status,
            "text": x.response.as_ref().map(|r| String::from_utf8_lossy(&r.body.bytes[..r.body.len().min(65536)]).into_owned()),
        }),
        None => {
            json!({"status": status, "error": x.error.as_ref().map(|e| json!({"type": e.kind, "message": e.message}))})
        }
    }
}

/// Pretty JSON text of a value.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// The request body as text: pretty JSON when it is JSON (up to 4 MiB).
fn body_text(x: &Exchange) -> Option<String> {
    let body = crate::api::request_body(&x.request).bytes;
    if body.len() > 4 << 20 {
        return None;
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(v) => Some(pretty(&v)),
        Err(_) => Some(String::from_utf8_lossy(&body).into_owned()),
    }
}

/// The request as a `curl` command line (headers as recorded, secrets already redacted
/// by the trace writer; the server redacts again).
fn curl(x: &Exchange) -> Option<String> {
    if !x.request.captured() {
        return None;
    }
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let host = x.request.headers.get("host").unwrap_or("api.anthropic.com");
    let target = crate::trace::origin_form(&x.request.target);
    let mut out = format!(
        "curl -X {} {}",
        x.request.method,
        q(&format!("https://{host}{target}"))
    );
    for (k, v) in x.request.headers.iter() {
        if !k.eq_ignore_ascii_case("host") && !k.eq_ignore_ascii_case("content-length") {
            out.push_str(&format!(" \\\n  -H {}", q(&format!("{k}: {v}"))));
        }
    }
    let body = crate::api::request_body(&x.request).bytes;
    if !body.is_empty() && body.len() <= 4 << 20 {
        out.push_str(&format!(
            " \\\n  --data-binary {}",
            q(&String::from_utf8_lossy(&body))
        ));
    }
    Some(out)
}
