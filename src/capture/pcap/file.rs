//! Capture file reading: pcap (micro- and nanosecond, either byte order) and pcapng
//! (several sections, several interfaces with their own link type and timestamp
//! resolution), plain or gzip-compressed, read as a stream with `pcap-parser`.
//!
//! A file that cannot be read to its end yields the packets before the bad block and an
//! error naming the file and the byte offset of that block (in the uncompressed stream).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapNGPacketBlock;
use pcap_parser::{PcapBlockOwned, PcapError as ParserError};

use super::{Packet, PcapError};

/// Initial read buffer, bytes; grown for larger blocks (up to [`MAX_BLOCK`]).
const BUFFER: usize = 1 << 20;
/// Bytes read before recognising the format (more than any file header), bytes.
const FIRST_READ: usize = 64 << 10;
/// Largest block accepted, bytes (a TSO/GRO capture has packets up to 256 KiB).
const MAX_BLOCK: usize = 64 << 20;

/// What a file held besides its packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    /// Packets read.
    pub packets: u64,
    /// Captured packet bytes read (sum of captured lengths).
    pub bytes: u64,
    /// `pcap` or `pcapng`.
    pub format: String,
    /// True when the file was gzip-compressed.
    pub gzip: bool,
    /// pcapng sections.
    pub sections: u64,
    /// Link types seen (one per interface), as `LINKTYPE_*` numbers.
    pub link_types: Vec<u32>,
    /// Packets that referenced an interface the section did not describe (skipped).
    pub bad_interface: u64,
}

impl FileInfo {
    /// Warnings about packets of this file that were skipped unread (they name an
    /// interface the pcapng section did not declare); `name` is the file as messages
    /// name it. Non-empty makes a run degraded.
    pub fn problems(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        if self.bad_interface > 0 {
            out.push(format!(
                "{name}: {} packets name an interface the pcapng section did not declare (no Interface Description Block); they were skipped. The file is damaged or was cut and joined; re-export it (e.g. editcap)",
                self.bad_interface
            ));
        }
        out
    }
}

#[derive(Clone, Copy)]
struct Interface {
    link_type: u32,
    /// Timestamp units per second.
    resolution: u64,
    /// Seconds added to every timestamp.
    offset: i64,
    snaplen: u32,
}

/// Read the capture at `path`, calling `on_packet` for every packet in file order.
///
/// Errors: [`PcapError::Open`], [`PcapError::NotACapture`], [`PcapError::Truncated`],
/// [`PcapError::Corrupt`]; packets before the error have been delivered.
pub fn read_file(
    path: &Path,
    on_packet: &mut dyn FnMut(&Packet<'_>),
) -> Result<FileInfo, PcapError> {
    let name = path.display().to_string();
    let file = File::open(path).map_err(|e| PcapError::Open {
        path: name.clone(),
        source: e,
    })?;
    read_packets(file, &name, on_packet)
}

/// True when `head` (a file's first bytes, at least 4) starts like a capture agentwire
/// reads: the pcap magic numbers (microsecond and nanosecond, either byte order;
/// tcpdump's `pcap-savefile(5)`), the pcapng Section Header Block type `0x0A0D0D0A`
/// (RFC draft-ietf-opsawg-pcapng §4.1), or gzip (`1f 8b`, RFC 1952), whose content is
/// checked when it is read.
pub fn is_capture_start(head: &[u8]) -> bool {
    const MAGICS: [[u8; 4]; 5] = [
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0x4d, 0x3c, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
        [0x0a, 0x0d, 0x0d, 0x0a],
    ];
    head.starts_with(&[0x1f, 0x8b]) || MAGICS.iter().any(|m| head.starts_with(m))
}

/// Read a capture from any reader (gzip is detected by its magic number); `name` is used
/// in errors.
pub fn read_packets(
    input: impl Read + Send,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
) -> Result<FileInfo, PcapError> {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let head = input.fill_buf().map_err(|e| PcapError::Open {
        path: name.to_string(),
        source: e,
    })?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::bufread::MultiGzDecoder::new(input);
        let mut info = read_stream(gz, name, on_packet)?;
        info.gzip = true;
        Ok(info)
    } else {
        read_stream(input, name, on_packet)
    }
}

