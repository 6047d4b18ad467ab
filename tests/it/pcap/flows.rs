//! Test-built captures for stream-level cases: SSE split inside UTF-8 characters and an
//! `error` event mid-stream, TLS and non-HTTP connections, capture-order anomalies, a
//! reset mid-response, thousands of concurrent flows, and the port filter.

use agentwire::api::sse;
use agentwire::capture::pcap::{read_packets, Config, Extractor};

use super::build::{self, Flow, Seg};
use super::extract_bytes;
use super::synth::{exchange_segs, json_body, request, response};

const T0: i64 = 1_700_000_000_000_000_000;

/// Capture of one flow's segments on Ethernet, microsecond pcap.
pub fn cap(flow: &Flow, segs: &[Seg]) -> Vec<u8> {
    build::pcap(
        build::ETHERNET,
        false,
        &build::packets(flow, segs, build::ETHERNET, 1 << 20, T0),
    )
}

/// An SSE response over chunked encoding, one event per chunk (as the fake server sends).
pub fn sse_response(events: &[(&str, String)]) -> Vec<u8> {
    let mut r =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for (name, data) in events {
        let ev = format!("event: {name}\ndata: {data}\n\n");
        r.extend_from_slice(format!("{:x}\r\n{ev}\r\n", ev.len()).as_bytes());
    }
    r.extend_from_slice(b"0\r\n\r\n");
    r
}

pub fn delta(text: &str) -> (&'static str, String) {
    let d = serde_json::json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}});
    ("content_block_delta", d.to_string())
}

pub fn opening() -> Vec<(&'static str, String)> {
    vec![
        ("message_start", r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}"#.into()),
        ("ping", r#"{"type":"ping"}"#.into()),
        ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.into()),
    ]
}

