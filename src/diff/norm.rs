//! The normalization state of one comparison (the crate's `Norm`): the api layer's rules
//! ([`crate::api::normalize`]) applied to side A and side B, with the replacements each
//! side needed counted per rule for the report ([`NormalizedRow`]).

use std::borrow::Cow;

use serde::Serialize;

use crate::api::normalize::{Hits, Normalizer};

/// Replacements a normalization rule made.
#[derive(Clone, Debug, Serialize)]
pub struct NormalizedRow {
    /// Rule name.
    pub rule: String,
    /// What it hides.
    pub description: String,
    /// Replacements made in A while comparing.
    pub a: u64,
    /// In B.
    pub b: u64,
}

/// Normalization state of one comparison: the rules and the replacements made per side.
pub(crate) struct Norm<'n> {
    rules: &'n Normalizer,
    hits_a: Hits,
    hits_b: Hits,
}

impl<'n> Norm<'n> {
    pub(crate) fn new(rules: &'n Normalizer) -> Self {
        Norm {
            rules,
            hits_a: Default::default(),
            hits_b: Default::default(),
        }
    }
    /// Normalize a text of side A.
    pub(crate) fn a<'t>(&mut self, t: &'t str) -> Cow<'t, str> {
        self.rules.text(t, &mut self.hits_a)
    }
    /// Normalize a text of side B.
    pub(crate) fn b<'t>(&mut self, t: &'t str) -> Cow<'t, str> {
        self.rules.text(t, &mut self.hits_b)
    }
    /// Normalize a JSON document (a tool definition) of side A over its text view
    /// ([`crate::api::normalize::text_view`]).
    pub(crate) fn json_a(&mut self, bytes: &[u8]) -> String {
        self.rules.json(bytes, &mut self.hits_a)
    }
    /// Normalize a JSON document of side B.
    pub(crate) fn json_b(&mut self, bytes: &[u8]) -> String {
        self.rules.json(bytes, &mut self.hits_b)
    }
    /// Normalize a JSON value over its text view, to compare it only: replacements are not
    /// counted (the displayed text of the value is normalized and counted by the caller).
    pub(crate) fn quiet_value(&self, v: &serde_json::Value) -> String {
        self.rules.value(v, &mut Hits::new())
    }
    /// Normalize a text for display only: replacements are not counted in [`Norm::rows`].
    pub(crate) fn quiet(&self, t: &str) -> String {
        self.rules.text(t, &mut Hits::new()).into_owned()
    }
    pub(crate) fn header_a(&mut self, name: &str, v: &str) -> String {
        self.rules.header(name, v, &mut self.hits_a).into_owned()
    }
    pub(crate) fn header_b(&mut self, name: &str, v: &str) -> String {
        self.rules.header(name, v, &mut self.hits_b).into_owned()
    }
    /// One row per rule that fired, in rule order.
    pub(crate) fn rows(&self) -> Vec<NormalizedRow> {
        self.rules
            .rules()
            .iter()
            .filter_map(|r| {
                let a = self.hits_a.get(&r.name).copied().unwrap_or(0);
                let b = self.hits_b.get(&r.name).copied().unwrap_or(0);
                (a + b > 0).then(|| NormalizedRow {
                    rule: r.name.clone(),
                    description: r.description.clone(),
                    a,
                    b,
                })
            })
            .collect()
    }
}
