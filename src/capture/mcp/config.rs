//! Rewrite a CLI's MCP configuration so its servers are recorded: each stdio server runs
//! under `agentwire mcp-tap --name NAME -o FILE -- COMMAND ARGS` (its `env` and other
//! fields kept), each Streamable HTTP server (`"type": "http"`) is reached through a
//! recording proxy ([`super::http`]) on loopback. Other server types (`sse`, `ws`, SDK
//! servers) are left as they are and reported.
//!
//! The format is Claude Code's `--mcp-config` (a file path or a JSON string, several
//! allowed after one flag): `{"mcpServers": {"NAME": {"command", "args", "env"} |
//! {"type": "http", "url", "headers"}}}`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use super::http::{self, HttpTap};
use super::{McpError, McpSink};
use crate::capture::Diagnostics;

/// The flag that carries MCP configurations on Claude Code's command line.
pub const MCP_CONFIG_FLAG: &str = "--mcp-config";

/// What [`prepare`] set up: the rewritten arguments and the proxies to stop afterwards.
pub struct Prepared {
    /// The CLI's arguments with every MCP configuration replaced by a rewritten file.
    pub args: Vec<String>,
    /// Running HTTP proxies, one per Streamable HTTP server.
    pub proxies: Vec<HttpTap>,
    /// Servers left as they were, with the reason (`sse` transport, …).
    pub skipped: Vec<String>,
    /// Directory the taps and proxies write their records to.
    pub dir: PathBuf,
}

impl Prepared {
    /// Stop the HTTP proxies.
    pub async fn stop(self) {
        for p in self.proxies {
            p.stop().await;
        }
    }
}

/// Rewrite every `--mcp-config` value in `args` (files or inline JSON) into a file under
/// `dir`, starting an HTTP proxy per Streamable HTTP server; `tap_exe` is the agentwire
/// binary the stdio servers run under, in `cwd` (so relative paths in a configuration
/// mean what they meant where agentwire was started, even when the CLI runs in a
/// sandbox). Records go to `dir/*.jsonl`.
///
/// The proxies' failures to write a record are not reported ([`prepare_reporting`]
/// reports them).
///
/// Errors: [`McpError::Config`] for a configuration that cannot be read or is not an
/// object with `mcpServers`; [`McpError::BadUrl`] / [`McpError::Listen`] from a proxy.
pub async fn prepare(
    args: &[String],
    dir: &Path,
    tap_exe: &Path,
    cwd: &Path,
) -> Result<Prepared, McpError> {
    prepare_reporting(args, dir, tap_exe, cwd, &Diagnostics::silent()).await
}

/// [`prepare`], with the HTTP proxies reporting their failures to write a record to
/// `diagnostics`.
///
/// Errors: as [`prepare`].
pub async fn prepare_reporting(
    args: &[String],
    dir: &Path,
    tap_exe: &Path,
    cwd: &Path,
    diagnostics: &Diagnostics,
) -> Result<Prepared, McpError> {
    let mut out = Vec::with_capacity(args.len());
    let mut p = Prepared {
        args: Vec::new(),
        proxies: Vec::new(),
        skipped: Vec::new(),
        dir: dir.to_path_buf(),
    };
    let mut in_flag = false;
    let mut n = 0;
    for a in args {
        let value = if let Some(v) = a.strip_prefix(&format!("{MCP_CONFIG_FLAG}=")) {
            in_flag = false;
            Some((v.to_string(), true))
        } else if a == MCP_CONFIG_FLAG {
            in_flag = true;
            out.push(a.clone());
            continue;
        } else if in_flag && !a.starts_with('-') {
            Some((a.clone(), false))
        } else {
            in_flag = false;
            None
        };
        match value {
            None => out.push(a.clone()),
            Some((v, inline_flag)) => {
                crate::output::create_private_dir(dir).map_err(|e| write_err(dir, e))?;
                let config = load(&v)?;
                let rewritten =
                    rewrite(&config, &v, dir, (tap_exe, cwd), &mut p, diagnostics).await?;
                let path = dir.join(format!("mcp-config-{n}.json"));
                n += 1;
                let bytes = serde_json::to_vec_pretty(&rewritten).unwrap_or_default();
                write_private(&path, &bytes).map_err(|e| write_err(&path, e))?;
                let path = path.to_string_lossy().into_owned();
                out.push(if inline_flag {
                    format!("{MCP_CONFIG_FLAG}={path}")
                } else {
                    path
                });
            }
        }
    }
    p.args = out;
    Ok(p)
}

/// Write a file only the owner can read: a configuration may carry the servers' `env`
/// secrets and HTTP headers (it lives in the run's sandbox, removed afterwards).
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)?.write_all(bytes)
}

fn write_err(path: &Path, e: std::io::Error) -> McpError {
    McpError::Write {
        path: path.display().to_string(),
        source: e,
    }
}

