//! The value parsers of the flags: each checks what was typed and returns the type the
//! library takes (a `Duration`, a `SocketAddr`, a `Url`, a `Timing`, a `Gate`, an `--env`
//! pair), so a command never parses a flag again and no value typed on the command line
//! can panic or hang the library. Their messages are the one wording of each bad value;
//! clap prefixes the flag and the value (`invalid value 'x0' for '--timing <TIMING>'`).

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::Url;

use agentwire::capture::matrix::EnvAxis;
use agentwire::capture::server::playback::Timing;
use agentwire::gate::Gate;

/// Seconds in a day, the cap of the server's timeouts.
pub(super) const DAY: u64 = 86_400;

/// `--rate`: requests per second, finite, from 0.001 (one every ~17 min) to 1,000,000.
pub(super) fn parse_rate(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of requests per second (e.g. 20)"))?;
    if !v.is_finite() || !(0.001..=1e6).contains(&v) {
        return Err(format!(
            "{s:?} is out of range: give requests per second from 0.001 to 1000000"
        ));
    }
    Ok(v)
}

/// `--duration`: seconds, or a number with `s`, `m` or `h`; more than 0, at most 366 days.
pub(super) fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('s') => (&t[..t.len() - 1], 1.0),
        Some('m') => (&t[..t.len() - 1], 60.0),
        Some('h') => (&t[..t.len() - 1], 3600.0),
        _ => (t, 1.0),
    };
    let bad =
        || format!("{s:?}: use seconds, or a number with s, m or h (30s, 5m), up to 366 days");
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let secs = v * mult;
    if !secs.is_finite() || secs <= 0.0 || secs > 366.0 * DAY as f64 {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

/// `--max-body`: bytes, from 1 to 4 GiB.
pub(super) fn parse_max_body(s: &str) -> Result<usize, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of bytes"))?;
    if !(1..=4 << 30).contains(&v) {
        return Err(format!("{s:?} is out of range: give 1 to 4294967296 bytes"));
    }
    usize::try_from(v).map_err(|_| format!("{s:?} is too large for this platform"))
}

/// `--max-decompressed`, `--max-expanded`: bytes, from 1 to 64 GiB.
pub(super) fn parse_bound(s: &str) -> Result<u64, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of bytes"))?;
    if !(1..=64 << 30).contains(&v) {
        return Err(format!(
            "{s:?} is out of range: give 1 to 68719476736 bytes"
        ));
    }
    Ok(v)
}

/// `--timing`: `recorded`, `none` or `xN` with N from 0.001 to 1000000.
pub(super) fn parse_timing(s: &str) -> Result<Timing, String> {
    Timing::parse(s).ok_or_else(|| {
        format!("{s:?}: use recorded, none, or xN with N from 0.001 to 1000000 (e.g. x10)")
    })
}

/// `serve --addr`: an `IP:PORT` socket address (`[IPv6]:PORT`), port 0 to 65535. The one
/// wording of a bad listen address: the library takes a `SocketAddr`.
pub(super) fn parse_listen_addr(s: &str) -> Result<SocketAddr, String> {
    s.trim().parse::<SocketAddr>().map_err(|_| {
        format!(
            "{s:?} is not an address to listen on: use IP:PORT with an IPv4 address (4 numbers 0-255) or [IPv6], and a port from 0 to 65535 (0 picks a free one), e.g. 127.0.0.1:8080"
        )
    })
}

/// `replay --to`, `serve --upstream`, `mcp-tap --http`, `export --base-url`: an absolute
/// `http://` or `https://` URL with a host.
pub(super) fn parse_http_url(s: &str) -> Result<Url, String> {
    let url = Url::parse(s.trim()).map_err(|e| {
        format!("{s:?} is not a URL ({e}): write it as http://HOST:PORT or https://HOST")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{s:?}: the scheme {:?} is not one agentwire speaks; use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{s:?} names no host: write it as http://HOST:PORT"));
    }
    Ok(url)
}

/// `replay --to`, `serve --upstream`, `export --base-url`: an http(s) URL that request
/// paths are appended to, so it has no query or fragment (they would be dropped, not
/// sent).
pub(super) fn parse_base_url(s: &str) -> Result<Url, String> {
    let url = parse_http_url(s)?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{s:?} has a query or fragment, which a base URL cannot carry (each request's own path and query are appended): write it as http://HOST:PORT[/PREFIX]"
        ));
    }
    Ok(url)
}

/// `serve --intercept`: host names, each lowercase, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hosts(pub Vec<String>);

impl std::fmt::Display for Hosts {
    /// The names separated by commas, as `--intercept` takes them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join(","))
    }
}

