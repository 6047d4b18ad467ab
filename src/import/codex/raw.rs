//! JSON objects edited without re-serializing their values: the members of an object as
//! their own text, so an item copied from a rollout line keeps every byte of what it
//! holds (numbers such as `create_time` included) when a member is left out.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The members of the JSON object `text` as (key, value text), in order; `None` when
/// `text` is not one JSON object.
pub(super) fn members(text: &str) -> Option<Vec<(String, &RawValue)>> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, &'de RawValue)>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                out.push((k, v));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let out = (&mut de).deserialize_map(Members).ok()?;
    de.end().ok()?;
    Some(out)
}

/// The member `key` of the JSON object `text`, as its text.
pub(super) fn member<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    members(text)?
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.get())
}

/// `text` (a JSON object) with each member rewritten by `edit`: `None` leaves the member
/// out, `Some(text)` keeps it with that value. The other members keep their bytes; the
/// object is written compactly. `None` when `text` is not an object.
pub(super) fn edit(
    text: &str,
    mut edit: impl FnMut(&str, &str) -> Option<String>,
) -> Option<String> {
    let ms = members(text)?;
    let mut out = String::with_capacity(text.len());
    out.push('{');
    for (k, v) in ms {
        let Some(value) = edit(&k, v.get()) else {
            continue;
        };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&quoted(&k));
        out.push(':');
        out.push_str(&value);
    }
    out.push('}');
    Some(out)
}

/// `text` without its member `key` (the text unchanged when it has none, or is no object).
pub(super) fn without(text: &str, key: &str) -> String {
    if member(text, key).is_none() {
        return text.to_string();
    }
    edit(text, |k, v| (k != key).then(|| v.to_string())).unwrap_or_else(|| text.to_string())
}

/// A string as JSON text.
pub(super) fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_left_out_keeps_the_others_bytes() {
        let t = r#"{"a":1.1460457000000001,"p":{"x":[1, 2]},"b":"\u00e9"}"#;
        assert_eq!(without(t, "p"), r#"{"a":1.1460457000000001,"b":"\u00e9"}"#);
        assert_eq!(without(t, "zz"), t);
        assert_eq!(member(t, "p"), Some(r#"{"x":[1, 2]}"#));
        assert_eq!(without("[1]", "a"), "[1]");
        assert!(members("{} x").is_none());
    }
}
