//! Redaction of secrets at capture time: API keys, authorization headers, cookies,
//! credentials in URLs and query strings, and secret-looking environment variables and
//! arguments are replaced by a marker that keeps only an allow-listed scheme and a short
//! fingerprint, so runs with the same key can be told apart from runs with different keys,
//! and the secret never reaches disk.

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::Headers;

/// Substrings (lowercase) that make a header name secret: `x-api-key`, `authorization`,
/// `proxy-authorization`, `cookie`, `set-cookie`, `x-auth-token`, `anthropic-auth-token`…
const SECRET_HEADER_PARTS: &[&str] = &[
    "key",
    "auth",
    "cookie",
    "token",
    "secret",
    "password",
    "credential",
];

/// True when a header with this name carries a secret.
pub fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SECRET_HEADER_PARTS.iter().any(|p| n.contains(p))
}

/// True when an environment variable of this name is treated as a secret.
pub fn is_secret_env(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASS",
        "PWD",
        "CREDENTIAL",
        "AUTH",
        "COOKIE",
        "PAT",
        "SESSION",
    ]
    .iter()
    .any(|w| {
        n.split('_')
            .any(|part| part == *w || (w.len() > 3 && part.contains(w)))
    })
}

/// Schemes kept in a marker (case-insensitive match, written as listed).
const SCHEMES: &[&str] = &["Bearer", "Basic", "Digest", "Token", "Negotiate"];

static ANTHROPIC_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(sk-ant-[a-z]{3}\d{2})-").expect("static regex"));
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[redacted (?:(?:Bearer|Basic|Digest|Token|Negotiate|sk-ant-[a-z]{3}\d{2}) )?fp=[0-9a-f]{8}\]$")
        .expect("static regex")
});
static SECRET_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"sk-ant-[A-Za-z0-9_-]{8,}|(?i)((?:api[_-]?key|key|token|secret|password|passwd|auth)=)([^&\s]+)")
        .expect("static regex")
});
static URL_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s:]+):([^/@\s]+)@").expect("static regex")
});

/// The marker that replaces a secret value: `[redacted SCHEME fp=XXXXXXXX]`.
///
/// SCHEME is kept only when it is one of a fixed list (`Bearer`, `Basic`, `Digest`,
/// `Token`, `Negotiate`) or the key-type prefix of an Anthropic key (`sk-ant-api03`); the
/// fingerprint is the first 8 hex digits of the SHA-256 of the whole value.
pub fn marker(value: &str) -> String {
    let fp = &hex::encode(Sha256::digest(value.as_bytes()))[..8];
    match scheme(value) {
        Some(s) => format!("[redacted {s} fp={fp}]"),
        None => format!("[redacted fp={fp}]"),
    }
}

fn scheme(value: &str) -> Option<String> {
    let v = value.trim();
    if let Some((first, rest)) = v.split_once(' ') {
        if !rest.trim().is_empty() {
            if let Some(s) = SCHEMES.iter().find(|s| s.eq_ignore_ascii_case(first)) {
                return Some(s.to_string());
            }
        }
    }
    ANTHROPIC_KEY.captures(v).map(|c| c[1].to_string())
}

/// True when a value is exactly a marker this module writes.
pub fn is_marker(value: &str) -> bool {
    MARKER.is_match(value)
}

/// Replace the values of secret headers (and any header value holding an Anthropic key)
/// by markers, in place.
pub fn redact_headers(headers: &mut Headers) {
    for (name, value) in headers.iter_mut() {
        if (is_secret_header(name) || value.contains("sk-ant-")) && !is_marker(value) {
            *value = marker(value);
        }
    }
}

