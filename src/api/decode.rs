//! The one content decoder: every reader (show, diff, analyze, replay, the pcap source's
//! stream-error check) sees a body through [`decode_body`], which removes the codings
//! named in `Content-Encoding` (RFC 9110 §8.4: `gzip`, `deflate` zlib-wrapped or raw as
//! browsers accept both, `br`, `zstd`; `identity` is a no-op) and any transfer coding other
//! than `chunked` left on a de-chunked body (RFC 9112 §7), applied in order and so removed
//! in reverse. Sources store bodies as they crossed the wire (after de-chunking); a reader
//! keeps both sizes: [`Decoded::wire_size`] and [`Decoded::decoded_size`].
//!
//! Traces written by agentwire before this rule hold pcap bodies already decoded, marked
//! by [`Body::content_encoding`]; those are passed through unchanged.

use std::borrow::Cow;
use std::io::Read;

use crate::http::fields;
use crate::trace::{Body, HttpRequest, HttpResponse};

/// Largest decoded body kept, in bytes (a decompression bomb stops here with an error).
pub const MAX_DECODED: u64 = 256 << 20;

/// A body as a reader sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded<'a> {
    /// The bytes with every coding removed; the wire bytes when nothing was encoded or
    /// decoding failed (see [`Decoded::error`]); for a truncated body, what decoded before
    /// the cut.
    pub bytes: Cow<'a, [u8]>,
    /// Size of the body on the wire, in bytes (after de-chunking).
    pub wire_size: u64,
    /// The codings removed, in the order they were applied (`gzip`, `gzip, br`), if any.
    pub encoding: Option<String>,
    /// Why decoding failed or stopped early (`cannot decode gzip body: ...`), if it did.
    pub error: Option<String>,
}

impl Decoded<'_> {
    /// Size of the decoded body, in bytes.
    pub fn decoded_size(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// The request body of an exchange, decoded.
pub fn request_body(r: &HttpRequest) -> Decoded<'_> {
    decode_body(&r.headers, &r.body)
}

/// The response body of an exchange, decoded.
pub fn response_body(r: &HttpResponse) -> Decoded<'_> {
    decode_body(&r.headers, &r.body)
}

/// Decode `body` according to the `Content-Encoding` and `Transfer-Encoding` field lines
/// of `headers` (names case-insensitive; several lines combine into one list).
///
/// Never fails: a coding that cannot be removed leaves the wire bytes (or, for a body
/// marked truncated, what decoded before the cut) and says why in [`Decoded::error`].
pub fn decode_body<'a>(headers: &[(String, String)], body: &'a Body) -> Decoded<'a> {
    let wire_size = body.wire_size.unwrap_or(body.bytes.len() as u64);
    let plain = |encoding, error| Decoded {
        bytes: Cow::Borrowed(&body.bytes[..]),
        wire_size,
        encoding,
        error,
    };
    if body.content_encoding.is_some() {
        // Decoded by an older agentwire before it was written.
        return plain(body.content_encoding.clone(), None);
    }
    let codings = codings(headers);
    if codings.is_empty() {
        return plain(None, None);
    }
    let encoding = Some(codings.join(", "));
    let mut cur: Cow<'a, [u8]> = Cow::Borrowed(&body.bytes[..]);
    for c in codings.iter().rev() {
        match decode_one(c, &cur) {
            Ok(out) => cur = Cow::Owned(out),
            Err((partial, e)) => {
                let error = Some(format!("cannot decode {c} body: {e}"));
                if body.truncated && !partial.is_empty() {
                    return Decoded {
                        bytes: Cow::Owned(partial),
                        wire_size,
                        encoding,
                        error,
                    };
                }
                return plain(None, error);
            }
        }
    }
    Decoded {
        bytes: cur,
        wire_size,
        encoding,
        error: None,
    }
}

