//! The recorded run's environment: a clean HOME's variables, the route's, the agent's and
//! the caller's `--env` changes.

use std::collections::BTreeMap;

use super::config::{agent_of, RecordConfig};
use super::RecordError;
use crate::capture::agent::Agent;
use crate::capture::route::{Route, FAKE_API_KEY};

/// Folders a user's home usually has; the recorded CLI finds them in its fresh HOME.
pub const HOME_FOLDERS: &[&str] = &[
    ".config",
    ".cache",
    ".local/share",
    ".local/bin",
    "Desktop",
    "Documents",
    "Downloads",
];

/// The ordinary variables every recorded run gets, before the route's and the caller's:
/// a shell (`SHELL`, the CLIs describe it in their prompts), a terminal type, a UTF-8
/// locale, UTC, a user name, the fresh `HOME` and the caller's `PATH` (so the CLI finds
/// its tools). Fixed values, so two recordings of one version agree; `--env K=V` or
/// `K=unset` changes any of them.
pub fn clean_env(home: &std::path::Path) -> BTreeMap<String, String> {
    let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("/bin/sh");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    [
        ("HOME", home.to_string_lossy().into_owned()),
        ("SHELL", shell.to_string()),
        ("TERM", "xterm-256color".to_string()),
        ("LANG", "C.UTF-8".to_string()),
        ("TZ", "UTC".to_string()),
        ("USER", "user".to_string()),
        ("LOGNAME", "user".to_string()),
        ("PATH", path),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// How the recorded CLI reaches agentwire, as environment variables.
pub enum RouteEnv<'a> {
    /// `ANTHROPIC_BASE_URL` names agentwire's server.
    BaseUrl(&'a str),
    /// The CLI talks to `api.anthropic.com` through agentwire's proxy, trusting its CA.
    FirstParty {
        /// The proxy URL (`HTTPS_PROXY`).
        proxy: &'a str,
        /// agentwire's CA certificate (`NODE_EXTRA_CA_CERTS`).
        ca: &'a std::path::Path,
        /// The system bundle plus that CA (`SSL_CERT_FILE`).
        bundle: &'a std::path::Path,
    },
}

/// The environment agentwire gives every recorded run before the caller's `--env`
/// changes: [`clean_env`], the config directory, the fake API key, the route's
/// variables, and telemetry, error reporting, auto-update and non-essential traffic off.
pub fn sandbox_env(
    home: &std::path::Path,
    config: &std::path::Path,
    route: &RouteEnv,
) -> BTreeMap<String, String> {
    let mut env = clean_env(home);
    let mut set = |k: &str, v: &str| {
        env.insert(k.to_string(), v.to_string());
    };
    set("CLAUDE_CONFIG_DIR", &config.to_string_lossy());
    set("ANTHROPIC_API_KEY", FAKE_API_KEY);
    match route {
        RouteEnv::FirstParty { proxy, ca, bundle } => {
            set("HTTPS_PROXY", proxy);
            set("https_proxy", proxy);
            set("NODE_EXTRA_CA_CERTS", &ca.to_string_lossy());
            set("SSL_CERT_FILE", &bundle.to_string_lossy());
        }
        RouteEnv::BaseUrl(url) => set("ANTHROPIC_BASE_URL", url),
    }
    set("DISABLE_TELEMETRY", "1");
    set("DISABLE_ERROR_REPORTING", "1");
    set("DISABLE_AUTOUPDATER", "1");
    set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    env
}

/// The settings a user chose for a recorded run: the variables of a recorded environment
/// (a trace context's `env`) that agentwire's sandbox does not set on either route
/// ([`sandbox_env`]), in the environment's order.
pub fn chosen_env(env: &BTreeMap<String, String>) -> impl Iterator<Item = (&String, &String)> {
    let sandbox = sandbox_vars();
    env.iter()
        .filter(move |(k, _)| !sandbox.contains(k.as_str()))
}

/// Names of the variables [`sandbox_env`] sets on either route: agentwire's sandbox, as
/// opposed to settings a user chose with `--env` ([`chosen_env`]).
pub(super) fn sandbox_vars() -> std::collections::BTreeSet<String> {
    let p = std::path::Path::new("/");
    let first_party = RouteEnv::FirstParty {
        proxy: "",
        ca: p,
        bundle: p,
    };
    [RouteEnv::BaseUrl(""), first_party]
        .iter()
        .flat_map(|r| sandbox_env(p, p, r).into_keys())
        .collect()
}

/// Parse `K=V` (with `K=unset` meaning remove K).
pub fn parse_env(kv: &str) -> Result<(String, Option<String>), RecordError> {
    let (k, v) = kv
        .split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| RecordError::BadEnv(kv.into()))?;
    Ok((k.into(), (v != "unset").then(|| v.to_string())))
}

/// Variables of [`sandbox_env`] that only Claude Code reads.
pub(super) const CLAUDE_ONLY: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
];

