//! HTTP/1.1 message body length, RFC 9112 §6.3, in one function for requests and
//! responses: [`body_length`]. Field lines of the same name are combined into one list
//! (RFC 9110 §5.3), the final transfer coding decides, and every framing that cannot be
//! used is an error naming the field, so the parser records the message as malformed and
//! resynchronises at the next message instead of guessing.
//!
//! The rules, in the RFC's order:
//! 1. a response to HEAD, or with status 1xx, 204 or 304, has no body;
//! 2. a 2xx response to CONNECT (and, by §7.8 of RFC 9110, a 101) turns the connection
//!    into a tunnel; its Content-Length and Transfer-Encoding are ignored;
//! 3. Transfer-Encoding overrides Content-Length; in a request both together are an error
//!    (request smuggling; RFC 9112 §6.1 lets a server reject it and llhttp does), in a
//!    response the Content-Length is ignored and noted;
//! 4. Transfer-Encoding with `chunked` final: chunked; a response whose final coding is
//!    not `chunked` runs until the connection closes; a request whose final coding is
//!    not `chunked` has no determinable length (error). An empty Transfer-Encoding, or one
//!    in an HTTP/1.0 message (RFC 9112 §6.1: "MUST treat the message as if the framing is
//!    faulty"), is an error;
//! 5. an invalid Content-Length is an error unless it is a list of identical valid values
//!    (`96, 96` is 96; `1, 2`, ``, `4 2`, `-1`, `0x10` and values past 2^64 − 1 are not);
//! 6. a valid Content-Length gives the length in bytes;
//! 7. otherwise a request has no body;
//! 8. otherwise a response runs until the connection closes.
//!
//! A CONNECT request has no content (RFC 9110 §9.3.6): its Content-Length or
//! Transfer-Encoding is ignored and noted. A response whose request was not captured is
//! framed as the answer to a method that is neither HEAD nor CONNECT.

use super::fields;
use super::Headers;

/// A parsed message head.
#[derive(Clone, Debug, Default)]
pub struct Head {
    /// Request method (empty for a response).
    pub method: String,
    /// Request target (empty for a response).
    pub target: String,
    /// Response status (0 for a request).
    pub status: u16,
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: String,
    /// Header fields in order, as received (not yet redacted).
    pub headers: Headers,
}

/// How a message's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the connection closes.
    UntilClose,
    /// Not HTTP after this head (101 Switching Protocols, CONNECT): bytes are counted only.
    Tunnel,
}

/// Which message a head starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role<'a> {
    /// A request.
    Request,
    /// A response to a request with this method (`None`: the request was not captured).
    Response(Option<&'a str>),
}

/// The outcome of [`body_length`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyLength {
    /// The framing, or why none can be used (the message is malformed: the reader keeps
    /// the bytes that follow raw until the next message start).
    pub framing: Result<Framing, String>,
    /// Fields that were present but ignored by the rules (e.g. Content-Length on CONNECT).
    pub notes: Vec<String>,
}

impl BodyLength {
    fn ok(framing: Framing) -> Self {
        BodyLength {
            framing: Ok(framing),
            notes: Vec::new(),
        }
    }

    fn err(why: String) -> Self {
        BodyLength {
            framing: Err(why),
            notes: Vec::new(),
        }
    }

    fn note(mut self, note: String) -> Self {
        self.notes.push(note);
        self
    }
}

/// The field lines named `name` combined into one list value (RFC 9110 §5.3), or `None`
/// when the field is absent.
pub fn combined(head: &Head, name: &str) -> Option<String> {
    let mut values = head.headers.get_all(name).map(str::trim);
    let first = values.next()?.to_string();
    Some(values.fold(first, |mut out, v| {
        out.push_str(", ");
        out.push_str(v);
        out
    }))
}

