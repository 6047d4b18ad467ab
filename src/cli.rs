//! Command-line definitions (clap) and their conversion into the library's plain config
//! structs. The library never sees clap.

use std::net::IpAddr;
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
    /// Extract exchanges from packet capture files (pcap, pcapng, gzip-compressed).
    Pcap(PcapArgs),
    /// Capture exchanges live from a network interface (needs root or CAP_NET_RAW).
    Capture(CaptureArgs),
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

/// `agentwire pcap`.
#[derive(Args, Debug)]
pub struct PcapArgs {
    /// Capture files (pcap or pcapng, optionally gzip-compressed), read in order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Trace file to write.
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    #[command(flatten)]
    pub filter: PacketFilterArgs,
}

/// `agentwire capture`.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Interface to capture on (`lo`, `eth0`, `any`).
    #[arg(long)]
    pub iface: String,
    /// BPF filter expression, e.g. `tcp port 8080`.
    #[arg(long)]
    pub filter: Option<String>,
    /// Stop after this long: seconds, or a number with `s`, `m` or `h` (default: until Ctrl-C).
    #[arg(long)]
    pub duration: Option<String>,
    /// Trace file to write.
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    #[command(flatten)]
    pub packet_filter: PacketFilterArgs,
}
