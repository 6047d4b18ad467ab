//! `agentwire record`: run a CLI or command under the server and write its trace.

use std::process::ExitCode;

use anyhow::Result;

use super::{check_output, npm_error, progress_spinner, runtime, server_config, summary, usage};
use crate::cli::{LimitArgs, RecordArgs};

pub(super) fn record(a: RecordArgs) -> Result<ExitCode> {
    check_output(&a.output, a.force)?;
    use agentwire::capture::record::{self, parse_env, RecordConfig, Target};
    use agentwire::capture::versions;
    let target = match &a.cli {
        Some(spec) => {
            let s = versions::resolve(spec).map_err(npm_error)?;
            if let Some(tag) = &s.tag {
                message!("agentwire: {spec} is {} (npm dist-tag {tag})", s.version);
            }
            Target::Cli(s)
        }
        None if a.args.is_empty() => return Err(usage(record::RecordError::NothingToRun)),
        None => Target::Command(a.args.clone()),
    };
    let env = a
        .env
        .iter()
        .map(|kv| parse_env(kv))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let limits = LimitArgs::default();
    // `degraded`: the replayed trace had unreadable lines (reported already): exit 3.
    let (server, degraded) = server_config("127.0.0.1:0".into(), &a.reply, &limits)?;
    let cfg = RecordConfig {
        args: if a.cli.is_some() {
            a.args.clone()
        } else {
            Vec::new()
        },
        target,
        env,
        server: agentwire::capture::server::ServerConfig {
            redact_body: a.redact_body,
            ..server
        },
        output: a.output.clone(),
        timeout: std::time::Duration::from_secs(a.timeout),
        label: None,
        route: a.route.into(),
        force: a.force,
    };
    let spinner = progress_spinner();
    let report = |msg: &str| spinner.set_message(msg.to_string());
    let outcome = runtime()?.block_on(record::record(cfg, &report))?;
    spinner.finish_and_clear();
    summary(&format!("{}\n", outcome.summary(&a.output)), &a.output)?;
    if outcome.timed_out || outcome.exit_code != Some(0) {
        let tail = if outcome.output_tail.trim().is_empty() {
            "(it printed nothing)".to_string()
        } else {
            outcome.output_tail.clone()
        };
        error!("the recorded command did not finish cleanly (the trace keeps what it sent); its last output lines:\n{tail}");
        return Ok(ExitCode::from(1));
    }
    Ok(if degraded || outcome.unreadable_lines > 0 {
        ExitCode::from(super::DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}
