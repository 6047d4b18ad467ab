//! The exit codes, one list (difftastic's `src/exit_codes.rs`): the named constants the
//! commands return, and [`EXIT_CODES`], the table built from them that the `--help` footer
//! of every command, the man pages and the README print (a test compares the README's
//! with it). Also which errors are the user's: a [`UsageError`] exits [`USAGE`].

use std::process::ExitCode;

/// The command did its job.
pub const OK: u8 = 0;
/// The command could not do its job: an input is missing or unreadable, or a run failed.
pub const ERROR: u8 = 1;
/// A wrong subcommand, flag or value; nothing was done.
pub const USAGE: u8 = 2;
/// The run finished, but met bad input (records or files skipped, listed on stderr).
pub const DEGRADED: u8 = 3;
/// A check failed: a `--fail-on` gate tripped, or `replay --compare` found differences.
pub const GATE_TRIPPED: u8 = 4;

/// The exit-code table: (code, name, meaning), one row per constant above.
pub const EXIT_CODES: [(u8, &str, &str); 5] = [
    (OK, "ok", "the command did its job"),
    (
        ERROR,
        "error",
        "an input is missing or unreadable, or a run failed (`error: …` on stderr)",
    ),
    (
        USAGE,
        "usage",
        "a wrong subcommand, flag or value; nothing was done",
    ),
    (
        DEGRADED,
        "degraded",
        "finished, but some input records or files were bad and skipped (listed on stderr)",
    ),
    (
        GATE_TRIPPED,
        "gate tripped",
        "a `--fail-on` gate (diff, analyze) tripped, or `replay --compare` found differences",
    ),
];

/// `code` as the process's exit code.
pub fn exit(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// [`DEGRADED`] when `degraded`, else [`OK`].
pub fn degraded_if(degraded: bool) -> ExitCode {
    exit(if degraded { DEGRADED } else { OK })
}

/// An error in what the user typed (a flag's value, a spec): exit [`USAGE`]. Displays the
/// wrapped error's whole chain.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct UsageError(anyhow::Error);

/// Mark an error as a usage error (exit [`USAGE`]).
pub fn usage(e: impl Into<anyhow::Error>) -> anyhow::Error {
    UsageError(e.into()).into()
}

/// A CLI spec's resolution error as the binary reports it: what the user wrote wrong
/// (syntax, unknown CLI or dist-tag, a range where one version is wanted) is a usage error;
/// registry and download failures are errors.
pub fn npm_error(e: agentwire::capture::npm::NpmError) -> anyhow::Error {
    use agentwire::capture::npm::NpmError as E;
    match e {
        E::BadSpec { .. }
        | E::UnknownCli { .. }
        | E::UnknownTag { .. }
        | E::RangeNotAllowed { .. } => usage(e),
        e => e.into(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_lists_the_named_codes_in_order() {
        let codes: Vec<u8> = super::EXIT_CODES.iter().map(|(c, _, _)| *c).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4]);
    }
}
