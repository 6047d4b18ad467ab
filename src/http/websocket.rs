//! WebSocket frames read from the bytes of one direction of a connection (RFC 6455), for
//! readers that see the wire passively (packet captures): an incremental frame parser,
//! unmasking, message reassembly from fragments, and permessage-deflate (RFC 7692).
//!
//! Rules, in the RFC's order:
//! - §5.2 the frame header: FIN, RSV1–3, a 4-bit opcode, MASK, a 7-bit length, then 16 or
//!   64 bits of extended length (126, 127), then a 4-byte masking key when MASK is set;
//!   a 64-bit length with its top bit set is a framing error;
//! - §5.3 a masked payload is unmasked with the key, byte `i` with key byte `i % 4`;
//! - §5.4 a message is a first frame (opcode 1 text or 2 binary) and continuation frames
//!   (opcode 0) up to one with FIN; control frames (8 close, 9 ping, 10 pong) may come
//!   between fragments, are never fragmented and carry at most 125 bytes;
//! - §5.5.1 a close frame's payload starts with a 2-byte status code, then a UTF-8 reason;
//! - RFC 7692 §7.2.2: with permessage-deflate, RSV1 on a message's first frame marks it
//!   compressed; its payload, with `00 00 ff ff` appended, inflates as raw DEFLATE, with the
//!   sliding window kept across messages of one direction unless `no_context_takeover` was
//!   negotiated for that direction.
//!
//! Every payload is bounded ([`MAX_MESSAGE`]): a larger frame or message is an error that
//! names its size, never an allocation of that size.

use flate2::{Decompress, FlushDecompress, Status};

/// Largest message, after inflating, that is reassembled (bytes); beyond it the message is
/// an error (a decompression bomb or a stream that is not WebSocket stops here).
pub const MAX_MESSAGE: usize = 64 << 20;

/// A frame header and where its payload lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// FIN: the last frame of its message.
    pub fin: bool,
    /// RSV1 (permessage-deflate's "compressed" bit on a message's first frame).
    pub rsv1: bool,
    /// Opcode (0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong).
    pub opcode: u8,
    /// The masking key, when MASK is set (client frames).
    pub mask: Option<[u8; 4]>,
    /// Bytes of the header.
    pub header_len: usize,
    /// Bytes of the payload.
    pub payload_len: u64,
}

/// Why bytes are not a WebSocket frame stream.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A 64-bit length with its most significant bit set (RFC 6455 §5.2).
    #[error("frame at byte {offset} has a 64-bit length with its top bit set")]
    BadLength {
        /// Offset of the frame in this direction's bytes.
        offset: u64,
    },
    /// A frame or message larger than [`MAX_MESSAGE`].
    #[error("frame at byte {offset}: a message of {bytes} bytes is larger than {MAX_MESSAGE} bytes, the most agentwire reassembles")]
    TooLarge {
        /// Offset of the frame.
        offset: u64,
        /// Its size.
        bytes: u64,
    },
    /// An opcode RFC 6455 reserves.
    #[error("frame at byte {offset} has the reserved opcode {opcode}")]
    ReservedOpcode {
        /// Offset of the frame.
        offset: u64,
        /// The opcode.
        opcode: u8,
    },
    /// A continuation frame with no message open, or a new message before the open one
    /// ended.
    #[error("frame at byte {offset}: {what}")]
    Fragmentation {
        /// Offset of the frame.
        offset: u64,
        /// What was out of order.
        what: &'static str,
    },
    /// A compressed message that does not inflate.
    #[error("message at byte {offset} does not inflate (permessage-deflate): {message}")]
    Inflate {
        /// Offset of the message's first frame.
        offset: u64,
        /// zlib's message.
        message: String,
    },
}

/// Read a frame header at the start of `b`; `None` when `b` holds less than a whole
/// header. Errors: [`FrameError::BadLength`].
pub fn frame_header(b: &[u8], offset: u64) -> Result<Option<FrameHeader>, FrameError> {
    if b.len() < 2 {
        return Ok(None);
    }
    let (fin, rsv1, opcode) = (b[0] & 0x80 != 0, b[0] & 0x40 != 0, b[0] & 0x0f);
    let masked = b[1] & 0x80 != 0;
    let (len, mut at) = match b[1] & 0x7f {
        126 => match b.get(2..4) {
            Some(l) => (u64::from(u16::from_be_bytes([l[0], l[1]])), 4),
            None => return Ok(None),
        },
        127 => match b.get(2..10) {
            Some(l) => {
                let n = u64::from_be_bytes(l.try_into().expect("8 bytes"));
                if n >> 63 != 0 {
                    return Err(FrameError::BadLength { offset });
                }
                (n, 10)
            }
            None => return Ok(None),
        },
        n => (u64::from(n), 2),
    };
    let mask = if masked {
        let Some(k) = b.get(at..at + 4) else {
            return Ok(None);
        };
        at += 4;
        Some([k[0], k[1], k[2], k[3]])
    } else {
        None
    };
    Ok(Some(FrameHeader {
        fin,
        rsv1,
        opcode,
        mask,
        header_len: at,
        payload_len: len,
    }))
}

