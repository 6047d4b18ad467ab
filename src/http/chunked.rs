//! The chunked transfer coding (RFC 9112 §7.1), read incrementally: the chunk-size line
//! ([`chunk_size`]) and one [`Decoder`] for a chunked body, used by every reader of HTTP/1.1
//! bytes (the capture reader, `capture::pcap::message`, and the server's byte ledger,
//! `capture::server::tee`, which passes hyper's limits).
//!
//! The grammar, with the leniencies a passive reader accepts (each reported, so a reader
//! can say so):
//! - `chunk-size [ BWS ; extensions ] CRLF`: hex digits, at most 2^64 − 1; spaces or tabs
//!   before the digits, or after them without an extension, are accepted and reported
//!   ([`Decoder`] events carry `space`);
//! - chunk data of that size, then CRLF;
//! - a chunk of size 0, then trailer field lines, then an empty line;
//! - a line ended by LF alone is accepted and reported (`bare_lf`; RFC 9112 §2.2 lets a
//!   recipient accept it);
//! - anything else breaks the framing ([`ChunkError`]): an invalid chunk-size line, chunk
//!   data not followed by a line end, a chunk-size or trailer line longer than
//!   [`Limits::max_line`] while still incomplete.

/// Limits a reader applies to a chunked body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest chunk-size or trailer line followed, in bytes: a longer one breaks the
    /// framing. Checked while the line is incomplete (a line whose end arrives with the
    /// bytes that make it longer is read whole).
    pub max_line: usize,
}

/// Why a chunked body's framing broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// A chunk-size or trailer line grew past [`Limits::max_line`] bytes.
    #[error("chunk-size or trailer line longer than {} KiB", .max_line >> 10)]
    LineTooLong {
        /// The limit, bytes.
        max_line: usize,
    },
    /// A chunk-size line that is no chunk size (see [`chunk_size`]).
    #[error("invalid chunk-size line {shown:?}")]
    BadSize {
        /// Its first 40 bytes (lossy UTF-8), without the line end.
        shown: String,
    },
    /// Chunk data not followed by CRLF (or LF).
    #[error("chunk data not followed by CRLF")]
    NoLineEnd,
}