/// The recorded run's whole environment: [`sandbox_env`] (with the CA bundle written for
/// the first-party route), then the caller's `--env` changes.
pub(super) fn run_env(
    cfg: &RecordConfig,
    home: &std::path::Path,
    config: &std::path::Path,
    sandbox: &std::path::Path,
    base_url: &str,
    ca_path: Option<&std::path::Path>,
) -> Result<BTreeMap<String, String>, RecordError> {
    let bundle = sandbox.join("ca-bundle.pem");
    let route = match (cfg.route.unwrap_or(Route::FirstParty), ca_path) {
        (Route::FirstParty, Some(ca)) => {
            write_bundle(&bundle, ca).map_err(RecordError::Sandbox)?;
            RouteEnv::FirstParty {
                proxy: base_url,
                ca,
                bundle: &bundle,
            }
        }
        _ => RouteEnv::BaseUrl(base_url),
    };
    let mut env = sandbox_env(home, config, &route);
    if let Some(agent) = agent_of(cfg) {
        agent
            .prepare(
                cfg.route.unwrap_or(agent.default_route()),
                home,
                base_url,
                &mut env,
            )
            .map_err(RecordError::Sandbox)?;
        if agent != Agent::ClaudeCode {
            // Claude Code's variables mean nothing to another agent; its fake key would
            // only sit in its environment.
            for k in CLAUDE_ONLY {
                env.remove(*k);
            }
        }
    }
    for (k, v) in &cfg.env {
        match v {
            Some(v) => {
                env.insert(k.clone(), v.clone());
            }
            None => {
                env.remove(k);
            }
        }
    }
    Ok(env)
}

/// The system CA bundle (when there is one) plus agentwire's CA, for `SSL_CERT_FILE`.
pub(super) fn write_bundle(path: &std::path::Path, ca: &std::path::Path) -> std::io::Result<()> {
    let mut pem = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    pem.extend_from_slice(b"\n");
    pem.extend(std::fs::read(ca)?);
    std::fs::write(path, pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_vars_are_what_either_route_sets_and_nothing_a_user_chooses() {
        let home = std::path::Path::new("/h");
        let base = sandbox_env(home, home, &RouteEnv::BaseUrl("http://127.0.0.1:1"));
        let vars = sandbox_vars();
        assert!(base.keys().all(|k| vars.contains(k)));
        for k in [
            "HOME",
            "TZ",
            "PATH",
            "ANTHROPIC_BASE_URL",
            "HTTPS_PROXY",
            "SSL_CERT_FILE",
        ] {
            assert!(vars.contains(k), "{k}");
        }
        assert!(!base.contains_key("HTTPS_PROXY"));
        assert!(!vars.contains("ENABLE_TOOL_SEARCH"));
    }

    #[test]
    fn chosen_env_leaves_the_sandbox_out() {
        let env: BTreeMap<String, String> = [("HOME", "/h"), ("ENABLE_TOOL_SEARCH", "true")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let chosen: Vec<_> = chosen_env(&env).collect();
        assert_eq!(
            chosen,
            [(&"ENABLE_TOOL_SEARCH".to_string(), &"true".to_string())]
        );
    }

    #[test]
    fn env_parsing() {
        assert_eq!(parse_env("A=1").unwrap(), ("A".into(), Some("1".into())));
        assert_eq!(parse_env("A=unset").unwrap(), ("A".into(), None));
        assert_eq!(parse_env("A=").unwrap(), ("A".into(), Some(String::new())));
        assert!(parse_env("=1").is_err());
        assert!(parse_env("A").is_err());
    }
}
