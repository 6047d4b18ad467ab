//! TCP reassembly of one direction of a connection into an ordered byte stream.
//!
//! Policy (the same for every flow):
//! - Sequence numbers are unwrapped to 64-bit stream offsets relative to the first byte
//!   after the SYN (or, for a connection seen from the middle, to the first segment seen),
//!   so wraparound past 2^32 is invisible to the layers above.
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

/// What reassembly hands to the layer above, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk<'a> {
    /// Contiguous bytes, with the capture time (ns) and frame of the packet that carried them.
    Data(&'a [u8], i64, u64),
    /// Bytes that were never captured, with the time and frame where this became known.
    Gap(u64, i64, u64),
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
    ts: i64,
    frame: u64,
}

/// One direction of a TCP connection.
#[derive(Default)]
pub struct Stream {
    /// Sequence number of stream offset 0 (`None` until the first segment).
    base: Option<u32>,
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
    pub fn advance_to_ack(
        &mut self,
        ack: u32,
        ts: i64,
        frame: u64,
        out: &mut dyn FnMut(Chunk<'_>),
    ) {
        let Some(base) = self.base else { return };
        let mut target = self.offset_of(base, ack).max(0) as u64;
        if self.fin_at.is_some_and(|f| target == f + 1) {
            target -= 1;
        }
        while self.next < target {
            match self.pending.keys().next() {
                Some(&first) if first <= self.next => self.drain(out),
                Some(&first) if first < target => self.skip_hole(ts, frame, out),
                _ => {
                    let gap = target - self.next;
                    self.stats.gap_bytes += gap;
                    self.stats.gaps += 1;
                    self.next = target;
                    self.recent.len = 0;
                    out(Chunk::Gap(gap, ts, frame));
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
        ts: i64,
        frame: u64,
        out: &mut dyn FnMut(Chunk<'_>),
    ) {
        let data_seq = if syn { seq.wrapping_add(1) } else { seq };
        if syn {
            if self.isn.is_none() {
                self.isn = Some(seq);
            }
            if self.base.is_none() {
                self.base = Some(data_seq);
            }
        }
        let base = *self.base.get_or_insert(data_seq);
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
            self.deliver(payload, missing, ts, frame, out);
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
                        ts,
                        frame,
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
                self.skip_hole(ts, frame, out);
            }
        }
    }

    /// Deliver everything buffered, declaring the holes between as gaps (FIN, RST, end of
    /// capture). `ts`/`frame` stamp the gaps.
    pub fn flush(&mut self, ts: i64, frame: u64, out: &mut dyn FnMut(Chunk<'_>)) {
        while !self.pending.is_empty() {
            self.skip_hole(ts, frame, out);
        }
    }

    /// Declare the hole before the first buffered segment a gap and deliver from there.
    fn skip_hole(&mut self, ts: i64, frame: u64, out: &mut dyn FnMut(Chunk<'_>)) {
        if let Some((&first, _)) = self.pending.iter().next() {
            if first > self.next {
                let gap = first - self.next;
                self.stats.gap_bytes += gap;
                self.stats.gaps += 1;
                self.next = first;
                self.recent.len = 0;
                out(Chunk::Gap(gap, ts, frame));
            }
            self.drain(out);
        }
    }

    fn deliver(
        &mut self,
        payload: &[u8],
        missing: u32,
        ts: i64,
        frame: u64,
        out: &mut dyn FnMut(Chunk<'_>),
    ) {
        if !payload.is_empty() {
            self.next += payload.len() as u64;
            self.stats.delivered += payload.len() as u64;
            self.remember(payload);
            out(Chunk::Data(payload, ts, frame));
        }
        if missing > 0 {
            self.next += u64::from(missing);
            self.stats.gap_bytes += u64::from(missing);
            self.stats.gaps += 1;
            self.recent.len = 0;
            out(Chunk::Gap(u64::from(missing), ts, frame));
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
            self.deliver(data, missing, p.ts, p.frame, out);
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
mod tests {
    use super::*;

    fn run(segs: &[(u32, &[u8])], base: u32) -> (Vec<u8>, u64) {
        let mut s = Stream::new();
        let mut got = Vec::new();
        let mut gaps = 0;
        s.segment(base, true, false, &[], 0, 0, 0, &mut |_| {});
        for (i, (off, data)) in segs.iter().enumerate() {
            let seq = base.wrapping_add(1).wrapping_add(*off);
            s.segment(seq, false, false, data, 0, 0, i as u64, &mut |c| match c {
                Chunk::Data(d, _, _) => got.extend_from_slice(d),
                Chunk::Gap(n, _, _) => gaps += n,
            });
        }
        s.flush(0, 0, &mut |c| match c {
            Chunk::Data(d, _, _) => got.extend_from_slice(d),
            Chunk::Gap(n, _, _) => gaps += n,
        });
        (got, gaps)
    }

    #[test]
    fn in_order_out_of_order_and_duplicates() {
        let segs: &[(u32, &[u8])] = &[
            (0, b"abc"),
            (6, b"ghi"),
            (3, b"def"),
            (3, b"def"),
            (9, b"j"),
        ];
        assert_eq!(run(segs, 1000), (b"abcdefghij".to_vec(), 0));
    }

    #[test]
    fn sequence_wraparound() {
        let segs: &[(u32, &[u8])] = &[(0, b"abcd"), (4, b"efgh"), (8, b"ijkl")];
        // ISN 2^32 - 6: the data crosses 2^32 inside the second segment.
        assert_eq!(run(segs, u32::MAX - 5), (b"abcdefghijkl".to_vec(), 0));
    }

    #[test]
    fn overlap_first_copy_wins() {
        let segs: &[(u32, &[u8])] = &[(0, b"abcdef"), (3, b"XYZghi")];
        let mut s = Stream::new();
        let mut got = Vec::new();
        s.segment(0, true, false, &[], 0, 0, 0, &mut |_| {});
        for (off, d) in segs {
            s.segment(1 + off, false, false, d, 0, 0, 0, &mut |c| {
                if let Chunk::Data(d, _, _) = c {
                    got.extend_from_slice(d)
                }
            });
        }
        assert_eq!(got, b"abcdefghi");
        assert_eq!(s.stats.conflicts, 3);
        assert_eq!(s.stats.retransmitted, 3);
    }

    #[test]
    fn hole_becomes_gap_on_flush() {
        let segs: &[(u32, &[u8])] = &[(0, b"abc"), (10, b"klm")];
        assert_eq!(run(segs, 7), (b"abcklm".to_vec(), 7));
    }

    #[test]
    fn truncated_segment_is_data_then_gap() {
        let mut s = Stream::new();
        let mut log = Vec::new();
        s.segment(100, false, false, b"GET", 5, 1, 1, &mut |c| {
            log.push(format!("{c:?}"))
        });
        s.segment(108, false, false, b"x", 0, 2, 2, &mut |c| {
            log.push(format!("{c:?}"))
        });
        assert_eq!(
            log,
            [
                "Data([71, 69, 84], 1, 1)",
                "Gap(5, 1, 1)",
                "Data([120], 2, 2)"
            ]
        );
    }
}
