//! Shared helpers for integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// Root of the repository.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/captures/...` next to the repository (read-only test input; never copied),
/// or under `$AGENTWIRE_SHARED_CAPTURES`. Panics with a clear message when missing.
pub fn shared_capture(rel: &str) -> PathBuf {
    let root = std::env::var_os("AGENTWIRE_SHARED_CAPTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/captures"));
    assert!(
        root.is_dir(),
        "the shared reference captures are missing: expected {} (set AGENTWIRE_SHARED_CAPTURES to their folder)",
        root.display()
    );
    root.join(rel)
}

/// Path of the built `agentwire` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_agentwire"))
}

use agentwire::capture::server::{self, RunningServer, ServerConfig};
use agentwire::input::open_trace;
use agentwire::trace::{Context, Trace, TraceWriter};
use sha2::{Digest, Sha256};

/// The fake key every test client sends; it must never reach a trace.
pub const TEST_KEY: &str = agentwire::capture::route::FAKE_API_KEY;

/// A server running in-process with its trace in a temp dir.
pub struct TestServer {
    pub server: RunningServer,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start(config: ServerConfig) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let writer = TraceWriter::create(&dir.path().join("trace.jsonl"), &Context::new()).unwrap();
        let server = server::start(config, writer).await.unwrap();
        TestServer { server, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.base_url())
    }

    /// Stop the server and read its trace; asserts the fake key is nowhere in the file.
    pub async fn finish(self) -> Trace {
        self.server.shutdown().await.unwrap();
        let path = self.dir.path().join("trace.jsonl");
        assert_no_key(&path);
        let mut t = open_trace(&path).unwrap();
        t.exchanges.sort_by_key(|x| x.id);
        t
    }
}

/// Assert the test key appears nowhere in a file.
pub fn assert_no_key(path: &std::path::Path) {
    let bytes = std::fs::read(path).unwrap();
    let key = TEST_KEY.as_bytes();
    assert!(
        !bytes.windows(key.len()).any(|w| w == key),
        "the API key leaked into {}",
        path.display()
    );
}

pub fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// Deterministic pseudo-random numbers (xorshift64*), so load tests are reproducible.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}

/// A Messages request body of exactly `size` bytes (streaming), with odd spacing and
/// escapes so byte-exactness is really tested.
pub fn messages_body(size: usize, seed: u64) -> Vec<u8> {
    let head = format!(
        "{{\"model\": \"claude-test\",\"max_tokens\":1024, \"stream\":true,\"metadata\":{{\"seed\":{seed}}},\"messages\":[{{\"role\":\"user\",\"content\":\"caf\\u00e9 \\\"q\\\" "
    );
    let tail = "\"}]}";
    let pad = size.saturating_sub(head.len() + tail.len());
    let mut body = head.into_bytes();
    let alphabet = b"abcdefghij klmnopqrstuvwxyz0123456789";
    let mut r = Rng(seed | 1);
    body.extend((0..pad).map(|_| alphabet[(r.next() % alphabet.len() as u64) as usize]));
    body.extend_from_slice(tail.as_bytes());
    body
}

/// Run the built `agentwire` with `args`.
pub fn agentwire(args: &[&str]) -> std::process::Output {
    agentwire_env(&[], args)
}

