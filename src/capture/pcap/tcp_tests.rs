//! Unit tests of TCP reassembly ([`super`]): each case's delivered bytes, gaps, offsets and
//! counters worked out by hand from the segments fed.

use super::*;

fn at(frame: u64) -> Meta {
    Meta {
        ts: 0,
        frame,
        ack: None,
    }
}

/// Feed `(offset from base + 1, bytes)` segments after a SYN at `base`; returns the
/// delivered bytes and gap bytes after a flush.
fn run(segs: &[(u32, &[u8])], base: u32) -> (Vec<u8>, u64) {
    let mut s = Stream::new();
    s.segment(base, true, false, &[], 0, at(0), &mut |_| {});
    let mut segs: Vec<(u32, &[u8])> = segs.to_vec();
    for (off, _) in &mut segs {
        *off = base.wrapping_add(1).wrapping_add(*off);
    }
    collect(&mut s, &segs)
}

fn collect(s: &mut Stream, segs: &[(u32, &[u8])]) -> (Vec<u8>, u64) {
    let mut got = Vec::new();
    let mut gaps = 0;
    let mut sink = |c: Chunk<'_>| match c {
        Chunk::Data { bytes, .. } => got.extend_from_slice(bytes),
        Chunk::Gap { len, .. } => gaps += len,
    };
    for (i, (seq, data)) in segs.iter().enumerate() {
        s.segment(*seq, false, false, data, 0, at(i as u64), &mut sink);
    }
    s.flush(at(0), &mut sink);
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
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    let segs: Vec<(u32, &[u8])> = segs.iter().map(|(o, d)| (1 + o, *d)).collect();
    let (got, _) = collect(&mut s, &segs);
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
fn truncated_segment_is_data_then_gap_with_offsets() {
    let mut s = Stream::new();
    let mut log = Vec::new();
    s.segment(99, true, false, b"", 0, at(0), &mut |_| {});
    for (seq, data, missing, frame) in [(100, &b"GET"[..], 5, 1), (108, b"x", 0, 2)] {
        s.segment(seq, false, false, data, missing, at(frame), &mut |c| {
            log.push(match c {
                Chunk::Data { bytes, off, at } => {
                    format!("data {bytes:?} @{off} #{}", at.frame)
                }
                Chunk::Gap { len, off, at } => format!("gap {len} @{off} #{}", at.frame),
            })
        });
    }
    assert_eq!(
        log,
        ["data [71, 69, 84] @0 #1", "gap 5 @3 #1", "data [120] @8 #2"]
    );
}

#[test]
fn without_a_syn_the_lowest_segment_held_is_the_start() {
    // The second segment is captured first; the first arrives next.
    let mut s = Stream::new();
    let (got, gaps) = collect(&mut s, &[(5003, b"def"), (5000, b"abc"), (5006, b"g")]);
    assert_eq!((got, gaps), (b"abcdefg".to_vec(), 0));
    assert_eq!(s.stats.retransmitted, 0);
    // The other side acknowledging everything held starts the stream at once.
    let mut s = Stream::new();
    let mut got = Vec::new();
    let mut sink = |c: Chunk<'_>| {
        if let Chunk::Data { bytes, .. } = c {
            got.extend_from_slice(bytes)
        }
    };
    s.segment(7003, false, false, b"def", 0, at(1), &mut sink);
    s.segment(7000, false, false, b"abc", 0, at(2), &mut sink);
    s.start_if_acked(7005, &mut sink);
    assert!(
        !s.started(),
        "an acknowledgment inside the held bytes waits"
    );
    s.start_if_acked(7006, &mut sink);
    assert!(s.started());
    assert_eq!(got, b"abcdef");
    assert_eq!(s.ack_offset(7006), Some(6));
}

#[test]
fn a_syn_captured_after_the_data_fixes_the_start() {
    let mut s = Stream::new();
    let mut got = Vec::new();
    let mut sink = |c: Chunk<'_>| {
        if let Chunk::Data { bytes, off, .. } = c {
            got.push((off, bytes.to_vec()))
        }
    };
    s.segment(401, false, false, b"bc", 0, at(1), &mut sink);
    assert!(s.syn_fits(399), "data 2 bytes after the SYN's first byte");
    assert!(!s.syn_fits(4_000_000), "another ISN: a new connection");
    s.segment(399, true, false, b"", 0, at(2), &mut sink);
    // Offset 0 is the byte after the SYN (seq 400), never captured: a gap on flush.
    s.flush(at(3), &mut sink);
    assert_eq!(got, vec![(1, b"bc".to_vec())]);
}