fn read_stream(
    mut input: impl Read + Send,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
) -> Result<FileInfo, PcapError> {
    // pcap-parser recognises the file from its first read alone; a reader that returns
    // short reads (a pipe, a chained reader) must not make a capture unrecognisable.
    let mut head = Vec::with_capacity(FIRST_READ);
    (&mut input)
        .take(FIRST_READ as u64)
        .read_to_end(&mut head)
        .map_err(|e| PcapError::Read {
            path: name.into(),
            offset: 0,
            detail: e.to_string(),
        })?;
    let input = std::io::Cursor::new(head).chain(input);
    let mut reader = match pcap_parser::create_reader(BUFFER, input) {
        Ok(r) => r,
        Err(ParserError::ReadError) => {
            return Err(PcapError::Read {
                path: name.into(),
                offset: 0,
                detail: "read failed".into(),
            })
        }
        Err(_) => return Err(PcapError::NotACapture { path: name.into() }),
    };
    let mut info = FileInfo::default();
    let mut ifaces: Vec<Interface> = Vec::new();
    let mut offset: u64 = 0;
    let mut capacity = BUFFER;
    let mut frame: u64 = 0;
    loop {
        let before = reader.data().len();
        match reader.next() {
            Ok((len, block)) => {
                match block {
                    PcapBlockOwned::LegacyHeader(h) => {
                        info.format = "pcap".into();
                        let resolution = if h.is_nanosecond_precision() {
                            1_000_000_000
                        } else {
                            1_000_000
                        };
                        let lt = h.network.0 as u32;
                        info.link_types.push(lt);
                        ifaces = vec![Interface {
                            link_type: lt,
                            resolution,
                            offset: i64::from(h.thiszone),
                            snaplen: h.snaplen,
                        }];
                    }
                    PcapBlockOwned::Legacy(b) => {
                        frame += 1;
                        let Some(iface) = ifaces.first() else {
                            continue;
                        };
                        let frac = u64::from(b.ts_usec) * 1_000_000_000 / iface.resolution;
                        let ts_ns =
                            (i64::from(b.ts_sec) + iface.offset) * 1_000_000_000 + frac as i64;
                        let ts_ns = Some(ts_ns);
                        deliver(&mut info, on_packet, frame, ts_ns, iface, b.data, b.origlen);
                    }
                    PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                        info.format = "pcapng".into();
                        info.sections += 1;
                        ifaces.clear();
                    }
                    PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                        let lt = idb.linktype.0 as u32;
                        info.link_types.push(lt);
                        ifaces.push(Interface {
                            link_type: lt,
                            resolution: idb.ts_resolution().unwrap_or(1_000_000),
                            offset: idb.ts_offset(),
                            snaplen: idb.snaplen,
                        });
                    }
                    PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                        frame += 1;
                        match ifaces.get(epb.if_id as usize) {
                            Some(iface) => {
                                let ts = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                                let ts_ns = Some(scale(ts, iface.resolution, iface.offset));
                                let data = epb.packet_data();
                                deliver(
                                    &mut info,
                                    on_packet,
                                    frame,
                                    ts_ns,
                                    iface,
                                    data,
                                    epb.origlen,
                                );
                            }
                            None => info.bad_interface += 1,
                        }
                    }
                    PcapBlockOwned::NG(Block::SimplePacket(spb)) => {
                        frame += 1;
                        match ifaces.first() {
                            Some(iface) => {
                                let keep = spb.data.len().min(spb.origlen as usize);
                                let keep = if iface.snaplen > 0 {
                                    keep.min(iface.snaplen as usize)
                                } else {
                                    keep
                                };
                                let data = &spb.data[..keep];
                                // A Simple Packet Block has no timestamp: absent, not 0.
                                deliver(
                                    &mut info,
                                    on_packet,
                                    frame,
                                    None,
                                    iface,
                                    data,
                                    spb.origlen,
                                );
                            }
                            None => info.bad_interface += 1,
                        }
                    }
                    PcapBlockOwned::NG(_) => {}
                }
                offset += len as u64;
                // No shift here: `refill` moves the few bytes left when the buffer runs
                // out (`consume` would move half the buffer each time it passes half:
                // half of every capture copied once more).
                reader.consume_noshift(len);
            }
            Err(ParserError::Eof) => break,
            Err(ParserError::Incomplete(_)) => {
                if reader.reader_exhausted() {
                    if before == 0 {
                        break;
                    }
                    return Err(PcapError::Truncated {
                        path: name.into(),
                        offset,
                        packets: info.packets,
                    });
                }
                let failed = reader.refill().is_err();
                let grew = reader.data().len() > before;
                if failed {
                    return Err(PcapError::Read {
                        path: name.into(),
                        offset,
                        detail: "read failed".into(),
                    });
                }
                if !grew && !reader.reader_exhausted() {
                    if capacity >= MAX_BLOCK {
                        return Err(corrupt(name, offset, &info, "block larger than 64 MiB"));
                    }
                    capacity *= 2;
                    reader.grow(capacity);
                    let _ = reader.refill();
                }
            }
            Err(ParserError::BufferTooSmall) => {
                if capacity >= MAX_BLOCK {
                    return Err(corrupt(name, offset, &info, "block larger than 64 MiB"));
                }
                capacity *= 2;
                reader.grow(capacity);
                let _ = reader.refill();
            }
            Err(ParserError::UnexpectedEof) => {
                return Err(PcapError::Truncated {
                    path: name.into(),
                    offset,
                    packets: info.packets,
                })
            }
            Err(e) => {
                let detail = match e {
                    ParserError::HeaderNotRecognized => "unknown block".to_string(),
                    ParserError::NomError(_, k) | ParserError::OwnedNomError(_, k) => {
                        format!("malformed block ({})", k.description())
                    }
                    other => format!("{other:?}"),
                };
                return Err(corrupt(name, offset, &info, &detail));
            }
        }
    }
    Ok(info)
}

