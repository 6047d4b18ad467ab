//! The input layer's errors: an input that cannot be opened or read, or that is not a
//! format agentwire reads.

use std::path::Path;

use crate::import::{ImportError, READS};
use crate::trace::TraceError;

/// Errors of opening and reading an input; each names the input.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The input could not be opened or read, or is a trace of a newer format.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The input is not a format agentwire reads, or an import of it failed.
    #[error(transparent)]
    Import(#[from] ImportError),
}

impl InputError {
    /// The input at `path` is not a format agentwire reads: what it looks like, what to do
    /// (may be empty) and what agentwire reads.
    pub(super) fn foreign(path: &Path, looks_like: String, hint: String) -> InputError {
        let hint = if hint.is_empty() {
            READS.to_string()
        } else {
            format!("{hint}. {READS}")
        };
        InputError::Import(ImportError::Foreign {
            path: path.display().to_string(),
            looks_like,
            hint,
        })
    }
}
