//! The flags of the commands that answer from traces: `show`, `diff`, `analyze`,
//! `report`, `prompt`, `replay`, `export` (the shared groups are in [`super::args`]).

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use reqwest::Url;

use agentwire::gate::Gate;

use super::parse::{
    parse_analyze_gate, parse_base_url, parse_diff_gate, parse_env, parse_header, parse_rate,
    parse_since,
};
use super::shared::{AnalysisArgs, DocOutputArgs, FormatArg, RouteArg};

/// `agentwire show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Trace file, directory or `-`; other tools' formats are imported on the fly.
    pub trace: PathBuf,
    /// Only exchanges that started on or after this date (`2026-01-31` or RFC 3339).
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// List the MCP messages (`mcp` records) instead of the exchanges.
    #[arg(long)]
    pub mcp: bool,
}

/// `agentwire diff`.
#[derive(Args, Debug)]
#[command(
    after_help = "Inputs: a trace file, FILE#N (exchange N as `agentwire show` numbers it), \
a JSON file holding one request body, - for standard input (one of the two), or a CLI spec NAME@VERSION or NAME@TAG \
(claude-code@2.1.304, claude-code@latest), \
recorded on the fly with `-p hello` under the fake server (see --env, --record-dir)."
)]
pub struct DiffArgs {
    /// Input A (old). With --within: the one trace.
    #[arg(required_unless_present = "within")]
    pub a: Option<String>,
    /// Input B (new).
    #[arg(required_unless_present = "within")]
    pub b: Option<String>,
    /// Align the two conversations turn by turn (by thread and turn number).
    #[arg(long, conflicts_with = "within")]
    pub all: bool,
    /// Diff each request of TRACE against the previous request of the same thread.
    #[arg(long, value_name = "TRACE", conflicts_with_all = ["a", "b"])]
    pub within: Option<String>,
    /// Normalization rules file (JSON) that extends or overrides the built-in rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Compare raw values: no normalization at all.
    #[arg(long, conflicts_with = "rules")]
    pub no_normalize: bool,
    /// CI gate (repeatable, or comma-separated): exit 4 when met, e.g. `tools-added`,
    /// `beta-changed`, `schema-bytes>+5%`.
    #[arg(long = "fail-on", value_name = "EXPR", value_delimiter = ',', value_parser = parse_diff_gate)]
    pub fail_on: Vec<Option<Gate>>,
    /// Environment for inputs given as CLI specs, `K=V` (repeatable); `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, Option<String>)>,
    /// Keep the traces recorded for CLI-spec inputs in DIR (default: a temporary
    /// directory, removed afterwards).
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Overwrite traces already in --record-dir.
    #[arg(long, requires = "record_dir")]
    pub force: bool,
    /// Route for inputs given as CLI specs (see `record --route`; default first-party).
    /// Ignored, with a warning, when no input is a CLI spec.
    #[arg(long, value_enum)]
    pub route: Option<RouteArg>,
    /// Output format.
    /// List the rows that did not change too (parameters, beta and version headers,
    /// client version); by default they are counted, not listed.
    #[arg(long)]
    pub unchanged: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
}

/// `agentwire analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Trace files (JSON Lines), analysed together (sessions never span files; one shared
    /// cache).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub settings: AnalysisArgs,
    /// Fail (exit 4) when a metric crosses a threshold, e.g. `redundant-polls>5`,
    /// `cache-miss-cost>$0.50` (repeatable).
    #[arg(long = "fail-on", value_name = "EXPR", value_parser = parse_analyze_gate)]
    pub fail_on: Vec<Gate>,
    /// Also write the tables as Parquet files into this directory.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Overwrite Parquet tables already in the --parquet directory.
    #[arg(long, requires = "parquet")]
    pub force: bool,
}

/// `agentwire report`.
#[derive(Subcommand, Debug)]
pub enum ReportCommand {
    /// Version diff of two inputs (trace files, FILE#N, pcap files, or CLI specs such as
    /// claude-code@2.1.304 recorded on the fly).
    Diff(ReportDiffArgs),
    /// Audit of traces (or pcap files): polling, prompt-cache misses, background jobs.
    Analyze(ReportAnalyzeArgs),
}

