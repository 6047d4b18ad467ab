//! `mcp-tap`: run a stdio MCP server as a child, relay our stdin to its stdin and its
//! stdout to our stdout byte for byte (chunks are forwarded as they arrive, never
//! re-framed), and record every newline-delimited JSON-RPC message of either direction as
//! an `mcp` record. stderr passes through untouched. A message cut short when a stream
//! ends (the server crashed mid-write) is recorded raw with `truncated: true`, followed by
//! an `exited` event with the exit status.
//!
//! Framing source: MCP specification, Transports, stdio: "Messages are delimited by
//! newlines, and MUST NOT contain embedded newlines."

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::signals::Stop;
use super::{McpError, McpSink};
use crate::trace::mcp::{McpDirection, McpTransport};
use crate::trace::McpRecord;

/// Longest message recorded whole, in bytes (64 MiB); the relay itself has no limit, a
/// longer line is recorded as its first bytes with `truncated: true`.
pub const MAX_MESSAGE: usize = 64 << 20;

/// What to run under the tap.
#[derive(Clone, Debug)]
pub struct TapConfig {
    /// Server name written in every record.
    pub name: String,
    /// Program and arguments.
    pub command: Vec<String>,
    /// Trace file for the records.
    pub output: PathBuf,
    /// Directory to run the server in (`None`: the current one).
    pub cwd: Option<PathBuf>,
    /// Where a failure to write a record is reported.
    pub diagnostics: crate::capture::Diagnostics,
    /// After a stop signal forwarded to the server, how long it may take to exit before
    /// it is killed (default [`super::signals::STOP_GRACE`]).
    pub stop_grace: std::time::Duration,
}

/// Splits one direction's byte stream into messages and records them.
struct Framer {
    sink: Arc<McpSink>,
    name: String,
    direction: McpDirection,
    line: Vec<u8>,
    overflow: bool,
}

impl Framer {
    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(i) = bytes.iter().position(|&b| b == b'\n') {
            self.push(&bytes[..i]);
            self.emit(false);
            bytes = &bytes[i + 1..];
        }
        self.push(bytes);
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_MESSAGE.saturating_sub(self.line.len());
        if bytes.len() > room {
            self.overflow = true;
        }
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Record the pending line; `cut`: the stream ended before its newline.
    fn emit(&mut self, cut: bool) {
        let mut line = std::mem::take(&mut self.line);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let truncated = cut || std::mem::take(&mut self.overflow);
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.sink.write(McpRecord::message(
            &self.name,
            McpTransport::Stdio,
            self.direction,
            &line,
            truncated,
        ));
    }
}

/// Copy `from` to `to` chunk by chunk (flushing each), feeding the framer; at end of
/// input, record a pending partial message. Returns when `from` ends or `to` is closed.
fn relay(mut from: impl Read, mut to: impl Write, mut framer: Framer) {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        framer.feed(&buf[..n]);
        if to.write_all(&buf[..n]).and_then(|_| to.flush()).is_err() {
            break;
        }
    }
    framer.emit(true);
}

