//! The command glue: one file per subcommand (as `--help` lists them), turning parsed
//! arguments into library calls and renderer output. Shared glue: [`diag`] (the one
//! diagnostics sink), [`io`] (stdout, summaries, reports, live traces), [`term`] (colour
//! and progress); flags become library configs in [`crate::cli::config`].

#[macro_use]
pub(crate) mod diag;
mod alloc;
mod analyze;
mod ca;
mod cache;
mod capture;
mod completions;
mod diff;
mod export;
mod history;
mod import;
pub(crate) mod io;
mod man;
mod matrix;
mod mcp_tap;
mod pcap;
mod prompt;
mod record;
mod replay;
mod report;
mod serve;
mod show;
mod term;
mod view;

pub use diag::fail;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{Cli, Command};

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    alloc::tune();
    agentwire::gzip::set_bounds(agentwire::gzip::Bounds {
        decompressed: cli.max_decompressed,
        expanded: cli.max_expanded,
        document: cli.max_document,
    });
    match cli.command {
        Command::Show(a) => show::show(a),
        Command::Serve(a) => serve::serve(a),
        Command::Record(a) => record::record(a),
        Command::Replay(a) => replay::replay(a),
        Command::Ca(a) => ca::ca(a),
        Command::Diff(a) => diff::diff(a),
        Command::Matrix(a) => matrix::matrix(a),
        Command::Analyze(a) => analyze::analyze(a),
        Command::Pcap(a) => pcap::pcap(a),
        Command::Capture(a) => capture::capture(a),
        Command::Report(c) => report::report(c),
        Command::Prompt(a) => prompt::prompt(a),
        Command::History(a) => history::history(a),
        Command::Cache(c) => cache::cache(c),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => man::man(a),
        Command::McpTap(a) => mcp_tap::mcp_tap(a),
        Command::Import(a) => import::import(a),
        Command::Export(a) => export::export(a),
        Command::View(a) => view::view(a),
    }
}
