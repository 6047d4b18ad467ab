//! The bytes an input's records are read from ([`Stream`]): the input itself, or its
//! gzip-decompressed content read up to the first decompression error
//! ([`crate::gzip::StopAtError`]). The readers that stream records line by line own the
//! stream; once their lines end, [`ThenStop`] asks it how it ended and closes the records
//! with the problem a gzip stream stopped at (the records before it are kept, as for an
//! uncompressed file cut short). No state is shared: the error is read where the reader is.

use std::io::{BufReader, Chain, Cursor, Read};
use std::path::Path;

use crate::gzip::StopAtError;
use crate::trace::{ReadProblem, Record, TraceReader};

use super::error::InputError;

/// Records of one file of an input, in order.
pub(super) type Records = Box<dyn Iterator<Item = Result<Record, InputError>>>;

/// The bytes an input's records are read from: the input itself, or its
/// gzip-decompressed content, read up to the first decompression error.
pub(super) enum Stream {
    /// The input as it is.
    Plain(Box<dyn Read + Send>),
    /// The gzip members of the input, one after another (boxed: the decoder's state is
    /// large).
    Gunzip(Box<StopAtError<flate2::read::MultiGzDecoder<Box<dyn Read + Send>>>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(r) => r.read(buf),
            Stream::Gunzip(r) => r.read(buf),
        }
    }
}

/// Where and why a gzip stream stopped before its end.
pub(super) struct Stop {
    /// Decompressed bytes read before the error.
    at: u64,
    /// The error, in words.
    pub(super) why: String,
}

impl Stream {
    /// The decompressed content of `input`.
    pub(super) fn gunzip(input: Box<dyn Read + Send>) -> Self {
        Stream::Gunzip(Box::new(StopAtError::new(
            flate2::read::MultiGzDecoder::new(input),
        )))
    }

    /// Where and why a gzip stream stopped at an error; `None` for one read to its end,
    /// or for an input that is not compressed.
    pub(super) fn stopped(&self) -> Option<Stop> {
        let Stream::Gunzip(gz) = self else {
            return None;
        };
        let (at, e) = (gz.bytes_read(), gz.error()?);
        Some(Stop {
            at,
            why: format!("the gzip stream stops with an error after {at} decompressed bytes ({e}); the file may be cut short, or end in bytes that are not gzip"),
        })
    }
}

impl Stop {
    /// The problem record closing the records of input `name`.
    pub(super) fn problem(&self, name: &str) -> ReadProblem {
        ReadProblem {
            line: 0,
            offset: self.at,
            truncated: true,
            message: format!("{name}: {}; the records before it were read", self.why),
            raw: Vec::new(),
            file: None,
        }
    }
}

/// An input stream with its first line (or bytes), read to recognise it, back in front.
pub(super) type Whole = Chain<Cursor<Vec<u8>>, BufReader<Stream>>;

/// `head` back in front of the rest of `r`.
pub(super) fn whole(head: Vec<u8>, r: BufReader<Stream>) -> Whole {
    Cursor::new(head).chain(r)
}

/// A reader of records line by line, which can say how its stream ended.
pub(super) trait Lines {
    /// The stream the lines are read from.
    fn stream(&self) -> &Stream;
}

impl Lines for TraceReader<BufReader<Whole>> {
    fn stream(&self) -> &Stream {
        self.get_ref().get_ref().get_ref().1.get_ref()
    }
}

/// The records of a line reader, then, once they end, the problem its gzip stream stopped
/// at (if it did).
pub(super) struct ThenStop<L> {
    lines: L,
    /// The input, as problems name it.
    name: String,
    done: bool,
}

impl<L> ThenStop<L> {
    /// The records of `lines`, read from input `path`.
    pub(super) fn new(lines: L, path: &Path) -> Self {
        ThenStop {
            lines,
            name: path.display().to_string(),
            done: false,
        }
    }
}

impl<L, E> Iterator for ThenStop<L>
where
    L: Lines + Iterator<Item = Result<Record, E>>,
    InputError: From<E>,
{
    type Item = Result<Record, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.lines.next() {
            Some(r) => Some(r.map_err(InputError::from)),
            None => {
                self.done = true;
                let stop = self.lines.stream().stopped()?;
                Some(Ok(Record::Bad(stop.problem(&self.name))))
            }
        }
    }
}
