//! Capture file reading: pcap (micro- and nanosecond, either byte order) and pcapng
//! (several sections, several interfaces with their own link type and timestamp
//! resolution), plain or gzip-compressed, read as a stream with `pcap-parser`.
//!
//! A file that cannot be read to its end yields the packets before the bad block and an
//! error naming the file and the byte offset of that block (in the uncompressed stream).
//! An I/O error (a gzip stream cut short or followed by other bytes) ends the input where
//! it happens: the bytes read before it are parsed, then the error is reported in its own
//! words.

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::Path;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{PcapBlockOwned, PcapError as ParserError};

use super::{Packet, PcapError};
use crate::gzip::StopAtError;

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
    crate::gzip::is_gzip(head)
        || head.starts_with(&PCAPNG_MAGIC)
        || PCAP_MAGICS.iter().any(|m| head.starts_with(m))
}

/// The pcap file header's magic numbers: microsecond and nanosecond, either byte order
/// (tcpdump's `pcap-savefile(5)`).
const PCAP_MAGICS: [[u8; 4]; 4] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
];
/// The pcapng Section Header Block type (draft-ietf-opsawg-pcapng §4.1).
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

/// Read a capture from any reader (gzip is detected by its magic number); `name` is used
/// in errors.
pub fn read_packets(
    input: impl Read + Send,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
) -> Result<FileInfo, PcapError> {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let gzip = loop {
        match input.fill_buf() {
            Ok(head) => break crate::gzip::is_gzip(head),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(PcapError::Open {
                    path: name.to_string(),
                    source: e,
                })
            }
        }
    };
    if gzip {
        let gz = flate2::bufread::MultiGzDecoder::new(input);
        let mut info = read_stream(gz, name, on_packet)?;
        info.gzip = true;
        Ok(info)
    } else {
        read_stream(input, name, on_packet)
    }
}

fn read_stream(
    input: impl Read + Send,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
) -> Result<FileInfo, PcapError> {
    // An I/O error (a gzip stream cut short or followed by other bytes, a failing disk)
    // ends the input here: the bytes read before it are parsed, then the error is
    // reported with its own text (pcap-parser would drop both).
    let mut input = StopAtError::new(input);
    let mut info = FileInfo::default();
    let mut offset = 0;
    let r = parse_stream(&mut input, name, on_packet, &mut info, &mut offset);
    match (r, input.error()) {
        // A parse error is in bytes read before the I/O error: it comes first.
        (Err(e @ (PcapError::Corrupt { .. } | PcapError::NotACapture { .. })), _)
        | (Err(e), None) => Err(e),
        (Ok(()), None) => Ok(info),
        (Ok(()) | Err(_), Some(e)) => Err(PcapError::Read {
            path: name.into(),
            offset,
            packets: info.packets,
            detail: e.to_string(),
        }),
    }
}

/// Bytes a capture's header needs when `head` (the start of the stream) begins with a
/// pcap or pcapng magic number, and the header's name: 24 for a pcap file header
/// (`pcap-savefile(5)`), the Section Header Block's Block Total Length for pcapng (at
/// least 28; draft-ietf-opsawg-pcapng §4.1), read in the byte order its Byte-Order Magic
/// gives once 12 bytes are there.
fn header_needs(head: &[u8]) -> Option<(&'static str, u64)> {
    if PCAP_MAGICS.iter().any(|m| head.starts_with(m)) {
        return Some(("pcap file header", 24));
    }
    if !head.starts_with(&PCAPNG_MAGIC) {
        return None;
    }
    let len = match head.get(4..12) {
        Some(&[a, b, c, d, 0x4d, 0x3c, 0x2b, 0x1a]) => u32::from_le_bytes([a, b, c, d]),
        Some(&[a, b, c, d, 0x1a, 0x2b, 0x3c, 0x4d]) => u32::from_be_bytes([a, b, c, d]),
        _ => 28,
    };
    Some(("pcapng section header block", u64::from(len.max(28))))
}

/// Recognise the format, then parse every block; `offset` follows the end of the last
/// block parsed (bytes of the uncompressed stream).
fn parse_stream<R: Read + Send>(
    input: &mut StopAtError<R>,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
    info: &mut FileInfo,
    offset: &mut u64,
) -> Result<(), PcapError> {
    // pcap-parser recognises the file from its first read alone; a reader that returns
    // short reads (a pipe, a chained reader) must not make a capture unrecognisable.
    // `StopAtError` never fails: an error ends `head` early.
    let mut head = Vec::with_capacity(FIRST_READ);
    let _ = input.take(FIRST_READ as u64).read_to_end(&mut head);
    let e = match pcap_parser::create_reader(BUFFER, (&head[..]).chain(&mut *input)) {
        Ok(reader) => return parse_blocks(reader, name, on_packet, info, offset),
        Err(e) => describe(e),
    };
    if head.is_empty() && input.error().is_some() {
        // Reported with the reader's error by `read_stream`.
        return Ok(());
    }
    match header_needs(&head) {
        Some((header, needed)) if (head.len() as u64) < needed => Err(PcapError::HeaderCut {
            path: name.into(),
            header,
            bytes: head.len() as u64,
            needed,
        }),
        Some((header, _)) => Err(corrupt(name, 0, info, &format!("malformed {header} ({e})"))),
        None => Err(PcapError::NotACapture { path: name.into() }),
    }
}

