//! Export of exchanges as HAR 1.2, so traces open in the tools people use to look at HTTP
//! (browser devtools, Charles, Proxyman, mitmproxy, HAR viewers).
//!
//! Every header value, URL and query string passes [`super::redact`] again on the way out
//! (traces are redacted at capture, but a trace edited by hand or written by another tool
//! may not be). Bodies are written as they are in the trace, byte for byte: UTF-8 as
//! `text`, anything else as base64 with `encoding: "base64"` (for request bodies an
//! extension to HAR 1.2 that agentwire's importer reads back). An exchange without a
//! response has `status` 0 and its error in `comment`.

use std::io::Write;

use base64::Engine;
use chrono::SecondsFormat;

use super::har::{Content, Creator, Entry, NameValue, PostData, Request, Response, Timings};
use super::redact::{redact_headers, redact_text};
use super::{header_value as header, Body, Exchange, HttpResponse, TraceError};

/// Writes a HAR document entry by entry, so a large trace needs no more memory than one
/// exchange.
pub struct HarWriter<W: Write> {
    out: W,
    entries: usize,
    base_url: String,
    /// The output's name in errors (its path, or `standard output`).
    name: String,
}

/// A write error naming the HAR output `name`.
fn werr<E: Into<std::io::Error>>(name: &str) -> impl FnOnce(E) -> TraceError + '_ {
    move |e| {
        TraceError::Output(crate::output::OutputError::Write {
            path: name.to_string(),
            source: e.into(),
        })
    }
}

impl<W: Write> HarWriter<W> {
    /// Start a HAR document on `out`, named `name` in errors (its path). `base_url`
    /// (scheme and host, e.g. `https://api.anthropic.com`) makes absolute URLs when an
    /// exchange has no `host` header.
    ///
    /// Errors: [`TraceError::Output`] naming `name` when `out` fails.
    pub fn new(mut out: W, base_url: &str, name: &str) -> Result<Self, TraceError> {
        let creator = Creator {
            name: "agentwire".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        };
        write!(
            out,
            "{{\"log\":{{\"version\":\"1.2\",\"creator\":{},\"entries\":[",
            serde_json::to_string(&creator).map_err(werr(name))?
        )
        .map_err(werr(name))?;
        Ok(HarWriter {
            out,
            entries: 0,
            // The base URL is written into every entry: it passes the redaction too.
            base_url: redact_text(base_url.trim_end_matches('/')),
            name: name.to_string(),
        })
    }

    /// Append one exchange.
    pub fn write(&mut self, x: &Exchange) -> Result<(), TraceError> {
        if self.entries > 0 {
            self.out.write_all(b",\n").map_err(werr(&self.name))?;
        } else {
            self.out.write_all(b"\n").map_err(werr(&self.name))?;
        }
        serde_json::to_writer(&mut self.out, &entry(x, &self.base_url))
            .map_err(werr(&self.name))?;
        self.entries += 1;
        Ok(())
    }

    /// Close the document; returns the number of entries and the writer.
    pub fn finish(mut self) -> Result<(usize, W), TraceError> {
        self.out.write_all(b"\n]}}\n").map_err(werr(&self.name))?;
        self.out.flush().map_err(werr(&self.name))?;
        Ok((self.entries, self.out))
    }
}

fn name_values(headers: &[(String, String)]) -> Vec<NameValue> {
    let mut h = headers.to_vec();
    redact_headers(&mut h);
    h.into_iter()
        .map(|(name, value)| NameValue { name, value })
        .collect()
}

/// Body as HAR text: `(text, Some("base64"))` for non-UTF-8 bytes.
fn body_text(b: &Body) -> (String, Option<String>) {
    match b.as_str() {
        Some(s) => (s.to_string(), None),
        None => (
            base64::engine::general_purpose::STANDARD.encode(&b.bytes),
            Some("base64".into()),
        ),
    }
}

