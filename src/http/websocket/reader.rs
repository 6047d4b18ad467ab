//! [`Reader`]: one direction's frames read incrementally (unmasked, fragments
//! reassembled, compressed messages inflated), each feed tagged with what brought it;
//! capture gaps inside an uncompressed payload skipped; what a stream cut short left.

use super::deflate::Inflater;
use super::frame::{frame_header, FrameError, FrameHeader, MAX_MESSAGE};

/// A frame as read: where it lay, its header, and the tags of the feeds that brought its
/// first byte and completed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameSeen<T = ()> {
    /// Offset of the frame in this direction's bytes.
    pub offset: u64,
    /// The header.
    pub header: FrameHeader,
    /// Tag of the feed that brought the frame's first byte.
    pub first: T,
    /// Tag of the feed that brought its last byte (or the last byte read of it).
    pub last: T,
    /// Bytes of the frame read (header and payload, capture gaps included): its wire
    /// size, unless the stream ended inside it.
    pub read: u64,
    /// Payload bytes lost in capture gaps.
    pub missing: u64,
}

impl<T> FrameSeen<T> {
    /// Bytes of the frame on the wire, as its header declares them.
    pub fn wire_len(&self) -> u64 {
        self.header.header_len as u64 + self.header.payload_len
    }
}

/// A message reassembled from its frames (or a control frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message<T = ()> {
    /// Opcode of its first frame (1 text, 2 binary; 8, 9, 10 for control frames).
    pub opcode: u8,
    /// The payload, inflated when it was compressed; bytes lost in capture gaps are not in
    /// it ([`Message::missing`]).
    pub payload: Vec<u8>,
    /// Whether it was compressed on the wire.
    pub compressed: bool,
    /// Offset of its first frame in this direction's bytes.
    pub offset: u64,
    /// Its frames, in order.
    pub frames: Vec<FrameSeen<T>>,
    /// Payload bytes lost in capture gaps.
    pub missing: u64,
}

/// What the end of a stream left unfinished ([`Reader::cut`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut<T = ()> {
    /// The message being read, with its frames so far (the last one cut short) and the
    /// payload that arrived (inflated as far as it goes when compressed); `None` when the
    /// cut frame was a control frame or its header was not whole.
    pub message: Option<Message<T>>,
    /// Offset where the frame cut short began (the stream's end when it ended between
    /// frames of a fragmented message).
    pub offset: u64,
    /// Bytes of that frame that arrived.
    pub bytes: u64,
}

/// Reads the frames of one direction incrementally and reassembles messages. `T` tags
/// each feed (the packet that brought the bytes): frames say which feeds brought them.
pub struct Reader<T = ()> {
    buf: Vec<u8>,
    /// Offset of `buf[0]` in this direction's bytes.
    base: u64,
    /// Tag of the feed that brought `buf[0]`, while `buf` holds bytes.
    buf_tag: Option<T>,
    /// Tag of the latest feed.
    last_tag: Option<T>,
    /// Capture gaps inside the frame at `buf[0]`, filled with zeros: `(index in buf, len)`.
    holes: Vec<(usize, usize)>,
    open: Option<Message<T>>,
    inflate: Option<Inflater>,
}

impl Reader<()> {
    /// A reader of untagged bytes (see [`Reader::tagged`]).
    pub fn new(deflate: Option<bool>) -> Self {
        Reader::tagged(deflate)
    }

    /// Feed untagged bytes (see [`Reader::feed_at`]).
    ///
    /// Errors: as [`Reader::feed_at`].
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Message>) -> Result<(), FrameError> {
        self.feed_at(bytes, (), out)
    }
}

impl<T: Copy> Reader<T> {
    /// A reader; `deflate`: permessage-deflate was negotiated, and whether this direction
    /// resets its window per message (`client_no_context_takeover` for the client's
    /// frames, `server_no_context_takeover` for the server's).
    pub fn tagged(deflate: Option<bool>) -> Self {
        Reader {
            buf: Vec::new(),
            base: 0,
            buf_tag: None,
            last_tag: None,
            holes: Vec::new(),
            open: None,
            inflate: deflate.map(Inflater::new),
        }
    }

    /// The same reader counting offsets from `offset` (the stream offset of the first
    /// byte it will be fed), so that errors name stream offsets.
    pub fn starting_at(mut self, offset: u64) -> Self {
        self.base = offset;
        self
    }

