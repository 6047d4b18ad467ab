//! Sources of exchanges: the fake API server, the recorder that runs CLIs under it, and
//! packet captures ([`pcap`]: capture files and live interfaces), and the MCP side of the
//! wire ([`mcp`]: stdio tap, Streamable HTTP proxy, configuration rewriting); recorded
//! headers are checked for HTTP/1.1 before replay sends them again ([`sendable`]). Sources
//! never print: what the user should hear while they run goes to the [`Diagnostics`]
//! their caller passes in ([`diagnostics`]).

pub mod agent;
pub mod ca;
pub mod cache;
pub mod diagnostics;
pub mod matrix;
pub mod mcp;
pub mod npm;
pub mod opencode;
pub mod pcap;
pub mod record;
pub mod resend;
pub mod route;
pub mod sendable;
pub mod server;
pub mod versions;

pub use diagnostics::{Diagnostics, Level};

/// An error and its causes on one line, `outer: cause: root cause` (for messages that
/// travel in traces and reports, where there is no error chain to walk later).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}