#[test]
fn sse_split_inside_utf8_characters_assembles() {
    let text = "héllo wörld — 日本語のテキスト ✓";
    let mut events = opening();
    for piece in ["héllo ", "wörld — ", "日本語の", "テキスト ✓"] {
        events.push(delta(piece));
    }
    events.push((
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    ));
    events.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#.into()));
    events.push(("message_stop", r#"{"type":"message_stop"}"#.into()));
    // 5-byte segments cut multi-byte characters and chunk-size lines apart.
    for mss in [5, 7, 13] {
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
        let segs = exchange_segs(
            &mut f,
            &request(b"{\"stream\":true}"),
            &sse_response(&events),
            mss,
        );
        let (xs, _) = extract_bytes(&cap(&f, &segs));
        assert!(xs[0].error.is_none(), "{:?}", xs[0].error);
        let resp = xs[0].response.as_ref().unwrap();
        let msg = sse::assemble(&resp.body.bytes);
        assert!(msg.complete);
        assert_eq!(msg.stop_reason.as_deref(), Some("end_turn"));
        assert_eq!(msg.content[0].text(), Some(text), "mss {mss}");
        assert_eq!(msg.pings, 1);
        // Arrival pieces add up to the body.
        assert_eq!(
            resp.chunks.iter().map(|c| c.1).sum::<u64>(),
            resp.body.len() as u64
        );
    }
}

/// A stream that starts, says `text`, and ends in an `overloaded_error` event.
fn failing_events(text: &str) -> Vec<(&'static str, String)> {
    let mut events = opening();
    events.push(delta(text));
    events.push((
        "error",
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
    ));
    events
}

#[test]
fn error_event_mid_stream_fails_the_exchange_and_keeps_partial_content() {
    let events = failing_events("partial answ");
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let segs = exchange_segs(&mut f, &request(b"{}"), &sse_response(&events), 100);
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    let e = xs[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "stream_error");
    assert!(
        e.message.contains("overloaded_error: Overloaded"),
        "{}",
        e.message
    );
    let msg = sse::assemble(&xs[0].response.as_ref().unwrap().body.bytes);
    assert_eq!(msg.content[0].text(), Some("partial answ"));
    assert!(!msg.complete);
    assert_eq!(s.errors["stream_error"], 1);
}

#[test]
fn bare_cr_event_stream_with_an_error_event_fails_the_exchange() {
    // The same events with each line ending kind; the error event must be found in all.
    let events = failing_events("partial");
    for nl in ["\r", "\r\n", "\n"] {
        let mut stream = String::new();
        for (name, data) in &events {
            stream.push_str(&format!("event: {name}{nl}data: {data}{nl}{nl}"));
        }
        let resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{stream}",
            stream.len()
        );
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
        let segs = exchange_segs(&mut f, &request(b"{}"), resp.as_bytes(), 100);
        let (xs, _) = extract_bytes(&cap(&f, &segs));
        let e = xs[0]
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{nl:?}: not failed"));
        assert_eq!(e.kind, "stream_error", "{nl:?}");
        assert!(
            e.message.contains("overloaded_error"),
            "{nl:?}: {}",
            e.message
        );
        let msg = sse::assemble(&xs[0].response.as_ref().unwrap().body.bytes);
        assert_eq!(msg.content[0].text(), Some("partial"), "{nl:?}");
    }
}

/// A ClientHello with SNI and supported_versions {1.3, 1.2} (RFC 8446 §4.1.2).
fn client_hello(name: &str) -> Vec<u8> {
    let mut sni = ((name.len() + 3) as u16).to_be_bytes().to_vec();
    sni.push(0);
    sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
    sni.extend_from_slice(name.as_bytes());
    let mut exts = vec![0, 0];
    exts.extend_from_slice(&(sni.len() as u16).to_be_bytes());
    exts.extend_from_slice(&sni);
    exts.extend_from_slice(&[0, 43, 0, 5, 4, 3, 4, 3, 3]);
    let mut body = vec![3, 3];
    body.extend_from_slice(&[7; 32]);
    body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
    body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    body.extend_from_slice(&exts);
    let mut hs = vec![1, 0];
    hs.extend_from_slice(&(body.len() as u16).to_be_bytes());
    hs.extend_from_slice(&body);
    let mut rec = vec![22, 3, 1];
    rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
    rec.extend_from_slice(&hs);
    rec
}

#[test]
fn tls_and_non_http_connections_are_reported_and_skipped() {
    let mut t = Flow::new("10.0.0.1:40000", "10.0.0.2:443", 1, 2);
    let hello = client_hello("api.anthropic.com");
    let server_bytes = [
        &[22u8, 3, 3, 0, 4][..],
        &[2, 0, 0, 0],
        &[23, 3, 3, 0, 3, 1, 2, 3],
    ]
    .concat();
    let segs_t = exchange_segs(&mut t, &hello, &server_bytes, 1448);
    let mut p = Flow::new("10.0.0.3:40001", "10.0.0.4:5432", 5, 6);
    let segs_p = exchange_segs(&mut p, &[0, 0, 0, 8, 4, 210, 22, 47], b"N", 1448);
    let mut pkts = build::packets(&t, &segs_t, build::ETHERNET, 1 << 20, T0);
    pkts.extend(build::packets(
        &p,
        &segs_p,
        build::ETHERNET,
        1 << 20,
        T0 + 1_000_000_000,
    ));
    let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, false, &pkts));
    assert!(xs.is_empty());
    assert_eq!(s.tls.len(), 1);
    assert_eq!(s.tls[0].sni.as_deref(), Some("api.anthropic.com"));
    assert_eq!(s.tls[0].version, "TLS 1.3");
    assert_eq!(s.tls[0].server, "10.0.0.2:443");
    assert_eq!(s.tls[0].bytes, (hello.len() + server_bytes.len()) as u64);
    assert_eq!((s.non_http_connections, s.non_http_bytes), (1, 9));
    assert_eq!(s.connections, 2);
}

#[test]
fn response_captured_before_its_request_is_paired_and_flagged() {
    let body = json_body(4000, 11);
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    let req = f.send(true, &request(&body), 1448);
    let resp = f.send(false, &response(b"{\"late\":true}"), 1448);
    // Capture order (and timestamps): the response first, then the request.
    segs.extend(resp);
    segs.extend(req);
    segs.push(f.fin(true));
    segs.push(f.fin(false));
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 1);
    assert_eq!(xs[0].request.body.bytes, body);
    assert_eq!(
        xs[0].response.as_ref().unwrap().body.bytes,
        b"{\"late\":true}"
    );
    assert_eq!(xs[0].duration_us(), Some(0), "a latency is never negative");
    assert!(xs[0].notes.contains_key("capture_order_anomaly"));
    assert!(s.reordered_segments >= 1);
    assert_eq!(s.orphan_responses, 0);
}

#[test]
fn reset_mid_response_reports_the_cut() {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    segs.extend(f.send(true, &request(b"{}"), 1448));
    let mut head = b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n".to_vec();
    head.extend_from_slice(&[b'x'; 2000]);
    segs.extend(f.send(false, &head, 1448));
    let mut rst = f.fin(false);
    rst.fin = false;
    rst.rst = true;
    segs.push(rst);
    let (xs, _) = extract_bytes(&cap(&f, &segs));
    let e = xs[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "incomplete_response");
    assert!(e.message.contains("connection reset"), "{}", e.message);
    assert_eq!(xs[0].response.as_ref().unwrap().body.len(), 2000);
    assert!(xs[0].response.as_ref().unwrap().body.truncated);
}

