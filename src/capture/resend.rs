//! The replay client: re-send a trace's recorded requests to a URL (a gateway, a proxy,
//! another agentwire), with bounded concurrency and an optional rate, and report status
//! codes, latency percentiles and, optionally, how the new responses differ from the
//! recorded ones.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::Semaphore;

use crate::api::{decode_body, read_response, response_body, ResponseBody};
use crate::trace::redact::is_marker;
use crate::trace::{origin_form, Body, Exchange, Trace};

/// Errors of the replay client.
#[derive(Debug, thiserror::Error)]
pub enum ResendError {
    #[error("{url:?} is not a base URL to send to: {reason}")]
    BadUrl { url: String, reason: String },
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
}

/// Summary of a replay run.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Requests sent.
    pub requests: usize,
    /// Count per status (`"error"` for transport errors).
    pub statuses: BTreeMap<String, usize>,
    /// Latency percentiles in milliseconds: p50, p90, p99, max.
    pub latency_ms: [f64; 4],
    /// Requests whose response differed from the recording (`None` without `compare`).
    pub differing: Option<usize>,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Per-request outcomes, in trace order.
    pub outcomes: Vec<Outcome>,
}

const SKIP: &[&str] = &[
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "accept-encoding",
];

/// Re-send every request of `trace` (in order of id) to `cfg.to`.
pub async fn resend(trace: &Trace, cfg: &ResendConfig) -> Result<Summary, ResendError> {
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
    let mut lat: Vec<f64> = outcomes.iter().map(|o| o.latency_ms).collect();
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
    Ok(Summary {
        requests: outcomes.len(),
        statuses,
        latency_ms: [
            pct(0.5),
            pct(0.9),
            pct(0.99),
            lat.last().copied().unwrap_or(0.0),
        ],
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
    let mut url = base.clone();
    let target = origin_form(&x.request.target);
    let (path, query) = target
        .split_once('?')
        .map_or((target, None), |(p, q)| (p, Some(q)));
    url.set_path(&format!("{}{path}", base.path().trim_end_matches('/')));
    url.set_query(query);
    let method =
        reqwest::Method::from_bytes(x.request.method.as_bytes()).unwrap_or(reqwest::Method::POST);
    let mut req = client.request(method, url);
    for (k, v) in &x.request.headers {
        if !SKIP.contains(&k.to_ascii_lowercase().as_str()) && !is_marker(v) {
            req = req.header(k, v);
        }
    }
    for (k, v) in extra {
        req = req.header(k, v);
    }
    let t = Instant::now();
    let result = async {
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
        Ok::<_, reqwest::Error>((status, ct, body))
    }
    .await;
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
        },
        Err(e) => Outcome {
            id: x.id,
            status: None,
            latency_ms,
            error: Some(crate::trace::redact::redact_text(&super::error_chain(&e))),
            differences: Vec::new(),
        },
    }
}

fn opt(o: &Option<String>) -> &str {
    o.as_deref().unwrap_or("none")
}

