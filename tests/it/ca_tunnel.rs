//! `agentwire ca` and `serve --intercept --tunnel-others` through the binary, checked with
//! another tool where one exists: the certificate `ca` prints is read by `openssl x509`,
//! and a leaf minted by `serve --intercept` verifies against it in `openssl s_client`
//! (through the proxy's CONNECT). Other hosts are tunnelled byte for byte with
//! `--tunnel-others` and refused without it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agentwire::input::open_trace;

use crate::common::*;

fn ca(data: &Path, args: &[&str]) -> String {
    let o = Command::new(bin())
        .arg("ca")
        .args(args)
        .env("AGENTWIRE_DATA_DIR", data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `openssl x509 -noout ARGS` on a PEM file.
fn x509(pem: &Path, args: &[&str]) -> String {
    let o = Command::new("openssl")
        .args(["x509", "-noout", "-in"])
        .arg(pem)
        .args(args)
        .output()
        .expect("openssl is installed (make deps)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn ca_prints_a_ca_certificate_openssl_reads_and_rotate_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let pem = ca(data, &[]);
    let path = ca(data, &["--path"]);
    let file = data.join("ca/ca.pem");
    assert_eq!(path, format!("{}\n", file.display()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), pem);
    assert_eq!(ca(data, &[]), pem, "created once, then reused");
    let text = x509(&file, &["-subject", "-ext", "basicConstraints,keyUsage"]);
    assert!(text.contains("agentwire local interception CA"), "{text}");
    assert!(text.contains("CA:TRUE"), "{text}");
    assert!(text.contains("Certificate Sign"), "{text}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(data.join("ca/ca.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the CA key is private");

    let fp = x509(&file, &["-fingerprint", "-sha256"]);
    assert_eq!(ca(data, &["--rotate"]), format!("{}\n", file.display()));
    let rotated = x509(&file, &["-fingerprint", "-sha256"]);
    assert_ne!(fp, rotated, "a new CA");
    assert_ne!(ca(data, &[]), pem);
}

/// The leaf the interceptor mints for api.anthropic.com verifies against the certificate
/// `agentwire ca` printed, in openssl's own verifier (reached through the CONNECT proxy).
#[test]
fn an_intercepted_hosts_leaf_verifies_against_the_printed_ca_in_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let pem = dir.path().join("trusted.pem");
    std::fs::write(&pem, ca(&data, &[])).unwrap();
    let icpt = ServeProcess::start(
        &[
            "-o",
            dir.path().join("t.jsonl").to_str().unwrap(),
            "--intercept",
        ],
        &[("AGENTWIRE_DATA_DIR", &data)],
    );
    let s_client = |ca_file: &Path| {
        let o = Command::new("openssl")
            .args(["s_client", "-brief", "-verify_return_error", "-proxy"])
            .arg(icpt.addr().to_string())
            .args([
                "-connect",
                "api.anthropic.com:443",
                "-servername",
                "api.anthropic.com",
                "-verify_hostname",
                "api.anthropic.com",
                "-CAfile",
            ])
            .arg(ca_file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, err) = s_client(&pem);
    assert!(ok, "{err}");
    assert!(err.contains("Verification: OK"), "{err}");
    // Another CA's certificate does not verify it.
    let other = tempfile::tempdir().unwrap();
    let other_pem = other.path().join("other.pem");
    std::fs::write(&other_pem, ca(other.path(), &[])).unwrap();
    let (ok, err) = s_client(&other_pem);
    assert!(!ok, "verified against an unrelated CA: {err}");
    icpt.stop();
}

/// A one-connection echo server: reads `n` bytes and writes them back.
fn echo(n: usize) -> (u16, std::thread::JoinHandle<()>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut b = vec![0u8; n];
        c.read_exact(&mut b).unwrap();
        c.write_all(&b).unwrap();
    });
    (port, h)
}

use crate::connect::connect;

#[test]
fn tunnel_others_passes_other_hosts_through_and_without_it_they_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let trace = dir.path().join("tunnel.jsonl");
    let serve = ServeProcess::start(
        &[
            "-o",
            trace.to_str().unwrap(),
            "--intercept",
            "--tunnel-others",
        ],
        &[("AGENTWIRE_DATA_DIR", &data)],
    );
    let (port, echoer) = echo(11);
    let (code, mut s) = connect(serve.addr(), &format!("127.0.0.1:{port}"));
    assert_eq!(code, 200);
    s.write_all(b"hello world").unwrap();
    let mut back = [0u8; 11];
    s.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"hello world", "bytes pass untouched");
    echoer.join().unwrap();
    drop(s);
    std::thread::sleep(Duration::from_millis(300));
    serve.stop();
    let t = open_trace(&trace).unwrap();
    let x = t
        .exchanges
        .iter()
        .find(|x| x.request.method == "CONNECT")
        .expect("the tunnel is logged");
    assert_eq!(x.notes["tunnel"]["host"], "127.0.0.1");
    assert_eq!(x.notes["tunnel"]["port"], port);
    assert_eq!(x.notes["tunnel"]["bytes_up"], 11);
    assert_eq!(x.notes["tunnel"]["bytes_down"], 11);
    assert!(x.error.is_none());

    // Without --tunnel-others the same CONNECT is refused, and the trace says why.
    let trace = dir.path().join("refused.jsonl");
    let serve = ServeProcess::start(
        &["-o", trace.to_str().unwrap(), "--intercept"],
        &[("AGENTWIRE_DATA_DIR", &data)],
    );
    let (code, _) = connect(serve.addr(), &format!("127.0.0.1:{port}"));
    assert_eq!(code, 403);
    serve.stop();
    let t = open_trace(&trace).unwrap();
    let e = t.exchanges[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "refused_connect");
    assert!(e.message.contains("--tunnel-others"), "{}", e.message);

    // --tunnel-others needs --intercept: a usage error.
    let o = Command::new(bin())
        .args(["serve", "--tunnel-others"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--intercept"));
}
