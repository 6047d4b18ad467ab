//! opencode (npm `opencode-ai`) under agentwire: the throwaway configuration each of its
//! three providers needs, and its MCP servers moved into that configuration.
//!
//! Facts (opencode 1.18.33, measured 2026-12-01, `agents.md` §3 in the shared folder):
//! - configuration `~/.config/opencode/opencode.json`; one prompt is `opencode run PROMPT`;
//! - provider `anthropic` (`options.baseURL`, `options.apiKey`, model
//!   `anthropic/claude-sonnet-4-5`): `POST /v1/messages`; provider `openai` (model
//!   `openai/gpt-6-sol`): `POST /v1/responses`; an `@ai-sdk/openai-compatible` provider with
//!   its `models`: `POST /v1/chat/completions`;
//! - MCP servers are `"mcp": {"NAME": {"type": "local", "command": [PROGRAM, ARGS…],
//!   "environment": {…}}}` (or `{"type": "remote", "url", "headers"}`), and the model
//!   sees their tools as `NAME_TOOL`;
//! - `OPENCODE_DISABLE_MODELS_FETCH=1` stops the model-catalog fetch from models.opencode.ai.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::route::{Route, FAKE_API_KEY, FAKE_OPENAI_KEY};

/// The name of the OpenAI-compatible provider agentwire writes (route `compatible`).
pub const COMPAT_PROVIDER: &str = "agentwire";

/// The model of the OpenAI-compatible provider.
pub const COMPAT_MODEL: &str = "agentwire-model";

/// The routes opencode can take (one per provider), the default first.
pub const ROUTES: &[Route] = &[Route::Anthropic, Route::OpenAi, Route::Compatible];

/// The arguments of a run of one prompt.
pub fn print_args(prompt: &str) -> Vec<String> {
    vec!["run".into(), prompt.into()]
}

/// `opencode.json` for `route`, pointing at `api` (`http://127.0.0.1:P/v1`).
pub fn config(route: Route, api: &str) -> Value {
    let (model, provider) = match route {
        Route::OpenAi => (
            "openai/gpt-6-sol".to_string(),
            json!({"openai": {"options": {"baseURL": api, "apiKey": FAKE_OPENAI_KEY},
                "models": {"gpt-6-sol": {"name": "gpt-6-sol"}}}}),
        ),
        Route::Compatible => (
            format!("{COMPAT_PROVIDER}/{COMPAT_MODEL}"),
            json!({COMPAT_PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": COMPAT_PROVIDER,
                "options": {"baseURL": api, "apiKey": FAKE_OPENAI_KEY},
                "models": {COMPAT_MODEL: {"name": COMPAT_MODEL}}}}),
        ),
        _ => (
            "anthropic/claude-sonnet-4-5".to_string(),
            json!({"anthropic": {"options": {"baseURL": api, "apiKey": FAKE_API_KEY}}}),
        ),
    };
    json!({"$schema": "https://opencode.ai/config.json", "model": model,
        "provider": provider, "autoupdate": false, "share": "disabled"})
}

/// The configuration file's path under `home`.
pub fn config_path(home: &Path) -> std::path::PathBuf {
    home.join(".config").join("opencode").join("opencode.json")
}

/// Write the configuration of `route` under `home` and add opencode's variables to `env`.
///
/// Errors: the file cannot be written.
pub fn prepare(
    route: Route,
    home: &Path,
    base_url: &str,
    env: &mut BTreeMap<String, String>,
) -> std::io::Result<()> {
    let path = config_path(home);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let api = format!("{}/v1", base_url.trim_end_matches('/'));
    let text = serde_json::to_string_pretty(&config(route, &api)).unwrap_or_default();
    std::fs::write(&path, text)?;
    env.insert("OPENCODE_DISABLE_MODELS_FETCH".into(), "1".into());
    env.insert("OPENCODE_DISABLE_AUTOUPDATE".into(), "1".into());
    env.insert(
        "XDG_CONFIG_HOME".into(),
        home.join(".config").to_string_lossy().into_owned(),
    );
    Ok(())
}

