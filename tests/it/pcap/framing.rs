//! Body framing through captures (RFC 9112 §6.3), one connection per case as a peer's
//! parser tests would be run through pcaps: every message after the case must still be
//! read whole, and an unusable framing must be reported as malformed, never read as
//! "no body" or "until close".

use agentwire::api::response_body;
use agentwire::trace::Exchange;

use super::build::{self, Flow, Seg};
use super::extract_bytes;

const T0: i64 = 1_700_000_000_000_000_000;

/// One connection: each `(request, response)` sent in turn, then FINs.
fn conversation(pairs: &[(&[u8], &[u8])]) -> Vec<Exchange> {
    let mut f = Flow::new("10.0.0.1:41000", "10.0.0.2:8080", 11, 22);
    let mut segs: Vec<Seg> = f.handshake();
    for (req, resp) in pairs {
        segs.extend(f.send(true, req, 1448));
        segs.extend(f.send(false, resp, 1448));
        segs.push(f.ack(true));
    }
    segs.push(f.fin(true));
    segs.push(f.fin(false));
    let pkts = build::packets(&f, &segs, build::ETHERNET, 1 << 20, T0);
    extract_bytes(&build::pcap(build::ETHERNET, false, &pkts)).0
}

const GET: &[u8] = b"GET /next HTTP/1.1\r\nHost: a\r\n\r\n";
const NEXT: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext";

fn kind(x: &Exchange) -> Option<&str> {
    x.error.as_ref().map(|e| e.kind.as_str())
}

fn resp_body(x: &Exchange) -> Vec<u8> {
    x.response
        .as_ref()
        .map(|r| r.body.bytes.clone())
        .unwrap_or_default()
}

/// The message after the case is whole and paired with its own request.
fn next_is_whole(xs: &[Exchange], case: &str) {
    let last = xs.last().unwrap();
    assert_eq!(last.request.target, "/next", "{case}");
    assert_eq!(resp_body(last), b"next", "{case}");
    assert_eq!(kind(last), None, "{case}");
}

#[test]
fn content_length_list_of_identical_values_is_that_value() {
    for cl in ["96, 96", "96,96", "96, , 96"] {
        let resp = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {cl}\r\n\r\n{}",
            "x".repeat(96)
        );
        let xs = conversation(&[(GET, resp.as_bytes()), (GET, NEXT)]);
        assert_eq!(xs.len(), 2, "{cl}");
        assert_eq!(resp_body(&xs[0]), vec![b'x'; 96], "{cl}");
        assert_eq!(kind(&xs[0]), None, "{cl}");
        next_is_whole(&xs, cl);
    }
    // Two field lines with the same value are the same list.
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabc";
    let xs = conversation(&[(GET, resp), (GET, NEXT)]);
    assert_eq!(resp_body(&xs[0]), b"abc");
    next_is_whole(&xs, "two field lines");
}

#[test]
fn later_transfer_encoding_field_line_decides_the_framing() {
    let plain = b"{\"text\":\"hello hello hello\"}".to_vec();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &plain).unwrap();
    let gz = gz.finish().unwrap();
    let mut resp =
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
            .to_vec();
    resp.extend_from_slice(format!("{:x}\r\n", gz.len()).as_bytes());
    resp.extend_from_slice(&gz);
    resp.extend_from_slice(b"\r\n0\r\n\r\n");
    let xs = conversation(&[(GET, &resp), (GET, NEXT)]);
    assert_eq!(xs.len(), 2);
    let r = xs[0].response.as_ref().unwrap();
    assert_eq!(
        r.body.bytes, gz,
        "de-chunked, the gzip transfer coding kept as sent"
    );
    assert_eq!(response_body(r).bytes, plain, "the one decoder removes it");
    next_is_whole(&xs, "gzip then chunked");
}

#[test]
fn unusable_request_framing_is_malformed_and_the_next_request_survives() {
    // (framing fields, what the error names)
    let cases: &[(&str, &str)] = &[
        ("Transfer-Encoding: identity\r\n", "does not end in chunked"),
        ("Transfer-Encoding: pigeons\r\n", "does not end in chunked"),
        (
            "Transfer-Encoding: chunked, deflate\r\n",
            "does not end in chunked",
        ),
        (
            "Transfer-Encoding: chunked\r\nTransfer-Encoding: deflate\r\n",
            "does not end in chunked",
        ),
        (
            "Transfer-Encoding: chunkedchunked\r\n",
            "does not end in chunked",
        ),
        ("Transfer-Encoding:\r\n", "empty Transfer-Encoding"),
        (
            "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
            "has both Transfer-Encoding",
        ),
        ("Content-Length:\r\n", "invalid Content-Length"),
        ("Content-Length: 4 2\r\n", "invalid Content-Length"),
        ("Content-Length: 100000000000000000000\r\n", "too large"),
        ("Content-Length: 1\r\nContent-Length: 2\r\n", "differ"),
    ];
    let bad_reply = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    for (fields, says) in cases {
        let req = format!("POST /bad HTTP/1.1\r\nHost: a\r\n{fields}\r\nWorld");
        let xs = conversation(&[(req.as_bytes(), bad_reply), (GET, NEXT)]);
        assert_eq!(xs.len(), 2, "{fields:?}");
        let e = xs[0]
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{fields:?}: no error"));
        assert_eq!(e.kind, "malformed_request", "{fields:?}");
        assert!(e.message.contains(says), "{fields:?}: {}", e.message);
        // Nothing is lost: the bytes after the head are kept raw with the request.
        assert_eq!(xs[0].request.body.bytes, b"World", "{fields:?}");
        assert_eq!(xs[0].response.as_ref().unwrap().status, 400, "{fields:?}");
        next_is_whole(&xs, fields);
    }
}