/// `serve --intercept`: comma-separated host names, at least one (blanks between commas
/// are skipped).
pub(super) fn parse_hosts(s: &str) -> Result<Hosts, String> {
    let hosts: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    if hosts.is_empty() {
        return Err(format!(
            "{s:?} names no host: give host names separated by commas, e.g. api.anthropic.com"
        ));
    }
    if let Some(h) = hosts.iter().find(|h| {
        !h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    }) {
        return Err(format!(
            "{h:?} is not a host name (letters, digits, '.', '-' only; no scheme, port or path), e.g. api.anthropic.com"
        ));
    }
    Ok(Hosts(
        hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
    ))
}

/// `replay --header`: `Name: value`, a valid HTTP header name and a value without line
/// breaks or NUL (RFC 9110 §5.5: a CR or LF would inject another header).
pub(super) fn parse_header(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?}: use \"Name: value\""))?;
    let (k, v) = (k.trim(), v.trim());
    if hyper::header::HeaderName::from_bytes(k.as_bytes()).is_err() {
        return Err(format!(
            "{k:?} is not a header name (letters, digits and !#$%&'*+-.^_`|~ only): use \"Name: value\""
        ));
    }
    if hyper::header::HeaderValue::from_str(v).is_err() || v.contains(['\r', '\n']) {
        return Err(format!(
            "the value of header {k:?} holds a line break or control character; give one header per --header"
        ));
    }
    Ok((k.to_string(), v.to_string()))
}

/// `--since DATE`: `YYYY-MM-DD` (midnight UTC) or an RFC 3339 time.
pub(super) fn parse_since(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| format!("{s:?} is not a date; write 2026-01-31 or 2026-01-31T12:00:00Z"))
}

/// `--env K=V` (`record`, `diff`, `report diff`, `history`): a variable set, or removed
/// with `K=unset` ([`agentwire::capture::record::parse_env`]).
pub(super) fn parse_env(s: &str) -> Result<(String, Option<String>), String> {
    agentwire::capture::record::parse_env(s).map_err(|e| e.to_string())
}

/// `matrix --env K=V1,V2`: one environment dimension ([`EnvAxis::parse`]).
pub(super) fn parse_env_axis(s: &str) -> Result<EnvAxis, String> {
    EnvAxis::parse(s).map_err(|e| e.to_string())
}

