//! The agent CLIs `record --cli` knows, and what each needs to run in agentwire's sandbox
//! against its fake server: which routes it can take, the default arguments of a print-mode
//! run, and the files and environment of each route.
//!
//! Facts (measured 2026-12-01, `agents.md` in the shared folder):
//! - **Claude Code**: `ANTHROPIC_BASE_URL` (route `base-url`) or `HTTPS_PROXY` with agentwire's
//!   CA (route `first-party`); `claude -p PROMPT`.
//! - **Codex** (0.165.0, 0.171.0): `OPENAI_BASE_URL` in the environment is ignored. Two
//!   routes, which behave differently: a custom provider in `$CODEX_HOME/config.toml`
//!   (`model_provider`, `[model_providers.NAME]` with `base_url`, `env_key`,
//!   `wire_api = "responses"`): `POST /v1/responses` with SSE (route `custom-provider`); or
//!   the built-in provider with `openai_base_url`: the Responses WebSocket first, HTTP after
//!   a refused upgrade (route `builtin`; it authenticates with `CODEX_API_KEY`). `codex exec
//!   --skip-git-repo-check PROMPT` runs one prompt (sandbox `read-only`, approvals `never` by
//!   default).
//! - **Gemini CLI** (0.61.0): `GOOGLE_GEMINI_BASE_URL` at agentwire and a `GEMINI_API_KEY`,
//!   plus `~/.gemini/settings.json` naming the auth type (without it the CLI exits 41) and
//!   `GEMINI_CLI_TRUST_WORKSPACE=true` (headless runs refuse an untrusted folder: exit 55);
//!   `http://` is accepted for 127.0.0.1 only (route `base-url`). `gemini -p PROMPT`;
//!   `--yolo` (the shell tools) is passed through like any argument.
//! - **opencode** (1.18.25, 1.18.33): `~/.config/opencode/opencode.json` names one provider
//!   at agentwire (routes `anthropic`, `openai`, `compatible`: Messages, Responses or Chat
//!   Completions); `opencode run PROMPT` ([`super::opencode`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::route::{Route, FAKE_OPENAI_KEY};

/// A fake Gemini API key (refused by any real server).
pub const FAKE_GEMINI_KEY: &str = "agentwire-fake-gemini-key";

/// Gemini CLI's `settings.json`: API-key authentication.
pub const GEMINI_SETTINGS: &str = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;

/// The name of the custom provider agentwire writes into Codex's configuration.
pub const CODEX_PROVIDER: &str = "agentwire";

/// An agent CLI `record --cli` can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    /// Anthropic's Claude Code (npm `@anthropic-ai/claude-code`).
    ClaudeCode,
    /// OpenAI's Codex (npm `@openai/codex`).
    Codex,
    /// Google's Gemini CLI (npm `@google/gemini-cli`).
    Gemini,
    /// opencode (npm `opencode-ai`), on any of its three providers ([`super::opencode`]).
    Opencode,
}

impl Agent {
    /// The agent a CLI spec's name names (`claude-code`, `codex`).
    pub fn of(cli: &str) -> Option<Agent> {
        match cli {
            "claude-code" | "claude" => Some(Agent::ClaudeCode),
            "codex" => Some(Agent::Codex),
            "gemini" | "gemini-cli" => Some(Agent::Gemini),
            "opencode" => Some(Agent::Opencode),
            _ => None,
        }
    }

    /// The routes it can take, the default first.
    pub fn routes(self) -> &'static [Route] {
        match self {
            Agent::ClaudeCode => &[Route::FirstParty, Route::BaseUrl],
            Agent::Codex => &[Route::CustomProvider, Route::Builtin],
            Agent::Gemini => &[Route::BaseUrl],
            Agent::Opencode => super::opencode::ROUTES,
        }
    }

    /// Its default route.
    pub fn default_route(self) -> Route {
        self.routes()[0]
    }

    /// The arguments of a print-mode run of one prompt.
    pub fn print_args(self, prompt: &str) -> Vec<String> {
        match self {
            Agent::ClaudeCode | Agent::Gemini => vec!["-p".into(), prompt.into()],
            Agent::Codex => vec!["exec".into(), "--skip-git-repo-check".into(), prompt.into()],
            Agent::Opencode => super::opencode::print_args(prompt),
        }
    }

    /// Prepare the sandbox for `route` (`home`: the run's HOME; `base_url`: agentwire's
    /// server) and add the route's variables to `env`. Codex: writes `$CODEX_HOME/config.toml`.
    ///
    /// Errors: the configuration file cannot be written.
    pub fn prepare(
        self,
        route: Route,
        home: &Path,
        base_url: &str,
        env: &mut BTreeMap<String, String>,
    ) -> std::io::Result<()> {
        match self {
            Agent::ClaudeCode => return Ok(()),
            Agent::Gemini => return prepare_gemini(home, base_url, env),
            Agent::Opencode => return super::opencode::prepare(route, home, base_url, env),
            Agent::Codex => {}
        }
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home)?;
        let api = format!("{}/v1", base_url.trim_end_matches('/'));
        std::fs::write(codex_home.join("config.toml"), codex_config(route, &api))?;
        env.insert(
            "CODEX_HOME".into(),
            codex_home.to_string_lossy().into_owned(),
        );
        env.insert("OPENAI_API_KEY".into(), FAKE_OPENAI_KEY.into());
        env.insert("CODEX_API_KEY".into(), FAKE_OPENAI_KEY.into());
        Ok(())
    }
}