#[test]
fn the_start_window_is_bounded() {
    let mut s = Stream::new();
    let seg = vec![b'x'; 1000];
    for i in 0..=(START_WINDOW / 1000) as u32 {
        s.segment(10_000 + 1000 * i, false, false, &seg, 0, at(1), &mut |_| {});
    }
    assert!(
        s.started(),
        "past the window the lowest held segment is the start"
    );
    assert!(s.buffered() == 0 && s.offset() > START_WINDOW as u64);
}

/// A segment retransmitted whole, after its bytes were delivered, is compared with
/// what was delivered: 1 byte of 6 differs (`abXdef` for `abcdef`), so 1 conflict
/// byte, 6 retransmitted bytes, and the stream keeps the first copy.
#[test]
fn a_fully_retransmitted_segment_is_checked_for_conflicts() {
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    let (got, gaps) = collect(&mut s, &[(1, b"abcdef"), (1, b"abXdef"), (7, b"g")]);
    assert_eq!((got, gaps), (b"abcdefg".to_vec(), 0));
    assert_eq!(s.stats.conflicts, 1);
    assert_eq!(s.stats.retransmitted, 6);
    // An identical retransmission is no conflict.
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    collect(&mut s, &[(1, b"abcdef"), (1, b"abcdef"), (3, b"cd")]);
    assert_eq!((s.stats.conflicts, s.stats.retransmitted), (0, 8));
}

/// First copy wins for buffered segments too: two copies of the same out-of-order
/// segment (`ghi`, then `GHI`) wait for the hole before them; the first is delivered,
/// the second counted as retransmitted.
#[test]
fn a_later_buffered_copy_does_not_replace_the_first() {
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    let (got, _) = collect(&mut s, &[(7, b"ghi"), (7, b"GHI"), (1, b"abcdef")]);
    assert_eq!(got, b"abcdefghi");
    assert_eq!(s.stats.retransmitted, 3);
    assert_eq!(s.stats.out_of_order, 2);
    // A longer later copy adds the bytes the first lacked.
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    let (got, _) = collect(&mut s, &[(7, b"gh"), (7, b"ghij"), (1, b"abcdef")]);
    assert_eq!(got, b"abcdefghij");
}

/// What the connection layer reads of a stream: the ISN of the first SYN (a second SYN
/// does not change it), whether everything before the FIN was delivered, and how many
/// bytes wait out of order. SYN at 99, so offset 0 is seq 100; `ab` at 0, `e`+FIN at 4
/// (the FIN sits at offset 5), then `cd` at 2 fills the hole.
#[test]
fn isn_fin_and_buffered_bytes_are_reported_as_they_change() {
    let mut s = Stream::new();
    assert_eq!(s.isn(), None);
    s.segment(99, true, false, &[], 0, at(0), &mut |_| {});
    s.segment(5000, true, false, &[], 0, at(1), &mut |_| {});
    assert_eq!(s.isn(), Some(99), "the first SYN's sequence number");
    let mut got = Vec::new();
    let mut sink = |c: Chunk<'_>| {
        if let Chunk::Data { bytes, .. } = c {
            got.extend_from_slice(bytes)
        }
    };
    s.segment(100, false, false, b"ab", 0, at(2), &mut sink);
    s.segment(104, false, true, b"e", 0, at(3), &mut sink);
    assert!(!s.finished(), "the FIN is seen but bytes 2..4 are missing");
    assert_eq!(s.buffered(), 1, "`e` waits");
    s.segment(102, false, false, b"cd", 0, at(4), &mut sink);
    assert_eq!(s.buffered(), 0);
    assert_eq!(s.offset(), 5);
    assert!(s.finished(), "every byte before the FIN delivered");
    assert_eq!(got, b"abcde");
    // An acknowledgment of the FIN points to the FIN's offset, not past it.
    assert_eq!(s.ack_offset(106), Some(5));
    assert_eq!(s.ack_offset(105), Some(5));
    assert_eq!(s.ack_offset(103), Some(3));
    // A stream with no FIN is never finished.
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    s.segment(1, false, false, b"x", 0, at(1), &mut |_| {});
    assert!(!s.finished());
}

