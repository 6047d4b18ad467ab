//! Shared helpers for integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// Root of the repository.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/captures/...` next to the repository (read-only test input; never copied).
pub fn shared_capture(rel: &str) -> PathBuf {
    repo().join("../shared/captures").join(rel)
}

/// Path of the built `agentwire` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_agentwire"))
}