/// A whole frame as read: its header, payload (unmasked) and where it started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: FrameHeader,
    /// The payload, unmasked (still compressed for a compressed message's frames).
    pub payload: Vec<u8>,
    /// Offset of the frame in this direction's bytes.
    pub offset: u64,
}

impl Frame {
    /// Bytes of the frame on the wire.
    pub fn wire_len(&self) -> u64 {
        self.header.header_len as u64 + self.header.payload_len
    }
}

/// A message reassembled from its frames.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Opcode of its first frame (1 text, 2 binary; 8, 9, 10 for control frames).
    pub opcode: u8,
    /// The payload, inflated when it was compressed.
    pub payload: Vec<u8>,
    /// Whether it was compressed on the wire.
    pub compressed: bool,
    /// Offset of its first frame in this direction's bytes.
    pub offset: u64,
    /// Its frames' headers, in order (`(offset, header)`).
    pub frames: Vec<(u64, FrameHeader)>,
}

/// Reads the frames of one direction incrementally and reassembles messages.
pub struct Reader {
    buf: Vec<u8>,
    /// Offset of `buf[0]` in this direction's bytes.
    base: u64,
    open: Option<Message>,
    inflate: Option<Inflater>,
}

/// permessage-deflate's inflater for one direction.
struct Inflater {
    z: Decompress,
    /// `no_context_takeover`: a fresh window for every message.
    reset: bool,
}

impl Reader {
    /// A reader; `deflate`: permessage-deflate was negotiated, and whether this direction
    /// resets its window per message (`client_no_context_takeover` for the client's
    /// frames, `server_no_context_takeover` for the server's).
    pub fn new(deflate: Option<bool>) -> Reader {
        Reader {
            buf: Vec::new(),
            base: 0,
            open: None,
            inflate: deflate.map(|reset| Inflater {
                z: Decompress::new(false),
                reset,
            }),
        }
    }

    /// Feed bytes; every message (and control frame) completed by them is pushed onto
    /// `out`. After an error the direction is not WebSocket any more: the caller keeps
    /// the rest raw.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Message>) -> Result<(), FrameError> {
        self.buf.extend_from_slice(bytes);
        let mut at = 0usize;
        let result = loop {
            let offset = self.base + at as u64;
            let h = match frame_header(&self.buf[at..], offset) {
                Ok(Some(h)) => h,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if h.payload_len > MAX_MESSAGE as u64 {
                break Err(FrameError::TooLarge {
                    offset,
                    bytes: h.payload_len,
                });
            }
            let end = at + h.header_len + h.payload_len as usize;
            if end > self.buf.len() {
                break Ok(());
            }
            let mut payload = self.buf[at + h.header_len..end].to_vec();
            if let Some(k) = h.mask {
                for (i, b) in payload.iter_mut().enumerate() {
                    *b ^= k[i % 4];
                }
            }
            at = end;
            let frame = Frame {
                header: h,
                payload,
                offset,
            };
            if let Err(e) = self.frame(frame, out) {
                break Err(e);
            }
        };
        self.buf.drain(..at);
        self.base += at as u64;
        result
    }

    /// Bytes fed that do not yet make a whole frame.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn frame(&mut self, f: Frame, out: &mut Vec<Message>) -> Result<(), FrameError> {
        let h = f.header.clone();
        match h.opcode {
            8..=10 => {
                out.push(Message {
                    opcode: h.opcode,
                    payload: f.payload,
                    compressed: false,
                    offset: f.offset,
                    frames: vec![(f.offset, h)],
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
                    opcode: h.opcode,
                    payload: Vec::new(),
                    compressed: h.rsv1 && self.inflate.is_some(),
                    offset: f.offset,
                    frames: Vec::new(),
                });
                self.append(f, out)
            }
            0 => {
                if self.open.is_none() {
                    return Err(FrameError::Fragmentation {
                        offset: f.offset,
                        what: "a continuation frame with no message open",
                    });
                }
                self.append(f, out)
            }
            opcode => Err(FrameError::ReservedOpcode {
                offset: f.offset,
                opcode,
            }),
        }
    }

    fn append(&mut self, f: Frame, out: &mut Vec<Message>) -> Result<(), FrameError> {
        let m = self.open.as_mut().expect("a message is open");
        if m.payload.len() + f.payload.len() > MAX_MESSAGE {
            return Err(FrameError::TooLarge {
                offset: m.offset,
                bytes: (m.payload.len() + f.payload.len()) as u64,
            });
        }
        m.payload.extend_from_slice(&f.payload);
        m.frames.push((f.offset, f.header.clone()));
        if !f.header.fin {
            return Ok(());
        }
        let mut m = self.open.take().expect("a message is open");
        if m.compressed {
            let inflater = self.inflate.as_mut().expect("deflate negotiated");
            m.payload = inflate(inflater, &m.payload, m.offset)?;
        }
        out.push(m);
        Ok(())
    }
}

