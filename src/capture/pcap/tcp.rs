//! TCP reassembly of one direction of a connection into an ordered byte stream.
//!
//! Policy (the same for every flow):
//! - Sequence numbers are unwrapped to 64-bit stream offsets relative to the first byte
//!   after the SYN, so wraparound past 2^32 is invisible to the layers above.
//! - **A direction seen without its SYN** has no fixed start: the first segment captured
//!   need not be the lowest (a capture that starts mid-connection may catch the second
//!   segment before the first). Its segments are held in a window of [`START_WINDOW`]
//!   bytes ([`START_SEGMENTS`] segments) and the stream starts at the lowest sequence
//!   number held once the other side acknowledges everything held, the window is full,
//!   a SYN arrives (its ISN fixes the start), or the stream is flushed.
//! - **Overlaps: first copy wins.** Bytes already delivered are never changed; a
//!   retransmission that differs from what was delivered (within the last [`RECENT`]
//!   bytes) is counted in [`StreamStats::conflicts`] (bytes) and dropped. Out-of-order segments wait in a
//!   buffer keyed by offset; of two buffered segments starting at the same offset the
//!   longer one is kept.
//! - **Gaps.** A segment whose IP header announces more bytes than were captured
//!   (snaplen truncation) delivers its captured bytes then a gap of the rest. When the
//!   out-of-order buffer exceeds [`MAX_BUFFERED`] bytes, or the stream is flushed (FIN,
//!   RST, end of capture, idle eviction), the missing range before the first buffered
//!   segment is delivered as a gap and delivery continues after it.
//! - Memory per direction is bounded by [`MAX_BUFFERED`] plus one segment.
//! - Data before the stream's start offset (a retransmission of bytes from before the
//!   first segment seen) is dropped.

use std::collections::BTreeMap;

/// Largest number of out-of-order bytes buffered per direction before the hole in front
/// of them is declared a gap, in bytes.
pub const MAX_BUFFERED: usize = 8 << 20;

/// Delivered bytes kept per direction to detect retransmissions that differ from the
/// first copy, in bytes.
pub const RECENT: usize = 16 << 10;

/// Most payload bytes held before a direction seen without its SYN starts, in bytes.
pub const START_WINDOW: usize = 256 << 10;

/// Most segments held before a direction seen without its SYN starts.
pub const START_SEGMENTS: usize = 256;

/// The packet a chunk came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Capture time, nanoseconds since the Unix epoch.
    pub ts: i64,
    /// Frame number.
    pub frame: u64,
    /// The acknowledgment number the segment carried (raw), when its ACK flag was set.
    pub ack: Option<u32>,
}

/// What reassembly hands to the layer above, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk<'a> {
    /// Contiguous bytes starting at stream offset `off`, from the packet `at`.
    Data {
        /// The bytes.
        bytes: &'a [u8],
        /// Stream offset of the first byte.
        off: u64,
        /// The packet that carried them.
        at: Meta,
    },
    /// `len` bytes from stream offset `off` were never captured; `at` is the packet
    /// where this became known. A direction seen without its SYN starts with an empty
    /// gap at offset 0: what preceded it is unknown.
    Gap {
        /// Bytes missing.
        len: u64,
        /// Stream offset of the first missing byte.
        off: u64,
        /// The packet where the gap became known.
        at: Meta,
    },
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Bytes delivered as data.
    pub delivered: u64,
    /// Bytes delivered as gaps.
    pub gap_bytes: u64,
    /// Gaps delivered.
    pub gaps: u64,
    /// Payload bytes that were already delivered or buffered (retransmissions, duplicates).
    pub retransmitted: u64,
    /// Retransmitted bytes that differed from the first copy (first copy kept).
    pub conflicts: u64,
    /// Segments that arrived ahead of a hole.
    pub out_of_order: u64,
}

/// A ring of the last [`RECENT`] delivered bytes: one copy per byte, no shifting.
struct Recent {
    ring: Box<[u8]>,
    /// Position where the next byte goes.
    head: usize,
    /// Valid bytes (≤ RECENT).
    len: usize,
}

impl Default for Recent {
    fn default() -> Self {
        Recent {
            ring: Vec::new().into_boxed_slice(),
            head: 0,
            len: 0,
        }
    }
}