/// Redact secrets inside free text: Anthropic keys, `key=`/`token=`/`password=`-style
/// query parameters, and passwords in URLs (`scheme://user:PASS@`).
pub fn redact_text(text: &str) -> String {
    let t = URL_USERINFO.replace_all(text, |c: &regex::Captures| {
        format!("{}{}:{}@", &c[1], &c[2], marker(&c[3]))
    });
    SECRET_IN_TEXT
        .replace_all(&t, |c: &regex::Captures| match (c.get(1), c.get(2)) {
            (Some(k), Some(v)) => format!("{}{}", k.as_str(), marker(v.as_str())),
            _ => marker(&c[0]),
        })
        .into_owned()
}

/// Redacted copy of an environment value: a marker if the name looks secret, else the
/// value with secrets inside it (URL passwords, keys) redacted.
pub fn redact_env(name: &str, value: &str) -> String {
    if is_secret_env(name) && !value.is_empty() && !is_marker(value) {
        marker(value)
    } else {
        redact_text(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_keeps_type_prefix_only() {
        let m = marker("sk-ant-api03-SECRETSECRET");
        assert!(m.starts_with("[redacted sk-ant-api03 fp="), "{m}");
        assert!(!m.contains("SECRET"));
        // a key whose parts do not have the known shape keeps nothing
        let m = marker("sk-ant-LEAKYSECRETKEYVALUE123");
        assert!(m.starts_with("[redacted fp="), "{m}");
    }

    #[test]
    fn only_known_schemes_are_kept() {
        assert!(marker("Bearer abc.def").starts_with("[redacted Bearer fp="));
        assert!(marker("bearer abc").starts_with("[redacted Bearer fp="));
        let m = marker("hunter twopart");
        assert!(!m.contains("hunter"), "{m}");
    }

    #[test]
    fn marker_shaped_secrets_are_redacted_again() {
        let mut h = vec![(
            "x-api-key".to_string(),
            "[redacted MYSECRET fp=00000000]".to_string(),
        )];
        redact_headers(&mut h);
        assert!(!h[0].1.contains("MYSECRET"));
        assert!(is_marker(&h[0].1));
    }

    #[test]
    fn same_secret_same_fingerprint() {
        assert_eq!(marker("k1"), marker("k1"));
        assert_ne!(marker("k1"), marker("k2"));
    }

    #[test]
    fn headers_redacted_by_name_and_by_value() {
        let mut h = vec![
            ("X-Api-Key".to_string(), "sk-ant-api03-zzz".to_string()),
            ("Cookie".to_string(), "a=b".to_string()),
            ("x-auth-token".to_string(), "t".to_string()),
            ("x-custom".to_string(), "sk-ant-api03-hidden".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
            ("x-claude-code-session-id".to_string(), "abc".to_string()),
        ];
        redact_headers(&mut h);
        for kv in &h[..4] {
            assert!(is_marker(&kv.1), "{kv:?}");
        }
        assert_eq!(h[4].1, "application/json");
        assert_eq!(h[5].1, "abc");
    }

    #[test]
    fn secrets_in_text() {
        let t = redact_text("/v1/messages?beta=true&key=QSECRET1 http://u:PW123@h/x --api-key=sk-ant-api03-abcdefghij");
        assert!(
            !t.contains("QSECRET1") && !t.contains("PW123") && !t.contains("abcdefghij"),
            "{t}"
        );
        assert!(
            t.starts_with("/v1/messages?beta=true&key=[redacted fp="),
            "{t}"
        );
    }

    #[test]
    fn env_secrets() {
        for k in [
            "ANTHROPIC_API_KEY",
            "DB_PASS",
            "GH_PAT",
            "SESSION_COOKIE",
            "MY_PASSWORD",
        ] {
            assert!(is_marker(&redact_env(k, "v")), "{k}");
        }
        assert_eq!(redact_env("ANTHROPIC_BASE_URL", "http://x"), "http://x");
        assert!(!redact_env("ANTHROPIC_BASE_URL", "http://u:SECRET@x").contains("SECRET"));
        assert_eq!(redact_env("ENABLE_TOOL_SEARCH", "true"), "true");
        assert_eq!(redact_env("PATH", "/usr/bin"), "/usr/bin");
    }
}
