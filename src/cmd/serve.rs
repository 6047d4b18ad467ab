//! `agentwire serve`: the fake API server, recording proxy or intercepting proxy until a signal.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::server::{self, Mode};
use agentwire::trace::Context;

use super::{live_trace, runtime, server_config, shown, summary};
use crate::cli::ServeArgs;

pub(super) fn serve(a: ServeArgs) -> Result<ExitCode> {
    // `degraded`: the replayed trace had unreadable lines (reported already): exit 3.
    let (mut config, degraded) = server_config(a.addr, &a.reply, &a.limits)?;
    if let Some(url) = &a.upstream {
        let timeout = std::time::Duration::from_secs(a.upstream_timeout);
        let up = server::proxy::Upstream::new(url, a.upstream_ca.as_deref(), timeout)?;
        config.mode = Mode::Proxy(std::sync::Arc::new(up));
    }
    if let Some(hosts) = &a.intercept {
        let ca = agentwire::capture::ca::CertificateAuthority::load_or_create_reporting(
            &agentwire::capture::ca::default_dir(),
            &super::diag::reporter(),
        )?;
        let hosts = hosts
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        config.intercept = Some(std::sync::Arc::new(server::intercept::InterceptConfig {
            hosts,
            ca: std::sync::Arc::new(ca),
            tunnel_others: a.tunnel_others,
        }));
    }
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        config.tls = Some(server::tls::server_config_from_pem(cert, key)?);
    }
    let mut context = Context::new();
    context.route = Some(
        if a.intercept.is_some() {
            "first-party"
        } else {
            "base-url"
        }
        .into(),
    );
    let intercepting = config.intercept.is_some();
    config.redact_body = a.redact_body;
    config.websocket.refuse = a.websocket == "refuse";
    runtime()?.block_on(async move {
        let listener = server::bind(&config.addr).await?;
        let writer = live_trace(&a.output, a.force, &context)?;
        let srv = server::start_on(listener, config, writer).await?;
        // Signal handlers first: a stop right after the URL is announced must shut down
        // cleanly and save what was recorded.
        let stop = agentwire::capture::record::interrupted();
        // The base URL is the first line on stdout (on stderr when stdout is the trace).
        summary(&format!("{}\n", srv.base_url()), &a.output)?;
        if intercepting {
            message!(
                "agentwire: CONNECT proxy on {} intercepting TLS for {}: use HTTPS_PROXY={} and trust {} (NODE_EXTRA_CA_CERTS); recording to {} (Ctrl-C to stop)",
                srv.addr,
                a.intercept.as_deref().unwrap_or_default(),
                srv.base_url(),
                agentwire::capture::ca::default_dir().join("ca.pem").display(),
                shown(&a.output)
            );
        } else {
            message!(
                "agentwire: serving the Messages and Responses APIs on {}; recording to {} (Ctrl-C to stop)",
                srv.base_url(),
                shown(&a.output)
            );
        }
        let reader_gone = tokio::select! {
            _ = stop => false,
            _ = srv.output_closed() => true,
        };
        let s = srv.shutdown().await?;
        if reader_gone {
            // like any command whose output pipe closed: stop, exit 0
            message!(
                "agentwire: the reader of {} closed it; stopped after recording {}",
                shown(&a.output),
                agentwire::text::fmt::plural(s.written as u64, "exchange")
            );
            return Ok(ExitCode::SUCCESS);
        }
        message!(
            "agentwire: recorded {} to {}; writer queue peak {}, {} of {} bytes",
            agentwire::text::fmt::plural(s.written as u64, "exchange"),
            shown(&a.output),
            agentwire::text::fmt::plural(s.peak_queue as u64, "exchange"),
            s.peak_queue_bytes,
            s.queue_limit
        );
        let mut code = if degraded {
            ExitCode::from(super::DEGRADED)
        } else {
            ExitCode::SUCCESS
        };
        if s.cut_by_shutdown > 0 {
            message!(
                "agentwire: {} exchanges were still open at shutdown; they are recorded with the error kind `shutdown` and what was seen so far",
                s.cut_by_shutdown
            );
            code = ExitCode::from(super::DEGRADED);
        }
        if s.not_recorded > 0 {
            super::warn(&format!(
                "{} exchanges (503 answers while the trace could not be written) were not recorded",
                s.not_recorded
            ));
            code = ExitCode::from(super::DEGRADED);
        }
        Ok(code)
    })
}
