//! The flags of the commands that record, capture or import: `serve`, `record`,
//! `matrix`, `history`, `mcp-tap`, `pcap`, `capture`, `import` (the shared groups are in
//! [`super::args`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use reqwest::Url;

use agentwire::capture::matrix::EnvAxis;

use super::parse::{
    parse_base_url, parse_duration, parse_env, parse_env_axis, parse_hosts, parse_http_url,
    parse_listen_addr, parse_since, Hosts, DAY,
};
use super::shared::{
    DocOutputArgs, FormatArg, LimitArgs, PacketFilterArgs, ReplyArgs, RouteArg, ThreadsArg,
    WebSocketArg,
};

/// `agentwire serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is the first line
    /// printed.
    #[arg(long, default_value = "127.0.0.1:0", value_parser = parse_listen_addr)]
    pub addr: SocketAddr,
    /// Trace file to write (JSON Lines; `-`: standard output, the base URL then goes to
    /// stderr).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Overwrite the trace file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Replace Anthropic-key-shaped strings inside request and response bodies before
    /// writing (bodies are otherwise byte-exact; their digests then describe the redacted
    /// bytes, and each such body is marked `"redacted": true`).
    #[arg(long)]
    pub redact_body: bool,
    #[command(flatten)]
    pub reply: ReplyArgs,
    /// Recording proxy: forward every request to this upstream (e.g.
    /// https://api.anthropic.com) and record both sides.
    #[arg(long, conflicts_with_all = ["script", "replay"], value_parser = parse_base_url)]
    pub upstream: Option<Url>,
    /// PEM file with an extra CA certificate to trust for the upstream.
    #[arg(long, requires = "upstream")]
    pub upstream_ca: Option<PathBuf>,
    /// Seconds without a byte from the upstream before the exchange fails with 504 (1 to
    /// 86400).
    #[arg(long, default_value_t = 600, requires = "upstream", value_parser = clap::value_parser!(u64).range(1..=DAY))]
    pub upstream_timeout: u64,
    /// First-party route: run an HTTP CONNECT proxy that terminates TLS for these hosts
    /// (comma-separated) with certificates from agentwire's CA (`agentwire ca`).
    #[arg(long, num_args = 0..=1, default_missing_value = "api.anthropic.com", value_name = "HOSTS", value_parser = parse_hosts)]
    pub intercept: Option<Hosts>,
    /// With --intercept: tunnel other hosts untouched (logged) instead of refusing them.
    #[arg(long, requires = "intercept")]
    pub tunnel_others: bool,
    /// The Responses WebSocket (`GET …/responses` upgrades): `accept`, or `refuse` (426,
    /// so clients such as Codex fall back to `POST …/responses`).
    #[arg(long, value_enum, default_value = "accept")]
    pub websocket: WebSocketArg,
    /// Serve HTTPS: PEM certificate chain.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Serve HTTPS: PEM private key.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Also serve the conversation viewer (`agentwire view`) on 127.0.0.1, live: each
    /// exchange appears as it is recorded. Its URL (with its token) is printed on stderr.
    #[arg(long)]
    pub ui: bool,
}

/// `agentwire record`.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// CLI to run, as NAME@VERSION (`claude-code@2.1.304`) or NAME@TAG with an npm
    /// dist-tag (`claude-code@latest`, resolved through the registry; the trace context
    /// keeps the version and the tag). Without it, run the command given after `--`.
    #[arg(long)]
    pub cli: Option<String>,
    /// Environment for the CLI, `K=V` (repeatable). `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, Option<String>)>,
    #[command(flatten)]
    pub reply: ReplyArgs,
    /// Trace file to write (`-`: standard output; the summary then goes to stderr).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Seconds before the CLI is killed (1 to 604800, a week).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=7 * DAY))]
    pub timeout: u64,
    /// Overwrite the trace file if it exists.
    #[arg(long)]
    pub force: bool,
    /// Replace Anthropic-key-shaped strings inside bodies before writing (see `serve
    /// --redact-body`).
    #[arg(long)]
    pub redact_body: bool,
    /// How the CLI reaches agentwire. Claude Code: `first-party` (the default:
    /// HTTPS_PROXY + agentwire's CA, what a user of api.anthropic.com sends) or `base-url`
    /// (ANTHROPIC_BASE_URL: what a gateway user sends). Codex: `custom-provider` (the
    /// default: a custom model provider, HTTP) or `builtin` (the built-in provider with
    /// openai_base_url: the Responses WebSocket). opencode (also `--provider`):
    /// `anthropic` (the default: POST /v1/messages), `openai` (POST /v1/responses) or
    /// `compatible` (an OpenAI-compatible provider: POST /v1/chat/completions).
    #[arg(long, value_enum, visible_alias = "provider")]
    pub route: Option<RouteArg>,
    /// The fake server's answer to a Responses WebSocket upgrade (see `serve
    /// --websocket`): `refuse` makes Codex's built-in route fall back to HTTP, to compare
    /// the two transports on one provider.
    #[arg(long, value_enum, default_value = "accept")]
    pub websocket: WebSocketArg,
    /// Arguments for the CLI (with --cli; default: one print-mode prompt, `-p hello` for
    /// Claude Code, `exec --skip-git-repo-check hello` for Codex), or the command to run.
    #[arg(last = true)]
    pub args: Vec<String>,
    /// Serve the conversation viewer live while the CLI runs (as `serve --ui`); its URL,
    /// with its token, is the first line on stdout.
    #[arg(long)]
    pub ui: bool,
}