/// `agentwire report diff`.
#[derive(Args, Debug)]
pub struct ReportDiffArgs {
    /// Input A (old).
    pub a: String,
    /// Input B (new).
    pub b: String,
    /// Align the two conversations turn by turn (by thread and turn number).
    #[arg(long)]
    pub all: bool,
    /// Normalization rules file (JSON) that extends or overrides the built-in rules.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Compare raw values: no normalization at all.
    #[arg(long, conflicts_with = "rules")]
    pub no_normalize: bool,
    /// Environment for inputs given as CLI specs, `K=V` (repeatable); `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, Option<String>)>,
    /// Keep the traces recorded for CLI-spec inputs in DIR.
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Route for inputs given as CLI specs (see `record --route`; default first-party).
    /// Ignored, with a warning, when no input is a CLI spec.
    #[arg(long, value_enum)]
    pub route: Option<RouteArg>,
    #[command(flatten)]
    pub out: DocOutputArgs,
}

/// `agentwire report analyze`.
#[derive(Args, Debug)]
pub struct ReportAnalyzeArgs {
    /// Trace files or pcap files, analysed together (threads per file, one shared cache).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    #[command(flatten)]
    pub settings: AnalysisArgs,
    #[command(flatten)]
    pub out: DocOutputArgs,
}

/// `agentwire prompt`.
#[derive(Args, Debug)]
pub struct PromptArgs {
    /// A trace (its first main-thread request), FILE#N (exchange N as `show` numbers
    /// it), a pcap file, a request body (JSON), or a CLI spec such as
    /// claude-code@2.1.304 recorded on the fly.
    pub input: String,
    /// Output format (default: from the output's extension, else Markdown).
    #[arg(long, value_enum)]
    pub format: Option<PromptFormatArg>,
    /// Output file (.md or .json). Default: stdout.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Environment for an input given as a CLI spec, `K=V` (repeatable); `K=unset`
    /// removes K.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, Option<String>)>,
    /// Keep the trace recorded for a CLI-spec input in DIR.
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<PathBuf>,
    /// Route for an input given as a CLI spec (see `record --route`). Ignored, with a
    /// warning, when the input is not a CLI spec.
    #[arg(long, value_enum)]
    pub route: Option<RouteArg>,
}

/// Format of `agentwire prompt`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PromptFormatArg {
    /// Markdown.
    Md,
    /// JSON.
    Json,
}

/// `agentwire replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace whose requests to send.
    pub trace: PathBuf,
    /// Base URL to send to, e.g. http://127.0.0.1:8080.
    #[arg(long, value_parser = parse_base_url)]
    pub to: Url,
    /// Requests in flight at once (1 to 1024).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: u16,
    /// Requests started per second at most, e.g. `--rate 20` (0.001 to 1000000).
    #[arg(long, value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Extra header `K: V` (repeatable), e.g. a real key: traces hold only markers.
    #[arg(long = "header", value_name = "K: V", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// Compare each new response with the recorded one (stop reason, tool calls, text).
    #[arg(long)]
    pub compare: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
}

/// `agentwire export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Write HTTP Archive 1.2 (the only export format so far).
    #[arg(long, required = true)]
    pub har: bool,
    /// Trace to export (any input `show` reads).
    pub input: PathBuf,
    /// Output file; `-` is standard output.
    #[arg(short, long, default_value = "-")]
    pub output: PathBuf,
    /// Overwrite the output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Scheme and host for URLs of exchanges without a `host` header.
    #[arg(long, default_value = "http://localhost", value_parser = parse_base_url)]
    pub base_url: Url,
}

/// `agentwire view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// Trace file, directory, packet capture or another tool's file (imported on the fly).
    pub input: PathBuf,
    /// Open the viewer in the default browser (`xdg-open`, `open`).
    #[arg(long)]
    pub open: bool,
    /// Address to listen on (port 0 picks a free one). Anything but loopback lets others
    /// on the network reach the viewer (the token still guards it): a warning says so.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", value_parser = super::parse::parse_listen_addr)]
    pub bind: std::net::SocketAddr,
    #[command(flatten)]
    pub settings: AnalysisArgs,
}
