//! The flag groups several commands share (`#[command(flatten)]`): output formats, a
//! shareable report's output, the route, how the server replies and its limits, the
//! analysis settings, packet filters, `--threads`. Leaf definitions: they name no command.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use agentwire::capture::server::playback::Timing;

use super::parse::{parse_max_body, parse_timing, DAY};

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
    /// Claude Code, as for a user of api.anthropic.com: HTTPS_PROXY plus agentwire's CA (TLS
    /// intercepted).
    FirstParty,
    /// Claude Code, as for a gateway user: ANTHROPIC_BASE_URL pointing at agentwire.
    BaseUrl,
    /// Codex, as for a gateway user: a custom model provider whose base_url is agentwire
    /// (HTTP POST /v1/responses).
    CustomProvider,
    /// Codex's built-in OpenAI provider with openai_base_url at agentwire (the Responses
    /// WebSocket first).
    Builtin,
    /// opencode's anthropic provider at agentwire (POST /v1/messages).
    Anthropic,
    /// opencode's openai provider at agentwire (POST /v1/responses).
    #[value(name = "openai")]
    OpenAi,
    /// An OpenAI-compatible provider of opencode at agentwire (POST /v1/chat/completions).
    Compatible,
}

/// What `serve` does with a Responses WebSocket upgrade.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum WebSocketArg {
    /// Accept it (101) and answer the session over the socket.
    Accept,
    /// Refuse it (426): clients such as Codex fall back to HTTP POST.
    Refuse,
}

/// How the server makes its replies (default: a short stub reply).
#[derive(Args, Debug, Clone)]
pub struct ReplyArgs {
    /// Scenario file: per-thread turns of assistant content, delays and injected failures.
    /// A file with a part per agent (`{"agents": {"codex": {"scenario": …, "args": […]}}}`)
    /// drives each `--cli` agent of `record` / `matrix` with its own part and arguments
    /// (docs/scenario-format.md; `captures/scenarios/agents-bg-build.json`).
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