/// `diff --fail-on`, one comma-separated item: a gate of `diff`'s table
/// ([`agentwire::diff::gate::parse`]); a blank item (`a,,b`, a trailing comma) is no
/// gate.
pub(super) fn parse_diff_gate(s: &str) -> Result<Option<Gate>, String> {
    if s.trim().is_empty() {
        return Ok(None);
    }
    agentwire::diff::gate::parse(s)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// `analyze --fail-on`: a gate of `analyze`'s table ([`agentwire::analyze::gate::parse`]).
pub(super) fn parse_analyze_gate(s: &str) -> Result<Gate, String> {
    agentwire::analyze::gate::parse(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use agentwire::capture::server::playback::MAX_DELAY;
    use clap::Parser;
    use proptest::prelude::*;
    use std::time::Instant;

    #[test]
    fn a_base_url_with_a_query_is_refused_not_dropped() {
        // Found by an adversarial test: `replay --to http://h/?key=…` and `serve --upstream
        // …/base?key=X` dropped the query without a word.
        for bad in [
            "http://h/?key=abc",
            "https://h/base?x=1",
            "http://h:8080/#frag",
        ] {
            let e = parse_base_url(bad).unwrap_err();
            assert!(e.contains("query or fragment"), "{bad}: {e}");
        }
        for good in [
            "http://127.0.0.1:8080",
            "https://api.anthropic.com",
            "http://h/prefix/",
        ] {
            assert_eq!(parse_base_url(good).unwrap(), Url::parse(good).unwrap());
        }
    }

    #[test]
    fn flags_come_out_typed_and_blank_gate_items_are_no_gates() {
        let Command::Diff(d) =
            Cli::try_parse_from(["agentwire", "diff", "a", "b", "--fail-on", "tools-added,,"])
                .unwrap()
                .command
        else {
            panic!("not diff")
        };
        let gates: Vec<&str> = d
            .fail_on
            .iter()
            .flatten()
            .map(|g| g.expr.as_str())
            .collect();
        assert_eq!(gates, ["tools-added"]);
        assert!(parse_diff_gate("tools-vanished").is_err());
        assert!(parse_analyze_gate("bogus>1").unwrap_err().contains("bogus"));
        assert_eq!(
            parse_hosts(" API.anthropic.com, ,b.example").unwrap(),
            Hosts(vec!["api.anthropic.com".into(), "b.example".into()])
        );
        assert_eq!(parse_hosts("a,b").unwrap().to_string(), "a,b");
        assert_eq!(parse_env("K=unset").unwrap(), ("K".into(), None));
        assert!(parse_env("NOEQUALS").unwrap_err().contains("NOEQUALS"));
        assert_eq!(
            parse_listen_addr(" 127.0.0.1:0 ").unwrap(),
            "127.0.0.1:0".parse::<SocketAddr>().unwrap()
        );
        assert!(parse_listen_addr("999.0.0.1:80").is_err());
        assert_eq!(parse_timing("x2").unwrap(), Timing::Speed(2.0));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        for bad in ["soon", "inf", "1e20", "-1", "0", "nan", "NaNs", ""] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// `replay --rate 0|-1|nan|1e-300` and friends panicked or hung; they are usage errors.
    #[test]
    fn out_of_range_numbers_are_usage_errors() {
        for rate in ["0", "-1", "nan", "1e-300", "inf", "1e400"] {
            let r = Cli::try_parse_from([
                "agentwire",
                "replay",
                "t",
                "--to",
                "http://x",
                "--rate",
                rate,
            ]);
            assert!(r.is_err(), "--rate {rate}");
        }
        for d in ["inf", "1e20", "-5s"] {
            let r = Cli::try_parse_from(["agentwire", "capture", "--iface", "lo", "--duration", d]);
            assert!(r.is_err(), "--duration {d}");
        }
        for t in ["x0", "x1e-300", "xinf", "xnan", "x-1"] {
            let r = Cli::try_parse_from(["agentwire", "serve", "--replay", "t", "--timing", t]);
            assert!(r.is_err(), "--timing {t}");
        }
        for (flag, v) in [
            ("--body-timeout", "18446744073709551615"),
            ("--body-timeout", "0"),
            ("--max-body", "0"),
        ] {
            assert!(
                Cli::try_parse_from(["agentwire", "serve", flag, v]).is_err(),
                "{flag} {v}"
            );
        }
    }

    fn numbers() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<f64>().prop_map(|f| f.to_string()),
            any::<i64>().prop_map(|i| i.to_string()),
            any::<u64>().prop_map(|i| i.to_string()),
            prop::sample::select(vec![
                "nan", "NaN", "inf", "-inf", "1e-300", "1e20", "1e308", "0", "-0", "-1", "",
                "0x10", "1_000",
            ])
            .prop_map(str::to_string),
            "[0-9.eE+-]{0,12}[smh]?",
        ]
    }

    proptest! {
        /// Every numeric flag, fed any number-like text: parsing either refuses it or gives
        /// a value the library uses without panicking (clocks, sleeps, sizes).
        #[test]
        fn numeric_flags_never_panic(v in numbers(), us in any::<u64>()) {
            let now = Instant::now();
            if let Ok(Cli { command: Command::Replay(a), .. }) =
                Cli::try_parse_from(["agentwire", "replay", "t", "--to", "http://x", "--rate", &v, "--concurrency", &v])
            {
                let _ = now + Duration::from_secs_f64(1e7 / a.rate.unwrap_or(1.0));
                prop_assert!(a.concurrency >= 1);
            }
            if let Ok(Cli { command: Command::Replay(a), .. }) =
                Cli::try_parse_from(["agentwire", "replay", "t", "--to", "http://x", "--rate", &v])
            {
                let _ = now + Duration::from_secs_f64(1e7 / a.rate.unwrap_or(1.0));
            }
            if let Ok(Cli { command: Command::Capture(a), .. }) =
                Cli::try_parse_from(["agentwire", "capture", "--iface", "lo", "--duration", &v])
            {
                let _ = now + a.duration.unwrap();
            }
            for flag in ["--body-timeout", "--max-body", "--upstream-timeout"] {
                let mut args = vec!["agentwire", "serve", flag, &v];
                if flag == "--upstream-timeout" {
                    args.extend(["--upstream", "http://x"]);
                }
                if let Ok(Cli { command: Command::Serve(a), .. }) = Cli::try_parse_from(args) {
                    let _ = now + Duration::from_secs(a.limits.body_timeout);
                    let _ = now + Duration::from_secs(a.upstream_timeout);
                    prop_assert!(a.limits.max_body >= 1);
                }
            }
            if let Ok(Cli { command: Command::Serve(a), .. }) =
                Cli::try_parse_from(["agentwire", "serve", "--replay", "t", "--timing", &format!("x{v}")])
            {
                let t = a.reply.timing;
                let d = t.scale(us);
                prop_assert!(d <= MAX_DELAY);
                let _ = tokio::time::Instant::now() + d;
            }
            if let Ok(Cli { command: Command::Record(a), .. }) =
                Cli::try_parse_from(["agentwire", "record", "--timeout", &v, "--", "true"])
            {
                let _ = now + Duration::from_secs(a.timeout);
            }
            if let Ok(Cli { command: Command::Matrix(a), .. }) =
                Cli::try_parse_from(["agentwire", "matrix", "--cli", "c@1", "--parallel", &v])
            {
                prop_assert!((1..=32).contains(&a.parallel));
            }
        }
    }
}
