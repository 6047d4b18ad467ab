//! Byte spans in a JSON document: a small structural scanner that finds where each object
//! member and array item starts and ends, so every part of a request has a size in wire
//! bytes. It assumes the document is already known to be valid JSON (serde_json checks
//! that first) and only has to find boundaries.

use serde::{Deserialize, Serialize};

/// `bytes` as text: borrowed when they are UTF-8, else a copy with U+FFFD for each invalid
/// sequence (what `String::from_utf8_lossy` returns). Valid text is checked with
/// `str::from_utf8`, whose word-at-a-time ASCII path is several times faster than the byte
/// loop `from_utf8_lossy` runs even on valid input.
pub fn utf8_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A half-open byte range `[start, end)` in a body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// Offset of the first byte.
    pub start: usize,
    /// Offset one past the last byte.
    pub end: usize,
}

impl Span {
    /// Span `[start, end)`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }
    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    /// True for an empty span.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
    /// The bytes this span covers in `body`.
    pub fn slice<'a>(&self, body: &'a [u8]) -> &'a [u8] {
        &body[self.start..self.end]
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// End (exclusive) of the string starting at `i` (which must be `"`).
fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() {
        match memchr::memchr2(b'"', b'\\', &b[j..]) {
            Some(k) => {
                j += k;
                if b[j] == b'\\' {
                    j += 2;
                } else {
                    return j + 1;
                }
            }
            None => return b.len(),
        }
    }
    b.len().min(j)
}

/// End (exclusive) of the JSON value starting at `i` (no leading whitespace).
pub fn value_end(b: &[u8], i: usize) -> usize {
    if i >= b.len() {
        return i;
    }
    match b[i] {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            j
        }
    }
}

/// A member of a JSON object: its key (unescaped) and the span of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Span of the whole member, from the key's opening quote to the value's end.
    pub member: Span,
    /// Span of the value.
    pub value: Span,
}

/// The members of the object whose value spans `span` in `b`, in document order.
/// Returns an empty list if `span` is not an object.
pub fn object_members(b: &[u8], span: Span) -> Vec<Member> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, span.start);
    if i >= span.end || b[i] != b'{' {
        return out;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if i >= span.end || b[i] == b'}' {
            return out;
        }
        if b[i] == b',' {
            i += 1;
            continue;
        }
        if b[i] != b'"' {
            return out;
        }
        let kend = string_end(b, i);
        let key = serde_json::from_slice::<String>(&b[i..kend]).unwrap_or_default();
        let mut j = skip_ws(b, kend);
        if j < span.end && b[j] == b':' {
            j += 1;
        }
        j = skip_ws(b, j);
        let vend = value_end(b, j);
        out.push(Member {
            key,
            member: Span::new(i, vend),
            value: Span::new(j, vend),
        });
        i = vend;
    }
}

/// The value span of member `key` of the object at `span` (the first one with that key).
pub fn member(b: &[u8], span: Span, key: &str) -> Option<Span> {
    object_members(b, span)
        .into_iter()
        .find(|m| m.key == key)
        .map(|m| m.value)
}

/// The item spans of the array whose value spans `span` in `b`. Empty if not an array.
pub fn array_items(b: &[u8], span: Span) -> Vec<Span> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, span.start);
    if i >= span.end || b[i] != b'[' {
        return out;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if i >= span.end || b[i] == b']' {
            return out;
        }
        if b[i] == b',' {
            i += 1;
            continue;
        }
        let end = value_end(b, i);
        out.push(Span::new(i, end));
        i = end;
    }
}

/// Span of the whole document (trimmed of surrounding whitespace).
pub fn document(b: &[u8]) -> Span {
    let start = skip_ws(b, 0);
    Span::new(start, value_end(b, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_lossy_borrows_valid_text_and_replaces_invalid_bytes_as_std_does() {
        let valid = "tools: [\"Bash\", \"Grep\"] — ok".as_bytes();
        assert!(
            matches!(utf8_lossy(valid), std::borrow::Cow::Borrowed(s) if s.as_bytes() == valid)
        );
        let invalid = b"ab\xff\xfecd\xe2\x82";
        assert_eq!(utf8_lossy(invalid), "ab\u{fffd}\u{fffd}cd\u{fffd}");
        assert_eq!(utf8_lossy(invalid), String::from_utf8_lossy(invalid));
    }

    #[test]
    fn members_and_items_have_exact_spans() {
        let b = br#" { "a" : [1, "x\"]y", {"k":[]}] , "b\u0041":null } "#;
        let doc = document(b);
        assert_eq!(doc.slice(b), &b[1..b.len() - 1]);
        let m = object_members(b, doc);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].key, "a");
        assert_eq!(m[0].value.slice(b), br#"[1, "x\"]y", {"k":[]}]"#);
        assert_eq!(m[1].key, "bA");
        assert_eq!(m[1].value.slice(b), b"null");
        let items = array_items(b, m[0].value);
        let got: Vec<&[u8]> = items.iter().map(|s| s.slice(b)).collect();
        assert_eq!(got, vec![&b"1"[..], br#""x\"]y""#, br#"{"k":[]}"#]);
    }

    #[test]
    fn escaped_backslash_before_quote() {
        let b = br#"{"s":"a\\","t":1}"#;
        let m = object_members(b, document(b));
        assert_eq!(m[0].value.slice(b), br#""a\\""#);
        assert_eq!(m[1].key, "t");
    }
}