/// A configuration given as a file path or as inline JSON.
fn load(value: &str) -> Result<Value, McpError> {
    let (name, text) = if value.trim_start().starts_with('{') {
        ("inline JSON".to_string(), value.to_string())
    } else {
        let text = std::fs::read_to_string(value).map_err(|e| McpError::Config {
            source_name: value.into(),
            message: format!("cannot read it: {e}"),
        })?;
        (value.to_string(), text)
    };
    let v: Value = serde_json::from_str(&text).map_err(|e| McpError::Config {
        source_name: name.clone(),
        message: format!("not JSON: {e}"),
    })?;
    if !v.get("mcpServers").is_some_and(Value::is_object) {
        return Err(McpError::Config {
            source_name: name,
            message: "no \"mcpServers\" object".into(),
        });
    }
    Ok(v)
}

/// A file name for a server's records: its name with anything but `[A-Za-z0-9_-]`
/// replaced, so a server name cannot escape the directory.
fn file_for(dir: &Path, kind: &str, name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("{kind}-{safe}.jsonl"))
}

async fn rewrite(
    config: &Value,
    source_name: &str,
    dir: &Path,
    (tap_exe, cwd): (&Path, &Path),
    p: &mut Prepared,
    diagnostics: &Diagnostics,
) -> Result<Value, McpError> {
    let mut config = config.clone();
    let servers = config["mcpServers"]
        .as_object_mut()
        .expect("checked in load");
    for (name, server) in servers.iter_mut() {
        let kind = server
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("stdio");
        match kind {
            "stdio" => {
                let Some(command) = server.get("command").and_then(Value::as_str) else {
                    return Err(McpError::Config {
                        source_name: source_name.into(),
                        message: format!("server {name:?} has no \"command\""),
                    });
                };
                let mut args = vec![
                    json!("mcp-tap"),
                    json!("--name"),
                    json!(name),
                    json!("-o"),
                    json!(file_for(dir, "stdio", name).to_string_lossy()),
                    // A server the CLI starts again writes its file again (the sandbox is
                    // fresh for every run, so nothing recorded by another run is replaced).
                    json!("--force"),
                    json!("--cwd"),
                    json!(cwd.to_string_lossy()),
                    json!("--"),
                    json!(command),
                ];
                if let Some(a) = server.get("args").and_then(Value::as_array) {
                    args.extend(a.iter().cloned());
                }
                server["command"] = json!(tap_exe.to_string_lossy());
                server["args"] = Value::Array(args);
            }
            "http" => {
                let Some(url) = server.get("url").and_then(Value::as_str) else {
                    return Err(McpError::Config {
                        source_name: source_name.into(),
                        message: format!("server {name:?} has no \"url\""),
                    });
                };
                let sink =
                    McpSink::create(&file_for(dir, "http", name), &format!("mcp-http {name}"))?
                        .reporting_to(diagnostics.clone());
                let tap = http::start(name, url, Arc::new(sink)).await?;
                server["url"] = json!(tap.url);
                p.proxies.push(tap);
            }
            other => p
                .skipped
                .push(format!("{name}: transport {other:?} is not recorded")),
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn stdio_servers_run_under_the_tap_and_other_flags_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = r#"{"mcpServers":{"jobs":{"command":"python3","args":["s.py","-v"],"env":{"A":"1"}},"x/y":{"command":"z"},"old":{"type":"sse","url":"http://h/sse"}}}"#;
        let args: Vec<String> = ["-p", "hi", "--mcp-config", cfg, "--allowedTools", "x"]
            .map(String::from)
            .to_vec();
        let p = prepare(
            &args,
            dir.path(),
            Path::new("/bin/agentwire"),
            Path::new("/src"),
        )
        .await
        .unwrap();
        assert_eq!(p.args[..3], args[..3]);
        assert_eq!(p.args[4..], args[4..]);
        let v: Value = serde_json::from_slice(&std::fs::read(&p.args[3]).unwrap()).unwrap();
        let jobs = &v["mcpServers"]["jobs"];
        assert_eq!(jobs["command"], "/bin/agentwire");
        let a: Vec<&str> = jobs["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let out = dir.path().join("stdio-jobs.jsonl");
        assert_eq!(
            a,
            [
                "mcp-tap",
                "--name",
                "jobs",
                "-o",
                out.to_str().unwrap(),
                "--force",
                "--cwd",
                "/src",
                "--",
                "python3",
                "s.py",
                "-v"
            ]
        );
        assert_eq!(jobs["env"]["A"], "1");
        // a name with a slash cannot leave the directory
        assert!(v["mcpServers"]["x/y"]["args"][4]
            .as_str()
            .unwrap()
            .ends_with("stdio-x_y.jsonl"));
        assert_eq!(v["mcpServers"]["old"]["url"], "http://h/sse");
        assert_eq!(p.skipped.len(), 1);
    }

    #[tokio::test]
    async fn a_config_without_servers_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let args = vec!["--mcp-config=/nonexistent/cfg.json".to_string()];
        let e = prepare(&args, dir.path(), Path::new("a"), Path::new("."))
            .await
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/cfg.json"), "{e}");
        let args = vec!["--mcp-config".to_string(), "{\"servers\":{}}".to_string()];
        let e = prepare(&args, dir.path(), Path::new("a"), Path::new("."))
            .await
            .err()
            .unwrap();
        assert!(e.to_string().contains("mcpServers"), "{e}");
    }
}