    /// Offset just after the last byte fed (or gap).
    pub fn offset(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Bytes fed that do not yet make a whole frame.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// Feed bytes brought by `tag`; every message (and control frame) completed by them is
    /// pushed onto `out`. After an error the direction is not WebSocket any more: the
    /// caller keeps the rest raw.
    ///
    /// Errors: a [`FrameError`] naming the offset of the frame or message at fault.
    pub fn feed_at(
        &mut self,
        bytes: &[u8],
        tag: T,
        out: &mut Vec<Message<T>>,
    ) -> Result<(), FrameError> {
        self.buf.extend_from_slice(bytes);
        self.run(tag, out)
    }

    /// `len` bytes were not captured (`tag`: where that became known). Inside an
    /// uncompressed frame's payload, that frame is read without them (they are counted
    /// in [`FrameSeen::missing`] and [`Message::missing`]).
    ///
    /// Errors: [`FrameError::Gap`] when the gap is anywhere else (the frames cannot be
    /// followed across it); after it the direction is not WebSocket any more.
    pub fn gap(&mut self, len: u64, tag: T, out: &mut Vec<Message<T>>) -> Result<(), FrameError> {
        let err = FrameError::Gap {
            offset: self.offset(),
            len,
        };
        let Ok(Some(h)) = frame_header(&self.buf, self.base) else {
            return Err(err);
        };
        let compressed = match h.opcode {
            0 => self.open.as_ref().is_some_and(|m| m.compressed),
            1 | 2 => h.rsv1 && self.inflate.is_some(),
            _ => false,
        };
        let frame_len = h.header_len as u64 + h.payload_len;
        if compressed
            || h.payload_len > MAX_MESSAGE as u64
            || self.offset() - self.base + len > frame_len
        {
            return Err(err);
        }
        self.holes.push((self.buf.len(), len as usize));
        self.buf.resize(self.buf.len() + len as usize, 0);
        self.run(tag, out)
    }

    /// The frames whole in `buf`, read in order; `buf` keeps the partial frame after them.
    fn run(&mut self, tag: T, out: &mut Vec<Message<T>>) -> Result<(), FrameError> {
        self.last_tag = Some(tag);
        let mut at = 0usize;
        let result = loop {
            match self.next_frame(at, tag) {
                Ok(Some((frame, payload))) => {
                    at += frame.read as usize;
                    if let Err(e) = self.frame(frame, payload, out) {
                        break Err(e);
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        if at > 0 {
            self.holes.clear();
            self.buf_tag = None;
            self.buf.drain(..at);
            self.base += at as u64;
        }
        if !self.buf.is_empty() && self.buf_tag.is_none() {
            self.buf_tag = Some(tag);
        }
        result
    }

    /// The frame at `buf[at..]` if it is whole: its header and tags, and its payload
    /// unmasked, without the bytes of capture gaps.
    fn next_frame(&self, at: usize, tag: T) -> Result<Option<Whole<T>>, FrameError> {
        let offset = self.base + at as u64;
        let Some(h) = frame_header(&self.buf[at..], offset)? else {
            return Ok(None);
        };
        if h.payload_len > MAX_MESSAGE as u64 {
            return Err(FrameError::TooLarge {
                offset,
                bytes: h.payload_len,
            });
        }
        let end = at + h.header_len + h.payload_len as usize;
        if end > self.buf.len() {
            return Ok(None);
        }
        let mut payload = self.buf[at + h.header_len..end].to_vec();
        unmask(&mut payload, h.mask);
        let mut missing = 0;
        if at == 0 {
            // Only the first frame can hold holes; cut them out, last first.
            for &(start, len) in self.holes.iter().rev() {
                let s = start - h.header_len;
                payload.drain(s..s + len);
                missing += len as u64;
            }
        }
        let first = if at == 0 {
            self.buf_tag.unwrap_or(tag)
        } else {
            tag
        };
        let frame = FrameSeen {
            offset,
            read: (end - at) as u64,
            header: h,
            first,
            last: tag,
            missing,
        };
        Ok(Some((frame, payload)))
    }

    fn frame(
        &mut self,
        f: FrameSeen<T>,
        payload: Vec<u8>,
        out: &mut Vec<Message<T>>,
    ) -> Result<(), FrameError> {
        match f.header.opcode {
            8..=10 => {
                out.push(Message {
                    opcode: f.header.opcode,
                    payload,
                    compressed: false,
                    offset: f.offset,
                    missing: f.missing,
                    frames: vec![f],
                });
                Ok(())
            }
            1 | 2 => {
                if self.open.is_some() {
                    return Err(FrameError::Fragmentation {
                        offset: f.offset,
                        what: "a new message began before the open one ended",
                    });
                }
                self.open = Some(Message {
                    opcode: f.header.opcode,
                    payload: Vec::new(),
                    compressed: f.header.rsv1 && self.inflate.is_some(),
                    offset: f.offset,
                    frames: Vec::new(),
                    missing: 0,
                });
                self.append(f, payload, out)
            }
            0 => {
                if self.open.is_none() {
                    return Err(FrameError::Fragmentation {
                        offset: f.offset,
                        what: "a continuation frame with no message open",
                    });
                }
                self.append(f, payload, out)
            }
            opcode => Err(FrameError::ReservedOpcode {
                offset: f.offset,
                opcode,
            }),
        }
    }

    fn append(
        &mut self,
        f: FrameSeen<T>,
        payload: Vec<u8>,
        out: &mut Vec<Message<T>>,
    ) -> Result<(), FrameError> {
        let m = self.open.as_mut().expect("a message is open");
        if m.payload.len() + payload.len() > MAX_MESSAGE {
            return Err(FrameError::TooLarge {
                offset: m.offset,
                bytes: (m.payload.len() + payload.len()) as u64,
            });
        }
        m.payload.extend_from_slice(&payload);
        m.missing += f.missing;
        let fin = f.header.fin;
        m.frames.push(f);
        if !fin {
            return Ok(());
        }
        let mut m = self.open.take().expect("a message is open");
        if m.compressed {
            let inflater = self.inflate.as_mut().expect("deflate negotiated");
            m.payload = inflater.message(&m.payload, m.offset)?;
        }
        out.push(m);
        Ok(())
    }

    /// The end of the stream: what was read of the message or frame it cut short, `None`
    /// when it ended between messages. The reader is empty afterwards.
    pub fn cut(&mut self) -> Option<Cut<T>> {
        let bytes = self.buf.len() as u64;
        let mut message = self.open.take();
        if bytes == 0 && message.is_none() {
            return None;
        }
        let offset = self.base;
        if let Some((frame, payload)) = self.partial_frame() {
            let m = match (frame.header.opcode, message.as_mut()) {
                (0, Some(m)) => Some(m),
                (1 | 2, None) => Some(message.insert(Message {
                    opcode: frame.header.opcode,
                    payload: Vec::new(),
                    compressed: frame.header.rsv1 && self.inflate.is_some(),
                    offset,
                    frames: Vec::new(),
                    missing: 0,
                })),
                _ => None,
            };
            if let Some(m) = m.filter(|m| m.payload.len() + payload.len() <= MAX_MESSAGE) {
                m.payload.extend_from_slice(&payload);
                m.missing += frame.missing;
                m.frames.push(frame);
            }
        }
        if let (Some(m), Some(i)) = (message.as_mut().filter(|m| m.compressed), &mut self.inflate) {
            m.payload = i.partial(&m.payload, m.offset);
        }
        self.buf.clear();
        self.holes.clear();
        self.buf_tag = None;
        Some(Cut {
            message,
            offset,
            bytes,
        })
    }

    /// The frame `buf` begins, cut short: its header (when whole) and the payload that
    /// arrived, unmasked, without the bytes of capture gaps.
    fn partial_frame(&self) -> Option<Whole<T>> {
        let h = frame_header(&self.buf, self.base).ok()??;
        let mut payload = self.buf[h.header_len..].to_vec();
        unmask(&mut payload, h.mask);
        let mut missing = 0;
        for &(start, len) in self.holes.iter().rev() {
            let s = start - h.header_len;
            payload.drain(s..s + len);
            missing += len as u64;
        }
        let frame = FrameSeen {
            offset: self.base,
            header: h,
            first: self.buf_tag?,
            last: self.last_tag?,
            read: self.buf.len() as u64,
            missing,
        };
        Some((frame, payload))
    }
}

/// A frame as read and its payload (unmasked, without capture gaps).
type Whole<T> = (FrameSeen<T>, Vec<u8>);

/// Unmask a payload in place (RFC 6455 §5.3): byte `i` XOR key byte `i % 4`.
fn unmask(payload: &mut [u8], mask: Option<[u8; 4]>) {
    if let Some(k) = mask {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= k[i % 4];
        }
    }
}
