//! Canonical JSON: object keys sorted, no whitespace, non-ASCII written as UTF-8. Claude
//! Code's request records name messages and request shapes by the SHA-256 of this form
//! (checked against real transcripts of 2.1.303, 2.1.304 and 2.1.332 in the tests).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `v` as canonical JSON text: keys sorted by their UTF-8 bytes (code point order), no
/// insignificant whitespace, strings escaped as `JSON.stringify` does.
pub fn canonical_json(v: &Value) -> String {
    let mut out = Vec::new();
    write(v, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// Write the canonical JSON of `v` to `out` (no intermediate string).
pub fn write(v: &Value, out: &mut impl std::io::Write) -> std::io::Result<()> {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            write_members(keys.into_iter().map(|k| (k.as_str(), &m[k.as_str()])), out)
        }
        Value::Array(a) => {
            out.write_all(b"[")?;
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write(x, out)?;
            }
            out.write_all(b"]")
        }
        other => serde_json::to_writer(out, other).map_err(std::io::Error::other),
    }
}

/// Write an object of `members`, which must come sorted by key.
pub fn write_members<'a>(
    members: impl Iterator<Item = (&'a str, &'a Value)>,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    out.write_all(b"{")?;
    for (i, (k, v)) in members.enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, k).map_err(std::io::Error::other)?;
        out.write_all(b":")?;
        write(v, out)?;
    }
    out.write_all(b"}")
}

/// A SHA-256 that JSON can be written into.
#[derive(Default)]
pub struct HashWriter(Sha256);

impl std::io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl HashWriter {
    /// Lowercase hex digest of what was written.
    pub fn hex(self) -> String {
        hex::encode(self.0.finalize())
    }
}

/// Lowercase hex SHA-256 of the canonical JSON of `v`.
pub fn canonical_sha256(v: &Value) -> String {
    let mut h = HashWriter::default();
    write(v, &mut h).expect("hashing cannot fail");
    h.hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sorted_compact_utf8() {
        let v: Value =
            serde_json::from_str(r#"{"b": [1, {"z": "é\n", "a": null}], "a": true}"#).unwrap();
        assert_eq!(
            canonical_json(&v),
            "{\"a\":true,\"b\":[1,{\"a\":null,\"z\":\"é\\n\"}]}"
        );
    }

    #[test]
    fn digest_matches_python_sort_keys() {
        // python3 -c 'import json,hashlib; print(hashlib.sha256(json.dumps({"role":"user",
        //   "content":"hi"},separators=(",",":"),sort_keys=True,ensure_ascii=False)
        //   .encode()).hexdigest())'
        let v = serde_json::json!({"role": "user", "content": "hi"});
        assert_eq!(
            canonical_sha256(&v),
            "9017285104d1b249960a30732b8e92f6e2fb3acf8d8e4b2a16c116ad0c1ed211"
        );
    }
}
