//! `--fail-on` expressions for CI gates: `METRIC OP VALUE`, e.g. `redundant-polls>5`,
//! `cache-miss-cost>$0.50`, `cache-hit-rate<80%`.

use super::result::Summary;
use super::AnalyzeError;

/// Metric names and what they read from the summary.
pub const METRICS: &[&str] = &[
    "polls",
    "redundant-polls",
    "polls-after-notified",
    "polls-while-pending",
    "wasted-tokens",
    "wasted-cost",
    "cache-miss-tokens",
    "cache-miss-cost",
    "cache-hit-rate",
    "total-cost",
    "failed-jobs",
    "unnotified-jobs",
];

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `=` or `==`
    Eq,
}

/// A parsed gate.
#[derive(Clone, Debug, PartialEq)]
pub struct FailOn {
    /// The expression as given.
    pub expr: String,
    /// Metric name (one of [`METRICS`]).
    pub metric: String,
    /// Operator.
    pub op: Op,
    /// Threshold (dollars for `*-cost`, a fraction for `cache-hit-rate`; `80%` = 0.8).
    pub value: f64,
}

impl FailOn {
    /// Parse `METRIC OP VALUE` (spaces allowed, `$` and `%` accepted on the value).
    ///
    /// Errors: [`AnalyzeError::FailOn`] naming the expression.
    pub fn parse(expr: &str) -> Result<FailOn, AnalyzeError> {
        let err = |m: &str| AnalyzeError::FailOn {
            expr: expr.to_string(),
            message: m.to_string(),
            metrics: METRICS.join(", "),
        };
        let s: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
        let pos = s
            .find(['>', '<', '='])
            .ok_or_else(|| err("no operator (>, >=, <, <=, =)"))?;
        let metric = s[..pos].to_ascii_lowercase();
        let rest = &s[pos..];
        let (op, n) = if let Some(r) = rest.strip_prefix(">=") {
            (Op::Ge, r)
        } else if let Some(r) = rest.strip_prefix("<=") {
            (Op::Le, r)
        } else if let Some(r) = rest.strip_prefix("==") {
            (Op::Eq, r)
        } else if let Some(r) = rest.strip_prefix('>') {
            (Op::Gt, r)
        } else if let Some(r) = rest.strip_prefix('<') {
            (Op::Lt, r)
        } else {
            (Op::Eq, &rest[1..])
        };
        if !METRICS.contains(&metric.as_str()) {
            return Err(err(&format!("unknown metric {metric:?}")));
        }
        let (num, pct) = match n.trim_start_matches('$').strip_suffix('%') {
            Some(p) => (p, true),
            None => (n.trim_start_matches('$'), false),
        };
        // NaN and infinity compare false (or always true): a gate that can never trip.
        let mut value: f64 = num
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| err(&format!("{n:?} is not a finite number")))?;
        if pct {
            value /= 100.0;
        }
        Ok(FailOn {
            expr: expr.to_string(),
            metric,
            op,
            value,
        })
    }

    /// The metric's value in a summary.
    pub fn actual(&self, s: &Summary) -> f64 {
        let jobs = |k: &str| s.jobs_by_state.get(k).copied().unwrap_or(0) as f64;
        match self.metric.as_str() {
            "polls" => s.polls as f64,
            "redundant-polls" => s.redundant_polls as f64,
            "polls-after-notified" => s.polls_after_notified as f64,
            "polls-while-pending" => s.polls_while_pending as f64,
            "wasted-tokens" => s.wasted_tokens as f64,
            "wasted-cost" => s.wasted_cost_usd,
            "cache-miss-tokens" => s.cache_miss_tokens as f64,
            "cache-miss-cost" => s.cache_miss_cost_usd,
            "cache-hit-rate" => s.cache_hit_rate,
            "total-cost" => s.total_cost_usd,
            "failed-jobs" => jobs("failed") + jobs("stopped"),
            "unnotified-jobs" => jobs("no_notification"),
            _ => 0.0,
        }
    }

    /// `Some(message)` when the gate trips.
    pub fn check(&self, s: &Summary) -> Option<String> {
        let a = self.actual(s);
        let v = self.value;
        let trips = match self.op {
            Op::Gt => a > v,
            Op::Ge => a >= v,
            Op::Lt => a < v,
            Op::Le => a <= v,
            Op::Eq => (a - v).abs() < 1e-9,
        };
        trips.then(|| format!("--fail-on {}: {} is {}", self.expr, self.metric, fmt_num(a)))
    }
}

fn fmt_num(a: f64) -> String {
    if a.fract() == 0.0 {
        format!("{a:.0}")
    } else {
        format!("{a:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_forms() {
        let g = FailOn::parse("cache-miss-cost>$0.50").unwrap();
        assert_eq!(
            (g.metric.as_str(), g.op, g.value),
            ("cache-miss-cost", Op::Gt, 0.5)
        );
        let g = FailOn::parse("cache-hit-rate < 80%").unwrap();
        assert_eq!((g.op, g.value), (Op::Lt, 0.8));
        assert_eq!(FailOn::parse("redundant-polls>=5").unwrap().op, Op::Ge);
        assert!(FailOn::parse("nonsense>1")
            .unwrap_err()
            .to_string()
            .contains("unknown metric"));
        assert!(FailOn::parse("polls 5").is_err());
        // Found by an adversarial test: thresholds that can never trip were accepted.
        for never in [
            "cache-miss-cost>$NaN",
            "cache-miss-cost>$inf",
            "polls>-inf",
            "polls<1e999",
        ] {
            let e = FailOn::parse(never).unwrap_err().to_string();
            assert!(e.contains("not a finite number"), "{never}: {e}");
        }
    }
}
