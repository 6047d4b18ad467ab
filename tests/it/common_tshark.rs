//! Test helper: build `Exchange`s from a pcap with tshark (bodies from
//! `--export-objects http`, times, streams and header lines from `-T fields`). A stand-in
//! for agentwire's own pcap reader, which can later replace `exchanges_from_pcap`.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use chrono::{DateTime, TimeZone, Utc};

use agentwire::trace::{Body, Exchange, HttpRequest, HttpResponse, Source, SourceKind};

/// True when tshark can be run.
pub fn have_tshark() -> bool {
    Command::new("tshark")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success())
}

struct Msg {
    frame: u64,
    time: DateTime<Utc>,
    stream: u64,
    method: String,
    uri: String,
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn time(epoch: &str) -> DateTime<Utc> {
    let (s, frac) = epoch.split_once('.').unwrap_or((epoch, "0"));
    let nanos: u32 = format!("{frac:0<9}")[..9].parse().unwrap();
    Utc.timestamp_opt(s.parse().unwrap(), nanos).unwrap()
}

/// Every HTTP exchange of `pcap`, requests paired with the next response on the same TCP
/// stream, ids in request order. Panics with tshark's message when tshark fails.
pub fn exchanges_from_pcap(pcap: &Path) -> Vec<Exchange> {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .arg("-q")
        .arg("--export-objects")
        .arg(format!("http,{}", dir.path().display()))
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark export failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args([
            "-Y",
            "http.request or http.response",
            "-T",
            "fields",
            "-E",
            "separator=/t",
        ])
        .args(["-E", "aggregator=\u{1f}"])
        .args([
            "-e",
            "frame.number",
            "-e",
            "frame.time_epoch",
            "-e",
            "tcp.stream",
        ])
        .args([
            "-e",
            "http.request.method",
            "-e",
            "http.request.uri",
            "-e",
            "http.response.code",
        ])
        .args(["-e", "http.request.line", "-e", "http.response.line"])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark fields failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Exported objects in export order: NAME, NAME(1), NAME(2), ...
    let mut files: Vec<(usize, std::path::PathBuf)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            let n = name
                .rsplit_once('(')
                .and_then(|(_, r)| r.strip_suffix(')'))
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            (n, p)
        })
        .collect();
    files.sort();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut msgs: Vec<Msg> = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let lines = if f[3].is_empty() { f.get(7) } else { f.get(6) };
        let headers = lines
            .map(|l| {
                l.split('\u{1f}')
                    .filter_map(|h| h.trim_end_matches("\\r\\n").split_once(": "))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        msgs.push(Msg {
            frame: f[0].parse().unwrap(),
            time: time(f[1]),
            stream: f[2].parse().unwrap(),
            method: f[3].to_string(),
            uri: f[4].to_string(),
            status: f[5].parse().ok(),
            headers,
            body: Vec::new(),
        });
    }
    assert_eq!(
        msgs.len(),
        files.len(),
        "tshark exported {} objects for {} HTTP messages",
        files.len(),
        msgs.len()
    );
    for (m, (_, p)) in msgs.iter_mut().zip(&files) {
        m.body = std::fs::read(p).unwrap();
    }
    let mut exchanges: Vec<Exchange> = Vec::new();
    let mut used = vec![false; msgs.len()];
    for i in 0..msgs.len() {
        if msgs[i].method.is_empty() {
            continue;
        }
        let req = &msgs[i];
        let resp = (i + 1..msgs.len())
            .find(|&k| !used[k] && msgs[k].method.is_empty() && msgs[k].stream == req.stream);
        if let Some(k) = resp {
            used[k] = true;
        }
        let mut source = Source::new(SourceKind::Pcap);
        source.file = Some(pcap.display().to_string());
        source.connection = Some(req.stream);
        source.frames = Some((req.frame, resp.map_or(req.frame, |k| msgs[k].frame)));
        exchanges.push(Exchange {
            id: exchanges.len() as u64,
            started_at: req.time,
            ended_at: resp.map(|k| msgs[k].time),
            source,
            request: HttpRequest {
                method: req.method.clone(),
                target: req.uri.clone(),
                version: "HTTP/1.1".into(),
                headers: req.headers.clone().into(),
                body: Body::new(req.body.clone()),
            },
            response: resp.map(|k| HttpResponse {
                status: msgs[k].status.unwrap_or(0),
                version: "HTTP/1.1".into(),
                headers: msgs[k].headers.clone().into(),
                body: Body::new(msgs[k].body.clone()),
                chunks: Vec::new(),
                first_byte_at: None,
            }),
            error: None,
            notes: Default::default(),
            websocket: None,
        });
    }
    exchanges
}
