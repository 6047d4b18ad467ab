//! gzip-compressed files, read up to their first error: the gzip magic number and one
//! reader, [`StopAtError`], that ends an input at its first I/O error (a gzip stream cut
//! short, or followed by bytes that are not gzip) and keeps that error for whoever reports
//! it. A capture or trace compressed and then cut short so keeps everything decompressed
//! before the error, as the same file uncompressed would.
//!
//! Where it sits: at the bottom, beside `output`, so both readers of compressed files use
//! it: the packet capture reader (`capture::pcap::read_packets`) and the input layer
//! (`input`, any gzip-compressed input).

use std::io::{self, ErrorKind, Read};

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
