//! `agentwire matrix`: record versions × settings × routes and tabulate them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use agentwire::capture::record::{RecordError, RecordOutcome};
use agentwire::capture::route::Route;
use agentwire::capture::server::ServerConfig;
use agentwire::capture::{matrix, versions};
use agentwire::input::open_trace;
use agentwire::report;
use agentwire::trace::Trace;

use super::io::{print_stdout, report_setup, runtime, write_file};
use super::term::progress_spinner;
use crate::cli::exit::{degraded_if, npm_error};
use crate::cli::{config, FormatArg, MatrixArgs};

pub(super) fn matrix(a: MatrixArgs) -> Result<ExitCode> {
    let cells = plan(&a)?;
    // (a replayed trace with unreadable lines makes the run degraded: exit 3)
    let (server, degraded) = report_setup(config::reply_server(&a.reply)?)?;
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
        print_stdout(&mcp_table(&traces, a.format))?;
        return Ok(degraded_if(failed));
    }
    let runs: Vec<(String, &Trace)> = traces.iter().map(|(l, t)| (l.clone(), t)).collect();
    let m =
        agentwire::diff::matrix::build(&runs, &agentwire::api::normalize::Normalizer::defaults());
    let figures: Vec<report::matrix::RunFigures> = traces
        .iter()
        .map(|(_, t)| {
            report::matrix::RunFigures::of(&agentwire::analyze::analyze_trace(
                t,
                Default::default(),
            ))
        })
        .collect();
    if let Some(out) = &a.html {
        let inputs = traces
            .iter()
            .map(|(l, t)| report::meta::InputMeta::of(l, t))
            .collect();
        let title = format!("Matrix of {} runs", traces.len());
        let page = report::matrix_page::render(&m, &figures, &title, inputs);
        write_file(out, page.as_bytes(), a.force)?;
    }
    print_stdout(&report::matrix::render_matrix(
        &m,
        &figures,
        a.format.into(),
    ))?;
    Ok(degraded_if(failed || !m.problems.is_empty()))
}

/// Every cell of the matrix (each `--cli` item names one version, a dist-tag or a range
/// `A..B`), with their outputs checked: no run's trace replaces an earlier one unless
/// `--force`; the directory is created.
fn plan(a: &MatrixArgs) -> Result<Vec<matrix::Cell>> {
    let mut specs = Vec::new();
    for s in &a.cli {
        specs.extend(versions::resolve_range(s).map_err(npm_error)?);
    }
    let routes: Vec<Route> = a.route.iter().map(|r| (*r).into()).collect();
    let cells = matrix::plan(&specs, &a.env, &routes);
    if a.dir.is_file() {
        anyhow::bail!(
            "{} is a file; -d takes a directory for the traces",
            a.dir.display()
        );
    }
    for c in &cells {
        agentwire::output::check(&a.dir.join(matrix::file_name(&c.label)), a.force)?;
    }
    if let Some(h) = &a.html {
        agentwire::output::check(h, a.force)?;
    }
    std::fs::create_dir_all(&a.dir)?;
    Ok(cells)
}

/// The MCP layer of every recorded cell, as one table.
fn mcp_table(traces: &[(String, Trace)], format: FormatArg) -> String {
    let cells: Vec<_> = traces
        .iter()
        .map(|(l, t)| {
            let analysis = agentwire::analyze::analyze_trace(t, Default::default());
            agentwire::analyze::mcp::cell::cell(l, t, &analysis.mcp)
        })
        .collect();
    report::mcp::render_cells(&cells, format.into())
}

/// Record `cells` into `dir` (at most `parallel` at a time) with a spinner on stderr.
pub(super) fn run_cells(
    cells: &[matrix::Cell],
    dir: &Path,
    args: &[String],
    server: &ServerConfig,
    parallel: u8,
) -> Result<Vec<MatrixResult>> {
    let spinner = Arc::new(progress_spinner());
    let sp = spinner.clone();
    let progress: Arc<dyn Fn(&str) + Send + Sync> =
        Arc::new(move |m: &str| sp.set_message(m.to_string()));
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
pub(super) type MatrixResult = (PathBuf, Result<RecordOutcome, RecordError>);