/// A SYN fits data held or delivered when the data starts less than [`START_WINDOW`]
/// bytes after the SYN's first byte; exactly that far is another connection.
#[test]
fn a_syn_fits_data_less_than_the_start_window_after_it() {
    let fits = |gap: u32| {
        let mut s = Stream::new();
        s.segment(1000 + gap, false, false, b"x", 0, at(1), &mut |_| {});
        s.syn_fits(999)
    };
    assert!(fits(0));
    assert!(fits(START_WINDOW as u32 - 1));
    assert!(!fits(START_WINDOW as u32));
    assert!(Stream::new().syn_fits(12345), "nothing seen: any SYN fits");
}

/// Held segments start the stream once an acknowledgment covers every byte held,
/// uncaptured (snaplen) bytes included: `abc` + 2 missing at 7000 ends at 7005. An
/// acknowledgment 2^30 or more past the end is read as one from before (wraparound). On
/// a stream with nothing held nothing happens.
#[test]
fn an_acknowledgment_starts_held_segments_only_when_it_covers_the_missing_bytes_too() {
    let mut fresh = Stream::new();
    fresh.start_if_acked(1, &mut |_| panic!("nothing to start"));
    assert!(!fresh.started());
    let held = || {
        let mut s = Stream::new();
        s.segment(7000, false, false, b"abc", 2, at(1), &mut |_| {});
        s
    };
    let mut s = held();
    s.start_if_acked(7003, &mut |_| {});
    assert!(!s.started(), "the two missing bytes are not acknowledged");
    s.start_if_acked(7005, &mut |_| {});
    assert!(s.started());
    let mut s = held();
    s.start_if_acked(7005u32.wrapping_add(1 << 30), &mut |_| {});
    assert!(!s.started(), "2^30 ahead is read as behind");
    let mut s = held();
    s.start_if_acked(7005 + (1 << 30) - 1, &mut |_| {});
    assert!(s.started());
}

/// A stream started without its SYN begins with an empty gap at offset 0 (what came
/// before is unknown); one started by a SYN does not.
#[test]
fn only_a_stream_started_without_a_syn_begins_with_an_empty_gap() {
    let chunks = |syn: bool| {
        let mut log = Vec::new();
        let mut s = Stream::new();
        let mut sink = |c: Chunk<'_>| log.push(line(c));
        if syn {
            s.segment(99, true, false, &[], 0, at(0), &mut sink);
        }
        s.segment(100, false, false, b"ab", 0, at(1), &mut sink);
        s.flush(at(2), &mut sink);
        log
    };
    assert_eq!(chunks(false), ["gap 0 @0", "data 2 @0"]);
    assert_eq!(chunks(true), ["data 2 @0"]);
}

/// `acks_ahead`: the other side acknowledges bytes not delivered yet (they come later in
/// the capture). Not before the start is fixed, not for bytes delivered, not for the
/// FIN's own sequence number, and not for an acknowledgment 2^30 or more ahead (read as
/// behind).
#[test]
fn acks_ahead_means_acknowledged_bytes_not_yet_delivered() {
    let mut s = Stream::new();
    assert!(!s.acks_ahead(500), "no start yet");
    s.segment(99, true, false, &[], 0, at(0), &mut |_| {});
    s.segment(100, false, false, b"abc", 0, at(1), &mut |_| {});
    assert!(!s.acks_ahead(103), "everything acknowledged was delivered");
    assert!(!s.acks_ahead(101));
    assert!(s.acks_ahead(104), "byte 3 acknowledged, not seen");
    assert!(s.acks_ahead(103 + (1 << 30) - 1));
    assert!(!s.acks_ahead(103 + (1 << 30)));
    // A FIN at offset 3: acknowledging it (seq 104) is not acknowledging data.
    s.segment(103, false, true, b"", 0, at(2), &mut |_| {});
    assert!(!s.acks_ahead(104));
    assert!(s.acks_ahead(105));
}

/// A chunk as one line: `data LEN @OFF` or `gap LEN @OFF`.
fn line(c: Chunk<'_>) -> String {
    match c {
        Chunk::Data { bytes, off, .. } => format!("data {} @{off}", bytes.len()),
        Chunk::Gap { len, off, .. } => format!("gap {len} @{off}"),
    }
}

