//! `record --tty`: the recorded CLI runs interactively, in a pseudo-terminal of a fixed
//! size, driven by the terminal part of the scenario ([`scenario`]); the screen is written
//! beside the trace as an asciicast v2 file ([`cast`]) whose markers are the recorded
//! exchanges on the same clock. Every way out ends the CLI and everything it started
//! ([`reap`]) and says why the session ended ([`End`]).
//!
//! Interactive Claude Code asks, on a fresh HOME, for a theme, an API key's approval and
//! the folder's trust before its prompt appears (measured on 2.1.304: with none of them
//! answered it also checks its connection to api.anthropic.com first and stops there).
//! [`seed_claude`] writes the answers into its global config, as a user who finished
//! onboarding has them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub mod cast;
pub mod reap;
pub mod scenario;
pub mod session;

pub use scenario::Terminal;

/// The exchanges the recording server writes, each just after its trace line
/// ([`crate::capture::server::RunningServer::subscribe`]); the session marks each in the cast.
pub type LiveExchanges = tokio::sync::broadcast::Receiver<Arc<crate::trace::Exchange>>;

/// Largest cast written, in bytes (64 MiB); output past it is counted, not written.
pub const MAX_CAST_BYTES: u64 = 64 << 20;

/// Errors of a terminal session.
#[derive(Debug, thiserror::Error)]
pub enum TtyError {
    /// The scenario's `terminal` part is not valid.
    #[error("{path}: {why}; see docs/scenario-format.md for the terminal part")]
    Scenario {
        /// The scenario file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The pseudo-terminal cannot be made, read or written.
    #[error("pseudo-terminal: {0} (is /dev/ptmx available?)")]
    Pty(#[source] std::io::Error),
    /// The CLI cannot be started on the terminal.
    #[error("cannot start {program} on a pseudo-terminal: {why} (check the command and PATH)")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        why: String,
    },
    /// The cast file cannot be written.
    #[error("cannot write the terminal cast: {0} (check the directory of --cast)")]
    Cast(#[source] std::io::Error),
    /// The CLI's config cannot be seeded.
    #[error("cannot write the CLI's config into the sandbox: {0}")]
    Seed(#[source] std::io::Error),
}

/// How to run a recording in a terminal.
#[derive(Clone, Debug)]
pub struct TtyConfig {
    /// The session's steps, answers, size and bounds.
    pub terminal: Terminal,
    /// Where the asciicast v2 file goes.
    pub cast: PathBuf,
    /// The cast's bound, in bytes ([`MAX_CAST_BYTES`] by default).
    pub max_cast_bytes: u64,
}

/// Why a terminal session ended.
#[derive(Clone, Debug, PartialEq)]
pub enum End {
    /// Every step was done (and the CLI exited, when the last step waits for that).
    Finished,
    /// The CLI exited before the steps were done (`None`: killed by a signal).
    Exited {
        /// Its exit code.
        code: Option<i32>,
    },
    /// A step waited past the step bound.
    Step {
        /// The step, from 1.
        step: usize,
        /// What it waited for.
        waited: String,
        /// The bound, in seconds.
        seconds: f64,
    },
    /// The whole session passed its bound.
    Timeout {
        /// The bound, in seconds.
        seconds: f64,
    },
    /// agentwire was interrupted.
    Interrupted,
}

impl End {
    /// The reason in words, for the summary.
    pub fn reason(&self) -> String {
        match self {
            End::Finished => "the scenario finished".into(),
            End::Exited { code: Some(c) } => {
                format!("the CLI exited (code {c}) before the scenario finished")
            }
            End::Exited { code: None } => {
                "the CLI was killed by a signal before the scenario finished".into()
            }
            End::Step {
                step,
                waited,
                seconds,
            } => format!(
                "step {step} waited {seconds} s for {waited}: the CLI may ask a question the scenario does not answer (add it to `answers`) or never go idle"
            ),
            End::Timeout { seconds } => {
                format!("the session passed its bound of {seconds} s (terminal.timeout_s)")
            }
            End::Interrupted => "agentwire was interrupted".into(),
        }
    }
}

/// What a terminal session did.
#[derive(Clone, Debug)]
pub struct TtyOutcome {
    /// Why it ended.
    pub end: End,
    /// The CLI's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// Steps done.
    pub steps_done: usize,
    /// Prompts answered.
    pub answered: usize,
    /// The last screen's text (redacted).
    pub screen: String,
    /// The cast file.
    pub cast: PathBuf,
    /// Events written to the cast.
    pub cast_events: u64,
    /// Output events left out because the cast reached its bound.
    pub cast_dropped: u64,
    /// Processes killed at the end (the CLI and what it started).
    pub reaped: usize,
    /// The session's length, in seconds.
    pub seconds: f64,
}

/// Run `spawn` in a terminal session on a blocking thread; an interrupt (`stop` resolving)
/// ends it as [`End::Interrupted`].
///
/// Errors: as [`session::drive`].
pub async fn run(
    spawn: (String, Vec<String>, BTreeMap<String, String>, PathBuf),
    cfg: &TtyConfig,
    exchanges: LiveExchanges,
    stop: impl std::future::Future<Output = ()>,
) -> Result<TtyOutcome, TtyError> {
    let flag = Arc::new(AtomicBool::new(false));
    let (f, cfg2) = (flag.clone(), cfg.clone());
    let task = tokio::task::spawn_blocking(move || {
        let (program, args, env, cwd) = &spawn;
        let s = session::Spawn {
            program,
            args,
            env,
            cwd,
        };
        session::drive(
            s,
            &cfg2.terminal,
            &cfg2.cast,
            cfg2.max_cast_bytes,
            exchanges,
            &f,
        )
    });
    tokio::pin!(task);
    tokio::select! {
        r = &mut task => r.map_err(|e| TtyError::Pty(std::io::Error::other(e.to_string())))?,
        _ = stop => {
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
            task.await.map_err(|e| TtyError::Pty(std::io::Error::other(e.to_string())))?
        }
    }
}

/// Claude Code's global config (`$CLAUDE_CONFIG_DIR/.claude.json`) as after onboarding:
/// theme chosen, the API key `key` approved (by its last 20 characters, as Claude Code
/// keeps it), and the folders `trusted` trusted with their onboarding done.
///
/// Errors: [`TtyError::Seed`] when the file cannot be written.
pub fn seed_claude(config: &Path, key: Option<&str>, trusted: &[&Path]) -> Result<(), TtyError> {
    let approved: Vec<String> = key
        .map(|k| k.chars().rev().take(20).collect::<Vec<_>>())
        .map(|r| r.into_iter().rev().collect())
        .into_iter()
        .collect();
    let projects: serde_json::Map<String, serde_json::Value> = trusted
        .iter()
        .map(|p| {
            (
                p.to_string_lossy().into_owned(),
                serde_json::json!({"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}),
            )
        })
        .collect();
    let cfg = serde_json::json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": approved, "rejected": []},
        "projects": projects,
    });
    std::fs::write(config.join(".claude.json"), cfg.to_string()).map_err(TtyError::Seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_gets_its_onboarding_key_approval_and_trust_seeded() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        seed_claude(
            dir.path(),
            Some("sk-ant-0123456789abcdefghijKLMN"),
            &[&work],
        )
        .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(".claude.json")).unwrap())
                .unwrap();
        assert_eq!(v["hasCompletedOnboarding"], true);
        assert_eq!(
            v["customApiKeyResponses"]["approved"][0],
            "456789abcdefghijKLMN"
        );
        assert_eq!(
            v["projects"][work.to_str().unwrap()]["hasTrustDialogAccepted"],
            true
        );
    }
}
