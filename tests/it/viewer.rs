//! The conversation viewer (`agentwire view`, `serve --ui`) in a real headless Chromium.
//! On the background-job session (real Claude Code 2.1.304 driven by
//! `captures/scenarios/bg-build.json`, recorded once): the turn list has the trace's turns,
//! the poll badges sit on exactly the turns whose responses made the polls `analyze`
//! counts (found by an independent reader, `independent/viewer_polls.py`), a turn shows its
//! tool call input and result and what it added, and search finds a tool result by a word
//! in it. A trace with markup, script and bidi characters in every string runs nothing and
//! shows its text as text; no token is 403, a foreign Host refused. Live: `serve --ui`
//! with a client, each exchange's row in the page within 1 s of its trace line.

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{bin, repo};
use crate::common_chromium::{save_screenshot, Browser};

/// The background-job session, recorded once for every test here.
fn bg_trace() -> &'static Path {
    static T: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, p) = T.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bg.jsonl");
        let script = repo().join("captures/scenarios/bg-build.json");
        let o = Command::new(bin())
            .args([
                "record",
                "--cli",
                "claude-code@2.1.304",
                "--route",
                "base-url",
                "--script",
            ])
            .arg(&script)
            .arg("-o")
            .arg(&out)
            .args(["--", "-p", "run the build", "--allowedTools", "Bash"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (dir, out)
    });
    p
}

/// A running `agentwire view`, killed on drop.
struct View {
    child: Child,
    url: String,
}

impl View {
    fn start(input: &Path) -> View {
        let (child, url) = crate::common::spawn_first_line(
            Command::new(bin())
                .arg("view")
                .arg(input)
                .stderr(Stdio::null()),
        );
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        View { child, url }
    }

    /// `http://127.0.0.1:PORT`.
    fn base(&self) -> &str {
        self.url.split("/?").next().unwrap()
    }
}

impl Drop for View {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw HTTP/1.1 GET with `host`; returns the status code.
fn status_of(addr: &str, target: &str, host: &str) -> u16 {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split(' ').nth(1).unwrap().parse().unwrap()
}

/// Open the viewer at `url` and wait for its first render.
fn open(br: &mut Browser, url: &str) {
    br.navigate(url);
    br.wait_for(
        "document.body.dataset.ready === '1'",
        Duration::from_secs(20),
    );
}

/// Requests the page made that left the viewer's origin.
fn foreign_requests(br: &Browser, base: &str) -> Vec<String> {
    let m = br.misdeeds("");
    m.requests
        .into_iter()
        .filter(|u| !u.starts_with(base))
        .collect()
}

#[test]
fn background_job_session_reads_with_its_polls_on_the_right_turns() {
    let trace = bg_trace();
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let o = crate::common::agentwire_ok(&["analyze", "--format", "json", trace.to_str().unwrap()]);
    std::fs::write(&a, &o.stdout).unwrap();
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/viewer_polls.py"))
        .arg(trace)
        .arg(&a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let want: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(want["poll_turns"].as_array().unwrap().len(), 3, "{want}");

    let v = View::start(trace);
    let mut br = Browser::launch(1400, 900);
    open(&mut br, &v.url);
    let ids = br.eval("[...document.querySelectorAll('#list .row')].map(r => +r.dataset.id)");
    let n = want["exchanges"].as_u64().unwrap();
    assert_eq!(
        ids,
        json!((0..n).collect::<Vec<_>>()),
        "one row per exchange"
    );
    let polls = br.eval("[...document.querySelectorAll('#list .row')].filter(r => r.querySelector('.badge.poll, .badge.redundant')).map(r => +r.dataset.id)");
    assert_eq!(polls, want["poll_turns"]);
    let redundant = br.eval("[...document.querySelectorAll('#list .row')].filter(r => r.querySelector('.badge.redundant')).map(r => +r.dataset.id)");
    assert_eq!(redundant, want["redundant_turns"]);

    // The first poll's turn, opened with the keyboard: j moves, Enter opens.
    let first_poll = want["poll_turns"][0].as_u64().unwrap();
    for _ in 0..=first_poll {
        br.key("j");
    }
    br.key("Enter");
    br.wait_for(
        "document.querySelector('#added .item')",
        Duration::from_secs(10),
    );
    assert_eq!(br.eval("location.hash"), json!(format!("#t={first_poll}")));
    let (want_items, cmd, result) = added_by(trace, first_poll);
    let kinds = br.eval("[...document.querySelectorAll('#added .item')].map(e => e.dataset.kind)");
    assert_eq!(kinds, json!(want_items), "what this request added");
    let added = br
        .eval("document.querySelector('#added').textContent")
        .as_str()
        .unwrap()
        .to_string();
    assert!(added.contains(&cmd), "tool call input {cmd:?} in {added}");
    assert!(added.contains(&result), "tool result {result:?} in {added}");
    save_screenshot("viewer-bg-build", &br.screenshot());

    // Search: a word of that tool result finds it on that turn.
    let word = result
        .split(|c: char| !c.is_alphanumeric())
        .max_by_key(|w| w.len())
        .unwrap()
        .to_string();
    br.key("/");
    br.call("Input.insertText", json!({"text": word}), true);
    br.wait_for(
        "document.querySelector('#hits .hit')",
        Duration::from_secs(10),
    );
    let hits = br.eval(
        "[...document.querySelectorAll('#hits .hit')].map(h => [+h.dataset.n, h.textContent])",
    );
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == json!(first_poll) && h[1].as_str().unwrap().contains("tool_result")),
        "{word}: {hits}"
    );
    assert_eq!(foreign_requests(&br, v.base()), Vec::<String>::new());
    let m = br.misdeeds("");
    assert!(
        m.console.is_empty() && m.exceptions.is_empty() && m.log.is_empty(),
        "{m:#?}"
    );
}

