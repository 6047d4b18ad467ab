//! `--redact-body`: Anthropic-key-shaped strings replaced inside request and response
//! bodies, in the three spellings a body can carry them:
//!
//! 1. as bytes (`sk-ant-…`, also with `\u002d` dashes): [`super::redact::body_keys`];
//! 2. inside a JSON string written with escapes (`"\u0073k-ant-…"`, `\/`, any `\uXXXX`):
//!    each string token holding a backslash is decoded, and re-encoded with the key
//!    replaced when the decoded text holds one (the other bytes stay as they were);
//! 3. split across the events of a stream (`text_delta` events of Anthropic, the deltas
//!    of the OpenAI and Gemini streams): the string fields of the `data:` events are
//!    assembled per field and per block (`index`, `output_index`, `content_index`), a
//!    key found in the assembled text is replaced by its marker in the event where it
//!    starts and removed from the events that continue it, so the assembled text reads
//!    the marker where the key was. Only the events changed are re-serialized.
//!
//! Bound: a body is scanned once per pass; pass 3 parses each `data:` event once.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;

use serde_json::Value;

use super::redact::{body_keys, marker, BODY_KEY};

/// The body with every key replaced in all three spellings, and the number of keys
/// replaced (0: the body is returned as it was).
pub fn redact_body_keys(body: &[u8]) -> (Cow<'_, [u8]>, usize) {
    let (pass1, n1) = body_keys(body);
    let (pass2, n2) = match escaped_strings(&pass1) {
        Some((b, n)) => (Cow::Owned(b), n),
        None => (pass1, 0),
    };
    let (pass3, n3) = match stream_deltas(&pass2) {
        Some((b, n)) => (Cow::Owned(b), n),
        None => (pass2, 0),
    };
    (pass3, n1 + n2 + n3)
}

/// Pass 2: JSON string tokens written with escapes that decode to a key.
fn escaped_strings(body: &[u8]) -> Option<(Vec<u8>, usize)> {
    memchr::memchr(b'\\', body)?;
    let (mut out, mut last, mut n, mut i) = (Vec::new(), 0, 0, 0);
    while let Some(q) = memchr::memchr(b'"', &body[i..]) {
        let start = i + q;
        let (mut j, mut escaped) = (start + 1, false);
        while j < body.len() && !matches!(body[j], b'"' | b'\n') {
            if body[j] == b'\\' {
                escaped = true;
                j += 1;
            }
            j += 1;
        }
        if j >= body.len() {
            break;
        }
        if body[j] == b'\n' {
            i = j + 1; // not a string token on this line: start again on the next
            continue;
        }
        let token = &body[start..=j];
        if escaped {
            if let Ok(s) = serde_json::from_slice::<String>(token) {
                let (r, k) = body_keys(s.as_bytes());
                if k > 0 {
                    out.extend_from_slice(&body[last..start]);
                    let text = String::from_utf8_lossy(&r);
                    out.extend(serde_json::to_vec(text.as_ref()).unwrap_or_default());
                    last = j + 1;
                    n += k;
                }
            }
        }
        i = j + 1;
    }
    if n == 0 {
        return None;
    }
    out.extend_from_slice(&body[last..]);
    Some((out, n))
}

/// One string field of one event: the event, where the string sits in it, its text.
struct Piece {
    event: usize,
    pointer: String,
    text: String,
}

/// Pass 3: keys split across the events of a stream.
fn stream_deltas(body: &[u8]) -> Option<(Vec<u8>, usize)> {
    if !(body.starts_with(b"data:")
        || body.starts_with(b"event:")
        || memchr::memmem::find(body, b"\ndata:").is_some())
    {
        return None;
    }
    let mut events: Vec<(Range<usize>, Value)> = Vec::new();
    let mut pos = 0;
    for line in body.split_inclusive(|&b| b == b'\n') {
        let start = pos;
        pos += line.len();
        let l = line.strip_suffix(b"\n").unwrap_or(line);
        let l = l.strip_suffix(b"\r").unwrap_or(l);
        let Some(rest) = l.strip_prefix(b"data:") else {
            continue;
        };
        let skip = 5 + usize::from(rest.first() == Some(&b' '));
        if let Ok(v) = serde_json::from_slice::<Value>(&l[skip..]) {
            events.push((start + skip..start + l.len(), v));
        }
    }
    let mut groups: BTreeMap<String, Vec<Piece>> = BTreeMap::new();
    for (i, (_, v)) in events.iter().enumerate() {
        let block = ["index", "output_index", "content_index"]
            .map(|k| v.get(k).map(|x| x.to_string()).unwrap_or_default())
            .join(",");
        leaves(v, &mut String::new(), &mut |pointer, text| {
            groups
                .entry(format!("{block}|{pointer}"))
                .or_default()
                .push(Piece {
                    event: i,
                    pointer: pointer.to_string(),
                    text: text.to_string(),
                });
        });
    }
    let mut n = 0;
    let mut dirty = vec![false; events.len()];
    for pieces in groups.values_mut().filter(|p| p.len() > 1) {
        let found = split_keys(pieces);
        n += found;
        if found == 0 {
            continue;
        }
        for p in pieces.iter() {
            let v = &mut events[p.event].1;
            if let Some(slot) = v.pointer_mut(&p.pointer) {
                if slot.as_str() != Some(p.text.as_str()) {
                    *slot = Value::String(p.text.clone());
                    dirty[p.event] = true;
                }
            }
        }
    }
    if n == 0 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut last = 0;
    for ((range, v), d) in events.iter().zip(&dirty) {
        if *d {
            out.extend_from_slice(&body[last..range.start]);
            out.extend(serde_json::to_vec(v).unwrap_or_default());
            last = range.end;
        }
    }
    out.extend_from_slice(&body[last..]);
    Some((out, n))
}