fn ms(us: i64) -> f64 {
    us as f64 / 1000.0
}

/// One exchange as a HAR entry (every string redacted again on the way out).
fn entry(x: &Exchange, base_url: &str) -> Entry {
    let target = redact_text(&x.request.target);
    let total = x.duration_us().unwrap_or(0).max(0);
    let mut timings = Timings::default();
    let response = match &x.response {
        Some(r) => response(x, r, total, &mut timings),
        None => Response::default(),
    };
    Entry {
        started_date_time: x.started_at.to_rfc3339_opts(SecondsFormat::Micros, true),
        time: ms(total),
        request: Request {
            method: redact_text(&x.request.method),
            // the whole URL passes the redaction: a raw `Host: u:PASS@h` of a hand-edited
            // or older trace once reached it as written
            url: redact_text(&url(x, &target, base_url)),
            http_version: x.request.version.clone(),
            cookies: Vec::new(),
            headers: name_values(&x.request.headers),
            query_string: query_string(&target),
            post_data: post_data(x),
            headers_size: -1,
            body_size: x.request.body.len() as i64,
        },
        response,
        cache: Default::default(),
        timings,
        server_ip_address: x.source.server.as_deref().and_then(|s| {
            s.rsplit_once(':')
                .map(|(ip, _)| redact_text(ip.trim_matches(['[', ']'])))
        }),
        connection: x.source.connection.map(|c| c.to_string()),
        comment: x
            .error
            .as_ref()
            .map(|e| redact_text(&format!("{}: {}", e.kind, e.message))),
    }
}

/// The request's absolute URL: from its `host` header and the scheme of `base_url`, else
/// `base_url` itself; a CONNECT's is the tunnel's authority. `target` is redacted.
fn url(x: &Exchange, target: &str, base_url: &str) -> String {
    let connect = x.request.method.eq_ignore_ascii_case("CONNECT");
    match header(&x.request.headers, "host") {
        // authority-form target (RFC 9112 §3.2.3): the URL is the tunnel's authority
        _ if connect => format!("https://{target}"),
        Some(h) => {
            let scheme = base_url.split_once("://").map_or("http", |(s, _)| s);
            format!("{scheme}://{h}{target}")
        }
        None => format!("{base_url}{target}"),
    }
}

