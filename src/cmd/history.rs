//! `agentwire history`: expand a version range, record the versions not in the
//! recording cache (in parallel), and write the history report with its pairwise diffs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::npm::{self, CliSpec};
use agentwire::capture::record::{parse_env, Route};
use agentwire::capture::versions;
use agentwire::capture::{cache, matrix};
use agentwire::input::open_trace;
use agentwire::report::history_page::{self, Step};
use agentwire::report::{diff_page, meta::InputMeta, DocFormat};
use agentwire::trace::Trace;

use super::{doc_format, npm_error, server_config, warn_problems, write_doc, write_file};
use crate::cli::{HistoryArgs, LimitArgs, ReplyArgs};

pub(super) fn history(a: HistoryArgs) -> Result<ExitCode> {
    let format = doc_format(&a.out)?;
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
        .map(|(input, trace, recorded)| {
            let m = InputMeta::of(input, trace);
            Step {
                label: m
                    .version
                    .clone()
                    .filter(|_| !files)
                    .unwrap_or_else(|| m.name()),
                input: input.clone(),
                trace,
                recorded: recorded.clone(),
            }
        })
        .collect();
    // Two captures of one version (other settings) would show as the same row and the
    // same chart label: name their files too.
    let labels: Vec<String> = steps.iter().map(|s| s.label.clone()).collect();
    for s in &mut steps {
        if labels.iter().filter(|l| **l == s.label).count() > 1 {
            let file = Path::new(&s.input)
                .file_name()
                .map_or_else(|| s.input.clone(), |f| f.to_string_lossy().into_owned());
            s.label = format!("{} ({file})", s.label);
        }
    }
    let mut h = history_page::build(&steps);
    // Pairwise diffs next to the output, in its format (not for JSON or stdout).
    if let (Some(out), false) = (&a.out.output, format == DocFormat::Json) {
        let dir = a.diff_dir.clone().unwrap_or_else(|| {
            let stem = out
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.with_file_name(format!("{stem}-diffs"))
        });
        std::fs::create_dir_all(&dir)?;
        let ext = if format == DocFormat::Html {
            "html"
        } else {
            "md"
        };
        // Every diff may be written (or replaced with --force) before any is.
        for k in 0..h.steps.len() {
            agentwire::output::check(&dir.join(history_page::step_file(&h, k, ext)), a.out.force)?;
        }
        for k in 0..h.steps.len() {
            let name = history_page::step_file(&h, k, ext);
            let (report, ma, mb) = &h.steps[k];
            let text = diff_page::render(
                report,
                ma.clone(),
                mb.clone(),
                format,
                &diff_page::Options::default(),
            );
            write_file(&dir.join(&name), text.as_bytes(), a.out.force)?;
            let rel = relative(out, &dir.join(&name));
            h.rows[k + 1].diff = Some(rel);
        }
    }
    let metas = inputs.iter().map(|(i, t, _)| InputMeta::of(i, t)).collect();
    let text = history_page::render(&h, &title, metas, format);
    write_doc(&a.out, &text)?;
    Ok(warn_problems(&h.problems))
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

type Inputs = Vec<(String, Trace, String)>;

/// Every version `spec` names, oldest first within each item: `NAME@ITEM,ITEM,...` where
/// an item is a version, a dist-tag or a range `A..B` (resolved by
/// [`versions::resolve_range`]); a range keeps every `step`-th version and always both ends.
/// Errors: a bad spec (usage), registry failures.
fn expand(spec: &str, step: usize) -> Result<Vec<CliSpec>> {
    let (name, list) = spec.rsplit_once('@').unwrap_or((spec, ""));
    let mut out: Vec<CliSpec> = Vec::new();
    for item in list.split(',') {
        let all = versions::resolve_range(&format!("{name}@{item}")).map_err(npm_error)?;
        let last = all.len().saturating_sub(1);
        for (k, s) in all.into_iter().enumerate() {
            let kept = k % step == 0 || k == last;
            if kept && !out.iter().any(|o| o.version == s.version) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// Expand `spec`, record what the cache lacks, and open every version's recording.
fn versions(spec: &str, a: &HistoryArgs) -> Result<(String, Inputs)> {
    let specs = expand(spec, usize::from(a.step))?;
    let name = specs.first().map_or_else(String::new, |s| s.name.clone());
    let versions: Vec<&str> = specs.iter().map(|s| s.version.as_str()).collect();
    let env = a
        .env
        .iter()
        .map(|kv| parse_env(kv))
        .collect::<Result<Vec<_>, _>>()?;
    let route: Route = a.route.into();
    let paths: Vec<PathBuf> = specs
        .iter()
        .map(|s| cache::recording_path(s, route, &env, &a.args))
        .collect();
    let missing: Vec<usize> = (0..specs.len()).filter(|&i| !paths[i].is_file()).collect();
    if !missing.is_empty() {
        let cells: Vec<matrix::Cell> = missing
            .iter()
            .map(|&i| matrix::Cell {
                label: format!("{}@{}", specs[i].name, specs[i].version),
                spec: specs[i].clone(),
                env: env.clone(),
                route,
            })
            .collect();
        let tmp = tempfile::tempdir()?;
        let (server, _) = server_config(
            "127.0.0.1:0".into(),
            &ReplyArgs::default(),
            &LimitArgs::default(),
        )?;
        let results = super::matrix::run_cells(&cells, tmp.path(), &a.args, &server, a.parallel)?;
        for ((cell, &i), (path, r)) in cells.iter().zip(&missing).zip(results) {
            let o = r.map_err(|e| anyhow::anyhow!("{}: recording failed: {e:#}", cell.label))?;
            message!("{}", o.summary(&paths[i]));
            if o.messages == 0 {
                anyhow::bail!(
                    "{}: the CLI sent no /v1/messages request; last output lines:\n{}",
                    cell.label,
                    o.output_tail
                );
            }
            // Into the cache whole or not at all: a later run trusts what it finds there.
            std::fs::create_dir_all(paths[i].parent().expect("cache path has a parent"))?;
            write_file(&paths[i], &std::fs::read(&path)?, true)?;
        }
    }
    let title = format!("History of {name} {}", versions.join(", "));
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
