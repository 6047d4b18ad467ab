//! The `anthropic-beta` header as what it means: a *set* of beta feature names.
//!
//! Source: Anthropic API reference, "Beta headers": the header carries comma-separated
//! names; RFC 9110 §5.3 lets a list-valued field be sent as several field lines, which
//! mean the same as one line joined with commas. So `a,b`, `b, a` and two lines `a` / `b`
//! are one set. A request recorded without any header lines (a bare body) has an
//! *unknown* set: nothing can be said to be added or removed.

use std::collections::BTreeSet;

use serde::Serialize;

/// Header that carries beta names.
pub const BETA_HEADER: &str = "anthropic-beta";
/// OpenAI's beta header (`responses_websockets=2026-02-06` on the Responses WebSocket).
pub const OPENAI_BETA_HEADER: &str = "openai-beta";
/// Codex's feature-flag header (`remote_compaction_v2`, measured on Codex 0.171.0).
pub const CODEX_BETA_HEADER: &str = "x-codex-beta-features";

/// The header fields that carry beta names in requests of `dialect`, lowercase: Messages
/// `anthropic-beta`; the OpenAI dialects `openai-beta` and Codex's
/// `x-codex-beta-features`; Gemini none (the Gemini API has no beta header).
pub fn fields_of(dialect: crate::api::Dialect) -> &'static [&'static str] {
    use crate::api::Dialect as D;
    match dialect {
        D::Messages => &[BETA_HEADER],
        D::Responses | D::ChatCompletions => &[OPENAI_BETA_HEADER, CODEX_BETA_HEADER],
        D::Gemini => &[],
    }
}

/// The beta names of one request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BetaSet {
    /// False when the request's headers were not recorded (a bare body): the set is
    /// unknown, not empty.
    pub known: bool,
    /// Names in order of first appearance, without duplicates or surrounding spaces.
    pub names: Vec<String>,
}

impl BetaSet {
    /// The set a request's header lines carry. An empty header list means the headers
    /// were not recorded (every HTTP/1.1 request has at least `Host`): the set is unknown.
    pub fn from_headers(headers: &[(String, String)]) -> BetaSet {
        Self::from_fields(headers, &[BETA_HEADER])
    }

    /// The set the beta headers of `dialect` carry: Messages `anthropic-beta`; the OpenAI
    /// dialects `openai-beta` (the Responses WebSocket's `responses_websockets=…`) and
    /// Codex's `x-codex-beta-features`; Gemini none.
    pub fn from_headers_of(dialect: crate::api::Dialect, headers: &[(String, String)]) -> BetaSet {
        Self::from_fields(headers, fields_of(dialect))
    }

    /// The names in the header fields called one of `fields`.
    fn from_fields(headers: &[(String, String)], fields: &[&str]) -> BetaSet {
        if headers.is_empty() {
            return BetaSet::default();
        }
        let mut names: Vec<String> = Vec::new();
        for (_, v) in headers
            .iter()
            .filter(|(k, _)| fields.iter().any(|f| k.eq_ignore_ascii_case(f)))
        {
            for n in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !names.iter().any(|x| x == n) {
                    names.push(n.to_string());
                }
            }
        }
        BetaSet { known: true, names }
    }

    /// The names as a sorted set (what comparisons use).
    pub fn set(&self) -> BTreeSet<&str> {
        self.names.iter().map(String::as_str).collect()
    }

    /// True when both sets are known and hold the same names, whatever the order,
    /// spacing or number of header lines.
    pub fn same_as(&self, other: &BetaSet) -> bool {
        self.known && other.known && self.set() == other.set()
    }

    /// Names in `other` but not in `self` (empty when either set is unknown).
    pub fn added_in(&self, other: &BetaSet) -> Vec<String> {
        if !self.known || !other.known {
            return Vec::new();
        }
        let mine = self.set();
        other
            .names
            .iter()
            .filter(|n| !mine.contains(n.as_str()))
            .cloned()
            .collect()
    }

    /// True when a name starting with `prefix` is in the set (`fast-mode-` matches
    /// `fast-mode-2026-02-01`).
    pub fn has_prefix(&self, prefix: &str) -> bool {
        self.names.iter().any(|n| n.starts_with(prefix))
    }

    /// The set as one canonical value: sorted names joined by `,` (`None` when unknown).
    pub fn canonical(&self) -> Option<String> {
        self.known
            .then(|| self.set().into_iter().collect::<Vec<_>>().join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::test_headers as h;

    #[test]
    fn repeated_lines_order_and_spacing_give_one_set() {
        let one = BetaSet::from_headers(&h(&[("anthropic-beta", "x-1,y-2,z-3")]));
        let two = BetaSet::from_headers(&h(&[
            ("Anthropic-Beta", " z-3 , y-2"),
            ("host", "a"),
            ("anthropic-beta", "x-1, y-2"),
        ]));
        assert!(one.same_as(&two));
        assert_eq!(one.canonical(), two.canonical());
        assert_eq!(two.names, ["z-3", "y-2", "x-1"]);
        assert!(one.added_in(&two).is_empty() && two.added_in(&one).is_empty());
    }

    #[test]
    fn no_header_lines_means_unknown_not_empty() {
        let bare = BetaSet::from_headers(&[]);
        let none = BetaSet::from_headers(&h(&[("host", "a")]));
        let some = BetaSet::from_headers(&h(&[("host", "a"), ("anthropic-beta", "x-1")]));
        assert!(!bare.known && none.known);
        assert!(
            some.added_in(&bare).is_empty(),
            "unknown is never 'removed'"
        );
        assert_eq!(none.added_in(&some), ["x-1"]);
        assert!(!bare.same_as(&bare));
        assert_eq!(bare.canonical(), None);
    }
}
