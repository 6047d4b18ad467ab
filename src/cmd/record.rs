//! `agentwire record`: run a CLI or command under the server and write its trace.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::record::{self, RecordError, Target};
use agentwire::capture::versions;

use super::io::{print_stdout, print_summary, report_setup, runtime};
use super::term::progress_spinner;
use crate::cli::exit::{degraded_if, exit, npm_error, usage, ERROR};
use crate::cli::{config, RecordArgs};

pub(super) fn record(a: RecordArgs) -> Result<ExitCode> {
    agentwire::output::check(&a.output, a.force)?;
    let target = target(&a)?;
    // `degraded`: the replayed trace had unreadable lines (reported already): exit 3.
    let (server, degraded) = report_setup(config::reply_server(&a.reply)?)?;
    let cfg = config::record(&a, target, server)?;
    let spinner = progress_spinner();
    let report = |msg: &str| spinner.set_message(msg.to_string());
    let outcome = runtime()?.block_on(async {
        if !a.ui {
            return Ok(record::record(cfg, &report).await?);
        }
        // The viewer's URL (it holds the token) is the first line on stdout.
        let (url, st) = super::view::live_viewer(&a.output).await?;
        print_stdout(&format!("{url}\n"))?;
        let observe = move |rx| {
            tokio::spawn(agentwire::viewer::live::follow(st, rx));
        };
        anyhow::Ok(record::record_observed(cfg, &report, observe).await?)
    })?;
    spinner.finish_and_clear();
    print_summary(&format!("{}\n", outcome.summary(&a.output)), &a.output)?;
    if let Some(t) = &outcome.tty {
        if t.end != agentwire::capture::tty::End::Finished {
            error!(
                "the terminal session ended early: {} (the trace and the cast keep what happened); its last screen:\n{}",
                t.end.reason(),
                outcome.output_tail
            );
            return Ok(exit(ERROR));
        }
        return Ok(degraded_if(degraded || outcome.unreadable_lines > 0));
    }
    if outcome.timed_out || outcome.exit_code != Some(0) {
        let tail = if outcome.output_tail.trim().is_empty() {
            "(it printed nothing)".to_string()
        } else {
            outcome.output_tail.clone()
        };
        error!("the recorded command did not finish cleanly (the trace keeps what it sent); its last output lines:\n{tail}");
        return Ok(exit(ERROR));
    }
    Ok(degraded_if(degraded || outcome.unreadable_lines > 0))
}

/// What to run: `--cli NAME@VERSION|TAG` (resolved, a dist-tag said), or the command
/// after `--`; neither is a usage error.
fn target(a: &RecordArgs) -> Result<Target> {
    match &a.cli {
        Some(spec) => {
            let s = versions::resolve(spec).map_err(npm_error)?;
            if let Some(tag) = &s.tag {
                message!("agentwire: {spec} is {} (npm dist-tag {tag})", s.version);
            }
            Ok(Target::Cli(s))
        }
        None if a.args.is_empty() => Err(usage(RecordError::NothingToRun)),
        None => Ok(Target::Command(a.args.clone())),
    }
}
