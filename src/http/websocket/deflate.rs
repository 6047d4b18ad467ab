//! permessage-deflate (RFC 7692) for a passive reader: what a `Sec-WebSocket-Extensions`
//! response accepted, and one direction's inflater, its sliding window kept across
//! messages unless that direction negotiated `no_context_takeover` (§7.1.1).
//!
//! A compressed message's payload, with `00 00 ff ff` appended (the end of the sync flush
//! the sender stripped, §7.2.2), inflates as raw DEFLATE. The inflated size is bounded by
//! [`MAX_MESSAGE`]: a decompression bomb stops there and never allocates much beyond it.

use flate2::{Decompress, FlushDecompress, Status};

use super::frame::{FrameError, MAX_MESSAGE};

/// permessage-deflate's inflater for one direction.
pub(super) struct Inflater {
    z: Decompress,
    /// `no_context_takeover`: a fresh window for every message.
    reset: bool,
}

impl Inflater {
    /// An inflater; `reset`: this direction starts every message with an empty window.
    pub(super) fn new(reset: bool) -> Self {
        Inflater {
            z: Decompress::new(false),
            reset,
        }
    }

    /// Inflate one whole compressed message (`offset`: of its first frame, for errors).
    ///
    /// Errors: [`FrameError::Inflate`] for data that is not DEFLATE (or needs a window
    /// this direction never had), [`FrameError::TooLarge`] past [`MAX_MESSAGE`].
    pub(super) fn message(&mut self, payload: &[u8], offset: u64) -> Result<Vec<u8>, FrameError> {
        let mut input = payload.to_vec();
        input.extend_from_slice(&[0, 0, 0xff, 0xff]);
        let mut out = Vec::new();
        self.inflate(&input, &mut out, offset)?;
        Ok(out)
    }

    /// Inflate the start of a message whose end never arrived: whatever inflates before
    /// the data stops (or turns out not to be DEFLATE) is kept.
    pub(super) fn partial(&mut self, payload: &[u8], offset: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let _ = self.inflate(payload, &mut out, offset);
        out
    }

    /// Inflate `input` into `out`, growing it in steps, never past `MAX_MESSAGE + 1`
    /// bytes of capacity.
    fn inflate(&mut self, input: &[u8], out: &mut Vec<u8>, offset: u64) -> Result<(), FrameError> {
        if self.reset {
            self.z.reset(false);
        }
        let too_large = |bytes: usize| FrameError::TooLarge {
            offset,
            bytes: bytes as u64,
        };
        out.reserve((input.len() * 4 + 64).min(MAX_MESSAGE + 1));
        let start_in = self.z.total_in();
        loop {
            if out.len() > MAX_MESSAGE {
                return Err(too_large(out.len()));
            }
            if out.len() == out.capacity() {
                out.reserve(out.len().max(4096).min(MAX_MESSAGE + 1 - out.len()));
            }
            let (consumed, had) = ((self.z.total_in() - start_in) as usize, out.len());
            let status = self
                .z
                .decompress_vec(&input[consumed..], out, FlushDecompress::Sync)
                .map_err(|e| FrameError::Inflate {
                    offset,
                    message: e.to_string(),
                })?;
            let now = (self.z.total_in() - start_in) as usize;
            let drained = now >= input.len() && out.len() < out.capacity();
            // No progress with room left: the input ends inside a block (a message cut
            // short); what inflated so far is all there is.
            let stuck = now == consumed && out.len() == had && out.len() < out.capacity();
            if drained || stuck || status == Status::StreamEnd {
                break;
            }
        }
        if out.len() > MAX_MESSAGE {
            return Err(too_large(out.len()));
        }
        Ok(())
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
