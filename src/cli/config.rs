//! Flags into library configs, the high half of ripgrep's `lowargs`/`hiargs` split: the
//! parsed flags ([`super::args`]) become the structs the library runs on — the server's
//! [`ServerConfig`] and reply [`Mode`], an [`AnalyzeConfig`], a normalizer, a report's
//! format, the recorder's and resender's configs. Files these name are opened here (a
//! scenario, a trace to replay, a price table, a rules file, the CA); nothing is printed:
//! what the caller must report comes back with the config ([`ServerSetup::replayed`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use agentwire::analyze::{AnalyzeConfig, PriceTable, TtlMode, UsageMode};
use agentwire::api::normalize::{Normalizer, PendingNormalizer};
use agentwire::api::view::ExchangeProblem;
use agentwire::capture::pcap;
use agentwire::capture::record::resolver::SpecResolver;
use agentwire::capture::record::{RecordConfig, Target};
use agentwire::capture::resend::ResendConfig;
use agentwire::capture::route::Route;
use agentwire::capture::server::playback::{Coverage, Replay};
use agentwire::capture::server::{self, InterceptConfig, Mode, Script, ServerConfig};
use agentwire::report::{DocFormat, Format};
use agentwire::trace::{ReadProblem, SourceKind};

use super::exit::usage;
use super::shared::{
    AnalysisArgs, DocFormatArg, DocOutputArgs, FormatArg, LimitArgs, PacketFilterArgs, ReplyArgs,
    RouteArg, TtlArg, UsageArg, WebSocketArg,
};
use super::sources::{RecordArgs, ServeArgs};

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => Self::Table,
            FormatArg::Md => Self::Markdown,
            FormatArg::Json => Self::Json,
        }
    }
}

impl From<DocFormatArg> for DocFormat {
    fn from(f: DocFormatArg) -> Self {
        match f {
            DocFormatArg::Html => Self::Html,
            DocFormatArg::Md => Self::Markdown,
            DocFormatArg::Json => Self::Json,
        }
    }
}

impl From<RouteArg> for Route {
    fn from(r: RouteArg) -> Self {
        match r {
            RouteArg::FirstParty => Self::FirstParty,
            RouteArg::BaseUrl => Self::BaseUrl,
            RouteArg::CustomProvider => Self::CustomProvider,
            RouteArg::Builtin => Self::Builtin,
            RouteArg::Anthropic => Self::Anthropic,
            RouteArg::OpenAi => Self::OpenAi,
            RouteArg::Compatible => Self::Compatible,
        }
    }
}

impl From<TtlArg> for TtlMode {
    fn from(t: TtlArg) -> Self {
        match t {
            TtlArg::Auto => Self::Auto,
            TtlArg::M5 => Self::M5,
            TtlArg::H1 => Self::H1,
        }
    }
}

impl From<UsageArg> for UsageMode {
    fn from(u: UsageArg) -> Self {
        match u {
            UsageArg::Recorded => Self::Recorded,
            UsageArg::Simulated => Self::Simulated,
            UsageArg::Auto => Self::Auto,
        }
    }
}

/// A server's configuration, and what the caller must report about it before it runs.
pub struct ServerSetup {
    /// The configuration.
    pub config: ServerConfig,
    /// With `--replay`: the trace it answers with.
    pub replayed: Option<Replayed>,
}

/// A trace loaded to answer with (`--replay`): its unreadable parts, to report as `show`
/// reports them, and how much of it is replayed (nothing: an error the caller raises
/// after reporting, [`Coverage::check`]).
pub struct Replayed {
    /// The trace as named.
    pub path: PathBuf,
    /// Its unreadable lines.
    pub lines: Vec<ReadProblem>,
    /// Its exchanges with a bad part.
    pub exchanges: Vec<ExchangeProblem>,
    /// What of it is replayed.
    pub coverage: Coverage,
}

/// The server of `--script` / `--replay` (default: the stub) with the request limits,
/// listening on `addr` (`serve`).
pub fn server(addr: SocketAddr, reply: &ReplyArgs, limits: &LimitArgs) -> Result<ServerSetup> {
    let mut setup = reply_server(reply)?;
    setup.config.addr = addr;
    setup.config.max_body = limits.max_body;
    setup.config.body_timeout = Duration::from_secs(limits.body_timeout);
    Ok(setup)
}