/// Codings applied to a body, in the order they were applied: content codings, then
/// transfer codings other than `chunked` (lowercase; `identity` and empty list elements
/// dropped; `x-gzip` is `gzip`, RFC 9110 §8.4.1.3).
fn codings(headers: &[(String, String)]) -> Vec<String> {
    let list = |name: &str| -> Vec<String> {
        fields::list(headers, name)
            .into_iter()
            .map(|c| if c == "x-gzip" { "gzip".to_string() } else { c })
            .filter(|c| c != "identity")
            .collect()
    };
    let mut out = list("content-encoding");
    out.extend(
        list("transfer-encoding")
            .into_iter()
            .filter(|c| c != "chunked"),
    );
    out
}

/// Decode `encoding` (a `Content-Encoding` value, codings in the order applied).
///
/// Returns `Ok(None)` when nothing needed decoding (`identity`, empty), and an error text
/// naming the failed coding otherwise.
pub fn decode(encoding: &str, body: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let headers = [("content-encoding".to_string(), encoding.to_string())];
    let codings = codings(&headers);
    if codings.is_empty() {
        return Ok(None);
    }
    let mut cur = body.to_vec();
    for c in codings.iter().rev() {
        cur = decode_one(c, &cur).map_err(|(_, e)| format!("cannot decode {c} body: {e}"))?;
    }
    Ok(Some(cur))
}

/// Remove one coding; on failure, what decoded before the error and why.
fn decode_one(coding: &str, data: &[u8]) -> Result<Vec<u8>, (Vec<u8>, String)> {
    let mut out = Vec::with_capacity(data.len().saturating_mul(4).min(1 << 24));
    let r = match coding {
        "gzip" => read_all(flate2::read::MultiGzDecoder::new(data), &mut out),
        "deflate" => {
            let z = read_all(flate2::read::ZlibDecoder::new(data), &mut out);
            if z.is_err() {
                out.clear();
                read_all(flate2::read::DeflateDecoder::new(data), &mut out)
            } else {
                z
            }
        }
        "br" => read_all(brotli::Decompressor::new(data, 1 << 16), &mut out),
        "zstd" => match zstd::stream::read::Decoder::new(data) {
            Ok(d) => read_all(d, &mut out),
            Err(e) => Err(e.to_string()),
        },
        other => Err(format!("unknown coding {other:?}")),
    };
    match r {
        Ok(()) => Ok(out),
        Err(e) => Err((out, e)),
    }
}