impl Recent {
    fn push(&mut self, data: &[u8]) {
        if self.ring.is_empty() {
            self.ring = vec![0; RECENT].into_boxed_slice();
        }
        let data = &data[data.len().saturating_sub(RECENT)..];
        let first = data.len().min(RECENT - self.head);
        self.ring[self.head..self.head + first].copy_from_slice(&data[..first]);
        self.ring[..data.len() - first].copy_from_slice(&data[first..]);
        self.head = (self.head + data.len()) % RECENT;
        self.len = (self.len + data.len()).min(RECENT);
    }

    /// The byte `n` positions before the end (1 = the last byte delivered).
    fn back(&self, n: usize) -> u8 {
        self.ring[(self.head + RECENT - n) % RECENT]
    }
}

struct Pending {
    data: Vec<u8>,
    missing: u32,
    at: Meta,
}

/// A segment held while a direction seen without its SYN has no start yet.
struct Early {
    seq: u32,
    fin: bool,
    data: Vec<u8>,
    missing: u32,
    at: Meta,
}

/// One direction of a TCP connection.
#[derive(Default)]
pub struct Stream {
    /// Sequence number of stream offset 0 (`None` until the start is fixed: a SYN, or the
    /// lowest segment of the start window).
    base: Option<u32>,
    /// Segments held until the start is fixed, in capture order.
    early: Vec<Early>,
    early_bytes: usize,
    /// Next stream offset expected.
    next: u64,
    /// Stream offset where the FIN sits, once seen.
    fin_at: Option<u64>,
    /// ISN of a SYN seen in this direction.
    isn: Option<u32>,
    pending: BTreeMap<u64, Pending>,
    pending_bytes: usize,
    /// The last [`RECENT`] bytes delivered, to compare retransmissions with.
    recent: Recent,
    /// Counters.
    pub stats: StreamStats,
}

impl Stream {
    /// A stream with no segment seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// ISN of the SYN seen in this direction, if any.
    pub fn isn(&self) -> Option<u32> {
        self.isn
    }

    /// True when a FIN was seen and every byte before it has been delivered.
    pub fn finished(&self) -> bool {
        self.fin_at.is_some_and(|f| self.next >= f)
    }

    /// Next stream offset expected (bytes delivered plus gaps).
    pub fn offset(&self) -> u64 {
        self.next
    }

    /// Bytes waiting in the out-of-order buffer.
    pub fn buffered(&self) -> usize {
        self.pending_bytes
    }

    /// True once the start of the stream is fixed (a SYN was seen, or the segments held
    /// without one were released).
    pub fn started(&self) -> bool {
        self.base.is_some()
    }

    /// Stream offset that acknowledgment number `ack` (sent by the other side) points to:
    /// every byte before it was received. `None` before the start is fixed or for an
    /// acknowledgment of bytes before the start. The FIN's sequence number is not a byte:
    /// an acknowledgment of it points to the FIN's offset.
    pub fn ack_offset(&self, ack: u32) -> Option<u64> {
        let base = self.base?;
        let off = u64::try_from(self.offset_of(base, ack)).ok()?;
        Some(match self.fin_at {
            Some(f) if off == f + 1 => f,
            _ => off,
        })
    }

    /// True when a SYN with sequence number `seq` can open this stream: nothing was seen,
    /// or what was seen follows it within [`START_WINDOW`] (a SYN captured after the
    /// data; a different ISN means the port was reused by a new connection).
    pub fn syn_fits(&self, seq: u32) -> bool {
        let first = seq.wrapping_add(1);
        let start = match (self.base, self.lowest_early()) {
            (Some(base), _) => base,
            (None, Some(low)) => low,
            (None, None) => return true,
        };
        (start.wrapping_sub(first) as usize) < START_WINDOW
    }

