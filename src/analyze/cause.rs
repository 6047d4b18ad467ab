//! What the cache simulation says about one request: predicted figures, the missed
//! tokens, how they were billed instead, and the cause of the miss — including how a
//! divergence from the reference request is named (`divergence`).

use serde::Serialize;

use crate::api::cache::{CachePrefix, Chain, Region, LOOKBACK_BLOCKS};
use crate::api::prices::ModelPrice;

/// Why a request read less from the cache than its reference had cached.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MissCause {
    /// The first request of a session (whatever other sessions cached), or a thread
    /// whose prefix nothing earlier in its session shares.
    ColdStart,
    /// The entry expired: `gap_s` seconds since its last use, more than `ttl_s`.
    TtlExpired {
        /// Seconds between the entry's last use and this request.
        gap_s: f64,
        /// The entry's TTL in seconds.
        ttl_s: u64,
    },
    /// The tool list changed before the cached prefix ended.
    ToolsChanged {
        /// Tool names added.
        added: Vec<String>,
        /// Tool names removed.
        removed: Vec<String>,
        /// Tools with the same name and another definition (or `(order)`).
        changed: Vec<String>,
    },
    /// A system block changed.
    SystemChanged {
        /// System block index, from 0.
        block: usize,
        /// Byte offset of the first difference within the block's text.
        offset: usize,
    },
    /// An earlier message of the conversation was changed or removed.
    HistoryRewritten {
        /// Message index, from 0.
        message: usize,
    },
    /// The model changed.
    ModelChanged {
        /// Previous model.
        from: String,
        /// This request's model.
        to: String,
    },
    /// The request was routed to another cache: its `prompt_cache_key` (OpenAI) differs
    /// from the reference's, so no entry is shared.
    CacheKeyChanged {
        /// The reference's key.
        from: Option<String>,
        /// This request's key.
        to: Option<String>,
    },
    /// A setting that invalidates the system or messages level changed: the ids of the
    /// invalidation rules that fired (`web_search`, `web_fetch`, `citations`, `speed`,
    /// `tool_choice`, `disable_parallel_tool_use`, `images`, `thinking`, `effort`; see
    /// `crate::api::cache::INVALIDATION_RULES`).
    ParamsChanged {
        /// Rule ids.
        params: Vec<String>,
    },
    /// Earlier thinking blocks left the prefix: a thinking request added non-tool-result
    /// user content on a model that strips them.
    ThinkingStripped {
        /// Index of the first message that held a stripped block.
        message: usize,
    },
    /// The prefix is shorter than the model's minimum cacheable length.
    BelowMinimum {
        /// Tokens of the prefix up to the last breakpoint.
        tokens: u64,
        /// The minimum, tokens.
        minimum: u64,
    },
    /// The request has no cache breakpoint.
    NoBreakpoint,
    /// The cached entry lies more than 20 blocks before every breakpoint.
    LookbackExceeded {
        /// Blocks between the cached entry and the nearest later breakpoint.
        blocks: usize,
    },
    /// Recorded usage reports a miss where the simulation predicts a hit.
    Unexplained,
}