/// Move the MCP servers of every `--mcp-config FILE` in `args` (Claude Code's format,
/// already rewritten to run under agentwire's tap: [`super::mcp::config`]) into the
/// `mcp` member of opencode's configuration under `home`, and drop the flags from `args`
/// (opencode has no such flag). Returns the servers' names, in order.
///
/// Errors: a configuration that cannot be read, or the file cannot be written.
pub fn adopt_mcp(args: &mut Vec<String>, home: &Path) -> std::io::Result<Vec<String>> {
    let flag = super::mcp::config::MCP_CONFIG_FLAG;
    let mut servers = serde_json::Map::new();
    let mut kept = Vec::new();
    let mut it = std::mem::take(args).into_iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix(&format!("{flag}=")) {
            Some(v) => v.to_string(),
            None if a == flag => it.next().unwrap_or_default(),
            None => {
                kept.push(a);
                continue;
            }
        };
        let text = std::fs::read_to_string(&value).unwrap_or(value);
        let v: Value = serde_json::from_str(&text).map_err(std::io::Error::other)?;
        for (name, s) in v
            .get("mcpServers")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            servers.insert(name.clone(), server_entry(s));
        }
    }
    *args = kept;
    if servers.is_empty() {
        return Ok(Vec::new());
    }
    let path = config_path(home);
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&path)?).map_err(std::io::Error::other)?;
    let names = servers.keys().cloned().collect();
    cfg["mcp"] = Value::Object(servers);
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&cfg).unwrap_or_default(),
    )?;
    Ok(names)
}

/// One Claude Code `mcpServers` entry as an opencode `mcp` entry.
fn server_entry(s: &Value) -> Value {
    if let Some(url) = s.get("url") {
        return json!({"type": "remote", "url": url,
            "headers": s.get("headers").cloned().unwrap_or(json!({})), "enabled": true});
    }
    let mut command = vec![s.get("command").cloned().unwrap_or(json!(""))];
    command.extend(
        s.get("args")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    );
    json!({"type": "local", "command": command,
        "environment": s.get("env").cloned().unwrap_or(json!({})), "enabled": true})
}

/// The `(server, tool)` an opencode tool name stands for, given the MCP servers the
/// recording configured (`servers`): `NAME_TOOL` where `NAME` is one of them (the longest
/// that fits). Never guessed from an underscore alone: with no server list, `None`.
pub fn mcp_tool<'a>(name: &'a str, servers: &[String]) -> Option<(&'a str, &'a str)> {
    servers
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let rest = name.strip_prefix(s.as_str())?.strip_prefix('_')?;
            (!rest.is_empty()).then(|| (&name[..s.len()], rest))
        })
        .max_by_key(|(s, _)| s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_gets_its_config_and_mcp_servers_move_into_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = BTreeMap::new();
        prepare(
            Route::Compatible,
            dir.path(),
            "http://127.0.0.1:9/",
            &mut env,
        )
        .unwrap();
        let path = config_path(dir.path());
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(cfg["model"], "agentwire/agentwire-model");
        let p = &cfg["provider"]["agentwire"];
        assert_eq!(p["npm"], "@ai-sdk/openai-compatible");
        assert_eq!(p["options"]["baseURL"], "http://127.0.0.1:9/v1");
        assert_eq!(env["OPENCODE_DISABLE_MODELS_FETCH"], "1");
        assert_eq!(
            config(Route::OpenAi, "u")["provider"]["openai"]["options"]["baseURL"],
            "u"
        );
        assert_eq!(
            config(Route::Anthropic, "u")["model"],
            "anthropic/claude-sonnet-4-5"
        );
        let mcp = dir.path().join("m.json");
        std::fs::write(
            &mcp,
            r#"{"mcpServers":{"jobs":{"command":"python3","args":["j.py"],"env":{"A":"1"}}}}"#,
        )
        .unwrap();
        let mut args = vec![
            "run".into(),
            "hi".into(),
            "--mcp-config".into(),
            mcp.to_string_lossy().into_owned(),
        ];
        assert_eq!(adopt_mcp(&mut args, dir.path()).unwrap(), ["jobs"]);
        assert_eq!(args, ["run", "hi"]);
        let cfg: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(cfg["mcp"]["jobs"]["command"], json!(["python3", "j.py"]));
        assert_eq!(cfg["mcp"]["jobs"]["environment"]["A"], "1");
    }

    #[test]
    fn mcp_tools_are_known_only_from_the_server_list() {
        let servers = vec!["jobs".to_string(), "jobs_v2".to_string()];
        assert_eq!(
            mcp_tool("jobs_get_status", &servers),
            Some(("jobs", "get_status"))
        );
        assert_eq!(
            mcp_tool("jobs_v2_start", &servers),
            Some(("jobs_v2", "start"))
        );
        assert_eq!(mcp_tool("todo_write", &servers), None);
        assert_eq!(mcp_tool("jobs_get_status", &[]), None);
    }
}
