//! The frame layer (RFC 6455 §5.2, §5.5.1): a frame header and where its payload lies,
//! the errors of a frame stream, the bound on messages, and a close frame's payload.

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
    /// Bytes missing from the capture where they cannot be skipped: in a frame header,
    /// across a frame's end, or in a compressed message.
    #[error("{len} bytes missing from the capture at byte {offset}, where the frames cannot be followed across them")]
    Gap {
        /// Offset of the first missing byte.
        offset: u64,
        /// Bytes missing.
        len: u64,
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

impl FrameError {
    /// The offset it names: of the frame, message or missing bytes at fault.
    pub fn offset(&self) -> u64 {
        match self {
            FrameError::BadLength { offset }
            | FrameError::TooLarge { offset, .. }
            | FrameError::ReservedOpcode { offset, .. }
            | FrameError::Fragmentation { offset, .. }
            | FrameError::Gap { offset, .. }
            | FrameError::Inflate { offset, .. } => *offset,
        }
    }
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
