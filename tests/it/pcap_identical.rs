//! Must-show 3 of the speed work: the faster `pcap` path (mapped input, a writer thread,
//! exchanges redacted in place, bodies validated once) writes the same trace, byte for
//! byte, as before on every shared capture. Two references:
//! - the previous path's output, as SHA-256 digests in `pcap_reference.sha256`, written by
//!   agentwire at the commit the file names (issue 17's output) with
//!   `scripts/pcap-reference-digests.sh` — a digest, so no capture content enters the
//!   repository;
//! - `--threads 1`, everything on one thread, which must equal the default.
//!
//! Every capture under the shared folder must be listed, so a new capture cannot slip by
//! unchecked.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::{bin, files_under, sha256_hex, shared_capture};

/// The trace of `agentwire pcap NAME` run in the capture's folder (so `source.file` is
/// the bare file name), with `extra` flags.
fn trace_of(capture: &Path, extra: &[&str]) -> Vec<u8> {
    let o = Command::new(bin())
        .current_dir(capture.parent().unwrap())
        .arg("pcap")
        .arg(capture.file_name().unwrap())
        .args(["-o", "-"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}: {}",
        capture.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

#[test]
fn pcap_traces_equal_the_previous_path_byte_for_byte_on_every_shared_capture() {
    let reference: BTreeMap<String, String> = include_str!("pcap_reference.sha256")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (digest, rel) = l.split_once("  ").expect("`DIGEST  PATH` lines");
            (rel.to_string(), digest.to_string())
        })
        .collect();
    let root = shared_capture("");
    let mut captures: Vec<_> = files_under(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    captures.sort();
    assert!(captures.len() >= 30, "{} captures", captures.len());
    let mut checked = 0;
    for c in &captures {
        let rel = c
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let want = reference.get(&rel).unwrap_or_else(|| {
            panic!("{rel} has no reference digest: run scripts/pcap-reference-digests.sh (see its header) and add its line to tests/it/pcap_reference.sha256")
        });
        let fast = trace_of(c, &[]);
        assert!(fast.starts_with(b"{\"type\":\"trace\""), "{rel}");
        assert_eq!(
            &sha256_hex(&fast),
            want,
            "{rel}: the trace differs from the previous path's"
        );
        let single = trace_of(c, &["--threads", "1"]);
        assert!(single == fast, "{rel}: --threads 1 wrote another trace");
        checked += 1;
    }
    assert_eq!(
        checked,
        reference.len(),
        "every reference capture was checked"
    );
}
