//! The `agentwire` binary: parse arguments, call the library, print `error: …`, and map
//! outcomes to exit codes (0 ok, 1 error, 2 usage, 3 degraded: some input was bad,
//! 4 an `analyze --fail-on` gate tripped).

mod cli;
mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cmd::run(args) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Library errors carry their cause in their message; print it once, secrets
            // redacted and through the printable filter (messages may quote recorded text).
            let msg = agentwire::trace::redact::redact_text(&format!("{e}"));
            eprintln!("error: {}", agentwire::report::printable_lines(&msg));
            ExitCode::from(if is_usage(&e) { 2 } else { 1 })
        }
    }
}

/// Errors in what the user typed (exit 2, like clap's own usage errors).
fn is_usage(e: &anyhow::Error) -> bool {
    use agentwire::capture::npm::NpmError;
    use agentwire::capture::record::RecordError;
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<RecordError>(),
            Some(RecordError::BadEnv(_) | RecordError::NothingToRun)
        ) || matches!(
            c.downcast_ref::<NpmError>(),
            Some(NpmError::BadSpec { .. } | NpmError::UnknownCli { .. })
        ) || matches!(
            c.downcast_ref::<RecordError>(),
            Some(RecordError::Npm(
                NpmError::BadSpec { .. } | NpmError::UnknownCli { .. }
            ))
        )
    })
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
