//! `agentwire analyze`: argument glue and exit codes.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::analyze;
use agentwire::report;

use super::diag::{note_skipped, warn, Warnings};
use super::io::print_stdout;
use crate::cli::config;
use crate::cli::exit::{exit, DEGRADED, GATE_TRIPPED};
use crate::cli::AnalyzeArgs;

pub(super) fn analyze(a: AnalyzeArgs) -> Result<ExitCode> {
    let cfg = config::analysis(&a.settings)?;
    if let Some(dir) = &a.parquet {
        // Outputs checked before the (possibly long) analysis.
        report::parquet::check_tables(dir, a.force)?;
        agentwire::output::check_not_input(dir, &a.traces)?;
    }
    let paths: Vec<&std::path::Path> = a.traces.iter().map(|p| p.as_path()).collect();
    let result = analyze::analyze_files(&paths, cfg)?;
    print_stdout(&report::analyze::render(&result, a.format.into()))?;
    if let Some(dir) = &a.parquet {
        let files = report::parquet::write_tables(&result, dir, a.force)?;
        message!(
            "wrote {} Parquet tables ({} files, Hive-partitioned by cli_version and date) to {}",
            report::parquet::TABLES.len(),
            files.len(),
            dir.display()
        );
    }
    let mut code = warnings(&result);
    let tripped: Vec<String> = a
        .fail_on
        .iter()
        .filter_map(|g| analyze::gate::check(g, &result.summary))
        .collect();
    for t in &tripped {
        message!("{t}");
    }
    if !tripped.is_empty() {
        code = exit(GATE_TRIPPED);
    }
    Ok(code)
}

/// Print an analysis's warnings (unpriced models, unreadable lines, skipped requests) on
/// stderr; the exit code they imply.
pub(super) fn warnings(result: &analyze::Analysis) -> ExitCode {
    for w in &result.warnings {
        warn(w);
    }
    let mut code = ExitCode::SUCCESS;
    for files in result.skipped_files.chunk_by(|a, b| a.input == b.input) {
        note_skipped(&files[0].input, files.len(), &files[0].reason);
    }
    for i in &result.inputs {
        if i.bad_lines > 0 {
            // Described as `show` describes them: the first few, then a count.
            let mut w = Warnings::new(&i.path);
            for n in &i.bad_line_notes {
                w.bad_line_text(n);
            }
            w.more_bad_lines(i.bad_lines - i.bad_line_notes.len());
            w.finish();
            code = exit(DEGRADED);
        }
        for b in &i.bad_bodies {
            warn(&format!("{}: {b}", i.path));
            code = exit(DEGRADED);
        }
    }
    code
}
