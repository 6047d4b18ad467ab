//! The one normalization of volatile values: session, device and request ids, dates and
//! times, working-directory and temporary paths, billing fingerprints, token budgets,
//! request-size headers, and (in tool results) progress counters, durations, percentages
//! and spinner frames. Every command that compares texts uses it: `diff` (two requests),
//! the replay server (a live request against a recorded one) and `analyze` (two poll
//! results).
//!
//! A [`Normalizer`] is an ordered list of named regex [`Rule`]s, applied one after another
//! (each to the previous one's output), each with a [`Scope`]:
//! `text` rules rewrite every compared text (system blocks, message texts, tool
//! definitions, parameter values, header values, tool results); `result` rules only tool
//! results ([`Normalizer::result`]); header rules only the value of the header they name.
//! Every replacement is counted per rule ([`Hits`]), so reports can say which rules fired.
//! Sizes are never normalized: they stay wire bytes.
//!
//! The default rules are [`Normalizer::defaults`] (listed in `docs/diff.md`, "Volatile
//! fields"); [`Normalizer::compile_in_background`] compiles them on another thread while
//! the caller reads its inputs ([`PendingNormalizer`]). A rules file (`agentwire diff --rules FILE`) is JSON:
//!
//! ```json
//! {"defaults": true,
//!  "disable": ["device-id"],
//!  "rules": [{"name": "build-id", "description": "CI build number",
//!             "pattern": "build #\\d+", "replace": "build #<n>"},
//!            {"name": "x-trace", "header": "x-trace-id", "pattern": ".+", "replace": "<id>"}]}
//! ```
//!
//! `defaults: false` starts from an empty list; a rule whose `name` equals a default
//! rule's replaces it in place; other rules are appended in file order. Replacement
//! strings use the `regex` crate's syntax (`$1`, `${name}`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};

use super::ApiError;

mod defaults;
mod json;
mod pending;
use defaults::DEFAULTS;
pub use json::{text_view, value_view};
pub use pending::PendingNormalizer;

/// Which texts a rule rewrites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Every compared text and header value (and tool results).
    #[default]
    Text,
    /// Tool results only: progress output that changes between two reads of the same
    /// state (counters, durations, percentages, spinner frames).
    Result,
}

/// One normalization rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Short stable name, shown in reports (`session-id`).
    pub name: String,
    /// What the rule hides and why.
    pub description: String,
    /// For a header rule: the header name, lowercase. `None`: a text rule, applied to the
    /// texts its [`Scope`] names and to every header value.
    pub header: Option<String>,
    /// Which texts it applies to (ignored for header rules).
    pub scope: Scope,
    /// What to find.
    pub pattern: Regex,
    /// What to put instead (`$1` refers to capture group 1).
    pub replace: String,
}

/// Counts of replacements per rule name.
pub type Hits = BTreeMap<String, u64>;

/// An ordered rule list, ready to apply.
#[derive(Clone, Debug)]
pub struct Normalizer {
    rules: Vec<Rule>,
    /// `text`-scope rules.
    text: RuleSet,
    /// `text`- and `result`-scope rules.
    result: RuleSet,
}

/// A rule as written in a rules file.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct RuleSpec {
    /// Rule name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: String,
    /// Header name for a header rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
    /// `text` (default) or `result` (tool results only).
    #[serde(default)]
    pub scope: Scope,
    /// Regex.
    pub pattern: String,
    /// Replacement.
    pub replace: String,
}

/// A rules file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Start from the default rules (default true).
    #[serde(default = "yes")]
    pub defaults: bool,
    /// Names of default rules to drop.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Rules to add or to replace defaults with.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
}

fn yes() -> bool {
    true
}

/// The indexes of the rules one kind of text passes through, in rule order.
///
/// Rules apply one after another, each to the previous one's output. A rule that does not
/// match costs one scan of the text; most default rules start with a literal the regex
/// engine finds with a SIMD search, so a 1 MB text without volatile values passes all of
/// them in about a millisecond. (A `RegexSet` prefilter scanned as long and tripled the
/// compile time, which `diff` pays on every run.)
#[derive(Clone, Debug)]
struct RuleSet {
    index: Vec<usize>,
}