/// Every string leaf of `v` with its JSON pointer.
fn leaves(v: &Value, pointer: &mut String, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => f(pointer, s),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let len = pointer.len();
                pointer.push_str(&format!("/{i}"));
                leaves(x, pointer, f);
                pointer.truncate(len);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&k.replace('~', "~0").replace('/', "~1"));
                leaves(x, pointer, f);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// Replace every key that spans two or more of `pieces` (in order): its marker goes
/// where it starts, the rest of it is cut from the pieces that continue it. Returns how
/// many keys were replaced.
fn split_keys(pieces: &mut [Piece]) -> usize {
    let whole: String = pieces.iter().map(|p| p.text.as_str()).collect();
    let mut starts = Vec::with_capacity(pieces.len());
    let mut at = 0;
    for p in pieces.iter() {
        starts.push(at);
        at += p.text.len();
    }
    // (piece, local range cut, marker inserted there)
    let mut edits: Vec<(usize, Range<usize>, Option<String>)> = Vec::new();
    let mut n = 0;
    for m in BODY_KEY.find_iter(whole.as_bytes()) {
        let (a, b) = (m.start(), m.end());
        let first = starts.partition_point(|&s| s <= a) - 1;
        let last = starts.partition_point(|&s| s < b) - 1;
        if first == last {
            continue; // within one field: passes 1 and 2 saw it
        }
        n += 1;
        let key = String::from_utf8_lossy(m.as_bytes()).into_owned();
        for (i, &s) in starts.iter().enumerate().take(last + 1).skip(first) {
            let e = s + pieces[i].text.len();
            let cut = a.max(s) - s..b.min(e) - s;
            edits.push((i, cut, (i == first).then(|| marker(&key))));
        }
    }
    for (i, cut, mark) in edits.into_iter().rev() {
        pieces[i]
            .text
            .replace_range(cut, mark.as_deref().unwrap_or(""));
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx";

    fn text(b: &[u8]) -> String {
        String::from_utf8_lossy(b).into_owned()
    }

    /// What broke: `--redact-body` kept a key written `\u0073k-ant-…` in a JSON string.
    #[test]
    fn redact_body_misses_a_json_escaped_key() {
        let escaped = KEY.replacen('s', "\\u0073", 1).replace('A', "\\u0041");
        let body = format!(r#"{{"a":"x","b":"see {escaped} \/ok","c":"k\"q"}}"#);
        let (out, n) = redact_body_keys(body.as_bytes());
        assert_eq!(n, 1);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["b"].as_str().unwrap(), format!("see {} /ok", marker(KEY)));
        assert_eq!(
            (v["a"].as_str(), v["c"].as_str()),
            (Some("x"), Some("k\"q"))
        );
        assert!(!text(&out).contains("AbCdEfGh"));
    }

    /// What broke: a key streamed in three `text_delta` events came back when the deltas
    /// were concatenated.
    #[test]
    fn redact_body_misses_a_key_split_across_text_deltas() {
        let (a, rest) = KEY.split_at(5);
        let (b, c) = rest.split_at(12);
        let ev = |i: u32, t: &str| {
            format!(
                "event: content_block_delta\ndata: {}\n\n",
                serde_json::json!({"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":t}})
            )
        };
        let body = [
            ev(0, &format!("key: {a}")),
            ev(1, "other block"),
            ev(0, b),
            ev(0, &format!("{c} done")),
        ]
        .concat();
        let (out, n) = redact_body_keys(body.as_bytes());
        assert_eq!(n, 1);
        let assembled: String = text(&out)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str::<Value>(d).unwrap())
            .filter(|v| v["index"] == 0)
            .map(|v| v["delta"]["text"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(assembled, format!("key: {} done", marker(KEY)));
        assert!(text(&out).contains("other block"));
        // the events kept their framing
        assert_eq!(
            text(&out).matches("event: content_block_delta\n").count(),
            4
        );
    }

    #[test]
    fn a_body_without_keys_is_returned_as_it_was() {
        let body = b"data: {\"delta\":{\"text\":\"sk-\"}}\n\ndata: {\"delta\":{\"text\":\"and more\"}}\n\n";
        let (out, n) = redact_body_keys(body);
        assert_eq!(n, 0);
        assert!(matches!(out, Cow::Borrowed(_)));
    }
}