/// What one [`Decoder::step`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// Chunk data: body bytes, in order (a slice of the input).
    Data(&'a [u8]),
    /// The input was used up inside a line or a line end; the decoder keeps what it needs.
    More,
    /// A chunk-size line: the size of the chunk that follows (0: the last chunk, the
    /// trailer section follows).
    Size {
        /// Chunk size, bytes.
        size: u64,
        /// The line ended with LF alone.
        bare_lf: bool,
        /// Whitespace the grammar does not allow was accepted around the size.
        space: bool,
    },
    /// The line end after a chunk's data.
    DataEnd {
        /// It was LF alone.
        bare_lf: bool,
    },
    /// A trailer field line.
    Trailer {
        /// Its name and value, trimmed; `None` for a line without a colon (ignored).
        field: Option<(String, String)>,
        /// The line ended with LF alone.
        bare_lf: bool,
    },
    /// The empty line after the trailer section: the body is complete. The decoder takes
    /// no more bytes.
    End {
        /// The line ended with LF alone.
        bare_lf: bool,
    },
    /// The framing broke; the decoder takes no more bytes.
    Broken {
        /// Why.
        error: ChunkError,
        /// Bytes of the broken part the decoder had taken: the line so far
        /// ([`ChunkError::LineTooLong`]), the chunk-size line without its line end
        /// ([`ChunkError::BadSize`]), a CR taken with earlier input
        /// ([`ChunkError::NoLineEnd`]; the byte that broke the framing is not taken).
        held: Vec<u8>,
        /// The line that broke it ended with LF alone ([`ChunkError::BadSize`] only).
        bare_lf: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Reading a chunk-size line.
    Size,
    /// Inside chunk data: bytes left (≥ 1).
    Data(u64),
    /// After chunk data, before its line end (`cr`: its CR came with earlier input).
    DataEnd { cr: bool },
    /// Reading trailer lines.
    Trailers,
    /// Complete or broken: no more bytes are taken.
    Stopped,
}

/// An incremental decoder of one chunked body: feed it the bytes after the head with
/// [`step`](Decoder::step) until it reports [`Event::End`] or [`Event::Broken`].
#[derive(Clone, Debug)]
pub struct Decoder {
    limits: Limits,
    state: State,
    /// A chunk-size or trailer line being accumulated across inputs.
    line: Vec<u8>,
}

impl Decoder {
    /// A decoder at the start of a chunked body.
    pub fn new(limits: Limits) -> Self {
        Decoder {
            limits,
            state: State::Size,
            line: Vec::new(),
        }
    }

    /// Start again at the beginning of a new chunked body (keeps the buffer's capacity).
    pub fn reset(&mut self) {
        self.state = State::Size;
        self.line.clear();
    }

    /// Chunk data bytes left in the current chunk, when the decoder is inside chunk data.
    pub fn data_left(&self) -> Option<u64> {
        match self.state {
            State::Data(rem) => Some(rem),
            _ => None,
        }
    }

    /// Count `n` bytes of the current chunk's data as read without seeing them (bytes a
    /// capture lost); `n` is at most [`data_left`](Decoder::data_left).
    pub fn skip(&mut self, n: u64) {
        if let State::Data(rem) = self.state {
            self.state = match rem.saturating_sub(n) {
                0 => State::DataEnd { cr: false },
                left => State::Data(left),
            };
        }
    }

    /// Read from the start of `input`: returns how many bytes were taken (all of them for
    /// [`Event::More`]) and what they were. An empty input, or one fed after the body
    /// ended or broke, takes nothing and is [`Event::More`].
    pub fn step<'a>(&mut self, input: &'a [u8]) -> (usize, Event<'a>) {
        if input.is_empty() {
            return (0, Event::More);
        }
        match self.state {
            State::Size | State::Trailers => self.line_step(input),
            State::Data(rem) => {
                let n = usize::try_from(rem).unwrap_or(usize::MAX).min(input.len());
                self.state = match rem - n as u64 {
                    0 => State::DataEnd { cr: false },
                    left => State::Data(left),
                };
                (n, Event::Data(&input[..n]))
            }
            State::DataEnd { cr } => self.data_end(input, cr),
            State::Stopped => (0, Event::More),
        }
    }

    /// Accumulate a chunk-size or trailer line; read it once its LF is in `input`.
    fn line_step<'a>(&mut self, input: &'a [u8]) -> (usize, Event<'a>) {
        let Some(nl) = input.iter().position(|b| *b == b'\n') else {
            self.line.extend_from_slice(input);
            if self.line.len() <= self.limits.max_line {
                return (input.len(), Event::More);
            }
            self.state = State::Stopped;
            let error = ChunkError::LineTooLong {
                max_line: self.limits.max_line,
            };
            let held = std::mem::take(&mut self.line);
            let broken = Event::Broken {
                error,
                held,
                bare_lf: false,
            };
            return (input.len(), broken);
        };
        // Common case: the whole line is in `input`, no copy.
        let event = if self.line.is_empty() {
            self.line_done(&input[..nl])
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(&input[..nl]);
            let event = self.line_done(&line);
            line.clear();
            self.line = line;
            event
        };
        (nl + 1, event)
    }

    /// A whole chunk-size or trailer line, without its LF.
    fn line_done(&mut self, line: &[u8]) -> Event<'static> {
        let (line, bare_lf) = match line.strip_suffix(b"\r") {
            Some(l) => (l, false),
            None => (line, true),
        };
        if self.state == State::Trailers {
            if line.is_empty() {
                self.state = State::Stopped;
                return Event::End { bare_lf };
            }
            let s = String::from_utf8_lossy(line);
            let field = s
                .split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()));
            return Event::Trailer { field, bare_lf };
        }
        match chunk_size(line) {
            Some((size, space)) => {
                self.state = match size {
                    0 => State::Trailers,
                    n => State::Data(n),
                };
                Event::Size {
                    size,
                    bare_lf,
                    space,
                }
            }
            None => {
                self.state = State::Stopped;
                let shown = String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
                Event::Broken {
                    error: ChunkError::BadSize { shown },
                    held: line.to_vec(),
                    bare_lf,
                }
            }
        }
    }

    /// The line end after chunk data (`cr`: its CR was taken with earlier input).
    fn data_end<'a>(&mut self, input: &'a [u8], cr: bool) -> (usize, Event<'a>) {
        let (used, bare_lf) = match (cr, input[0], input.get(1)) {
            (true, b'\n', _) => (1, false),
            (false, b'\r', Some(b'\n')) => (2, false),
            (false, b'\r', None) => {
                self.state = State::DataEnd { cr: true };
                return (1, Event::More);
            }
            (false, b'\n', _) => (1, true),
            _ => {
                self.state = State::Stopped;
                let held = if cr { b"\r".to_vec() } else { Vec::new() };
                let broken = Event::Broken {
                    error: ChunkError::NoLineEnd,
                    held,
                    bare_lf: false,
                };
                return (0, broken);
            }
        };
        self.state = State::Size;
        (used, Event::DataEnd { bare_lf })
    }
}

