//! The columns every Parquet table shares since schema version 2: `schema_version` and who
//! sent the rows — `agent` (the agent CLI: `claude-code`, `codex`, `gemini`, `opencode`;
//! null when neither the User-Agent nor the recording context names one), `provider`
//! (`anthropic`, `openai`, `google`: whose API the request speaks; an OpenAI-compatible
//! server spoken to in Chat Completions is `openai`) and `dialect` (`messages`,
//! `responses`, `chat_completions`, `gemini`). Requests carry their own; episodes, jobs,
//! decisions and threads those of their thread's first request, as the partition keys do.
//! One query then spans Claude Code, Codex, Gemini CLI and opencode
//! (`select agent, provider, sum(redundant) from episodes group by all`).

use std::collections::HashMap;

use super::column::{i64s, opt_strs, strs, Col};
use crate::analyze::Analysis;

/// The version of the tables' layout and columns, written in every file's key-value
/// metadata (key [`SCHEMA_KEY`]) and as the `schema_version` column of every table.
/// 1: the tables before the key existed (no `schema_version`, `agent`, `provider` or
/// `dialect` column); 2: those columns added, nothing else changed.
pub const SCHEMA_VERSION: i64 = 2;

/// The key-value metadata key holding [`SCHEMA_VERSION`] in every Parquet file.
pub const SCHEMA_KEY: &str = "agentwire.parquet_schema_version";

/// Who sent a row: `(agent, provider, dialect)`.
type Origin = (Option<String>, String, String);

/// The shared columns of every table, in [`super::TABLES`] order, each as long as its
/// table.
pub(super) fn columns(a: &Analysis) -> [Vec<Col>; 5] {
    let of = |r: &crate::analyze::RequestRow| -> Origin {
        (
            r.agent.clone(),
            r.dialect.provider().name().to_string(),
            r.dialect.name().to_string(),
        )
    };
    let mut of_thread: HashMap<&str, Origin> = HashMap::new();
    for r in &a.requests {
        of_thread.entry(r.thread.as_str()).or_insert_with(|| of(r));
    }
    let thread = |t: &str| {
        of_thread
            .get(t)
            .cloned()
            .unwrap_or((None, String::new(), String::new()))
    };
    let requests: Vec<Origin> = a.requests.iter().map(of).collect();
    let episodes: Vec<Origin> = a.episodes.iter().map(|e| thread(&e.thread)).collect();
    let jobs: Vec<Origin> = a.jobs.iter().map(|j| thread(&j.job.thread_label)).collect();
    // One decision record per job, in the jobs' order.
    let decisions = jobs.clone();
    let threads: Vec<Origin> = a.threads.iter().map(|t| thread(&t.thread)).collect();
    [requests, episodes, jobs, decisions, threads].map(|rows| cols(&rows))
}

/// The four shared columns of a table whose rows came from `rows`.
fn cols(rows: &[Origin]) -> Vec<Col> {
    vec![
        i64s("schema_version", rows.iter().map(|_| SCHEMA_VERSION)),
        opt_strs("agent", rows.iter().map(|o| o.0.clone())),
        strs("provider", rows.iter().map(|o| o.1.clone())),
        strs("dialect", rows.iter().map(|o| o.2.clone())),
    ]
}
