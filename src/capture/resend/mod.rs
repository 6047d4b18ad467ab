//! The replay client: re-send a trace's recorded requests to a URL (a gateway, a proxy,
//! another agentwire), with bounded concurrency and an optional rate, and report status
//! codes, latency percentiles and, optionally, how the new responses differ from the
//! recorded ones.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Semaphore;

use crate::api::decode_body;
use crate::http::fields::skip_request;
use crate::trace::redact::is_marker;
use crate::trace::{origin_form, Body, Exchange, Trace};

mod compare;
pub use compare::compare_response;
#[cfg(test)]
mod tests;

/// Errors of the replay client.
#[derive(Debug, thiserror::Error)]
pub enum ResendError {
    /// The base URL does not parse.
    #[error("{url:?} is not a base URL to send to: {reason}")]
    BadUrl {
        /// The URL as given.
        url: String,
        /// The parser's message.
        reason: String,
    },
    /// The trace holds no request that can be sent again (CONNECT tunnels, truncated and unparsed requests are left out).
    #[error("the trace has no requests to send")]
    Empty,
}

/// Replay-client settings.
#[derive(Clone, Debug)]
pub struct ResendConfig {
    /// Base URL; each request's target is appended (`http://127.0.0.1:8080`).
    pub to: String,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Requests started per second at most (`None`: as fast as possible).
    pub rate: Option<f64>,
    /// Extra headers (e.g. a real API key, since traces only hold markers).
    pub headers: Vec<(String, String)>,
    /// Compare each new response with the recorded one.
    pub compare: bool,
}

/// Result of re-sending one exchange.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Recorded exchange id.
    pub id: u64,
    /// New status (`None`: transport error).
    pub status: Option<u16>,
    /// Latency to the last byte, in milliseconds.
    pub latency_ms: f64,
    /// Transport error, if any.
    pub error: Option<String>,
    /// Differences from the recorded response (with `compare`).
    pub differences: Vec<String>,
    /// Recorded request headers not sent because HTTP/1.1 cannot carry them (HTTP/2
    /// pseudo-headers of a browser's HAR, control characters), each named with why
    /// (see [`crate::capture::sendable::refusal`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_headers: Vec<String>,
}

/// What a resend run got back: statuses, latencies and, with `compare`, differences.
#[derive(Clone, Debug, Serialize)]
pub struct ResendSummary {
    /// Requests sent.
    pub requests: usize,
    /// Count per status (`"error"` for transport errors).
    pub statuses: BTreeMap<String, usize>,
    /// Latency percentiles in milliseconds of the requests that got a response: p50, p90,
    /// p99, max (`None` when none did: refused connections measure no server).
    pub latency_ms: Option<[f64; 4]>,
    /// Requests whose response differed from the recording (`None` without `compare`).
    pub differing: Option<usize>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Per-request outcomes, in trace order.
    pub outcomes: Vec<Outcome>,
}

impl ResendSummary {
    /// One line per recorded header that was not sent (see [`Outcome::dropped_headers`]),
    /// with how many requests had it and the first of them:
    /// `":authority" (an HTTP/2 pseudo-header; HTTP/1.1 has none), in 3 requests (first:
    /// exchange #0)`.
    pub fn dropped_headers(&self) -> Vec<String> {
        let mut seen: Vec<(&str, usize, u64)> = Vec::new();
        for o in &self.outcomes {
            for d in &o.dropped_headers {
                match seen.iter_mut().find(|(s, _, _)| s == d) {
                    Some((_, n, _)) => *n += 1,
                    None => seen.push((d, 1, o.id)),
                }
            }
        }
        seen.into_iter()
            .map(|(d, n, first)| {
                let n = crate::text::fmt::plural(n as u64, "request");
                format!("{d}, in {n} (first: exchange #{first})")
            })
            .collect()
    }
}

/// Re-send every request of `trace` (in order of id) to `cfg.to`.
pub async fn resend(trace: &Trace, cfg: &ResendConfig) -> Result<ResendSummary, ResendError> {
    let base = reqwest::Url::parse(&cfg.to).map_err(|e| ResendError::BadUrl {
        url: cfg.to.clone(),
        reason: e.to_string(),
    })?;
    let exchanges: Vec<Exchange> = trace
        .exchanges
        .iter()
        // only requests that reached a handler: no CONNECT tunnels, nothing truncated or
        // unparseable
        .filter(|x| {
            !x.request.body.truncated
                && origin_form(&x.request.target).starts_with('/')
                && !x.request.method.eq_ignore_ascii_case("CONNECT")
        })
        .cloned()
        .collect();
    if exchanges.is_empty() {
        return Err(ResendError::Empty);
    }
    // No redirect is followed: a 3xx would carry the user's credentials (and, on 307/308,
    // the recorded prompt) to another host or port. It is reported as the status it is.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| ResendError::BadUrl {
            url: cfg.to.clone(),
            reason: e.to_string(),
        })?;
    let sem = Arc::new(Semaphore::new(cfg.concurrency.max(1)));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (i, x) in exchanges.into_iter().enumerate() {
        if let Some(rate) = cfg.rate {
            let at = start + Duration::from_secs_f64(i as f64 / rate);
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
        }
        let permit = sem.clone().acquire_owned().await.expect("semaphore open");
        let (client, base, extra, compare) = (
            client.clone(),
            base.clone(),
            cfg.headers.clone(),
            cfg.compare,
        );
        tasks.push(tokio::spawn(async move {
            let o = send_one(&client, &base, &x, &extra, compare).await;
            drop(permit);
            o
        }));
    }
    let mut outcomes = Vec::new();
    for t in tasks {
        if let Ok(o) = t.await {
            outcomes.push(o);
        }
    }
    let mut lat: Vec<f64> = outcomes
        .iter()
        .filter(|o| o.status.is_some())
        .map(|o| o.latency_ms)
        .collect();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let mut statuses = BTreeMap::new();
    for o in &outcomes {
        let k = o.status.map_or("error".to_string(), |s| s.to_string());
        *statuses.entry(k).or_insert(0) += 1;
    }
    Ok(ResendSummary {
        requests: outcomes.len(),
        statuses,
        latency_ms: (!lat.is_empty()).then(|| {
            [
                pct(0.5),
                pct(0.9),
                pct(0.99),
                lat.last().copied().unwrap_or(0.0),
            ]
        }),
        differing: cfg.compare.then(|| {
            outcomes
                .iter()
                .filter(|o| !o.differences.is_empty())
                .count()
        }),
        seconds: start.elapsed().as_secs_f64(),
        outcomes,
    })
}