/// What exchange `n`'s request added to the previous one's messages, read from the
/// trace's JSON directly: the kinds of the added blocks, the command of the first tool
/// call and the text of the first tool result among them.
fn added_by(trace: &Path, n: u64) -> (Vec<String>, String, String) {
    let mut bodies = Vec::new();
    for line in std::fs::read_to_string(trace).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] == "exchange" {
            bodies.push(v["request"]["body"]["json"].clone());
        }
    }
    let prev = bodies[n as usize - 1]["messages"].as_array().unwrap().len();
    let msgs = bodies[n as usize]["messages"].as_array().unwrap();
    let (mut kinds, mut cmd, mut result) = (Vec::new(), String::new(), String::new());
    for m in &msgs[prev..] {
        let blocks = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(a) => a.clone(),
            _ => vec![],
        };
        for b in blocks {
            kinds.push(b["type"].as_str().unwrap().to_string());
            if b["type"] == "tool_use" && cmd.is_empty() {
                cmd = b["input"]["command"].as_str().unwrap().to_string();
            }
            if b["type"] == "tool_result" && result.is_empty() {
                result = match &b["content"] {
                    Value::String(s) => s.clone(),
                    c => c[0]["text"].as_str().unwrap().to_string(),
                };
            }
        }
    }
    (kinds, cmd, result)
}

/// Bidi controls that would reorder what the reader sees if they were not shown as text.
const BIDI: &str = "\u{202E}evil\u{202C} \u{2066}x\u{2069} \u{200F}";

