//! `diff --fail-on`: conditions on a diff that, when met by any comparison, make
//! `agentwire diff` exit with code 4. The grammar is [`crate::gate`]'s, with changes from
//! A to B as values; this module holds the flags, the metrics and what each reads.
//!
//! Forms (see the README, "CI gates"):
//! - a flag: `any` (anything differs), `tools` (tool definitions differ), `tools-added`,
//!   `tools-removed`, `tools-deferred`, `tools-undeferred`, `tools-changed`,
//!   `beta-changed`, `beta-added`, `beta-removed`, `headers-changed`, `system-changed`,
//!   `params-changed`, `injected-changed`;
//! - a size comparison `METRIC OP VALUE`: METRIC one of `tools`, `loaded-tools`,
//!   `deferred-tools`, `announced-tools`, `deferred-definitions`, `placeholder-tools`,
//!   `tool-bytes` (alias `schema-bytes`), `system-bytes`,
//!   `messages-bytes`, `body-bytes`, `tokens`; OP one of `>`, `>=`, `<`, `<=`; VALUE
//!   `+5%`/`-5%`/`5%` (relative change from A), `+1000`/`-1000` (change in units), or
//!   `1000` (B's absolute value).

use serde::Serialize;

use super::request::RequestDiff;
use crate::gate::{Condition, Gate, GateError, Metrics, Values};

/// Flags: conditions of their own.
pub const FLAGS: &[&str] = &[
    "any",
    "tools",
    "tools-added",
    "tools-removed",
    "tools-deferred",
    "tools-undeferred",
    "tools-changed",
    "beta-changed",
    "beta-added",
    "beta-removed",
    "headers-changed",
    "system-changed",
    "params-changed",
    "injected-changed",
];

/// Metric names and the size row each reads ([`RequestDiff::size`]); `schema-bytes` is
/// an alias of `tool-bytes`.
pub const METRICS: &[(&str, &str)] = &[
    ("tools", "tools"),
    ("loaded-tools", "loaded_tools"),
    ("deferred-tools", "deferred_tools"),
    ("announced-tools", "announced_tools"),
    ("deferred-definitions", "deferred_definitions"),
    ("placeholder-tools", "placeholder_tools"),
    ("tool-bytes", "tool_bytes"),
    ("schema-bytes", "tool_bytes"),
    ("system-bytes", "system_bytes"),
    ("messages-bytes", "messages_bytes"),
    ("body-bytes", "body_bytes"),
    ("tokens", "est_tokens"),
];

/// What a `diff` gate can name: the [`FLAGS`], the [`METRICS`] (name → the size row's
/// id), changes from A to B as values.
pub fn metrics() -> Metrics {
    Metrics {
        flags: FLAGS,
        names: METRICS,
        values: Values::Change,
        no_operator: format!(
            "expected a flag ({}) or METRIC>VALUE such as schema-bytes>+5%",
            FLAGS.join(", ")
        ),
        hint: String::new(),
    }
}

/// Parse an expression.
///
/// Errors: [`GateError::Bad`] listing the accepted flags or metrics.
pub fn parse(expr: &str) -> Result<Gate, GateError> {
    crate::gate::parse(expr, &metrics())
}

/// A gate's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct GateResult {
    /// The expression as written.
    pub expr: String,
    /// True when at least one comparison met it.
    pub tripped: bool,
    /// One line per comparison that met it: which, and the values.
    pub details: Vec<String>,
}

/// Evaluate gate `g` (parsed by [`parse`]) against every comparison.
pub fn evaluate(g: &Gate, diffs: &[RequestDiff]) -> GateResult {
    let details: Vec<String> = diffs.iter().filter_map(|d| check(g, d)).collect();
    GateResult {
        expr: g.expr.clone(),
        tripped: !details.is_empty(),
        details,
    }
}

/// `Some(detail)` when `d` meets the condition.
fn check(g: &Gate, d: &RequestDiff) -> Option<String> {
    let who = format!("{} -> {}", d.a.label, d.b.label);
    match g.cond {
        Condition::Flag(f) => flag(f, d).map(|h| format!("{who}: {h}")),
        Condition::Compare {
            metric,
            op,
            threshold,
        } => {
            let row = d.size(metric)?;
            let measured = threshold.measure(row.a as f64, row.b as f64);
            op.holds(measured, threshold.value())
                .then(|| format!("{who}: {metric} {} -> {} ({:+})", row.a, row.b, row.delta))
        }
    }
}

/// What flag `f` (one of [`FLAGS`]) finds in `d`, if it is met: the names or what
/// differs.
fn flag(f: &str, d: &RequestDiff) -> Option<String> {
    let t = &d.tools;
    let h = &d.headers;
    let names = |v: &[String]| (!v.is_empty()).then(|| v.join(", "));
    match f {
        "any" => (!d.identical).then(|| "requests differ".to_string()),
        "tools" => (!t.identical).then(|| "tool definitions differ".to_string()),
        "tools-added" => names(&t.added),
        "tools-removed" => names(&t.removed),
        "tools-deferred" => names(&t.deferred),
        "tools-undeferred" => names(&t.undeferred),
        "tools-changed" => names(&t.changed),
        "beta-added" => names(&h.betas_added),
        "beta-removed" => names(&h.betas_removed),
        "beta-changed" => {
            let mut v: Vec<String> = h.betas_added.iter().map(|b| format!("+{b}")).collect();
            v.extend(h.betas_removed.iter().map(|b| format!("-{b}")));
            names(&v)
        }
        "headers-changed" => (!h.identical()).then(|| "headers differ".to_string()),
        "system-changed" => (!d.system.text.identical || !d.system.same_breakpoints)
            .then(|| "system prompt differs".to_string()),
        "params-changed" => {
            let v: Vec<String> = d
                .params
                .iter()
                .filter(|p| p.changed)
                .map(|p| p.key.clone())
                .collect();
            names(&v)
        }
        "injected-changed" => {
            (!d.injected.is_empty()).then(|| format!("{} injected items differ", d.injected.len()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Op, Threshold};

    #[test]
    fn parses_flags_and_thresholds() {
        assert_eq!(
            parse("tools-added").unwrap().cond,
            Condition::Flag("tools-added")
        );
        let g = parse("schema-bytes > +5%").unwrap();
        assert_eq!(
            g.cond,
            Condition::Compare {
                metric: "tool_bytes",
                op: Op::Gt,
                threshold: Threshold::Relative(5.0)
            }
        );
        let g = parse("body-bytes>=100000").unwrap();
        assert!(
            matches!(g.cond, Condition::Compare { threshold: Threshold::Absolute(v), .. } if v == 100000.0)
        );
        let g = parse("tokens<-500").unwrap();
        assert!(
            matches!(g.cond, Condition::Compare { threshold: Threshold::Delta(v), .. } if v == -500.0)
        );
        let e = parse("tool-bites>1").unwrap_err().to_string();
        assert!(
            e.contains("tool-bites") && e.contains("schema-bytes"),
            "{e}"
        );
        let e = parse("tools-vanished").unwrap_err().to_string();
        assert!(e.contains("tools-added"), "{e}");
        assert!(parse("tools>x%").is_err());
        // Found by an adversarial test: thresholds that can never trip were accepted.
        for never in [
            "schema-bytes>+NaN%",
            "tokens>inf",
            "body-bytes<-inf",
            "tools>1e999%",
        ] {
            let e = parse(never).unwrap_err().to_string();
            assert!(e.contains("not a finite number"), "{never}: {e}");
        }
    }
}
