//! The report's row types: one per input file, Messages request, poll episode,
//! background job and thread. Each is a row of the `--format json` output
//! (`schemas/analyze.schema.json`) and of the Parquet tables; the totals over them are in
//! [`super::summary`], the whole report in [`super::build`].

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::analyze::cause::{CachePrediction, MissCause};
use crate::analyze::jobs::Job;
use crate::api::prices::Tokens;

/// Unreadable lines of an input described one by one; the rest are counted.
pub const LISTED_BAD_LINES: usize = 3;

/// Facts about one input trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InputInfo {
    /// Path (or a name for in-memory input).
    pub path: String,
    /// Exchanges read.
    pub exchanges: usize,
    /// Messages requests analysed.
    pub messages_requests: usize,
    /// Exchanges of other endpoints (count_tokens, models, ...), not analysed (files of a
    /// directory that were not read are in [`super::Analysis::skipped_files`]).
    pub skipped: usize,
    /// Messages requests whose body is not a JSON object: `exchange N: reason`.
    pub bad_bodies: Vec<String>,
    /// Unreadable lines of the trace file.
    pub bad_lines: usize,
    /// What the first [`LISTED_BAD_LINES`] unreadable lines were (line, byte offset, why),
    /// for the warning; not part of the JSON report.
    #[serde(skip)]
    pub bad_line_notes: Vec<String>,
    /// Responses whose request was not captured (a packet capture that began
    /// mid-conversation) that carry usage: not analysed as requests, but counted in the
    /// summary's token and cost totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub responses_without_request: Option<Unattributed>,
}

/// A file under a directory input that was not read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SkippedFile {
    /// The directory input it is under, as named.
    pub input: String,
    /// Its path (`dir/sub/notes.txt`).
    pub path: String,
    /// Why: what it looks like and what agentwire reads.
    pub reason: String,
}

/// Usage of responses whose request was not captured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Unattributed {
    /// Responses.
    pub responses: usize,
    /// Their recorded token figures.
    pub tokens: Tokens,
    /// Their cost at the model's prices, USD.
    pub cost_usd: f64,
}

/// One poll episode.
#[derive(Clone, Debug, Serialize)]
pub struct EpisodeRow {
    /// Thread label.
    pub thread: String,
    /// `same_call`, `task_output`, `shell_inspect`.
    pub kind: String,
    /// Tool.
    pub tool: String,
    /// Target.
    pub target: String,
    /// Job reference, if linked.
    pub job: Option<String>,
    /// Polls.
    pub polls: usize,
    /// Redundant polls.
    pub redundant: usize,
    /// Polls after the completion was notified.
    pub after_notified: usize,
    /// Polls while a notification was pending.
    pub while_pending: usize,
    /// First poll.
    pub first_at: DateTime<Utc>,
    /// Last poll.
    pub last_at: DateTime<Utc>,
    /// Mean seconds between polls.
    pub mean_interval_s: Option<f64>,
    /// Seconds from the job's start to its notification.
    pub job_duration_s: Option<f64>,
    /// Tokens of the triggered model calls.
    pub tokens: Tokens,
    /// Their cost, USD.
    pub cost_usd: f64,
    /// Tokens of the calls redundant polls triggered (input + output).
    pub wasted_tokens: u64,
    /// Their cost, USD.
    pub wasted_cost_usd: f64,
    /// `tool_use` ids of the polls, in order.
    pub calls: Vec<String>,
    /// The redundant polls and what made each result equal to the previous one
    /// (`identical`, or the normalization rules that fired).
    pub redundant_calls: Vec<RedundantPoll>,
}

/// A redundant poll and why.
#[derive(Clone, Debug, Serialize)]
pub struct RedundantPoll {
    /// `tool_use` id.
    pub call: String,
    /// `identical`, or the normalization rules that made the results equal.
    pub equal_by: Vec<String>,
}

/// One Messages request.
#[derive(Clone, Debug, Serialize)]
pub struct RequestRow {
    /// Position among all analysed requests.
    pub seq: usize,
    /// Input trace index (in [`super::Analysis::inputs`]: one per file, a directory's
    /// files one by one).
    pub trace: usize,
    /// The file the request was read from (`inputs[trace].path`; for a directory input,
    /// the file under it). Exchange ids are unique within a file.
    pub file: String,
    /// Exchange id in that trace.
    pub exchange: u64,
    /// Session label (`s1`, …).
    pub session: String,
    /// Thread label.
    pub thread: String,
    /// Turn within the thread (assistant messages in the history).
    pub turn: usize,
    /// Start time.
    pub at: DateTime<Utc>,
    /// The client's version (User-Agent `claude-cli/…`, else the recording context):
    /// the Parquet tables' partition key, not part of the JSON.
    #[serde(skip)]
    pub cli_version: Option<String>,
    /// The agent CLI (User-Agent, else the recording context's `cli`): a Parquet column,
    /// not part of the JSON.
    #[serde(skip)]
    pub agent: Option<String>,
    /// The wire format (and through it the provider): a Parquet column, not part of the
    /// JSON.
    #[serde(skip)]
    pub dialect: crate::api::Dialect,
    /// Model.
    pub model: String,
    /// `simulated` or `recorded`: which figures `tokens` holds.
    pub usage: String,
    /// Why: `recorded usage with cache fields`, `--usage simulated`, `synthesized by
    /// agentwire (…)`, `no cache fields in the recorded usage`, `no recorded usage`.
    pub usage_reason: String,
    /// The simulation's figures and diagnosis.
    pub predicted: CachePrediction,
    /// Recorded figures, if the response had usage.
    pub observed: Option<Tokens>,
    /// Figures used for cost.
    pub tokens: Tokens,
    /// Cost, USD (`null`: the model is unpriced).
    pub cost_usd: Option<f64>,
    /// `hit`, `partial`, `miss`, `cold`, `uncached`.
    pub status: String,
    /// The miss cause (structured), if any.
    pub cause: Option<MissCause>,
    /// The cause as text (`gap 330.1 s > 300 s`, `+CronList`).
    pub cause_detail: Option<String>,
    /// Missed tokens.
    pub miss_tokens: u64,
    /// Their extra cost over cache reads, USD (`null`: the model is unpriced).
    pub miss_cost_usd: Option<f64>,
    /// Predicted and observed agree (only where observed cache fields exist).
    pub agrees: Option<bool>,
    /// Cache writes billed at another TTL than the breakpoints asked for (absent when
    /// billed as asked or when the usage does not split writes by TTL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl_billed: Option<super::TtlBilled>,
    /// The API error the response held, `type: message` (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error: Option<String>,
}

/// One background job.
#[derive(Clone, Debug, Serialize)]
pub struct JobRow {
    /// The job.
    #[serde(flatten)]
    pub job: Job,
    /// Seconds from start to notification.
    pub duration_s: Option<f64>,
}

/// One thread.
#[derive(Clone, Debug, Serialize)]
pub struct ThreadRow {
    /// Session label (`s1`, …).
    pub session: String,
    /// Label (`main`, `sub-N`, `side-N`; `sN/…` when the input holds several sessions).
    pub thread: String,
    /// Requests.
    pub requests: usize,
    /// Polls.
    pub polls: usize,
    /// Redundant polls.
    pub redundant_polls: usize,
    /// Token figures used.
    pub tokens: Tokens,
    /// `read / input`, a fraction from 0 to 1.
    pub cache_hit_rate: f64,
    /// Missed tokens (except cold start).
    pub miss_tokens: u64,
    /// Their extra cost, USD.
    pub miss_cost_usd: f64,
    /// Cost, USD.
    pub cost_usd: f64,
}
