//! What the cache simulation says about one request: predicted figures, the missed
//! tokens, how they were billed instead, and the cause of the miss.

use serde::Serialize;

use super::cache::LOOKBACK_BLOCKS;

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
    /// Uncached input.
    Input,
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