/// The server of `--script` / `--replay` (default: the stub) for the commands that run
/// it in-process without limit flags (`record`, `matrix`): loopback, any free port, the
/// server's own limits, reporting through the diagnostics sink.
pub fn reply_server(reply: &ReplyArgs) -> Result<ServerSetup> {
    let (mode, replayed) = reply_mode(reply)?;
    let config = ServerConfig {
        mode,
        ..stub_server()
    };
    Ok(ServerSetup { config, replayed })
}

/// How the server replies: a scenario, a recorded trace, or the stub.
fn reply_mode(reply: &ReplyArgs) -> Result<(Mode, Option<Replayed>)> {
    if let Some(p) = &reply.script {
        return Ok((Mode::Script(Arc::new(Script::load(p)?)), None));
    }
    let Some(p) = &reply.replay else {
        return Ok((Mode::Stub, None));
    };
    let trace = agentwire::input::open_trace(p)?;
    let lines = trace.problems.clone();
    let exchanges = agentwire::api::view::problems(&trace);
    let (r, coverage) = Replay::from_trace_counted(trace, reply.timing);
    let replayed = Replayed {
        path: p.clone(),
        lines,
        exchanges,
        coverage,
    };
    Ok((Mode::Replay(Arc::new(r)), Some(replayed)))
}

/// The server a recording made on the fly runs under (CLI-spec inputs of `diff`,
/// `report diff`; `history`): the stub, loopback, any free port, the default limits,
/// reporting through the diagnostics sink.
pub fn stub_server() -> ServerConfig {
    ServerConfig {
        diagnostics: crate::cmd::diag::reporter(),
        ..ServerConfig::default()
    }
}

/// `serve`'s additions to `base` ([`server`]): the recording proxy's upstream, TLS
/// interception with agentwire's CA, HTTPS, body redaction.
pub fn serve(a: &ServeArgs, mut base: ServerConfig) -> Result<ServerConfig> {
    if let Some(url) = &a.upstream {
        let timeout = Duration::from_secs(a.upstream_timeout);
        let up = server::proxy::Upstream::new(url.as_str(), a.upstream_ca.as_deref(), timeout)?;
        base.mode = Mode::Proxy(Arc::new(up));
    }
    if let Some(hosts) = &a.intercept {
        let ca = agentwire::capture::ca::CertificateAuthority::load_or_create_reporting(
            &agentwire::capture::ca::default_dir(),
            &crate::cmd::diag::reporter(),
        )?;
        base.intercept = Some(Arc::new(InterceptConfig {
            hosts: hosts.0.clone(),
            ca: Arc::new(ca),
            tunnel_others: a.tunnel_others,
        }));
    }
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        base.tls = Some(server::tls::server_config_from_pem(cert, key)?);
    }
    base.redact_body = a.redact_body;
    base.websocket.refuse = a.websocket == WebSocketArg::Refuse;
    Ok(base)
}

/// `record`'s recording of `target` under `server`.
pub fn record(a: &RecordArgs, target: Target, server: ServerConfig) -> RecordConfig {
    RecordConfig {
        // `--` arguments are the CLI's with --cli, else the command itself (in `target`)
        args: if a.cli.is_some() {
            a.args.clone()
        } else {
            Vec::new()
        },
        target,
        env: a.env.clone(),
        server: ServerConfig {
            redact_body: a.redact_body,
            websocket: agentwire::capture::server::WebSocketOptions {
                refuse: a.websocket == WebSocketArg::Refuse,
                ..server.websocket
            },
            ..server
        },
        output: a.output.clone(),
        timeout: Duration::from_secs(a.timeout),
        label: None,
        route: a.route.map(Route::from),
        force: a.force,
    }
}

/// The resolver of CLI-spec inputs (`diff`, `report diff`): recorded with `env` and
/// `route` under [`stub_server`], into `record_dir` (kept) or a temporary directory.
pub fn spec_resolver(
    env: &[(String, Option<String>)],
    record_dir: Option<&Path>,
    route: Option<RouteArg>,
    force: bool,
) -> Result<SpecResolver> {
    Ok(SpecResolver::new(
        env.to_vec(),
        record_dir,
        route.map(Route::from),
        force,
        stub_server(),
    )?)
}

/// `replay`'s resend: to `--to`, as concurrent and fast as asked, with the extra headers.
pub fn resend(a: &super::answers::ReplayArgs) -> ResendConfig {
    ResendConfig {
        to: a.to.to_string(),
        concurrency: usize::from(a.concurrency),
        rate: a.rate,
        headers: a.headers.clone(),
        compare: a.compare,
    }
}