/// What differs between the recorded response of `x` and a new one: status, stop reason,
/// tool calls (name and input), text.
pub fn compare_response(x: &Exchange, status: u16, ct: Option<&str>, body: &[u8]) -> Vec<String> {
    let mut d = Vec::new();
    let Some(old) = &x.response else {
        return vec!["no recorded response".into()];
    };
    if old.status != status {
        d.push(format!("status {} -> {status}", old.status));
    }
    let old_body = response_body(old).bytes;
    let old_ct = old
        .headers
        .iter()
        .find(|(k, _)| k == "content-type")
        .map(|(_, v)| v.as_str());
    match (read_response(old_ct, &old_body), read_response(ct, body)) {
        (ResponseBody::Message(a), ResponseBody::Message(b)) => {
            if a.stop_reason != b.stop_reason {
                d.push(format!(
                    "stop_reason {} -> {}",
                    opt(&a.stop_reason),
                    opt(&b.stop_reason)
                ));
            }
            let calls = |m: &crate::api::ResponseMessage| -> Vec<String> {
                m.tool_calls()
                    .map(|(_, n, i)| format!("{n}({i})"))
                    .collect()
            };
            if calls(&a) != calls(&b) {
                d.push(format!(
                    "tool calls [{}] -> [{}]",
                    calls(&a).join(", "),
                    calls(&b).join(", ")
                ));
            }
            let text = |m: &crate::api::ResponseMessage| -> String {
                m.content.iter().filter_map(|c| c.text()).collect()
            };
            if text(&a) != text(&b) {
                let cut = |m: &crate::api::ResponseMessage| -> String {
                    text(m).chars().take(80).collect()
                };
                d.push(format!("text {:?} -> {:?}", cut(&a), cut(&b)));
            }
        }
        (ResponseBody::Error { error_type: a, .. }, ResponseBody::Error { error_type: b, .. })
            if a != b =>
        {
            d.push(format!("error type {a} -> {b}"));
        }
        (ResponseBody::Message(_), ResponseBody::Error { error_type, .. }) => {
            d.push(format!("message -> error {error_type}"))
        }
        (ResponseBody::Error { error_type, .. }, ResponseBody::Message(_)) => {
            d.push(format!("error {error_type} -> message"))
        }
        _ => {
            if *old_body != *body {
                d.push("body differs".into());
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    //! `replay --compare` on hand-made recorded and new responses: each difference a user
    //! acts on is named, and equal responses give none.

    use super::*;
    use crate::trace::{HttpRequest, HttpResponse, Source, SourceKind};

    fn recorded(status: u16, ct: &str, body: &str) -> Exchange {
        Exchange {
            id: 0,
            started_at: chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
            ended_at: None,
            source: Source::new(SourceKind::Proxy),
            request: HttpRequest::not_captured(),
            response: Some(HttpResponse {
                status,
                version: "HTTP/1.1".into(),
                headers: vec![("content-type".into(), ct.into())],
                body: Body::new(body.as_bytes().to_vec()),
                chunks: Vec::new(),
                first_byte_at: None,
            }),
            error: None,
            notes: Default::default(),
        }
    }

    const JSON: &str = "application/json";

    fn message(stop: &str, text: &str, calls: &[(&str, &str)]) -> String {
        let mut content = vec![serde_json::json!({"type": "text", "text": text})];
        for (i, (name, input)) in calls.iter().enumerate() {
            content.push(
                serde_json::json!({"type": "tool_use", "id": format!("toolu_{i}"),
                "name": name, "input": serde_json::from_str::<serde_json::Value>(input).unwrap()}),
            );
        }
        serde_json::json!({"type": "message", "role": "assistant", "content": content,
            "stop_reason": stop, "usage": {"input_tokens": 1, "output_tokens": 1}})
        .to_string()
    }

    fn error(kind: &str) -> String {
        format!(r#"{{"type":"error","error":{{"type":"{kind}","message":"m"}}}}"#)
    }

    fn compare(old: &Exchange, status: u16, body: &str) -> Vec<String> {
        compare_response(old, status, Some(JSON), body.as_bytes())
    }

    #[test]
    fn equal_responses_have_no_difference() {
        let body = message("tool_use", "ok", &[("Bash", r#"{"command":"ls"}"#)]);
        assert_eq!(
            compare(&recorded(200, JSON, &body), 200, &body),
            Vec::<String>::new()
        );
        let e = error("overloaded_error");
        assert_eq!(
            compare(&recorded(529, JSON, &e), 529, &e),
            Vec::<String>::new()
        );
        assert_eq!(
            compare(&recorded(200, JSON, "x"), 200, "x"),
            Vec::<String>::new()
        );
    }

    /// Comparing tool calls by count would call these equal: one call each, but another
    /// input. The difference names both calls.
    #[test]
    fn replay_compare_names_tool_calls_with_another_input_not_only_another_count() {
        let a = message("tool_use", "ok", &[("Bash", r#"{"command":"ls"}"#)]);
        let b = message("tool_use", "ok", &[("Bash", r#"{"command":"rm -rf x"}"#)]);
        assert_eq!(
            compare(&recorded(200, JSON, &a), 200, &b),
            [r#"tool calls [Bash({"command":"ls"})] -> [Bash({"command":"rm -rf x"})]"#]
        );
        let c = message("tool_use", "ok", &[("Read", r#"{"command":"ls"}"#)]);
        assert_eq!(
            compare(&recorded(200, JSON, &a), 200, &c),
            [r#"tool calls [Bash({"command":"ls"})] -> [Read({"command":"ls"})]"#]
        );
        let none = message("end_turn", "ok", &[]);
        assert_eq!(
            compare(&recorded(200, JSON, &a), 200, &none),
            [
                "stop_reason tool_use -> end_turn",
                r#"tool calls [Bash({"command":"ls"})] -> []"#
            ]
        );
    }

    #[test]
    fn status_text_and_error_differences_are_named() {
        let a = message("end_turn", "hello", &[]);
        let b = message("end_turn", "bye", &[]);
        assert_eq!(
            compare(&recorded(200, JSON, &a), 201, &b),
            ["status 200 -> 201", r#"text "hello" -> "bye""#]
        );
        // long texts are cut at 80 characters in the message
        let long = message("end_turn", &"é".repeat(100), &[]);
        let d = compare(&recorded(200, JSON, &a), 200, &long);
        assert_eq!(d, [format!(r#"text "hello" -> "{}""#, "é".repeat(80))]);
        let (o, r) = (error("overloaded_error"), error("rate_limit_error"));
        assert_eq!(
            compare(&recorded(529, JSON, &o), 429, &r),
            [
                "status 529 -> 429",
                "error type overloaded_error -> rate_limit_error"
            ]
        );
        assert_eq!(
            compare(&recorded(200, JSON, &a), 529, &o),
            ["status 200 -> 529", "message -> error overloaded_error"]
        );
        assert_eq!(
            compare(&recorded(529, JSON, &o), 200, &a),
            ["status 529 -> 200", "error overloaded_error -> message"]
        );
        assert_eq!(
            compare(&recorded(200, "text/plain", "one"), 200, "two"),
            ["body differs"]
        );
        let mut gone = recorded(200, JSON, &a);
        gone.response = None;
        assert_eq!(compare(&gone, 200, &a), ["no recorded response"]);
    }

    /// A streamed recording and a JSON answer with the same content are equal: both are
    /// read as messages.
    #[test]
    fn a_streamed_recording_equals_the_same_message_as_json() {
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let old = recorded(200, "text/event-stream", sse);
        assert_eq!(
            compare(&old, 200, &message("end_turn", "hi", &[])),
            Vec::<String>::new()
        );
        assert_eq!(
            compare(&old, 200, &message("end_turn", "ho", &[])),
            [r#"text "hi" -> "ho""#]
        );
    }
}
