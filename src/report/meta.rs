//! What a shareable report is about: per input the client and its version, the route,
//! the settings the user chose, and when it was recorded. Read from the trace's recording
//! context; where a trace has none (pcap files, imports), from the first Messages
//! request: the user agent names the client version, and a `Host` other than
//! `api.anthropic.com` means the base-URL route (marked as inferred).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::capture::record::chosen_env;
use crate::capture::route::Route;
use crate::diff::headers::client_version;
use crate::trace::{header_value, Context, Exchange, Record, Trace};

/// One input of a report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InputMeta {
    /// The input as the user wrote it (path, `FILE#N`, `claude-code@2.1.304`).
    pub input: String,
    /// Client name (`claude-code`), if known.
    pub client: Option<String>,
    /// Client version (`2.1.304`), if known.
    pub version: Option<String>,
    /// Route (`first-party`, `base-url`), if known.
    pub route: Option<String>,
    /// True when the route was inferred from the request's `Host`, not recorded.
    pub route_inferred: bool,
    /// Settings the user chose for the run, `K=V`: the recorded environment without the
    /// variables `record` sets for every run ([`chosen_env`]).
    pub settings: Vec<String>,
    /// True when the input recorded its run's environment (`record`, `matrix`): an empty
    /// [`InputMeta::settings`] then means default settings; false for inputs that cannot
    /// say (pcap files, imports), whose settings are unknown.
    pub settings_recorded: bool,
    /// Start of the first exchange (RFC 3339, UTC), if any.
    pub recorded_at: Option<String>,
    /// Exchanges in the trace.
    pub exchanges: usize,
    /// [`InputMeta::name`], filled by [`Meta::new`].
    pub name: String,
    /// [`InputMeta::setup`], filled by [`Meta::new`].
    pub setup: String,
}

impl InputMeta {
    /// Describe `trace`, given as `input`.
    pub fn of(input: &str, trace: &Trace) -> InputMeta {
        Self::from_parts(
            input,
            &trace.context,
            trace.exchanges.iter().find(|x| x.is_messages()),
            trace.exchanges.len(),
            trace.exchanges.iter().map(|x| x.started_at).min(),
        )
    }

    /// Describe an input from its recording context, its first Messages exchange, how
    /// many exchanges it has and when the earliest started.
    fn from_parts(
        input: &str,
        c: &Context,
        first: Option<&Exchange>,
        exchanges: usize,
        earliest: Option<DateTime<Utc>>,
    ) -> InputMeta {
        let header = |name: &str| {
            first.and_then(|x| header_value(&x.request.headers, name).map(str::to_string))
        };
        let ua = header("user-agent");
        let (client, version) = match (&c.cli, &c.cli_version) {
            (Some(n), Some(v)) => (Some(n.clone()), Some(v.clone())),
            _ => {
                let v = ua.as_deref().and_then(client_version);
                let n = ua.as_deref().and_then(|u| {
                    u.starts_with("claude-cli/")
                        .then(|| "claude-code".to_string())
                        .or_else(|| c.cli.clone())
                });
                (n, v)
            }
        };
        let (route, route_inferred) = match &c.route {
            Some(r) => (Some(r.clone()), false),
            None => match header("host") {
                Some(h) => (Some(Route::of_host(&h).name().to_string()), true),
                None => (None, false),
            },
        };
        // Every field is written into report and prompt titles: each passes the redaction
        // whatever the trace claims (a hand-edited or older trace's `MY_PASSWORD=V`).
        use crate::trace::redact::{redact_env, redact_text};
        let settings = chosen_env(&c.env)
            .map(|(k, v)| redact_text(&format!("{k}={}", redact_env(k, v))))
            .collect();
        let clean = |s: Option<String>| s.map(|s| redact_text(&s));
        InputMeta {
            input: redact_text(input),
            client: clean(client),
            version: clean(version),
            route: clean(route),
            route_inferred,
            settings,
            settings_recorded: !c.env.is_empty(),
            recorded_at: earliest.map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
            exchanges,
            name: String::new(),
            setup: String::new(),
        }
    }

    /// `claude-code 2.1.304`, or the input when the version is unknown.
    pub fn name(&self) -> String {
        match (&self.client, &self.version) {
            (Some(c), Some(v)) => format!("{c} {v}"),
            (None, Some(v)) => format!("version {v}"),
            _ => self.input.clone(),
        }
    }

    /// `base-url route, ENABLE_TOOL_SEARCH=true` (route and settings; `default settings`
    /// when the run recorded none, `settings not recorded` when the input cannot say).
    pub fn setup(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.route {
            parts.push(if self.route_inferred {
                format!("{r} route (inferred from the Host header)")
            } else {
                format!("{r} route")
            });
        }
        if !self.settings_recorded {
            parts.push("settings not recorded".into());
        } else if self.settings.is_empty() {
            parts.push("default settings".into());
        } else {
            parts.extend(self.settings.iter().cloned());
        }
        parts.join(", ")
    }
}

