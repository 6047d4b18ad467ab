//! `agentwire diff`: argument glue, and CLI-spec inputs recorded on the fly ([`Recorder`],
//! shared with `report diff`).

use std::process::ExitCode;

use anyhow::Result;

use agentwire::api::normalize::PendingNormalizer;
use agentwire::capture::npm::CliSpec;
use agentwire::capture::record::resolver::SpecResolver;
use agentwire::diff::{self, DiffReport, InputResolver, Mode};
use agentwire::report;
use agentwire::trace::Trace;

use super::diag::warn;
use super::io::{print_stdout, resolve_input, runtime};
use super::term::{progress_spinner, stdout_color};
use crate::cli::exit::{exit, usage, DEGRADED, GATE_TRIPPED, OK};
use crate::cli::{config, DiffArgs, RouteArg};

pub(super) fn diff(a: DiffArgs) -> Result<ExitCode> {
    let gates: Vec<_> = a.fail_on.iter().flatten().cloned().collect();
    let norm = config::pending_normalizer(a.rules.as_deref(), a.no_normalize)?;
    let recorder = Recorder::new(&a.env, a.record_dir.as_deref(), a.route, a.force)?;
    let mut report = compare(&a, &recorder, norm)?;
    recorder.warn_unused_route();
    report.apply_gates(&gates);
    print_stdout(&report::diff::render_with(
        &report,
        a.format.into(),
        stdout_color(),
        a.unchanged,
    ))?;
    for p in &report.problems {
        warn(p);
    }
    // Tripped gates also go to stderr, so a CI log shows them when stdout is a file.
    for g in report.gates.iter().filter(|g| g.tripped) {
        message!(
            "gate tripped: --fail-on {}: {}",
            g.expr,
            g.details.join("; ")
        );
    }
    Ok(exit(if report.tripped() {
        GATE_TRIPPED
    } else if !report.problems.is_empty() {
        DEGRADED
    } else {
        OK
    }))
}

/// The diff the arguments ask for: within one trace, or of two inputs.
fn compare(a: &DiffArgs, recorder: &Recorder, norm: PendingNormalizer) -> Result<DiffReport> {
    let resolvers: [&dyn InputResolver; 1] = [recorder];
    match (&a.within, &a.a, &a.b) {
        (Some(t), _, _) => {
            let input = resolve_input(t, &resolvers)?;
            Ok(diff::diff_within(&input, &norm.get()))
        }
        (None, Some(x), Some(y)) if x == "-" && y == "-" => Err(usage(anyhow::anyhow!(
            "only one of the two inputs can be standard input (-); give the other as a file"
        ))),
        (None, Some(x), Some(y)) => {
            let mode = if a.all { Mode::All } else { Mode::First };
            let (ra, rb) = (resolve_input(x, &resolvers)?, resolve_input(y, &resolvers)?);
            Ok(diff::diff_inputs(&ra, &rb, mode, &norm.get())?)
        }
        _ => anyhow::bail!("give two inputs A B, or --within TRACE"),
    }
}

/// Resolves `NAME@VERSION` diff inputs by recording that CLI (default args `-p hello`)
/// under the stub server ([`SpecResolver`]), with a spinner while it runs and its summary
/// line once done.
pub(super) struct Recorder(SpecResolver);

impl Recorder {
    /// Recordings with `--env`, `--route`, into `--record-dir` (else a temporary
    /// directory); `force` replaces recordings kept there.
    pub(super) fn new(
        env: &[(String, Option<String>)],
        record_dir: Option<&std::path::Path>,
        route: Option<RouteArg>,
        force: bool,
    ) -> Result<Self> {
        Ok(Recorder(config::spec_resolver(
            env, record_dir, route, force,
        )?))
    }

    fn record(&self, input: &str, spec: CliSpec) -> Result<Trace> {
        let spinner = progress_spinner();
        let progress = |msg: &str| spinner.set_message(format!("{input}: {msg}"));
        let rec = runtime()?.block_on(self.0.record(input, spec, &progress))?;
        spinner.finish_and_clear();
        let line = rec.outcome.summary(&rec.output);
        if self.0.keeps() {
            message!("{line}");
        } else {
            message!("{line} (temporary; keep it with --record-dir DIR)");
        }
        Ok(rec.trace()?)
    }

    /// Say so when `--route` was given but no input was a CLI spec to record with it.
    pub(super) fn warn_unused_route(&self) {
        if self.0.route_unused() {
            warn("--route applies to inputs given as CLI specs (claude-code@VERSION) only; no input was one, so it was ignored");
        }
    }
}

impl InputResolver for Recorder {
    fn resolve(&self, input: &str) -> Option<Result<diff::Resolved, diff::DiffError>> {
        // Anything shaped NAME@… is a CLI spec: a version or a dist-tag, resolved here.
        let request = SpecResolver::spec_of(input)?;
        Some(
            request
                .resolve_one()
                .map_err(anyhow::Error::from)
                .and_then(|spec| self.record(input, spec))
                .map(|trace| diff::Resolved {
                    input: input.to_string(),
                    trace,
                    exchange: None,
                })
                .map_err(|e| diff::DiffError::Input {
                    input: input.to_string(),
                    message: format!("recording failed: {e:#}"),
                }),
        )
    }
}