/// Body length of the message that `head` starts (RFC 9112 §6.3; see the module doc).
pub fn body_length(head: &Head, role: Role<'_>) -> BodyLength {
    let te = combined(head, "transfer-encoding");
    let cl = combined(head, "content-length");
    let method = match role {
        Role::Request => None,
        Role::Response(m) => Some(m.unwrap_or("")),
    };
    if let Some(m) = method {
        let s = head.status;
        // Rule 2 (and 101): a tunnel.
        if s == 101 || (m.eq_ignore_ascii_case("CONNECT") && (200..300).contains(&s)) {
            return BodyLength::ok(Framing::Tunnel);
        }
        // Rule 1: no body.
        if m.eq_ignore_ascii_case("HEAD") || (100..200).contains(&s) || s == 204 || s == 304 {
            return BodyLength::ok(Framing::Empty);
        }
    } else if head.method.eq_ignore_ascii_case("CONNECT") {
        let mut out = BodyLength::ok(Framing::Empty);
        for (name, v) in [("Content-Length", &cl), ("Transfer-Encoding", &te)] {
            if let Some(v) = v {
                out = out.note(format!(
                    "{name}: {v} ignored: a CONNECT request has no content (RFC 9110 §9.3.6)"
                ));
            }
        }
        return out;
    }
    let request = method.is_none();
    if let Some(te) = te {
        // Rules 3 and 4.
        if head.version == "HTTP/1.0" {
            return BodyLength::err(format!(
                "Transfer-Encoding {te:?} in an HTTP/1.0 message: framing is faulty (RFC 9112 §6.1)"
            ));
        }
        let codings = fields::list(&head.headers, "transfer-encoding");
        let Some(last) = codings.last() else {
            return BodyLength::err("empty Transfer-Encoding: no coding named".into());
        };
        if request && cl.is_some() {
            return BodyLength::err(format!(
                "request has both Transfer-Encoding {te:?} and Content-Length {:?} (RFC 9112 §6.3 rule 3)",
                cl.unwrap_or_default()
            ));
        }
        let mut out = if last == "chunked" {
            BodyLength::ok(Framing::Chunked)
        } else if request {
            return BodyLength::err(format!(
                "Transfer-Encoding {te:?} does not end in chunked: a request's body length cannot be determined (RFC 9112 §6.3 rule 4)"
            ));
        } else {
            BodyLength::ok(Framing::UntilClose)
        };
        if codings.iter().filter(|c| *c == "chunked").count() > 1 {
            out = out.note(format!(
                "Transfer-Encoding {te:?} applies chunked more than once"
            ));
        }
        if let Some(cl) = cl {
            out = out.note(format!(
                "Content-Length: {cl} ignored: Transfer-Encoding overrides it (RFC 9112 §6.3 rule 3)"
            ));
        }
        return out;
    }
    match cl {
        // Rules 5 and 6.
        Some(v) => match content_length(&v) {
            Ok(n) => BodyLength::ok(Framing::Length(n)),
            Err(why) => BodyLength::err(why),
        },
        // Rules 7 and 8.
        None if request => BodyLength::ok(Framing::Empty),
        None => BodyLength::ok(Framing::UntilClose),
    }
}

