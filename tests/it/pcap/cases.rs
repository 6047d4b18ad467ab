//! `../shared/captures/cases/`: small captures made outside agentwire for issue 17, each
//! with the right answers in `expected.json` (computed by their generator from the bytes
//! it sent). Every value listed there is checked; an expectation this test does not know
//! fails it, so nothing listed is skipped silently.

use agentwire::api::{read_response, response_body, ResponseBody};
use agentwire::trace::Exchange;
use serde_json::Value;

use super::{extract_file, sha};
use crate::common::shared_capture;

/// Check the expectations `want` (an object) against exchange `x`; `what` names it.
fn check_exchange(what: &str, x: &Exchange, want: &Value) {
    let resp = x.response.as_ref();
    for (key, v) in want.as_object().expect("an object of expectations") {
        let at = format!("{what}: {key}");
        match key.as_str() {
            "request" => match v.as_str() {
                Some("missing (not captured)") => {
                    assert!(!x.request.captured(), "{at}: {:?}", x.request.method);
                    // Nothing invented: the trace writes only that it was not captured.
                    let line = serde_json::to_value(&x.request).unwrap();
                    assert_eq!(line, serde_json::json!({"captured": false}), "{at}");
                }
                other => panic!("{at}: unknown expectation {other:?}"),
            },
            "request_body_sha256" => {
                assert!(x.request.captured(), "{at}");
                assert_eq!(sha(&x.request.body.bytes), v.as_str().unwrap(), "{at}");
            }
            "response_status" => {
                assert_eq!(resp.map(|r| u64::from(r.status)), v.as_u64(), "{at}");
            }
            "response_body_sha256" => {
                let r = resp.unwrap_or_else(|| panic!("{at}: no response"));
                assert_eq!(sha(&response_body(r).bytes), v.as_str().unwrap(), "{at}");
                assert!(!r.body.truncated, "{at}");
            }
            "response_body_size" => {
                let r = resp.unwrap_or_else(|| panic!("{at}: no response"));
                assert_eq!(response_body(r).decoded_size(), v.as_u64().unwrap(), "{at}");
            }
            "assembled_text_chars" | "usage_input_tokens" => {
                let r = resp.unwrap_or_else(|| panic!("{at}: no response"));
                let ct = r
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                    .map(|(_, v)| v.as_str());
                let ResponseBody::Message(m) = read_response(ct, &response_body(r).bytes) else {
                    panic!("{at}: not a Messages response");
                };
                let got = if key == "usage_input_tokens" {
                    m.usage.input_tokens
                } else {
                    let text: String = m.content.iter().filter_map(|b| b.text()).collect();
                    Some(text.chars().count() as u64)
                };
                assert_eq!(got, v.as_u64(), "{at}");
            }
            "response" => match v.as_str() {
                Some("truncated by a capture gap") => {
                    let r = resp.unwrap_or_else(|| panic!("{at}: no response"));
                    assert!(r.body.truncated, "{at}");
                    assert_eq!(
                        x.error.as_ref().map(|e| e.kind.as_str()),
                        Some("capture_gap")
                    );
                }
                Some("lost in the capture gap (none paired)") => {
                    assert!(resp.is_none(), "{at}: a response was paired");
                    let e = x.error.as_ref().unwrap_or_else(|| panic!("{at}: no error"));
                    assert_eq!(e.kind, "capture_gap", "{at}");
                    assert!(
                        e.message.contains("lost in a capture gap"),
                        "{at}: {}",
                        e.message
                    );
                }
                other => panic!("{at}: unknown expectation {other:?}"),
            },
            other => panic!("{what}: unknown expectation key {other:?}"),
        }
    }
}

#[test]
fn every_case_capture_gives_its_expected_values() {
    let path = shared_capture("cases/expected.json");
    let expected: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 4, "{}: the four cases", path.display());
    for (file, case) in cases {
        let (xs, _) = extract_file(&shared_capture(&format!("cases/{file}")));
        let want = case["expect"].as_object().unwrap();
        let mut per_exchange = serde_json::Map::new();
        for (key, v) in want {
            if key == "exchanges" {
                assert_eq!(xs.len() as u64, v.as_u64().unwrap(), "{file}: exchanges");
            } else if let Some(i) = key.strip_prefix("exchange_") {
                let i: usize = i.parse().unwrap();
                let x = xs
                    .get(i)
                    .unwrap_or_else(|| panic!("{file}: no exchange {i}"));
                check_exchange(&format!("{file} #{i}"), x, v);
            } else {
                per_exchange.insert(key.clone(), v.clone());
            }
        }
        // Keys at the top level describe the one exchange of the file.
        if !per_exchange.is_empty() {
            assert_eq!(xs.len(), 1, "{file}: one exchange");
            check_exchange(file, &xs[0], &Value::Object(per_exchange));
        }
    }
}