impl MissCause {
    /// The cause's name as in reports (`ttl_expired`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            MissCause::ColdStart => "cold_start",
            MissCause::TtlExpired { .. } => "ttl_expired",
            MissCause::ToolsChanged { .. } => "tools_changed",
            MissCause::SystemChanged { .. } => "system_changed",
            MissCause::HistoryRewritten { .. } => "history_rewritten",
            MissCause::ModelChanged { .. } => "model_changed",
            MissCause::CacheKeyChanged { .. } => "cache_key_changed",
            MissCause::ParamsChanged { .. } => "params_changed",
            MissCause::ThinkingStripped { .. } => "thinking_stripped",
            MissCause::BelowMinimum { .. } => "below_minimum",
            MissCause::NoBreakpoint => "no_breakpoint",
            MissCause::LookbackExceeded { .. } => "lookback_exceeded",
            MissCause::Unexplained => "unexplained",
        }
    }

    /// A short human description with the details (`gap 330.1 s > 300 s`, `+CronList`).
    pub fn detail(&self) -> String {
        match self {
            MissCause::ColdStart => String::new(),
            MissCause::TtlExpired { gap_s, ttl_s } => format!("gap {gap_s:.1} s > {ttl_s} s"),
            MissCause::ToolsChanged {
                added,
                removed,
                changed,
            } => {
                let mut v: Vec<String> = added.iter().map(|n| format!("+{n}")).collect();
                v.extend(removed.iter().map(|n| format!("-{n}")));
                v.extend(changed.iter().map(|n| format!("~{n}")));
                v.join(", ")
            }
            MissCause::SystemChanged { block, offset } => format!("block {block}, byte {offset}"),
            MissCause::HistoryRewritten { message } => format!("message {message}"),
            MissCause::ModelChanged { from, to } => format!("{from} -> {to}"),
            MissCause::CacheKeyChanged { from, to } => {
                let k = |k: &Option<String>| k.clone().unwrap_or_else(|| "(none)".into());
                format!("prompt_cache_key {} -> {}", k(from), k(to))
            }
            MissCause::ParamsChanged { params } => params.join(", "),
            MissCause::ThinkingStripped { message } => format!("from message {message}"),
            MissCause::BelowMinimum { tokens, minimum } => format!("{tokens} < {minimum} tokens"),
            MissCause::NoBreakpoint => String::new(),
            MissCause::LookbackExceeded { blocks } => {
                format!("{blocks} blocks > {LOOKBACK_BLOCKS}")
            }
            MissCause::Unexplained => "recorded usage says miss".to_string(),
        }
    }
}

/// How the missed tokens were billed instead of as a cache read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BilledAs {
    /// Written to the cache with the 5-minute TTL.
    #[serde(rename = "write_5m")]
    Write5m,
    /// Written with the 1-hour TTL.
    #[serde(rename = "write_1h")]
    Write1h,
    /// Partly 1 hour, partly 5 minutes: the request wrote both and missed more tokens than
    /// it wrote at 1 hour. The API requires 1-hour breakpoints before 5-minute ones, so
    /// the missed tokens (the earliest written) are the 1-hour writes first, the rest 5m.
    #[serde(rename = "write_1h_5m")]
    Write1h5m,
    /// Uncached input.
    Input,
}

impl BilledAs {
    /// How `miss` tokens of a request that wrote `write_5m` and `write_1h` tokens were
    /// billed. The missed tokens start where the read stopped, as the writes do, and the
    /// 1-hour writes come first (Anthropic, "Prompt caching", "Mixing different TTLs":
    /// cache entries with a longer TTL must appear before shorter ones). A miss with
    /// nothing written was uncached input. With nothing missed, the rate of the writes.
    pub fn of(miss: u64, write_5m: u64, write_1h: u64) -> BilledAs {
        if write_1h == 0 {
            if miss > 0 && write_5m == 0 {
                BilledAs::Input
            } else {
                BilledAs::Write5m
            }
        } else if miss <= write_1h {
            BilledAs::Write1h
        } else {
            BilledAs::Write1h5m
        }
    }

    /// What `miss` tokens billed this way cost beyond a cache read, USD, at `p`'s prices
    /// (USD/MTok); `write_1h`: the request's 1-hour writes (the part of a
    /// [`BilledAs::Write1h5m`] miss at the 1-hour rate).
    pub fn extra_cost_usd(self, p: &ModelPrice, miss: u64, write_1h: u64) -> f64 {
        let at_1h = match self {
            BilledAs::Write1h => miss,
            BilledAs::Write1h5m => miss.min(write_1h),
            BilledAs::Write5m | BilledAs::Input => 0,
        };
        let rest = if self == BilledAs::Input {
            p.input
        } else {
            p.write_5m
        };
        (at_1h as f64 * (p.write_1h - p.read) + (miss - at_1h) as f64 * (rest - p.read)) / 1e6
    }
}

