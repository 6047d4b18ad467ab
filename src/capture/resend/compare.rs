//! `replay --compare`: what differs between a recorded response and a new one (status,
//! stop reason, tool calls by name and input, text, error type), as one line per
//! difference.

use crate::api::{read_response, response_body, ResponseBody};
use crate::trace::Exchange;

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
    // Recorded header names keep the case they had on the wire (`Content-Type` from a
    // packet capture).
    let old_ct = old.headers.get("content-type");
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
    use crate::trace::{Body, HttpRequest, HttpResponse, Source, SourceKind};

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
                headers: vec![("content-type".into(), ct.into())].into(),
                body: Body::new(body.as_bytes().to_vec()),
                chunks: Vec::new(),
                first_byte_at: None,
            }),
            error: None,
            notes: Default::default(),
            websocket: None,
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

    /// A streamed answer with one text block saying `{TEXT}`.
    const STREAM: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"{TEXT}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

    /// `old`, a recording whose text is `hi`, equals a JSON answer saying `hi` and differs
    /// from one saying `ho` by its text only.
    fn assert_reads_as_hi(old: &Exchange) {
        assert_eq!(
            compare(old, 200, &message("end_turn", "hi", &[])),
            Vec::<String>::new()
        );
        assert_eq!(
            compare(old, 200, &message("end_turn", "ho", &[])),
            [r#"text "hi" -> "ho""#]
        );
    }

    /// A streamed recording and a JSON answer with the same content are equal: both are
    /// read as messages.
    #[test]
    fn a_streamed_recording_equals_the_same_message_as_json() {
        let sse = &STREAM.replace("{TEXT}", "hi");
        let old = recorded(200, "text/event-stream", sse);
        assert_reads_as_hi(&old);
    }

    /// A recorded header keeps its wire case (`Content-Type` in a packet capture) and need
    /// not come first. A stream that opens with a blank line (valid: it dispatches nothing)
    /// is only known as a stream by that header; missing it, the two answers would differ
    /// as "body differs".
    #[test]
    fn the_recorded_content_type_is_found_whatever_the_case_of_its_name() {
        let sse = format!("\n{}", STREAM.replace("{TEXT}", "hi"));
        let mut old = recorded(200, "text/event-stream", &sse);
        let r = old.response.as_mut().unwrap();
        r.headers = vec![
            ("Date".into(), "Mon, 30 Nov 2026 10:00:00 GMT".into()),
            ("Content-Type".into(), "text/event-stream".into()),
        ]
        .into();
        assert_reads_as_hi(&old);
    }
}
