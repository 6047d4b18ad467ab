//! Link layers: from a captured frame to an `etherparse` lax slice of its network layer.
//!
//! Supported link types (numbers from the tcpdump.org LINKTYPE registry): Ethernet II (1)
//! with 802.1Q / QinQ tags (etherparse), Linux cooked capture SLL (113) and SLL2 (276),
//! BSD loopback NULL (0, host byte order family) and OpenBSD LOOP (108, network byte
//! order), raw IP (101, 12, 14) and raw IPv4 (228) / IPv6 (229). SLL, SLL2 and NULL/LOOP
//! are decoded here (a small shim: etherparse's lax slicer has no entry point for them).

use etherparse::{EtherType, LaxSlicedPacket};

/// `LINKTYPE_NULL`: 4-byte address family in the capturing host's byte order.
pub const NULL: u32 = 0;
/// `LINKTYPE_ETHERNET`.
pub const ETHERNET: u32 = 1;
/// `LINKTYPE_RAW` (and the BSD `DLT_RAW` numbers 12 and 14).
pub const RAW: u32 = 101;
/// `LINKTYPE_LOOP`: 4-byte address family in network byte order.
pub const LOOP: u32 = 108;
/// `LINKTYPE_LINUX_SLL`: 16-byte Linux cooked header.
pub const LINUX_SLL: u32 = 113;
/// `LINKTYPE_IPV4`.
pub const IPV4: u32 = 228;
/// `LINKTYPE_IPV6`.
pub const IPV6: u32 = 229;
/// `LINKTYPE_LINUX_SLL2`: 20-byte Linux cooked header v2.
pub const LINUX_SLL2: u32 = 276;

/// True when this link type is decoded.
pub fn supported(link_type: u32) -> bool {
    matches!(
        link_type,
        NULL | ETHERNET | RAW | 12 | 14 | LOOP | LINUX_SLL | IPV4 | IPV6 | LINUX_SLL2
    )
}

/// The decoded link types, for messages: "Ethernet (1), …".
pub const SUPPORTED_NAMES: &str = "Ethernet (1), Linux cooked SLL (113) and SLL2 (276), loopback NULL (0) and LOOP (108), raw IP (101, 12, 14, 228, 229)";

/// One warning per link type whose packets were skipped (`link type → packets`, as
/// [`super::ExtractionSummary::unknown_link_types`] counts them), naming what is decoded instead.
pub fn skipped_warnings(unknown: &std::collections::BTreeMap<u32, u64>) -> Vec<String> {
    unknown
        .iter()
        .map(|(lt, n)| {
            format!(
                "{n} packets of link type {lt} were skipped: agentwire decodes {SUPPORTED_NAMES}; re-capture on such an interface (e.g. tcpdump -i any)"
            )
        })
        .collect()
}

/// Why a frame yielded no network layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSkip {
    /// The link type is not one of the supported ones.
    UnknownLinkType,
    /// The frame is shorter than its link header.
    Short,
    /// The frame carries something other than IPv4/IPv6 (ARP, LLDP, ...).
    NotIp,
}

/// Slice `data` (a frame of `link_type`) down to its network layer.
pub fn slice(link_type: u32, data: &[u8]) -> Result<LaxSlicedPacket<'_>, LinkSkip> {
    match link_type {
        ETHERNET => LaxSlicedPacket::from_ethernet(data).map_err(|_| LinkSkip::Short),
        LINUX_SLL => {
            // packet type (2), ARPHRD (2), addr len (2), addr (8), protocol (2).
            let proto = be16(data, 14).ok_or(LinkSkip::Short)?;
            Ok(LaxSlicedPacket::from_ether_type(
                EtherType(proto),
                &data[16..],
            ))
        }
        LINUX_SLL2 => {
            // protocol (2), reserved (2), ifindex (4), ARPHRD (2), packet type (1),
            // addr len (1), addr (8).
            let proto = be16(data, 0).ok_or(LinkSkip::Short)?;
            if data.len() < 20 {
                return Err(LinkSkip::Short);
            }
            Ok(LaxSlicedPacket::from_ether_type(
                EtherType(proto),
                &data[20..],
            ))
        }
        NULL | LOOP => {
            if data.len() < 4 {
                return Err(LinkSkip::Short);
            }
            // The family's value differs between systems (AF_INET is 2 everywhere;
            // AF_INET6 is 24, 28 or 30 on BSDs, 10 on Linux): the IP version nibble decides.
            from_ip(&data[4..])
        }
        RAW | 12 | 14 | IPV4 | IPV6 => from_ip(data),
        _ => Err(LinkSkip::UnknownLinkType),
    }
}

fn from_ip(data: &[u8]) -> Result<LaxSlicedPacket<'_>, LinkSkip> {
    match data.first().map(|b| b >> 4) {
        Some(4) | Some(6) => LaxSlicedPacket::from_ip(data).map_err(|_| LinkSkip::Short),
        Some(_) => Err(LinkSkip::NotIp),
        None => Err(LinkSkip::Short),
    }
}

fn be16(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at + 2)?;
    Some(u16::from_be_bytes([b[0], b[1]]))
}
