//! The properties the fuzz targets check, one function per reader, shared by the
//! `cargo fuzz` targets (`fuzz/fuzz_targets/*.rs`, nightly) and the bounded property
//! tests that run them on stable in CI (`tests/it/fuzz_props.rs`). Each takes arbitrary
//! bytes; the property is: no panic, the reader ends, and what it returns is consistent.

use std::io::Write;

/// Stream assemblers of every dialect over an arbitrary body: Anthropic SSE, the
/// Responses API (SSE and WebSocket messages), Chat Completions and Gemini SSE, and the
/// content-type dispatch of `read_response`.
pub fn sse(data: &[u8]) {
    let m = agentwire::api::sse::assemble(data);
    for p in &m.stream_problems {
        assert!(!p.is_empty());
    }
    let _ = agentwire::api::sse::assemble_message(data);
    let _ = agentwire::api::responses::stream::assemble_sse(data);
    let _ = agentwire::api::responses::stream::assemble_messages(data);
    let _ = agentwire::api::chat::stream::assemble_sse(data);
    let _ = agentwire::api::gemini::stream::assemble_sse(data);
    let _ = agentwire::api::view::read_response(Some("application/json"), data);
}

/// The trace reader over arbitrary lines: every line is a record or a problem naming
/// its line, lines are numbered in order, and reading ends.
pub fn trace_lines(data: &[u8]) {
    let reader = agentwire::trace::TraceReader::new(data, std::path::Path::new("fuzz.jsonl"));
    let mut last_line = 0;
    for r in reader {
        match r {
            Ok(agentwire::trace::Record::Bad(p)) => {
                assert!(p.line > last_line, "problems in line order");
                last_line = p.line;
            }
            Ok(_) => {}
            Err(_) => break, // a newer format version: the reader stops, as it should
        }
    }
}

/// Any input file through the input layer (format detection, every import, gzip): no
/// panic, and reading ends (an error is an answer).
pub fn import_file(data: &[u8]) {
    let mut f = tempfile::NamedTempFile::new().expect("temporary file");
    f.write_all(data).expect("write");
    f.flush().expect("flush");
    let Ok(mut input) = agentwire::input::open_input(f.path(), &Default::default()) else {
        return;
    };
    for _ in 0..100_000 {
        match input.next() {
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return,
        }
    }
    panic!("more than 100,000 records from {} bytes", data.len());
}

/// A packet capture file through the pcap reader, link layers, reassembly and HTTP.
pub fn pcap_file(data: &[u8]) {
    use agentwire::capture::pcap::{read_packets, Config, Extractor};
    let mut ex = Extractor::new(Config::default());
    let _ = read_packets(data, "fuzz.pcap", &mut |p| ex.packet(p));
    let (xs, _) = ex.finish();
    for x in xs {
        if let Some((a, b)) = x.source.frames {
            assert!(a <= b, "frames in order");
        }
    }
}