/// The analysis settings of `--ttl`, `--usage` and `--prices FILE` (default: the built-in
/// price table).
pub fn analysis(s: &AnalysisArgs) -> Result<AnalyzeConfig> {
    Ok(AnalyzeConfig {
        ttl: s.ttl.into(),
        usage: s.usage.into(),
        prices: match &s.prices {
            Some(p) => PriceTable::from_file(p)?,
            None => PriceTable::builtin(),
        },
    })
}

/// The packet extractor's filters (`--port`, `--host`) for a source of `kind`.
pub fn packet_filter(f: &PacketFilterArgs, kind: SourceKind) -> pcap::Config {
    pcap::Config {
        ports: f.ports.clone(),
        hosts: f.hosts.clone(),
        kind,
        ..pcap::Config::default()
    }
}

/// The normalizer of `--rules FILE` / `--no-normalize` (default: the built-in rules).
pub fn normalizer(rules: Option<&Path>, none: bool) -> Result<Normalizer> {
    Ok(match (rules, none) {
        (Some(p), _) => Normalizer::from_file(p)?,
        (None, true) => Normalizer::none(),
        (None, false) => Normalizer::defaults(),
    })
}

/// [`normalizer`], with the default rules compiled on another thread while the caller
/// reads its inputs ([`Normalizer::compile_in_background`]). A rules file is read and
/// checked now, so a bad one fails before anything slow starts.
pub fn pending_normalizer(rules: Option<&Path>, none: bool) -> Result<PendingNormalizer> {
    if rules.is_some() || none {
        return Ok(PendingNormalizer::ready(normalizer(rules, none)?));
    }
    Ok(Normalizer::compile_in_background())
}

/// The format of a shareable report: `--format`, else the output's extension, else
/// Markdown. An extension that names no format is a usage error.
pub fn doc_format(o: &DocOutputArgs) -> Result<DocFormat> {
    if let Some(f) = o.format {
        return Ok(f.into());
    }
    match &o.output {
        None => Ok(DocFormat::Markdown),
        Some(p) => DocFormat::from_path(p).ok_or_else(|| {
            usage(anyhow::anyhow!(
                "{}: cannot tell the format from the extension; name it .html, .md or .json, or pass --format",
                p.display()
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn serve_args(args: &[&str]) -> ServeArgs {
        let mut all = vec!["agentwire", "serve"];
        all.extend(args);
        match Cli::try_parse_from(all).unwrap().command {
            Command::Serve(a) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_limits_and_address_reach_the_server_and_the_stub_keeps_the_defaults() {
        let a = serve_args(&[
            "--addr",
            "127.0.0.1:9",
            "--max-body",
            "10",
            "--body-timeout",
            "7",
        ]);
        let s = server(a.addr, &a.reply, &a.limits).unwrap();
        assert_eq!(s.config.addr, "127.0.0.1:9".parse().unwrap());
        assert_eq!(
            (s.config.max_body, s.config.body_timeout.as_secs()),
            (10, 7)
        );
        assert!(matches!(s.config.mode, Mode::Stub) && s.replayed.is_none());
        // The flags' defaults are the server's own.
        let a = serve_args(&[]);
        let d = ServerConfig::default();
        let s = server(a.addr, &a.reply, &a.limits).unwrap().config;
        assert_eq!(
            (s.addr, s.max_body, s.body_timeout),
            (d.addr, d.max_body, d.body_timeout)
        );
        let stub = stub_server();
        assert_eq!((stub.addr, stub.max_body), (d.addr, d.max_body));
    }

    #[test]
    fn a_report_format_comes_from_the_flag_then_the_extension() {
        let o = |output: Option<&str>, format: Option<DocFormatArg>| DocOutputArgs {
            output: output.map(PathBuf::from),
            format,
            force: false,
            max_line: None,
        };
        assert_eq!(doc_format(&o(None, None)).unwrap(), DocFormat::Markdown);
        assert_eq!(
            doc_format(&o(Some("r.html"), None)).unwrap(),
            DocFormat::Html
        );
        assert_eq!(
            doc_format(&o(Some("r.html"), Some(DocFormatArg::Json))).unwrap(),
            DocFormat::Json
        );
        let e = doc_format(&o(Some("r.txt"), None)).unwrap_err();
        assert!(e.is::<crate::cli::exit::UsageError>(), "{e}");
    }
}
