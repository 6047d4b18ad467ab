//! `agentwire pcap`: real captures checked against tshark and the scenarios that made
//! them (`real`), public captures of other projects (`public`), test-built captures for
//! each hard case (`synth`, built with `build`), and a property test of reassembly.

mod build;
mod cases;
mod damaged;
mod flows;
mod framing;
#[cfg(feature = "libpcap")]
mod live;
mod pairing;
mod prop;
mod public;
mod real;
mod redaction;
mod stream_error;
mod synth;
mod websocket;
mod websocket_bad;

use std::collections::BTreeMap;
use std::path::Path;

use agentwire::api::{request_body, response_body};
use agentwire::capture::pcap::{read_file, read_packets, Config, ExtractionSummary, Extractor};
use agentwire::trace::Exchange;
use sha2::{Digest, Sha256};

/// Run the extractor over an in-memory capture.
pub fn extract_bytes(bytes: &[u8]) -> (Vec<Exchange>, ExtractionSummary) {
    let mut ex = Extractor::new(Config::default());
    ex.set_source(Some("test.pcap".into()));
    read_packets(bytes, "test.pcap", &mut |p| ex.packet(p)).unwrap();
    ex.finish()
}

/// Run the extractor over a capture file.
pub fn extract_file(path: &Path) -> (Vec<Exchange>, ExtractionSummary) {
    let mut ex = Extractor::new(Config::default());
    ex.set_source(Some(path.display().to_string()));
    read_file(path, &mut |p| ex.packet(p)).unwrap();
    ex.finish()
}

pub fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The HTTP objects `tshark -r FILE --export-objects http,DIR` writes: SHA-256 → count.
pub fn tshark_objects(path: &Path) -> BTreeMap<String, usize> {
    let dir = tempfile::tempdir().unwrap();
    let arg = format!("http,{}", dir.path().display());
    let st = std::process::Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(["--export-objects", &arg, "-q"])
        .output()
        .expect("tshark must be installed for these tests (apt-get install tshark)");
    assert!(st.status.success(), "tshark failed on {}", path.display());
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        if !data.is_empty() {
            *out.entry(sha(&data)).or_default() += 1;
        }
    }
    out
}

/// Non-empty request and response bodies of our exchanges, decoded as every reader sees
/// them (tshark exports decoded bodies): SHA-256 → count.
pub fn our_objects(xs: &[Exchange]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for x in xs {
        let resp = x.response.as_ref().map(response_body);
        for b in [Some(request_body(&x.request)), resp].into_iter().flatten() {
            if !b.bytes.is_empty() {
                *out.entry(sha(&b.bytes)).or_default() += 1;
            }
        }
    }
    out
}
