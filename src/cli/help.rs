//! Around the definitions: parsing the process's arguments (usage errors redacted and
//! filtered on their way to stderr), the exit-code footer every command's `--help` ends
//! with ([`super::exit::EXIT_CODES`]), and the shell completions and man pages generated
//! at run time from the same definitions.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches};

use super::args::Cli;
use super::exit::EXIT_CODES;

/// The `--help` footer listing [`EXIT_CODES`], one code a line (`sep` between lines: a
/// blank line for man pages, whose paragraphs are filled).
fn exit_code_footer(sep: &str) -> String {
    let mut lines = vec![String::from("Exit codes:")];
    for (code, name, meaning) in EXIT_CODES {
        lines.push(format!("  {code}  {name}: {meaning}"));
    }
    lines.push("A closed stdout pipe (`| head`) exits 0.".into());
    lines.join(sep)
}

/// The full command definition: the derive's, with the exit-code footer on every command.
pub fn command() -> clap::Command {
    command_with_footer(&exit_code_footer("\n"))
}

fn command_with_footer(footer: &str) -> clap::Command {
    with_footer(Cli::command().after_help(footer.to_string()), footer)
}

/// Append `footer` to the help of every subcommand of `c`, at every depth (`report diff`,
/// `cache prune`).
fn with_footer(c: clap::Command, footer: &str) -> clap::Command {
    c.mut_subcommands(|sub| {
        let help = match sub.get_after_help() {
            Some(own) => format!("{own}\n\n{footer}"),
            None => footer.to_string(),
        };
        with_footer(sub.after_help(help), footer)
    })
}

/// The command definition for man pages: the footer's lines as paragraphs.
fn man_command() -> clap::Command {
    command_with_footer(&exit_code_footer("\n\n"))
}

/// Parse the process's arguments; usage errors print clap's message and exit
/// [`USAGE`](super::exit::USAGE).
pub fn parse() -> Cli {
    let matches = command()
        .try_get_matches()
        .unwrap_or_else(|e| exit_redacted(e));
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| exit_redacted(e))
}

/// Print a usage error through the diagnostics sink (redacted and filtered:
/// [`crate::cmd::diag::clap_error`]) and exit with clap's code (2): clap quotes the bad
/// value, which may hold credentials (`--to ftp://user:pw@host`). Help and version output
/// go out as clap prints them.
fn exit_redacted(e: clap::Error) -> ! {
    use std::io::IsTerminal;
    if !e.use_stderr() {
        e.exit()
    }
    let styled = e.render();
    let ansi = std::io::stderr()
        .is_terminal()
        .then(|| styled.ansi().to_string());
    crate::cmd::diag::clap_error(&styled.to_string(), ansi.as_deref(), e.exit_code())
}

/// Write the completion script for `shell` to `out`.
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    clap_complete::generate(shell, &mut command(), "agentwire", out);
}

/// Write `agentwire.1` and one page per subcommand (`agentwire-diff.1`, …) into `dir`;
/// returns the paths written.
pub fn write_man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let cmd = man_command();
    clap_mangen::generate_to(cmd.clone(), dir)?;
    let mut written = vec![dir.join("agentwire.1")];
    page_names(&cmd, "agentwire", &mut |name| {
        written.push(dir.join(format!("{name}.1")))
    });
    Ok(written)
}

/// The page names `clap_mangen::generate_to` writes below `cmd` (`agentwire-report-diff`):
/// one per visible subcommand at every depth, none for `help`.
fn page_names(cmd: &clap::Command, prefix: &str, found: &mut dyn FnMut(String)) {
    for c in cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        let name = format!("{prefix}-{}", c.get_name());
        page_names(c, &name, found);
        found(name);
    }
}

/// Write the top-level man page (`agentwire.1`) to `out`.
pub fn write_man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // as `clap_mangen::generate_to` does for the files: no page for `help`
    clap_mangen::Man::new(man_command().disable_help_subcommand(true)).render(out)
}
