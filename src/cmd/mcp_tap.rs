//! `agentwire mcp-tap`: run a stdio MCP server under the recording relay; exits with the
//! server's exit status.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::McpTapArgs;

pub(super) fn mcp_tap(a: McpTapArgs) -> Result<ExitCode> {
    use agentwire::capture::mcp::tap::{self, TapConfig};
    let output = a
        .output
        .unwrap_or_else(|| format!("mcp-{}.jsonl", a.name).into());
    let code = tap::run(&TapConfig {
        name: a.name,
        command: a.command,
        output,
    })?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}