/// The simulation's verdict for one request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CachePrediction {
    /// Predicted cache-read tokens.
    pub read: u64,
    /// Predicted cache-write tokens, 5-minute TTL.
    pub write_5m: u64,
    /// Predicted cache-write tokens, 1-hour TTL.
    pub write_1h: u64,
    /// Predicted uncached input tokens.
    pub uncached: u64,
    /// Breakpoints used (at most 4).
    pub breakpoints: usize,
    /// `seq` of the reference request, if any.
    pub reference: Option<usize>,
    /// Tokens that were not read although the reference had them cached (0 for a hit).
    pub miss_tokens: u64,
    /// How the missed tokens were billed.
    pub billed_as: BilledAs,
    /// Why, when `miss_tokens > 0` or the request could not use the cache at all.
    pub cause: Option<MissCause>,
}

/// Why a request's prefix (`now`, chained as `chain`) diverged from its reference's
/// (`before`, whose blocks sit in `before_regions`) at block `common`.
pub(super) fn divergence(
    now: &CachePrefix,
    before: &CachePrefix,
    before_regions: &[(Region, usize)],
    chain: &Chain,
    common: usize,
) -> MissCause {
    if now.model != before.model {
        return MissCause::ModelChanged {
            from: before.model.clone(),
            to: now.model.clone(),
        };
    }
    if now.routing_key != before.routing_key {
        return MissCause::CacheKeyChanged {
            from: before.routing_key.clone(),
            to: now.routing_key.clone(),
        };
    }
    let region = now.blocks.get(common).map(|b| (b.region, b.index));
    let prev_region = before_regions.get(common).copied();
    let in_region = |want: Region| {
        matches!(region, Some((g, _)) if g == want)
            || matches!(prev_region, Some((g, _)) if g == want)
    };
    if in_region(Region::Tools) {
        return tools_changed(&now.tools, &before.tools);
    }
    if Some(common) == chain.system_start {
        let changed = now.changed_keys(before, Region::System);
        if !changed.is_empty() {
            return params(changed);
        }
    }
    if in_region(Region::System) {
        let block = match (region, prev_region) {
            (Some((Region::System, i)), _) | (_, Some((Region::System, i))) => i,
            _ => 0,
        };
        let a = before
            .system
            .get(block)
            .map_or("", String::as_str)
            .as_bytes();
        let b = now.system.get(block).map_or("", String::as_str).as_bytes();
        let offset = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        return MissCause::SystemChanged { block, offset };
    }
    if Some(common) == chain.messages_start {
        let changed = now.changed_keys(before, Region::Messages);
        if !changed.is_empty() {
            return params(changed);
        }
    }
    let message = match (region, prev_region) {
        (Some((Region::Messages, i)), _) | (_, Some((Region::Messages, i))) => i,
        _ => 0,
    };
    if now.thinking_stripped && !before.thinking_stripped {
        return MissCause::ThinkingStripped { message };
    }
    MissCause::HistoryRewritten { message }
}

fn params(changed: Vec<&'static str>) -> MissCause {
    MissCause::ParamsChanged {
        params: changed.into_iter().map(str::to_string).collect(),
    }
}

/// Loaded tools added, removed or changed between two prefixes.
fn tools_changed(now: &[(String, u64)], before: &[(String, u64)]) -> MissCause {
    let has = |t: &[(String, u64)], n: &str| t.iter().any(|(x, _)| x == n);
    let added: Vec<String> = now
        .iter()
        .filter(|(n, _)| !has(before, n))
        .map(|(n, _)| n.clone())
        .collect();
    let removed: Vec<String> = before
        .iter()
        .filter(|(n, _)| !has(now, n))
        .map(|(n, _)| n.clone())
        .collect();
    let mut changed: Vec<String> = now
        .iter()
        .filter(|(n, h)| before.iter().any(|(pn, ph)| pn == n && ph != h))
        .map(|(n, _)| n.clone())
        .collect();
    if added.is_empty() && removed.is_empty() && changed.is_empty() {
        changed.push("(order)".to_string());
    }
    MissCause::ToolsChanged {
        added,
        removed,
        changed,
    }
}