fn read_all(r: impl Read, out: &mut Vec<u8>) -> Result<(), String> {
    let mut limited = r.take(MAX_DECODED + 1);
    let mut buf = [0u8; 1 << 14];
    loop {
        match limited.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    if out.len() as u64 > MAX_DECODED {
        out.truncate(MAX_DECODED as usize);
        return Err(format!("decoded size exceeds {MAX_DECODED} bytes"));
    }
    Ok(())
}

/// `data` gzip-compressed, for tests.
#[cfg(test)]
pub(crate) fn test_gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

#[cfg(test)]
mod tests {
    use super::test_gzip as gzip;
    use super::*;
    use crate::trace::test_headers as h;
    use std::io::Write;

    #[test]
    fn gzip_deflate_br_zstd_round_trip() {
        let text = b"{\"hello\":\"world\",\"n\":[1,2,3,4,5,6,7,8,9,10]}".repeat(20);
        let gz = gzip(&text);
        assert_eq!(decode("gzip", &gz).unwrap().unwrap(), text);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        assert_eq!(
            decode("deflate", &z.finish().unwrap()).unwrap().unwrap(),
            text
        );
        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&text).unwrap();
        assert_eq!(
            decode("Deflate", &raw.finish().unwrap()).unwrap().unwrap(),
            text
        );
        let mut br = Vec::new();
        brotli::CompressorWriter::new(&mut br, 4096, 5, 22)
            .write_all(&text)
            .unwrap();
        assert_eq!(decode("br", &br).unwrap().unwrap(), text);
        let zs = zstd::encode_all(&text[..], 3).unwrap();
        assert_eq!(decode("zstd", &zs).unwrap().unwrap(), text);
        // Applied in order gzip then br: decoded br first.
        let mut both = Vec::new();
        brotli::CompressorWriter::new(&mut both, 4096, 5, 22)
            .write_all(&gz)
            .unwrap();
        assert_eq!(decode("gzip, br", &both).unwrap().unwrap(), text);
    }

    #[test]
    fn identity_and_errors() {
        assert_eq!(decode("identity", b"x").unwrap(), None);
        let e = decode("gzip", b"{\"not\":\"gzip\"}").unwrap_err();
        assert!(e.starts_with("cannot decode gzip body"), "{e}");
        assert!(decode("compress", b"x")
            .unwrap_err()
            .contains("unknown coding"));
    }

    #[test]
    fn body_keeps_wire_and_decoded_sizes() {
        let text = b"event: ping\ndata: {}\n\n".repeat(50);
        let gz = gzip(&text);
        let body = Body::new(gz.clone());
        let d = decode_body(&h(&[("Content-Encoding", "gzip")]), &body);
        assert_eq!(&d.bytes[..], &text[..]);
        assert_eq!(d.wire_size, gz.len() as u64);
        assert_eq!(d.decoded_size(), text.len() as u64);
        assert_eq!(d.encoding.as_deref(), Some("gzip"));
        assert_eq!(d.error, None);
        // No coding: the same bytes, borrowed.
        let plain = Body::new(text.clone());
        let d = decode_body(&h(&[("content-type", "text/event-stream")]), &plain);
        assert!(matches!(d.bytes, Cow::Borrowed(_)));
        assert_eq!(d.encoding, None);
    }

    #[test]
    fn field_lines_combine_and_transfer_codings_count() {
        let text = b"hello hello hello".to_vec();
        let twice = Body::new(gzip(&gzip(&text)));
        // Two Content-Encoding lines are one list: gzip, gzip.
        let d = decode_body(
            &h(&[("content-encoding", "gzip"), ("Content-Encoding", "x-gzip")]),
            &twice,
        );
        assert_eq!(&d.bytes[..], &text[..]);
        assert_eq!(d.encoding.as_deref(), Some("gzip, gzip"));
        // `Transfer-Encoding: gzip, chunked`: chunked is gone after de-chunking, gzip stays.
        let once = Body::new(gzip(&text));
        let d = decode_body(&h(&[("transfer-encoding", "gzip, chunked")]), &once);
        assert_eq!(&d.bytes[..], &text[..]);
    }

    #[test]
    fn failure_keeps_wire_bytes_and_truncated_body_decodes_its_prefix() {
        let body = Body::new(b"not gzip at all".to_vec());
        let d = decode_body(&h(&[("content-encoding", "gzip")]), &body);
        assert_eq!(&d.bytes[..], b"not gzip at all");
        assert!(d.error.unwrap().starts_with("cannot decode gzip body"));
        // A gzip stream cut off: what decoded before the cut is kept, with the error.
        let text: Vec<u8> = (0..20_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let gz = gzip(&text);
        let cut = Body::new(gz[..gz.len() / 2].to_vec()).with_truncated(true);
        let d = decode_body(&h(&[("content-encoding", "gzip")]), &cut);
        assert!(d.error.is_some());
        assert!(
            !d.bytes.is_empty() && text.starts_with(&d.bytes),
            "a prefix"
        );
    }

    #[test]
    fn legacy_decoded_body_passes_through() {
        let mut body = Body::new(b"{\"a\":1}".to_vec());
        body.content_encoding = Some("gzip".into());
        body.wire_size = Some(30);
        let d = decode_body(&h(&[("content-encoding", "gzip")]), &body);
        assert_eq!(&d.bytes[..], b"{\"a\":1}");
        assert_eq!(d.wire_size, 30);
        assert_eq!(d.error, None);
    }
}
