//! IP and TCP: the fields of one TCP segment from a lax slice, and how many payload bytes
//! the capture lacks (snaplen truncation), computed from the IP length fields.

use std::net::{IpAddr, SocketAddr};

use etherparse::{LaxNetSlice, LaxSlicedPacket, TransportSlice};

/// One TCP segment as seen in a packet.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a> {
    /// Sender address and port.
    pub src: SocketAddr,
    /// Receiver address and port.
    pub dst: SocketAddr,
    /// Sequence number of the first payload byte (of the SYN if `syn`).
    pub seq: u32,
    /// Acknowledgment number (meaningful when `ack`).
    pub ack_no: u32,
    /// SYN flag.
    pub syn: bool,
    /// ACK flag.
    pub ack: bool,
    /// FIN flag.
    pub fin: bool,
    /// RST flag.
    pub rst: bool,
    /// The captured payload bytes.
    pub payload: &'a [u8],
    /// Payload bytes the IP header announces but the capture does not hold, in bytes.
    pub missing: u32,
}

/// Why a packet yielded no TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IpSkip {
    /// Not TCP (UDP, ICMP, ARP, ...).
    NotTcp,
    /// An IP fragment (not reassembled).
    Fragment,
    /// The TCP header itself is cut off or invalid.
    BadTcpHeader,
}

/// The TCP segment in `pkt`.
pub fn segment<'a>(pkt: &LaxSlicedPacket<'a>) -> Result<Segment<'a>, IpSkip> {
    let (src_ip, dst_ip, payload, intended): (IpAddr, IpAddr, _, Option<usize>) = match &pkt.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let p = v4.payload();
            // total_len 0 (TCP segmentation offload) means "unknown": the slice decides.
            let intended = (p.incomplete && h.total_len() > 0).then(|| {
                let auth = v4.extensions().auth.map_or(0, |a| a.slice().len());
                (h.total_len() as usize).saturating_sub(h.slice().len() + auth)
            });
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                p,
                intended,
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let p = v6.payload();
            let intended = (p.incomplete && h.payload_length() > 0).then(|| {
                (h.payload_length() as usize).saturating_sub(v6.extensions().slice().len())
            });
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                p,
                intended,
            )
        }
        _ => return Err(IpSkip::NotTcp),
    };
    if payload.ip_number != etherparse::IpNumber::TCP {
        return Err(IpSkip::NotTcp);
    }
    if payload.fragmented {
        return Err(IpSkip::Fragment);
    }
    let Some(TransportSlice::Tcp(tcp)) = &pkt.transport else {
        return Err(IpSkip::BadTcpHeader);
    };
    let data = tcp.payload();
    let header_len = tcp.header_slice().len();
    let missing = intended
        .map(|total| total.saturating_sub(header_len).saturating_sub(data.len()))
        .unwrap_or(0);
    Ok(Segment {
        src: SocketAddr::new(src_ip, tcp.source_port()),
        dst: SocketAddr::new(dst_ip, tcp.destination_port()),
        seq: tcp.sequence_number(),
        ack_no: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        ack: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        payload: data,
        missing: u32::try_from(missing).unwrap_or(u32::MAX),
    })
}
