//! [`SpecResolver`]: inputs given as CLI specs (`claude-code@2.1.304`, `claude-code@latest`)
//! where a command takes traces (`diff`, `report diff`), recorded on the fly with the
//! default arguments (`-p hello`) under the server their caller configures.
//!
//! The recordings go to a directory the caller names (kept; one there already is
//! replaced only with `force`) or to a temporary one removed with the resolver. Progress
//! lines go to a callback; nothing is printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{record, RecordConfig, RecordError, RecordOutcome, Target};
use crate::capture::npm::CliSpec;
use crate::capture::route::Route;
use crate::capture::server::ServerConfig;
use crate::capture::versions::CliRequest;
use crate::trace::Trace;

/// Wall-clock limit of one recording made for a spec input.
pub const SPEC_TIMEOUT: Duration = Duration::from_secs(300);

/// Records the inputs that name a CLI version instead of a file.
pub struct SpecResolver {
    env: Vec<(String, Option<String>)>,
    dir: PathBuf,
    route: Option<Route>,
    /// `route` was chosen by the caller (it only applies to specs).
    route_given: bool,
    /// The recordings are kept (the caller named the directory).
    keep: bool,
    force: bool,
    server: ServerConfig,
    /// A spec was recorded.
    used: AtomicBool,
    _temp: Option<tempfile::TempDir>,
}

/// One recording a [`SpecResolver`] made.
#[derive(Debug)]
pub struct Recording {
    /// Where its trace is.
    pub output: PathBuf,
    /// What the run did.
    pub outcome: RecordOutcome,
}

impl Recording {
    /// The recorded trace.
    ///
    /// Errors: [`RecordError::NoMessages`] when the CLI sent no `/v1/messages` request
    /// (nothing to compare), [`RecordError::Trace`] when the trace cannot be read back.
    pub fn trace(&self) -> Result<Trace, RecordError> {
        if self.outcome.messages == 0 {
            return Err(RecordError::NoMessages {
                output_tail: self.outcome.output_tail.clone(),
            });
        }
        Ok(Trace::read(&self.output)?)
    }
}

impl SpecResolver {
    /// A resolver recording with `env` changes and `route` (default: each CLI's own) under
    /// `server`, into `record_dir` (kept, created if need be) or a temporary directory.
    ///
    /// Errors: [`RecordError::RecordDir`] when the directory cannot be created.
    pub fn new(
        env: Vec<(String, Option<String>)>,
        record_dir: Option<&Path>,
        route: Option<Route>,
        force: bool,
        server: ServerConfig,
    ) -> Result<SpecResolver, RecordError> {
        let dir_err = |path: &Path| {
            let path = path.display().to_string();
            move |source| RecordError::RecordDir { path, source }
        };
        let (dir, temp) = match record_dir {
            Some(d) => {
                crate::output::create_private_dir(d).map_err(dir_err(d))?;
                (d.to_path_buf(), None)
            }
            None => {
                let t = tempfile::tempdir().map_err(dir_err(&std::env::temp_dir()))?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        Ok(SpecResolver {
            env,
            dir,
            route,
            route_given: route.is_some(),
            keep: temp.is_none(),
            force,
            server,
            used: AtomicBool::new(false),
            _temp: temp,
        })
    }

    /// The spec `input` names, when it names one: shaped `NAME@…` and neither an
    /// existing path nor a path-like input (`/`, `FILE#N`). Nothing is looked up yet.
    pub fn spec_of(input: &str) -> Option<CliRequest> {
        if Path::new(input).exists() || input.contains('/') || input.contains('#') {
            return None;
        }
        CliRequest::parse(input).ok()
    }

    /// True when the recordings are kept (the caller named their directory).
    pub fn keeps(&self) -> bool {
        self.keep
    }

    /// True when a route was chosen but no input was a spec to record with it.
    pub fn route_unused(&self) -> bool {
        self.route_given && !self.used.load(Ordering::Relaxed)
    }

    /// Where the recording of `input` goes: its name with every character but ASCII
    /// letters, digits and `.` made `-`, as `.jsonl`.
    pub fn output_of(&self, input: &str) -> PathBuf {
        let name: String = input
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        self.dir.join(format!("{name}.jsonl"))
    }

    /// Record `spec` (given as `input`, its label in the trace); `progress` receives
    /// status lines (downloads, the run).
    ///
    /// Errors: [`RecordError::Output`] when a kept recording exists and `force` is off;
    /// the recording's own errors.
    pub async fn record(
        &self,
        input: &str,
        spec: CliSpec,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<Recording, RecordError> {
        self.used.store(true, Ordering::Relaxed);
        let output = self.output_of(input);
        if self.keep {
            crate::output::check(&output, self.force)?;
        }
        let cfg = RecordConfig {
            target: Target::Cli(spec),
            args: Vec::new(),
            env: self.env.clone(),
            server: self.server.clone(),
            output: output.clone(),
            timeout: SPEC_TIMEOUT,
            label: Some(input.to_string()),
            route: self.route,
            force: self.force,
        };
        let outcome = record(cfg, progress).await?;
        Ok(Recording { output, outcome })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_told_from_paths_and_named_into_their_directory() {
        assert!(SpecResolver::spec_of("claude-code@2.1.304").is_some());
        assert!(SpecResolver::spec_of("claude-code@latest").is_some());
        for not_a_spec in ["dir/claude-code@2.1.304", "t.jsonl#3", "t.jsonl", "/"] {
            assert!(SpecResolver::spec_of(not_a_spec).is_none(), "{not_a_spec}");
        }
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let r =
            SpecResolver::new(vec![], Some(&kept), None, false, ServerConfig::default()).unwrap();
        assert!(kept.is_dir() && r.keeps() && !r.route_unused());
        assert_eq!(
            r.output_of("claude-code@2.1.304"),
            kept.join("claude-code-2.1.304.jsonl")
        );
        let temp = SpecResolver::new(
            vec![],
            None,
            Some(Route::BaseUrl),
            false,
            ServerConfig::default(),
        )
        .unwrap();
        assert!(!temp.keeps());
        assert!(temp.route_unused(), "a route given, no spec recorded");
    }
}
