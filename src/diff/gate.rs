//! `--fail-on` gates for CI: conditions on a diff that, when met by any comparison, make
//! `agentwire diff` exit with code 4.
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
use super::DiffError;

const FLAGS: &[&str] = &[
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

const METRICS: &[(&str, &str)] = &[
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

/// What a threshold compares.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    /// Relative change from A, percent.
    Percent(f64),
    /// Change in units (bytes, tools, tokens).
    Delta(f64),
    /// B's value.
    Absolute(f64),
}

#[derive(Clone, Debug, PartialEq)]
enum Cond {
    Flag(String),
    Size {
        metric: &'static str,
        op: String,
        value: Value,
    },
}

/// A parsed `--fail-on` expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    expr: String,
    cond: Cond,
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

impl Gate {
    /// Parse an expression.
    ///
    /// Errors: [`DiffError::Gate`] listing the accepted flags and metrics.
    pub fn parse(expr: &str) -> Result<Gate, DiffError> {
        let e: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
        let err = |message: String| DiffError::Gate {
            expr: expr.to_string(),
            message,
        };
        if let Some(pos) = e.find(['>', '<']) {
            let (name, rest) = e.split_at(pos);
            let op_len = if rest[1..].starts_with('=') { 2 } else { 1 };
            let (op, val) = rest.split_at(op_len);
            let metric = METRICS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, m)| *m)
                .ok_or_else(|| {
                    err(format!(
                        "unknown metric {name:?}; metrics: {}",
                        METRICS
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
            let number = |s: &str| -> Result<f64, DiffError> {
                // NaN and infinity make a gate that can never trip.
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| err(format!("{val:?} is not a finite number, +N, -N or N%")))
            };
            let value = if let Some(p) = val.strip_suffix('%') {
                Value::Percent(number(p)?)
            } else if val.starts_with(['+', '-']) {
                Value::Delta(number(val)?)
            } else {
                Value::Absolute(number(val)?)
            };
            return Ok(Gate {
                expr: expr.to_string(),
                cond: Cond::Size {
                    metric,
                    op: op.to_string(),
                    value,
                },
            });
        }
        if FLAGS.contains(&e.as_str()) {
            return Ok(Gate {
                expr: expr.to_string(),
                cond: Cond::Flag(e),
            });
        }
        Err(err(format!(
            "expected a flag ({}) or METRIC>VALUE such as schema-bytes>+5%",
            FLAGS.join(", ")
        )))
    }

    /// Evaluate against every comparison.
    pub fn evaluate(&self, diffs: &[RequestDiff]) -> GateResult {
        let details: Vec<String> = diffs.iter().filter_map(|d| self.check(d)).collect();
        GateResult {
            expr: self.expr.clone(),
            tripped: !details.is_empty(),
            details,
        }
    }

    /// `Some(detail)` when `d` meets the condition.
    fn check(&self, d: &RequestDiff) -> Option<String> {
        let who = format!("{} -> {}", d.a.label, d.b.label);
        match &self.cond {
            Cond::Flag(f) => {
                let t = &d.tools;
                let h = &d.headers;
                let names = |v: &[String]| (!v.is_empty()).then(|| v.join(", "));
                let hit: Option<String> = match f.as_str() {
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
                        let mut v: Vec<String> =
                            h.betas_added.iter().map(|b| format!("+{b}")).collect();
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
                    "injected-changed" => (!d.injected.is_empty())
                        .then(|| format!("{} injected items differ", d.injected.len())),
                    _ => None,
                };
                hit.map(|h| format!("{who}: {h}"))
            }
            Cond::Size { metric, op, value } => {
                let row = d.size(metric)?;
                let (x, y) = (row.a as f64, row.b as f64);
                let lhs = match value {
                    Value::Percent(_) if x == 0.0 => {
                        if y == 0.0 {
                            0.0
                        } else {
                            f64::INFINITY * (y - x).signum()
                        }
                    }
                    Value::Percent(_) => (y - x) / x * 100.0,
                    Value::Delta(_) => y - x,
                    Value::Absolute(_) => y,
                };
                let rhs = match value {
                    Value::Percent(v) | Value::Delta(v) | Value::Absolute(v) => *v,
                };
                let met = match op.as_str() {
                    ">" => lhs > rhs,
                    ">=" => lhs >= rhs,
                    "<" => lhs < rhs,
                    _ => lhs <= rhs,
                };
                met.then(|| format!("{who}: {metric} {} -> {} ({:+})", row.a, row.b, row.delta))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags_and_thresholds() {
        assert_eq!(
            Gate::parse("tools-added").unwrap().cond,
            Cond::Flag("tools-added".into())
        );
        let g = Gate::parse("schema-bytes > +5%").unwrap();
        assert_eq!(
            g.cond,
            Cond::Size {
                metric: "tool_bytes",
                op: ">".into(),
                value: Value::Percent(5.0)
            }
        );
        let g = Gate::parse("body-bytes>=100000").unwrap();
        assert!(matches!(g.cond, Cond::Size { value: Value::Absolute(v), .. } if v == 100000.0));
        let g = Gate::parse("tokens<-500").unwrap();
        assert!(matches!(g.cond, Cond::Size { value: Value::Delta(v), .. } if v == -500.0));
        let e = Gate::parse("tool-bites>1").unwrap_err().to_string();
        assert!(
            e.contains("tool-bites") && e.contains("schema-bytes"),
            "{e}"
        );
        let e = Gate::parse("tools-vanished").unwrap_err().to_string();
        assert!(e.contains("tools-added"), "{e}");
        assert!(Gate::parse("tools>x%").is_err());
        // Found by an adversarial test: thresholds that can never trip were accepted.
        for never in [
            "schema-bytes>+NaN%",
            "tokens>inf",
            "body-bytes<-inf",
            "tools>1e999%",
        ] {
            let e = Gate::parse(never).unwrap_err().to_string();
            assert!(e.contains("not a finite number"), "{never}: {e}");
        }
    }
}
