//! `agentwire diff`: argument glue, and CLI-spec inputs recorded on the fly.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::input::open_trace;
use agentwire::report;
use agentwire::trace::Trace;

use super::{
    out, progress_spinner, runtime, server_config, stdout_color, usage, DEGRADED, GATE_TRIPPED,
};
use crate::cli::{DiffArgs, LimitArgs, ReplyArgs, RouteArg};

pub(super) fn diff(a: DiffArgs) -> Result<ExitCode> {
    use agentwire::diff::{self, Mode};
    let gates = a
        .fail_on
        .iter()
        .filter(|e| !e.trim().is_empty())
        .map(|e| diff::gate::parse(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let norm = super::normalizer_soon(a.rules.as_deref(), a.no_normalize)?;
    let recorder = RecordResolver::new(&a.env, a.record_dir.as_deref(), a.route, a.force)?;
    let resolvers: [&dyn diff::InputResolver; 1] = [&recorder];
    let mut report = match (&a.within, &a.a, &a.b) {
        (Some(t), _, _) => {
            let input = super::resolve_input(t, &resolvers)?;
            diff::diff_within(&input, &norm.get())
        }
        (None, Some(x), Some(y)) if x == "-" && y == "-" => {
            return Err(usage(anyhow::anyhow!(
                "only one of the two inputs can be standard input (-); give the other as a file"
            )));
        }
        (None, Some(x), Some(y)) => {
            let mode = if a.all { Mode::All } else { Mode::First };
            let (ra, rb) = (
                super::resolve_input(x, &resolvers)?,
                super::resolve_input(y, &resolvers)?,
            );
            diff::diff_inputs(&ra, &rb, mode, &norm.get())?
        }
        _ => anyhow::bail!("give two inputs A B, or --within TRACE"),
    };
    recorder.warn_unused_route();
    report.apply_gates(&gates);
    out(&report::diff::render(
        &report,
        a.format.into(),
        stdout_color(),
    ))?;
    for p in &report.problems {
        super::warn(p);
    }
    // Tripped gates also go to stderr, so a CI log shows them when stdout is a file.
    for g in report.gates.iter().filter(|g| g.tripped) {
        message!(
            "gate tripped: --fail-on {}: {}",
            g.expr,
            g.details.join("; ")
        );
    }
    Ok(if report.tripped() {
        ExitCode::from(GATE_TRIPPED)
    } else if !report.problems.is_empty() {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Resolves `NAME@VERSION` diff inputs by recording that CLI (default args `-p hello`)
/// under the stub server into a trace.
pub(super) struct RecordResolver {
    env: Vec<(String, Option<String>)>,
    dir: std::path::PathBuf,
    route: RouteArg,
    /// The traces are kept (--record-dir): existing ones need --force.
    keep: bool,
    /// `--route` was given (it only applies to CLI specs).
    route_given: bool,
    /// A CLI spec was recorded.
    used: std::cell::Cell<bool>,
    force: bool,
    _temp: Option<tempfile::TempDir>,
}

impl RecordResolver {
    pub(super) fn new(
        env: &[String],
        record_dir: Option<&std::path::Path>,
        route: Option<RouteArg>,
        force: bool,
    ) -> Result<Self> {
        use agentwire::capture::record::parse_env;
        let env = env
            .iter()
            .map(|kv| parse_env(kv))
            .collect::<Result<Vec<_>, _>>()
            .map_err(usage)?;
        let (dir, temp) = match record_dir {
            Some(d) => {
                std::fs::create_dir_all(d)?;
                (d.to_path_buf(), None)
            }
            None => {
                let t = tempfile::tempdir()?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        Ok(RecordResolver {
            env,
            dir,
            route: route.unwrap_or(RouteArg::FirstParty),
            route_given: route.is_some(),
            used: std::cell::Cell::new(false),
            keep: temp.is_none(),
            force,
            _temp: temp,
        })
    }

    fn record(&self, input: &str, spec: agentwire::capture::npm::CliSpec) -> Result<Trace> {
        use agentwire::capture::record::{self, RecordConfig, Target};
        self.used.set(true);
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
        let output = self.dir.join(format!("{name}.jsonl"));
        if self.keep {
            super::check_output(&output, self.force)?;
        }
        let limits = LimitArgs::default();
        let cfg = RecordConfig {
            target: Target::Cli(spec),
            args: Vec::new(),
            env: self.env.clone(),
            server: server_config("127.0.0.1:0".into(), &ReplyArgs::default(), &limits)?.0,
            output: output.clone(),
            timeout: std::time::Duration::from_secs(300),
            label: Some(input.to_string()),
            route: self.route.into(),
            force: self.force,
        };
        let spinner = progress_spinner();
        let progress = |msg: &str| spinner.set_message(format!("{input}: {msg}"));
        let outcome = runtime()?.block_on(record::record(cfg, &progress))?;
        spinner.finish_and_clear();
        if self.keep {
            message!("{}", outcome.summary(&output));
        } else {
            message!(
                "{} (temporary; keep it with --record-dir DIR)",
                outcome.summary(&output)
            );
        }
        if outcome.messages == 0 {
            anyhow::bail!(
                "the CLI sent no /v1/messages request; last output lines:\n{}",
                outcome.output_tail
            );
        }
        Ok(open_trace(&output)?)
    }
}

impl RecordResolver {
    /// Say so when `--route` was given but no input was a CLI spec to record with it.
    pub(super) fn warn_unused_route(&self) {
        if self.route_given && !self.used.get() {
            super::warn("--route applies to inputs given as CLI specs (claude-code@VERSION) only; no input was one, so it was ignored");
        }
    }
}

impl agentwire::diff::InputResolver for RecordResolver {
    fn resolve(
        &self,
        input: &str,
    ) -> Option<Result<agentwire::diff::Resolved, agentwire::diff::DiffError>> {
        if std::path::Path::new(input).exists() || input.contains('/') || input.contains('#') {
            return None;
        }
        // Anything shaped NAME@… is a CLI spec: a version or a dist-tag, resolved here.
        let request = agentwire::capture::versions::CliRequest::parse(input).ok()?;
        Some(
            request
                .resolve_one()
                .map_err(anyhow::Error::from)
                .and_then(|spec| self.record(input, spec))
                .map(|trace| agentwire::diff::Resolved {
                    input: input.to_string(),
                    trace,
                    exchange: None,
                })
                .map_err(|e| agentwire::diff::DiffError::Input {
                    input: input.to_string(),
                    message: format!("recording failed: {e:#}"),
                }),
        )
    }
}
