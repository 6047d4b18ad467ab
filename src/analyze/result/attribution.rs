//! One attribution of a trace's cost in which every dollar is counted once
//! ([`CostAttribution`]): each cache miss's extra over a hit under its cause, each
//! redundant poll at what its model call cost beyond that call's own miss extra, the rest
//! useful work, and usage no analysed request carries. The parts sum to
//! [`super::Totals::total_cost_usd`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::rows::{EpisodeRow, RequestRow};

/// Every dollar of the analysed traces counted once (USD). `useful_usd +
/// redundant_polls_usd + Σ cache_misses_usd + unattributed_usd = total_usd`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CostAttribution {
    /// What the requests cost beyond the two kinds of waste below: the work itself.
    pub useful_usd: f64,
    /// The model calls redundant polls triggered (a call's cost split among the tool
    /// results it carried), less the cache-miss extra of those calls, which is counted
    /// under its cause.
    pub redundant_polls_usd: f64,
    /// Per miss cause (`cold_start` included), the extra the missed tokens cost over a
    /// cache read ([`RequestRow::miss_cost_usd`], never more than the request's cost).
    pub cache_misses_usd: BTreeMap<String, f64>,
    /// Usage of responses whose request was not captured (not attributable to a cause).
    pub unattributed_usd: f64,
    /// The whole cost.
    pub total_usd: f64,
}

impl CostAttribution {
    /// The attribution of `rows` (priced requests) and `episodes` (whose
    /// `wasted_cost_usd` is already net of the calls' miss extras).
    pub fn of(rows: &[RequestRow], episodes: &[EpisodeRow]) -> CostAttribution {
        let mut a = CostAttribution::default();
        let mut total = 0.0;
        for r in rows {
            total += r.cost_usd.unwrap_or(0.0);
            if let (Some(c), true) = (&r.cause, r.miss_tokens > 0) {
                *a.cache_misses_usd.entry(c.name().to_string()).or_default() +=
                    r.miss_cost_usd.unwrap_or(0.0);
            }
        }
        a.redundant_polls_usd = episodes.iter().map(|e| e.wasted_cost_usd).sum();
        let misses: f64 = a.cache_misses_usd.values().sum();
        // Per request, its miss extra plus its redundant share of the rest is at most its
        // cost, so the remainder is never negative beyond rounding.
        a.useful_usd = (total - misses - a.redundant_polls_usd).max(0.0);
        a.total_usd = total;
        a
    }

    /// Count usage no analysed request carries.
    pub fn add_unattributed(&mut self, cost_usd: f64) {
        self.unattributed_usd += cost_usd;
        self.total_usd += cost_usd;
    }

    /// The parts as `(label, USD, what it contains)`, in the order reports show them.
    pub fn parts(&self) -> Vec<(String, f64, &'static str)> {
        let mut v = vec![(
            "useful work".to_string(),
            self.useful_usd,
            "what the requests cost beyond the waste below",
        )];
        v.push((
            "redundant polls".into(),
            self.redundant_polls_usd,
            "the model calls redundant polls triggered, less their cache-miss extra",
        ));
        for (cause, usd) in &self.cache_misses_usd {
            v.push((
                format!("cache miss: {cause}"),
                *usd,
                "the missed tokens' extra over a cache read",
            ));
        }
        if self.unattributed_usd > 0.0 {
            v.push((
                "unattributed".into(),
                self.unattributed_usd,
                "responses whose request was not captured",
            ));
        }
        v
    }
}