fn corrupt(name: &str, offset: u64, info: &FileInfo, detail: &str) -> PcapError {
    PcapError::Corrupt {
        path: name.into(),
        offset,
        packets: info.packets,
        detail: detail.into(),
    }
}

/// Timestamp in `resolution` units per second plus `offset` seconds → nanoseconds.
/// Timestamps beyond the range of `i64` nanoseconds (years ±292) saturate (found by
/// fuzzing: a pcapng interface may declare a resolution of 1 unit per second).
fn scale(ts: u64, resolution: u64, offset: i64) -> i64 {
    let resolution = resolution.max(1);
    let secs = i128::from(ts / resolution) + i128::from(offset);
    let frac = i128::from(ts % resolution) * 1_000_000_000 / i128::from(resolution);
    let ns = secs * 1_000_000_000 + frac;
    ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

fn deliver(
    info: &mut FileInfo,
    on_packet: &mut dyn FnMut(&Packet<'_>),
    frame: u64,
    ts_ns: Option<i64>,
    iface: &Interface,
    data: &[u8],
    orig_len: u32,
) {
    info.packets += 1;
    info.bytes += data.len() as u64;
    on_packet(&Packet {
        frame,
        ts_ns,
        link_type: iface.link_type,
        data,
        orig_len: orig_len.max(data.len() as u32),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_scale_per_resolution() {
        // 1.5 s at microsecond, nanosecond and 2^-10 s resolution.
        assert_eq!(scale(1_500_000, 1_000_000, 0), 1_500_000_000);
        assert_eq!(scale(1_500_000_000, 1_000_000_000, 0), 1_500_000_000);
        assert_eq!(scale(1536, 1024, 0), 1_500_000_000);
        assert_eq!(scale(0, 1_000_000, 10), 10_000_000_000);
        // Out of range: saturates instead of overflowing.
        assert_eq!(scale(u64::MAX, 1, 0), i64::MAX);
        assert_eq!(scale(0, 1, i64::MIN), i64::MIN);
    }

    #[test]
    fn garbage_is_not_a_capture() {
        let mut n = 0;
        let e = read_packets(
            &b"hello world, not a capture at all"[..],
            "x.bin",
            &mut |_| n += 1,
        )
        .unwrap_err();
        assert!(matches!(e, PcapError::NotACapture { .. }), "{e}");
        assert_eq!(n, 0);
    }

    /// A reader that hands out one byte per read, as a slow pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match (self.0.split_first(), buf.first_mut()) {
                (Some((b, rest)), Some(slot)) => {
                    *slot = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    #[test]
    fn short_reads_do_not_hide_the_file_header() {
        // pcap, little-endian, microseconds, Ethernet; two 14-byte packets.
        let mut file = Vec::new();
        for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
            file.extend_from_slice(&v.to_le_bytes());
        }
        for ts in [1u32, 2] {
            for v in [ts, 0, 14, 14] {
                file.extend_from_slice(&v.to_le_bytes());
            }
            file.extend_from_slice(&[0u8; 14]);
        }
        let mut frames = Vec::new();
        let info = read_packets(Trickle(&file), "pipe", &mut |p| frames.push(p.frame)).unwrap();
        assert_eq!(frames, [1, 2]);
        assert_eq!(info.format, "pcap");
    }
}