impl RuleSet {
    fn new(rules: &[Rule], keep: impl Fn(&Rule) -> bool) -> Self {
        RuleSet {
            index: (0..rules.len()).filter(|&i| keep(&rules[i])).collect(),
        }
    }

    fn apply<'t>(&self, rules: &[Rule], text: &'t str, hits: &mut Hits) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for &i in &self.index {
            if let Cow::Owned(s) = apply(&rules[i], &out, hits) {
                out = Cow::Owned(s);
            }
        }
        out
    }
}

impl Normalizer {
    /// The default rules (see the module docs and `docs/diff.md`).
    pub fn defaults() -> Normalizer {
        let specs = DEFAULTS
            .iter()
            .map(
                |(name, header, scope, pattern, replace, description)| RuleSpec {
                    name: name.to_string(),
                    description: description.to_string(),
                    header: header.map(str::to_string),
                    scope: *scope,
                    pattern: pattern.to_string(),
                    replace: replace.to_string(),
                },
            )
            .collect::<Vec<_>>();
        Normalizer::from_specs(&specs, "built-in rules").expect("default rules compile")
    }

    /// No rules: compare raw text.
    pub fn none() -> Normalizer {
        Normalizer::from_specs(&[], "no rules").expect("empty rule set")
    }

    /// Build from rule specs; `origin` names their source in errors.
    ///
    /// Errors: [`ApiError::Rules`] for a pattern that does not compile.
    pub fn from_specs(specs: &[RuleSpec], origin: &str) -> Result<Normalizer, ApiError> {
        let mut rules = Vec::with_capacity(specs.len());
        for s in specs {
            let pattern = Regex::new(&s.pattern).map_err(|e| ApiError::Rules {
                origin: origin.to_string(),
                message: format!("rule {:?}: bad pattern: {e}", s.name),
            })?;
            // A pattern that can match the empty string anywhere would insert its
            // replacement between every two characters of every text (a few such rules
            // exhausted memory). Anchored at the start of the text (`^.*$`, a header rule)
            // it matches once at most, which is fine.
            let empty_anywhere = regex_syntax::parse(&s.pattern).is_ok_and(|h| {
                let p = h.properties();
                p.minimum_len() == Some(0)
                    && !p.look_set_prefix().contains(regex_syntax::hir::Look::Start)
            });
            if empty_anywhere {
                return Err(ApiError::Rules {
                    origin: origin.to_string(),
                    message: format!(
                        "rule {:?}: pattern {:?} can match the empty string; make it match at least one character (e.g. `+` instead of `*`)",
                        s.name, s.pattern
                    ),
                });
            }
            rules.push(Rule {
                name: s.name.clone(),
                description: s.description.clone(),
                header: s.header.as_ref().map(|h| h.to_ascii_lowercase()),
                scope: s.scope,
                pattern,
                replace: s.replace.clone(),
            });
        }
        let text = RuleSet::new(&rules, |r| r.header.is_none() && r.scope == Scope::Text);
        let result = RuleSet::new(&rules, |r| r.header.is_none());
        Ok(Normalizer {
            rules,
            text,
            result,
        })
    }

