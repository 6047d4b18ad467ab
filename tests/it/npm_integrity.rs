//! The cold-cache download of a published CLI (`record --cli claude-code@VERSION` with an
//! empty agentwire cache and an empty npm cache), by the real `npm` client against a
//! registry on loopback (`npm_config_registry`): a tarball that matches the registry's
//! published `dist.integrity` is unpacked and run; a tampered one (the mirror serves other
//! bytes, with metadata to match them for `npm pack`) is refused with agentwire's own
//! integrity message, and nothing is installed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use base64::Engine;
use sha2::{Digest, Sha512};

use crate::common::bin;

const VERSION: &str = "9.9.9-test.1";

/// A gzipped npm tarball with `package/package.json` and an executable `package/claude`.
fn tarball(script: &str) -> Vec<u8> {
    let pkg = package();
    let mut t = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (name, bytes, mode) in [
        (
            "package/package.json",
            format!(r#"{{"name":"{pkg}","version":"{VERSION}"}}"#).into_bytes(),
            0o644,
        ),
        ("package/claude", script.as_bytes().to_vec(), 0o755),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(mode);
        h.set_mtime(1_800_000_000);
        h.set_cksum();
        t.append_data(&mut h, name, &bytes[..]).unwrap();
    }
    t.into_inner().unwrap().finish().unwrap()
}

fn package() -> String {
    format!(
        "@anthropic-ai/claude-code-{}",
        agentwire::capture::npm::platform()
    )
}

/// Subresource Integrity of bytes (computed here, not by agentwire).
fn sri(bytes: &[u8]) -> String {
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha512::digest(bytes))
    )
}

/// A registry on loopback for one package version. `npm view` asks for the full packument
/// (`Accept: application/json`) and gets `published` as the integrity; `npm pack` asks for
/// the abbreviated one (`application/vnd.npm.install-v1+json`) and gets `served`'s; the
/// tarball URL serves `tarball`. Returns the registry URL and the request log.
fn registry(
    published: String,
    served: String,
    tarball: Vec<u8>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    let base = url.clone();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { break };
            let mut r = BufReader::new(c.try_clone().unwrap());
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                continue;
            }
            let mut accept = String::new();
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("accept:") {
                    accept = v.trim().to_string();
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("").to_string();
            seen.lock().unwrap().push(format!("{path} {accept}"));
            let (ct, body) = if path.ends_with(".tgz") {
                ("application/octet-stream", tarball.clone())
            } else if path.to_ascii_lowercase().contains("claude-code-") {
                let integrity = if accept.contains("vnd.npm.install-v1") {
                    &served
                } else {
                    &published
                };
                let doc = serde_json::json!({
                    "name": package(),
                    "dist-tags": {"latest": VERSION},
                    "versions": {VERSION: {
                        "name": package(), "version": VERSION,
                        "dist": {"integrity": integrity, "tarball": format!("{base}claude.tgz")}
                    }}
                });
                ("application/json", doc.to_string().into_bytes())
            } else {
                let _ = c.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
                continue;
            };
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = c.write_all(&body);
            let mut rest = Vec::new();
            let _ = r.read_to_end(&mut rest);
        }
    });
    (url, log)
}

/// `agentwire record --cli claude-code@VERSION` with empty caches under `dir`.
fn record(dir: &Path, registry: &str) -> std::process::Output {
    Command::new(bin())
        .args(["record", "--route", "base-url", "--force", "-o"])
        .arg(dir.join("t.jsonl"))
        .arg("--cli")
        .arg(format!("claude-code@{VERSION}"))
        .args(["--", "-p", "hi"])
        .env("AGENTWIRE_CACHE_DIR", dir.join("aw-cache"))
        .env("npm_config_cache", dir.join("npm-cache"))
        .env("npm_config_registry", registry)
        .env("npm_config_userconfig", dir.join("npmrc"))
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap()
}

fn installed(dir: &Path) -> std::path::PathBuf {
    dir.join("aw-cache/cli/claude-code")
        .join(VERSION)
        .join(agentwire::capture::npm::platform())
}

#[test]
fn a_tampered_tarball_on_a_cold_download_is_refused_and_nothing_is_installed() {
    let genuine = tarball("#!/bin/sh\necho genuine claude \"$@\"\n");
    let tampered = tarball("#!/bin/sh\necho tampered claude \"$@\"\n");
    let (published, actual) = (sri(&genuine), sri(&tampered));
    assert_ne!(published, actual);

    let dir = tempfile::tempdir().unwrap();
    let (url, log) = registry(published.clone(), actual.clone(), tampered);
    let o = record(dir.path(), &url);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let want = format!(
        "integrity check failed for {}@{VERSION}: registry says {published}, downloaded tarball is {actual}; the download was corrupted or tampered with — retry",
        package()
    );
    assert!(err.contains(&want), "{err}");
    assert!(!installed(dir.path()).exists(), "nothing was installed");
    assert!(
        !err.contains("tampered claude"),
        "the tampered CLI never ran"
    );
    let log = log.lock().unwrap();
    assert!(
        log.iter().any(|l| l.contains(".tgz")),
        "the tarball was downloaded: {log:?}"
    );
}

#[test]
fn a_genuine_tarball_on_a_cold_download_is_verified_unpacked_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran.txt");
    let script = format!("#!/bin/sh\necho genuine \"$@\" > '{}'\n", ran.display());
    let genuine = tarball(&script);
    let (url, _) = registry(sri(&genuine), sri(&genuine), genuine.clone());
    let o = record(dir.path(), &url);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("claude-code@{VERSION}: exit 0")),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "genuine -p hi\n");
    let dest = installed(dir.path());
    assert_eq!(
        std::fs::read_to_string(dest.join("integrity")).unwrap(),
        sri(&genuine)
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("claude")).unwrap(),
        script
    );
}
