//! Bad Gemini input, written by hand: a chunk that is not JSON, a stream cut between
//! chunks and inside one, a `functionCall` without an id, usage missing. Each is kept raw,
//! said and counted (exit 3: degraded), and the rest of the session reads.

use agentwire::trace::{Context, Exchange};

use crate::common::*;

/// A Gemini exchange: request body `req` to `path`, answered with the SSE body `sse`.
fn gemini_exchange(id: u64, path: &str, req: &str, sse: &str) -> Exchange {
    let mut x = messages_exchange(
        id,
        1_764_000_000 + id as i64,
        req.as_bytes(),
        "text/event-stream",
        sse.as_bytes().to_vec(),
    );
    x.request.target = path.into();
    x
}

const PATH: &str = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";

#[test]
fn bad_gemini_chunks_and_missing_usage_are_said_and_the_rest_reads() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bad.jsonl");
    let first = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"ls","parametersJsonSchema":{"type":"object"}}]}]}"#;
    // The model's call has no id; the client echoes it without one too.
    let second = r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a b"}}}]}],"tools":[{"functionDeclarations":[{"name":"ls","parametersJsonSchema":{"type":"object"}}]}]}"#;
    // 1: a call, then a chunk that is not JSON, then the end with usage.
    let s1 = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"ls\",\"args\":{}}}]}}]}\r\n\r\ndata: {not json\r\n\r\ndata: {\"candidates\":[{\"content\":{\"parts\":[]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":40,\"candidatesTokenCount\":5}}\r\n\r\n";
    // 2: text, then cut inside the next chunk: no finishReason, no usage.
    let s2 = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Two files\"}]}}]}\r\n\r\ndata: {\"candidates\":[{\"con";
    let mut w = agentwire::trace::TraceWriter::create(&trace, &Context::new()).unwrap();
    w.write_exchange(&gemini_exchange(0, PATH, first, s1))
        .unwrap();
    w.write_exchange(&gemini_exchange(1, PATH, second, s2))
        .unwrap();
    w.finish().unwrap();
    let t = trace.to_str().unwrap();
    let o = agentwire(&["show", t, "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    // Four problems: the bad chunk; the cut chunk, the missing usage and the missing
    // finishReason of the second answer (show names the first three).
    for said in [
        "is not JSON",
        "ends inside the chunk",
        "no usageMetadata",
        "4 exchanges with a bad part",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // Both in one session's main thread: the second extends the first.
    assert_eq!(
        (rows[0]["thread"].as_str(), rows[1]["thread"].as_str()),
        (Some("main"), Some("main"))
    );
    assert_eq!(rows[0]["model"], "gemini-3.8-flash");
    assert_eq!(rows[0]["stop"], "STOP");
    assert_eq!(rows[0]["usage"], "40/0/0/5");
    // The cut answer has no stop reason and its usage is not recorded (not zero).
    assert_eq!(rows[1]["stop"], "(incomplete)");
    assert!(rows[1]["usage"].is_null(), "{}", rows[1]);
    // analyze reads both requests despite the bad parts, and says it was degraded.
    let o = agentwire(&["analyze", t, "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["summary"]["requests"], 2);
}

/// POST `body` to `path` on the server at `addr`; the raw HTTP response.
fn post(addr: std::net::SocketAddr, path: &str, body: &str) -> String {
    let req = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    String::from_utf8_lossy(&raw_exchange(
        addr,
        req.as_bytes(),
        std::time::Duration::from_secs(10),
    ))
    .into_owned()
}

/// The fake server answers Gemini in the shape the URL asks for, fills the router's
/// schema, and fails as Google does: a scripted 429 is `RESOURCE_EXHAUSTED` in Google's
/// error body; a scripted `sse_error` is an error chunk the reader keeps as a stream error.
#[test]
fn the_fake_server_answers_gemini_by_url_and_fails_as_google_does() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(
        &script,
        r#"{"threads":[{"name":"m","match":{"has_tools":true},"turns":[
            {"content":[{"type":"tool_use","id":"t1","name":"ls","input":{"d":"."}}]},
            {"content":[],"fail":{"status":429}},
            {"content":[{"type":"text","text":"partial answer here"}],"fail":{"sse_error":"internal","after_events":1}}]}]}"#,
    )
    .unwrap();
    let trace = dir.path().join("t.jsonl");
    let serve = ServeProcess::start(
        &[
            "--script",
            script.to_str().unwrap(),
            "-o",
            trace.to_str().unwrap(),
        ],
        &[],
    );
    let addr = serve.addr();
    let tools = r#""tools":[{"functionDeclarations":[{"name":"ls"}]}]"#;
    // Turn N of the conversation: the user's message and N rounds of call and result.
    let body_at = |n: usize| {
        let mut contents = vec![r#"{"role":"user","parts":[{"text":"hi"}]}"#.to_string()];
        for _ in 0..n {
            contents.push(
                r#"{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}}}]}"#.into(),
            );
            contents.push(r#"{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a"}}}]}"#.into());
        }
        format!(r#"{{"contents":[{}],{tools}}}"#, contents.join(","))
    };
    // 1: streamed by `alt=sse`; the call has no id, as the API sends it.
    let r1 = post(
        addr,
        "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
        &body_at(0),
    );
    assert!(
        r1.contains("text/event-stream")
            && r1.contains(r#"{"functionCall":{"name":"ls","args":{"d":"."}}}"#),
        "{r1}"
    );
    // 2: the scripted 429, as Google's error body.
    let r2 = post(
        addr,
        "/v1/models/gemini-3.8-flash:generateContent",
        &body_at(1),
    );
    assert!(
        r2.starts_with("HTTP/1.1 429") && r2.contains(r#""status":"RESOURCE_EXHAUSTED""#),
        "{r2}"
    );
    // 3: one chunk, then an error chunk.
    let r3 = post(
        addr,
        "/v1alpha/models/gemini-3.8-flash:streamGenerateContent?alt=sse",
        &body_at(2),
    );
    assert!(r3.contains(r#"data: {"error""#), "{r3}");
    // The router: structured output, answered with an instance of its schema.
    let router = r#"{"contents":[{"role":"user","parts":[{"text":"rate it"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"complexity_reasoning":{"type":"string"},"complexity_score":{"type":"integer","minimum":1,"maximum":100}},"required":["complexity_reasoning","complexity_score"]}}}"#;
    let r4 = post(
        addr,
        "/v1beta/models/gemini-3.5-flash-lite:generateContent",
        router,
    );
    assert!(
        r4.contains(r#"{\"complexity_reasoning\":\"agentwire\",\"complexity_score\":1}"#),
        "{r4}"
    );
    let (code, _) = serve.stop();
    assert_eq!(code, Some(0));
    // The recorded exchanges name the failures by Google's own error status (the stop is
    // the API's error type wherever an error shows; the injection stays among the problems).
    let o = agentwire(&["show", trace.to_str().unwrap(), "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let stops: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["stop"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(stops, ["STOP", "RESOURCE_EXHAUSTED", "INTERNAL", "STOP"]);
}