/// The query of a (redacted) request target as HAR name/value pairs.
fn query_string(target: &str) -> Vec<NameValue> {
    target
        .split_once('?')
        .map(|(_, q)| {
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (n, v) = p.split_once('=').unwrap_or((p, ""));
                    NameValue {
                        name: n.into(),
                        value: v.into(),
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The request body as `postData` (none for an empty body).
fn post_data(x: &Exchange) -> Option<PostData> {
    (!x.request.body.is_empty()).then(|| {
        let (text, encoding) = body_text(&x.request.body);
        PostData {
            mime_type: redact_text(header(&x.request.headers, "content-type").unwrap_or("")),
            text: Some(text),
            encoding,
        }
    })
}

/// The HAR response of `r`, setting `timings.wait` (to the first byte) and
/// `timings.receive` (the rest of `total_us`, the exchange's duration in microseconds).
fn response(x: &Exchange, r: &HttpResponse, total_us: i64, timings: &mut Timings) -> Response {
    let (text, encoding) = body_text(&r.body);
    let wait = r
        .first_byte_at
        .and_then(|t| (t - x.started_at).num_microseconds())
        .unwrap_or(total_us)
        .clamp(0, total_us);
    timings.wait = ms(wait);
    timings.receive = ms(total_us - wait);
    Response {
        status: r.status.into(),
        status_text: hyper::StatusCode::from_u16(r.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("")
            .into(),
        http_version: r.version.clone(),
        cookies: Vec::new(),
        headers: name_values(&r.headers),
        content: Content {
            size: r.body.len() as i64,
            compression: None,
            mime_type: redact_text(header(&r.headers, "content-type").unwrap_or("")),
            text: Some(text),
            encoding,
        },
        // a raw `Location` of a trace that claims to be redacted passes the redaction too
        redirect_url: redact_text(header(&r.headers, "location").unwrap_or("")),
        headers_size: -1,
        body_size: r.body.wire_size.map_or(r.body.len() as i64, |w| w as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{HttpRequest, HttpResponse, Source, SourceKind};

    #[test]
    fn secrets_redacted_and_binary_bodies_base64() {
        let x = Exchange {
            id: 0,
            started_at: chrono::DateTime::UNIX_EPOCH,
            ended_at: Some(chrono::DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(30)),
            source: Source::new(SourceKind::Server),
            request: HttpRequest {
                method: "POST".into(),
                target: "/v1/messages?key=QSECRET".into(),
                version: "HTTP/1.1".into(),
                headers: vec![
                    ("host".into(), "127.0.0.1:9".into()),
                    ("authorization".into(), "Bearer SECRETTOKEN".into()),
                ]
                .into(),
                body: Body::new(vec![0xff, 0x00]),
            },
            response: Some(HttpResponse {
                status: 200,
                version: "HTTP/1.1".into(),
                headers: vec![].into(),
                body: Body::new(b"ok".to_vec()),
                chunks: vec![],
                first_byte_at: Some(
                    chrono::DateTime::UNIX_EPOCH + chrono::Duration::milliseconds(10),
                ),
            }),
            error: None,
            notes: Default::default(),
            websocket: None,
        };
        let mut w = HarWriter::new(Vec::new(), "http://x", "t.har").unwrap();
        w.write(&x).unwrap();
        let (n, out) = w.finish().unwrap();
        assert_eq!(n, 1);
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("SECRET"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let e = &v["log"]["entries"][0];
        assert_eq!(e["request"]["postData"]["text"], "/wA=");
        assert_eq!(e["request"]["postData"]["encoding"], "base64");
        assert_eq!(e["timings"]["wait"], 10.0);
        assert_eq!(e["timings"]["receive"], 20.0);
        assert_eq!(e["response"]["statusText"], "OK");
        assert!(e["request"]["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:9/v1/messages?key=[redacted"));
    }

    /// Found by a second adversarial round: `--base-url http://u:PW@h` was written into
    /// every entry's `url` as given.
    #[test]
    fn the_base_url_passes_the_redaction_too() {
        let x = crate::trace::test_exchange("POST", "/v1/messages", &[], b"{}");
        let mut w = HarWriter::new(Vec::new(), "http://u:EXPPW1@h:9", "t.har").unwrap();
        w.write(&x).unwrap();
        let (_, out) = w.finish().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let url = v["log"]["entries"][0]["request"]["url"].as_str().unwrap();
        assert!(
            url.starts_with("http://[redacted fp=") && url.ends_with("]@h:9/v1/messages"),
            "{url}"
        );
    }

    /// Reported by a new user: a CONNECT exchange (the TLS-intercepting route's tunnel)
    /// came back from `export --har` → `show` with target `/` instead of
    /// `api.anthropic.com:443`: the URL glued the Host header to the authority-form
    /// target and the import kept only a path.
    #[test]
    fn connect_tunnels_keep_their_authority_through_har() {
        let x = crate::trace::test_exchange(
            "CONNECT",
            "api.anthropic.com:443",
            &[("host", "api.anthropic.com:443")],
            b"",
        );
        let mut w = HarWriter::new(Vec::new(), "http://127.0.0.1:9", "t.har").unwrap();
        w.write(&x).unwrap();
        let (_, out) = w.finish().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            doc["log"]["entries"][0]["request"]["url"],
            "https://api.anthropic.com:443"
        );
        let (back, problems) =
            crate::import::har::import(doc, std::path::Path::new("t.har")).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(back[0].request.method, "CONNECT");
        assert_eq!(back[0].request.target, "api.anthropic.com:443");
    }
}