/// Parse a chunk-size line without its line end: `1*HEXDIG` then optional extensions
/// `*( BWS ";" ... )` (RFC 9112 §7.1.1). Returns the size and whether whitespace had to be
/// accepted that the grammar does not allow (before the digits, or after them with no
/// extension following). `None`: not a chunk size (no digits, other bytes after them, or
/// more than 2^64 − 1).
pub fn chunk_size(line: &[u8]) -> Option<(u64, bool)> {
    let ext = line.iter().position(|b| *b == b';');
    let size = &line[..ext.unwrap_or(line.len())];
    let space = |b: &u8| matches!(b, b' ' | b'\t');
    let lead = size.iter().take_while(|b| space(b)).count();
    let digits = &size[lead..];
    let n = digits.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let tail = &digits[n..];
    if n == 0 || !tail.iter().all(space) {
        return None;
    }
    let hex = std::str::from_utf8(&digits[..n]).ok()?;
    let value = u64::from_str_radix(hex.trim_start_matches('0'), 16)
        .ok()
        .or_else(|| hex.bytes().all(|b| b == b'0').then_some(0))?;
    let lenient = lead > 0 || (!tail.is_empty() && ext.is_none());
    Some((value, lenient))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits { max_line: 8 << 10 };

    /// Feed `parts` one after the other; the body, the events other than data and
    /// `More` (as text), and the bytes taken.
    fn decode(parts: &[&[u8]]) -> (Vec<u8>, Vec<String>, usize) {
        let mut d = Decoder::new(LIMITS);
        let (mut body, mut events, mut taken) = (Vec::new(), Vec::new(), 0);
        for p in parts {
            let mut p = *p;
            while !p.is_empty() {
                let (used, e) = d.step(p);
                taken += used;
                match e {
                    Event::Data(b) => body.extend_from_slice(b),
                    Event::More => {}
                    e => events.push(format!("{e:?}")),
                }
                if used == 0 {
                    break;
                }
                p = &p[used..];
            }
        }
        (body, events, taken)
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size(b"1a"), Some((26, false)));
        assert_eq!(chunk_size(b"1A;name=value"), Some((26, false)));
        assert_eq!(chunk_size(b"0"), Some((0, false)));
        assert_eq!(chunk_size(b"000"), Some((0, false)));
        // Whitespace before `;` is the grammar's BWS; elsewhere it is a leniency.
        assert_eq!(chunk_size(b"5 ;ext=1"), Some((5, false)));
        assert_eq!(chunk_size(b"8 "), Some((8, true)));
        assert_eq!(chunk_size(b" 8"), Some((8, true)));
        // Not sizes: no digits, a word after the digits, overflow.
        assert_eq!(chunk_size(b"zz"), None);
        assert_eq!(chunk_size(b""), None);
        assert_eq!(chunk_size(b"2 erfrferferf"), None);
        assert_eq!(chunk_size(b"ffffffffffffffff"), Some((u64::MAX, false)));
        assert_eq!(chunk_size(b"10000000000000000"), None);
        assert_eq!(chunk_size(b"00000000000000000001"), Some((1, false)));
        // A sign is no hex digit (hyper refuses it too).
        assert_eq!(chunk_size(b"+5"), None);
    }

    #[test]
    fn a_body_split_anywhere_decodes_the_same() {
        let raw: &[u8] = b"3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nExpires: never\r\n\r\n";
        let (whole, events, taken) = decode(&[raw]);
        assert_eq!(whole, b"abcde");
        assert_eq!(taken, raw.len());
        assert_eq!(events.last().unwrap(), "End { bare_lf: false }");
        assert!(events.iter().any(|e| e.contains("Expires")), "{events:?}");
        for cut in 1..raw.len() {
            let (body, evs, taken) = decode(&[&raw[..cut], &raw[cut..]]);
            assert_eq!(
                (body.as_slice(), &evs, taken),
                (&b"abcde"[..], &events, raw.len())
            );
        }
    }

    #[test]
    fn bare_lf_and_size_whitespace_are_reported() {
        let (body, events, _) = decode(&[b"5 \nhello\n0\n\n"]);
        assert_eq!(body, b"hello");
        assert_eq!(
            events,
            [
                "Size { size: 5, bare_lf: true, space: true }",
                "DataEnd { bare_lf: true }",
                "Size { size: 0, bare_lf: true, space: false }",
                "End { bare_lf: true }",
            ]
        );
    }

    #[test]
    fn a_crlf_after_data_may_be_split_between_inputs() {
        let (_, events, _) = decode(&[b"1\r\na\r", b"\n0\r\n\r\n"]);
        assert_eq!(events[1], "DataEnd { bare_lf: false }");
        let (_, events, taken) = decode(&[b"1\r\na\r", b"X"]);
        assert_eq!(
            events.last().unwrap(),
            "Broken { error: NoLineEnd, held: [13], bare_lf: false }"
        );
        assert_eq!(taken, 5, "the byte that broke it is not taken");
    }

    #[test]
    fn broken_framing_says_why_and_hands_back_what_it_held() {
        let (_, events, taken) = decode(&[b"zz\r\nabc"]);
        assert_eq!(taken, 4);
        assert!(
            events[0].starts_with("Broken { error: BadSize { shown: \"zz\" }, held: [122, 122]")
        );
        let (_, events, taken) = decode(&[b"5\r\nABCDE0\r\n"]);
        assert_eq!(taken, 8);
        assert!(events[1].starts_with("Broken { error: NoLineEnd, held: []"));
        let long = vec![b'1'; (8 << 10) + 1];
        let (_, events, taken) = decode(&[&long[..10], &long[10..]]);
        assert_eq!(taken, long.len());
        assert!(events[0].starts_with("Broken { error: LineTooLong"));
        assert_eq!(
            ChunkError::LineTooLong { max_line: 8 << 10 }.to_string(),
            "chunk-size or trailer line longer than 8 KiB"
        );
    }

    #[test]
    fn skipped_data_moves_to_the_line_end() {
        let mut d = Decoder::new(LIMITS);
        assert_eq!(d.step(b"5\r\nab").0, 3);
        assert_eq!(d.step(b"ab"), (2, Event::Data(b"ab")));
        assert_eq!(d.data_left(), Some(3));
        d.skip(3);
        assert_eq!(d.data_left(), None);
        assert_eq!(d.step(b"\r\n"), (2, Event::DataEnd { bare_lf: false }));
    }
}
