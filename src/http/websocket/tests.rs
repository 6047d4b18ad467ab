//! Tests of the passive WebSocket reader: the RFC's examples, any split of the bytes,
//! permessage-deflate with context takeover, bad frames, gaps, cuts and tags.

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

/// Raw DEFLATE with a sync flush, its `00 00 ff ff` stripped, as permessage-deflate
/// sends a message (one compressor: the window is kept across calls).
fn deflater() -> impl FnMut(&[u8]) -> Vec<u8> {
    let mut z = Compress::new(Compression::default(), false);
    move |text: &[u8]| {
        let mut out = Vec::with_capacity(text.len() + 64);
        let start = z.total_in();
        loop {
            let used = (z.total_in() - start) as usize;
            z.compress_vec(&text[used..], &mut out, FlushCompress::Sync)
                .unwrap();
            if out.len() < out.capacity() {
                break;
            }
            out.reserve(out.capacity());
        }
        assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
        out.truncate(out.len() - 4);
        out
    }
}

/// Each frame says which feed brought its first byte and which completed it.
#[test]
fn frames_carry_the_tags_of_the_feeds_that_brought_them() {
    let a = client_frame(true, false, 1, &[b'a'; 200]);
    let b = client_frame(true, false, 1, b"{}");
    let mut bytes = a.clone();
    bytes.extend(&b);
    let mut r = Reader::tagged(None);
    let mut out = Vec::new();
    r.feed_at(&bytes[..50], 1u32, &mut out).unwrap();
    r.feed_at(&bytes[50..100], 2, &mut out).unwrap();
    assert!(out.is_empty());
    // The rest of `a` and the first byte of `b`.
    r.feed_at(&bytes[100..a.len() + 1], 3, &mut out).unwrap();
    r.feed_at(&bytes[a.len() + 1..], 4, &mut out).unwrap();
    let tags: Vec<(u32, u32)> = out
        .iter()
        .map(|m| (m.frames[0].first, m.frames[0].last))
        .collect();
    assert_eq!(tags, [(1, 3), (3, 4)]);
    assert_eq!(out[0].frames[0].read, a.len() as u64);
    assert_eq!(out[1].offset, a.len() as u64);
    // Offsets count from where the reader starts.
    let mut r = Reader::new(None).starting_at(1000);
    let mut out = Vec::new();
    r.feed(&b, &mut out).unwrap();
    assert_eq!(out[0].offset, 1000);
    assert_eq!(
        r.feed(&[0x83, 0x00], &mut out),
        Err(FrameError::ReservedOpcode {
            offset: 1000 + b.len() as u64,
            opcode: 3
        })
    );
}

/// A capture gap inside an uncompressed payload loses those bytes only; anywhere else the
/// frames cannot be followed.
#[test]
fn a_gap_inside_a_payload_is_skipped_and_elsewhere_it_is_an_error() {
    let text: Vec<u8> = (0..300u32).map(|i| b'a' + (i % 26) as u8).collect();
    let f = client_frame(true, false, 1, &text);
    let next = client_frame(true, false, 1, b"{\"after\":1}");
    let h = f.len() - text.len();
    let mut r = Reader::new(None);
    let mut out = Vec::new();
    r.feed(&f[..h + 100], &mut out).unwrap();
    r.gap(50, (), &mut out).unwrap();
    r.feed(&f[h + 150..], &mut out).unwrap();
    r.feed(&next, &mut out).unwrap();
    let mut want = text[..100].to_vec();
    want.extend_from_slice(&text[150..]);
    assert_eq!(out[0].payload, want);
    assert_eq!((out[0].missing, out[0].frames[0].missing), (50, 50));
    assert_eq!(out[1].payload, b"{\"after\":1}");
    // A gap up to the frame's very end completes it.
    let mut r = Reader::new(None);
    let mut out = Vec::new();
    r.feed(&f[..h + 10], &mut out).unwrap();
    r.gap(290, (), &mut out).unwrap();
    assert_eq!(out[0].payload, &text[..10]);
    // Across the frame's end, in a header, between frames: errors naming the offset.
    let mut r = Reader::new(None);
    r.feed(&f[..h + 10], &mut out).unwrap();
    assert_eq!(
        r.gap(291, (), &mut out),
        Err(FrameError::Gap {
            offset: h as u64 + 10,
            len: 291
        })
    );
    let mut r = Reader::new(None);
    r.feed(&f[..1], &mut out).unwrap();
    assert!(matches!(
        r.gap(5, (), &mut out),
        Err(FrameError::Gap { offset: 1, .. })
    ));
    let mut r = Reader::new(None);
    assert!(r.gap(5, (), &mut out).is_err());
    // In a compressed message the window is lost with the bytes.
    let mut deflate = deflater();
    let c = client_frame(true, true, 1, &deflate(&text));
    let mut r = Reader::new(Some(false));
    r.feed(&c[..10], &mut out).unwrap();
    assert!(r.gap(2, (), &mut out).is_err());
}

