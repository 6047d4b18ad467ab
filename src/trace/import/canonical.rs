//! Canonical JSON: object keys sorted, no whitespace, non-ASCII written as UTF-8. Claude
//! Code's request records name messages and request shapes by the SHA-256 of this form
//! (checked against real transcripts of 2.1.303, 2.1.304 and 2.1.332 in the tests).

use serde_json::Value;

/// `v` as canonical JSON text: keys sorted by their UTF-8 bytes (code point order), no
/// insignificant whitespace, strings escaped as `JSON.stringify` does.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Lowercase hex SHA-256 of the canonical JSON of `v`.
pub fn canonical_sha256(v: &Value) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(canonical_json(v).as_bytes()))
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
