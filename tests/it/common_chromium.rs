//! Test helper: a headless Chromium (Debian's `chromium`) driven over the DevTools
//! protocol (a WebSocket, `tungstenite`). It opens a file, waits for the load event, and
//! records what a page must never do: console messages, uncaught exceptions, log entries
//! (CSP violations land there), JavaScript dialogs and network requests other than the
//! page itself. The browser has no network access it could use (`--disable-quic`,
//! background networking and updates off, a fresh profile) and is closed on drop.

#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The Chromium binary (`AGENTWIRE_CHROMIUM` overrides), or `None` when absent.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AGENTWIRE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// A running browser with one page attached.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next: u64,
    session: String,
    /// Events of the attached page, in arrival order.
    pub events: Vec<Value>,
}

/// What a loaded page did that a report page must never do.
#[derive(Debug, Default)]
pub struct Misdeeds {
    /// Console API calls (`console.log`, …) with their arguments.
    pub console: Vec<String>,
    /// Uncaught exceptions.
    pub exceptions: Vec<String>,
    /// Browser log entries (CSP violations, blocked loads).
    pub log: Vec<String>,
    /// JavaScript dialogs opened (`alert`, `confirm`, `prompt`).
    pub dialogs: Vec<String>,
    /// Network requests other than the page's own file.
    pub requests: Vec<String>,
}

impl Misdeeds {
    /// True when the page did none of these things.
    pub fn none(&self) -> bool {
        self.console.is_empty()
            && self.exceptions.is_empty()
            && self.log.is_empty()
            && self.dialogs.is_empty()
            && self.requests.is_empty()
    }
}

impl Browser {
    /// Start Chromium headless with a fresh profile and attach to a blank page of
    /// `width` × `height` CSS pixels. Panics with what to install when Chromium is missing.
    pub fn launch(width: u32, height: u32) -> Browser {
        let bin = chromium().expect(
            "chromium is required for the HTML report tests (`make deps` installs Debian's chromium)",
        );
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let port_file = profile.path().join("DevToolsActivePort");
        let start = Instant::now();
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&port_file) {
                if t.lines().count() >= 2 {
                    break t;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "chromium did not open its DevTools port within 60 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut lines = text.lines();
        let port = lines.next().unwrap().trim().to_string();
        let path = lines.next().unwrap().trim().to_string();
        let (ws, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}{path}")).unwrap();
        if let MaybeTlsStream::Plain(s) = ws.get_ref() {
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        }
        let mut b = Browser {
            child,
            _profile: profile,
            ws,
            next: 0,
            session: String::new(),
            events: Vec::new(),
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}), false);
        let id = target["targetId"].as_str().unwrap().to_string();
        let att = b.call(
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
            false,
        );
        b.session = att["sessionId"].as_str().unwrap().to_string();
        for m in [
            "Page.enable",
            "Runtime.enable",
            "Network.enable",
            "Log.enable",
        ] {
            b.call(m, json!({}), true);
        }
        b.resize(width, height);
        b
    }

    /// Set the page's viewport to `width` × `height` CSS pixels (screenshots show it).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            true,
        );
    }

    /// Send a command (to the page's session when `page`), wait for its result; events
    /// that arrive meanwhile are kept in [`Browser::events`].
    pub fn call(&mut self, method: &str, params: Value, page: bool) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if page {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let v = self.read();
            if v["id"] == json!(id) {
                if let Some(e) = v.get("error") {
                    panic!("DevTools {method} failed: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.ws.read().expect("DevTools connection") {
                Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
                Message::Binary(b) => return serde_json::from_slice(&b).unwrap(),
                _ => {}
            }
        }
    }

    /// Load `file` and wait for its load event (60 s at most).
    pub fn open(&mut self, file: &Path) -> String {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.events.clear();
        self.call("Page.navigate", json!({"url": url}), true);
        let start = Instant::now();
        while !self
            .events
            .iter()
            .any(|e| e["method"] == "Page.loadEventFired")
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{url} did not load"
            );
            let v = self.read();
            self.events.push(v);
        }
        // Let scripts that run after load finish.
        self.eval("new Promise(r => setTimeout(() => r(1), 300))");
        url
    }

    /// Navigate to `url` (an `http://` page, such as the viewer's) and wait for its load
    /// event (60 s at most).
    pub fn navigate(&mut self, url: &str) {
        self.events.clear();
        self.call("Page.navigate", json!({"url": url}), true);
        let start = Instant::now();
        while !self
            .events
            .iter()
            .any(|e| e["method"] == "Page.loadEventFired")
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{url} did not load"
            );
            let v = self.read();
            self.events.push(v);
        }
    }

    /// Wait until the JavaScript expression `cond` is truthy (polled every 20 ms; panics
    /// after `limit`). Returns how long it took.
    pub fn wait_for(&mut self, cond: &str, limit: Duration) -> Duration {
        let start = Instant::now();
        loop {
            if self.eval(&format!("!!({cond})")) == json!(true) {
                return start.elapsed();
            }
            assert!(start.elapsed() < limit, "timed out waiting for `{cond}`");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Press a key in the page (`j`, `k`, `/`, `Enter`), as the keyboard would.
    pub fn key(&mut self, key: &str) {
        let (text, code) = match key {
            "Enter" => ("\r", "Enter"),
            k => (k, k),
        };
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({"type": kind, "key": key, "code": code});
            if kind == "keyDown" {
                p["text"] = json!(text);
                if key == "Enter" {
                    p["windowsVirtualKeyCode"] = json!(13);
                }
            }
            self.call("Input.dispatchKeyEvent", p, true);
        }
    }

    /// Click the first element matching the CSS `selector` (panics when none does).
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let ok = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return false; e.click(); return true; }})()"
        ));
        assert_eq!(ok, json!(true), "no element matches {selector}");
    }

    /// Evaluate a JavaScript expression in the page (awaiting promises) and return its
    /// value as JSON.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            true,
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// What the page did since it was opened at `url`.
    pub fn misdeeds(&self, url: &str) -> Misdeeds {
        let mut m = Misdeeds::default();
        for e in &self.events {
            let p = &e["params"];
            match e["method"].as_str().unwrap_or("") {
                "Runtime.consoleAPICalled" => m.console.push(p["args"].to_string()),
                "Runtime.exceptionThrown" => m.exceptions.push(p["exceptionDetails"].to_string()),
                "Log.entryAdded" => m.log.push(p["entry"].to_string()),
                "Page.javascriptDialogOpening" => m.dialogs.push(p["message"].to_string()),
                "Network.requestWillBeSent" => {
                    let u = p["request"]["url"].as_str().unwrap_or("");
                    if u != url {
                        m.requests.push(u.to_string());
                    }
                }
                _ => {}
            }
        }
        m
    }

    /// A PNG screenshot of the viewport.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}), true);
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.send(Message::text(
            json!({"id": 0, "method": "Browser.close", "params": {}}).to_string(),
        ));
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Save a screenshot under `target/screenshots/NAME.png` and print its path; with
/// `AGENTWIRE_UPDATE_SCREENSHOTS=1` also copy it to `docs/img/NAME.png` (the README's).
pub fn save_screenshot(name: &str, png: &[u8]) -> PathBuf {
    let dir = crate::common::repo().join("target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).unwrap();
    println!("screenshot: {}", path.display());
    if std::env::var_os("AGENTWIRE_UPDATE_SCREENSHOTS").is_some() {
        let docs = crate::common::repo().join("docs/img");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&path, docs.join(format!("{name}.png"))).unwrap();
    }
    path
}
