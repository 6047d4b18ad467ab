//! Content encodings: decode `gzip`, `deflate` (zlib-wrapped or raw, as browsers accept
//! both), `br` and `zstd` bodies, listed in a `Content-Encoding` header (RFC 9110 §8.4,
//! applied in order, so decoded in reverse). `identity` is a no-op.

use std::io::Read;

/// Largest decoded body kept, in bytes (a decompression bomb stops here with an error).
pub const MAX_DECODED: u64 = 256 << 20;

/// Decode `body` according to the `Content-Encoding` value `encoding`.
///
/// Returns `Ok(None)` when nothing needed decoding (`identity`, empty), and an error text
/// naming the failed coding otherwise.
pub fn decode(encoding: &str, body: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let codings: Vec<String> = encoding
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    if codings.is_empty() {
        return Ok(None);
    }
    let mut cur = body.to_vec();
    for c in codings.iter().rev() {
        cur = decode_one(c, &cur).map_err(|e| format!("cannot decode {c} body: {e}"))?;
    }
    Ok(Some(cur))
}

fn decode_one(coding: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() * 4);
    let r = match coding {
        "gzip" | "x-gzip" => read_all(flate2::read::MultiGzDecoder::new(data), &mut out),
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
        other => Err(format!("unknown content coding {other:?}")),
    };
    r.map(|_| out)
}

fn read_all(r: impl Read, out: &mut Vec<u8>) -> Result<(), String> {
    let mut limited = r.take(MAX_DECODED + 1);
    limited.read_to_end(out).map_err(|e| e.to_string())?;
    if out.len() as u64 > MAX_DECODED {
        return Err(format!("decoded size exceeds {MAX_DECODED} bytes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_deflate_br_zstd_round_trip() {
        let text = b"{\"hello\":\"world\",\"n\":[1,2,3,4,5,6,7,8,9,10]}".repeat(20);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
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
            .contains("unknown content coding"));
    }
}