/// A trace with markup, script and bidi characters in every string it holds: system
/// prompt, tool names, descriptions and schemas, user text, tool inputs and results, the
/// response, a header.
fn hostile_trace(path: &Path) {
    use crate::hand_trace::{tool_result, tool_use, Conv, TraceBuilder};
    use crate::report_injection::PAYLOADS;
    let all = format!("{} {BIDI}", PAYLOADS.join(" "));
    let mut conv = Conv::new(PAYLOADS[0]);
    conv.system = vec![json!({"type": "text", "text": all})];
    conv.tools = vec![json!({"name": PAYLOADS[2], "description": all,
        "input_schema": {"type": "object", "properties": {PAYLOADS[4]: {"type": "string", "description": all}}}})];
    conv.user(vec![json!({"type": "text", "text": all})]);
    let mut b = TraceBuilder::default();
    b.send(
        &conv,
        0.0,
        vec![json!({"type": "text", "text": all})],
        json!({"input_tokens": 1, "output_tokens": 1}),
    );
    conv.assistant(vec![tool_use("toolu_h", PAYLOADS[2], json!({"q": all}))]);
    conv.user(vec![tool_result("toolu_h", &all, false)]);
    b.send(
        &conv,
        1.0,
        vec![json!({"type": "text", "text": all})],
        json!({"input_tokens": 1, "output_tokens": 1}),
    );
    for x in &mut b.exchanges {
        x.request.headers.push(("user-agent".into(), all.clone()));
    }
    let mut w =
        agentwire::trace::TraceWriter::create(path, &agentwire::trace::Context::new()).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
}

#[test]
fn hostile_text_runs_nothing_and_the_viewer_needs_its_token() {
    use crate::report_injection::PAYLOADS;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("hostile.jsonl");
    hostile_trace(&trace);
    let v = View::start(&trace);
    let addr = v.base().trim_start_matches("http://").to_string();
    let token = v.url.split("token=").nth(1).unwrap().to_string();
    // No token, a wrong one, a rebound host name, another origin: refused.
    assert_eq!(status_of(&addr, "/api/turns", &addr), 403);
    assert_eq!(status_of(&addr, "/", &addr), 403);
    assert_eq!(status_of(&addr, "/api/turns?token=0000", &addr), 403);
    let with = format!("/api/turns?token={token}");
    assert_eq!(status_of(&addr, &with, "attacker.example"), 403);
    assert_eq!(status_of(&addr, &with, &addr), 200);

    let mut br = Browser::launch(1200, 900);
    open(&mut br, &v.url);
    br.key("j");
    br.key("j");
    br.key("Enter");
    br.wait_for(
        "document.querySelector('#added .item')",
        Duration::from_secs(10),
    );
    br.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    br.eval("new Promise(r => setTimeout(() => r(1), 300))");
    let m = br.misdeeds("");
    assert!(
        m.dialogs.is_empty() && m.exceptions.is_empty() && m.console.is_empty(),
        "{m:#?}"
    );
    assert_eq!(
        foreign_requests(&br, v.base()),
        Vec::<String>::new(),
        "a request left"
    );
    assert_eq!(br.eval("document.scripts.length"), json!(1));
    let made = br.eval("document.querySelectorAll('main img, main svg, main iframe, main script, main a[href^=javascript]').length");
    assert_eq!(made, json!(0), "markup from the trace became elements");
    let handlers = br.eval("[...document.querySelectorAll('*')].flatMap(e => [...e.attributes].filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))");
    assert_eq!(handlers, json!([]));
    let text = br
        .eval("document.querySelector('main').textContent")
        .as_str()
        .unwrap()
        .to_string();
    for p in PAYLOADS {
        assert!(text.contains(p), "{p} not shown as text");
    }
    assert!(text.contains(BIDI), "bidi characters not shown as text");
    // The CSP the page runs under.
    let csp = http_header(
        &addr,
        &format!("/?token={token}"),
        "content-security-policy",
    );
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
}

