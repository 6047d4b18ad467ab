//! The lines of a rollout, read with a bound: a line longer than the bound is consumed
//! without being held (its first KiB is kept to show), so a damaged or hostile file never
//! makes the reader hold more than one bounded line.

use std::io::BufRead;

/// Bytes of an overlong line kept to show.
const KEPT: usize = 1024;

/// One line of the input.
pub(super) struct Line {
    /// Line number, from 1.
    pub no: u64,
    /// Byte offset of the line's start.
    pub offset: u64,
    /// The line without its newline (for an overlong line: its first KiB).
    pub bytes: Vec<u8>,
    /// True when the line is the last and has no newline (a write cut short).
    pub truncated: bool,
    /// The line's length when it was longer than the bound (then `bytes` is its head).
    pub overlong: Option<u64>,
}

/// Reads lines of at most `max` bytes from `input`; blank lines are skipped.
pub(super) struct LineReader<R> {
    input: R,
    max: usize,
    no: u64,
    offset: u64,
}

impl<R: BufRead> LineReader<R> {
    /// Lines of `input`, each at most `max` bytes.
    pub(super) fn new(input: R, max: usize) -> Self {
        LineReader {
            input,
            max,
            no: 0,
            offset: 0,
        }
    }

    /// The input being read.
    pub(super) fn get_ref(&self) -> &R {
        &self.input
    }

    /// The next line that is not blank; `None` at the end.
    ///
    /// Errors: the input could not be read.
    pub(super) fn next_line(&mut self) -> Option<std::io::Result<Line>> {
        loop {
            let line = match self.read_one() {
                Ok(Some(l)) => l,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            if line.overlong.is_some() || !line.bytes.iter().all(u8::is_ascii_whitespace) {
                return Some(Ok(line));
            }
        }
    }

    /// One line, blank or not.
    fn read_one(&mut self) -> std::io::Result<Option<Line>> {
        let mut bytes = Vec::new();
        let mut len: u64 = 0;
        let mut newline = false;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let content = &buf[..take - usize::from(done)];
            let room = (self.max + 1).saturating_sub(bytes.len());
            bytes.extend_from_slice(&content[..content.len().min(room)]);
            len += content.len() as u64;
            self.input.consume(take);
            if done {
                newline = true;
                break;
            }
        }
        if len == 0 && !newline {
            return Ok(None);
        }
        self.no += 1;
        let offset = self.offset;
        self.offset += len + u64::from(newline);
        if bytes.last() == Some(&b'\r') && len as usize == bytes.len() {
            bytes.pop();
        }
        let overlong = (len > self.max as u64).then(|| {
            bytes.truncate(KEPT);
            len
        });
        Ok(Some(Line {
            no: self.no,
            offset,
            bytes,
            truncated: !newline,
            overlong,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_and_the_last_line_without_newline_is_marked() {
        let text = format!("a\n\n{}\nlast", "x".repeat(5000));
        let mut r = LineReader::new(text.as_bytes(), 4096);
        let a = r.next_line().unwrap().unwrap();
        assert_eq!(
            (a.no, a.offset, &a.bytes[..], a.truncated),
            (1, 0, &b"a"[..], false)
        );
        let long = r.next_line().unwrap().unwrap();
        assert_eq!((long.no, long.offset, long.overlong), (3, 3, Some(5000)));
        assert_eq!(long.bytes.len(), KEPT);
        let last = r.next_line().unwrap().unwrap();
        assert_eq!((last.no, last.offset, last.truncated), (4, 5004, true));
        assert!(r.next_line().is_none());
    }
}
