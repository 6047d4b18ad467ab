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
use agentwire::trace::{Context, Trace, TraceWriter};
use sha2::{Digest, Sha256};

/// The fake key every test client sends; it must never reach a trace.
pub const TEST_KEY: &str = agentwire::capture::record::FAKE_API_KEY;

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
        let mut t = Trace::open(&path).unwrap();
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
    std::process::Command::new(bin())
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// A free loopback TCP port (bound, then released; fine for a test peer to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
