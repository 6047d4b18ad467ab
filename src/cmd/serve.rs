//! `agentwire serve`: the fake API server, recording proxy or intercepting proxy until a signal.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::server::{self, recorder::RecorderSummary, RunningServer};
use agentwire::text::fmt::plural;
use agentwire::trace::Context;

use super::diag::warn;
use super::io::{display_name, live_trace, print_stdout, print_summary, report_setup, runtime};
use crate::cli::exit::{degraded_if, exit, DEGRADED};
use crate::cli::{config, ServeArgs};

pub(super) fn serve(a: ServeArgs) -> Result<ExitCode> {
    // `degraded`: the replayed trace had unreadable lines (reported already): exit 3.
    let (base, degraded) = report_setup(config::server(a.addr, &a.reply, &a.limits)?)?;
    let config = config::serve(&a, base)?;
    if a.ui && agentwire::output::is_stdout(&a.output) {
        return Err(crate::cli::exit::usage(anyhow::anyhow!(
            "--ui prints the viewer's URL on stdout, where -o - writes the trace: give -o FILE"
        )));
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
    runtime()?.block_on(async move {
        let listener = server::bind(config.addr).await?;
        let writer = live_trace(&a.output, a.force, &context)?;
        let srv = server::start_on(listener, config, writer).await?;
        // Signal handlers first: a stop right after the URL is announced must shut down
        // cleanly and save what was recorded.
        let stop = agentwire::capture::record::interrupted();
        // The base URL is the first line on stdout (on stderr when stdout is the trace).
        print_summary(&format!("{}\n", srv.base_url()), &a.output)?;
        announce(&a, &srv);
        if a.ui {
            // The URL carries the viewer's token, which the diagnostics sink would redact:
            // it is the second line on stdout.
            let url = super::view::start_live(&a.output, srv.subscribe()).await?;
            print_stdout(&format!("{url}\n"))?;
            message!("agentwire: live viewer at the URL on stdout's second line (it holds the viewer's token)");
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
                display_name(&a.output),
                plural(s.written, "exchange")
            );
            return Ok(ExitCode::SUCCESS);
        }
        Ok(stopped(&a, &s, degraded))
    })
}

/// Say on stderr what is being served, and how a client reaches it.
fn announce(a: &ServeArgs, srv: &RunningServer) {
    match &a.intercept {
        Some(hosts) => message!(
            "agentwire: CONNECT proxy on {} intercepting TLS for {hosts}: use HTTPS_PROXY={} and trust {} (NODE_EXTRA_CA_CERTS); recording to {} (Ctrl-C to stop)",
            srv.addr,
            srv.base_url(),
            agentwire::capture::ca::default_dir().join("ca.pem").display(),
            display_name(&a.output)
        ),
        None => message!(
            "agentwire: serving the Messages and Responses APIs on {}; recording to {} (Ctrl-C to stop)",
            srv.base_url(),
            display_name(&a.output)
        ),
    }
}

/// Say what was recorded once stopped; the exit code: degraded when the replayed trace
/// was, or when exchanges were cut by the shutdown or not recorded.
fn stopped(a: &ServeArgs, s: &RecorderSummary, degraded: bool) -> ExitCode {
    message!(
        "agentwire: recorded {} to {}; writer queue peak {}, {} of {} bytes",
        plural(s.written, "exchange"),
        display_name(&a.output),
        plural(s.peak_queue, "exchange"),
        s.peak_queue_bytes,
        s.queue_limit
    );
    let mut code = degraded_if(degraded);
    if s.cut_by_shutdown > 0 {
        message!(
            "agentwire: {} exchanges were still open at shutdown; they are recorded with the error kind `shutdown` and what was seen so far",
            s.cut_by_shutdown
        );
        code = exit(DEGRADED);
    }
    if s.not_recorded > 0 {
        warn(&format!(
            "{} exchanges (503 answers while the trace could not be written) were not recorded",
            s.not_recorded
        ));
        code = exit(DEGRADED);
    }
    code
}
