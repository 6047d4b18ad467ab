//! `Body`: an HTTP body kept byte-exact, with its size and SHA-256.
//!
//! On disk a body is an object `{"size": N, "sha256": HEX, ...}` plus exactly one of:
//! `"json"` (the body itself, embedded verbatim when it is a single-line JSON document, so
//! `jq .request.body.json.model` works), `"text"` (valid UTF-8 as a JSON string) or
//! `"base64"` (anything else). Optional `"truncated": true` marks a body that was cut off
//! (client disconnect, size limit); `size` is then the number of bytes kept. Optional
//! `"redacted": true` marks a body whose secrets were replaced before writing.

use base64::Engine;
use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// An HTTP body as it crossed the wire (after de-chunking; content encodings are noted by
/// the source in `content_encoding` with the wire size in `wire_size`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Body {
    /// The bytes, exactly as received.
    pub bytes: Vec<u8>,
    /// True when the body ended early (client disconnect, size limit, capture gap).
    pub truncated: bool,
    /// The `Content-Encoding` that was removed to produce `bytes`, if any.
    pub content_encoding: Option<String>,
    /// Size in bytes on the wire before decoding, when a content encoding was removed.
    pub wire_size: Option<u64>,
    /// True when secrets were replaced inside the bytes before they were written (a raw
    /// request head kept for diagnosis, or `--redact-body`): size and digest describe the
    /// redacted bytes, not the wire bytes.
    pub redacted: bool,
    /// SHA-256 read from a trace file, kept to verify `bytes` against (`None` for new bodies).
    stored_sha256: Option<String>,
    /// XXH3-64 of the bytes when they were read from a trace's `"json"` member, which
    /// the reader already parsed as one JSON document ([`Body::is_known_json`]).
    checked_json: Option<u64>,
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body")
            .field("size", &self.bytes.len())
            .field("truncated", &self.truncated)
            .finish()
    }
}

impl Body {
    /// A complete body holding `bytes`.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Body {
            bytes: bytes.into(),
            ..Body::default()
        }
    }

    /// The same body with its `truncated` flag set to `truncated`.
    pub fn with_truncated(mut self, truncated: bool) -> Self {
        self.truncated = truncated;
        self
    }

    /// Size in bytes of the kept body.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the body has no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Lowercase hex SHA-256 of the bytes.
    pub fn sha256(&self) -> String {
        hex::encode(Sha256::digest(&self.bytes))
    }

    /// The body as UTF-8 text, if it is valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }

    /// For a body read from a trace: true when the stored SHA-256 matches the bytes (always
    /// true for a body that was not read from a file).
    pub fn verify(&self) -> bool {
        match &self.stored_sha256 {
            Some(d) => *d == self.sha256(),
            None => true,
        }
    }

    /// True when the bytes are still the ones read from a trace's `"json"` member: one
    /// valid JSON document in UTF-8, already checked while reading, so readers need not
    /// check again. Checked against a hash of the bytes, so a body changed since (e.g.
    /// redacted) is not trusted.
    pub fn is_known_json(&self) -> bool {
        self.checked_json == Some(xxhash_rust::xxh3::xxh3_64(&self.bytes))
    }

    /// Record that the bytes are one valid JSON document in UTF-8, which the caller has
    /// just checked (a bare request body recognised by parsing it): readers then skip
    /// their own check, as for a body read from `"json"` ([`Body::is_known_json`]).
    pub(crate) fn set_checked_json(&mut self) {
        self.checked_json = Some(xxhash_rust::xxh3::xxh3_64(&self.bytes));
    }

    /// The body's text `s` as a JSON value to embed verbatim, when it is one JSON document
    /// on one line (validated once, here).
    fn embeddable_json(s: &str) -> Option<&RawValue> {
        let first = s.as_bytes().first()?;
        let last = s.as_bytes().last()?;
        if !matches!(first, b'{' | b'[') || !matches!(last, b'}' | b']') {
            return None;
        }
        if memchr::memchr2(b'\n', b'\r', s.as_bytes()).is_some() {
            return None;
        }
        serde_json::from_str::<&RawValue>(s).ok()
    }
}

