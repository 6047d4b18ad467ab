//! The text of a JSON document as normalization compares it: one token per line, strings
//! decoded. Rules written for text (`[^\s]+` for a path, `(?m)^…` for a line) then stop
//! where the string stops, instead of running on over a `\n` escape (two characters in JSON
//! text), a closing quote or the next member; and two definitions that differ only in
//! layout (indentation, member order, `\u0020` for a space) read the same.
//!
//! Each token is a line that starts with a marker: `{` `}` `[` `]` for structure, `.` and
//! the key for an object member (members sorted by key), `"` and the text for a string,
//! `=` and the literal for a number, `true`, `false` or `null`. A newline inside a key or a
//! string continues on a line that starts with a tab, so no string can pass for structure.

use serde_json::Value;

/// The text view of JSON `bytes` (see the module doc); the bytes themselves, read as
/// UTF-8, when they are not JSON (`serde_json` refuses numbers such as `1e400` and nesting
/// deeper than 128 levels: such a document is compared as written).
pub fn text_view(bytes: &[u8]) -> String {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => value_view(&v),
        Err(_) => crate::api::span::utf8_lossy(bytes).into_owned(),
    }
}

/// The text view of a parsed JSON value (see the module doc).
pub fn value_view(v: &Value) -> String {
    let mut out = String::new();
    emit(v, &mut out);
    out
}

fn line(marker: char, text: &str, out: &mut String) {
    out.push(marker);
    for (k, part) in text.split('\n').enumerate() {
        if k > 0 {
            out.push_str("\n\t");
        }
        out.push_str(part);
    }
    out.push('\n');
}

fn emit(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            out.push_str("{\n");
            let mut members: Vec<(&String, &Value)> = o.iter().collect();
            members.sort_unstable_by(|x, y| x.0.cmp(y.0));
            for (k, v) in members {
                line('.', k, out);
                emit(v, out);
            }
            out.push_str("}\n");
        }
        Value::Array(a) => {
            out.push_str("[\n");
            for x in a {
                emit(x, out);
            }
            out.push_str("]\n");
        }
        Value::String(s) => line('"', s, out),
        other => line('=', &other.to_string(), out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_decoded_one_per_line_and_layout_is_dropped() {
        let compact =
            br#"{"name":"Bash","description":"Scratch dir /tmp/x\nAlways delete.","n":1}"#;
        let pretty = b"{\n  \"n\" : 1,\n  \"description\": \"Scratch dir /tmp/x\\nAlways delete.\",\n  \"name\": \"B\\u0061sh\"\n}";
        assert_eq!(text_view(compact), text_view(pretty));
        assert_eq!(
            text_view(compact),
            "{\n.description\n\"Scratch dir /tmp/x\n\tAlways delete.\n.n\n=1\n.name\n\"Bash\n}\n"
        );
    }

    #[test]
    fn no_string_passes_for_structure_or_for_two_strings() {
        let one = br#"["a\n\"b"]"#;
        let two = br#"["a","b"]"#;
        assert_ne!(text_view(one), text_view(two));
        let nested = br#"{"k":"}\n{"}"#;
        let empty = br#"{"k":""}"#;
        assert_ne!(text_view(nested), text_view(empty));
        assert_ne!(text_view(br#"["1"]"#), text_view(b"[1]"));
    }

    #[test]
    fn what_is_not_json_is_compared_as_written() {
        assert_eq!(text_view(b"[1e400]"), "[1e400]");
    }
}
