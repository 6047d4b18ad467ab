//! `agentwire matrix`: record versions × settings × routes and tabulate them.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::matrix;
use agentwire::input::open_trace;
use agentwire::report;
use agentwire::trace::Trace;

use super::{
    check_output, npm_error, out, progress_spinner, runtime, server_config, usage, DEGRADED,
};
use crate::cli::{LimitArgs, MatrixArgs};

pub(super) fn matrix(a: MatrixArgs) -> Result<ExitCode> {
    use agentwire::capture::matrix::EnvAxis;
    use agentwire::capture::versions;
    // each --cli item names one version, a dist-tag or a range A..B
    let mut specs = Vec::new();
    for s in &a.cli {
        specs.extend(versions::resolve_range(s).map_err(npm_error)?);
    }
    let axes = a
        .env
        .iter()
        .map(|e| EnvAxis::parse(e))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let routes: Vec<agentwire::capture::record::Route> =
        a.route.iter().map(|r| (*r).into()).collect();
    let cells = matrix::plan(&specs, &axes, &routes);
    if a.dir.is_file() {
        anyhow::bail!(
            "{} is a file; -d takes a directory for the traces",
            a.dir.display()
        );
    }
    // Outputs checked before anything runs: no run's trace replaces an earlier one
    // unless --force.
    for c in &cells {
        check_output(&a.dir.join(matrix::file_name(&c.label)), a.force)?;
    }
    std::fs::create_dir_all(&a.dir)?;
    let limits = LimitArgs::default();
    // (a replayed trace with unreadable lines makes the run degraded: exit 3)
    let (server, degraded) = server_config("127.0.0.1:0".into(), &a.reply, &limits)?;
    let results = run_cells(&cells, &a.dir, &a.args, &server, a.parallel)?;
    let mut traces = Vec::new();
    let mut failed = degraded;
    for (cell, (path, r)) in cells.iter().zip(results) {
        match r {
            Ok(o) => {
                message!("{}", o.summary(&path));
                traces.push((cell.label.clone(), open_trace(&path)?));
            }
            Err(e) => {
                failed = true;
                error!("{}: {e:#}", cell.label);
            }
        }
    }
    if a.mcp {
        let cells: Vec<_> = traces
            .iter()
            .map(|(l, t)| {
                let analysis = agentwire::analyze::analyze_trace(t, Default::default());
                agentwire::analyze::mcp::cell::cell(l, t, &analysis.mcp)
            })
            .collect();
        out(&report::mcp::render_cells(&cells, a.format.into()))?;
        return Ok(if failed {
            ExitCode::from(DEGRADED)
        } else {
            ExitCode::SUCCESS
        });
    }
    let runs: Vec<(String, &Trace)> = traces.iter().map(|(l, t)| (l.clone(), t)).collect();
    let m =
        agentwire::diff::matrix::build(&runs, &agentwire::api::normalize::Normalizer::defaults());
    out(&report::matrix::render_matrix(&m, a.format.into()))?;
    Ok(if failed || !m.problems.is_empty() {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}

/// Record `cells` into `dir` (at most `parallel` at a time) with a spinner on stderr.
pub(super) fn run_cells(
    cells: &[matrix::Cell],
    dir: &std::path::Path,
    args: &[String],
    server: &agentwire::capture::server::ServerConfig,
    parallel: u8,
) -> Result<Vec<MatrixResult>> {
    let spinner = std::sync::Arc::new(progress_spinner());
    let sp = spinner.clone();
    let progress: std::sync::Arc<dyn Fn(&str) + Send + Sync> =
        std::sync::Arc::new(move |m: &str| sp.set_message(m.to_string()));
    let results = runtime()?.block_on(matrix::run(
        cells,
        dir,
        args,
        server,
        usize::from(parallel),
        progress,
    ));
    spinner.finish_and_clear();
    Ok(results)
}

/// One recorded cell: its trace path and the outcome.
pub(super) type MatrixResult = (
    std::path::PathBuf,
    Result<agentwire::capture::record::RecordOutcome, agentwire::capture::record::RecordError>,
);
