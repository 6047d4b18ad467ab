//! `analyze --fail-on`: the metrics a gate can name and their values in the totals
//! ([`Totals`]), e.g. `redundant-polls>5`, `cache-miss-cost>$0.50`, `cache-hit-rate<80%`.
//! The grammar is [`crate::gate`]'s, with levels as values.

use super::result::Totals;
use crate::gate::{Condition, Gate, GateError, Metrics, Values};

/// Metric names (each its own id); [`actual`] reads them from the totals.
pub const METRICS: &[(&str, &str)] = &[
    ("polls", "polls"),
    ("redundant-polls", "redundant-polls"),
    ("polls-after-notified", "polls-after-notified"),
    ("polls-while-pending", "polls-while-pending"),
    ("wasted-tokens", "wasted-tokens"),
    ("wasted-cost", "wasted-cost"),
    ("cache-miss-tokens", "cache-miss-tokens"),
    ("cache-miss-cost", "cache-miss-cost"),
    ("cache-hit-rate", "cache-hit-rate"),
    ("total-cost", "total-cost"),
    ("failed-jobs", "failed-jobs"),
    ("unnotified-jobs", "unnotified-jobs"),
];

/// What an `analyze` gate can name: no flags, the [`METRICS`], levels as values.
pub fn metrics() -> Metrics {
    let names: Vec<&str> = METRICS.iter().map(|(n, _)| *n).collect();
    Metrics {
        flags: &[],
        names: METRICS,
        values: Values::Level,
        no_operator: "no operator (>, >=, <, <=, =)".into(),
        hint: format!(
            " (example: `redundant-polls>5`, `cache-miss-cost>$0.50`; metrics: {})",
            names.join(", ")
        ),
    }
}

/// Parse `METRIC OP VALUE` (spaces allowed, `$` and `%` accepted on the value; dollars
/// for `*-cost`, a fraction for `cache-hit-rate`: `80%` = 0.8).
///
/// Errors: [`GateError::Bad`] naming the expression.
pub fn parse(expr: &str) -> Result<Gate, GateError> {
    crate::gate::parse(expr, &metrics())
}

/// The value of `metric` (one of [`METRICS`]) in the totals.
pub fn actual(metric: &str, s: &Totals) -> f64 {
    let jobs = |k: &str| s.jobs_by_state.get(k).copied().unwrap_or(0) as f64;
    match metric {
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

/// `Some(message)` when gate `g` (parsed by [`parse`]) trips on the totals.
pub fn check(g: &Gate, s: &Totals) -> Option<String> {
    let Condition::Compare {
        metric,
        op,
        threshold,
    } = g.cond
    else {
        return None;
    };
    let a = actual(metric, s);
    op.holds(a, threshold.value())
        .then(|| format!("--fail-on {}: {} is {}", g.expr, metric, fmt_num(a)))
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
    use crate::gate::Op;

    #[test]
    fn parse_forms() {
        let (metric, op, value) = parse("cache-miss-cost>$0.50")
            .unwrap()
            .comparison()
            .unwrap();
        assert_eq!(
            (metric, op, value.value()),
            ("cache-miss-cost", Op::Gt, 0.5)
        );
        let (_, op, value) = parse("cache-hit-rate < 80%").unwrap().comparison().unwrap();
        assert_eq!((op, value.value()), (Op::Lt, 0.8));
        assert_eq!(
            parse("redundant-polls>=5").unwrap().comparison().unwrap().1,
            Op::Ge
        );
        assert!(parse("nonsense>1")
            .unwrap_err()
            .to_string()
            .contains("unknown metric"));
        assert!(parse("polls 5").is_err());
        // Found by an adversarial test: thresholds that can never trip were accepted.
        for never in [
            "cache-miss-cost>$NaN",
            "cache-miss-cost>$inf",
            "polls>-inf",
            "polls<1e999",
        ] {
            let e = parse(never).unwrap_err().to_string();
            assert!(e.contains("not a finite number"), "{never}: {e}");
        }
    }
}
