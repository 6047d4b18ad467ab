//! `agentwire history`: expand a version range, record the versions not in the
//! recording cache (in parallel), and write the history report with its pairwise diffs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::agent::Agent;
use agentwire::capture::npm::{self, CliSpec};
use agentwire::capture::record::RecordError;
use agentwire::capture::route::Route;
use agentwire::capture::versions;
use agentwire::capture::{cache, matrix};
use agentwire::input::open_trace;
use agentwire::report::history_page::{self, History, Step};
use agentwire::report::{diff_page, meta::InputMeta, DocFormat};
use agentwire::trace::Trace;

use super::diag::warn_problems;
use super::io::{write_doc, write_file};
use crate::cli::exit::npm_error;
use crate::cli::{config, HistoryArgs};

/// Each input as written, its trace, and where it came from (`file`, `cache`, `new`).
type Inputs = Vec<(String, Trace, String)>;

pub(super) fn history(a: HistoryArgs) -> Result<ExitCode> {
    let format = config::doc_format(&a.out)?;
    let files = a.inputs.iter().all(|i| Path::new(i).is_file());
    let (title, inputs) = if files {
        let traces = a
            .inputs
            .iter()
            .map(|i| Ok((i.clone(), open_trace(Path::new(i))?, "file".to_string())))
            .collect::<Result<Vec<_>>>()?;
        (format!("History of {} traces", traces.len()), traces)
    } else {
        let [spec] = a.inputs.as_slice() else {
            anyhow::bail!(
                "give one version list such as claude-code@2.1.303..2.1.332, or trace files"
            );
        };
        versions(spec, &a)?
    };
    let mut steps: Vec<Step> = inputs
        .iter()
        .map(|(input, trace, recorded)| Step::new(input, trace, recorded, !files))
        .collect();
    history_page::unique_labels(&mut steps);
    let mut h = history_page::build(&steps);
    // Pairwise diffs next to the output, in its format (not for JSON or stdout).
    if let (Some(out), false) = (&a.out.output, format == DocFormat::Json) {
        write_diffs(&mut h, out, &a, format)?;
    }
    let metas = inputs.iter().map(|(i, t, _)| InputMeta::of(i, t)).collect();
    let text = history_page::render(&h, &title, metas, format);
    write_doc(&a.out, &text)?;
    Ok(warn_problems(&h.problems))
}

/// Write the pairwise diff of every step into `--diff-dir` (default `NAME-diffs/` next to
/// `out`), each checked before any is written, and link each row to its diff.
fn write_diffs(h: &mut History, out: &Path, a: &HistoryArgs, format: DocFormat) -> Result<()> {
    let dir = a.diff_dir.clone().unwrap_or_else(|| {
        let stem = out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.with_file_name(format!("{stem}-diffs"))
    });
    let ext = if format == DocFormat::Html {
        "html"
    } else {
        "md"
    };
    // Every diff may be written (or replaced with --force) before any is.
    for k in 0..h.steps.len() {
        agentwire::output::check(&dir.join(history_page::step_file(h, k, ext)), a.out.force)?;
    }
    // created once every name is known good: a refused run leaves no empty directory
    std::fs::create_dir_all(&dir)?;
    for k in 0..h.steps.len() {
        let name = history_page::step_file(h, k, ext);
        let (report, ma, mb) = &h.steps[k];
        let opts = diff_page::Options::default();
        let text = diff_page::render(report, ma.clone(), mb.clone(), format, &opts);
        write_file(&dir.join(&name), text.as_bytes(), a.out.force)?;
        h.rows[k + 1].diff = Some(relative(out, &dir.join(&name)));
    }
    Ok(())
}

/// `target` relative to the directory of `from` (both under the same directory here).
fn relative(from: &Path, target: &Path) -> String {
    let base = from.parent().unwrap_or(Path::new(""));
    target
        .strip_prefix(base)
        .unwrap_or(target)
        .to_string_lossy()
        .into_owned()
}

/// Expand `spec` ([`versions::expand`]), record what the recording cache lacks, and open
/// every version's recording.
fn versions(spec: &str, a: &HistoryArgs) -> Result<(String, Inputs)> {
    let specs = versions::expand(spec, usize::from(a.step)).map_err(npm_error)?;
    let asked: Option<Route> = a.route.map(Route::from);
    let route = match specs.first().and_then(|s| Agent::of(&s.name)) {
        Some(agent) => asked.unwrap_or(agent.default_route()),
        None => asked.unwrap_or(Route::FirstParty),
    };
    let paths: Vec<PathBuf> = specs
        .iter()
        .map(|s| cache::recording_path(s, route, &a.env, &a.args))
        .collect();
    let missing: Vec<usize> = (0..specs.len()).filter(|&i| !paths[i].is_file()).collect();
    if !missing.is_empty() {
        record_missing(&specs, &paths, &missing, route, a)?;
    }
    let name = specs.first().map_or_else(String::new, |s| s.name.clone());
    let listed: Vec<&str> = specs.iter().map(|s| s.version.as_str()).collect();
    let title = format!("History of {name} {}", listed.join(", "));
    let inputs = specs
        .iter()
        .zip(&paths)
        .enumerate()
        .map(|(i, (s, p))| {
            let recorded = if missing.contains(&i) { "new" } else { "cache" };
            Ok((
                format!("{}@{}", s.name, s.version),
                open_trace(p)?,
                recorded.to_string(),
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    message!(
        "history: {} versions, {} recorded now, {} from the cache ({})",
        specs.len(),
        missing.len(),
        specs.len() - missing.len(),
        npm::cache_root().join("recordings").display()
    );
    Ok((title, inputs))
}

/// Record the versions `missing` (indexes into `specs` and their cache `paths`) under the
/// stub server, in parallel, and put each recording into the cache.
fn record_missing(
    specs: &[CliSpec],
    paths: &[PathBuf],
    missing: &[usize],
    route: Route,
    a: &HistoryArgs,
) -> Result<()> {
    let cells: Vec<matrix::Cell> = missing
        .iter()
        .map(|&i| matrix::Cell {
            label: format!("{}@{}", specs[i].name, specs[i].version),
            spec: specs[i].clone(),
            env: a.env.clone(),
            route: Some(route),
        })
        .collect();
    let tmp = tempfile::tempdir()?;
    let server = config::stub_server();
    let results = super::matrix::run_cells(&cells, tmp.path(), &a.args, &server, a.parallel)?;
    for ((cell, &i), (path, r)) in cells.iter().zip(missing).zip(results) {
        let o = r.map_err(|e| anyhow::anyhow!("{}: recording failed: {e:#}", cell.label))?;
        message!("{}", o.summary(&paths[i]));
        if o.messages == 0 {
            let e = RecordError::NoMessages {
                output_tail: o.output_tail,
            };
            anyhow::bail!("{}: {e}", cell.label);
        }
        // Into the cache whole or not at all: a later run trusts what it finds there.
        agentwire::output::create_private_dir(paths[i].parent().expect("cache path has a parent"))?;
        write_file(&paths[i], &std::fs::read(&path)?, true)?;
    }
    Ok(())
}
