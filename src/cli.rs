//! Command-line definitions (clap) and their conversion into the library's plain config
//! structs. The library never sees clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// Redundant polling, prompt-cache misses and background jobs across traces.
    Analyze(AnalyzeArgs),
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

impl From<FormatArg> for agentwire::report::Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => Self::Table,
            FormatArg::Md => Self::Markdown,
            FormatArg::Json => Self::Json,
        }
    }
}

/// `agentwire serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is the first line
    /// printed.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: String,
    /// Trace file to write (JSON Lines).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Scenario file: per-thread turns of assistant content, delays and injected failures.
    #[arg(long)]
    pub script: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Request limits of the server.
#[derive(Args, Debug, Clone)]
pub struct LimitArgs {
    /// Largest request body accepted, in bytes; larger ones get 413 (first bytes kept).
    #[arg(long, default_value_t = 32 * 1024 * 1024)]
    pub max_body: usize,
    /// Seconds a client may take to send its request head and body; then 408.
    #[arg(long, default_value_t = 30)]
    pub body_timeout: u64,
}

/// `agentwire record`.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// CLI to run, as NAME@VERSION (`claude-code@2.1.304`). Without it, run the command
    /// given after `--`.
    #[arg(long)]
    pub cli: Option<String>,
    /// Environment for the CLI, `K=V` (repeatable). `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Scenario file for the server's replies.
    #[arg(long)]
    pub script: Option<PathBuf>,
    /// Trace file to write.
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Seconds before the CLI is killed.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Arguments for the CLI (with --cli; default `-p hello`), or the command to run.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// `agentwire show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Trace file.
    pub trace: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
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

impl From<TtlArg> for agentwire::analyze::TtlMode {
    fn from(t: TtlArg) -> Self {
        match t {
            TtlArg::Auto => Self::Auto,
            TtlArg::M5 => Self::M5,
            TtlArg::H1 => Self::H1,
        }
    }
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

impl From<UsageArg> for agentwire::analyze::UsageMode {
    fn from(u: UsageArg) -> Self {
        match u {
            UsageArg::Recorded => Self::Recorded,
            UsageArg::Simulated => Self::Simulated,
            UsageArg::Auto => Self::Auto,
        }
    }
}

/// `agentwire analyze`.
#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Trace files (JSON Lines), analysed together (threads per file, one shared cache).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// Cache TTL: each breakpoint's own (auto), or force 5m / 1h.
    #[arg(long, value_enum, default_value = "auto")]
    pub ttl: TtlArg,
    /// Price table JSON file replacing the built-in one: {source, date, fallback,
    /// models: [{model, matches, input, output, write_5m, write_1h, read, min_cacheable}]},
    /// USD per million tokens (see docs/analyze.md).
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// Which usage figures to trust. Traces recorded against a fake server (placeholder
    /// usage) need `simulated`.
    #[arg(long, value_enum, default_value = "auto")]
    pub usage: UsageArg,
    /// Fail (exit 4) when a metric crosses a threshold, e.g. `redundant-polls>5`,
    /// `cache-miss-cost>$0.50` (repeatable).
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub fail_on: Vec<String>,
    /// Also write the tables as Parquet files into this directory.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
}
