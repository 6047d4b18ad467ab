//! The one diagnostics sink of the binary (ripgrep's `crates/core/messages.rs`): every
//! line agentwire prints on stderr — errors, warnings, notes, status lines, summaries
//! moved off stdout — goes through [`emit`] or [`emit_text`]. Each first has its secrets
//! redacted ([`agentwire::trace::redact::redact_text`]), then passes the printable filter
//! line by line ([`agentwire::text::printable_lines`]: newlines stay, escape sequences,
//! C1 controls, bidi and zero-width characters become visible escapes), and only then is
//! printed. So a recorded tool name quoted in a message can neither leak a key nor drive
//! the terminal, whichever command prints it: the filter is enforced where text leaves,
//! as redaction is in the trace writer.
//!
//! The macros [`warn!`], [`note!`], [`error!`] and [`message!`] format their arguments as
//! `format!` does and print `warning: …`, `note: …`, `error: …` or the bare line. The
//! library never prints; it reports through the [`agentwire::capture::Diagnostics`]
//! this module hands it ([`reporter`]). A guard test (`tests/it/house.rs`) fails on any
//! other printing macro under `src/`.
//!
//! Also here: the error a failed command ends with ([`fail`]), and the warnings about an
//! input's unreadable parts ([`Warnings`], [`report_problems`]), with the exit codes they
//! imply.

use std::process::ExitCode;

use agentwire::capture::{Diagnostics, Level};
use agentwire::trace::Trace;

use crate::cli::exit::{UsageError, DEGRADED, ERROR, USAGE};

/// `warning: …` on stderr, through the sink ([`emit`]); arguments as for `format!`.
macro_rules! warn {
    ($($arg:tt)*) => {
        $crate::cmd::diag::emit(Some("warning"), &format!($($arg)*))
    };
}

/// `note: …` on stderr, through the sink ([`emit`]); arguments as for `format!`.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cmd::diag::emit(Some("note"), &format!($($arg)*))
    };
}

/// `error: …` on stderr, through the sink ([`emit`]); arguments as for `format!`.
macro_rules! error {
    ($($arg:tt)*) => {
        $crate::cmd::diag::emit(Some("error"), &format!($($arg)*))
    };
}

/// A bare line on stderr (a status line, `wrote …`, a summary), through the sink
/// ([`emit`]); arguments as for `format!`.
macro_rules! message {
    ($($arg:tt)*) => {
        $crate::cmd::diag::emit(None, &format!($($arg)*))
    };
}

/// Text as it is printed on stderr: secrets redacted, then the printable filter applied
/// line by line.
pub(crate) fn clean(text: &str) -> String {
    agentwire::text::printable_lines(&agentwire::trace::redact::redact_text(text))
}

/// Print `LEVEL: MSG` (or `MSG` alone without a level) and a newline on stderr, cleaned
/// ([`clean`]). Every diagnostic line of the binary ends here.
pub(crate) fn emit(level: Option<&str>, msg: &str) {
    let msg = clean(msg);
    match level {
        Some(level) => eprintln!("{level}: {msg}"),
        None => eprintln!("{msg}"),
    }
}

/// Print `text` as it is (no level, no newline added) on stderr, cleaned ([`clean`]):
/// a multi-line summary moved off stdout.
pub(crate) fn emit_text(text: &str) {
    eprint!("{}", clean(text));
}

/// A usage error as clap rendered it, printed through the sink and ending the process
/// with `code`. `plain` is the text, `styled` the same text with clap's colours (for a
/// terminal). Both are redacted (clap quotes the bad value, which may hold credentials:
/// `--to ftp://user:pw@host`). The colours are kept only when the text itself holds
/// nothing the printable filter would change, so every escape sequence printed is clap's
/// own; otherwise the plain text is printed filtered.
pub(crate) fn clap_error(plain: &str, styled: Option<&str>, code: i32) -> ! {
    let redacted = agentwire::trace::redact::redact_text(plain);
    let filtered = agentwire::text::printable_lines(&redacted);
    match styled {
        Some(s) if filtered == redacted => {
            eprint!("{}", agentwire::trace::redact::redact_text(s))
        }
        _ => eprint!("{filtered}"),
    }
    std::process::exit(code)
}

/// The reporter the library's sources print through ([`Diagnostics`]): each level with
/// its prefix, through [`emit`].
pub(crate) fn reporter() -> Diagnostics {
    Diagnostics::new(|level, msg| {
        let prefix = match level {
            Level::Error => Some("error"),
            Level::Warning => Some("warning"),
            Level::Note => Some("note"),
            Level::Status => None,
        };
        emit(prefix, msg)
    })
}

/// Print a failed command's error on stderr and return its exit code: 0 for a closed
/// stdout pipe (nothing to print), [`USAGE`] for a [`UsageError`], else [`ERROR`].
pub fn fail(e: &anyhow::Error) -> ExitCode {
    let broken_pipe = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    // Library errors carry their cause in their message; print it once, secrets redacted
    // and through the printable filter (messages may quote recorded text).
    emit(Some("error"), &format!("{e}"));
    if e.chain().any(|c| c.is::<UsageError>()) {
        ExitCode::from(USAGE)
    } else {
        ExitCode::from(ERROR)
    }
}

/// Print `warning: MSG` on stderr, secrets redacted and through the printable filter
/// ([`emit`]).
pub fn warn(msg: &str) {
    emit(Some("warning"), msg);
}

