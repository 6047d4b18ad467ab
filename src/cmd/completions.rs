//! `agentwire completions SHELL`: print the completion script generated from the clap
//! definitions.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{self, CompletionsArgs};

pub(super) fn completions(a: CompletionsArgs) -> Result<ExitCode> {
    let mut buf = Vec::new();
    cli::write_completions(a.shell, &mut buf);
    super::io::print_stdout(&String::from_utf8_lossy(&buf))?;
    Ok(ExitCode::SUCCESS)
}