#[test]
fn thousands_of_concurrent_flows_in_request_order() {
    let n = 3000u32;
    let mut flows: Vec<Flow> = (0..n)
        .map(|i| {
            Flow::new(
                &format!("10.1.{}.{}:{}", i / 250, i % 250 + 1, 30000 + i % 20000),
                "10.0.0.2:80",
                i * 7,
                i * 11,
            )
        })
        .collect();
    // Round-robin: every flow opens, then every flow sends its request, then responses in
    // reverse order, then closes.
    let mut pkts = Vec::new();
    let mut t = T0;
    let mut push = |f: &Flow, segs: Vec<Seg>, pkts: &mut Vec<_>| {
        for p in build::packets(f, &segs, build::ETHERNET, 1 << 20, t) {
            pkts.push(p);
        }
        t += 1000;
    };
    for f in flows.iter_mut() {
        let s = f.handshake();
        push(f, s, &mut pkts);
    }
    for (i, f) in flows.iter_mut().enumerate() {
        let s = f.send(true, &request(format!("{{\"i\":{i}}}").as_bytes()), 1448);
        push(f, s, &mut pkts);
    }
    for (i, f) in flows.iter_mut().enumerate().rev() {
        let s = f.send(false, &response(format!("{{\"r\":{i}}}").as_bytes()), 1448);
        push(f, s, &mut pkts);
    }
    for f in flows.iter_mut() {
        let s = vec![f.fin(true), f.fin(false)];
        push(f, s, &mut pkts);
    }
    let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, true, &pkts));
    assert_eq!(s.connections, u64::from(n));
    assert_eq!(xs.len(), n as usize);
    for (i, x) in xs.iter().enumerate() {
        assert_eq!(x.id, i as u64);
        assert_eq!(x.request.body.bytes, format!("{{\"i\":{i}}}").as_bytes());
        assert_eq!(
            x.response.as_ref().unwrap().body.bytes,
            format!("{{\"r\":{i}}}").as_bytes()
        );
    }
}

#[test]
fn port_and_host_filters() {
    let mut a = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut b = Flow::new("10.0.0.3:40000", "10.0.0.4:8080", 1, 2);
    let sa = exchange_segs(&mut a, &request(b"{\"a\":1}"), &response(b"{}"), 1448);
    let sb = exchange_segs(&mut b, &request(b"{\"b\":1}"), &response(b"{}"), 1448);
    let mut pkts = build::packets(&a, &sa, build::ETHERNET, 1 << 20, T0);
    pkts.extend(build::packets(&b, &sb, build::ETHERNET, 1 << 20, T0 + 1));
    let file = build::pcap(build::ETHERNET, false, &pkts);
    let run = |config: Config| {
        let mut ex = Extractor::new(config);
        read_packets(&file[..], "f.pcap", &mut |p| ex.packet(p)).unwrap();
        let (xs, s) = ex.finish();
        (
            xs.into_iter()
                .map(|x| x.request.body.bytes)
                .collect::<Vec<_>>(),
            s.filtered_out,
        )
    };
    let by_port = run(Config {
        ports: vec![8080],
        ..Config::default()
    });
    assert_eq!(by_port, (vec![b"{\"b\":1}".to_vec()], sa.len() as u64));
    let by_host = run(Config {
        hosts: vec!["10.0.0.2".parse().unwrap()],
        ..Config::default()
    });
    assert_eq!(by_host, (vec![b"{\"a\":1}".to_vec()], sb.len() as u64));
}

/// A `--port` that matched nothing wrote an empty trace, exit 0, with no word about why.
#[test]
fn a_port_filter_that_keeps_nothing_says_so() {
    use crate::common::{agentwire_ok, shared_capture};
    let cap = shared_capture("claude-code/cc2.1.303-hello.pcap");
    let cap = cap.to_str().unwrap();
    let all = agentwire_ok(&["pcap", cap, "-o", "-", "--format", "json"]);
    let none = agentwire_ok(&["pcap", cap, "--port", "1", "-o", "-", "--format", "json"]);
    let err = String::from_utf8_lossy(&none.stderr);
    assert!(err.contains("no exchange found"), "{err}");
    assert!(err.contains("--port/--host left out"), "{err}");
    assert!(
        !String::from_utf8_lossy(&all.stderr).contains("no exchange found"),
        "no such warning when exchanges were found"
    );
}
