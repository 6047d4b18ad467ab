//! gzip-compressed files, read up to their first error: the gzip magic number and one
//! reader, [`StopAtError`], that ends an input at its first I/O error (a gzip stream cut
//! short, or followed by bytes that are not gzip) and keeps that error for whoever reports
//! it. A capture or trace compressed and then cut short so keeps everything decompressed
//! before the error, as the same file uncompressed would.
//!
//! It also holds the bounds on expansion a user's file can ask for ([`Bounds`]): the bytes a
//! compressed file read whole may decompress to, and the bytes a document's internal
//! references may expand to; [`Bounded`] is the reader that enforces the first. Going
//! past a bound is an error naming the input, the bound and the flag that raises it.
//!
//! Where it sits: at the bottom, beside `output`, so both readers of compressed files use
//! it: the packet capture reader (`capture::pcap::read_packets`) and the input layer
//! (`input`, any gzip-compressed input).

use std::io::{self, ErrorKind, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// gzip's ID1 ID2 (RFC 1952 §2.3.1).
pub const MAGIC: [u8; 2] = [0x1f, 0x8b];

/// True when `head` (a file's first bytes) starts with the gzip magic number.
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// A reader that stops at the first I/O error of `inner`: it reports the end of the input
/// instead, and keeps the error ([`StopAtError::error`]). Interrupted reads are retried.
/// Every read after the error reads nothing.
#[derive(Debug)]
pub struct StopAtError<R> {
    inner: R,
    error: Option<io::Error>,
    /// Bytes handed out so far.
    read: u64,
}

impl<R> StopAtError<R> {
    /// A reader of `inner` that stops at its first error.
    pub fn new(inner: R) -> Self {
        StopAtError {
            inner,
            error: None,
            read: 0,
        }
    }

    /// The error the reader stopped at, if it did.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Bytes read through this reader (up to the error, when it stopped at one).
    pub fn bytes_read(&self) -> u64 {
        self.read
    }
}

impl<R: Read> Read for StopAtError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.read += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    return Ok(0);
                }
            }
        }
    }
}

/// Default of [`Bounds::decompressed`]: 256 MiB.
pub const DEFAULT_DECOMPRESSED: u64 = 256 << 20;
/// Default of [`Bounds::expanded`]: 256 MiB.
pub const DEFAULT_EXPANDED: u64 = 256 << 20;
/// Default of [`Bounds::document`]: 1 GiB.
pub const DEFAULT_DOCUMENT: u64 = 1 << 30;
/// The flag that raises [`Bounds::document`].
pub const DOCUMENT_FLAG: &str = "--max-document";
/// The flag that raises [`Bounds::decompressed`].
pub const DECOMPRESSED_FLAG: &str = "--max-decompressed";
/// The flag that raises [`Bounds::expanded`].
pub const EXPANDED_FLAG: &str = "--max-expanded";

static DECOMPRESSED: AtomicU64 = AtomicU64::new(DEFAULT_DECOMPRESSED);
static EXPANDED: AtomicU64 = AtomicU64::new(DEFAULT_EXPANDED);
static DOCUMENT: AtomicU64 = AtomicU64::new(DEFAULT_DOCUMENT);

/// The bounds on expansion, one per kind, for the whole process (the binary sets them
/// once from its flags, [`set_bounds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Largest decompressed size of a compressed input read whole (a HAR, a claude-tap
    /// export, a transcript), in bytes. Inputs read record by record stream and have no
    /// such bound.
    pub decompressed: u64,
    /// Largest size a document's internal references (claude-tap bundle blobs) may
    /// expand to, in bytes of JSON, per document.
    pub expanded: u64,
    /// Largest uncompressed input read whole into memory (a HAR, a claude-tap export, a
    /// bare request body, a transcript), in bytes. Inputs read record by record stream
    /// and have no such bound.
    pub document: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            decompressed: DEFAULT_DECOMPRESSED,
            expanded: DEFAULT_EXPANDED,
            document: DEFAULT_DOCUMENT,
        }
    }
}

/// Set the process's bounds (the binary, from `--max-decompressed` and `--max-expanded`).
pub fn set_bounds(b: Bounds) {
    DECOMPRESSED.store(b.decompressed, Ordering::Relaxed);
    EXPANDED.store(b.expanded, Ordering::Relaxed);
    DOCUMENT.store(b.document, Ordering::Relaxed);
}

/// The process's bounds.
pub fn bounds() -> Bounds {
    Bounds {
        decompressed: DECOMPRESSED.load(Ordering::Relaxed),
        expanded: EXPANDED.load(Ordering::Relaxed),
        document: DOCUMENT.load(Ordering::Relaxed),
    }
}

/// The error of going past a bound: `what` went past `bound` bytes, raise it with `flag`.
pub fn past_bound(what: &str, bound: u64, flag: &str) -> String {
    format!("{what} is larger than {bound} bytes, the bound; raise it with {flag} BYTES")
}

/// A reader that yields at most `bound` bytes of `inner`, then fails with
/// [`past_bound`]'s message (kind `InvalidData`) if `inner` has more.
#[derive(Debug)]
pub struct Bounded<R> {
    inner: R,
    left: u64,
    bound: u64,
    /// What the bound is on, and the flag that raises it (for the error).
    what: &'static str,
    flag: &'static str,
}

impl<R> Bounded<R> {
    /// At most `bound` bytes of `inner`, the decompression bound.
    pub fn new(inner: R, bound: u64) -> Self {
        Bounded::on(inner, bound, "the decompressed input", DECOMPRESSED_FLAG)
    }

    /// At most `bound` bytes of `inner`; past it the error names `what` (`the document
    /// read whole`), `bound` and `flag`.
    pub fn on(inner: R, bound: u64, what: &'static str, flag: &'static str) -> Self {
        Bounded {
            inner,
            left: bound,
            bound,
            what,
            flag,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    ErrorKind::InvalidData,
                    past_bound(self.what, self.bound, self.flag),
                )),
            };
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(data).unwrap();
        z.finish().unwrap()
    }

    #[test]
    fn a_cut_stream_yields_what_decompressed_then_keeps_the_error() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut z = gzip(&text);
        z.truncate(z.len() / 2);
        let mut r = StopAtError::new(flate2::read::MultiGzDecoder::new(&z[..]));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(
            !got.is_empty() && text.starts_with(&got),
            "a prefix of the text"
        );
        assert!(r.error().is_some(), "the error is kept");
        assert_eq!(r.bytes_read(), got.len() as u64);
        assert_eq!(r.read(&mut [0; 8]).unwrap(), 0, "nothing after the error");
    }

    #[test]
    fn bounded_reads_up_to_the_bound_then_names_the_flag() {
        let mut got = Vec::new();
        Bounded::new(&b"abcd"[..], 4).read_to_end(&mut got).unwrap();
        assert_eq!(got, b"abcd", "exactly the bound is fine");
        let e = Bounded::new(&b"abcde"[..], 4)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(e.to_string().contains("4 bytes") && e.to_string().contains(DECOMPRESSED_FLAG));
    }

    #[test]
    fn a_whole_stream_has_no_error() {
        let z = gzip(b"{}\n");
        assert!(is_gzip(&z));
        let mut r = StopAtError::new(flate2::read::MultiGzDecoder::new(&z[..]));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"{}\n");
        assert!(r.error().is_none());
    }
}
