//! Imports of files written by the real tools (issue 12, must-show 3 and 4): mitmproxy's
//! `hardump`, claude-tap and claude-trace, each in front of `agentwire serve`, so the
//! server's own trace is the reference for the bodies; and `export --har` read back by
//! agentwire and by mitmproxy.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use agentwire::input::open_trace;
use agentwire::trace::{header_value as header, Exchange, Trace};
use serde_json::Value;

use crate::common::*;
use crate::peers::{self, Running};

/// Request bodies a client sends: streaming and not, odd spacing and escapes (bytes must
/// survive as sent), non-ASCII text.
fn bodies() -> Vec<Vec<u8>> {
    vec![
        messages_body(3000, 1),
        br#"{"model":"claude-test","max_tokens":64,"stream":false,"messages":[{"role":"user","content":"caf\u00e9 \u2014 stra\u00dfe"}]}"#.to_vec(),
        "{\"model\": \"claude-test\", \"max_tokens\": 8,\"stream\":true, \"messages\": [{\"role\": \"user\", \"content\": \"naïve ✓\"}]}".as_bytes().to_vec(),
    ]
}

/// POST each body to `url` (with a fake key that must not reach any trace).
fn send(url: &str, bodies: &[Vec<u8>]) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let c = reqwest::Client::new();
        for b in bodies {
            let r = c
                .post(format!("{url}/v1/messages?beta=true"))
                .header("content-type", "application/json")
                .header("x-api-key", TEST_KEY)
                .header("anthropic-version", "2023-06-01")
                .body(b.clone())
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 200);
            r.bytes().await.unwrap();
        }
    });
}

/// `(request body sha256, response body sha256)` by the server's request id.
fn digests(t: &Trace) -> BTreeMap<String, (String, String)> {
    t.exchanges
        .iter()
        .filter_map(|x| {
            let r = x.response.as_ref()?;
            Some((
                header(&r.headers, "request-id")?.to_string(),
                (x.request.body.sha256(), r.body.sha256()),
            ))
        })
        .collect()
}