/// `advance_to_ack`: the other side acknowledged up to an offset, so every byte before it
/// existed; what was never captured becomes a gap, buffered segments before the offset
/// are delivered in between, and those past it keep waiting. SYN at 99: offset k is
/// seq 100 + k.
#[test]
fn an_acknowledgment_past_a_hole_declares_the_hole_a_gap_and_delivers_what_waits() {
    let stream = |segs: &[(u32, &[u8], bool)]| {
        let mut s = Stream::new();
        s.segment(99, true, false, &[], 0, at(0), &mut |_| {});
        for &(seq, data, fin) in segs {
            s.segment(seq, false, fin, data, 0, at(1), &mut |_| {});
        }
        s
    };
    // `ab` delivered, `fgh` waits at 5; the ack of offset 4: a gap of 2 at 2, `fgh` waits.
    let mut s = stream(&[(100, b"ab", false), (105, b"fgh", false)]);
    let mut log = Vec::new();
    s.advance_to_ack(104, at(2), &mut |c| log.push(line(c)));
    assert_eq!(log, ["gap 2 @2"]);
    assert_eq!((s.offset(), s.buffered()), (4, 3));
    // `d` waits at 3; the ack of offset 6: gap 1 at 2, `d`, gap 2 at 4.
    let mut s = stream(&[(100, b"ab", false), (103, b"d", false)]);
    let mut log = Vec::new();
    s.advance_to_ack(106, at(2), &mut |c| log.push(line(c)));
    assert_eq!(log, ["gap 1 @2", "data 1 @3", "gap 2 @4"]);
    assert_eq!((s.offset(), s.buffered()), (6, 0));
    // `cd` waits at 2, right after `ab`, and the ack covers it: delivered, no gap.
    let mut s = stream(&[(100, b"ab", false), (102, b"cd", false)]);
    assert_eq!(s.offset(), 4, "delivered on arrival");
    let mut log = Vec::new();
    s.advance_to_ack(104, at(2), &mut |c| log.push(line(c)));
    assert!(log.is_empty(), "{log:?}");
    // A FIN at offset 4 takes seq 104; its acknowledgment (105) covers the data up to 4.
    let mut s = stream(&[(100, b"ab", false), (104, b"", true)]);
    let mut log = Vec::new();
    s.advance_to_ack(105, at(2), &mut |c| log.push(line(c)));
    assert_eq!(log, ["gap 2 @2"]);
    assert!(s.finished());
    // An acknowledgment of bytes already delivered, or before the start, does nothing.
    let mut s = stream(&[(100, b"abc", false)]);
    let mut log = Vec::new();
    s.advance_to_ack(102, at(2), &mut |c| log.push(line(c)));
    s.advance_to_ack(50, at(2), &mut |c| log.push(line(c)));
    assert!(log.is_empty(), "{log:?}");
    let mut unstarted = Stream::new();
    unstarted.advance_to_ack(100, at(2), &mut |_| panic!("no start, nothing delivered"));
}

/// Without a SYN, segments are held until more than [`START_WINDOW`] bytes or more than
/// [`START_SEGMENTS`] segments wait, whichever comes first; exactly the limit still waits.
#[test]
fn held_segments_start_past_the_byte_window_or_the_segment_count() {
    // By bytes: two segments of exactly half the window wait; one more byte starts.
    let half = vec![b'x'; START_WINDOW / 2];
    let mut s = Stream::new();
    s.segment(1000, false, false, &half, 0, at(1), &mut |_| {});
    s.segment(
        1000 + half.len() as u32,
        false,
        false,
        &half,
        0,
        at(2),
        &mut |_| {},
    );
    assert!(!s.started(), "exactly {START_WINDOW} bytes held");
    s.segment(
        1000 + START_WINDOW as u32,
        false,
        false,
        b"y",
        0,
        at(3),
        &mut |_| {},
    );
    assert!(s.started());
    assert_eq!(s.offset(), START_WINDOW as u64 + 1);
    // By count: 256 one-byte segments wait; the 257th starts.
    let mut s = Stream::new();
    for i in 0..START_SEGMENTS as u32 {
        s.segment(1000 + i, false, false, b"x", 0, at(1), &mut |_| {});
    }
    assert!(!s.started(), "exactly {START_SEGMENTS} segments held");
    s.segment(
        1000 + START_SEGMENTS as u32,
        false,
        false,
        b"x",
        0,
        at(2),
        &mut |_| {},
    );
    assert!(s.started());
    assert_eq!(s.offset(), START_SEGMENTS as u64 + 1);
}

