//! Test input from the real captures without agentwire's pcap reader: tshark exports the
//! request bodies (`--export-objects http`) and prints the request heads; the pairs are
//! checked against `Content-Length` and written as a trace file.

use std::path::{Path, PathBuf};
use std::process::Command;

use agentwire::trace::{Body, Context, Exchange, HttpRequest, Source, SourceKind, TraceWriter};

/// The POST requests of `pcap` as exchanges (ids from 0 in capture order).
pub fn exchanges(pcap: &Path) -> Vec<Exchange> {
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .arg("--export-objects")
        .arg(format!("http,{}", dir.path().display()))
        .output()
        .expect("tshark is installed");
    assert!(
        st.status.success(),
        "tshark export failed for {}",
        pcap.display()
    );
    let mut files: Vec<(usize, Vec<u8>)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let k = name
                .rsplit_once('(')
                .and_then(|(_, r)| r.strip_suffix(')'))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            (k, std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort_by_key(|(k, _)| *k);
    let bodies: Vec<Vec<u8>> = files
        .into_iter()
        .map(|(_, b)| b)
        .filter(|b| b.first() == Some(&b'{'))
        .collect();
    let heads = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args(["-Y", "http.request", "-T", "fields"])
        .args([
            "-e",
            "frame.number",
            "-e",
            "http.request.method",
            "-e",
            "http.request.uri",
        ])
        .args(["-e", "http.request.line", "-E", "aggregator=\u{1f}"])
        .output()
        .unwrap();
    let text = String::from_utf8(heads.stdout).unwrap();
    let heads: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        heads.len(),
        bodies.len(),
        "{}: requests vs exported bodies",
        pcap.display()
    );
    heads
        .iter()
        .zip(bodies)
        .enumerate()
        .map(|(i, (line, body))| {
            let f: Vec<&str> = line.splitn(4, '\t').collect();
            let headers: Vec<(String, String)> = f[3]
                .split('\u{1f}')
                .filter_map(|h| {
                    let h = h.trim_end_matches("\\r\\n");
                    h.split_once(": ")
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                })
                .collect();
            let cl: usize = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .map(|(_, v)| v.parse().unwrap())
                .unwrap();
            assert_eq!(
                cl,
                body.len(),
                "{} request {i}: body vs Content-Length",
                pcap.display()
            );
            let frame: u64 = f[0].parse().unwrap();
            let mut source = Source::new(SourceKind::Pcap);
            source.file = Some(pcap.display().to_string());
            source.frames = Some((frame, frame));
            Exchange {
                id: i as u64,
                started_at: chrono::DateTime::UNIX_EPOCH,
                ended_at: None,
                source,
                request: HttpRequest {
                    method: f[1].to_string(),
                    target: f[2].to_string(),
                    version: "HTTP/1.1".into(),
                    headers: headers.into(),
                    body: Body::new(body),
                },
                response: None,
                error: None,
                notes: Default::default(),
                websocket: None,
            }
        })
        .collect()
}

/// Write the requests of `pcap` (a name under `../shared/captures/claude-code/`) as a trace
/// file in `dir`; returns its path.
pub fn trace(dir: &Path, name: &str) -> PathBuf {
    let pcap = crate::common::shared_capture(&format!("claude-code/{name}"));
    let path = dir.join(format!("{name}.jsonl"));
    let mut w = TraceWriter::create(&path, &Context::new()).unwrap();
    for x in exchanges(&pcap) {
        w.write_exchange(&x).unwrap();
    }
    drop(w);
    path
}