async fn send_one(
    client: &reqwest::Client,
    base: &reqwest::Url,
    x: &Exchange,
    extra: &[(String, String)],
    compare: bool,
) -> Outcome {
    let (req, dropped_headers) = match build_request(client, base, x, extra) {
        Ok(r) => r,
        Err(why) => return Outcome::failed(x.id, 0.0, &why, Vec::new()),
    };
    let t = Instant::now();
    let result = exchange(req, x).await;
    let latency_ms = t.elapsed().as_secs_f64() * 1e3;
    match result {
        Ok((status, ct, body)) => Outcome {
            id: x.id,
            status: Some(status),
            latency_ms,
            error: None,
            differences: if compare {
                compare_response(x, status, ct.as_deref(), &body)
            } else {
                Vec::new()
            },
            dropped_headers,
        },
        Err(e) => {
            let mut error = super::error_chain(&e);
            if e.is_builder() {
                error.push_str(&format!(
                    " (the request of exchange #{} could not be built from the trace: check its method, target and headers)",
                    x.id
                ));
            }
            Outcome::failed(x.id, latency_ms, &error, dropped_headers)
        }
    }
}

impl Outcome {
    /// An exchange that got no answer: `why` (redacted here), after `latency_ms`.
    fn failed(id: u64, latency_ms: f64, why: &str, dropped_headers: Vec<String>) -> Outcome {
        Outcome {
            id,
            status: None,
            latency_ms,
            error: Some(crate::trace::redact::redact_text(why)),
            differences: Vec::new(),
            dropped_headers,
        }
    }
}

/// The request of recorded exchange `x` against `base` (its target normalized under
/// `base`'s path, the recorded headers that may be sent, then `extra`), and the names of
/// the headers dropped. Errors: why the request was not sent (a target leaving the base
/// path, a method that is not an HTTP token).
fn build_request(
    client: &reqwest::Client,
    base: &reqwest::Url,
    x: &Exchange,
    extra: &[(String, String)],
) -> Result<(reqwest::RequestBuilder, Vec<String>), String> {
    let mut url = base.clone();
    let target = origin_form(&x.request.target);
    let (path, query) = target
        .split_once('?')
        .map_or((target, None), |(p, q)| (p, Some(q)));
    // Normalized once: a recorded `/v1/../../admin` would leave `--to`'s base path.
    let path = crate::http::target::normalize_path(path)
        .map_err(|e| format!("exchange #{}: {e}; the request was not sent", x.id))?;
    url.set_path(&format!("{}{path}", base.path().trim_end_matches('/')));
    url.set_query(query);
    // A recorded method that is not an HTTP token is not sent as something else.
    let method = reqwest::Method::from_bytes(x.request.method.as_bytes()).map_err(|_| {
        format!(
            "the recorded method {:?} of exchange #{} is not an HTTP method (RFC 9110 §9.1: a token); the request was not sent",
            x.request.method, x.id
        )
    })?;
    let mut req = client.request(method, url);
    let recorded = x
        .request
        .headers
        .iter()
        .filter(|(k, v)| !skip_request(k) && !is_marker(v));
    let sent = crate::capture::sendable::sendable(recorded);
    for (k, v) in sent.pairs {
        req = req.header(k, v);
    }
    for (k, v) in extra {
        req = req.header(k, v);
    }
    Ok((req, sent.dropped))
}

/// Send `req` with `x`'s recorded body; the answer's status, content type and decoded
/// body.
async fn exchange(
    req: reqwest::RequestBuilder,
    x: &Exchange,
) -> Result<(u16, Option<String>, Vec<u8>), reqwest::Error> {
    let r = req.body(x.request.body.bytes.clone()).send().await?;
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let headers: Vec<(String, String)> = r
        .headers()
        .iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
        .collect();
    let wire = Body::new(r.bytes().await?.to_vec());
    let body = decode_body(&headers, &wire).bytes.into_owned();
    Ok((status, ct, body))
}
