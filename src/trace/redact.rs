//! Redaction of secrets at capture time: API keys, authorization headers, cookies and
//! secret-looking environment variables are replaced by a marker that keeps only the
//! scheme and a short fingerprint, so two runs with the same key can still be told apart
//! from runs with different keys, and the secret never reaches disk.

use sha2::{Digest, Sha256};

use super::Headers;

/// Header names (lowercase) whose values are secrets.
pub const SECRET_HEADERS: &[&str] = &[
    "x-api-key",
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "anthropic-api-key",
    "x-goog-api-key",
    "api-key",
];

/// True when a header with this name carries a secret.
pub fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| name.eq_ignore_ascii_case(s))
}

/// True when an environment variable of this name is treated as a secret.
pub fn is_secret_env(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| n.contains(w))
        && !n.ends_with("_URL")
}

/// The marker that replaces a secret value: `[redacted SCHEME fp=8 hex digits]`.
///
/// The scheme is the first word of an `Authorization`-style value (`Bearer`, `Basic`), or
/// the key-type prefix of an Anthropic key (`sk-ant-api03`, `sk-ant-oat01`); the
/// fingerprint is the first 8 hex digits of the SHA-256 of the whole value.
pub fn marker(value: &str) -> String {
    let fp = &hex::encode(Sha256::digest(value.as_bytes()))[..8];
    match scheme(value) {
        Some(s) => format!("[redacted {s} fp={fp}]"),
        None => format!("[redacted fp={fp}]"),
    }
}

fn scheme(value: &str) -> Option<&str> {
    let v = value.trim();
    if let Some((first, rest)) = v.split_once(' ') {
        if !rest.is_empty() && first.len() <= 16 && first.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Some(first);
        }
    }
    if v.starts_with("sk-ant-") {
        // sk-ant-api03-XXXX: keep the three dash-separated type words.
        let mut end = 0;
        for (i, part) in v.split('-').take(3).enumerate() {
            end += part.len() + usize::from(i > 0);
        }
        return Some(&v[..end]);
    }
    None
}

/// True when a value is already a redaction marker.
pub fn is_marker(value: &str) -> bool {
    value.starts_with("[redacted ") && value.ends_with(']')
}

/// Replace the values of secret headers by markers, in place.
pub fn redact_headers(headers: &mut Headers) {
    for (name, value) in headers.iter_mut() {
        if is_secret_header(name) && !is_marker(value) {
            *value = marker(value);
        }
    }
}

/// Redacted copy of an environment value: a marker if the name looks secret.
pub fn redact_env(name: &str, value: &str) -> String {
    if is_secret_env(name) && !value.is_empty() && !is_marker(value) {
        marker(value)
    } else {
        value.to_string()
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
    }

    #[test]
    fn bearer_keeps_scheme() {
        let m = marker("Bearer abc.def");
        assert!(m.starts_with("[redacted Bearer fp="));
        assert!(!m.contains("abc"));
    }

    #[test]
    fn same_secret_same_fingerprint() {
        assert_eq!(marker("k1"), marker("k1"));
        assert_ne!(marker("k1"), marker("k2"));
    }

    #[test]
    fn headers_redacted_case_insensitively() {
        let mut h = vec![
            ("X-Api-Key".to_string(), "sk-ant-api03-zzz".to_string()),
            ("Cookie".to_string(), "a=b".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
        ];
        redact_headers(&mut h);
        assert!(h[0].1.starts_with("[redacted"));
        assert!(h[1].1.starts_with("[redacted"));
        assert_eq!(h[2].1, "application/json");
    }

    #[test]
    fn env_secrets() {
        assert!(redact_env("ANTHROPIC_API_KEY", "sk-ant-x").starts_with("[redacted"));
        assert_eq!(redact_env("ANTHROPIC_BASE_URL", "http://x"), "http://x");
        assert_eq!(redact_env("ENABLE_TOOL_SEARCH", "true"), "true");
    }
}
