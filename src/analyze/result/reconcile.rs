//! A request's prediction reconciled with the usage its response recorded: which figures
//! cost it ([`usage_choice`]), whether the two agree, the miss bounded by what the request
//! was billed ([`reconcile`]), and a TTL billed other than asked ([`TtlBilled`]).

use serde::Serialize;

use crate::analyze::cause::{BilledAs, CachePrediction, MissCause};
use crate::analyze::config::UsageMode;
use crate::analyze::requests::Request;
use crate::api::prices::{ModelPrice, Tokens};
use crate::api::Usage;

/// A request whose cache writes were billed at another TTL than its breakpoints asked for
/// (Anthropic reports the split in `usage.cache_creation.ephemeral_5m_input_tokens` /
/// `ephemeral_1h_input_tokens`; source: "Prompt caching", "Tracking cache performance",
/// <https://platform.claude.com/docs/en/build-with-claude/prompt-caching>).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TtlBilled {
    /// The TTL the breakpoints asked for: `1h` or `5m`.
    pub asked: &'static str,
    /// The TTL the writes were billed at: `5m` or `1h`.
    pub billed: &'static str,
    /// Tokens written at the other TTL.
    pub tokens: u64,
    /// What those tokens cost as billed minus what they would have cost as asked, USD
    /// (negative: billed less than asked; `null`: the model is unpriced).
    pub cost_difference_usd: Option<f64>,
}

/// What reconciling found.
pub(super) struct Reconciled {
    /// Predicted and recorded agree (`None`: nothing to compare).
    pub agrees: Option<bool>,
    /// The 1-hour writes of the figures the miss was found in.
    pub written_1h: u64,
    /// The writes billed at another TTL than asked.
    pub ttl_billed: Option<TtlBilled>,
}

/// Which usage figures to cost a request with, and why.
pub(super) fn usage_choice(mode: UsageMode, r: &Request, obs: &Option<Tokens>) -> (bool, String) {
    let has_cache_fields = r.recorded.as_ref().is_some_and(|u| u.has_cache_fields());
    match mode {
        UsageMode::Simulated => (false, "--usage simulated".into()),
        UsageMode::Recorded if obs.is_some() => (true, "--usage recorded".into()),
        UsageMode::Recorded => (false, "no recorded usage".into()),
        UsageMode::Auto => match (&r.synthesized, obs, has_cache_fields) {
            (Some(why), _, _) => (false, why.clone()),
            (None, None, _) => (false, "no recorded usage".into()),
            (None, Some(_), false) => (false, "no cache fields in the recorded usage".into()),
            (None, Some(_), true) => (true, "recorded usage with cache fields".into()),
        },
    }
}

/// Compare the `simulated` figures with the `recorded` ones (which carry cache fields of
/// `usage`): whether they agree (the same hit/miss verdict, a read share within 10 points
/// and the writes billed at the TTL asked), and the 1-hour writes of the figures a miss was
/// found in. A recorded read below the simulated one that the simulation did not explain
/// becomes an [`MissCause::Unexplained`] miss of `pred`. The recorded figures bound the
/// miss: a request cannot have missed more than it wrote or paid as uncached input, and a
/// cold start misses what it wrote (it may have read another session's entries, e.g. a
/// `scope: global` system block). `check_ttl`: the breakpoints' own TTLs were simulated
/// (`--ttl auto`), so a TTL billed otherwise is a disagreement.
pub(super) fn reconcile(
    pred: &mut CachePrediction,
    recorded: &Tokens,
    simulated: &Tokens,
    usage: Option<&Usage>,
    check_ttl: bool,
    price: Option<&ModelPrice>,
) -> Reconciled {
    let share = |t: &Tokens| {
        if t.input() == 0 {
            0.0
        } else {
            t.read as f64 / t.input() as f64
        }
    };
    let mut ok = (recorded.read > 0) == (simulated.read > 0)
        && (share(recorded) - share(simulated)).abs() <= 0.10;
    let mut written_1h = pred.write_1h;
    if recorded.read < simulated.read && pred.cause.is_none() {
        pred.cause = Some(MissCause::Unexplained);
        pred.miss_tokens = simulated.read - recorded.read;
        pred.billed_as = BilledAs::of(pred.miss_tokens, recorded.write_5m, recorded.write_1h);
        written_1h = recorded.write_1h;
    }
    let bound = match pred.cause {
        Some(MissCause::ColdStart) => recorded.write(),
        _ => recorded.write().saturating_add(recorded.uncached),
    };
    if pred.miss_tokens > bound {
        pred.miss_tokens = bound;
        pred.billed_as = BilledAs::of(bound, recorded.write_5m, recorded.write_1h);
        written_1h = recorded.write_1h;
        if bound == 0 {
            pred.cause = None;
        }
    }
    let split_known = usage.is_some_and(|u| {
        u.ephemeral_5m_input_tokens.is_some() || u.ephemeral_1h_input_tokens.is_some()
    });
    let ttl_billed = (check_ttl && split_known)
        .then(|| ttl_billed(simulated, recorded, price))
        .flatten();
    if ttl_billed.is_some() {
        ok = false;
    }
    Reconciled {
        agrees: Some(ok),
        written_1h,
        ttl_billed,
    }
}

/// Writes the breakpoints asked at one TTL that were billed only at the other.
fn ttl_billed(asked: &Tokens, billed: &Tokens, price: Option<&ModelPrice>) -> Option<TtlBilled> {
    let (a, b, tokens, per_mtok) = if asked.write_1h > 0 && billed.write_1h == 0 {
        let t = asked.write_1h.min(billed.write_5m);
        ("1h", "5m", t, price.map(|p| p.write_5m - p.write_1h))
    } else if asked.write_1h == 0 && asked.write_5m > 0 && billed.write_1h > 0 {
        let t = asked.write_5m.min(billed.write_1h);
        ("5m", "1h", t, price.map(|p| p.write_1h - p.write_5m))
    } else {
        return None;
    };
    (tokens > 0).then(|| TtlBilled {
        asked: a,
        billed: b,
        tokens,
        cost_difference_usd: per_mtok.map(|d| tokens as f64 * d / 1e6),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(uncached: u64, read: u64, w5: u64, w1: u64) -> Tokens {
        Tokens {
            uncached,
            read,
            write_5m: w5,
            write_1h: w1,
            output: 0,
        }
    }

    #[test]
    fn one_hour_asked_five_minutes_billed_is_said_with_the_price_difference() {
        let p = ModelPrice {
            model: "m".into(),
            ids: vec![],
            input: 3.0,
            output: 15.0,
            write_5m: 3.75,
            write_1h: 6.0,
            read: 0.3,
            min_cacheable: 1024,
            source: None,
            checked: None,
        };
        let got = ttl_billed(&t(10, 0, 0, 2000), &t(10, 0, 2000, 0), Some(&p)).unwrap();
        assert_eq!((got.asked, got.billed, got.tokens), ("1h", "5m", 2000));
        // 2000 tokens × (3.75 − 6.00) $/MTok = −$0.0045.
        assert!((got.cost_difference_usd.unwrap() + 0.0045).abs() < 1e-12);
        assert!(ttl_billed(&t(10, 0, 0, 2000), &t(10, 0, 0, 2000), Some(&p)).is_none());
    }
}
