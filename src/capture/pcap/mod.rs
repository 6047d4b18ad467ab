//! Exchanges from packets: capture files (pcap, pcapng, gzip-compressed either) and live
//! interfaces, through link layers, IP, TCP reassembly and HTTP/1.1 parsing.
//!
//! Pipeline, one file per stage:
//! - [`file`](mod@file): reads capture files with `pcap-parser` into [`Packet`]s (frame numbers,
//!   nanosecond timestamps, link type per interface);
//! - [`link`]: link layers (Ethernet with VLAN/QinQ, SLL, SLL2, NULL/LOOP, raw IP) to an
//!   `etherparse` lax slice;
//! - [`ip`]: IPv4/IPv6 + TCP header fields of one segment, with the bytes a truncated
//!   packet lacks;
//! - [`tcp`]: per-direction reassembly into an ordered byte stream with gaps;
//! - [`message`]: one direction's HTTP/1.1 messages (bodies, gaps, resync), with
//!   `head`: heads and lines; the body length rules (RFC 9112 §6.3) and the chunked
//!   decoder are [`crate::http`]'s;
//! - [`http`]: requests and responses of a connection paired into exchanges;
//! - `websocket`: a connection switched to WebSocket, its messages as exchanges;
//! - [`tls`]: TLS detection (ClientHello version and SNI);
//! - [`driver`]: the [`Extractor`] that ties them together over any packet iterator
//!   (with `conn`: one connection's state, and `summary`: the run's counts);
//! - [`sink`]: the [`TraceSink`] that writes the exchanges, on a second thread;
//! - `live`: live capture through libpcap (cargo feature `libpcap`, on by default).

mod conn;
pub mod driver;
mod exchange;
pub mod file;
mod head;
mod headless;
pub mod http;
pub mod ip;
pub mod link;
#[cfg(feature = "libpcap")]
pub mod live;
pub mod message;
pub mod sink;
mod summary;
pub mod tcp;
pub mod tls;
mod websocket;

pub use driver::{Config, Extractor};
pub use file::{is_capture_start, read_file, read_packets, FileInfo};
#[cfg(feature = "libpcap")]
pub use live::{open as open_live, LiveCapture, LiveConfig};
pub use sink::TraceSink;
pub use summary::{ExtractionSummary, TlsConnection};

/// The time of a packet no neighbour gave a time to (a capture whose packets carry no
/// timestamps at all): exchanges made of such packets say `notes.time_unknown`.
pub(crate) const NO_TIME: i64 = i64::MIN;

/// One captured packet as it enters the pipeline.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    /// Frame number, from 1 within its file (as tshark counts).
    pub frame: u64,
    /// Capture time, nanoseconds since the Unix epoch; `None` when the capture format
    /// gives none (a pcapng Simple Packet Block). An absent time is never taken as 0:
    /// the [`Extractor`] takes it from the neighbouring packets.
    pub ts_ns: Option<i64>,
    /// Link type (a `LINKTYPE_*` number from the tcpdump.org registry).
    pub link_type: u32,
    /// The captured bytes (at most the snapshot length).
    pub data: &'a [u8],
    /// Length of the packet on the wire, in bytes (≥ `data.len()`).
    pub orig_len: u32,
}

/// Errors of packet capture sources; each names the file (or interface) and, for file
/// errors, the byte offset where reading stopped. Everything read before is kept.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    /// The file could not be opened or read.
    #[error("cannot read capture {path}: {source} (check the path and permissions)")]
    Open {
        /// The capture file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is neither pcap nor pcapng (nor a gzip of either).
    #[error("{path} is not a pcap or pcapng file (no known magic number at byte 0); write captures with `tcpdump -w` or `dumpcap -w`")]
    NotACapture {
        /// The file.
        path: String,
    },
    /// The file ends in the middle of a block.
    #[error("capture {path} is truncated: the block at byte {offset} is cut off (the {packets} packets before it were read); the capture was probably still being written")]
    Truncated {
        /// The capture file.
        path: String,
        /// Where the cut-off block starts, bytes in the uncompressed stream.
        offset: u64,
        /// Packets read before it.
        packets: u64,
    },
    /// A block could not be parsed.
    #[error("capture {path} is corrupt at byte {offset}: {detail} (the {packets} packets before it were read)")]
    Corrupt {
        /// The capture file.
        path: String,
        /// Where the bad block starts, bytes in the uncompressed stream.
        offset: u64,
        /// Packets read before it.
        packets: u64,
        /// The parser's message.
        detail: String,
    },
    /// The file ends inside its file header (pcap) or first Section Header Block
    /// (pcapng): its magic number is there, nothing after it can be read.
    #[error("capture {path} is cut short inside its {header}: it has {bytes} bytes, the header needs {needed}; the capture was probably still being written or copied partly (copy it again once complete)")]
    HeaderCut {
        /// The capture file.
        path: String,
        /// `pcap file header` or `pcapng section header block`.
        header: &'static str,
        /// Bytes the file (its uncompressed content) has.
        bytes: u64,
        /// Bytes the header needs.
        needed: u64,
    },
    /// Reading the file failed midway (an I/O error, or a gzip stream cut short or
    /// followed by bytes that are not gzip); `detail` is the reader's own error text.
    #[error("cannot read capture {path} at byte {offset}: {detail} (the {packets} packets before it were read); the file is cut short or damaged: copy it again")]
    Read {
        /// The capture file.
        path: String,
        /// Offset of the first block not read, bytes in the uncompressed stream.
        offset: u64,
        /// Packets read before it.
        packets: u64,
        /// The reader's error text.
        detail: String,
    },
    /// Live capture could not start or failed.
    #[error("live capture on {iface}: {detail}")]
    Live {
        /// The interface.
        iface: String,
        /// libpcap's message.
        detail: String,
    },
    /// Live capture lacks privileges.
    #[error("live capture on {iface} needs root or the CAP_NET_RAW capability ({detail}); run with sudo or `setcap cap_net_raw,cap_net_admin=eip $(which agentwire)`")]
    Permission {
        /// The interface.
        iface: String,
        /// libpcap's message.
        detail: String,
    },
}