    /// Apply a rules file on top of (or instead of) the defaults.
    ///
    /// Errors: [`ApiError::Rules`] naming the file when it cannot be read, is not a
    /// rules file, disables an unknown rule or has a bad pattern.
    pub fn from_file(path: &Path) -> Result<Normalizer, ApiError> {
        let origin = path.display().to_string();
        let err = |message: String| ApiError::Rules {
            origin: origin.clone(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        if !super::is_object_text(&text) {
            return Err(err(
                "a rules file is one JSON object: {\"defaults\": true, \"disable\": [names], \"rules\": [...]}".into(),
            ));
        }
        let file: RulesFile = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "{e} (expected {{\"defaults\": true, \"disable\": [names], \"rules\": [{{\"name\", \"pattern\", \"replace\", optional \"header\", \"scope\", \"description\"}}]}})"
            ))
        })?;
        let mut specs: Vec<RuleSpec> = if file.defaults {
            Normalizer::defaults().specs()
        } else {
            Vec::new()
        };
        for d in &file.disable {
            let before = specs.len();
            specs.retain(|s| &s.name != d);
            if specs.len() == before {
                return Err(err(format!(
                    "cannot disable unknown rule {d:?}; known: {}",
                    Normalizer::defaults().names().join(", ")
                )));
            }
        }
        for r in file.rules {
            match specs.iter_mut().find(|s| s.name == r.name) {
                Some(slot) => *slot = r,
                None => specs.push(r),
            }
        }
        Normalizer::from_specs(&specs, &origin)
    }

    /// The rules in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rule names in order.
    pub fn names(&self) -> Vec<String> {
        self.rules.iter().map(|r| r.name.clone()).collect()
    }

    /// The rules as specs (for writing a rules file or listing them).
    pub fn specs(&self) -> Vec<RuleSpec> {
        self.rules
            .iter()
            .map(|r| RuleSpec {
                name: r.name.clone(),
                description: r.description.clone(),
                header: r.header.clone(),
                scope: r.scope,
                pattern: r.pattern.as_str().to_string(),
                replace: r.replace.clone(),
            })
            .collect()
    }

    /// Normalize a text with the `text` rules, counting replacements into `hits`.
    pub fn text<'t>(&self, text: &'t str, hits: &mut Hits) -> Cow<'t, str> {
        self.text.apply(&self.rules, text, hits)
    }

    /// Normalize a JSON document (a tool definition) with the `text` rules, over its
    /// [`text_view`]: strings decoded, one token per line, layout dropped. Two documents
    /// are the same after normalization when these strings are equal.
    pub fn json(&self, bytes: &[u8], hits: &mut Hits) -> String {
        let view = text_view(bytes);
        match self.text(&view, hits) {
            Cow::Borrowed(_) => view,
            Cow::Owned(s) => s,
        }
    }

    /// Normalize a JSON value (a parameter, a schema keyword, a tool call's input) with the
    /// `text` rules over its [`value_view`], as [`Normalizer::json`] does for bytes.
    pub fn value(&self, v: &serde_json::Value, hits: &mut Hits) -> String {
        let view = value_view(v);
        match self.text(&view, hits) {
            Cow::Borrowed(_) => view,
            Cow::Owned(s) => s,
        }
    }

    /// Normalize a tool result: the `text` and `result` rules, then runs of whitespace
    /// collapsed to one space (layout is not content). Two results are equal "after
    /// normalization" when these strings are equal.
    pub fn result(&self, text: &str, hits: &mut Hits) -> String {
        let out = self.result.apply(&self.rules, text, hits);
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Normalize a header value: header rules for `name` first, then the body rules.
    pub fn header<'t>(&self, name: &str, value: &'t str, hits: &mut Hits) -> Cow<'t, str> {
        let lower = name.to_ascii_lowercase();
        let mut out = Cow::Borrowed(value);
        for rule in self
            .rules
            .iter()
            .filter(|r| r.header.as_deref() == Some(&lower))
        {
            if let Cow::Owned(s) = apply(rule, &out, hits) {
                out = Cow::Owned(s);
            }
        }
        match self.text(&out, hits) {
            Cow::Owned(s) => Cow::Owned(s),
            Cow::Borrowed(_) => out,
        }
    }
}

fn apply<'t>(rule: &Rule, text: &'t str, hits: &mut Hits) -> Cow<'t, str> {
    let mut n = 0u64;
    let out = rule.pattern.replace_all(text, |caps: &Captures| {
        n += 1;
        let mut s = String::new();
        caps.expand(&rule.replace, &mut s);
        s
    });
    if n > 0 {
        *hits.entry(rule.name.clone()).or_default() += n;
    }
    out
}

