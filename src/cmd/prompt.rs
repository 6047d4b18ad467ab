//! `agentwire prompt` (work in progress).
use std::process::ExitCode;
use anyhow::Result;
pub(super) fn prompt<T>(_a: T) -> Result<ExitCode> {
    anyhow::bail!("not yet")
}
