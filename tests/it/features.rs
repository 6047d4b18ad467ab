//! Cargo features: live capture (`libpcap`, on by default) is the only part that links
//! libpcap. CI also runs this binary from a `--no-default-features` build (`.ci/run`), where
//! the `diff` and `analyze` tests must pass and the binary must not need `libpcap.so`.

use std::process::Command;

use crate::common::*;

/// The shared libraries the built `agentwire` needs, as `ldd` lists them.
fn needed_libraries() -> String {
    let o = Command::new("ldd").arg(bin()).output().expect("ldd runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn only_a_build_with_live_capture_links_libpcap() {
    let libs = needed_libraries();
    assert!(libs.contains("libc.so"), "ldd lists libc: {libs}");
    assert_eq!(
        libs.contains("libpcap"),
        cfg!(feature = "libpcap"),
        "libpcap linked iff the libpcap feature is on: {libs}"
    );
}

#[cfg(not(feature = "libpcap"))]
#[test]
fn capture_without_libpcap_says_how_to_get_it() {
    let o = Command::new(bin())
        .args(["capture", "--iface", "lo", "--duration", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("without live capture") && err.contains("agentwire pcap"),
        "{err}"
    );
}