/// A key to compare values by: the value's text with object keys sorted, no whitespace,
/// and members named in `skip` left out at every level. Two inputs that differ only in
/// key order or in the skipped members (`description`) give the same key. It reads like
/// JSON but is not meant to be parsed (keys are written as Rust string literals); the
/// importers' `canonical_json` is the JSON.stringify-compatible text.
pub fn comparison_key(v: &serde_json::Value, skip: &[&str]) -> String {
    use serde_json::Value;
    match v {
        Value::Object(o) => {
            let m: BTreeMap<&String, String> = o
                .iter()
                .filter(|(k, _)| !skip.contains(&k.as_str()))
                .map(|(k, v)| (k, comparison_key(v, skip)))
                .collect();
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter()
                .map(|x| comparison_key(x, skip))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_hide_volatile_values_and_count_them() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        let t = "x-anthropic-billing-header: cc_version=2.1.304.703; cc_entrypoint=sdk-cli;\n\
                 memory at `/tmp/r/cfg-a/projects/-tmp-work/memory/`.\n - Primary working directory: /tmp/w\n\
                 session 2d7ec88f-7e19-46dd-9430-a15c8abe1fec <total_tokens>14988945 tokens left</total_tokens>";
        let out = n.text(t, &mut hits);
        assert_eq!(
            out,
            "x-anthropic-billing-header: cc_version=2.1.304.<fp>; cc_entrypoint=sdk-cli;\n\
             memory at `<memory-dir>/`.\n - Primary working directory: <cwd>\n\
             session <uuid> <total_tokens><n> tokens left</total_tokens>"
        );
        for r in [
            "billing-fingerprint",
            "memory-dir",
            "working-directory",
            "session-id",
            "token-budget",
        ] {
            assert_eq!(hits.get(r), Some(&1), "{r}: {hits:?}");
        }
        assert_eq!(
            hits.len(),
            5,
            "rules that replaced nothing are not listed: {hits:?}"
        );
    }

    /// Reported by a new user: a recording made on another machine showed
    /// `OS Version: Linux 6.18.44-fc-v669` → `…-fc-v857` as a change of the CLI.
    #[test]
    fn kernel_release_differences_between_hosts_are_normalized() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        let a = n.text(
            " - OS Version: Linux 6.18.44-fc-v669\n - Shell: bash",
            &mut hits,
        );
        let b = n.text(
            " - OS Version: Linux 6.18.44-fc-v857\n - Shell: bash",
            &mut hits,
        );
        assert_eq!(a, " - OS Version: Linux <os-version>\n - Shell: bash");
        assert_eq!(a, b);
        assert_eq!(hits.get("os-version"), Some(&2));
        // Another operating system is still a difference.
        let mac = n.text("OS Version: Darwin 24.1.0", &mut hits);
        assert_eq!(mac, "OS Version: Darwin <os-version>");
        assert_ne!(mac, a.trim_start_matches(" - ").split('\n').next().unwrap());
    }

    #[test]
    fn betas_and_tool_type_dates_are_not_touched() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        let t = "advanced-tool-use-2025-11-20 tool_search_tool_regex_20251119";
        assert!(matches!(n.text(t, &mut hits), Cow::Borrowed(_)));
        assert!(hits.is_empty());
    }

    #[test]
    fn header_rules_apply_to_their_header_only() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        assert_eq!(n.header("Content-Length", "44164", &mut hits), "<n>");
        assert_eq!(
            n.header("Host", "127.0.0.1:18502", &mut hits),
            "127.0.0.1:<port>"
        );
        assert_eq!(n.header("X-Other", "44164", &mut hits), "44164");
        assert_eq!(hits.len(), 2);
    }

    #[test]
    fn rules_file_disables_replaces_and_adds() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("rules.json");
        std::fs::write(
            &p,
            r#"{"disable":["device-id"],"rules":[{"name":"session-id","pattern":"sess-\\d+","replace":"<s>"},{"name":"build","pattern":"build #\\d+","replace":"build #<n>"}]}"#,
        )
        .unwrap();
        let n = Normalizer::from_file(&p).unwrap();
        assert!(!n.names().contains(&"device-id".to_string()));
        let pos = n.names().iter().position(|x| x == "session-id").unwrap();
        assert_eq!(pos, 5, "replaced in place");
        let mut hits = Hits::new();
        assert_eq!(n.text("sess-12 build #7", &mut hits), "<s> build #<n>");
        std::fs::write(&p, r#"{"disable":["nope"]}"#).unwrap();
        let e = Normalizer::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("rules.json") && e.contains("nope"), "{e}");
        std::fs::write(&p, r#"{"rules":[{"name":"x","pattern":"(","replace":""}]}"#).unwrap();
        let e = Normalizer::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("bad pattern"), "{e}");
    }

    #[test]
    fn billing_attestation_token_and_temp_paths_are_volatile() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        let t =
            "x-anthropic-billing-header: cc_version=2.1.304.a1b; cc_entrypoint=cli; cch=3f9e0;\n\
                 output in /tmp/claude-0/-tmp-x/tasks/b1.output";
        assert_eq!(
            n.text(t, &mut hits),
            "x-anthropic-billing-header: cc_version=2.1.304.<fp>; cc_entrypoint=cli; cch=<token>;\n\
             output in <tmp-path>"
        );
        assert_eq!(hits.get("billing-attestation"), Some(&1));
        assert_eq!(hits.get("tmp-path"), Some(&1));
    }

    #[test]
    fn progress_rules_apply_to_tool_results_only() {
        let n = Normalizer::defaults();
        let mut hits = Hits::new();
        let a = n.result(
            "⠋ build: 3/20 done, 27.1s elapsed, attempt 4, 15%\n\n  at 12:00:01",
            &mut hits,
        );
        let b = n.result(
            "⠙ build: 9/20 done, 31.9s elapsed, attempt 5, 45% at 12:00:07",
            &mut Hits::new(),
        );
        assert_eq!(a, b);
        assert_eq!(
            a,
            "<spin> build: <n>/<n> done, <duration> elapsed, attempt <n>, <pct> at <time>"
        );
        for r in [
            "spinner",
            "counter",
            "duration",
            "attempt",
            "percentage",
            "clock-time",
        ] {
            assert_eq!(hits.get(r), Some(&1), "{r}: {hits:?}");
        }
        // The same words in a prompt are content: `text` leaves them alone.
        let mut h = Hits::new();
        assert_eq!(n.text("timeout 120s, 3/20", &mut h), "timeout 120s, 3/20");
        assert!(h.is_empty());
    }

    /// Reported by an adversarial tester: a rules file with four empty patterns used
    /// 2 GB on a 64 KB body and aborted.
    #[test]
    fn a_rule_that_can_match_the_empty_string_is_refused_before_it_runs() {
        for pattern in ["", "a*", "(?m)^", r"\b", "x?"] {
            let spec = RuleSpec {
                name: "empty".into(),
                description: String::new(),
                header: None,
                scope: Scope::Text,
                pattern: pattern.into(),
                replace: "<e>".into(),
            };
            let e = Normalizer::from_specs(&[spec], "rules.json")
                .unwrap_err()
                .to_string();
            assert!(e.contains("can match the empty string"), "{pattern:?}: {e}");
            assert!(e.contains("rules.json"), "{e}");
        }
        // Anchored at the start of the text, an empty match happens once at most.
        let anchored = RuleSpec {
            name: "whole".into(),
            description: String::new(),
            header: Some("x-id".into()),
            scope: Scope::Text,
            pattern: "^.*$".into(),
            replace: "<id>".into(),
        };
        assert!(Normalizer::from_specs(&[anchored], "rules.json").is_ok());
    }

    #[test]
    fn a_rules_file_that_is_an_array_is_refused_not_read_by_position() {
        let d = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("arr.json", "[false]"),
            ("empty.json", "[]"),
            ("num.json", "3"),
        ] {
            let p = d.path().join(name);
            std::fs::write(&p, text).unwrap();
            let e = Normalizer::from_file(&p).unwrap_err().to_string();
            assert!(e.contains(name) && e.contains("one JSON object"), "{e}");
        }
        // An object still reads: defaults off, no rules.
        let p = d.path().join("ok.json");
        std::fs::write(&p, r#" {"defaults": false}"#).unwrap();
        assert!(Normalizer::from_file(&p).unwrap().rules().is_empty());
    }
}