/// The end of the stream hands over what was read of the message it cut short.
#[test]
fn a_cut_keeps_what_arrived_of_the_message() {
    let first = client_frame(false, false, 1, b"{\"type\":\"response.");
    let rest = client_frame(true, false, 0, b"create\"}");
    let mut r = Reader::new(None);
    let mut out = Vec::new();
    r.feed(&first, &mut out).unwrap();
    r.feed(&rest[..rest.len() - 3], &mut out).unwrap();
    let cut = r.cut().unwrap();
    let m = cut.message.unwrap();
    assert_eq!(m.payload, b"{\"type\":\"response.creat");
    assert_eq!(m.frames.len(), 2);
    assert_eq!(m.frames[1].read, rest.len() as u64 - 3);
    assert_eq!(
        (cut.offset, cut.bytes),
        (first.len() as u64, rest.len() as u64 - 3)
    );
    assert_eq!(r.cut(), None);
    // Between fragments: the message so far; inside a control frame: no message.
    let mut r = Reader::new(None);
    r.feed(&first, &mut out).unwrap();
    let cut = r.cut().unwrap();
    assert_eq!(cut.message.unwrap().payload, b"{\"type\":\"response.");
    assert_eq!(cut.bytes, 0);
    let mut r = Reader::new(None);
    r.feed(&client_frame(true, false, 9, b"ping")[..8], &mut out)
        .unwrap();
    let cut = r.cut().unwrap();
    assert_eq!((cut.message, cut.bytes), (None, 8));
    // A compressed message inflates as far as it arrived.
    let text = "{\"input\":\"".to_string() + &"abcdefgh".repeat(4000) + "\"}";
    let mut deflate = deflater();
    let c = client_frame(true, true, 1, &deflate(text.as_bytes()));
    let mut r = Reader::new(Some(false));
    r.feed(&c[..c.len() - 20], &mut out).unwrap();
    let got = r.cut().unwrap().message.unwrap().payload;
    assert!(
        !got.is_empty() && text.as_bytes().starts_with(&got),
        "{}",
        got.len()
    );
}

/// Found reading the inflater: its output grew by doubling and was checked against
/// [`MAX_MESSAGE`] only when full, so a message inflating to up to twice the bound (here
/// 80 MiB from 80 KiB) was accepted whole.
#[test]
fn a_message_inflating_past_the_bound_is_an_error() {
    let zeros = vec![0u8; 80 << 20];
    let mut deflate = deflater();
    let c = deflate(&zeros);
    drop(zeros);
    assert!(c.len() < 200 << 10, "{}", c.len());
    let mut r = Reader::new(Some(false));
    let mut out = Vec::new();
    let e = r
        .feed(&client_frame(true, true, 2, &c), &mut out)
        .unwrap_err();
    assert!(matches!(e, FrameError::TooLarge { offset: 0, .. }), "{e}");
}