/// Run the built `agentwire` with `args` and the environment variables `envs` set.
pub fn agentwire_env(envs: &[(&str, &std::path::Path)], args: &[&str]) -> std::process::Output {
    std::process::Command::new(bin())
        .envs(envs.iter().copied())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Run the built `agentwire` with `args` and assert it succeeded (its stderr in the
/// panic message otherwise).
pub fn agentwire_ok(args: &[&str]) -> std::process::Output {
    agentwire_ok_env(&[], args)
}

/// [`agentwire_ok`] with the environment variables `envs` set.
pub fn agentwire_ok_env(envs: &[(&str, &std::path::Path)], args: &[&str]) -> std::process::Output {
    let o = agentwire_env(envs, args);
    assert!(
        o.status.success(),
        "agentwire {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A free loopback TCP port (bound, then released; fine for a test peer to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Spawn `cmd` with stdout piped and read its first line (a server announcing its URL);
/// returns the child and that line, trimmed.
pub fn spawn_first_line(cmd: &mut std::process::Command) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim().to_string())
}

/// An `agentwire serve` child process whose output is kept (for "nothing secret was
/// printed" checks). The first stdout line is the base URL.
pub struct ServeProcess {
    pub child: std::process::Child,
    pub url: String,
    stdout: std::thread::JoinHandle<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl ServeProcess {
    /// Start `agentwire serve ARGS...` with extra environment `env`.
    pub fn start(args: &[&str], env: &[(&str, &std::path::Path)]) -> ServeProcess {
        use std::io::{BufRead, Read};
        let mut cmd = std::process::Command::new(bin());
        cmd.arg("serve")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut url = String::new();
        out.read_line(&mut url).unwrap();
        let mut err = child.stderr.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        ServeProcess {
            child,
            url: url.trim().to_string(),
            stdout,
            stderr,
        }
    }

    /// The listen address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.url.rsplit("://").next().unwrap().parse().unwrap()
    }

    /// SIGTERM, wait; returns the exit code and everything printed (stdout with the URL
    /// line, then stderr).
    pub fn stop(self) -> (Option<i32>, String) {
        self.stop_with(libc::SIGTERM)
    }

    /// Send `sig`, wait; returns as [`ServeProcess::stop`].
    pub fn stop_with(mut self, sig: i32) -> (Option<i32>, String) {
        signal(self.child.id(), sig);
        let status = self.child.wait().unwrap();
        let out = self.stdout.join().unwrap();
        let err = self.stderr.join().unwrap();
        (status.code(), format!("{}\n{out}{err}", self.url))
    }
}

/// Send a signal to a process.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a child process id; no memory is shared.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

/// Paths of every file under `dir`, recursively.
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// A `POST /v1/messages` exchange started at Unix second `started_s`: request body `req`
/// (JSON), a 200 response of `content_type` with body `resp`; no chunk times, no end.
pub fn messages_exchange(
    id: u64,
    started_s: i64,
    req: &[u8],
    content_type: &str,
    resp: Vec<u8>,
) -> agentwire::trace::Exchange {
    use agentwire::trace::{Body, Exchange, HttpRequest, HttpResponse, Source, SourceKind};
    Exchange {
        id,
        started_at: chrono::DateTime::from_timestamp(started_s, 0).unwrap(),
        ended_at: None,
        source: Source::new(SourceKind::Proxy),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/messages".into(),
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), "application/json".into())].into(),
            body: Body::new(req.to_vec()),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), content_type.into())].into(),
            body: Body::new(resp),
            chunks: Vec::new(),
            first_byte_at: None,
        }),
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

/// Wait for `child` to end; kill it and panic naming `what` if it runs past `limit`.
pub fn wait_bounded(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// How many times `needle` occurs in `hay`.
pub fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// Send raw bytes on a new connection and read until the server closes or `wait` passes.
pub fn raw_exchange(
    addr: std::net::SocketAddr,
    bytes: &[u8],
    wait: std::time::Duration,
) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    let _ = s.write_all(bytes);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    buf
}

/// A rustls client config trusting only the CA in `ca_pem` (agentwire's CA).
pub fn tls_client_config(ca_pem: &[u8]) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(ca_pem).unwrap())
        .unwrap();
    let cfg = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    std::sync::Arc::new(cfg)
}

/// `agentwire ARGS --format json`, parsed; the command must exit 0 or 4 (a gate tripped).
pub fn json_of(args: &[&str]) -> serde_json::Value {
    let o = std::process::Command::new(bin())
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 4)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}
