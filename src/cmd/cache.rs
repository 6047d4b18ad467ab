//! `agentwire cache` (work in progress).
use std::process::ExitCode;
use anyhow::Result;
pub(super) fn cache<T>(_a: T) -> Result<ExitCode> {
    anyhow::bail!("not yet")
}
