//! The command glue: one file per subcommand (as `--help` lists them), converting parsed
//! arguments into library calls and renderer output; shared helpers live here.

mod analyze;
mod ca;
mod cache;
mod capture;
mod diff;
mod history;
mod matrix;
mod pcap;
mod prompt;
mod record;
mod replay;
mod report;
mod serve;
mod show;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::server::replay::{Replay, Timing};
use agentwire::capture::server::{Mode, Script, ServerConfig};
use agentwire::trace::Trace;

use crate::cli::{Cli, Command, LimitArgs, ReplyArgs};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;
/// Exit code of `diff` when a `--fail-on` gate tripped.
pub const GATE_TRIPPED: u8 = 4;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
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
    }
}

/// Print to stdout; a closed pipe surfaces as an io error the binary maps to exit 0.
pub fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Report a trace's unreadable lines on stderr; returns the exit code they imply.
pub fn report_problems(trace: &Trace) -> ExitCode {
    for p in &trace.problems {
        eprintln!("warning: {}: {p}", trace.path.display());
    }
    if trace.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DEGRADED)
    }
}

pub(crate) fn server_config(
    addr: String,
    reply: &ReplyArgs,
    limits: &LimitArgs,
) -> Result<ServerConfig> {
    let mode = if let Some(p) = &reply.script {
        Mode::Script(std::sync::Arc::new(Script::load(p)?))
    } else if let Some(p) = &reply.replay {
        let timing = Timing::parse(&reply.timing).ok_or_else(|| {
            anyhow::anyhow!(
                "--timing {:?}: use recorded, none, or xN (e.g. x10)",
                reply.timing
            )
        })?;
        let r = Replay::load(p, timing)?;
        if r.is_empty() {
            anyhow::bail!(
                "{}: no /v1/messages exchange with a 200 response to replay",
                p.display()
            );
        }
        Mode::Replay(std::sync::Arc::new(r))
    } else {
        Mode::Stub
    };
    Ok(ServerConfig {
        addr,
        mode,
        max_body: limits.max_body,
        body_timeout: std::time::Duration::from_secs(limits.body_timeout),
        tls: None,
        intercept: None,
    })
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

pub(crate) fn check_output(path: &std::path::Path, force: bool) -> Result<()> {
    if !force && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        anyhow::bail!(
            "{} already exists; pass --force to overwrite it or -o to write elsewhere",
            path.display()
        );
    }
    Ok(())
}

pub(crate) fn progress_spinner() -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// True when the file starts like a packet capture (pcap in either byte order and
/// resolution, pcapng, or gzip with `pcap` in its name).
pub(crate) fn is_pcap(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    if f.read_exact(&mut head).is_err() {
        return false;
    }
    matches!(
        head,
        [0xd4, 0xc3, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0xc3, 0xd4]
            | [0x4d, 0x3c, 0xb2, 0xa1]
            | [0xa1, 0xb2, 0x3c, 0x4d]
            | [0x0a, 0x0d, 0x0d, 0x0a]
    ) || (head[..2] == [0x1f, 0x8b] && path.to_string_lossy().contains("pcap"))
}

/// The exchanges of a packet capture as an in-memory trace (nothing written).
pub(crate) fn pcap_trace(path: &std::path::Path) -> Result<Trace> {
    use agentwire::capture::pcap::{self as p, Config, Extractor};
    let mut ex = Extractor::new(Config::default());
    let name = path.display().to_string();
    ex.set_source(Some(name.clone()));
    let mut exchanges = Vec::new();
    let file = std::fs::File::open(path)
        .map_err(|e| anyhow::anyhow!("cannot read capture {name}: {e}"))?;
    p::read_packets(file, &name, &mut |pk| ex.packet(pk))?;
    exchanges.extend(ex.take());
    let (rest, _) = ex.finish();
    exchanges.extend(rest);
    exchanges.sort_by_key(|x| x.id);
    Ok(Trace {
        path: path.to_path_buf(),
        context: Default::default(),
        exchanges,
        others: Vec::new(),
        problems: Vec::new(),
    })
}

/// Resolves pcap and pcapng files (and `FILE#N` of them) given where a trace is expected.
pub(crate) struct PcapResolver;

impl agentwire::diff::InputResolver for PcapResolver {
    fn resolve(
        &self,
        input: &str,
    ) -> Option<Result<agentwire::diff::Resolved, agentwire::diff::DiffError>> {
        let (path, exchange) = match input.rsplit_once('#') {
            Some((p, n)) if !std::path::Path::new(input).exists() => (p, n.parse().ok()),
            _ => (input, None),
        };
        let p = std::path::Path::new(path);
        if !p.is_file() || !is_pcap(p) {
            return None;
        }
        let err = |message: String| agentwire::diff::DiffError::Input {
            input: input.to_string(),
            message,
        };
        Some(
            pcap_trace(p)
                .map_err(|e| err(format!("{e:#}")))
                .and_then(|trace| {
                    if let Some(id) = exchange {
                        trace.exchange(id)?;
                    }
                    Ok(agentwire::diff::Resolved {
                        input: input.to_string(),
                        trace,
                        exchange,
                    })
                }),
        )
    }
}

/// Open a trace file or a packet capture.
pub(crate) fn open_trace(path: &std::path::Path) -> Result<Trace> {
    if is_pcap(path) {
        pcap_trace(path)
    } else {
        Ok(Trace::open(path)?)
    }
}

/// The format of a shareable report: `--format`, else the output's extension, else
/// Markdown.
pub(crate) fn doc_format(o: &crate::cli::DocOutputArgs) -> Result<agentwire::report::DocFormat> {
    use agentwire::report::DocFormat;
    if let Some(f) = o.format {
        return Ok(f.into());
    }
    match &o.output {
        None => Ok(DocFormat::Markdown),
        Some(p) => DocFormat::from_path(p).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: cannot tell the format from the extension; name it .html, .md or .json, or pass --format",
                p.display()
            )
        }),
    }
}

/// Write a shareable report to `-o FILE` (refusing to overwrite without `--force`) or
/// stdout.
pub(crate) fn write_doc(o: &crate::cli::DocOutputArgs, text: &str) -> Result<()> {
    match &o.output {
        None => out(text),
        Some(p) if p.as_os_str() == "-" => out(text),
        Some(p) => {
            check_output(p, o.force)?;
            std::fs::write(p, text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
            eprintln!("wrote {} ({} bytes)", p.display(), text.len());
            Ok(())
        }
    }
}
