//! `agentwire mcp-tap`: run a stdio MCP server under the recording relay (exits with the
//! server's exit status), or with `--http URL` serve a recording proxy for a Streamable
//! HTTP server until interrupted.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Result;

use super::io::{print_stdout, runtime};
use crate::cli::McpTapArgs;

pub(super) fn mcp_tap(a: McpTapArgs) -> Result<ExitCode> {
    use agentwire::capture::mcp::tap::{self, TapConfig};
    use agentwire::capture::mcp::{http, McpSink};
    let output = a
        .output
        .unwrap_or_else(|| format!("mcp-{}.jsonl", a.name).into());
    tap::refuse_own_stdout(&output).map_err(crate::cli::exit::usage)?;
    agentwire::output::check(&output, a.force)?;
    if let Some(url) = a.http {
        let sink = Arc::new(
            McpSink::create(&output, &format!("mcp-http {}", a.name))?
                .reporting_to(super::diag::reporter()),
        );
        runtime()?.block_on(async {
            let proxy = http::start(&a.name, url.as_str(), sink).await?;
            // Poll once so the signal handlers are installed before the URL is announced.
            let stop = agentwire::capture::record::interrupted();
            tokio::pin!(stop);
            let early = tokio::select! {
                biased;
                _ = &mut stop => true,
                _ = std::future::ready(()) => false,
            };
            print_stdout(&format!("{}\n", proxy.url))?;
            if !early {
                stop.await;
            }
            proxy.stop().await;
            anyhow::Ok(())
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let run = tap::run(&TapConfig {
        name: a.name,
        command: a.command,
        output,
        cwd: a.cwd,
        diagnostics: super::diag::reporter(),
        stop_grace: a.stop_grace,
    });
    let code = match run {
        // The relay went on; the recording is incomplete: an error, with the server's
        // failure code kept when it failed too.
        Err(e @ agentwire::capture::mcp::McpError::Lost { code, .. }) => {
            error!("{e}");
            if code == 0 {
                1
            } else {
                code
            }
        }
        r => r?,
    };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
