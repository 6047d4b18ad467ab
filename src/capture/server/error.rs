//! The server's errors: [`ServerError`], one enum for binding, upstreams, CA and TLS
//! files, and the trace.

use crate::trace::TraceError;

/// Errors of the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "cannot listen on {addr}: {source} (pick another address or port 0 for any free port)"
    )]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{addr:?} is not an address to listen on; use IP:PORT, e.g. 127.0.0.1:8080")]
    BadAddr { addr: String },
    #[error("upstream {url:?} is not usable: {reason}")]
    BadUpstream { url: String, reason: String },
    #[error("cannot use CA file {path}: {message} (give a PEM file with the CA certificate)")]
    CaFile { path: String, message: String },
    #[error("TLS: cannot use {path}: {message} (give PEM files: --tls-cert chain, --tls-key private key)")]
    Tls { path: String, message: String },
    /// A trace given to replay holds nothing to answer with.
    #[error("{path}: no /v1/messages exchange with a 200 response to replay")]
    NothingToReplay {
        /// The trace.
        path: String,
    },
    #[error(transparent)]
    Trace(#[from] TraceError),
}
