//! Issue 31 item 10, "stream errors lose their type": a 200 stream that ends with
//! `event: error` (`overloaded_error`) and is then cut showed as `incomplete_response`,
//! and `overloaded_error` appeared nowhere in show, the trace or analyze. The API's error
//! type and message are kept wherever the error shows.

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig};
use agentwire::trace::Trace;

use super::build::{self, Flow};
use super::extract_bytes;
use super::synth::request;

const T0: i64 = 1_700_000_000_000_000_000;

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut c = format!("{:x}\r\n", data.len()).into_bytes();
    c.extend_from_slice(data);
    c.extend_from_slice(b"\r\n");
    c
}

#[test]
fn a_stream_that_ends_with_an_overloaded_error_keeps_the_errors_type_everywhere() {
    let body = br#"{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut resp =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for e in [
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{\"input_tokens\":8,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    ] {
        resp.extend(chunk(e.as_bytes()));
    }
    // No terminating `0` chunk: the server closed the connection after the error event.
    let mut flow = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1000, 5000);
    let mut segs = flow.handshake();
    segs.extend(flow.send(true, &request(body), 1448));
    segs.extend(flow.send(false, &resp, 1448));
    segs.push(flow.fin(false));
    segs.push(flow.fin(true));
    let cap = build::pcap(
        build::ETHERNET,
        false,
        &build::packets(&flow, &segs, build::ETHERNET, 1 << 20, T0),
    );
    let (xs, _) = extract_bytes(&cap);
    assert_eq!(xs.len(), 1);
    // The trace: the exchange's error is the stream's, the cut kept in its message.
    let e = xs[0].error.as_ref().expect("the exchange failed");
    assert_eq!(e.kind, "stream_error", "{e:?}");
    assert!(e.message.contains("overloaded_error: Overloaded"), "{e:?}");
    assert!(e.message.contains("cut"), "{e:?}");
    // show: the stop names the API's error; the problems say it and the cut.
    let trace = Trace {
        exchanges: xs.clone(),
        ..Trace::default()
    };
    let row = &agentwire::report::show::rows(&trace)[0];
    assert_eq!(row.stop.as_deref(), Some("overloaded_error"));
    assert!(
        row.problems[0].contains("API error: overloaded_error: Overloaded"),
        "{:?}",
        row.problems
    );
    // analyze: the request carries the error, and a warning counts it.
    let a = analyze_exchanges(&xs, AnalyzeConfig::default());
    assert_eq!(
        a.requests[0].api_error.as_deref(),
        Some("overloaded_error: Overloaded")
    );
    assert!(
        a.warnings
            .iter()
            .any(|w| w.starts_with("1 request ended with an API error: overloaded_error ×1")),
        "{:?}",
        a.warnings
    );
}
