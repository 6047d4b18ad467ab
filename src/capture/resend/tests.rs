//! The replay client against a real HTTP server on loopback (axum on `127.0.0.1:0`) that
//! records what arrives and when: where each request goes, which headers reach it, how
//! `--rate` spaces the starts and `--concurrency` bounds what is in flight, and the
//! summary's statuses, percentiles and differing count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};

use super::*;
use crate::trace::{test_exchange, HttpResponse};

/// What the server saw of one request.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    query: Option<String>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Milliseconds since the server started.
    at_ms: f64,
}

#[derive(Default)]
struct Log {
    seen: Mutex<Vec<Seen>>,
    in_flight: AtomicUsize,
    most_in_flight: AtomicUsize,
}

/// The server's answer to `path`: `/hold/MS/...` waits MS milliseconds; `/status/N` answers
/// N; every answer is a JSON message whose text is the path.
async fn handle(State((log, t0)): State<(Arc<Log>, Instant)>, req: Request) -> Response {
    let now = log.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    log.most_in_flight.fetch_max(now, Ordering::SeqCst);
    let at_ms = t0.elapsed().as_secs_f64() * 1e3;
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap()
        .to_vec();
    let path = parts.uri.path().to_string();
    log.seen.lock().unwrap().push(Seen {
        method: parts.method.to_string(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect(),
        body,
        at_ms,
    });
    let mut status = 200;
    let mut segments = path.split('/').skip(1);
    while let Some(s) = segments.next() {
        let n: u64 = segments
            .clone()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        match s {
            "hold" => tokio::time::sleep(Duration::from_millis(n)).await,
            "status" => status = n as u16,
            _ => {}
        }
    }
    log.in_flight.fetch_sub(1, Ordering::SeqCst);
    let msg = serde_json::json!({"type": "message", "role": "assistant",
        "content": [{"type": "text", "text": path}], "stop_reason": "end_turn"});
    (
        axum::http::StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        msg.to_string(),
    )
        .into_response()
}

/// A recording server on `127.0.0.1:0`: its base URL and its log.
async fn server() -> (String, Arc<Log>) {
    let log = Arc::new(Log::default());
    let app = axum::Router::new()
        .fallback(handle)
        .with_state((log.clone(), Instant::now()));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    (url, log)
}

fn config(to: &str) -> ResendConfig {
    ResendConfig {
        to: to.into(),
        concurrency: 8,
        rate: None,
        headers: Vec::new(),
        compare: false,
    }
}

/// A POST of `body` to `target` with id `id`.
fn post(id: u64, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Exchange {
    let mut x = test_exchange("POST", target, headers, body);
    x.id = id;
    x
}

fn trace(exchanges: Vec<Exchange>) -> Trace {
    Trace {
        exchanges,
        ..Default::default()
    }
}

/// Run `resend` with a 20 s limit (a schedule gone wrong fails instead of hanging).
async fn run(t: &Trace, cfg: &ResendConfig) -> ResendSummary {
    tokio::time::timeout(Duration::from_secs(20), resend(t, cfg))
        .await
        .expect("replay finished within 20 s")
        .unwrap()
}

fn header<'a>(s: &'a Seen, name: &str) -> Vec<&'a str> {
    s.headers
        .iter()
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// Each request goes to the base URL's path followed by its own path and query, with its
/// method and body; recorded headers go along except the framing ones (the client sets
/// them for the new connection) and redaction markers (a secret that is not there); a
/// `--header` replaces the marker. Only requests that reached a handler are sent.
#[tokio::test]
async fn replay_sends_method_path_query_body_and_headers_but_not_markers_or_framing() {
    let (url, log) = server().await;
    let marker = crate::trace::redact::marker("sk-ant-api03-secret");
    let mut truncated = post(3, "/v1/messages", &[], b"cut");
    truncated.request.body.truncated = true;
    let mut connect = post(4, "api.anthropic.com:443", &[], b"");
    connect.request.method = "CONNECT".into();
    let mut get = post(5, "https://api.anthropic.com/v1/models?limit=2", &[], b"");
    get.request.method = "GET".into();
    let t = trace(vec![
        post(
            1,
            "/v1/messages?beta=true",
            &[
                ("Host", "api.anthropic.com"),
                ("Content-Length", "999"),
                ("Connection", "keep-alive"),
                ("Transfer-Encoding", "chunked"),
                ("Accept-Encoding", "gzip, br"),
                ("Keep-Alive", "timeout=5"),
                ("Proxy-Authorization", "Basic cHJveHk6cHc="),
                ("X-Api-Key", &marker),
                ("Anthropic-Version", "2023-06-01"),
                ("anthropic-beta", "a,b"),
            ],
            br#"{"model":"m"}"#,
        ),
        truncated,
        connect,
        get,
    ]);
    let mut cfg = config(&format!("{url}/gateway/"));
    cfg.headers = vec![("x-api-key".into(), "sk-real".into())];
    let s = run(&t, &cfg).await;
    assert_eq!(
        s.requests, 2,
        "the truncated request and the tunnel are not sent"
    );
    assert_eq!(s.outcomes.iter().map(|o| o.id).collect::<Vec<_>>(), [1, 5]);
    let mut seen = log.seen.lock().unwrap().clone();
    seen.sort_by(|a, b| a.method.cmp(&b.method));
    let (get, post) = (&seen[0], &seen[1]);
    assert_eq!(
        (get.method.as_str(), get.path.as_str(), get.query.as_deref()),
        ("GET", "/gateway/v1/models", Some("limit=2"))
    );
    assert_eq!(
        (
            post.method.as_str(),
            post.path.as_str(),
            post.query.as_deref()
        ),
        ("POST", "/gateway/v1/messages", Some("beta=true"))
    );
    assert_eq!(post.body, br#"{"model":"m"}"#);
    assert_eq!(
        header(post, "x-api-key"),
        ["sk-real"],
        "marker left out, --header sent"
    );
    assert_eq!(header(post, "anthropic-version"), ["2023-06-01"]);
    assert_eq!(header(post, "anthropic-beta"), ["a,b"]);
    let host = url.trim_start_matches("http://");
    assert_eq!(
        header(post, "host"),
        [host],
        "the new host, not the recorded one"
    );
    assert_eq!(
        header(post, "content-length"),
        ["13"],
        "the body's own length"
    );
    assert!(header(post, "transfer-encoding").is_empty());
    assert!(header(post, "accept-encoding").is_empty());
    assert!(header(post, "keep-alive").is_empty(), "hop-by-hop");
    assert!(
        header(post, "proxy-authorization").is_empty(),
        "for the proxy hop only"
    );
    assert!(!header(post, "connection").contains(&"keep-alive"));
}

/// `--rate R` starts request k no earlier than k/R seconds after the first; `--concurrency
/// N` keeps at most N in flight, and with requests held long enough, exactly N. A
/// concurrency of 0 is read as 1.
#[tokio::test]
async fn replay_rate_spaces_the_starts_and_concurrency_bounds_the_requests_in_flight() {
    let (url, log) = server().await;
    let five: Vec<Exchange> = (0..5).map(|i| post(i, "/x", &[], b"{}")).collect();
    let mut cfg = config(&url);
    cfg.rate = Some(10.0);
    run(&trace(five.clone()), &cfg).await;
    let at: Vec<f64> = log.seen.lock().unwrap().iter().map(|s| s.at_ms).collect();
    for (k, t) in at.iter().enumerate() {
        let since = t - at[0];
        assert!(
            since >= k as f64 * 100.0 - 20.0,
            "request {k} at {since} ms"
        );
        assert!(
            since < k as f64 * 100.0 + 2000.0,
            "request {k} at {since} ms"
        );
    }

    for (concurrency, most) in [(2, 2), (1, 1), (0, 1)] {
        let (url, log) = server().await;
        let held: Vec<Exchange> = (0..6).map(|i| post(i, "/hold/150", &[], b"{}")).collect();
        let mut cfg = config(&url);
        cfg.concurrency = concurrency;
        let s = run(&trace(held), &cfg).await;
        assert_eq!(s.requests, 6);
        assert_eq!(
            log.most_in_flight.load(Ordering::SeqCst),
            most,
            "--concurrency {concurrency}"
        );
        // 6 requests of 150 ms, `most` at a time, take at least 6/most rounds.
        let rounds = 6usize.div_ceil(most) as f64;
        assert!(s.seconds >= rounds * 0.150 - 0.02, "{} s", s.seconds);
    }
}

/// The summary: a count per status (transport errors as `error`), latency percentiles
/// by nearest rank (five requests held 0, 300, 600, 900 and 1200 ms: p50 is the third,
/// p90 and p99 the fifth), outcomes in trace order, and with `--compare` the number of
/// requests whose answer differs from the recording.
#[tokio::test]
async fn replay_summary_counts_statuses_percentiles_and_differing_answers() {
    let (url, _log) = server().await;
    let recorded = |id: u64, target: &str, text: &str| {
        let mut x = post(id, target, &[], b"{}");
        let msg = serde_json::json!({"type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"});
        x.response = Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("Content-Type".into(), "application/json".into())].into(),
            body: Body::new(msg.to_string().into_bytes()),
            chunks: Vec::new(),
            first_byte_at: None,
        });
        x
    };
    // The server answers with the path as text: ids 0, 2 and 4 match their recordings.
    let t = trace(vec![
        recorded(0, "/hold/1200", "/hold/1200"),
        recorded(1, "/hold/0/status/529", "/hold/0/status/529"),
        recorded(2, "/hold/600", "/hold/600"),
        recorded(3, "/hold/900/status/404", "something else"),
        recorded(4, "/hold/300", "/hold/300"),
    ]);
    let mut cfg = config(&url);
    cfg.compare = true;
    let s = run(&t, &cfg).await;
    assert_eq!(
        s.outcomes.iter().map(|o| o.id).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    let statuses: Vec<(&str, usize)> = s.statuses.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(statuses, [("200", 3), ("404", 1), ("529", 1)]);
    assert_eq!(s.differing, Some(2), "{:?}", s.outcomes);
    assert_eq!(s.outcomes[1].differences, ["status 200 -> 529"]);
    assert_eq!(
        s.outcomes[3].differences,
        [
            "status 200 -> 404",
            r#"text "something else" -> "/hold/900/status/404""#
        ]
    );
    let [p50, p90, p99, max] = s.latency_ms.expect("responses came");
    assert!((600.0..900.0).contains(&p50), "p50 {p50} ms");
    assert!((1200.0..2500.0).contains(&p90), "p90 {p90} ms");
    assert_eq!(
        (p99, max),
        (p90, p90),
        "p99 and max are the slowest of five"
    );
    assert!(s.seconds >= 1.2);

    // Without --compare nothing is compared.
    cfg.compare = false;
    let s = run(&t, &cfg).await;
    assert_eq!(s.differing, None);
    assert!(s.outcomes.iter().all(|o| o.differences.is_empty()));

    // Nothing listening: every request is a transport error, counted as `error`.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let s = run(&trace(vec![post(0, "/x", &[], b"{}")]), &config(&closed)).await;
    assert_eq!(s.statuses.get("error"), Some(&1));
    assert_eq!(s.outcomes[0].status, None);
    assert!(s.outcomes[0].error.is_some());
}

