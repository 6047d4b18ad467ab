//! Damaged capture files through `agentwire pcap`: gzip'd captures cut short or followed
//! by bytes that are not gzip keep every packet that decompressed, the warning keeps the
//! decoder's own error, and a file cut inside its header says so. Built in a tempdir from
//! the shared captures (read by path, never copied); expected packet counts from tshark on
//! the bytes the cut file holds, expected errors from flate2 decoding the same bytes.

use std::io::{Read, Write};
use std::path::Path;

use serde_json::Value;

use crate::common::{agentwire, shared_capture};

/// What `agentwire pcap FILE` gave: exit code, summary packets and exchanges, stderr.
struct Run {
    code: i32,
    packets: u64,
    exchanges: u64,
    stderr: String,
}

fn pcap(file: &Path) -> Run {
    let out = file.with_extension("jsonl");
    let o = agentwire(&[
        "pcap",
        file.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--force",
        "--format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let summary: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{}: no JSON summary ({e}): {stderr}", file.display()));
    Run {
        code: o.status.code().unwrap(),
        packets: summary["packets"].as_u64().unwrap(),
        exchanges: summary["exchanges"].as_u64().unwrap(),
        stderr,
    }
}

/// Packets tshark reads from `file` (a cut file: the ones before the cut).
fn tshark_packets(file: &Path) -> u64 {
    let o = std::process::Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark must be installed for these tests (apt-get install tshark)");
    String::from_utf8_lossy(&o.stdout).lines().count() as u64
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// What flate2 decompresses from `gz` before its first error, and that error's text.
fn gunzip_until_error(gz: &[u8]) -> (Vec<u8>, Option<String>) {
    let mut d = flate2::read::MultiGzDecoder::new(gz);
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match d.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(e.to_string())),
        }
    }
}

/// `gz` damaged four ways: its ISIZE trailer cut, cut at 1/2 and 2/3 of its length,
/// followed by bytes that are not gzip.
fn damaged(gz: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut trailing = gz.to_vec();
    trailing.extend_from_slice(b"garbage after the gzip stream\n");
    vec![
        ("cut4", gz[..gz.len() - 4].to_vec()),
        ("half", gz[..gz.len() / 2].to_vec()),
        ("twothirds", gz[..gz.len() * 2 / 3].to_vec()),
        ("trailing", trailing),
    ]
}

/// Each damaged gzip of `capture` keeps the packets tshark reads from what flate2
/// decompresses of it, exits 3, and names the file and flate2's own error.
fn check_damaged_gzips(capture: &str) {
    let dir = tempfile::tempdir().unwrap();
    let plain_path = shared_capture(capture);
    let plain = std::fs::read(&plain_path).unwrap();
    let whole = pcap(&plain_path);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    assert_eq!(whole.packets, tshark_packets(&plain_path), "{capture}");
    let gz = gzip(&plain);
    let full = dir.path().join("full.pcap.gz");
    std::fs::write(&full, &gz).unwrap();
    let r = pcap(&full);
    assert_eq!(
        (r.code, r.packets, r.exchanges),
        (0, whole.packets, whole.exchanges),
        "{}",
        r.stderr
    );
    for (what, bytes) in damaged(&gz) {
        let path = dir.path().join(format!("{what}.pcap.gz"));
        std::fs::write(&path, &bytes).unwrap();
        let (content, error) = gunzip_until_error(&bytes);
        let error = error.unwrap_or_else(|| panic!("{what}: flate2 read it whole"));
        let prefix = dir.path().join(format!("{what}-content.pcap"));
        std::fs::write(&prefix, &content).unwrap();
        let want = tshark_packets(&prefix);
        let r = pcap(&path);
        assert_eq!(r.code, 3, "{capture} {what}: {}", r.stderr);
        assert_eq!(r.packets, want, "{capture} {what}: {}", r.stderr);
        let name = path.display().to_string();
        assert!(
            r.stderr
                .contains(&format!("cannot read capture {name} at byte "))
                && r.stderr.contains(&format!(": {error} (the {want} packets")),
            "{capture} {what}: want flate2's {error:?}: {}",
            r.stderr
        );
        assert!(!r.stderr.contains("read failed"), "{}", r.stderr);
        if content.len() == plain.len() {
            // Every byte decompressed: every packet and exchange kept, the error at the end.
            assert_eq!(r.exchanges, whole.exchanges, "{capture} {what}");
            assert!(
                r.stderr.contains(&format!("at byte {}:", plain.len())),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn small_gzip_capture_cut_short_or_with_trailing_bytes_keeps_its_packets() {
    // 48 KB: the whole capture decompresses inside the first read (64 KiB).
    check_damaged_gzips("claude-code/cc2.1.304-hello.pcap");
}

#[test]
fn large_gzip_capture_cut_short_names_the_decoder_error_not_read_failed() {
    // 360 KB: the error comes after the first read.
    check_damaged_gzips("claude-code/cc2.1.304-bg-job-failed.pcap");
}

#[test]
fn capture_cut_inside_its_header_says_cut_short_not_no_magic_number() {
    let dir = tempfile::tempdir().unwrap();
    let pcap_bytes = std::fs::read(shared_capture("claude-code/cc2.1.304-hello.pcap")).unwrap();
    let ng = std::fs::read(shared_capture(
        "claude-code/cc2.1.304-hello-anyiface.pcapng",
    ))
    .unwrap();
    // The Section Header Block's length (bytes 4..8), in the order its Byte-Order Magic
    // (bytes 8..12) gives (pcapng §4.1).
    let shb_len = {
        let b: [u8; 4] = ng[4..8].try_into().unwrap();
        if ng[8..12] == [0x4d, 0x3c, 0x2b, 0x1a] {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    };
    assert!(shb_len > 100, "the test cuts the pcapng at 100 bytes");
    let cases: [(&str, Vec<u8>, &str, usize, u32); 4] = [
        (
            "cut.pcap",
            pcap_bytes[..20].to_vec(),
            "pcap file header",
            20,
            24,
        ),
        (
            "cut4.pcap",
            pcap_bytes[..4].to_vec(),
            "pcap file header",
            4,
            24,
        ),
        (
            "cut.pcap.gz",
            gzip(&pcap_bytes[..20]),
            "pcap file header",
            20,
            24,
        ),
        (
            "cut.pcapng",
            ng[..100].to_vec(),
            "pcapng section header block",
            100,
            shb_len,
        ),
    ];
    for (file, bytes, header, has, needs) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, &bytes).unwrap();
        let p = path.to_str().unwrap();
        let o = agentwire(&["pcap", p, "-o", "-"]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{file}: {stderr}");
        let want = format!(
            "capture {p} is cut short inside its {header}: it has {has} bytes, the header needs {needs}"
        );
        assert!(stderr.contains(&want), "{file}: {stderr}");
        assert!(stderr.contains("copy it again"), "{stderr}");
        assert!(!stderr.contains("magic number"), "{stderr}");
        // A reading command that opens the capture directly says the same.
        let o = agentwire(&["show", p]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains(&want), "show {file}: {stderr}");
    }
}
