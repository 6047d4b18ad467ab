//! `agentwire history` (work in progress).
use std::process::ExitCode;
use anyhow::Result;
pub(super) fn history<T>(_a: T) -> Result<ExitCode> {
    anyhow::bail!("not yet")
}
