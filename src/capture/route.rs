//! How a recorded CLI reaches agentwire ([`Route`]), and the fake API keys it is given.

/// A fake OpenAI key (the shape OpenAI's keys have; refused by any real server), given to
/// recorded OpenAI-dialect CLIs (Codex, opencode's `openai` provider).
pub const FAKE_OPENAI_KEY: &str = "sk-proj-agentwire-FAKE-KEY-000000000000000000000000";

/// The API key given to recorded CLIs. It is fake, and the tests check it never reaches a
/// trace.
pub const FAKE_API_KEY: &str = "sk-ant-api03-agentwire-FAKE-KEY-0000000000000000000000";

/// How the recorded CLI reaches agentwire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `HTTPS_PROXY` to agentwire's intercepting proxy, trusting agentwire's CA
    /// (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`): the client believes it talks to
    /// api.anthropic.com.
    FirstParty,
    /// `ANTHROPIC_BASE_URL` pointing at agentwire.
    BaseUrl,
    /// Codex: a custom model provider in `$CODEX_HOME/config.toml` whose `base_url` is
    /// agentwire (HTTP `POST /v1/responses` with SSE), as a gateway user configures it.
    CustomProvider,
    /// Codex: the built-in OpenAI provider with `openai_base_url` at agentwire (the
    /// Responses WebSocket first, HTTP after a refused upgrade), as a user of OpenAI's own
    /// endpoint runs it.
    Builtin,
    /// opencode's `anthropic` provider with `baseURL` at agentwire (`POST /v1/messages`).
    Anthropic,
    /// opencode's `openai` provider with `baseURL` at agentwire (`POST /v1/responses`).
    OpenAi,
    /// An `@ai-sdk/openai-compatible` provider of opencode at agentwire
    /// (`POST /v1/chat/completions`).
    Compatible,
}

impl Route {
    /// `first-party` or `base-url`, as written in trace contexts.
    pub fn name(&self) -> &'static str {
        match self {
            Route::FirstParty => "first-party",
            Route::BaseUrl => "base-url",
            Route::CustomProvider => "custom-provider",
            Route::Builtin => "builtin",
            Route::Anthropic => "anthropic",
            Route::OpenAi => "openai",
            Route::Compatible => "compatible",
        }
    }

    /// The route a request took, told from its `Host` header (for traces that did not
    /// record it: pcap files, imports): first-party when it names [`FIRST_PARTY_HOST`]
    /// (with or without a port), else a base URL pointing elsewhere.
    pub fn of_host(host: &str) -> Route {
        if host.split(':').next() == Some(FIRST_PARTY_HOST) {
            Route::FirstParty
        } else {
            Route::BaseUrl
        }
    }
}

/// The host the first-party route intercepts.
pub const FIRST_PARTY_HOST: &str = "api.anthropic.com";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_route_is_told_from_the_host() {
        assert_eq!(Route::of_host("api.anthropic.com"), Route::FirstParty);
        assert_eq!(Route::of_host("api.anthropic.com:443"), Route::FirstParty);
        assert_eq!(Route::of_host("127.0.0.1:8080"), Route::BaseUrl);
        assert_eq!(Route::of_host("api.anthropic.com.evil"), Route::BaseUrl);
    }
}