/// Without a SYN, a segment whose bytes were all cut by the snaplen is held (its bytes
/// existed: a gap), and so is a bare FIN; a pure ACK is not (it carries no byte, and
/// holding it would move the start to its sequence number).
#[test]
fn held_segments_are_those_with_bytes_captured_or_not_or_a_fin() {
    let run = |segs: &[(u32, &[u8], u32, bool)]| {
        let mut s = Stream::new();
        let mut log = Vec::new();
        for &(seq, data, missing, fin) in segs {
            s.segment(seq, false, fin, data, missing, at(1), &mut |c| {
                log.push(line(c))
            });
        }
        s.flush(at(2), &mut |c| log.push(line(c)));
        (log, s.finished())
    };
    // Pure ACK at 500, then data at 600: the stream starts at 600.
    let (log, _) = run(&[(500, b"", 0, false), (600, b"ab", 0, false)]);
    assert_eq!(log, ["gap 0 @0", "data 2 @0"]);
    // 100 bytes cut at 600, then `ab` at 700: a gap of 100, then the data.
    let (log, _) = run(&[(600, b"", 100, false), (700, b"ab", 0, false)]);
    assert_eq!(log, ["gap 0 @0", "gap 100 @0", "data 2 @100"]);
    // `ab` at 600 and a bare FIN at 602, seen in reverse order: finished at offset 2.
    let (log, finished) = run(&[(602, b"", 0, true), (600, b"ab", 0, false)]);
    assert_eq!(log, ["gap 0 @0", "data 2 @0"]);
    assert!(finished);
}

/// Overlaps that involve bytes cut by the snaplen. SYN at 0: offset k is seq 1 + k.
/// - A retransmission from offset 0 of `ab` + 6 uncaptured bytes after `abcde` was
///   delivered: 5 bytes overlap (2 captured, 3 not), the other 3 are a gap at 5.
/// - Of two buffered copies at the same offset the longer wins, uncaptured bytes counted:
///   `gh` + 2 cut (4 bytes) is kept over a later `ghi` (3 bytes).
/// - A longer later copy replaces the buffered one: `gh` then `ghij` at 7 leave 4 bytes
///   buffered, and the 2 replaced count as retransmitted.
#[test]
fn overlaps_count_uncaptured_bytes_and_the_buffer_holds_the_kept_copy_only() {
    let stream = || {
        let mut s = Stream::new();
        s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
        s
    };
    let mut s = stream();
    let mut log = Vec::new();
    s.segment(1, false, false, b"abcde", 0, at(1), &mut |c| {
        log.push(line(c))
    });
    s.segment(1, false, false, b"ab", 6, at(2), &mut |c| log.push(line(c)));
    assert_eq!(log, ["data 5 @0", "gap 3 @5"]);
    assert_eq!(s.stats.retransmitted, 5);

    let mut s = stream();
    let mut log = Vec::new();
    s.segment(8, false, false, b"gh", 2, at(1), &mut |c| log.push(line(c)));
    s.segment(8, false, false, b"ghi", 0, at(2), &mut |c| {
        log.push(line(c))
    });
    assert_eq!(s.buffered(), 2, "the first copy's captured bytes");
    s.segment(1, false, false, b"abcdefg", 0, at(3), &mut |c| {
        log.push(line(c))
    });
    assert_eq!(log, ["data 7 @0", "data 2 @7", "gap 2 @9"]);
    assert_eq!(s.stats.retransmitted, 3);

    let mut s = stream();
    s.segment(8, false, false, b"gh", 0, at(1), &mut |_| {});
    s.segment(8, false, false, b"ghij", 0, at(2), &mut |_| {});
    assert_eq!(s.buffered(), 4);
    assert_eq!(s.stats.retransmitted, 2);
}

/// Out-of-order bytes wait behind a hole up to [`MAX_BUFFERED`] bytes; one byte more
/// declares the hole a gap and delivers what waited. SYN at 0; offset 0 (1 byte) never
/// comes; 8 segments of 1 MiB from offset 1 fill the buffer exactly.
#[test]
fn a_hole_becomes_a_gap_when_the_buffer_passes_its_limit() {
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    let mib = vec![b'x'; 1 << 20];
    let mut log = Vec::new();
    let n = (MAX_BUFFERED >> 20) as u32;
    for i in 0..n {
        s.segment(2 + (i << 20), false, false, &mib, 0, at(1), &mut |c| {
            log.push(line(c))
        });
    }
    assert!(log.is_empty(), "exactly the limit waits: {log:?}");
    assert_eq!(s.buffered(), MAX_BUFFERED);
    s.segment(2 + (n << 20), false, false, b"y", 0, at(2), &mut |c| {
        log.push(line(c))
    });
    assert_eq!(log.len(), 2 + n as usize, "the gap, then every segment");
    assert_eq!(log[0], "gap 1 @0");
    assert_eq!(log[1], format!("data {} @1", 1 << 20));
    assert_eq!(s.buffered(), 0);
    assert_eq!(s.offset(), 2 + MAX_BUFFERED as u64);
}

