//! Command-line definitions (clap) and their conversion into the library's plain config
//! structs; the exit-code table of `--help`; shell completions and man pages generated from
//! the same definitions. The library never sees clap.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

/// The exit-code table: (code, name, meaning). The `--help` footer of every command and
/// the README's table are this one list (a test compares them).
pub const EXIT_CODES: [(u8, &str, &str); 5] = [
    (0, "ok", "the command did its job"),
    (
        1,
        "error",
        "an input is missing or unreadable, or a run failed (`error: …` on stderr)",
    ),
    (
        2,
        "usage",
        "a wrong subcommand, flag or value; nothing was done",
    ),
    (
        3,
        "degraded",
        "finished, but some input records or files were bad and skipped (listed on stderr)",
    ),
    (
        4,
        "gate tripped",
        "a `--fail-on` gate (diff, analyze) tripped, or `replay --compare` found differences",
    ),
];

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

/// Parse the process's arguments; usage errors print clap's message and exit 2.
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

// Numeric flags: every one is parsed and range-checked here, so no value typed on the
// command line can panic or hang the library (durations overflowing a clock, rates of 0
// or NaN, sizes of 0).

/// Seconds in a day, the cap of the server's timeouts.
const DAY: u64 = 86_400;

/// `--rate`: requests per second, finite, from 0.001 (one every ~17 min) to 1,000,000.
fn parse_rate(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of requests per second (e.g. 20)"))?;
    if !v.is_finite() || !(0.001..=1e6).contains(&v) {
        return Err(format!(
            "{s:?} is out of range: give requests per second from 0.001 to 1000000"
        ));
    }
    Ok(v)
}

/// `--duration`: seconds, or a number with `s`, `m` or `h`; more than 0, at most 366 days.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1.0),
        Some('m') => (&t[..t.len() - 1], 60.0),
        Some('h') => (&t[..t.len() - 1], 3600.0),
        _ => (t, 1.0),
    };
    let bad =
        || format!("{s:?}: use seconds, or a number with s, m or h (30s, 5m), up to 366 days");
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let secs = v * mult;
    if !secs.is_finite() || secs <= 0.0 || secs > 366.0 * DAY as f64 {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

/// `--max-body`: bytes, from 1 to 4 GiB.
fn parse_max_body(s: &str) -> Result<usize, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of bytes"))?;
    if !(1..=4 << 30).contains(&v) {
        return Err(format!("{s:?} is out of range: give 1 to 4294967296 bytes"));
    }
    usize::try_from(v).map_err(|_| format!("{s:?} is too large for this platform"))
}

/// `--timing`: `recorded`, `none` or `xN` with N from 0.001 to 1000000.
fn parse_timing(s: &str) -> Result<String, String> {
    agentwire::capture::server::replay::Timing::parse(s)
        .map(|_| s.to_string())
        .ok_or_else(|| {
            format!("{s:?}: use recorded, none, or xN with N from 0.001 to 1000000 (e.g. x10)")
        })
}

/// `serve --addr`: an `IP:PORT` socket address (`[IPv6]:PORT`), port 0 to 65535.
fn parse_listen_addr(s: &str) -> Result<String, String> {
    s.trim()
        .parse::<std::net::SocketAddr>()
        .map(|_| s.trim().to_string())
        .map_err(|_| {
            format!(
                "{s:?} is not an address to listen on: use IP:PORT with an IPv4 address (4 numbers 0-255) or [IPv6], and a port from 0 to 65535 (0 picks a free one), e.g. 127.0.0.1:8080"
            )
        })
}

/// `replay --to`, `serve --upstream`, `mcp-tap --http`, `export --base-url`: an absolute
/// `http://` or `https://` URL with a host.
fn parse_http_url(s: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(s.trim()).map_err(|e| {
        format!("{s:?} is not a URL ({e}): write it as http://HOST:PORT or https://HOST")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{s:?}: the scheme {:?} is not one agentwire speaks; use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{s:?} names no host: write it as http://HOST:PORT"));
    }
    Ok(s.trim().to_string())
}

/// `replay --to`, `serve --upstream`, `export --base-url`: an http(s) URL that request
/// paths are appended to, so it has no query or fragment (they would be dropped, not
/// sent).
fn parse_base_url(s: &str) -> Result<String, String> {
    let ok = parse_http_url(s)?;
    let url = reqwest::Url::parse(&ok).map_err(|e| e.to_string())?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{s:?} has a query or fragment, which a base URL cannot carry (each request's own path and query are appended): write it as http://HOST:PORT[/PREFIX]"
        ));
    }
    Ok(ok)
}