    /// If the stream has no start yet and `ack` (sent by the other side) acknowledges
    /// every byte held, start it: the other side received them all, so they are the
    /// stream's beginning as far as this capture goes.
    pub fn start_if_acked(&mut self, ack: u32, out: &mut dyn FnMut(Chunk<'_>)) {
        if self.base.is_some() || self.early.is_empty() {
            return;
        }
        let low = self.lowest_early().expect("early segments are held");
        let end = self
            .early
            .iter()
            .map(|e| e.seq.wrapping_add(e.data.len() as u32 + e.missing))
            .max_by_key(|e| e.wrapping_sub(low))
            .unwrap_or(low);
        if ack.wrapping_sub(end) < (1 << 30) {
            self.start(low, false, out);
        }
    }

    /// Lowest sequence number held, compared relative to the first one held.
    fn lowest_early(&self) -> Option<u32> {
        let first = self.early.first()?.seq;
        self.early
            .iter()
            .map(|e| e.seq)
            .min_by_key(|s| s.wrapping_sub(first) as i32)
    }

    /// Fix the start at `base` and process the held segments in capture order. Without a
    /// SYN (`syn` false) what came before the start is unknown: an empty gap at offset 0
    /// tells the layer above that whole messages may precede the first byte.
    fn start(&mut self, base: u32, syn: bool, out: &mut dyn FnMut(Chunk<'_>)) {
        self.base = Some(base);
        self.early_bytes = 0;
        if !syn {
            let at = self.early.first().map(|e| e.at).unwrap_or_default();
            out(Chunk::Gap { len: 0, off: 0, at });
        }
        for e in std::mem::take(&mut self.early) {
            self.segment(e.seq, false, e.fin, &e.data, e.missing, e.at, out);
        }
    }

    /// True when acknowledgment number `ack` (sent by the other side) covers bytes of this
    /// stream that have not been delivered yet: they come later in the capture (capture
    /// order differs from wire order) or not at all.
    pub fn acks_ahead(&self, ack: u32) -> bool {
        let Some(base) = self.base else { return false };
        let off = self.offset_of(base, ack);
        // A FIN takes one sequence number: acknowledging it is not acknowledging data.
        let limit = self.next as i64 + i64::from(self.fin_at == Some(self.next));
        off > limit && off - limit < (1 << 30)
    }

    /// Deliver up to the stream offset that `ack` acknowledges, declaring what was never
    /// captured a gap (the other side received it, so it existed).
    pub fn advance_to_ack(&mut self, ack: u32, at: Meta, out: &mut dyn FnMut(Chunk<'_>)) {
        let Some(base) = self.base else { return };
        let mut target = self.offset_of(base, ack).max(0) as u64;
        if self.fin_at.is_some_and(|f| target == f + 1) {
            target -= 1;
        }
        while self.next < target {
            match self.pending.keys().next() {
                Some(&first) if first <= self.next => self.drain(out),
                Some(&first) if first < target => self.skip_hole(at, out),
                _ => {
                    let gap = target - self.next;
                    self.declare_gap(gap, at, out);
                    self.drain(out);
                }
            }
        }
    }

    /// Stream offset of sequence number `seq` (which must follow a known base).
    fn offset_of(&self, base: u32, seq: u32) -> i64 {
        let next_seq = base.wrapping_add(self.next as u32);
        self.next as i64 + i64::from(seq.wrapping_sub(next_seq) as i32)
    }

    /// Process one segment: `payload` captured bytes plus `missing` uncaptured ones,
    /// starting at `seq`. Ordered bytes and gaps go to `out`.
    #[allow(clippy::too_many_arguments)]
    pub fn segment(
        &mut self,
        seq: u32,
        syn: bool,
        fin: bool,
        payload: &[u8],
        missing: u32,
        at: Meta,
        out: &mut dyn FnMut(Chunk<'_>),
    ) {
        let data_seq = if syn { seq.wrapping_add(1) } else { seq };
        if syn {
            if self.isn.is_none() {
                self.isn = Some(seq);
            }
            if self.base.is_none() {
                self.start(data_seq, true, out);
            }
        }
        let Some(base) = self.base else {
            if !payload.is_empty() || missing > 0 || fin {
                self.early_bytes += payload.len();
                self.early.push(Early {
                    seq: data_seq,
                    fin,
                    data: payload.to_vec(),
                    missing,
                    at,
                });
                if self.early_bytes > START_WINDOW || self.early.len() > START_SEGMENTS {
                    let low = self.lowest_early().expect("a segment was just held");
                    self.start(low, false, out);
                }
            }
            return;
        };
        let start = self.offset_of(base, data_seq);
        let len = payload.len() as u64 + u64::from(missing);
        if fin {
            let f = (start + len as i64).max(0) as u64;
            self.fin_at = Some(self.fin_at.map_or(f, |old| old.min(f)));
        }
        if len == 0 {
            self.drain(out);
            return;
        }
        let end = start + len as i64;
        if end <= self.next as i64 {
            self.stats.retransmitted += len;
            self.check_conflict(start, payload);
            return;
        }
        // Trim what was already delivered (first copy wins).
        let (mut payload, mut missing) = (payload, missing);
        let mut start = start;
        if start < self.next as i64 {
            let skip = (self.next as i64 - start) as u64;
            self.check_conflict(start, payload);
            self.stats.retransmitted += skip;
            if skip <= payload.len() as u64 {
                payload = &payload[skip as usize..];
            } else {
                missing -= (skip - payload.len() as u64) as u32;
                payload = &[];
            }
            start = self.next as i64;
        }
        let start = start as u64;
        if start == self.next {
            self.deliver(payload, missing, at, out);
            self.drain(out);
        } else {
            self.stats.out_of_order += 1;
            let keep = match self.pending.get(&start) {
                Some(p) => (p.data.len() as u64 + u64::from(p.missing)) < len,
                None => true,
            };
            if keep {
                if let Some(old) = self.pending.insert(
                    start,
                    Pending {
                        data: payload.to_vec(),
                        missing,
                        at,
                    },
                ) {
                    self.pending_bytes -= old.data.len();
                    self.stats.retransmitted += old.data.len() as u64;
                }
                self.pending_bytes += payload.len();
            } else {
                self.stats.retransmitted += len;
            }
            while self.pending_bytes > MAX_BUFFERED {
                self.skip_hole(at, out);
            }
        }
    }

    /// Deliver everything held and buffered, declaring the holes between as gaps (FIN,
    /// RST, end of capture). `at` stamps the gaps.
    pub fn flush(&mut self, at: Meta, out: &mut dyn FnMut(Chunk<'_>)) {
        if let Some(low) = self.lowest_early().filter(|_| self.base.is_none()) {
            self.start(low, false, out);
        }
        while !self.pending.is_empty() {
            self.skip_hole(at, out);
        }
    }

    /// Declare the hole before the first buffered segment a gap and deliver from there.
    fn skip_hole(&mut self, at: Meta, out: &mut dyn FnMut(Chunk<'_>)) {
        if let Some((&first, _)) = self.pending.iter().next() {
            if first > self.next {
                self.declare_gap(first - self.next, at, out);
            }
            self.drain(out);
        }
    }

    /// `len` bytes from the current offset were never captured.
    fn declare_gap(&mut self, len: u64, at: Meta, out: &mut dyn FnMut(Chunk<'_>)) {
        let off = self.next;
        self.stats.gap_bytes += len;
        self.stats.gaps += 1;
        self.next += len;
        self.recent.len = 0;
        out(Chunk::Gap { len, off, at });
    }

    fn deliver(&mut self, payload: &[u8], missing: u32, at: Meta, out: &mut dyn FnMut(Chunk<'_>)) {
        if !payload.is_empty() {
            let off = self.next;
            self.next += payload.len() as u64;
            self.stats.delivered += payload.len() as u64;
            self.remember(payload);
            out(Chunk::Data {
                bytes: payload,
                off,
                at,
            });
        }
        if missing > 0 {
            self.declare_gap(u64::from(missing), at, out);
        }
    }

    /// Deliver buffered segments that now touch or overlap the delivered stream.
    fn drain(&mut self, out: &mut dyn FnMut(Chunk<'_>)) {
        while let Some(entry) = self.pending.first_entry() {
            let start = *entry.key();
            if start > self.next {
                break;
            }
            let p = entry.remove();
            self.pending_bytes -= p.data.len();
            let len = p.data.len() as u64 + u64::from(p.missing);
            if start + len <= self.next {
                self.stats.retransmitted += len;
                continue;
            }
            let skip = self.next - start;
            self.stats.retransmitted += skip;
            let (data, missing) = if skip <= p.data.len() as u64 {
                (&p.data[skip as usize..], p.missing)
            } else {
                (&[][..], p.missing - (skip - p.data.len() as u64) as u32)
            };
            self.deliver(data, missing, p.at, out);
        }
    }

    fn remember(&mut self, payload: &[u8]) {
        self.recent.push(payload);
    }

    /// Compare the part of a retransmission that overlaps the last delivered bytes.
    fn check_conflict(&mut self, start: i64, payload: &[u8]) {
        let recent_start = self.next as i64 - self.recent.len as i64;
        let from = start.max(recent_start);
        let to = (start + payload.len() as i64).min(self.next as i64);
        if from >= to {
            return;
        }
        let a = &payload[(from - start) as usize..(to - start) as usize];
        let back = (self.next as i64 - from) as usize;
        let differ = a
            .iter()
            .enumerate()
            .filter(|(k, x)| self.recent.back(back - k) != **x)
            .count();
        self.stats.conflicts += differ as u64;
    }
}

#[cfg(test)]
#[path = "tcp_tests.rs"]
mod tests;