/// The value of response header `name` of a GET.
fn http_header(addr: &str, target: &str, name: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// POST a Messages body to the fake server at `addr`; returns the response status.
fn post_messages(addr: &str, body: &[u8]) -> u16 {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v1/messages HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn serve_ui_shows_each_exchange_within_a_second_of_its_trace_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("live.jsonl");
    let mut child = Command::new(bin())
        .args(["serve", "--ui", "-o"])
        .arg(&trace)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut base = String::new();
    out.read_line(&mut base).unwrap();
    let server = base.trim().trim_start_matches("http://").to_string();
    // The viewer's URL (with its token) is the second line on stdout.
    let mut ui = String::new();
    out.read_line(&mut ui).unwrap();
    let ui = ui.trim().to_string();
    assert!(ui.contains("/?token="), "{ui}");
    let mut br = Browser::launch(1200, 800);
    open(&mut br, &ui);
    let mut worst = Duration::ZERO;
    for i in 0..5u64 {
        assert_eq!(
            post_messages(&server, &crate::common::messages_body(3000, i)),
            200
        );
        let (mut written, start) = (None, Instant::now());
        let shown = loop {
            let lines = std::fs::read_to_string(&trace)
                .unwrap_or_default()
                .lines()
                .count() as u64;
            // the header line, then one line per exchange
            if written.is_none() && lines >= i + 2 {
                written = Some(Instant::now());
            }
            if br.eval(&format!(
                "!!document.querySelector('#list .row[data-id=\"{i}\"]')"
            )) == json!(true)
            {
                break Instant::now();
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "exchange {i} never shown"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let lag = shown.saturating_duration_since(written.unwrap_or(shown));
        println!("exchange {i}: trace line to DOM row {} ms", lag.as_millis());
        worst = worst.max(lag);
    }
    assert!(worst < Duration::from_secs(1), "worst {worst:?}");
    // the re-analysis reaches the rows: each has its cache status; these bodies carry no
    // cache_control breakpoint, so nothing can be cached: `uncached`
    br.wait_for("[...document.querySelectorAll('#list .row')].every(r => / (hit|partial|miss|cold|uncached)$/.test(r.querySelector('.c-status').textContent))", Duration::from_secs(5));
    assert_eq!(
        br.eval("document.querySelector('#list .row[data-id=\"0\"] .c-status').textContent"),
        json!("200 uncached")
    );
    save_screenshot("viewer-live", &br.screenshot());
    crate::common::signal(child.id(), libc::SIGTERM);
    let _ = child.wait();
}

/// GET `target` (token in the header) and parse the JSON body.
fn get_json(addr: &str, target: &str, token: &str) -> (u16, Value) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\nX-Agentwire-Token: {token}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out.split(' ').nth(1).unwrap().parse().unwrap();
    let body = out.split_once("\r\n\r\n").unwrap().1;
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

#[test]
fn bad_lines_are_marked_with_their_line_numbers_and_the_rest_opens() {
    use crate::hand_trace::{text, Conv, TraceBuilder};
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("bad.jsonl");
    let mut conv = Conv::new("claude-sonnet-4-5");
    conv.user(vec![text(200, 'u')]);
    let mut b = TraceBuilder::default();
    b.send_text(&conv, 0.0);
    b.send_text(&conv, 1.0);
    // exchange 2: a request body that is not JSON
    b.send_text(&conv, 2.0);
    b.exchanges[2].request.body = agentwire::trace::Body::new(b"not json {".to_vec());
    let mut w =
        agentwire::trace::TraceWriter::create(&trace, &agentwire::trace::Context::new()).unwrap();
    for x in &b.exchanges {
        w.write_exchange(x).unwrap();
    }
    drop(w);
    // Lines: 1 header, 2-4 exchanges; then a garbage line 5, and a last line 6 cut short
    // (a file still being written).
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&trace)
        .unwrap();
    f.write_all(b"{\"type\":\"exchange\",garbage\n{\"type\":\"exchange\",\"id\":9,\"star")
        .unwrap();
    drop(f);
    let v = View::start(&trace);
    let addr = v.base().trim_start_matches("http://").to_string();
    let token = v.url.split("token=").nth(1).unwrap().to_string();
    let (status, turns) = get_json(&addr, "/api/turns", &token);
    assert_eq!(status, 200);
    let lines: Vec<u64> = turns["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [5, 6]);
    let rows = turns["turns"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(
        rows[2]["problem"]
            .as_str()
            .unwrap()
            .contains("request body"),
        "{}",
        rows[2]
    );
    // Every turn still opens; the server keeps serving after the bad one.
    for n in 0..3 {
        let (status, d) = get_json(&addr, &format!("/api/turn/{n}"), &token);
        assert_eq!(status, 200, "{d}");
    }
    let (status, d) = get_json(&addr, "/api/turn/7", &token);
    assert_eq!(status, 404);
    assert!(d["error"].as_str().unwrap().contains("no turn 7"), "{d}");
}