fn import_file(input: &Path) -> Trace {
    let out = input.with_extension("imported.jsonl");
    let o = agentwire(&[
        "import",
        "--force",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "import {}: {}",
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_key(&out);
    open_trace(&out).unwrap()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Must-show 3: a HAR written by mitmdump in front of `agentwire serve` imports to the
/// same bodies (SHA-256) as the server's own trace; `export --har` re-imports to the same
/// bodies, binary ones included, and mitmproxy reads the exported file.
#[test]
fn har_from_mitmdump_has_the_same_bodies_as_agentwires_trace_and_export_round_trips() {
    let mitmdump = peers::venv_bin("mitmdump");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("server.jsonl");
    let (server, url) = peers::serve(&trace);
    let har = dir.path().join("mitm.har");
    let port = free_port();
    let mitm = Running(
        Command::new(&mitmdump)
            .args([
                "-q",
                "--listen-host",
                "127.0.0.1",
                "--listen-port",
                &port.to_string(),
            ])
            .arg("--mode")
            .arg(format!("reverse:{url}"))
            .arg("--set")
            .arg(format!("hardump={}", har.display()))
            .arg("--set")
            .arg(format!("confdir={}", dir.path().join("mitm").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    peers::wait_for_port(port);
    send(&format!("http://127.0.0.1:{port}"), &bodies());
    peers::stop(mitm); // SIGINT: mitmdump writes the HAR on shutdown
                       // a binary body, straight to the server (mitmproxy's HAR would re-encode it)
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        reqwest::Client::new()
            .post(format!("{url}/v1/messages"))
            .header("content-type", "application/json")
            .body(vec![0xff, 0x00, b'{', 0x80])
            .send()
            .await
            .unwrap();
    });
    peers::stop(server);
    let own = open_trace(&trace).unwrap();
    let imported = import_file(&har);
    assert_eq!(imported.exchanges.len(), 3);
    assert!(imported
        .exchanges
        .iter()
        .all(|x| x.source.format.as_deref() == Some("har")));
    let theirs = digests(&imported);
    let mine = digests(&own);
    assert_eq!(theirs.len(), 3);
    for (id, d) in &theirs {
        assert_eq!(
            Some(d),
            mine.get(id),
            "{id}: bodies differ between the HAR and agentwire's trace"
        );
    }
    for x in &imported.exchanges {
        assert!(!header(&x.request.headers, "x-api-key")
            .unwrap()
            .contains(TEST_KEY));
    }

    // export --har, re-import: the same bodies, the binary one too
    let exported = dir.path().join("export.har");
    let o = agentwire(&[
        "export",
        "--har",
        trace.to_str().unwrap(),
        "-o",
        exported.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_key(&exported);
    let back = import_file(&exported);
    assert_eq!(back.exchanges.len(), own.exchanges.len());
    for (a, b) in own.exchanges.iter().zip(&back.exchanges) {
        assert_eq!(a.request.body.sha256(), b.request.body.sha256());
        assert_eq!(
            a.response.as_ref().map(|r| r.body.sha256()),
            b.response.as_ref().map(|r| r.body.sha256())
        );
        assert_eq!(a.request.target, b.request.target);
    }
    assert!(
        own.exchanges
            .iter()
            .any(|x| x.request.body.as_str().is_none()),
        "a binary body was exported"
    );

    // mitmproxy reads the exported HAR: one flow per exchange, same methods and paths
    let o = Command::new(&mitmdump)
        .args(["-n", "--set", "flow_detail=1"])
        .arg("--set")
        .arg(format!("confdir={}", dir.path().join("mitm").display()))
        .arg("-r")
        .arg(&exported)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "mitmdump -r: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let listing = String::from_utf8_lossy(&o.stdout);
    let flows = listing
        .lines()
        .filter(|l| l.contains("/v1/messages"))
        .count();
    assert_eq!(flows, own.exchanges.len(), "{listing}");
}

/// Must-show 4: claude-tap's reverse proxy in front of `agentwire serve`; its default
/// export (the compact bundle) and its `--format json` export import to the same request
/// bodies as the server saw (as JSON: claude-tap keeps the parsed body, not the bytes).
#[test]
fn claude_tap_export_imports_to_the_same_bodies() {
    let tap = peers::venv_bin("claude-tap");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("server.jsonl");
    let (server, url) = peers::serve(&trace);
    let port = free_port();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let db = dir.path().join("tap.sqlite");
    let banner_file = dir.path().join("tap.out");
    let child = Command::new(&tap)
        .args([
            "--tap-no-launch",
            "--tap-host",
            "127.0.0.1",
            "--tap-port",
            &port.to_string(),
        ])
        .args(["--tap-target", &url, "--tap-no-live", "--tap-no-open"])
        .env("HOME", &home)
        .env("CLOUDTAP_DB", &db)
        .env("PYTHONUNBUFFERED", "1")
        .current_dir(dir.path())
        .stdout(Stdio::from(std::fs::File::create(&banner_file).unwrap()))
        .stderr(Stdio::from(
            std::fs::File::create(banner_file.with_extension("err")).unwrap(),
        ))
        .spawn()
        .unwrap();
    let tap_proc = Running(child);
    peers::wait_for_port(port);
    send(&format!("http://127.0.0.1:{port}"), &bodies());
    peers::stop(tap_proc);
    peers::stop(server);
    // the banner names the session (on stdout or stderr, depending on the version)
    let banner = std::fs::read_to_string(&banner_file).unwrap()
        + &std::fs::read_to_string(banner_file.with_extension("err")).unwrap();
    let session = banner
        .lines()
        .find_map(|l| l.split("Trace session: ").nth(1))
        .unwrap_or_else(|| panic!("no session id in claude-tap's output: {banner}"))
        .trim()
        .to_string();
    let own = open_trace(&trace).unwrap();
    let sent: Vec<Value> = own
        .exchanges
        .iter()
        .map(|x| json(&x.request.body.bytes))
        .collect();
    assert_eq!(sent.len(), 3);
    for (args, name) in [
        (vec![], "bundle.ctap.json"),
        (vec!["--format", "json"], "export.json"),
    ] {
        let out = dir.path().join(name);
        let o = Command::new(&tap)
            .args(["export", &session, "-o"])
            .arg(&out)
            .args(&args)
            .env("HOME", &home)
            .env("CLOUDTAP_DB", &db)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "claude-tap export: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let imported = import_file(&out);
        let got: Vec<Value> = imported
            .exchanges
            .iter()
            .map(|x| json(&x.request.body.bytes))
            .collect();
        if args.is_empty() {
            assert_eq!(got, sent, "{name}: the bundle keeps whole bodies");
            let ids = |t: &Trace| -> Vec<String> {
                t.exchanges
                    .iter()
                    .map(|x| {
                        header(&x.response.as_ref().unwrap().headers, "request-id")
                            .unwrap()
                            .to_string()
                    })
                    .collect()
            };
            assert_eq!(ids(&imported), ids(&own));
        } else {
            // the json export keeps model, messages, system and tools only
            let keep = |v: &Value| -> Value {
                let o = v.as_object().unwrap();
                Value::Object(
                    o.iter()
                        .filter(|(k, _)| {
                            ["model", "messages", "system", "tools"].contains(&k.as_str())
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            };
            assert_eq!(got, sent.iter().map(keep).collect::<Vec<_>>(), "{name}");
        }
        assert!(imported
            .exchanges
            .iter()
            .all(|x| x.source.format.as_deref() == Some("claude-tap")));
        assert!(imported
            .exchanges
            .iter()
            .all(|x| !x.source.missing.is_empty()));
    }
}

/// claude-trace's interceptor (from npm) inside a Node client talking to `agentwire
/// serve`: its log imports to the same request bodies and event streams, byte for byte
/// (the client sends `JSON.stringify` output, which claude-trace's re-serialization
/// reproduces).
#[test]
fn claude_trace_log_imports_to_the_same_bodies() {
    let loader = peers::claude_trace_loader();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("server.jsonl");
    let (server, url) = peers::serve(&trace);
    let client = dir.path().join("client.mjs");
    std::fs::write(
        &client,
        r#"const base = process.env.ANTHROPIC_BASE_URL;
const bodies = [
  {model: "claude-test", max_tokens: 50, stream: true, messages: [{role: "user", content: "caf\u00e9 \"q\" one"}]},
  {model: "claude-test", max_tokens: 50, stream: false, messages: [{role: "user", content: "two"}]},
  {model: "claude-test", max_tokens: 9, stream: true, system: [{type: "text", text: "s"}], messages: [{role: "user", content: "three ✓"}]},
];
for (const b of bodies) {
  const r = await fetch(base + "/v1/messages?beta=true", {method: "POST",
    headers: {"content-type": "application/json", "x-api-key": process.env.KEY}, body: JSON.stringify(b)});
  await r.text();
}
"#,
    )
    .unwrap();
    let o = Command::new("node")
        .arg("--require")
        .arg(&loader)
        .arg(&client)
        .env("ANTHROPIC_BASE_URL", &url)
        .env("KEY", TEST_KEY)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "node: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    peers::stop(server);
    let log = std::fs::read_dir(dir.path().join(".claude-trace"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("claude-trace wrote a log");
    let own = open_trace(&trace).unwrap();
    let imported = import_file(&log);
    assert_eq!(imported.exchanges.len(), 3);
    assert_eq!(digests(&imported), digests(&own));
    let x: &Exchange = &imported.exchanges[0];
    assert_eq!(x.source.format.as_deref(), Some("claude-trace"));
    assert!(!header(&x.request.headers, "x-api-key")
        .unwrap()
        .contains("sk-ant-api"));
}