/// `agentwire matrix`.
#[derive(Args, Debug)]
pub struct MatrixArgs {
    /// CLI versions, comma-separated: `claude-code@2.1.303,claude-code@latest`; a range
    /// `claude-code@2.1.300..2.1.304` adds every version published between its ends;
    /// agents mix (`claude-code@2.1.304,codex@0.171.0,gemini@0.61.0,opencode@1.18.33`:
    /// one row per agent, each on its own default route).
    #[arg(long, value_delimiter = ',', required = true)]
    pub cli: Vec<String>,
    /// An environment dimension `K=V1,V2,...` (repeatable); `unset` removes K.
    #[arg(long = "env", value_name = "K=V1,V2", value_parser = parse_env_axis)]
    pub env: Vec<EnvAxis>,
    /// Routes to try, comma-separated (see `record --route`); default: each CLI's own
    /// default route.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub route: Vec<RouteArg>,
    /// Directory for the traces (one file per run).
    #[arg(short, long, default_value = "matrix")]
    pub dir: PathBuf,
    /// Overwrite traces of the same runs already in the directory.
    #[arg(long)]
    pub force: bool,
    /// Runs recorded at once (1 to 32).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub parallel: u8,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// Also write the matrix as one self-contained HTML page with charts (bytes, tokens
    /// and cost per run) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Tabulate the MCP layer instead of tool definitions: protocol, task support,
    /// tasks, backgrounding, polls on both layers, notifications, wall time.
    #[arg(long)]
    pub mcp: bool,
    /// How the fake server answers (a scenario drives every run the same way).
    #[command(flatten)]
    pub reply: ReplyArgs,
    /// Arguments for every CLI run (default `-p hello`); `--mcp-config FILE` servers are
    /// recorded too.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// `agentwire history`.
#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// Versions: `claude-code@A..B` (every published version from A to B), a list
    /// `claude-code@2.1.303,2.1.304,2.1.318`, or both mixed; or trace files.
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// Keep every Nth version of a range, 1 to 1000 (the first and last are always kept).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub step: u16,
    /// Route the versions are recorded with (see `record --route`; default: the CLI's own
    /// default route).
    #[arg(long, value_enum)]
    pub route: Option<RouteArg>,
    /// Environment for the recordings, `K=V` (repeatable); part of the cache key.
    #[arg(long = "env", value_name = "K=V", value_parser = parse_env)]
    pub env: Vec<(String, Option<String>)>,
    /// Versions recorded at once (1 to 32).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub parallel: u8,
    /// Directory for the pairwise diff reports the history links to, in the output's
    /// format (HTML or Markdown; default: next to the output, `NAME-diffs/`).
    #[arg(long, value_name = "DIR")]
    pub diff_dir: Option<PathBuf>,
    #[command(flatten)]
    pub out: DocOutputArgs,
    /// Arguments for every recorded CLI run (default `-p hello`).
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// `agentwire mcp-tap`.
#[derive(Args, Debug)]
pub struct McpTapArgs {
    /// Server name written in every record (the `mcpServers` key).
    #[arg(long, default_value = "mcp")]
    pub name: String,
    /// Trace file for the records (default `mcp-NAME.jsonl`); an existing file is refused
    /// unless `--force`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Replace an existing output file.
    #[arg(long)]
    pub force: bool,
    /// Directory the server runs in (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Record a Streamable HTTP server instead: serve a recording proxy for URL on
    /// 127.0.0.1 (its URL is the first stdout line) until interrupted.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "cwd"], value_parser = parse_http_url)]
    pub http: Option<Url>,
    /// After SIGTERM, SIGINT or SIGHUP (forwarded to the server), how long the server may
    /// take to exit before it is killed: seconds, or a number with `s`, `m` or `h`.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration, conflicts_with = "http")]
    pub stop_grace: Duration,
    /// The server command and its arguments.
    #[arg(last = true, required_unless_present = "http")]
    pub command: Vec<String>,
}

/// `agentwire pcap`.
#[derive(Args, Debug)]
pub struct PcapArgs {
    /// Capture files (pcap or pcapng, optionally gzip-compressed), read in order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Trace file to write (`-`: standard output; the summary then goes to stderr).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Overwrite the trace file if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub filter: PacketFilterArgs,
    #[command(flatten)]
    pub threads: ThreadsArg,
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
    /// Stop after this long: seconds, or a number with `s`, `m` or `h`, up to 366 days
    /// (default: until Ctrl-C).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Trace file to write (`-`: standard output; the summary then goes to stderr).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Overwrite the trace file if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub packet_filter: PacketFilterArgs,
}

/// `agentwire import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Files or directories (e.g. ~/.claude/projects or ~/.codex/sessions; every session
    /// under it), or `-` for standard input. Formats are recognised from the content: Claude
    /// Code transcripts, Codex session files, HAR 1.2, claude-tap exports, claude-trace logs,
    /// agentwire traces.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Trace file to write (JSON Lines).
    #[arg(short, long, default_value = "trace.jsonl")]
    pub output: PathBuf,
    /// Overwrite the output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Keep only exchanges that started on or after this date (`2026-01-31` or an RFC 3339
    /// time, UTC).
    #[arg(long, value_name = "DATE", value_parser = parse_since)]
    pub since: Option<chrono::DateTime<chrono::Utc>>,
}