/// A Content-Length field value (all field lines combined): `1*DIGIT`, or a list of
/// identical such values (RFC 9112 §6.3 rule 5); empty list elements are ignored
/// (RFC 9110 §5.6.1.2).
fn content_length(v: &str) -> Result<u64, String> {
    let mut value: Option<u64> = None;
    for item in v.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if !item.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!(
                "invalid Content-Length {v:?}: {item:?} is not a number"
            ));
        }
        let n: u64 = item
            .parse()
            .map_err(|_| format!("invalid Content-Length {v:?}: {item} is too large"))?;
        match value {
            Some(m) if m != n => {
                return Err(format!(
                    "Content-Length values differ ({v:?}): the body length is ambiguous"
                ))
            }
            _ => value = Some(n),
        }
    }
    value.ok_or_else(|| format!("invalid Content-Length {v:?}: no value"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(first: &str, fields: &[(&str, &str)]) -> Head {
        let mut h = Head {
            version: "HTTP/1.1".into(),
            headers: fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Head::default()
        };
        match first.parse::<u16>() {
            Ok(s) => h.status = s,
            Err(_) => h.method = first.into(),
        }
        h
    }

    fn req(fields: &[(&str, &str)]) -> Result<Framing, String> {
        body_length(&head("POST", fields), Role::Request).framing
    }

    fn resp(status: &str, method: &str, fields: &[(&str, &str)]) -> Result<Framing, String> {
        body_length(&head(status, fields), Role::Response(Some(method))).framing
    }

    fn err_has(r: Result<Framing, String>, what: &str) {
        match r {
            Err(e) => assert!(e.contains(what), "{e:?} lacks {what:?}"),
            Ok(f) => panic!("{f:?}, expected an error with {what:?}"),
        }
    }

    #[test]
    fn rule1_no_body_for_head_1xx_204_304_whatever_the_fields_say() {
        let cl = [("Content-Length", "10")];
        assert_eq!(resp("200", "HEAD", &cl), Ok(Framing::Empty));
        for s in ["100", "103", "204", "304"] {
            assert_eq!(resp(s, "GET", &cl), Ok(Framing::Empty), "{s}");
        }
        // Even an invalid Content-Length does not matter where there is no body.
        assert_eq!(
            resp("304", "GET", &[("Content-Length", "x")]),
            Ok(Framing::Empty)
        );
    }

    #[test]
    fn rule2_connect_2xx_and_101_are_tunnels() {
        let f = [("Content-Length", "5"), ("Transfer-Encoding", "chunked")];
        assert_eq!(resp("200", "CONNECT", &f), Ok(Framing::Tunnel));
        assert_eq!(resp("101", "GET", &[]), Ok(Framing::Tunnel));
        // A refused CONNECT is an ordinary response.
        assert_eq!(
            resp("407", "connect", &[("Content-Length", "5")]),
            Ok(Framing::Length(5))
        );
    }

    #[test]
    fn connect_request_has_no_content() {
        let b = body_length(&head("CONNECT", &[("Content-Length", "10")]), Role::Request);
        assert_eq!(b.framing, Ok(Framing::Empty));
        assert!(
            b.notes[0].contains("Content-Length: 10 ignored"),
            "{:?}",
            b.notes
        );
    }

    #[test]
    fn rule3_transfer_encoding_with_content_length() {
        let both = [("Transfer-Encoding", "chunked"), ("Content-Length", "5")];
        err_has(req(&both), "both Transfer-Encoding");
        let b = body_length(&head("200", &both), Role::Response(Some("GET")));
        assert_eq!(b.framing, Ok(Framing::Chunked));
        assert!(
            b.notes[0].contains("Content-Length: 5 ignored"),
            "{:?}",
            b.notes
        );
        err_has(
            req(&[("Transfer-Encoding", "identity"), ("Content-Length", "5")]),
            "both",
        );
    }

    #[test]
    fn rule4_the_final_coding_decides_across_field_lines() {
        assert_eq!(
            req(&[("Transfer-Encoding", "chunked")]),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            req(&[("transfer-encoding", "gzip, CHUNKED")]),
            Ok(Framing::Chunked)
        );
        // A later field line with chunked is the final coding.
        assert_eq!(
            req(&[
                ("Transfer-Encoding", "gzip"),
                ("Transfer-Encoding", "chunked")
            ]),
            Ok(Framing::Chunked)
        );
        assert_eq!(
            resp(
                "200",
                "GET",
                &[
                    ("Transfer-Encoding", "gzip"),
                    ("Transfer-Encoding", "chunked")
                ]
            ),
            Ok(Framing::Chunked)
        );
        // Not chunked at the end: a request is an error, a response runs until close.
        for te in ["identity", "pigeons", "chunked, deflate", "chunkedchunked"] {
            err_has(req(&[("Transfer-Encoding", te)]), "does not end in chunked");
            assert_eq!(
                resp("200", "GET", &[("Transfer-Encoding", te)]),
                Ok(Framing::UntilClose),
                "{te}"
            );
        }
        err_has(
            req(&[
                ("Transfer-Encoding", "chunked"),
                ("Transfer-Encoding", "deflate"),
            ]),
            "does not end in chunked",
        );
        // Parameters are not part of the coding name.
        assert_eq!(
            req(&[("Transfer-Encoding", "chunked;q=1")]),
            Ok(Framing::Chunked)
        );
    }

    #[test]
    fn rule4_empty_and_http10_transfer_encoding_are_faulty() {
        err_has(req(&[("Transfer-Encoding", "")]), "empty Transfer-Encoding");
        err_has(resp("200", "GET", &[("Transfer-Encoding", " , ")]), "empty");
        let mut h = head("POST", &[("Transfer-Encoding", "chunked")]);
        h.version = "HTTP/1.0".into();
        err_has(body_length(&h, Role::Request).framing, "HTTP/1.0");
        let b = body_length(
            &head("200", &[("Transfer-Encoding", "chunked, chunked")]),
            Role::Response(Some("GET")),
        );
        assert_eq!(b.framing, Ok(Framing::Chunked));
        assert!(b.notes[0].contains("more than once"));
    }

    #[test]
    fn rule5_content_length_lists_and_invalid_values() {
        let cl = |v: &str| req(&[("Content-Length", v)]);
        assert_eq!(cl("96, 96"), Ok(Framing::Length(96)));
        assert_eq!(cl("007"), Ok(Framing::Length(7)));
        assert_eq!(cl(" 42 "), Ok(Framing::Length(42)));
        assert_eq!(cl("5,,5"), Ok(Framing::Length(5)));
        // Two field lines are one list.
        assert_eq!(
            req(&[("Content-Length", "5"), ("content-length", "5")]),
            Ok(Framing::Length(5))
        );
        err_has(
            req(&[("Content-Length", "1"), ("Content-Length", "2")]),
            "differ",
        );
        err_has(cl("96, 97"), "differ");
        for bad in [
            "",
            "4 2",
            "-1",
            "+5",
            "0x10",
            "5a",
            "1000000000000000000000",
        ] {
            assert!(cl(bad).is_err(), "{bad:?}");
        }
        // A response with an invalid length is malformed, not read until close.
        err_has(resp("200", "GET", &[("Content-Length", "4 2")]), "invalid");
    }

    #[test]
    fn rules6_to_8_lengths_and_defaults() {
        assert_eq!(req(&[("Content-Length", "0")]), Ok(Framing::Length(0)));
        assert_eq!(req(&[]), Ok(Framing::Empty));
        assert_eq!(resp("200", "GET", &[]), Ok(Framing::UntilClose));
        // A response whose request was not captured: neither HEAD nor CONNECT.
        let h = head("200", &[("Content-Length", "3")]);
        assert_eq!(
            body_length(&h, Role::Response(None)).framing,
            Ok(Framing::Length(3))
        );
    }
}
