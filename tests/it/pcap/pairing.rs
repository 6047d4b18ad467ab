//! Test-built captures for the TCP and pairing faults of issue 17, one test per kind:
//! a capture that starts mid-connection with its first segments out of order, a response
//! whose request was sent before the capture began, a gap that swallows a whole
//! response, and pcapng packets without timestamps.

use serde_json::Value;

use super::build::{self, Flow, Pkt};
use super::flows::{cap, delta, opening, sse_response};
use super::synth::{json_body, request, response};
use super::{extract_bytes, sha};

const T0: i64 = 1_700_000_000_000_000_000;

#[test]
fn capture_starting_mid_connection_with_first_segments_swapped_keeps_the_response() {
    let body = json_body(6000, 3);
    for trailing_ack in [true, false] {
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:8080", 5000, 9000);
        f.handshake(); // before the capture
        f.send(true, &request(b"{\"m\":1}"), 1448); // before the capture
        let mut segs = f.send(false, &response(&body), 1448);
        assert!(segs.len() >= 4);
        segs.swap(0, 1); // the second segment is captured first
        if trailing_ack {
            segs.push(f.ack(true));
        }
        let (xs, s) = extract_bytes(&cap(&f, &segs));
        assert_eq!(xs.len(), 1, "ack {trailing_ack}");
        assert!(!xs[0].request.captured());
        let resp = xs[0].response.as_ref().unwrap();
        assert_eq!(resp.status, 200);
        assert_eq!(resp.body.bytes, body, "ack {trailing_ack}");
        assert!(xs[0].error.is_none(), "{:?}", xs[0].error);
        // Nothing was taken for a retransmission and the flow is HTTP.
        assert_eq!((s.retransmitted_bytes, s.gap_bytes), (0, 0));
        assert_eq!((s.http_connections, s.non_http_connections), (1, 0));
    }
}

