//! `serve --intercept generativelanguage.googleapis.com` with real Gemini CLI (issue 29,
//! "`--intercept` covers generativelanguage.googleapis.com"): the CLI is given no base URL,
//! only the proxy and agentwire's CA as Node takes them (`HTTPS_PROXY`,
//! `NODE_EXTRA_CA_CERTS`; `agents.md` in the shared folder), so its requests go to Google's
//! host through agentwire's CONNECT proxy, which terminates TLS and answers as the Gemini
//! API. Checked: the answer reached the CLI, the exchanges came through the tunnel to that
//! host, and the paths, models and tool counts an independent reader
//! (`independent/gemini_body.py`, Python) finds in the bodies as sent.

use std::process::Command;

use serde_json::Value;

use agentwire::api::{Dialect, MessagesRequest};
use agentwire::capture::npm::{self, CliSpec};
use agentwire::input::open_trace;

use crate::common::*;

/// The version `gemini.rs` records (so the CLI is shared through agentwire's CLI cache).
const GEMINI: &str = "gemini@0.61.0";
const HOST: &str = "generativelanguage.googleapis.com";

#[test]
fn gemini_cli_through_the_intercepting_proxy_reaches_the_fake_gemini_api() {
    let dir = tempfile::tempdir().unwrap();
    let (data, home, work) = (
        dir.path().join("data"),
        dir.path().join("home"),
        dir.path().join("work"),
    );
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        agentwire::capture::agent::GEMINI_SETTINGS,
    )
    .unwrap();
    let cli = npm::ensure(&CliSpec::parse(GEMINI).unwrap(), &|_| {}).unwrap();
    let trace = dir.path().join("t.jsonl");
    let serve = ServeProcess::start(
        &["-o", trace.to_str().unwrap(), "--intercept", HOST],
        &[("AGENTWIRE_DATA_DIR", &data)],
    );
    // No GOOGLE_GEMINI_BASE_URL: the CLI goes to Google's own host, through the proxy.
    let o = Command::new("timeout")
        .arg("120")
        .arg(&cli)
        .args(["-p", "hello"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap())
        .env("HOME", &home)
        .env("GEMINI_API_KEY", agentwire::capture::agent::FAKE_GEMINI_KEY)
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("HTTPS_PROXY", &serve.url)
        .env("NODE_EXTRA_CA_CERTS", data.join("ca/ca.pem"))
        .current_dir(&work)
        .output()
        .unwrap();
    let (_, printed) = serve.stop();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}\n{printed}",
        String::from_utf8_lossy(&o.stderr)
    );
    // the fake server's stub answer, through the tunnel to the CLI's output
    assert!(stdout.contains("Hello from agentwire."), "{stdout}");

    let t = open_trace(&trace).unwrap();
    let connects: Vec<&str> = t
        .exchanges
        .iter()
        .filter(|x| x.request.method == "CONNECT")
        .map(|x| x.request.target.as_str())
        .collect();
    assert!(
        connects.contains(&"generativelanguage.googleapis.com:443"),
        "{connects:?}"
    );

    let reader = Command::new("python3")
        .arg(repo().join("tests/it/independent/gemini_body.py"))
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        reader.status.success(),
        "{}",
        String::from_utf8_lossy(&reader.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&reader.stdout).unwrap();
    // One model-router call (`:generateContent`, structured output, no tools), then the
    // turn streamed over SSE with the tools.
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert!(rows.iter().all(|r| r["sha256_matches"] == true));
    assert_eq!(
        (rows[0]["router"].as_bool(), rows[0]["streaming"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(rows[0]["tools"], serde_json::json!([]));
    let turn = &rows[1];
    assert_eq!(turn["streaming"], true);
    let declared = turn["tools"].as_array().unwrap().len();
    assert!(declared > 0, "{turn}");
    for r in &rows {
        let x = t
            .exchanges
            .iter()
            .find(|x| Some(x.id) == r["id"].as_u64())
            .unwrap();
        // on the tunnel to Google's host, not a base URL of agentwire's
        assert_eq!(
            x.source.server.as_deref(),
            Some("generativelanguage.googleapis.com:443")
        );
        let method = if r["streaming"] == true {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        assert_eq!(
            x.request.target,
            format!("/v1beta/models/{}:{method}", r["model"].as_str().unwrap())
        );
        // agentwire's own reading of the body counts the tools the reader counts
        let req = MessagesRequest::parse_as(Dialect::Gemini, &x.request.body.bytes).unwrap();
        assert_eq!(req.tools.len(), r["tools"].as_array().unwrap().len());
    }
    // the same 8 tools the base-URL route's recording of this version declares (gemini.rs)
    assert_eq!(declared, 8);
}