#[test]
fn transfer_encoding_in_an_http_1_0_message_is_faulty() {
    let resp = b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let xs = conversation(&[(GET, resp), (GET, NEXT)]);
    assert_eq!(kind(&xs[0]), Some("malformed_response"));
    next_is_whole(&xs, "HTTP/1.0 with Transfer-Encoding");
}

#[test]
fn response_with_invalid_content_length_is_malformed_not_read_until_close() {
    for cl in ["4 2", "-1", "0x10", "5, 6"] {
        let resp = format!("HTTP/1.1 200 OK\r\nContent-Length: {cl}\r\n\r\nhello");
        let xs = conversation(&[(GET, resp.as_bytes()), (GET, NEXT)]);
        assert_eq!(xs.len(), 2, "{cl}");
        assert_eq!(kind(&xs[0]), Some("malformed_response"), "{cl}");
        assert_eq!(resp_body(&xs[0]), b"hello", "{cl}: kept raw");
        next_is_whole(&xs, cl);
    }
}

#[test]
fn response_transfer_coding_not_ending_in_chunked_runs_until_close() {
    let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, identity\r\n\r\nall of it";
    let xs = conversation(&[(GET, resp)]);
    assert_eq!(resp_body(&xs[0]), b"all of it");
    assert_eq!(kind(&xs[0]), None);
}

#[test]
fn content_length_on_connect_is_not_a_body() {
    let connect =
        b"CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\nContent-Length: 5\r\n\r\n";
    let refused = b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n";
    let xs = conversation(&[(connect, refused), (GET, NEXT)]);
    assert_eq!(xs.len(), 2);
    assert_eq!(xs[0].request.method, "CONNECT");
    assert!(xs[0].request.body.is_empty());
    assert_eq!(xs[0].response.as_ref().unwrap().status, 407);
    let notes = xs[0].notes["request_framing_notes"].to_string();
    assert!(notes.contains("CONNECT request has no content"), "{notes}");
    next_is_whole(&xs, "CONNECT");
}

#[test]
fn transfer_encoding_overrides_content_length_in_a_response_and_says_so() {
    let resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let xs = conversation(&[(GET, resp), (GET, NEXT)]);
    assert_eq!(resp_body(&xs[0]), b"abc");
    let notes = xs[0].notes["response_framing_notes"].to_string();
    assert!(notes.contains("Content-Length: 2 ignored"), "{notes}");
    next_is_whole(&xs, "TE over CL");
}

#[test]
fn bare_lf_and_chunk_size_whitespace_are_accepted_and_noted() {
    let resp = b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n5 \nhello\n6\t\n world\n0\n\n";
    let xs = conversation(&[(GET, resp), (GET, NEXT)]);
    assert_eq!(resp_body(&xs[0]), b"hello world");
    assert_eq!(kind(&xs[0]), None);
    let notes: Vec<String> =
        serde_json::from_value(xs[0].notes["response_framing_notes"].clone()).unwrap();
    assert_eq!(
        notes,
        [
            "bare LF line ends accepted",
            "whitespace around a chunk size accepted"
        ]
    );
    // A strict message gets no note.
    assert!(!xs[1].notes.contains_key("response_framing_notes"));
    next_is_whole(&xs, "leniencies");
}

#[test]
fn invalid_chunk_lines_are_malformed_and_keep_their_bytes() {
    for (body, says) in [
        (
            &b"2 erfrferferf\r\naa\r\n0\r\n\r\n"[..],
            "invalid chunk-size line",
        ),
        (
            b"10000000000000000\r\nx\r\n0\r\n\r\n",
            "invalid chunk-size line",
        ),
        (b"5\r\nABCDE0\r\n\r\n", "chunk data not followed by CRLF"),
    ] {
        let mut resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        resp.extend_from_slice(body);
        let xs = conversation(&[(GET, &resp), (GET, NEXT)]);
        let e = xs[0].error.as_ref().unwrap();
        assert_eq!(e.kind, "malformed_response");
        assert!(e.message.contains(says), "{}", e.message);
        next_is_whole(&xs, says);
    }
}
