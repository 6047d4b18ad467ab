//! The blob references of a claude-tap bundle, expanded with bounds: any value of a
//! record may be `{"__claude_tap_blob_ref__": {"hash": HASH}}`, replaced by the payload of
//! `blobs[HASH]`, which may itself hold references. A reference to a blob being expanded
//! (a cycle), references nested deeper than [`MAX_DEPTH`], or one record expanding past
//! [`crate::gzip::Bounds::expanded`] bytes of JSON is an error for that record (a 347-byte
//! self-reference once overflowed the stack; a 3 KB doubling chain took > 4 GB).
//!
//! Source: claude-tap 0.1.146 (`claude_tap/compact_trace.py`): a bundle's references are
//! one level deep (blob payloads are raw values); nesting is allowed here, bounded.

use std::collections::HashMap;
use std::io::Write;

use serde_json::Value;

use crate::gzip::{past_bound, EXPANDED_FLAG};

/// Key of a reference into the bundle's blob table.
pub const BLOB_REF: &str = "__claude_tap_blob_ref__";

/// Deepest chain of references inside references expanded.
pub const MAX_DEPTH: usize = 16;

/// Expands the references of one bundle's records.
pub struct Expander<'a> {
    blobs: &'a Value,
    /// Serialized size of each blob's payload as stored (its references unexpanded).
    sizes: HashMap<String, u64>,
    /// The bound, in bytes of JSON, per record.
    bound: u64,
}

/// Expansion of one record: the blobs being expanded and the bytes spent.
struct Walk {
    active: Vec<String>,
    spent: u64,
}

impl<'a> Expander<'a> {
    /// An expander of references into `blobs`, bounded by the process's expansion bound.
    pub fn new(blobs: &'a Value) -> Self {
        Expander {
            blobs,
            sizes: HashMap::new(),
            bound: crate::gzip::bounds().expanded,
        }
    }

    /// `v` with every reference replaced by its payload (an unknown hash by `null`).
    ///
    /// Errors, in words: a reference cycle (naming the hash), references nested deeper
    /// than [`MAX_DEPTH`], or more than the bound expanded (naming the flag).
    pub fn expand(&mut self, v: Value) -> Result<Value, String> {
        let mut walk = Walk {
            active: Vec::new(),
            spent: 0,
        };
        self.value(v, &mut walk)
    }

    fn value(&mut self, v: Value, walk: &mut Walk) -> Result<Value, String> {
        match v {
            Value::Object(o) => {
                if let Some(hash) = reference(&o) {
                    let hash = hash.to_string();
                    return self.blob(hash, walk);
                }
                let mut out = serde_json::Map::new();
                for (k, x) in o {
                    out.insert(k, self.value(x, walk)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(a) => a
                .into_iter()
                .map(|x| self.value(x, walk))
                .collect::<Result<_, _>>()
                .map(Value::Array),
            other => Ok(other),
        }
    }

    fn blob(&mut self, hash: String, walk: &mut Walk) -> Result<Value, String> {
        if walk.active.contains(&hash) {
            return Err(format!(
                "blob {hash:?} refers to itself (through {} references); a bundle's references cannot form a cycle",
                walk.active.len()
            ));
        }
        if walk.active.len() >= MAX_DEPTH {
            return Err(format!(
                "blob references nest deeper than {MAX_DEPTH} (at {hash:?}); claude-tap writes them one level deep"
            ));
        }
        let Some(payload) = self.blobs.get(&hash).and_then(|b| b.get("payload")) else {
            return Ok(Value::Null);
        };
        let size = *self
            .sizes
            .entry(hash.clone())
            .or_insert_with(|| json_size(payload));
        walk.spent = walk.spent.saturating_add(size);
        if walk.spent > self.bound {
            return Err(past_bound(
                "the record with its blob references expanded",
                self.bound,
                EXPANDED_FLAG,
            ));
        }
        let payload = payload.clone();
        walk.active.push(hash);
        let out = self.value(payload, walk);
        walk.active.pop();
        out
    }
}

/// The hash of a reference object (`{BLOB_REF: {"hash": HASH}}`, nothing else).
fn reference(o: &serde_json::Map<String, Value>) -> Option<&str> {
    if o.len() != 1 {
        return None;
    }
    o.get(BLOB_REF)?.get("hash")?.as_str()
}

/// Bytes of `v` serialized as compact JSON.
fn json_size(v: &Value) -> u64 {
    struct Count(u64);
    impl Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(hash: &str) -> Value {
        json!({BLOB_REF: {"hash": hash}})
    }

    #[test]
    fn a_self_reference_is_an_error_not_a_stack_overflow() {
        // Before: a 347-byte bundle with blob "a" = [ref a] aborted every reading command
        // ("thread 'main' has overflowed its stack").
        let blobs = json!({"a": {"payload": [r("a")]}});
        let e = Expander::new(&blobs)
            .expand(json!({"x": r("a")}))
            .unwrap_err();
        assert!(e.contains("\"a\" refers to itself"), "{e}");
    }

    #[test]
    fn a_doubling_chain_stops_at_the_bound_naming_the_flag() {
        // Before: 40 blobs each [ref k-1, ref k-1] (3 KB) expanded to 2^40 leaves: > 4 GB,
        // > 60 s. Now the record stops once the bound is spent (here 1 MB).
        let mut table = serde_json::Map::new();
        table.insert("b0".into(), json!({"payload": "x".repeat(100)}));
        for k in 1..40 {
            let prev = format!("b{}", k - 1);
            table.insert(format!("b{k}"), json!({"payload": [r(&prev), r(&prev)]}));
        }
        let blobs = Value::Object(table);
        // 15 levels: within the depth bound, so only the size bound can stop it
        let mut x = Expander::new(&blobs);
        x.bound = 1 << 20;
        let e = x.expand(r("b15")).unwrap_err();
        assert!(
            e.contains("1048576 bytes") && e.contains("--max-expanded"),
            "{e}"
        );
        let deep = x.expand(r("b39")).unwrap_err();
        assert!(deep.contains("deeper than 16"), "{deep}");
    }

    #[test]
    fn a_shared_blob_expands_everywhere_it_is_referenced() {
        let blobs = json!({"t": {"payload": [{"name": "Bash"}]}});
        let got = Expander::new(&blobs)
            .expand(json!({"a": r("t"), "b": [r("t")], "c": r("missing")}))
            .unwrap();
        assert_eq!(
            got,
            json!({"a": [{"name": "Bash"}], "b": [[{"name": "Bash"}]], "c": null})
        );
    }
}