/// Run the server under the tap until it exits; returns its exit code (128 + signal
/// when it was killed by one). SIGTERM, SIGINT and SIGHUP are forwarded to the server
/// ([`super::signals`]); the `exited` record names the status and the stop.
///
/// Errors: [`McpError::OwnStdout`] (`-o` names the relay's standard output),
/// [`McpError::NoCommand`], [`McpError::Spawn`], the trace file cannot be created, or
/// [`McpError::Lost`] when records could not be written (the relay itself went on).
pub fn run(cfg: &TapConfig) -> Result<i32, McpError> {
    refuse_own_stdout(&cfg.output)?;
    let (program, args) = cfg.command.split_first().ok_or(McpError::NoCommand)?;
    let sink = Arc::new(
        McpSink::create(&cfg.output, &format!("mcp-tap {}", cfg.name))?
            .reporting_to(cfg.diagnostics.clone()),
    );
    let mut cmd = Command::new(program);
    if let Some(dir) = &cfg.cwd {
        cmd.current_dir(dir);
    }
    let spawn_err = |e| McpError::Spawn {
        program: program.clone(),
        source: e,
    };
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(spawn_err)?;
    let stop = Stop::forward(&child, cfg.stop_grace);
    sink.write(McpRecord::event(
        &cfg.name,
        McpTransport::Stdio,
        "started",
        // the argv rule: `--api-key V` hides V (the text rule alone kept it)
        &crate::trace::redact::redact_argv(&cfg.command).join(" "),
    ));
    let framer = |direction| Framer {
        sink: sink.clone(),
        name: cfg.name.clone(),
        direction,
        line: Vec::new(),
        overflow: false,
    };
    let child_in = child.stdin.take().expect("piped stdin");
    let child_out = child.stdout.take().expect("piped stdout");
    // Our stdin may never close (the client keeps it open after the server died), so this
    // thread is not joined; it ends with the process.
    let up = framer(McpDirection::ToServer);
    std::thread::spawn(move || relay(std::io::stdin().lock(), child_in, up));
    let down = framer(McpDirection::ToClient);
    let downstream = std::thread::spawn(move || relay(child_out, std::io::stdout(), down));
    let ended = stop.reap(&mut child).map_err(spawn_err)?;
    let _ = downstream.join();
    let code = exit_code(&ended.status);
    sink.write(McpRecord::event(
        &cfg.name,
        McpTransport::Stdio,
        "exited",
        &ended.detail(),
    ));
    let lost = sink.close();
    if lost.count > 0 {
        return Err(McpError::Lost {
            path: cfg.output.display().to_string(),
            count: lost.count,
            total: lost.total,
            first: lost.first.unwrap_or_default(),
            code,
        });
    }
    Ok(code)
}

/// Refuse an output that is the relay's own standard output under any name: trace lines
/// written there would be read by the client as protocol messages.
///
/// Errors: [`McpError::OwnStdout`].
pub fn refuse_own_stdout(output: &std::path::Path) -> Result<(), McpError> {
    if crate::output::is_stdout(output) {
        return Err(McpError::OwnStdout {
            path: output.display().to_string(),
        });
    }
    Ok(())
}

fn exit_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(s) = status.signal() {
            return 128 + s;
        }
    }
    status.code().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    fn framed(chunks: &[&[u8]]) -> Vec<McpRecord> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sink = Arc::new(McpSink::create(&path, "t").unwrap());
        let mut f = Framer {
            sink,
            name: "s".into(),
            direction: McpDirection::ToServer,
            line: Vec::new(),
            overflow: false,
        };
        for c in chunks {
            f.feed(c);
        }
        f.emit(true);
        drop(f);
        Trace::read(&path).unwrap().mcp
    }

    #[test]
    fn messages_split_anywhere_are_framed_by_newline() {
        let recs = framed(&[
            b"{\"id\":1,\"me",
            b"thod\":\"a\"}\n{\"id\":2,",
            b"\"method\":\"b\"}\r\n\n",
        ]);
        let methods: Vec<_> = recs
            .iter()
            .map(|r| r.method().unwrap().to_string())
            .collect();
        assert_eq!(methods, ["a", "b"]);
        assert_eq!(recs[0].size, br#"{"id":1,"method":"a"}"#.len() as u64);
        assert_eq!((recs[0].seq, recs[1].seq), (0, 1));
    }

    #[test]
    fn a_partial_last_message_is_recorded_truncated() {
        let recs = framed(&[b"{\"id\":1,\"method\":\"a\"}\n{\"id\":2,\"res"]);
        assert_eq!(recs.len(), 2);
        assert!(recs[1].truncated && recs[1].message.is_none());
        assert_eq!(recs[1].raw.as_deref(), Some("{\"id\":2,\"res"));
    }
}
