//! The whole report, [`Analysis`]: its rows, totals and warnings as `--format json` writes
//! them (described by `schemas/analyze.schema.json`); built by [`Analysis::build`].

use std::collections::BTreeMap;

use serde::Serialize;

use super::rows::{EpisodeRow, InputInfo, JobRow, RequestRow, SkippedFile, ThreadRow};
use super::summary::Totals;
use crate::analyze::cache::TtlMode;
use crate::analyze::config::UsageMode;
use crate::analyze::jobs::DecisionRecord;
use crate::analyze::mcp::McpAnalysis;
use crate::api::session::SessionInfo;

/// Version of the JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// JSON shape version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The `--usage` setting.
    pub usage_mode: UsageMode,
    /// Requests costed with simulated figures and with recorded ones, and why.
    pub usage_used: UsageUsed,
    /// The `--ttl` setting.
    pub ttl: TtlMode,
    /// Price table citation.
    pub prices: PriceInfo,
    /// The files read, in order: each input file, and each file under a directory input
    /// (so a directory gives the same inputs as naming its files one by one).
    pub inputs: Vec<InputInfo>,
    /// Files under a directory input that were not read (not a trace, an unknown layout,
    /// not a regular file), with why.
    pub skipped_files: Vec<SkippedFile>,
    /// Sessions (`s1`, …), in order of first appearance.
    pub sessions: Vec<SessionInfo>,
    /// Things the reader should know: unpriced models (cost `null`), assumptions made.
    pub warnings: Vec<String>,
    /// Totals.
    pub summary: Totals,
    /// One row per thread.
    pub threads: Vec<ThreadRow>,
    /// One row per poll episode.
    pub episodes: Vec<EpisodeRow>,
    /// One row per Messages request.
    pub requests: Vec<RequestRow>,
    /// One row per background job.
    pub jobs: Vec<JobRow>,
    /// One decision record per job.
    pub decisions: Vec<DecisionRecord>,
    /// The MCP layer and its link to the model layer; absent from the JSON when the
    /// inputs hold no `mcp` records.
    #[serde(skip_serializing_if = "McpAnalysis::is_empty")]
    pub mcp: McpAnalysis,
}

/// How many requests used which figures, and why.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UsageUsed {
    /// Costed with simulated figures.
    pub simulated: usize,
    /// Costed with recorded figures.
    pub recorded: usize,
    /// Requests per reason (the [`RequestRow::usage_reason`] values).
    pub reasons: BTreeMap<String, usize>,
}

/// Where prices come from.
#[derive(Clone, Debug, Serialize)]
pub struct PriceInfo {
    /// Citation.
    pub source: String,
    /// Date checked.
    pub date: String,
}