/// Parse every block of a recognised capture, delivering its packets: the reading loop
/// (a block that does not fit grows the buffer, one cut short is [`PcapError::Truncated`]);
/// [`Section::block`] reads each block.
fn parse_blocks(
    mut reader: Box<dyn PcapReaderIterator + Send + '_>,
    name: &str,
    on_packet: &mut dyn FnMut(&Packet<'_>),
    info: &mut FileInfo,
    offset: &mut u64,
) -> Result<(), PcapError> {
    let mut section = Section::default();
    let mut capacity = BUFFER;
    loop {
        let before = reader.data().len();
        match reader.next() {
            Ok((len, block)) => {
                section.block(block, info, on_packet);
                *offset += len as u64;
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
                    return Err(truncated(name, *offset, info));
                }
                // `StopAtError` never fails: an I/O error ends the input, and `read_stream`
                // reports it after the blocks before it.
                let _ = reader.refill();
                let grew = reader.data().len() > before;
                if !grew && !reader.reader_exhausted() {
                    grow(&mut *reader, &mut capacity, name, *offset, info)?;
                }
            }
            Err(ParserError::BufferTooSmall) => {
                grow(&mut *reader, &mut capacity, name, *offset, info)?;
            }
            Err(ParserError::UnexpectedEof) => return Err(truncated(name, *offset, info)),
            Err(e) => return Err(corrupt(name, *offset, info, &describe(e))),
        }
    }
    Ok(())
}

