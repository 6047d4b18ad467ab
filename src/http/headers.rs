//! [`Headers`]: HTTP header fields in arrival order, names as received, with the lookups
//! every reader needs (first value, every value, a comma-separated list) written once.
//!
//! On disk (a trace's `headers`) it is what it wraps, `[["name","value"],...]`: the type
//! is serde-transparent, so the trace format does not depend on it.

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};

use super::fields;

/// Header fields in arrival order, names as received (a recorded trace keeps them
/// redacted: see `trace::redact`). Field names are compared ASCII case-insensitively
/// (RFC 9110 §5.1); values are kept as received.
///
/// Reads as a slice of `(name, value)` pairs (`iter`, `len`, `is_empty`, indexing);
/// [`push`](Headers::push) and [`retain`](Headers::retain) change it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    /// No fields.
    pub const fn new() -> Self {
        Headers(Vec::new())
    }

    /// The value of the first field named `name` (ASCII case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        header_value(&self.0, name)
    }

    /// The values of every field named `name` (ASCII case-insensitive), in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The elements of the list field `name` over all its field lines, lowercase, without
    /// parameters (see [`fields::list`]).
    pub fn list(&self, name: &str) -> Vec<String> {
        fields::list(&self.0, name)
    }

    /// Add a field at the end.
    pub fn push(&mut self, field: (String, String)) {
        self.0.push(field);
    }

    /// Keep only the fields for which `keep` is true, in order.
    pub fn retain(&mut self, keep: impl FnMut(&(String, String)) -> bool) {
        self.0.retain(keep);
    }

    /// The fields as pairs.
    pub fn into_vec(self) -> Vec<(String, String)> {
        self.0
    }
}

/// The value of the first field named `name` among `pairs` (ASCII case-insensitive): the
/// lookup behind [`Headers::get`], for pairs that are not a [`Headers`].
pub fn header_value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

impl Deref for Headers {
    type Target = [(String, String)];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Headers {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Vec<(String, String)>> for Headers {
    fn from(pairs: Vec<(String, String)>) -> Self {
        Headers(pairs)
    }
}

impl From<Headers> for Vec<(String, String)> {
    fn from(h: Headers) -> Self {
        h.0
    }
}

impl FromIterator<(String, String)> for Headers {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(iter: I) -> Self {
        Headers(iter.into_iter().collect())
    }
}

impl Extend<(String, String)> for Headers {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

impl IntoIterator for Headers {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = &'a (String, String);
    type IntoIter = std::slice::Iter<'a, (String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Headers {
    type Item = &'a mut (String, String);
    type IntoIter = std::slice::IterMut<'a, (String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl PartialEq<Vec<(String, String)>> for Headers {
    fn eq(&self, other: &Vec<(String, String)>) -> bool {
        &self.0 == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Headers {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn lookups_ignore_the_case_of_names_and_keep_values_as_received() {
        let h = h(&[
            ("Content-Type", "Text/Plain"),
            ("x-a", "1"),
            ("X-A", "2"),
            ("Connection", "Keep-Alive, X-A"),
        ]);
        assert_eq!(h.get("content-type"), Some("Text/Plain"));
        assert_eq!(h.get("x-missing"), None);
        assert_eq!(h.get_all("x-a").collect::<Vec<_>>(), ["1", "2"]);
        assert_eq!(h.list("connection"), ["keep-alive", "x-a"]);
        assert_eq!(header_value(&h, "X-a"), Some("1"));
    }

    #[test]
    fn serializes_as_the_pairs_it_holds() {
        let h = h(&[("a", "1"), ("B", "2")]);
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(json, r#"[["a","1"],["B","2"]]"#);
        let back: Headers = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn push_and_retain_keep_arrival_order() {
        let mut h = Headers::new();
        h.push(("a".into(), "1".into()));
        h.push(("b".into(), "2".into()));
        h.push(("c".into(), "3".into()));
        h.retain(|(k, _)| k != "b");
        assert_eq!(
            h.into_vec(),
            vec![("a".into(), "1".into()), ("c".into(), "3".into())]
        );
    }
}