/// The counters `pcap`'s summary prints: `ab`, a hole of 1, `d` buffered, then an
/// acknowledgment 2 bytes past `d`: 3 bytes delivered, 2 gaps of 3 bytes in all, 1
/// segment out of order.
#[test]
fn stream_stats_count_delivered_bytes_gaps_and_gap_bytes() {
    let mut s = Stream::new();
    s.segment(99, true, false, &[], 0, at(0), &mut |_| {});
    s.segment(100, false, false, b"ab", 0, at(1), &mut |_| {});
    s.segment(103, false, false, b"d", 0, at(2), &mut |_| {});
    s.advance_to_ack(106, at(3), &mut |_| {});
    assert_eq!(
        s.stats,
        StreamStats {
            delivered: 3,
            gap_bytes: 3,
            gaps: 2,
            retransmitted: 0,
            conflicts: 0,
            out_of_order: 1,
        }
    );
}

/// Buffered segments that a later in-order segment overtook. SYN at 0: offset k is seq
/// 1 + k. Each case: what is delivered after the buffered copy, and the bytes counted
/// as retransmitted (those delivered twice over).
#[test]
fn buffered_segments_overtaken_by_later_data_deliver_only_what_is_new() {
    let run = |segs: &[(u32, &[u8], u32)]| {
        let mut s = Stream::new();
        s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
        let mut log = Vec::new();
        for &(seq, data, missing) in segs {
            s.segment(seq, false, false, data, missing, at(1), &mut |c| {
                log.push(line(c))
            });
        }
        (log, s.stats.retransmitted, s.buffered())
    };
    // `cd` waits at 2; `abcdef` covers it whole: `cd` is 2 retransmitted bytes.
    assert_eq!(
        run(&[(3, b"cd", 0), (1, b"abcdef", 0)]),
        (vec!["data 6 @0".to_string()], 2, 0)
    );
    // `defg` waits at 3; `abcde` covers `de`: `fg` follows, 2 retransmitted.
    assert_eq!(
        run(&[(4, b"defg", 0), (1, b"abcde", 0)]),
        (vec!["data 5 @0".to_string(), "data 2 @5".to_string()], 2, 0)
    );
    // `bcdef` waits at 1; `abcde` covers all but `f`.
    assert_eq!(
        run(&[(2, b"bcdef", 0), (1, b"abcde", 0)]),
        (vec!["data 5 @0".to_string(), "data 1 @5".to_string()], 4, 0)
    );
    // `d` + 3 uncaptured bytes waits at 3 (ends at 7); `abcde` covers `d` and one
    // uncaptured byte: a gap of the 2 left.
    assert_eq!(
        run(&[(4, b"d", 3), (1, b"abcde", 0)]),
        (vec!["data 5 @0".to_string(), "gap 2 @5".to_string()], 2, 0)
    );
}

/// A gap empties the bytes kept for conflict checks: a retransmission that spans the gap
/// is compared only with what was delivered after it. `ab` + 2 cut (a gap at 2), `ef` at
/// 4, then `bXYef` from 1: only `ef` can be compared, and it matches.
#[test]
fn conflicts_are_checked_only_against_bytes_delivered_since_the_last_gap() {
    let mut s = Stream::new();
    s.segment(0, true, false, &[], 0, at(0), &mut |_| {});
    s.segment(1, false, false, b"ab", 2, at(1), &mut |_| {});
    s.segment(5, false, false, b"ef", 0, at(2), &mut |_| {});
    s.segment(2, false, false, b"bXYef", 0, at(3), &mut |_| {});
    assert_eq!((s.stats.conflicts, s.stats.retransmitted), (0, 5));
    s.segment(5, false, false, b"eZ", 0, at(4), &mut |_| {});
    assert_eq!(s.stats.conflicts, 1, "`Z` for `f`");
}