/// Double the reader's buffer (`capacity`, bytes) for a block that does not fit, and
/// refill it. Errors: [`PcapError::Corrupt`] past [`MAX_BLOCK`].
fn grow(
    reader: &mut (dyn PcapReaderIterator + Send + '_),
    capacity: &mut usize,
    name: &str,
    offset: u64,
    info: &FileInfo,
) -> Result<(), PcapError> {
    if *capacity >= MAX_BLOCK {
        return Err(corrupt(name, offset, info, "block larger than 64 MiB"));
    }
    *capacity *= 2;
    reader.grow(*capacity);
    let _ = reader.refill();
    Ok(())
}

fn truncated(name: &str, offset: u64, info: &FileInfo) -> PcapError {
    PcapError::Truncated {
        path: name.into(),
        offset,
        packets: info.packets,
    }
}

/// What reading a block needs from the blocks before it: the interfaces of the current
/// section (a pcap file has one) and the frame number of the last packet.
#[derive(Default)]
struct Section {
    ifaces: Vec<Interface>,
    frame: u64,
}

impl Section {
    /// Read one block: a file or section header, an interface, or a packet, delivered
    /// with its timestamp in nanoseconds (a packet naming an interface the section did
    /// not declare is counted in [`FileInfo::bad_interface`] and skipped).
    fn block(
        &mut self,
        block: PcapBlockOwned<'_>,
        info: &mut FileInfo,
        on_packet: &mut dyn FnMut(&Packet<'_>),
    ) {
        match block {
            PcapBlockOwned::LegacyHeader(h) => self.pcap_header(&h, info),
            PcapBlockOwned::Legacy(b) => {
                self.frame += 1;
                // (a pcap file header always comes first and declares the interface)
                let Some(iface) = self.ifaces.first() else {
                    return;
                };
                let frac = u64::from(b.ts_usec) * 1_000_000_000 / iface.resolution;
                let ts_ns = (i64::from(b.ts_sec) + iface.offset) * 1_000_000_000 + frac as i64;
                deliver(
                    info,
                    on_packet,
                    self.frame,
                    Some(ts_ns),
                    iface,
                    b.data,
                    b.origlen,
                );
            }
            PcapBlockOwned::NG(Block::SectionHeader(_)) => {
                info.format = "pcapng".into();
                info.sections += 1;
                self.ifaces.clear();
            }
            PcapBlockOwned::NG(Block::InterfaceDescription(idb)) => {
                let lt = idb.linktype.0 as u32;
                info.link_types.push(lt);
                self.ifaces.push(Interface {
                    link_type: lt,
                    resolution: idb.ts_resolution().unwrap_or(1_000_000),
                    offset: idb.ts_offset(),
                    snaplen: idb.snaplen,
                });
            }
            PcapBlockOwned::NG(Block::EnhancedPacket(epb)) => {
                self.frame += 1;
                match self.ifaces.get(epb.if_id as usize) {
                    Some(iface) => {
                        let ts = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                        let ts_ns = Some(scale(ts, iface.resolution, iface.offset));
                        let data = epb.packet_data();
                        deliver(info, on_packet, self.frame, ts_ns, iface, data, epb.origlen);
                    }
                    None => info.bad_interface += 1,
                }
            }
            PcapBlockOwned::NG(Block::SimplePacket(spb)) => self.simple(&spb, info, on_packet),
            PcapBlockOwned::NG(_) => {}
        }
    }

    /// A pcap file header: the file's one interface.
    fn pcap_header(&mut self, h: &pcap_parser::PcapHeader, info: &mut FileInfo) {
        info.format = "pcap".into();
        let resolution = if h.is_nanosecond_precision() {
            1_000_000_000
        } else {
            1_000_000
        };
        let lt = h.network.0 as u32;
        info.link_types.push(lt);
        self.ifaces = vec![Interface {
            link_type: lt,
            resolution,
            offset: i64::from(h.thiszone),
            snaplen: h.snaplen,
        }];
    }

    /// A pcapng Simple Packet Block: the section's first interface, no timestamp, and
    /// the data cut to the original length and the interface's snap length.
    fn simple(
        &mut self,
        spb: &pcap_parser::pcapng::SimplePacketBlock<'_>,
        info: &mut FileInfo,
        on_packet: &mut dyn FnMut(&Packet<'_>),
    ) {
        self.frame += 1;
        let Some(iface) = self.ifaces.first() else {
            info.bad_interface += 1;
            return;
        };
        let keep = spb.data.len().min(spb.origlen as usize);
        let keep = if iface.snaplen > 0 {
            keep.min(iface.snaplen as usize)
        } else {
            keep
        };
        let data = &spb.data[..keep];
        // A Simple Packet Block has no timestamp: absent, not 0.
        deliver(info, on_packet, self.frame, None, iface, data, spb.origlen);
    }
}

/// What a parse error says about the block it stopped at.
fn describe(e: ParserError<&[u8]>) -> String {
    match e {
        ParserError::HeaderNotRecognized => "unknown block".to_string(),
        ParserError::NomError(_, k) | ParserError::OwnedNomError(_, k) => {
            format!("malformed block ({})", k.description())
        }
        other => format!("{other:?}"),
    }
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

    /// pcap, little-endian, microseconds, Ethernet; `n` 14-byte packets (30 bytes each
    /// after the 24-byte file header).
    fn small_pcap(n: u32) -> Vec<u8> {
        let mut file = Vec::new();
        for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, 1] {
            file.extend_from_slice(&v.to_le_bytes());
        }
        for ts in 1..=n {
            for v in [ts, 0, 14, 14] {
                file.extend_from_slice(&v.to_le_bytes());
            }
            file.extend_from_slice(&[0u8; 14]);
        }
        file
    }

    /// A reader that is interrupted before every read (EINTR) and fails with its own
    /// error once `fail_at` bytes have been read, as a failing disk does.
    struct Failing<'a> {
        data: &'a [u8],
        fail_at: usize,
        interrupt: bool,
    }

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(ErrorKind::Interrupted.into());
            }
            if self.fail_at == 0 {
                return Err(std::io::Error::other(
                    "input/output error on the test device",
                ));
            }
            let n = buf.len().min(self.fail_at).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            self.fail_at -= n;
            Ok(n)
        }
    }

    #[test]
    fn read_error_keeps_the_packets_before_it_and_its_own_text() {
        let file = small_pcap(5);
        // Fails inside packet 4: packets 1-3 (ending at byte 24 + 3 * 30) are whole.
        let input = Failing {
            data: &file,
            fail_at: 24 + 3 * 30 + 7,
            interrupt: false,
        };
        let mut frames = Vec::new();
        let e = read_packets(input, "disk.pcap", &mut |p| frames.push(p.frame)).unwrap_err();
        assert_eq!(frames, [1, 2, 3]);
        assert!(
            matches!(&e, PcapError::Read { offset: 114, packets: 3, detail, .. }
                if detail == "input/output error on the test device"),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(msg.starts_with("cannot read capture disk.pcap at byte 114: input/output error"));
        // Interrupted reads are retried: the whole file, no error.
        let input = Failing {
            data: &file,
            fail_at: usize::MAX,
            interrupt: false,
        };
        let info = read_packets(input, "slow.pcap", &mut |_| {}).unwrap();
        assert_eq!(info.packets, 5);
    }

    #[test]
    fn short_reads_do_not_hide_the_file_header() {
        let file = small_pcap(2);
        let mut frames = Vec::new();
        let info = read_packets(Trickle(&file), "pipe", &mut |p| frames.push(p.frame)).unwrap();
        assert_eq!(frames, [1, 2]);
        assert_eq!(info.format, "pcap");
    }
}