/// Inflate one compressed message (RFC 7692 §7.2.2: append `00 00 ff ff`).
fn inflate(i: &mut Inflater, payload: &[u8], offset: u64) -> Result<Vec<u8>, FrameError> {
    if i.reset {
        i.z.reset(false);
    }
    let mut input = payload.to_vec();
    input.extend_from_slice(&[0, 0, 0xff, 0xff]);
    let mut out: Vec<u8> = Vec::with_capacity(payload.len() * 4 + 64);
    let start_in = i.z.total_in();
    loop {
        let consumed = (i.z.total_in() - start_in) as usize;
        if out.len() == out.capacity() {
            if out.len() >= MAX_MESSAGE {
                return Err(FrameError::TooLarge {
                    offset,
                    bytes: out.len() as u64,
                });
            }
            out.reserve(out.len().max(4096));
        }
        let status =
            i.z.decompress_vec(&input[consumed..], &mut out, FlushDecompress::Sync)
                .map_err(|e| FrameError::Inflate {
                    offset,
                    message: e.to_string(),
                })?;
        let consumed = (i.z.total_in() - start_in) as usize;
        let done = consumed >= input.len() && out.len() < out.capacity();
        if done || status == Status::StreamEnd {
            break;
        }
        if status == Status::BufError && consumed >= input.len() {
            break;
        }
    }
    Ok(out)
}

/// The close code and reason of a close frame's payload (§5.5.1).
pub fn close_payload(p: &[u8]) -> (Option<u16>, String) {
    match p {
        [a, b, rest @ ..] => (
            Some(u16::from_be_bytes([*a, *b])),
            String::from_utf8_lossy(rest).into_owned(),
        ),
        _ => (None, String::new()),
    }
}