/// Gemini CLI's sandbox: `~/.gemini/settings.json` ([`GEMINI_SETTINGS`]), its base URL,
/// a fake key, and the workspace trusted.
fn prepare_gemini(
    home: &Path,
    base_url: &str,
    env: &mut BTreeMap<String, String>,
) -> std::io::Result<()> {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("settings.json"), GEMINI_SETTINGS)?;
    let set = |env: &mut BTreeMap<String, String>, k: &str, v: &str| {
        env.insert(k.into(), v.into());
    };
    set(
        env,
        "GOOGLE_GEMINI_BASE_URL",
        base_url.trim_end_matches('/'),
    );
    set(env, "GEMINI_API_KEY", FAKE_GEMINI_KEY);
    set(env, "GEMINI_CLI_TRUST_WORKSPACE", "true");
    Ok(())
}

/// Codex's `config.toml` for a route, pointing at `api` (`http://127.0.0.1:P/v1`).
pub fn codex_config(route: Route, api: &str) -> String {
    let api = toml_string(api);
    match route {
        Route::Builtin => format!("openai_base_url = {api}\n"),
        _ => format!(
            "model_provider = \"{CODEX_PROVIDER}\"\n\n[model_providers.{CODEX_PROVIDER}]\nname = \"{CODEX_PROVIDER}\"\nbase_url = {api}\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
        ),
    }
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_gets_a_provider_file_per_route_and_the_keys_it_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = BTreeMap::new();
        Agent::Codex
            .prepare(
                Route::CustomProvider,
                dir.path(),
                "http://127.0.0.1:9/",
                &mut env,
            )
            .unwrap();
        let cfg = std::fs::read_to_string(dir.path().join(".codex/config.toml")).unwrap();
        assert_eq!(
            cfg,
            "model_provider = \"agentwire\"\n\n[model_providers.agentwire]\nname = \"agentwire\"\nbase_url = \"http://127.0.0.1:9/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n"
        );
        assert_eq!(
            env["CODEX_HOME"],
            dir.path().join(".codex").to_string_lossy()
        );
        assert_eq!(env["CODEX_API_KEY"], FAKE_OPENAI_KEY);
        assert_eq!(
            codex_config(Route::Builtin, "http://127.0.0.1:9/v1"),
            "openai_base_url = \"http://127.0.0.1:9/v1\"\n"
        );
        assert_eq!(toml_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000A\"");
        assert_eq!(
            Agent::Codex.print_args("hi"),
            ["exec", "--skip-git-repo-check", "hi"]
        );
        assert_eq!(Agent::of("claude"), Some(Agent::ClaudeCode));
        assert_eq!(Agent::ClaudeCode.default_route(), Route::FirstParty);
    }

    #[test]
    fn gemini_gets_its_settings_base_url_key_and_trust() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = BTreeMap::new();
        let agent = Agent::of("gemini").unwrap();
        agent
            .prepare(Route::BaseUrl, dir.path(), "http://127.0.0.1:9/", &mut env)
            .unwrap();
        let s = std::fs::read_to_string(dir.path().join(".gemini/settings.json")).unwrap();
        assert_eq!(s, GEMINI_SETTINGS);
        assert_eq!(env["GOOGLE_GEMINI_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(env["GEMINI_CLI_TRUST_WORKSPACE"], "true");
        assert_eq!(env["GEMINI_API_KEY"], FAKE_GEMINI_KEY);
        assert_eq!(agent.routes(), [Route::BaseUrl]);
        assert_eq!(agent.print_args("hi"), ["-p", "hi"]);
    }
}
