//! TLS detection: recognise a TLS record at the start of a connection and read the
//! ClientHello's server name (SNI) and highest offered version, so a user learns why an
//! encrypted connection yielded no exchange. Sources: RFC 8446 §4.1.2 (ClientHello),
//! §4.2.1 (supported_versions), RFC 6066 §3 (server_name).

/// What the first bytes of a TLS connection tell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    /// `TLS 1.0` … `TLS 1.3` (the highest offered in supported_versions, else the
    /// ClientHello's legacy version), or `TLS` when the hello could not be read.
    pub version: String,
    /// The server name from the SNI extension.
    pub sni: Option<String>,
}

/// True when `data` starts like a TLS record: a handshake (22) or other content type,
/// major version 3, minor 0–4.
pub fn looks_like_tls(data: &[u8]) -> bool {
    data.len() >= 3 && (20..=23).contains(&data[0]) && data[1] == 3 && data[2] <= 4
}

fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSL 3.0".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        other => format!("TLS 0x{other:04x}"),
    }
}

/// Read the ClientHello in the first client bytes (as much as was captured).
pub fn client_hello(data: &[u8]) -> Hello {
    parse(data).unwrap_or_else(|| Hello {
        version: "TLS".into(),
        sni: None,
    })
}

struct Cur<'a>(&'a [u8]);

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| b[0] as usize)
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
    }
}

fn parse(data: &[u8]) -> Option<Hello> {
    let mut c = Cur(data);
    if c.u8()? != 22 {
        return None;
    }
    c.take(4)?; // record version, length
    if c.u8()? != 1 {
        return None; // not a ClientHello
    }
    c.take(3)?; // handshake length
    let legacy = c.u16()? as u16;
    c.take(32)?; // random
    let sid = c.u8()?;
    c.take(sid)?;
    let suites = c.u16()?;
    c.take(suites)?;
    let comp = c.u8()?;
    c.take(comp)?;
    let mut hello = Hello {
        version: version_name(legacy),
        sni: None,
    };
    let ext_len = c.u16()?;
    let mut exts = Cur(c.take(ext_len.min(c.0.len()))?);
    while let (Some(ty), Some(len)) = (exts.u16(), exts.u16()) {
        let Some(body) = exts.take(len) else { break };
        let mut b = Cur(body);
        match ty {
            0 => {
                b.u16();
                if b.u8() == Some(0) {
                    if let Some(n) = b.u16().and_then(|n| b.take(n)) {
                        hello.sni = Some(String::from_utf8_lossy(n).into_owned());
                    }
                }
            }
            43 => {
                let n = b.u8().unwrap_or(0);
                let mut best = 0u16;
                for _ in 0..n / 2 {
                    let Some(v) = b.u16() else { break };
                    let v = v as u16;
                    // Skip GREASE values (RFC 8701: 0x?a?a).
                    if v & 0x0f0f != 0x0a0a && v > best {
                        best = v;
                    }
                }
                if best > 0 {
                    hello.version = version_name(best);
                }
            }
            _ => {}
        }
    }
    Some(hello)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ClientHello with SNI `api.anthropic.com` and supported_versions
    /// {GREASE, 1.3, 1.2}, built by hand from RFC 8446 §4.1.2.
    fn hello() -> Vec<u8> {
        let name = b"api.anthropic.com";
        let mut sni = vec![];
        sni.extend_from_slice(&((name.len() + 3) as u16).to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
        sni.extend_from_slice(name);
        let mut exts = vec![0, 0];
        exts.extend_from_slice(&(sni.len() as u16).to_be_bytes());
        exts.extend_from_slice(&sni);
        exts.extend_from_slice(&[0, 43, 0, 7, 6, 0x1a, 0x1a, 3, 4, 3, 3]);
        let mut body = vec![3, 3];
        body.extend_from_slice(&[0; 32]);
        body.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend_from_slice(&exts);
        let mut hs = vec![1, 0];
        hs.extend_from_slice(&(body.len() as u16).to_be_bytes());
        hs.extend_from_slice(&body);
        let mut rec = vec![22, 3, 1];
        rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        rec.extend_from_slice(&hs);
        rec
    }

    #[test]
    fn reads_sni_and_version() {
        let h = hello();
        assert!(looks_like_tls(&h));
        let got = client_hello(&h);
        assert_eq!(got.version, "TLS 1.3");
        assert_eq!(got.sni.as_deref(), Some("api.anthropic.com"));
        // Cut short: still recognised as TLS.
        assert_eq!(client_hello(&h[..20]).version, "TLS");
        assert!(!looks_like_tls(b"POST /v1/messages HTTP/1.1"));
    }
}