/// The permessage-deflate parameters a `Sec-WebSocket-Extensions` response value
/// accepted: `None` when it did not accept permessage-deflate, else whether the client's
/// and the server's directions reset their windows per message.
pub fn deflate_accepted(extensions: &str) -> Option<(bool, bool)> {
    extensions.split(',').find_map(|ext| {
        let mut params = ext.split(';').map(str::trim);
        if !params.next()?.eq_ignore_ascii_case("permessage-deflate") {
            return None;
        }
        let mut client_reset = false;
        let mut server_reset = false;
        for p in params {
            let name = p.split('=').next().unwrap_or("").trim();
            if name.eq_ignore_ascii_case("client_no_context_takeover") {
                client_reset = true;
            } else if name.eq_ignore_ascii_case("server_no_context_takeover") {
                server_reset = true;
            }
        }
        Some((client_reset, server_reset))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compress, Compression, FlushCompress};

    /// A frame as a client sends it (masked), for tests.
    fn client_frame(fin: bool, rsv1: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let key = [0x37, 0xfa, 0x21, 0x3d];
        let mut f = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n < 65536 => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&key);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
        f
    }

    /// RFC 6455 §5.7's examples: an unmasked "Hello", a masked "Hello", and a
    /// fragmented unmasked text message.
    #[test]
    fn the_rfc_examples_read_as_the_rfc_says() {
        let mut r = Reader::new(None);
        let mut out = Vec::new();
        r.feed(&[0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], &mut out)
            .unwrap();
        r.feed(
            &[
                0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
            ],
            &mut out,
        )
        .unwrap();
        r.feed(&[0x01, 0x03, 0x48, 0x65, 0x6c], &mut out).unwrap();
        // A ping between the fragments is delivered on its own.
        r.feed(&[0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f], &mut out)
            .unwrap();
        r.feed(&[0x80, 0x02, 0x6c, 0x6f], &mut out).unwrap();
        let got: Vec<(u8, &[u8])> = out.iter().map(|m| (m.opcode, &m.payload[..])).collect();
        assert_eq!(
            got,
            [
                (1, &b"Hello"[..]),
                (1, &b"Hello"[..]),
                (9, &b"Hello"[..]),
                (1, &b"Hello"[..])
            ]
        );
        assert_eq!(out[3].frames.len(), 2);
        assert_eq!(out[1].offset, 7);
    }

    #[test]
    fn any_split_of_the_bytes_gives_the_same_messages() {
        let mut bytes = client_frame(true, false, 1, &vec![b'x'; 300]);
        bytes.extend(client_frame(
            true,
            false,
            1,
            b"{\"type\":\"response.create\"}",
        ));
        bytes.extend(client_frame(
            true,
            false,
            8,
            &[0x03, 0xe8, b'b', b'y', b'e'],
        ));
        let whole = {
            let mut r = Reader::new(None);
            let mut out = Vec::new();
            r.feed(&bytes, &mut out).unwrap();
            out
        };
        assert_eq!(whole.len(), 3);
        assert_eq!(close_payload(&whole[2].payload), (Some(1000), "bye".into()));
        for cut in 0..bytes.len() {
            let mut r = Reader::new(None);
            let mut out = Vec::new();
            r.feed(&bytes[..cut], &mut out).unwrap();
            r.feed(&bytes[cut..], &mut out).unwrap();
            assert_eq!(out, whole, "cut at {cut}");
        }
    }

    /// Two compressed messages sharing one sliding window (context takeover): the second
    /// only inflates with the window the first left, as Codex's frames did.
    #[test]
    fn deflated_messages_inflate_with_the_window_kept_across_messages() {
        let mut z = Compress::new(Compression::default(), false);
        let mut deflate = |text: &[u8]| {
            let mut out = Vec::with_capacity(text.len() + 64);
            z.compress_vec(text, &mut out, FlushCompress::Sync).unwrap();
            assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
            out.truncate(out.len() - 4);
            out
        };
        let a = br#"{"type":"response.create","model":"gpt-6.2-sol","input":[]}"#;
        let b = br#"{"type":"response.create","model":"gpt-6.2-sol","input":[{"x":1}]}"#;
        let big = "{\"input\":\"".to_string() + &"all work and no play ".repeat(10_000) + "\"}";
        let (ca, cb, cbig) = (deflate(a), deflate(b), deflate(big.as_bytes()));
        assert!(
            cbig.len() < big.len() / 50,
            "compresses well: {}",
            cbig.len()
        );
        let mut bytes = client_frame(true, true, 1, &ca);
        bytes.extend(client_frame(true, true, 1, &cb));
        // The large one in two fragments: RSV1 on the first only.
        let half = cbig.len() / 2;
        bytes.extend(client_frame(false, true, 1, &cbig[..half]));
        bytes.extend(client_frame(true, false, 0, &cbig[half..]));
        let mut r = Reader::new(Some(false));
        let mut out = Vec::new();
        r.feed(&bytes, &mut out).unwrap();
        assert_eq!(out[0].payload, a);
        assert_eq!(out[1].payload, b);
        assert!(out[1].compressed);
        assert_eq!(out[2].payload, big.as_bytes());
        assert_eq!(out[2].frames.len(), 2);
        // A fresh window for the second message fails, as the RFC says it must.
        let mut r = Reader::new(Some(true));
        let mut out = Vec::new();
        assert!(r.feed(&bytes, &mut out).is_err() || out[1].payload != b);
        assert_eq!(
            deflate_accepted("permessage-deflate; client_no_context_takeover"),
            Some((true, false))
        );
        assert_eq!(deflate_accepted("x-webkit-deflate-frame"), None);
    }

    #[test]
    fn bad_frames_are_errors_that_name_their_offset() {
        let mut r = Reader::new(None);
        let mut out = Vec::new();
        let mut huge = vec![0x81, 127];
        huge.extend_from_slice(&(1u64 << 63).to_be_bytes());
        assert_eq!(
            r.feed(&huge, &mut out),
            Err(FrameError::BadLength { offset: 0 })
        );
        let mut r = Reader::new(None);
        let mut big = vec![0x81, 127];
        big.extend_from_slice(&(1u64 << 40).to_be_bytes());
        assert!(matches!(
            r.feed(&big, &mut out),
            Err(FrameError::TooLarge { offset: 0, .. })
        ));
        let mut r = Reader::new(None);
        assert!(matches!(
            r.feed(&[0x80, 0x00], &mut out),
            Err(FrameError::Fragmentation { .. })
        ));
        let mut r = Reader::new(None);
        assert!(matches!(
            r.feed(&[0x83, 0x00], &mut out),
            Err(FrameError::ReservedOpcode { opcode: 3, .. })
        ));
    }
}
