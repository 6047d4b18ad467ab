//! The clap definitions, the low half of ripgrep's `lowargs`/`hiargs` split: the
//! top-level [`Cli`], its [`Command`]s, and the small commands' flags (`ca`, `cache`,
//! `completions`, `man`); the flag groups several commands share are in
//! [`super::shared`]. Every value is parsed and checked on the way in ([`super::parse`]) into the type the
//! library takes; nothing is opened or built here (that is [`super::config`]). Each
//! command's own flags are in [`super::sources`] (the commands that record, capture or
//! import) and [`super::answers`] (the commands that answer from traces).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::answers::{
    AnalyzeArgs, DiffArgs, ExportArgs, PromptArgs, ReplayArgs, ReportCommand, ShowArgs, ViewArgs,
};
use super::parse::parse_bound;
use super::sources::{
    CaptureArgs, HistoryArgs, ImportArgs, MatrixArgs, McpTapArgs, PcapArgs, RecordArgs, ServeArgs,
};

/// Record what AI agent CLIs send to model APIs (Anthropic Messages, OpenAI Responses and Chat Completions, Gemini), and explain it.
#[derive(Parser, Debug)]
#[command(name = "agentwire", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Largest size a gzip-compressed input read whole (a HAR, a claude-tap export, a
    /// transcript) may decompress to, in bytes (1 to 64 GiB).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = agentwire::gzip::DEFAULT_DECOMPRESSED, value_parser = parse_bound)]
    pub max_decompressed: u64,
    /// Largest size one claude-tap bundle record may expand to through its blob
    /// references, in bytes of JSON (1 to 64 GiB).
    #[arg(long, global = true, value_name = "BYTES", default_value_t = agentwire::gzip::DEFAULT_EXPANDED, value_parser = parse_bound)]
    pub max_expanded: u64,
    /// Largest uncompressed input read whole into memory (a HAR, a claude-tap export, a
    /// request body, a transcript), in bytes (1 to 64 GiB). Traces, captures and JSON
    /// Lines stream and have no such bound.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = agentwire::gzip::DEFAULT_DOCUMENT, value_parser = parse_bound)]
    pub max_document: u64,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the fake model-API server (Messages, Responses, Chat Completions, Gemini) and record every exchange.
    Serve(ServeArgs),
    /// Run a CLI (an npm-published Claude Code version, or any command) under the server.
    Record(RecordArgs),
    /// List the exchanges of a trace, one line each.
    Show(ShowArgs),
    /// Re-send a trace's recorded requests to a URL and report statuses and latencies.
    Replay(ReplayArgs),
    /// agentwire's local CA for the first-party route: print it, its path, or rotate it.
    Ca(CaArgs),
    /// Compare the model requests of two traces (or the turns of one, with --within).
    Diff(DiffArgs),
    /// Record every combination of CLI versions × settings × routes and tabulate them.
    Matrix(MatrixArgs),
    /// Redundant polling, prompt-cache misses and background jobs across traces.
    Analyze(AnalyzeArgs),
    /// Extract exchanges from packet capture files (pcap, pcapng, gzip-compressed).
    Pcap(PcapArgs),
    /// Capture exchanges live from a network interface (needs root or CAP_NET_RAW).
    Capture(CaptureArgs),
    /// Shareable reports: a version diff or an audit as one HTML file (charts, no
    /// network), standalone Markdown, or JSON.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Print the system prompt blocks and tool definitions of one request, in full.
    Prompt(PromptArgs),
    /// Record a range of published CLI versions (cached) and report how their requests
    /// changed, version by version.
    History(HistoryArgs),
    /// List or prune agentwire's caches (downloaded CLIs, recordings).
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(CompletionsArgs),
    /// Print the man page, or write all of them (one per subcommand) with --dir.
    Man(ManArgs),
    /// Run a stdio MCP server, relaying its stdin/stdout byte for byte and recording
    /// every JSON-RPC message (what `record` puts in front of each stdio server).
    McpTap(McpTapArgs),
    /// Read Claude Code transcripts, Codex session files, HAR, claude-tap and claude-trace
    /// files into a trace.
    Import(ImportArgs),
    /// Write a trace in another format (HAR 1.2) for the tools people use to look at HTTP.
    Export(ExportArgs),
    /// Read a trace's conversation in the browser, with the audit on its turns (a local
    /// web app; prints its URL).
    View(ViewArgs),
}

/// `agentwire ca`.
#[derive(Args, Debug)]
pub struct CaArgs {
    /// Print the certificate's path instead of the certificate.
    #[arg(long)]
    pub path: bool,
    /// Replace the CA with a new one (clients must trust the new certificate).
    #[arg(long)]
    pub rotate: bool,
}

/// `agentwire cache`.
#[derive(Subcommand, Debug)]
pub enum CacheCommand {
    /// List the cached CLI versions and recordings with their sizes.
    List,
    /// Remove cached entries: everything, or only CLIs / recordings, optionally keeping
    /// the newest N versions.
    Prune(CachePruneArgs),
}

/// `agentwire cache prune`.
#[derive(Args, Debug)]
pub struct CachePruneArgs {
    /// Only downloaded CLIs.
    #[arg(long, conflicts_with = "recordings")]
    pub cli: bool,
    /// Only recordings.
    #[arg(long)]
    pub recordings: bool,
    /// Keep the newest N versions of each CLI (and their recordings), 0 to 10000.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=10_000))]
    pub keep: u16,
    /// Show what would be removed without removing it.
    #[arg(long)]
    pub dry_run: bool,
}

/// `agentwire completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// Shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `agentwire man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `agentwire.1` and `agentwire-COMMAND.1` for every subcommand into DIR
    /// instead of printing `agentwire.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