/// `serve --intercept`: comma-separated host names, at least one.
fn parse_hosts(s: &str) -> Result<String, String> {
    let hosts: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    if hosts.is_empty() {
        return Err(format!(
            "{s:?} names no host: give host names separated by commas, e.g. api.anthropic.com"
        ));
    }
    if let Some(h) = hosts.iter().find(|h| {
        !h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    }) {
        return Err(format!(
            "{h:?} is not a host name (letters, digits, '.', '-' only; no scheme, port or path), e.g. api.anthropic.com"
        ));
    }
    Ok(s.to_string())
}

/// `replay --header`: `Name: value`, a valid HTTP header name and a value without line
/// breaks or NUL (RFC 9110 §5.5: a CR or LF would inject another header).
fn parse_header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: use \"Name: value\""))?;
    let (k, v) = (k.trim(), v.trim());
    if hyper::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
        return Err(format!(
            "{k:?} is not a header name (letters, digits and !#$%&'*+-.^_`|~ only): use \"Name: value\""
        ));
    }
    if hyper::header::HeaderValue::from_str(v).is_err() || v.contains(['\r', '\n']) {
        return Err(format!(
            "the value of header {k:?} holds a line break or control character; give one header per --header"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

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
    pub http: Option<String>,
    /// The server command and its arguments.
    #[arg(last = true, required_unless_present = "http")]
    pub command: Vec<String>,
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

impl From<DocFormatArg> for agentwire::report::DocFormat {
    fn from(f: DocFormatArg) -> Self {
        match f {
            DocFormatArg::Html => Self::Html,
            DocFormatArg::Md => Self::Markdown,
            DocFormatArg::Json => Self::Json,
        }
    }
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
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
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
    /// it), a pcap file, or a request body (JSON).
    pub input: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub format: PromptFormatArg,
}

/// Format of `agentwire prompt`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PromptFormatArg {
    /// Markdown.
    Md,
    /// JSON.
    Json,
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
    /// Route the versions are recorded with (see `record --route`).
    #[arg(long, value_enum, default_value = "first-party")]
    pub route: RouteArg,
    /// Environment for the recordings, `K=V` (repeatable); part of the cache key.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
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

/// `agentwire import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Files or directories (e.g. ~/.claude/projects; every session under it), or `-` for
    /// standard input. Formats are recognised from the content: Claude Code transcripts,
    /// HAR 1.2, claude-tap exports, claude-trace logs, agentwire traces.
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
    pub base_url: String,
}

/// `--since DATE`: `YYYY-MM-DD` (midnight UTC) or an RFC 3339 time.
pub fn parse_since(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| format!("{s:?} is not a date; write 2026-01-31 or 2026-01-31T12:00:00Z"))
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

/// How a recorded CLI reaches agentwire.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RouteArg {
    /// As for a user of api.anthropic.com: HTTPS_PROXY plus agentwire's CA (TLS intercepted).
    FirstParty,
    /// As for a gateway user: ANTHROPIC_BASE_URL pointing at agentwire.
    BaseUrl,
}

impl From<RouteArg> for agentwire::capture::record::Route {
    fn from(r: RouteArg) -> Self {
        match r {
            RouteArg::FirstParty => Self::FirstParty,
            RouteArg::BaseUrl => Self::BaseUrl,
        }
    }
}

/// `agentwire replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace whose requests to send.
    pub trace: PathBuf,
    /// Base URL to send to, e.g. http://127.0.0.1:8080.
    #[arg(long, value_parser = parse_base_url)]
    pub to: String,
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
    #[arg(long, default_value = "127.0.0.1:0", value_parser = parse_listen_addr)]
    pub addr: String,
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
    pub upstream: Option<String>,
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
    pub intercept: Option<String>,
    /// With --intercept: tunnel other hosts untouched (logged) instead of refusing them.
    #[arg(long, requires = "intercept")]
    pub tunnel_others: bool,
    /// The Responses WebSocket (`GET …/responses` upgrades): `accept`, or `refuse` (426,
    /// so clients such as Codex fall back to `POST …/responses`).
    #[arg(long, default_value = "accept", value_parser = ["accept", "refuse"])]
    pub websocket: String,
    /// Serve HTTPS: PEM certificate chain.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Serve HTTPS: PEM private key.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// How the server makes its replies (default: a short stub reply).
#[derive(Args, Debug, Clone, Default)]
pub struct ReplyArgs {
    /// Scenario file: per-thread turns of assistant content, delays and injected failures.
    #[arg(long, conflicts_with = "replay")]
    pub script: Option<PathBuf>,
    /// Answer with the recorded responses of this trace, matched by thread and turn.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Replay timing: `recorded`, `none`, or `xN` (N times faster, 0.001 to 1000000).
    #[arg(long, default_value = "none", requires = "replay", value_parser = parse_timing)]
    pub timing: String,
}

impl Default for LimitArgs {
    /// The server's own defaults (those of `ServerConfig::default`).
    fn default() -> Self {
        let d = agentwire::capture::server::ServerConfig::default();
        LimitArgs {
            max_body: d.max_body,
            body_timeout: d.body_timeout.as_secs(),
        }
    }
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

/// `agentwire record`.
#[derive(Args, Debug)]
pub struct RecordArgs {
    /// CLI to run, as NAME@VERSION (`claude-code@2.1.304`) or NAME@TAG with an npm
    /// dist-tag (`claude-code@latest`, resolved through the registry; the trace context
    /// keeps the version and the tag). Without it, run the command given after `--`.
    #[arg(long)]
    pub cli: Option<String>,
    /// Environment for the CLI, `K=V` (repeatable). `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
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
    /// How the CLI reaches agentwire: `first-party` (HTTPS_PROXY + agentwire's CA: what a
    /// user of api.anthropic.com sends) or `base-url` (ANTHROPIC_BASE_URL: what a gateway
    /// user sends).
    #[arg(long, value_enum, default_value = "first-party")]
    pub route: RouteArg,
    /// Arguments for the CLI (with --cli; default `-p hello`), or the command to run.
    #[arg(last = true)]
    pub args: Vec<String>,
}

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

/// `agentwire matrix`.
#[derive(Args, Debug)]
pub struct MatrixArgs {
    /// CLI versions, comma-separated: `claude-code@2.1.303,claude-code@latest`; a range
    /// `claude-code@2.1.300..2.1.304` adds every version published between its ends.
    #[arg(long, value_delimiter = ',', required = true)]
    pub cli: Vec<String>,
    /// An environment dimension `K=V1,V2,...` (repeatable); `unset` removes K.
    #[arg(long = "env", value_name = "K=V1,V2")]
    pub env: Vec<String>,
    /// Routes to try, comma-separated: `first-party`, `base-url`.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "first-party")]
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
    #[arg(long = "fail-on", value_name = "EXPR", value_delimiter = ',')]
    pub fail_on: Vec<String>,
    /// Environment for inputs given as CLI specs, `K=V` (repeatable); `K=unset` removes K.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
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
    #[arg(long = "fail-on", value_name = "EXPR")]
    pub fail_on: Vec<String>,
    /// Also write the tables as Parquet files into this directory.
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,
    /// Overwrite Parquet tables already in the --parquet directory.
    #[arg(long, requires = "parquet")]
    pub force: bool,
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

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire::capture::server::replay::{Timing, MAX_DELAY};
    use proptest::prelude::*;
    use std::time::Instant;

    #[test]
    fn a_base_url_with_a_query_is_refused_not_dropped() {
        // Found by an adversarial test: `replay --to http://h/?key=…` and `serve --upstream
        // …/base?key=X` dropped the query without a word.
        for bad in [
            "http://h/?key=abc",
            "https://h/base?x=1",
            "http://h:8080/#frag",
        ] {
            let e = parse_base_url(bad).unwrap_err();
            assert!(e.contains("query or fragment"), "{bad}: {e}");
        }
        for good in [
            "http://127.0.0.1:8080",
            "https://api.anthropic.com",
            "http://h/prefix/",
        ] {
            assert_eq!(parse_base_url(good).unwrap(), good);
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["soon", "inf", "1e20", "-1", "0", "nan", "NaNs", ""] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// `replay --rate 0|-1|nan|1e-300` and friends panicked or hung; they are usage errors.
    #[test]
    fn out_of_range_numbers_are_usage_errors() {
        for rate in ["0", "-1", "nan", "1e-300", "inf", "1e400"] {
            let r = Cli::try_parse_from([
                "agentwire",
                "replay",
                "t",
                "--to",
                "http://x",
                "--rate",
                rate,
            ]);
            assert!(r.is_err(), "--rate {rate}");
        }
        for d in ["inf", "1e20", "-5s"] {
            let r = Cli::try_parse_from(["agentwire", "capture", "--iface", "lo", "--duration", d]);
            assert!(r.is_err(), "--duration {d}");
        }
        for t in ["x0", "x1e-300", "xinf", "xnan", "x-1"] {
            let r = Cli::try_parse_from(["agentwire", "serve", "--replay", "t", "--timing", t]);
            assert!(r.is_err(), "--timing {t}");
        }
        for (flag, v) in [
            ("--body-timeout", "18446744073709551615"),
            ("--body-timeout", "0"),
            ("--max-body", "0"),
        ] {
            assert!(
                Cli::try_parse_from(["agentwire", "serve", flag, v]).is_err(),
                "{flag} {v}"
            );
        }
    }

    fn numbers() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|f| f.to_string()),
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|i| i.to_string()),
            prop::sample::select(vec![
                "nan", "NaN", "inf", "-inf", "1e-300", "1e20", "1e308", "0", "-0", "-1", "",
                "0x10", "1_000",
            ])
            .prop_map(str::to_string),
            "[0-9.eE+-]{0,12}[smh]?",
        ]
    }

    proptest! {
        /// Every numeric flag, fed any number-like text: parsing either refuses it or gives
        /// a value the library uses without panicking (clocks, sleeps, sizes).
        #[test]
        fn numeric_flags_never_panic(v in numbers(), us in any::<u64>()) {
            let now = Instant::now();
            if let Ok(Cli { command: Command::Replay(a) }) =
                Cli::try_parse_from(["agentwire", "replay", "t", "--to", "http://x", "--rate", &v, "--concurrency", &v])
            {
                let _ = now + Duration::from_secs_f64(1e7 / a.rate.unwrap_or(1.0));
                prop_assert!(a.concurrency >= 1);
            }
            if let Ok(Cli { command: Command::Replay(a) }) =
                Cli::try_parse_from(["agentwire", "replay", "t", "--to", "http://x", "--rate", &v])
            {
                let _ = now + Duration::from_secs_f64(1e7 / a.rate.unwrap_or(1.0));
            }
            if let Ok(Cli { command: Command::Capture(a) }) =
                Cli::try_parse_from(["agentwire", "capture", "--iface", "lo", "--duration", &v])
            {
                let _ = now + a.duration.unwrap();
            }
            for flag in ["--body-timeout", "--max-body", "--upstream-timeout"] {
                let mut args = vec!["agentwire", "serve", flag, &v];
                if flag == "--upstream-timeout" {
                    args.extend(["--upstream", "http://x"]);
                }
                if let Ok(Cli { command: Command::Serve(a) }) = Cli::try_parse_from(args) {
                    let _ = now + Duration::from_secs(a.limits.body_timeout);
                    let _ = now + Duration::from_secs(a.upstream_timeout);
                    prop_assert!(a.limits.max_body >= 1);
                }
            }
            if let Ok(Cli { command: Command::Serve(a) }) =
                Cli::try_parse_from(["agentwire", "serve", "--replay", "t", "--timing", &format!("x{v}")])
            {
                let t = Timing::parse(&a.reply.timing).unwrap();
                let d = t.scale(us);
                prop_assert!(d <= MAX_DELAY);
                let _ = tokio::time::Instant::now() + d;
            }
            if let Ok(Cli { command: Command::Record(a) }) =
                Cli::try_parse_from(["agentwire", "record", "--timeout", &v, "--", "true"])
            {
                let _ = now + Duration::from_secs(a.timeout);
            }
            if let Ok(Cli { command: Command::Matrix(a) }) =
                Cli::try_parse_from(["agentwire", "matrix", "--cli", "c@1", "--parallel", &v])
            {
                prop_assert!((1..=32).contains(&a.parallel));
            }
        }
    }
}
