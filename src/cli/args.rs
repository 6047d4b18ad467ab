//! The clap definitions, the low half of ripgrep's `lowargs`/`hiargs` split: the
//! top-level [`Cli`] and its [`Command`]s, and the flag groups several commands share.
//! Every value is parsed and checked on the way in ([`super::parse`]) into the type the
//! library takes; nothing is opened or built here (that is [`super::config`]). Each
//! command's own flags are in [`super::sources`] (the commands that record, capture or
//! import) and [`super::answers`] (the commands that answer from traces).

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use agentwire::capture::server::playback::Timing;

use super::answers::{
    AnalyzeArgs, DiffArgs, ExportArgs, PromptArgs, ReplayArgs, ReportCommand, ShowArgs,
};
use super::parse::{parse_max_body, parse_timing, DAY};
use super::sources::{
    CaptureArgs, HistoryArgs, ImportArgs, MatrixArgs, McpTapArgs, PcapArgs, RecordArgs, ServeArgs,
};

/// Record what AI agent CLIs send to the Anthropic Messages API, and explain it.
#[derive(Parser, Debug)]
#[command(name = "agentwire", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the fake Messages API server and record every exchange.
    Serve(ServeArgs),
    /// Run a CLI (an npm-published Claude Code version, or any command) under the server.
    Record(RecordArgs),
    /// List the exchanges of a trace, one line each.
    Show(ShowArgs),
    /// Re-send a trace's recorded requests to a URL and report statuses and latencies.
    Replay(ReplayArgs),
    /// agentwire's local CA for the first-party route: print it, its path, or rotate it.
    Ca(CaArgs),
    /// Compare the Messages requests of two traces (or the turns of one, with --within).
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
    /// Read Claude Code transcripts, HAR, claude-tap and claude-trace files into a trace.
    Import(ImportArgs),
    /// Write a trace in another format (HAR 1.2) for the tools people use to look at HTTP.
    Export(ExportArgs),
}

/// Output formats shared by the reporting commands.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// Terminal table.
    Table,
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// Format of a shareable report.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DocFormatArg {
    /// One self-contained HTML file.
    Html,
    /// Standalone Markdown.
    Md,
    /// JSON.
    Json,
}

/// Where a shareable report goes and in which format.
#[derive(Args, Debug, Clone)]
pub struct DocOutputArgs {
    /// Output file; the extension (.html, .md, .json) picks the format. Default: stdout.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Format (default: from the output's extension, else Markdown).
    #[arg(long, value_enum)]
    pub format: Option<DocFormatArg>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Shorten diff lines longer than N characters, 10 to 100000 (default: every line
    /// whole).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(10..=100_000))]
    pub max_line: Option<u32>,
}

/// How a recorded CLI reaches agentwire.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RouteArg {
    /// As for a user of api.anthropic.com: HTTPS_PROXY plus agentwire's CA (TLS intercepted).
    FirstParty,
    /// As for a gateway user: ANTHROPIC_BASE_URL pointing at agentwire.
    BaseUrl,
}

/// How the server makes its replies (default: a short stub reply).
#[derive(Args, Debug, Clone)]
pub struct ReplyArgs {
    /// Scenario file: per-thread turns of assistant content, delays and injected failures.
    #[arg(long, conflicts_with = "replay")]
    pub script: Option<PathBuf>,
    /// Answer with the recorded responses of this trace, matched by thread and turn.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Replay timing: `recorded`, `none`, or `xN` (N times faster, 0.001 to 1000000).
    #[arg(long, default_value = "none", requires = "replay", value_parser = parse_timing)]
    pub timing: Timing,
}

/// Request limits of the server.
#[derive(Args, Debug, Clone)]
pub struct LimitArgs {
    /// Largest request body accepted, in bytes (1 to 4 GiB); larger ones get 413 (first
    /// bytes kept).
    #[arg(long, default_value_t = 32 * 1024 * 1024, value_parser = parse_max_body)]
    pub max_body: usize,
    /// Seconds a client may take to send its request head and body (1 to 86400); then 408.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=DAY))]
    pub body_timeout: u64,
}

/// How an analysis counts and prices (`analyze`, `report analyze`).
#[derive(Args, Debug)]
pub struct AnalysisArgs {
    /// Cache TTL: each breakpoint's own (auto), or force 5m / 1h.
    #[arg(long, value_enum, default_value = "auto")]
    pub ttl: TtlArg,
    /// Price table JSON file replacing the built-in one: {source, date, models: [{model,
    /// ids, input, output, write_5m, write_1h, read, min_cacheable}]}, USD per million
    /// tokens; ids match exactly, other models are unpriced (see docs/analyze.md).
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// Which usage figures to trust (auto: recorded where the response carries cache
    /// fields and agentwire did not make it up). Traces recorded against another fake
    /// server (placeholder usage) need `simulated`.
    #[arg(long, value_enum, default_value = "auto")]
    pub usage: UsageArg,
}

/// `--ttl`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TtlArg {
    /// Each breakpoint's own `ttl` (default 5 minutes).
    Auto,
    /// 5 minutes everywhere.
    #[value(name = "5m")]
    M5,
    /// 1 hour everywhere.
    #[value(name = "1h")]
    H1,
}

/// `--usage`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum UsageArg {
    /// The responses' usage figures.
    Recorded,
    /// agentwire's cache simulation and token estimates.
    Simulated,
    /// Simulated for exchanges agentwire's fake server answered, recorded where responses
    /// carry cache fields, simulated elsewhere.
    Auto,
}

/// Filters shared by `pcap` and `capture`.
#[derive(Args, Debug, Clone)]
pub struct PacketFilterArgs {
    /// Keep only TCP connections with this port on either side (repeatable).
    #[arg(long = "port", value_name = "N")]
    pub ports: Vec<u16>,
    /// Keep only connections to or from this address (repeatable).
    #[arg(long = "host", value_name = "ADDR")]
    pub hosts: Vec<IpAddr>,
    /// Format of the summary printed at the end.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
}

/// `--threads`, shared by the commands that use several cores.
#[derive(Args, Debug, Clone, Copy)]
pub struct ThreadsArg {
    /// Threads to use (default: one per core). `1` does everything on one thread; the
    /// output is the same byte for byte.
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<std::num::NonZeroUsize>,
}

impl ThreadsArg {
    /// The number of threads: the flag, or the cores available.
    pub fn get(self) -> usize {
        self.threads
            .or_else(|| std::thread::available_parallelism().ok())
            .map_or(1, std::num::NonZeroUsize::get)
    }
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
