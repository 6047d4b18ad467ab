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
//!
//! What a capture adds: each feed carries a tag (the packet that brought the bytes), and
//! every frame says which feed brought its first byte and which completed it; a capture
//! gap inside an uncompressed frame's payload is skipped (the message keeps its other
//! bytes and counts the missing ones), any other gap is an error; and the end of the
//! stream hands over what was read of a message cut short ([`Reader::cut`]).

mod deflate;
mod frame;
mod reader;

pub use deflate::deflate_accepted;
pub use frame::{close_payload, frame_header, FrameError, FrameHeader, MAX_MESSAGE};
pub use reader::{Cut, FrameSeen, Message, Reader};

#[cfg(test)]
mod tests;
