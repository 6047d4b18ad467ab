//! Normalization of volatile values (session ids, device ids, request ids, dates,
//! working-directory paths, token-budget reminders, content-length, ...) before two
//! requests are compared, so that "no change" reads as no change.
//!
//! A [`Normalizer`] is an ordered list of regex [`Rule`]s. Body rules rewrite every text
//! that is compared (system blocks, message texts, tool definitions, parameter values) and
//! header values; header rules rewrite only the value of the header they name. Sizes are
//! never normalized: they stay wire bytes. The replay server uses the same rules to match
//! a live request against a recorded one.
//!
//! The default rules are [`Normalizer::defaults`] (listed in the README, "Volatile
//! fields"). A rules file (`agentwire diff --rules FILE`) is JSON:
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

use regex::{Captures, Regex, RegexSet};
use serde::{Deserialize, Serialize};

use super::DiffError;

/// One normalization rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Short stable name, shown in reports (`session-id`).
    pub name: String,
    /// What the rule hides and why.
    pub description: String,
    /// For a header rule: the header name, lowercase. `None`: a body rule, applied to all
    /// compared text and to every header value.
    pub header: Option<String>,
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
    body_set: RegexSet,
    body_index: Vec<usize>,
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

/// The default rules: (name, header, pattern, replacement, description). Order matters:
/// the memory-directory rule runs before the working-directory rule.
const DEFAULTS: &[(&str, Option<&str>, &str, &str, &str)] = &[
    (
        "billing-fingerprint",
        None,
        r"(cc_version=\d+\.\d+\.\d+)\.[0-9a-f]{3,}",
        "$1.<fp>",
        "per-request fingerprint suffix of Claude Code's cc_version billing header",
    ),
    (
        "memory-dir",
        None,
        r"/[^\s`'\x22<>()]*/projects/[^\s/`'\x22<>()]+/memory",
        "<memory-dir>",
        "the auto-memory directory (config dir + sanitized working directory)",
    ),
    (
        "working-directory",
        None,
        r"(?m)((?:[Pp]rimary working directory|[Ww]orking directory|cwd):[ \t]*)[^\s]+",
        "${1}<cwd>",
        "the working directory named in the environment section",
    ),
    (
        "session-id",
        None,
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        "<uuid>",
        "UUIDs: session ids, account and message uuids",
    ),
    (
        "device-id",
        None,
        r"\b[0-9a-f]{64}\b",
        "<hex64>",
        "64-hex-digit ids: device ids, digests",
    ),
    (
        "request-id",
        None,
        r"\b(req|msg|toolu|srvtoolu)_[A-Za-z0-9]{8,}\b",
        "${1}_<id>",
        "API-issued ids (request, message, tool-use)",
    ),
    (
        "timestamp",
        None,
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?",
        "<timestamp>",
        "date-times (RFC 3339 and similar)",
    ),
    (
        "date",
        None,
        r"(?i)(today'?s date is:?[ \t]*)\d{4}-\d{2}-\d{2}",
        "${1}<date>",
        "the current date injected into the context",
    ),
    (
        "token-budget",
        None,
        r"<total_tokens>\d+ tokens left</total_tokens>",
        "<total_tokens><n> tokens left</total_tokens>",
        "remaining-token reminders",
    ),
    (
        "token-usage",
        None,
        r"(?i)(token usage:[ \t]*)\d+/\d+; \d+ remaining",
        "${1}<n>/<n>; <n> remaining",
        "token-usage reminders",
    ),
    (
        "content-length",
        Some("content-length"),
        r"^.*$",
        "<n>",
        "body size header (sizes are compared separately, in wire bytes)",
    ),
    (
        "host-port",
        Some("host"),
        r":\d+$",
        ":<port>",
        "the port of the local server a capture used",
    ),
    (
        "request-id-header",
        Some("request-id"),
        r"^.*$",
        "<id>",
        "request id header",
    ),
    (
        "x-request-id-header",
        Some("x-request-id"),
        r"^.*$",
        "<id>",
        "request id header",
    ),
    (
        "api-key",
        Some("x-api-key"),
        r"^.*$",
        "<secret>",
        "credentials (already redacted; the fingerprint differs per key)",
    ),
    (
        "authorization",
        Some("authorization"),
        r"^.*$",
        "<secret>",
        "credentials (already redacted; the fingerprint differs per token)",
    ),
];