/// Print each problem as a warning (see [`warn`]); exit [`DEGRADED`] when there were any.
pub(crate) fn warn_problems(problems: &[String]) -> ExitCode {
    for p in problems {
        warn(p);
    }
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DEGRADED)
    }
}

/// Report a trace's unreadable lines and its exchanges with a bad part
/// ([`agentwire::api::view::problems`]) on stderr; returns the exit code they imply.
pub fn report_problems(trace: &Trace) -> ExitCode {
    let exchanges = agentwire::api::view::problems(trace);
    report_problems_of(&trace.path, &trace.problems, &exchanges)
}

/// [`report_problems`] from the parts a trace was read with: the input named `path`, its
/// unreadable lines and its exchanges with a bad part (for a trace handed on before it
/// is reported).
pub(crate) fn report_problems_of(
    path: &std::path::Path,
    lines: &[agentwire::trace::ReadProblem],
    exchanges: &[agentwire::api::view::ExchangeProblem],
) -> ExitCode {
    let mut w = Warnings::new(&path.display().to_string());
    for p in lines {
        w.bad_line(p);
    }
    for p in exchanges {
        w.bad_exchange(&p.file, p.id, &p.problem);
    }
    w.finish()
}

/// How many unreadable lines are listed one by one before the rest are only counted.
pub const LISTED_PROBLEMS: usize = agentwire::analyze::LISTED_BAD_LINES;

/// The one note on the files a directory input skipped: how many, and the first one's
/// reason (which names the file). Every command reading directories prints it.
pub(crate) fn note_skipped(input: &str, count: usize, first_why: &str) {
    note!(
        "{input}: skipped {} not in a format agentwire reads (first: {first_why})",
        agentwire::text::fmt::plural(count as u64, "file")
    );
}

/// Warnings about an input's unreadable lines: the first few listed, the rest counted in
/// one closing line — never one warning per line of input.
pub struct Warnings {
    input: String,
    /// Problems met, listed or not.
    count: usize,
    /// Of them, exchanges kept with a bad part (the rest are records skipped).
    exchanges: usize,
}

impl Warnings {
    /// Warnings for the input named `input`.
    pub fn new(input: &str) -> Self {
        Warnings {
            input: input.to_string(),
            count: 0,
            exchanges: 0,
        }
    }

    /// One unreadable line, named by its file (the file under a directory input).
    pub fn bad_line(&mut self, p: &agentwire::trace::ReadProblem) {
        self.count += 1;
        if self.count <= LISTED_PROBLEMS {
            warn(&p.located(&self.input));
        }
    }

    /// One unreadable line, as [`agentwire::trace::ReadProblem::located`] describes it.
    pub fn bad_line_text(&mut self, p: &str) {
        self.count += 1;
        if self.count <= LISTED_PROBLEMS {
            warn(p);
        }
    }

    /// `n` more unreadable lines, counted but not described.
    pub fn more_bad_lines(&mut self, n: usize) {
        self.count += n;
    }

    /// One exchange of `file` (the file under a directory input, else the input; ids
    /// repeat across a directory's files) whose response held a bad part (a stream event
    /// skipped), counted like an unreadable line.
    pub fn bad_exchange(&mut self, file: &std::path::Path, id: u64, problem: &str) {
        self.count += 1;
        self.exchanges += 1;
        if self.count <= LISTED_PROBLEMS {
            warn!("{}: exchange #{id}: {problem}", file.display());
        }
    }

    /// Files of a directory input that were skipped, in one line.
    pub fn skipped(&self, skipped: &[(std::path::PathBuf, String)]) {
        if let Some((_, why)) = skipped.first() {
            note_skipped(&self.input, skipped.len(), why);
        }
    }

    /// Print the count of unlisted lines; the exit code they imply.
    pub fn finish(self) -> ExitCode {
        if self.count > LISTED_PROBLEMS {
            // Said by what they are: records skipped (lines, HAR entries) and exchanges
            // kept with a bad part (a usage figure, a stream event).
            let records = self.count - self.exchanges;
            let mut parts = Vec::new();
            if records > 0 {
                parts.push(format!(
                    "{} (skipped here; they stay in the input as they are)",
                    agentwire::text::fmt::plural(records as u64, "unreadable record")
                ));
            }
            if self.exchanges > 0 {
                parts.push(format!(
                    "{} with a bad part (kept)",
                    agentwire::text::fmt::plural(self.exchanges as u64, "exchange")
                ));
            }
            warn!(
                "{}: {} in all ({} more not listed)",
                self.input,
                parts.join(" and "),
                self.count - LISTED_PROBLEMS
            );
        }
        if self.count == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(DEGRADED)
        }
    }
}

#[cfg(test)]
mod tests {
    /// What reaches stderr: redacted first (a key is never shown), then filtered line by
    /// line (newlines kept, every other control character escaped).
    #[test]
    fn text_is_redacted_then_filtered_line_by_line() {
        let out = super::clean(
            "tool EVIL\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\nkey sk-ant-api03-abcdefghijkl",
        );
        assert!(out.starts_with("tool EVIL\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}\nkey "));
        assert!(!out.contains("abcdefghijkl"), "{out}");
        assert!(!out.contains('\u{1b}'), "{out}");
    }
}
