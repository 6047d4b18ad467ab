//! Other tools the tests run against, installed by the test setup from their registries
//! into `target/` once and reused: mitmproxy, claude-tap (import tests), DuckDB (fleet
//! tables), PySpark and the PyArrow its workers use (`spark.rs`) from PyPI (a venv in
//! `target/peer-venv`; PySpark needs a JRE, which `make test-deps` installs), claude-trace from npm
//! (`target/peer-npm`). Versions are pinned so a rerun tests the same formats and SQL.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

use crate::common::repo;

/// PyPI packages of the venv.
const PYPI: &[&str] = &[
    "mitmproxy==11.0.2",
    "claude-tap==0.1.146",
    "duckdb==2.0.1",
    "pyspark==4.3.0",
    "pyarrow==26.0.1",
];
/// npm package of claude-trace.
const NPM: &str = "@mariozechner/claude-trace@1.0.9";

static SETUP: Mutex<()> = Mutex::new(());

fn run(cmd: &mut Command, what: &str) {
    let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `target/peer-venv/bin/NAME`, installing the venv first if needed. The stamp names the
/// venv's own path: a venv copied from another checkout (its scripts' `#!` lines name the
/// other one) is made anew.
pub fn venv_bin(name: &str) -> PathBuf {
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let venv = repo().join("target/peer-venv");
    let stamp = venv.join("agentwire-peers.txt");
    let want = format!("{}\n{}", venv.display(), PYPI.join("\n"));
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(want.as_str()) {
        run(
            Command::new("python3")
                .args(["-m", "venv", "--clear"])
                .arg(&venv),
            "python3 -m venv",
        );
        run(
            Command::new(venv.join("bin/python"))
                .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
                .args(PYPI),
            "pip install mitmproxy claude-tap duckdb pyspark pyarrow",
        );
        std::fs::write(&stamp, &want).unwrap();
    }
    venv.join("bin").join(name)
}

/// The claude-trace interceptor loader (`--require` it into a Node process).
pub fn claude_trace_loader() -> PathBuf {
    let _g = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo().join("target/peer-npm");
    let loader = dir.join("node_modules/@mariozechner/claude-trace/dist/interceptor-loader.js");
    let stamp = dir.join("agentwire-peers.txt");
    if !loader.is_file() || std::fs::read_to_string(&stamp).ok().as_deref() != Some(NPM) {
        std::fs::create_dir_all(&dir).unwrap();
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .arg(NPM),
            "npm install claude-trace",
        );
        std::fs::write(&stamp, NPM).unwrap();
    }
    loader
}

/// A child process killed (and reaped) when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `agentwire serve` (stub answers) writing `trace`; returns the process and its URL.
pub fn serve(trace: &std::path::Path) -> (Running, String) {
    let (child, url) = crate::common::spawn_first_line(
        Command::new(crate::common::bin())
            .args(["serve", "--force", "-o"])
            .arg(trace)
            .stderr(Stdio::null()),
    );
    (Running(child), url)
}

/// Wait until something accepts connections on `port` (a peer starting up).
pub fn wait_for_port(port: u16) {
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("nothing listens on 127.0.0.1:{port} after 30 s");
}

/// Stop a peer cleanly (SIGINT), so it writes what it holds (mitmdump its HAR, `agentwire
/// serve` the end of its trace).
pub fn stop(mut r: Running) {
    crate::common::signal(r.0.id(), libc::SIGINT);
    let _ = r.0.wait();
}