/// Builds an [`InputMeta`] from a trace's records as they stream past, for inputs read
/// once and not kept in memory (`report analyze`). The same result as [`InputMeta::of`]
/// on the whole trace: the first header's context, the first Messages exchange.
#[derive(Debug, Default)]
pub struct MetaCollector {
    context: Option<Context>,
    first: Option<Exchange>,
    exchanges: usize,
    earliest: Option<DateTime<Utc>>,
}

impl MetaCollector {
    /// Take in one record of the input.
    pub fn record(&mut self, r: &Record) {
        match r {
            Record::Header { context, .. } if self.context.is_none() => {
                self.context = Some(context.clone())
            }
            Record::Exchange(x) => {
                self.exchanges += 1;
                self.earliest = Some(self.earliest.map_or(x.started_at, |e| e.min(x.started_at)));
                if self.first.is_none() && x.is_messages() {
                    self.first = Some((**x).clone());
                }
            }
            _ => {}
        }
    }

    /// The input's description, given as `input`.
    pub fn finish(self, input: &str) -> InputMeta {
        InputMeta::from_parts(
            input,
            &self.context.unwrap_or_default(),
            self.first.as_ref(),
            self.exchanges,
            self.earliest,
        )
    }
}

/// The head of a report: title, when and by what it was made, and its inputs.
#[derive(Clone, Debug, Serialize)]
pub struct Meta {
    /// The title.
    pub title: String,
    /// When the report was made (RFC 3339, UTC).
    pub generated_at: String,
    /// agentwire version that made it.
    pub agentwire_version: String,
    /// The inputs.
    pub inputs: Vec<InputMeta>,
}

impl Meta {
    /// A head with `title` over `inputs`, stamped now.
    pub fn new(title: String, mut inputs: Vec<InputMeta>) -> Meta {
        for i in &mut inputs {
            i.name = i.name();
            i.setup = i.setup();
        }
        Meta {
            title: crate::trace::redact::redact_text(&title),
            generated_at: chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            agentwire_version: env!("CARGO_PKG_VERSION").to_string(),
            inputs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Body, Exchange, HttpRequest, Source, SourceKind};

    fn trace(headers: &[(&str, &str)]) -> Trace {
        let x = Exchange {
            id: 0,
            started_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            ended_at: None,
            source: Source::new(SourceKind::Pcap),
            request: HttpRequest {
                method: "POST".into(),
                target: "/v1/messages".into(),
                version: "HTTP/1.1".into(),
                headers: headers
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                body: Body::new(b"{}".to_vec()),
            },
            response: None,
            error: None,
            notes: Default::default(),
            websocket: None,
        };
        Trace {
            path: "t.jsonl".into(),
            context: Default::default(),
            exchanges: vec![x],
            others: vec![],
            problems: vec![],
            mcp: vec![],
            parts: vec![],
        }
    }

    #[test]
    fn version_and_route_from_headers_when_the_context_is_empty() {
        let t = trace(&[
            ("Host", "127.0.0.1:41234"),
            ("User-Agent", "claude-cli/2.1.303 (external, sdk-cli)"),
        ]);
        let m = InputMeta::of("a.pcap", &t);
        assert_eq!(m.name(), "claude-code 2.1.303");
        assert_eq!(m.route.as_deref(), Some("base-url"));
        assert!(m.route_inferred);
        assert_eq!(m.recorded_at.as_deref(), Some("2027-01-15T08:00:00Z"));
        let t = trace(&[("host", "api.anthropic.com")]);
        let m = InputMeta::of("b.pcap", &t);
        assert_eq!(m.route.as_deref(), Some("first-party"));
        assert_eq!(m.name(), "b.pcap");
    }

    #[test]
    fn settings_leave_out_the_sandbox() {
        let mut t = trace(&[]);
        t.context.cli = Some("claude-code".into());
        t.context.cli_version = Some("2.1.304".into());
        t.context.route = Some("first-party".into());
        for (k, v) in [
            ("HOME", "/tmp/x"),
            ("TZ", "UTC"),
            ("HTTPS_PROXY", "http://127.0.0.1:1"),
            ("ENABLE_TOOL_SEARCH", "true"),
        ] {
            t.context.env.insert(k.into(), v.into());
        }
        let m = InputMeta::of("claude-code@2.1.304", &t);
        assert_eq!(m.settings, ["ENABLE_TOOL_SEARCH=true"]);
        assert_eq!(m.setup(), "first-party route, ENABLE_TOOL_SEARCH=true");
        t.context.env.remove("ENABLE_TOOL_SEARCH");
        let m = InputMeta::of("claude-code@2.1.304", &t);
        assert_eq!(m.setup(), "first-party route, default settings");
    }

    /// Reports called a pcap of a run with `ENABLE_TOOL_SEARCH=true` "default settings":
    /// an input that recorded no environment cannot say what its settings were.
    #[test]
    fn inputs_without_a_recorded_environment_say_their_settings_are_unknown() {
        let mut t = trace(&[]);
        t.context.route = Some("base-url".into());
        let m = InputMeta::of("capture.pcap", &t);
        assert_eq!(m.setup(), "base-url route, settings not recorded");
    }
}
