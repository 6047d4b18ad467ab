//! `agentwire import`: read other tools' files (and agentwire traces) into one trace
//! ([`agentwire::import::Merge`]), with a progress bar over the inputs.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use agentwire::import::{Merge, MergeOptions};
use agentwire::input::{open_input, InputOptions, Progress};
use agentwire::text::fmt::plural;

use super::diag::Warnings;
use super::io::{display_name, print_summary};
use super::term::progress_files;
use crate::cli::exit::degraded_if;
use crate::cli::ImportArgs;

pub(super) fn import(a: ImportArgs) -> Result<ExitCode> {
    if !agentwire::output::is_stdout(&a.output) {
        agentwire::output::check(&a.output, a.force)?; // before reading anything
    }
    // Standard output too: a shell may have pointed it at an input.
    agentwire::output::check_not_input(&a.output, &a.inputs)?;
    let bar = progress_files();
    let progress_bar = bar.clone();
    let opts = InputOptions {
        since: a.since,
        progress: Some(Arc::new(move |p: &Progress| {
            progress_bar.set_length(p.bytes_total);
            progress_bar.set_position(p.bytes_done);
            progress_bar.set_message(format!("{}/{} files", p.files_done, p.files_total));
        })),
    };
    let mut merge = Merge::new(MergeOptions {
        output: a.output.clone(),
        force: a.force,
        inputs: a.inputs.iter().map(|p| p.display().to_string()).collect(),
    });
    let (mut degraded, mut skipped) = (false, 0);
    for path in &a.inputs {
        let (bad, skipped_here) = merge_one(path, &opts, &mut merge)?;
        degraded |= bad;
        skipped += skipped_here;
    }
    bar.finish_and_clear();
    let s = merge.finish()?;
    let skipped = if skipped > 0 {
        format!("; {} skipped", plural(skipped as u64, "file"))
    } else {
        String::new()
    };
    print_summary(
        &format!(
            "imported {} ({}){skipped} -> {}\n",
            plural(s.exchanges, "exchange"),
            s.by_format(),
            display_name(&a.output)
        ),
        &a.output,
    )?;
    Ok(degraded_if(degraded))
}

/// Merge the records of the input at `path`, reporting its unreadable records and the
/// files it skipped; whether it had unreadable records, and how many files it skipped.
fn merge_one(path: &Path, opts: &InputOptions, merge: &mut Merge) -> Result<(bool, usize)> {
    let mut input = open_input(path, opts)?;
    let mut warnings = Warnings::new(&path.display().to_string());
    for rec in &mut input {
        if let Some(p) = merge.push(rec?)? {
            warnings.bad_line(&p);
        }
    }
    warnings.skipped(input.skipped());
    let skipped = input.skipped().len();
    Ok((warnings.finish() != ExitCode::SUCCESS, skipped))
}