impl Serialize for Body {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        m.serialize_entry("size", &self.bytes.len())?;
        m.serialize_entry("sha256", &self.sha256())?;
        if self.truncated {
            m.serialize_entry("truncated", &true)?;
        }
        if let Some(ce) = &self.content_encoding {
            m.serialize_entry("content_encoding", ce)?;
        }
        if let Some(w) = self.wire_size {
            m.serialize_entry("wire_size", &w)?;
        }
        if self.redacted {
            m.serialize_entry("redacted", &true)?;
        }
        let text = self.as_str();
        if let Some(raw) = text.and_then(Body::embeddable_json) {
            m.serialize_entry("json", raw)?;
        } else if let Some(text) = text {
            m.serialize_entry("text", text)?;
        } else {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&self.bytes);
            m.serialize_entry("base64", &b64)?;
        }
        m.end()
    }
}

#[derive(Deserialize)]
struct BodyRepr<'a> {
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    content_encoding: Option<String>,
    #[serde(default)]
    wire_size: Option<u64>,
    #[serde(default)]
    redacted: bool,
    #[serde(default, borrow)]
    json: Option<&'a RawValue>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    base64: Option<String>,
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let r = BodyRepr::deserialize(de)?;
        let mut checked_json = None;
        let bytes = if let Some(raw) = r.json {
            let bytes = raw.get().as_bytes().to_vec();
            checked_json = Some(xxhash_rust::xxh3::xxh3_64(&bytes));
            bytes
        } else if let Some(t) = r.text {
            t.into_bytes()
        } else if let Some(b) = r.base64 {
            base64::engine::general_purpose::STANDARD
                .decode(b.as_bytes())
                .map_err(|e| de::Error::custom(format!("body base64: {e}")))?
        } else if let Some(n) = r.size.filter(|&n| n > 0) {
            // Said plainly, not as the digest mismatch the empty bytes would give.
            return Err(de::Error::custom(format!(
                "a body of {n} bytes holds none of \"json\", \"text\" or \"base64\" (a null member holds no body)"
            )));
        } else {
            Vec::new()
        };
        Ok(Body {
            bytes,
            truncated: r.truncated,
            content_encoding: r.content_encoding,
            wire_size: r.wire_size,
            redacted: r.redacted,
            stored_sha256: r.sha256,
            checked_json,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(bytes: &[u8]) -> (String, Body) {
        let line = serde_json::to_string(&Body::new(bytes.to_vec())).unwrap();
        let back: Body = serde_json::from_str(&line).unwrap();
        (line, back)
    }

    #[test]
    fn json_body_is_embedded_verbatim_and_round_trips() {
        // Odd spacing and escapes must survive: sizes are wire bytes.
        let body = br#"{"model":"m", "x":[1,2 ,3],"s":"a\u00e9\n"}"#;
        let (line, back) = round_trip(body);
        assert!(
            line.contains(r#""json":{"model":"m", "x":[1,2 ,3]"#),
            "{line}"
        );
        assert_eq!(back.bytes, body);
        assert!(back.verify());
    }

    #[test]
    fn multi_line_json_is_kept_as_text() {
        let body = b"{\n  \"a\": 1\n}";
        let (line, back) = round_trip(body);
        assert!(line.contains("\"text\""));
        assert_eq!(back.bytes, body);
    }

    #[test]
    fn non_utf8_is_base64() {
        let body = [0xff, 0xfe, b'{', 0x80];
        let (line, back) = round_trip(&body);
        assert!(line.contains("\"base64\":\"//57gA==\""), "{line}");
        assert_eq!(back.bytes, body);
    }

    #[test]
    fn digest_detects_tampering() {
        let line = serde_json::to_string(&Body::new(b"hello".to_vec())).unwrap();
        let tampered = line.replace("hello", "hellO");
        let back: Body = serde_json::from_str(&tampered).unwrap();
        assert!(!back.verify());
        // SHA-256("hello") from coreutils sha256sum.
        assert!(line.contains("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"));
    }

    /// Reported by an adversarial tester: `"json": null` (or no content member) read as
    /// an empty body, then as "does not match its stored sha256".
    #[test]
    fn a_null_json_member_is_named_not_read_as_a_digest_mismatch() {
        let line = serde_json::to_string(&Body::new(br#"{"a":1}"#.to_vec())).unwrap();
        let nulled = line.replace(r#""json":{"a":1}"#, r#""json":null"#);
        assert_ne!(nulled, line);
        let e = serde_json::from_str::<Body>(&nulled)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a body of 7 bytes holds none of"), "{e}");
        // An empty body needs no content member.
        let empty = serde_json::to_string(&Body::new(Vec::new())).unwrap();
        let bare = empty.replace(r#","text":"""#, "");
        assert_ne!(bare, empty);
        assert!(serde_json::from_str::<Body>(&bare).unwrap().verify());
    }
}