/// An SSE reply with `input_tokens` 23 and `output_tokens` 7 that stops at `end_turn`.
fn sse_with_usage() -> Vec<u8> {
    let mut events = opening();
    events[0].1 = events[0]
        .1
        .replace("\"input_tokens\":3", "\"input_tokens\":23");
    events.push(delta("kept"));
    events.push((
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    ));
    events.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#.into()));
    events.push(("message_stop", r#"{"type":"message_stop"}"#.into()));
    sse_response(&events)
}

fn run(args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new(crate::common::bin())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn response_whose_request_preceded_the_capture_is_kept_and_its_usage_counted() {
    let mut f = Flow::new("10.0.0.1:40001", "10.0.0.2:8080", 100, 200);
    f.handshake();
    f.send(true, &request(b"{\"model\":\"m\",\"messages\":[]}"), 1448); // not captured
    let mut segs = f.send(false, &sse_with_usage(), 300);
    segs.push(f.ack(true));
    let second = json_body(400, 4);
    segs.extend(f.send(true, &request(&second), 1448));
    segs.extend(f.send(false, &response(b"{\"ok\":true}"), 1448));
    segs.push(f.ack(true));
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("c.pcap");
    std::fs::write(&pcap, cap(&f, &segs)).unwrap();
    let trace = dir.path().join("t.jsonl");
    let (p, t) = (pcap.to_str().unwrap(), trace.to_str().unwrap());
    run(&["pcap", p, "-o", t]);
    // The trace writes that the request was not captured, and nothing else about it.
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains(r#""request":{"captured":false}"#), "{text}");
    let xs = agentwire::input::open_trace(&trace).unwrap().exchanges;
    assert_eq!(xs.len(), 2);
    assert!(!xs[0].request.captured() && xs[1].request.captured());
    assert_eq!(
        xs[1].request.body.bytes, second,
        "request 2 pairs with its own"
    );
    // show counts its usage and stop reason.
    let rows: Value = serde_json::from_slice(&run(&["show", t, "--format", "json"])).unwrap();
    assert_eq!(rows[0]["usage"], "23/0/0/7", "{rows}");
    assert_eq!(rows[0]["stop"], "end_turn");
    assert_eq!(rows[0]["path"], "(request not captured)");
    // analyze counts it in the totals, beside the one analysed request.
    let a: Value = serde_json::from_slice(&run(&["analyze", t, "--format", "json"])).unwrap();
    let u = &a["inputs"][0]["responses_without_request"];
    assert_eq!(u["responses"], 1, "{a}");
    assert_eq!(
        (
            u["tokens"]["uncached"].as_u64(),
            u["tokens"]["output"].as_u64()
        ),
        (Some(23), Some(7))
    );
    assert_eq!(a["summary"]["requests"], 1);
    let row = &a["requests"][0]["tokens"];
    let input: u64 = ["uncached", "read", "write_5m", "write_1h"]
        .iter()
        .map(|k| row[k].as_u64().unwrap())
        .sum();
    assert_eq!(a["summary"]["input_tokens"].as_u64(), Some(input + 23));
    assert_eq!(
        a["summary"]["output_tokens"].as_u64(),
        Some(row["output"].as_u64().unwrap() + 7)
    );
}

#[test]
fn gap_that_swallows_a_whole_response_pairs_by_acknowledgment_numbers() {
    let bodies: Vec<Vec<u8>> = (0..3).map(|i| json_body(500 + 100 * i, i as u8)).collect();
    let answers: Vec<Vec<u8>> = (0..3).map(|i| json_body(4000, 10 + i as u8)).collect();
    let mut f = Flow::new("10.0.0.1:40002", "10.0.0.2:8080", 7, 9);
    let mut segs = f.handshake();
    for i in 0..3 {
        segs.extend(f.send(true, &request(&bodies[i]), 1448));
        let mut resp = f.send(false, &response(&answers[i]), 1448);
        match i {
            0 => resp.truncate(1), // the end of response 1 is lost ...
            1 => resp.clear(),     // ... and all of response 2
            _ => {}
        }
        segs.extend(resp);
        segs.push(f.ack(true));
    }
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 3);
    for (i, x) in xs.iter().enumerate() {
        assert_eq!(x.request.body.bytes, bodies[i], "exchange {i}");
    }
    let e0 = xs[0].error.as_ref().unwrap();
    assert_eq!(e0.kind, "capture_gap");
    assert!(xs[0].response.as_ref().unwrap().body.truncated);
    assert!(xs[1].response.is_none(), "request 2's response was lost");
    let e1 = xs[1].error.as_ref().unwrap();
    assert_eq!(e1.kind, "capture_gap");
    assert!(
        e1.message.contains("lost in a capture gap"),
        "{}",
        e1.message
    );
    assert_eq!(
        xs[2].response.as_ref().unwrap().body.bytes,
        answers[2],
        "request 3 gets response 3"
    );
    assert!(xs[2].error.is_none());
    assert_eq!(s.lost_responses, 1);
}

#[test]
fn pcapng_packets_without_timestamps_take_their_neighbours_time_not_1970() {
    let mut f = Flow::new("10.0.0.1:40003", "10.0.0.2:8080", 1, 2);
    let segs = super::synth::exchange_segs(&mut f, &request(b"{}"), &response(b"{\"a\":1}"), 1448);
    let pkts = build::packets(&f, &segs, build::ETHERNET, 1 << 20, T0);
    // The SYN and the request are Simple Packet Blocks (no time); the rest have times.
    let simple = |i: usize| i == 0 || i == 3;
    let marked: Vec<(bool, &Pkt)> = pkts
        .iter()
        .enumerate()
        .map(|(i, p)| (simple(i), p))
        .collect();
    let (xs, s) = extract_bytes(&build::pcapng_simple(build::ETHERNET, &marked));
    assert_eq!(s.untimed_packets, 2);
    assert_eq!(xs.len(), 1);
    let x = &xs[0];
    // The request's packet takes the time of the packet before it (the handshake's ACK).
    let ns = |d: chrono::DateTime<chrono::Utc>| d.timestamp_nanos_opt().unwrap();
    assert_eq!(ns(x.started_at), pkts[2].ts_ns);
    assert_eq!(ns(x.ended_at.unwrap()), pkts[4].ts_ns);
    assert!(
        !x.notes.contains_key("capture_order_anomaly"),
        "{:?}",
        x.notes
    );
    // With no time anywhere, the time is unknown, and said to be: no latency is made up.
    let all: Vec<(bool, &Pkt)> = pkts.iter().map(|p| (true, p)).collect();
    let (xs, _) = extract_bytes(&build::pcapng_simple(build::ETHERNET, &all));
    assert_eq!(xs[0].ended_at, None);
    assert!(xs[0].notes.contains_key("time_unknown"));
    assert!(!xs[0].notes.contains_key("capture_order_anomaly"));
    assert_eq!(
        sha(&xs[0].response.as_ref().unwrap().body.bytes),
        sha(b"{\"a\":1}")
    );
}

/// Issue 31 kind 11: a capture that starts inside a response (its request and head sent
/// before the capture; only server→client segments, the first two captured swapped) gave
/// no exchange at all, while tshark exports the bytes. Now it is a response without its
/// request or head, its chunked body de-chunked from the next chunk-size line, its
/// event stream read: the deltas and usage after the cut.
#[test]
fn capture_starting_mid_response_without_a_head_gave_no_exchange() {
    let words = ["alpha ", "bravo ", "charlie ", "delta ", "echo ", "foxtrot"];
    let mut events = opening();
    events.extend(words.iter().map(|w| delta(w)));
    events.push((
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.into(),
    ));
    events.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#.into()));
    events.push(("message_stop", r#"{"type":"message_stop"}"#.into()));
    let response = sse_response(&events);
    let mut f = Flow::new("10.0.0.1:40002", "10.0.0.2:8080", 700, 900);
    f.handshake(); // before the capture
    f.send(true, &request(b"{\"stream\":true}"), 1448); // before the capture
    let mss = 200;
    let mut segs = f.send(false, &response, mss);
    let cut = mss; // the first segment (head and first events) is not captured
    segs.remove(0);
    segs.swap(0, 1);
    segs.push(f.ack(true));

    // What the body holds from `cut` on, from the events as sent: the rest of the chunk
    // the cut falls in, then every later chunk's data.
    let head = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let (mut at, mut want) = (head, Vec::new());
    for (name, data) in &events {
        let ev = format!("event: {name}\ndata: {data}\n\n");
        let line = format!("{:x}\r\n", ev.len()).len();
        let (start, end) = (at + line, at + line + ev.len());
        if end > cut {
            assert!(
                start <= cut || !want.is_empty(),
                "the cut falls in chunk data"
            );
            want.extend_from_slice(&ev.as_bytes()[cut.saturating_sub(start)..]);
        }
        at = end + 2;
    }

    let (xs, s) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 1, "{s:?}");
    let x = &xs[0];
    assert!(!x.request.captured());
    assert!(x.notes.contains_key("response_head_not_captured"));
    let resp = x.response.as_ref().unwrap();
    assert_eq!(resp.body.bytes, want);
    let e = x.error.as_ref().expect("the response is incomplete");
    assert_eq!(e.kind, "incomplete_response");
    assert!(
        e.message.contains("capture started inside this response"),
        "{e:?}"
    );
    // The event stream after the cut: the words whose events came whole, the usage.
    let msg = agentwire::api::sse::assemble(&resp.body.bytes);
    let text = String::from_utf8_lossy(&want);
    let whole: String = words
        .iter()
        .filter(|w| text.contains(&format!("\"text\":\"{w}\"")))
        .copied()
        .collect();
    assert!(whole.len() >= "echo foxtrot".len(), "{text}");
    let got: String = msg.content.iter().filter_map(|c| c.text()).collect();
    assert!(
        got.ends_with(&whole),
        "{got:?} vs {whole:?}: {:?}",
        msg.stream_problems
    );
    assert_eq!(msg.usage.output_tokens, Some(7));
    assert_eq!(msg.stop_reason.as_deref(), Some("end_turn"));
    assert_eq!((s.http_connections, s.non_http_connections), (1, 0));
}