/// A base URL that does not parse and a trace with nothing to send are errors.
#[tokio::test]
async fn replay_refuses_a_bad_base_url_and_a_trace_with_nothing_to_send() {
    let t = trace(vec![post(0, "/x", &[], b"{}")]);
    assert!(matches!(
        resend(&t, &config("not a url")).await,
        Err(ResendError::BadUrl { .. })
    ));
    let mut cut = post(0, "/x", &[], b"{}");
    cut.request.body.truncated = true;
    assert!(matches!(
        resend(&trace(vec![cut]), &config("http://127.0.0.1:9")).await,
        Err(ResendError::Empty)
    ));
}

/// Found in review (the kind of an adversarial test's finding: untrusted values coerced
/// silently): a recorded method that is not an HTTP token was sent as POST.
#[tokio::test]
async fn a_recorded_method_that_is_not_http_is_named_not_sent_as_post() {
    let (url, log) = server().await;
    let mut bad = post(7, "/v1/messages", &[], b"{}");
    bad.request.method = "PO ST".into();
    let t = trace(vec![bad, post(8, "/v1/messages", &[], b"{}")]);
    let s = run(&t, &config(&url)).await;
    assert_eq!(s.outcomes.len(), 2);
    let o = &s.outcomes[0];
    assert_eq!((o.id, o.status), (7, None));
    let e = o.error.as_deref().unwrap();
    assert!(
        e.contains("\"PO ST\"") && e.contains("exchange #7") && e.contains("not sent"),
        "{e}"
    );
    assert_eq!(
        log.seen.lock().unwrap().len(),
        1,
        "only the valid request reached the server"
    );
}
