//! A gzip-compressed input, read up to its first decompression error: a trace or document
//! compressed and then cut short (or followed by bytes that are not gzip) keeps every
//! record that decompressed before the error, as the same input uncompressed would, and
//! the error becomes a problem record instead of losing the whole input.

use std::io::{self, Read};
use std::sync::{Arc, Mutex};

use super::ReadProblem;

/// The decompression error met, if any, shared between the reader and whoever reports it.
#[derive(Clone, Default)]
pub(crate) struct Failure(Arc<Mutex<Option<(u64, io::Error)>>>);

impl Failure {
    /// Where the reader stopped (decompressed bytes) and why, once.
    pub(crate) fn take(&self) -> Option<(u64, String)> {
        let (at, e) = self.0.lock().ok()?.take()?;
        Some((
            at,
            format!("the gzip stream stops with an error after {at} decompressed bytes ({e}); the file may be cut short, or end in bytes that are not gzip"),
        ))
    }

    /// The problem record for input `name`, once, after the reader stopped at an error.
    pub(crate) fn take_problem(&self, name: &str) -> Option<ReadProblem> {
        let (at, why) = self.take()?;
        Some(ReadProblem {
            line: 0,
            offset: at,
            truncated: true,
            message: format!("{name}: {why}; the records before it were read"),
            raw: Vec::new(),
            file: None,
        })
    }
}

/// Reads the decompressed bytes of `inner` (gzip members one after another) and ends at the
/// first error, which it keeps in [`Failure`].
pub(crate) struct UntilError {
    inner: flate2::read::MultiGzDecoder<Box<dyn Read + Send>>,
    failure: Failure,
    /// Decompressed bytes handed out so far.
    read: u64,
    stopped: bool,
}

impl UntilError {
    /// A reader of the decompressed `inner`, and where its error will be.
    pub(crate) fn new(inner: Box<dyn Read + Send>) -> (Self, Failure) {
        let failure = Failure::default();
        let r = UntilError {
            inner: flate2::read::MultiGzDecoder::new(inner),
            failure: failure.clone(),
            read: 0,
            stopped: false,
        };
        (r, failure)
    }
}

impl Read for UntilError {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.stopped {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => {
                    self.read += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.stopped = true;
                    if let Ok(mut slot) = self.failure.0.lock() {
                        *slot = Some((self.read, e));
                    }
                    return Ok(0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        crate::api::decode::test_gzip(data)
    }

    #[test]
    fn a_cut_stream_yields_what_decompressed_then_says_where_it_stopped() {
        let text: Vec<u8> = (0..20_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut z = gzip(&text);
        z.truncate(z.len() / 2);
        let (mut r, failure) = UntilError::new(Box::new(io::Cursor::new(z)));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert!(
            !got.is_empty() && text.starts_with(&got),
            "a prefix of the text"
        );
        let p = failure
            .take_problem("t.jsonl.gz")
            .expect("the error is kept");
        assert_eq!(p.offset, got.len() as u64);
        assert!(
            p.message.contains("t.jsonl.gz") && p.message.contains("may be cut short"),
            "{}",
            p.message
        );
        assert!(failure.take_problem("t").is_none(), "reported once");
    }

    #[test]
    fn a_whole_stream_has_no_problem() {
        let (mut r, failure) = UntilError::new(Box::new(io::Cursor::new(gzip(b"{}\n"))));
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"{}\n");
        assert!(failure.take_problem("t").is_none());
    }
}
