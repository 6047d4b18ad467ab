//! The server's errors: [`ServerError`], one enum for binding, upstreams, CA and TLS
//! files, replay, and the trace. (A listen address is typed, `SocketAddr`: the text the
//! user wrote is checked where it is parsed, the CLI's `--addr`.)

use crate::trace::TraceError;

/// Errors of the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "cannot listen on {addr}: {source} (pick another address or port 0 for any free port)"
    )]
    /// The listen address cannot be bound.
    Bind {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The recording proxy's upstream cannot be used.
    #[error("upstream {url:?} is not usable: {reason}")]
    BadUpstream {
        /// The upstream URL (redacted).
        url: String,
        /// Why.
        reason: String,
    },
    /// The extra CA file for the upstream cannot be used.
    #[error("cannot use CA file {path}: {message} (give a PEM file with the CA certificate)")]
    CaFile {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The certificate chain or key to serve HTTPS with cannot be used.
    #[error("TLS: cannot use {path}: {message} (give PEM files: --tls-cert chain, --tls-key private key)")]
    Tls {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A trace given to replay holds nothing to answer with.
    #[error("{path}: no /v1/messages exchange with a 200 response to replay")]
    NothingToReplay {
        /// The trace.
        path: String,
    },
    /// The trace cannot be written.
    #[error(transparent)]
    Trace(#[from] TraceError),
}