impl Normalizer {
    /// The default rules (see the module docs and the README).
    pub fn defaults() -> Normalizer {
        let specs = DEFAULTS
            .iter()
            .map(|(name, header, pattern, replace, description)| RuleSpec {
                name: name.to_string(),
                description: description.to_string(),
                header: header.map(str::to_string),
                pattern: pattern.to_string(),
                replace: replace.to_string(),
            })
            .collect::<Vec<_>>();
        Normalizer::from_specs(&specs, "built-in rules").expect("default rules compile")
    }

    /// No rules: compare raw text.
    pub fn none() -> Normalizer {
        Normalizer::from_specs(&[], "no rules").expect("empty rule set")
    }

    /// Build from rule specs; `origin` names their source in errors.
    ///
    /// Errors: [`DiffError::Rules`] for a pattern that does not compile.
    pub fn from_specs(specs: &[RuleSpec], origin: &str) -> Result<Normalizer, DiffError> {
        let mut rules = Vec::with_capacity(specs.len());
        for s in specs {
            let pattern = Regex::new(&s.pattern).map_err(|e| DiffError::Rules {
                origin: origin.to_string(),
                message: format!("rule {:?}: bad pattern: {e}", s.name),
            })?;
            rules.push(Rule {
                name: s.name.clone(),
                description: s.description.clone(),
                header: s.header.as_ref().map(|h| h.to_ascii_lowercase()),
                pattern,
                replace: s.replace.clone(),
            });
        }
        let body_index: Vec<usize> = (0..rules.len())
            .filter(|&i| rules[i].header.is_none())
            .collect();
        let body_set = RegexSet::new(body_index.iter().map(|&i| rules[i].pattern.as_str()))
            .map_err(|e| DiffError::Rules {
                origin: origin.to_string(),
                message: e.to_string(),
            })?;
        Ok(Normalizer {
            rules,
            body_set,
            body_index,
        })
    }

    /// Apply a rules file on top of (or instead of) the defaults.
    ///
    /// Errors: [`DiffError::Rules`] naming the file when it cannot be read, is not a
    /// rules file, disables an unknown rule or has a bad pattern.
    pub fn from_file(path: &Path) -> Result<Normalizer, DiffError> {
        let origin = path.display().to_string();
        let err = |message: String| DiffError::Rules {
            origin: origin.clone(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let file: RulesFile = serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "{e} (expected {{\"defaults\": true, \"disable\": [names], \"rules\": [{{\"name\", \"pattern\", \"replace\", optional \"header\", \"description\"}}]}})"
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
                pattern: r.pattern.as_str().to_string(),
                replace: r.replace.clone(),
            })
            .collect()
    }

    /// Normalize a text with the body rules, counting replacements into `hits`.
    pub fn text<'t>(&self, text: &'t str, hits: &mut Hits) -> Cow<'t, str> {
        if self.body_index.is_empty() {
            return Cow::Borrowed(text);
        }
        let matched = self.body_set.matches(text);
        if !matched.matched_any() {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for k in matched.iter() {
            let rule = &self.rules[self.body_index[k]];
            if let Cow::Owned(s) = apply(rule, &out, hits) {
                out = Cow::Owned(s);
            }
        }
        out
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
        assert_eq!(pos, 3, "replaced in place");
        let mut hits = Hits::new();
        assert_eq!(n.text("sess-12 build #7", &mut hits), "<s> build #<n>");
        std::fs::write(&p, r#"{"disable":["nope"]}"#).unwrap();
        let e = Normalizer::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("rules.json") && e.contains("nope"), "{e}");
        std::fs::write(&p, r#"{"rules":[{"name":"x","pattern":"(","replace":""}]}"#).unwrap();
        let e = Normalizer::from_file(&p).unwrap_err().to_string();
        assert!(e.contains("bad pattern"), "{e}");
    }
}
