//! Redaction of secrets: the one place that decides what is secret and how it is hidden.
//! API keys, authorization headers, cookies, credentials in URLs (userinfo) and query
//! strings, secret-looking environment variables and command-line arguments, and secrets
//! quoted in error messages are replaced by a marker that keeps only an allow-listed scheme
//! and a short fingerprint, so runs with the same key can be told apart from runs with
//! different keys, and the secret never reaches disk.
//!
//! Every string agentwire writes passes through here: the trace writer applies
//! [`exchange`] and [`context`] to every record (so no source can forget), raw request
//! heads kept for diagnosis pass [`raw_head`], and Parquet text columns pass [`redact_text`].
//! Request and response *bodies* are kept byte-exact and are not redacted unless the user
//! asks for it ([`body_keys`], `--redact-body`).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::Regex as BytesRegex;
use regex::Regex;
use sha2::{Digest, Sha256};

use super::{Context, Exchange};

/// Words (lowercase) that make a name secret when a word of the name equals one or ends
/// with one (`apikey`, `accesstoken`, `xsrftoken`, `oauth`).
const SECRET_SUFFIXES: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "auth",
    "credential",
    "credentials",
    "creds",
    "cookie",
    "signature",
];
/// Words that make a name secret when a word starts with one (`authorization`,
/// `secrets`, `cookies`).
const SECRET_PREFIXES: &[&str] = &["auth", "secret", "credential", "cookie", "passw"];
/// Words that make a name secret only when a word equals one.
const SECRET_EXACT: &[&str] = &["pwd", "sig", "pat", "jwt", "jsessionid", "phpsessid"];

/// Words that make a name secret when they are its last word: `x-session`, a `session`
/// cookie (a session's *identifier* names end in `id`: `x-session-id`, `sessionId`,
/// `Mcp-Session-Id`, and are kept, as grouping needs them), `x-vercel-protection-bypass`
/// and other `*-bypass` tokens (a word ending in `bypass` elsewhere is not `pass`).
const SECRET_LAST: &[&str] = &["session", "bypass"];
/// Whole names (lowercase) that carry a secret without a secret-looking word: Honeycomb's
/// API key header.
const SECRET_NAMES: &[&str] = &["x-honeycomb-team"];

/// True when a name (header, environment variable, query parameter, command-line flag)
/// denotes a secret. The name is split into words at every non-alphanumeric character
/// (`x-api-key` → x, api, key; `OPENAI_APIKEY` → openai, apikey); it is secret when a word
/// ends with key, token, secret, password, passwd, pass, auth, credential(s), creds,
/// cookie or signature, starts with auth (not author), secret, credential, cookie or
/// passw, or is pwd, sig, pat, jwt or a server framework's session cookie name
/// (`jsessionid`, `phpsessid`). Session ids as such (`sessionId`, Claude Code's
/// `x-claude-code-session-id`, `Mcp-Session-Id`) are ids the analysis keys on, not
/// secrets, and stay. Plurals such as `tokens` (`max_tokens`,
/// `anthropic-ratelimit-tokens-remaining`) are counts, not secrets.
pub fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if SECRET_NAMES.contains(&lower.as_str()) {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.last().is_some_and(|w| SECRET_LAST.contains(w)) {
        return true;
    }
    words.iter().any(|w| {
        SECRET_EXACT.contains(w)
            || SECRET_SUFFIXES
                .iter()
                .any(|s| w.ends_with(s) && !w.ends_with("bypass"))
            || SECRET_PREFIXES.iter().any(|s| {
                w.starts_with(s) && (!w.starts_with("author") || w.starts_with("authoriz"))
            })
    })
}

/// UUIDs, prefixed ids (`ses_…`, `sess_…`) and small decimal numbers (a process or
/// terminal session, e.g. Codex's `session:27907` job reference; a cookie is never ten
/// digits or fewer): the value shapes of session identifiers.
static SESSION_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[a-z]{2,8}_[A-Za-z0-9]{6,64}|[0-9]{1,10})$")
        .expect("static regex")
});

/// True when `value` under `name` is hidden: the name is secret ([`is_secret_name`]) and
/// the pair is not a session *identifier* kept by rule (a name ending in `session` with
/// a UUID or `ses_…`-style id value, which grouping keys on; any other value of such a
/// name, a session cookie, is hidden).
pub fn hides(name: &str, value: &str) -> bool {
    if !is_secret_name(name) {
        return false;
    }
    let last_is_session = name
        .rsplit(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty())
        .is_some_and(|w| w.eq_ignore_ascii_case("session"));
    !(last_is_session && SESSION_ID.is_match(value.trim()))
}

/// True when a header with this name carries a secret (see [`is_secret_name`]).
pub fn is_secret_header(name: &str) -> bool {
    is_secret_name(name)
}

/// True when an environment variable of this name is treated as a secret (see
/// [`is_secret_name`]; also `*SESSION*` variables, which hold session cookies).
pub fn is_secret_env(name: &str) -> bool {
    is_secret_name(name) || name.to_ascii_uppercase().contains("SESSION")
}

/// Schemes kept in a marker (case-insensitive match, written as listed).
const SCHEMES: &[&str] = &["Bearer", "Basic", "Digest", "Token", "Negotiate"];

static ANTHROPIC_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(sk-ant-[a-z]{3}\d{2})-").expect("static regex"));
static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[redacted (?:(?:Bearer|Basic|Digest|Token|Negotiate|sk-ant-[a-z]{3}\d{2}) )?fp=[0-9a-f]{8}\]$")
        .expect("static regex")
});
/// Key shapes found anywhere in text: Anthropic keys, and a few other providers' tokens
/// that are unambiguous by prefix (GitHub, AWS access key ids, Slack, Google API keys:
/// `AIza` and 35 more characters, as the Gemini API's `x-goog-api-key` and `?key=` carry).
static KEY_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"sk-ant-[A-Za-z0-9_-]{8,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bAKIA[0-9A-Z]{16}\b|\bxox[abpr]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{35}",
    )
    .expect("static regex")
});
/// `scheme://…@` or `//…@` (a network-path reference): a userinfo candidate, up to the
/// last `@` before a query, fragment or the end of the token; [`url_userinfo`] decides
/// how much of it is userinfo (a token is often the user name, so all of it is hidden).
static URL_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)((?:\b[a-z][a-z0-9+.-]*:)?//)([^\s\x22'<>?#]*)@").expect("static regex")
});
/// `user:password@host` without a scheme (an authority-form target such as a CONNECT's,
/// a database or proxy address in a message): the userinfo when it holds a colon (the
/// user may be empty; the password may hold `/` or `@`, up to the last `@` before a host).
/// Only at the start of the text or after a separator, so a URL's own userinfo (handled
/// by [`URL_USERINFO`]) and a marker are not matched again; `user@host` without a colon is
/// an e-mail address and stays.
static AUTHORITY_USERINFO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(^|[\s\x22'(<=,;])([^\s/?#@\x22'<>:\[\]]*:[^\s\x22'<>\[\]]*)@([a-z0-9.-]+|\[[0-9a-f:.]+\])",
    )
    .expect("static regex")
});
/// `name=value` (query strings, `--flag=value`, `VAR=value`), `name: value` (header
/// lines quoted in messages) and `"name": "value"` (JSON quoted in messages and notes);
/// the name is checked with [`is_secret_name`]. Groups: name, the quote closing it,
/// separator, value (a quoted JSON string whole, or a bare run).
static NAME_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)([A-Za-z0-9_.-]+)("?)(=|:[ \t]*)("(?:[^"\\]|\\.)*"|[^&\s"',;<>\]]+)"#)
        .expect("static regex")
});
/// `Bearer TOKEN`, `Basic CREDENTIALS` in free text.
static AUTH_SCHEME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(\[redacted )?\b(bearer|basic|token)[ \t]+([A-Za-z0-9._~+/=-]{8,})")
        .expect("static regex")
});
/// Anthropic-key-shaped byte strings inside bodies (`--redact-body`).
/// A dash may be written as the JSON escape `\u002d` (`sk\u002dant-…` is the same key
/// inside a JSON string).
pub(crate) static BODY_KEY: LazyLock<BytesRegex> = LazyLock::new(|| {
    BytesRegex::new(r"sk(?:-|\\u002[dD])ant(?:-|\\u002[dD])(?:[A-Za-z0-9_-]|\\u002[dD]){8,}")
        .expect("static regex")
});

/// The marker that replaces a secret value: `[redacted SCHEME fp=XXXXXXXX]`.
///
/// SCHEME is kept only when it is one of a fixed list (`Bearer`, `Basic`, `Digest`,
/// `Token`, `Negotiate`) or the key-type prefix of an Anthropic key (`sk-ant-api03`); the
/// fingerprint is the first 8 hex digits of the SHA-256 of the whole value.
pub fn marker(value: &str) -> String {
    let fp = fingerprint(value);
    match scheme(value) {
        Some(s) => format!("[redacted {s} fp={fp}]"),
        None => format!("[redacted fp={fp}]"),
    }
}

/// The fingerprint a marker shows: the first 8 hex digits of the SHA-256 of `value`.
pub fn fingerprint(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))[..8].to_string()
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

/// The marker for a value, or the value itself when it already is a marker.
fn hide(value: &str) -> String {
    if is_marker(value) {
        value.to_string()
    } else {
        marker(value)
    }
}

/// Replace the values of secret headers (and any header value holding a secret) by
/// markers, in place.
pub fn redact_headers(headers: &mut [(String, String)]) {
    for (name, value) in headers.iter_mut() {
        if is_marker(value) {
            continue;
        }
        if hides(name, value) {
            *value = marker(value);
        } else {
            let v = redact_text_cow(value);
            if v != value.as_str() {
                *value = v.into_owned();
            }
        }
    }
}

/// Redact secrets inside free text (URLs, query strings, command lines, error messages):
/// URL userinfo, `user:password@host` without a scheme, values of secret-looking `name=value` / `name: value` pairs,
/// `Bearer`/`Basic` credentials, and key-shaped strings (Anthropic keys and a few other
/// providers' prefixed tokens). Markers already present are left as they are, so applying
/// it twice changes nothing.
pub fn redact_text(text: &str) -> String {
    redact_text_cow(text).into_owned()
}

/// [`redact_text`] without allocating when nothing is secret.
pub fn redact_text_cow(text: &str) -> Cow<'_, str> {
    // Fast path: no character that any rule needs.
    if !text.contains(['=', ':', '@', ' ', '-', '_']) && !text.contains("AKIA") {
        return Cow::Borrowed(text);
    }
    let mut t: Cow<str> = Cow::Borrowed(text);
    if let Cow::Owned(s) = KEY_SHAPES.replace_all(&t, |c: &regex::Captures| marker(&c[0])) {
        t = Cow::Owned(s);
    }
    // Both userinfo rules need an `@`: most header values have none.
    if t.contains('@') {
        if let Cow::Owned(s) = URL_USERINFO.replace_all(&t, |c: &regex::Captures| {
            // `n` is the candidate's length or the index of an `@` inside it.
            match url_userinfo(&c[2]) {
                Some(n) => format!("{}{}{}@", &c[1], hide(&c[2][..n]), &c[2][n..]),
                None => c[0].to_string(),
            }
        }) {
            t = Cow::Owned(s);
        }
        if let Cow::Owned(s) = AUTHORITY_USERINFO.replace_all(&t, |c: &regex::Captures| {
            // `scheme://host/…@…` is a URL, whose userinfo rule ran above.
            if c[2]
                .split_once(':')
                .is_some_and(|(_, rest)| rest.starts_with("//"))
            {
                return c[0].to_string();
            }
            format!("{}{}@{}", &c[1], hide(&c[2]), &c[3])
        }) {
            t = Cow::Owned(s);
        }
    }
    if let Cow::Owned(s) = AUTH_SCHEME.replace_all(&t, |c: &regex::Captures| {
        if c.get(1).is_some() {
            return c[0].to_string(); // already a marker
        }
        marker(&format!("{} {}", &c[2], &c[3]))
    }) {
        t = Cow::Owned(s);
    }
    if let Cow::Owned(s) = redact_pairs(&t) {
        t = Cow::Owned(s);
    }
    t
}

/// How much of a [`URL_USERINFO`] candidate (the text between `//` and its last `@`) is
/// userinfo, in bytes: all of it when it holds no `/`; up to its last `@` before the first
/// `/` when there is one (`u:p@h/x@y`: `u:p`); all of it when a colon before the first `/`
/// is followed by something other than a port (`u:pa/ss`, a password holding `/`); none
/// otherwise (`host:4873/` of `http://host:4873/@scope/pkg`, `registry.npmjs.org/`).
fn url_userinfo(candidate: &str) -> Option<usize> {
    let Some(slash) = candidate.find('/') else {
        return Some(candidate.len());
    };
    let before = &candidate[..slash];
    if let Some(at) = before.rfind('@') {
        return Some(at);
    }
    let (_, after_colon) = before.split_once(':')?;
    (!after_colon.is_empty() && !after_colon.bytes().all(|b| b.is_ascii_digit()))
        .then_some(candidate.len())
}

/// A target in authority form (`host:port`, a CONNECT's): everything before its last `@`
/// is userinfo, which RFC 9110 §9.3.6 does not allow there, so all of it is hidden (a
/// token alone is as secret as `user:password`); the rest passes [`redact_text`].
pub fn redact_authority(target: &str) -> String {
    match target.rsplit_once('@') {
        Some((userinfo, host)) if !is_marker(userinfo) => {
            format!("{}@{}", hide(userinfo), redact_text(host))
        }
        _ => redact_text(target),
    }
}

/// An OAuth authorization code in a query string (`code=…`, RFC 6749 §4.1.2): `code` is
/// no secret name elsewhere (exit codes, error codes), so only as `code=` with a value of
/// 8 or more characters.
fn oauth_code(name: &str, sep: &str, value: &str) -> bool {
    sep == "=" && name.eq_ignore_ascii_case("code") && value.len() >= 8
}

/// The `name=value` / `name: value` rule of [`redact_text_cow`]. The value of a pair whose
/// name is not secret is searched again: it can hold pairs of its own (`http://h/?token=T`
/// matches as `http` `:` `//h/?token=T`, a Referer or `url=` value holds a whole URL), and
/// a match consumes its text, so without the second look their secrets would pass.
fn redact_pairs(text: &str) -> Cow<'_, str> {
    NAME_VALUE.replace_all(text, |c: &regex::Captures| {
        let (name, close, sep, value) = (&c[1], &c[2], &c[3], &c[4]);
        // A quoted value keeps its quotes; the marker holds no quote or backslash.
        let (open, inner, end) = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(inner) => ("\"", inner, "\""),
            None => ("", value, ""),
        };
        if inner.is_empty() || inner.starts_with("[redacted") {
            c[0].to_string()
        } else if hides(name, inner) || oauth_code(name, sep, inner) {
            format!("{name}{close}{sep}{open}{}{end}", marker(inner))
        } else {
            format!("{name}{close}{sep}{open}{}{end}", redact_pairs(inner))
        }
    })
}

/// Redacted copy of an environment value: a marker if the name looks secret, else the
/// value with secrets inside it (URL userinfo, keys) redacted.
pub fn redact_env(name: &str, value: &str) -> String {
    if is_secret_env(name) && !value.is_empty() {
        hide(value)
    } else {
        redact_text(value)
    }
}

/// Redacted copy of a command line (argv): the value of a secret-looking option, given as
/// `--api-key VALUE`, `--token=VALUE` or `-p=VALUE`-style, becomes a marker, and every
/// argument passes [`redact_text`] (so a key given bare is hidden too).
pub fn redact_argv(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut hide_next = false;
    for a in argv {
        if hide_next {
            hide_next = false;
            out.push(hide(a));
            continue;
        }
        if let Some(flag) = a.strip_prefix('-').filter(|f| !f.is_empty()) {
            let flag = flag.trim_start_matches('-');
            match flag.split_once('=') {
                Some((name, value)) if is_secret_name(name) => {
                    let dashes = &a[..a.len() - flag.len()];
                    out.push(format!("{dashes}{name}={}", hide(value)));
                    continue;
                }
                None if is_secret_name(flag) => hide_next = true,
                _ => {}
            }
        }
        match json_argument(a) {
            Some(j) => out.push(j),
            None => out.push(redact_text(a)),
        }
    }
    out
}

/// A raw request head (request line and header lines, as bytes received) with the values of
/// secret header lines replaced by markers and the request target passed through
/// [`redact_text`]; bytes after the head (a body) get only key-shaped strings replaced.
/// Used for requests that could not be parsed and are kept raw for diagnosis.
pub fn raw_head(raw: &[u8]) -> Vec<u8> {
    let head_end = find_head_end(raw).unwrap_or(raw.len());
    let (head, rest) = raw.split_at(head_end);
    let mut out = Vec::with_capacity(raw.len() + 64);
    for (i, line) in head.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let text = String::from_utf8_lossy(line);
        let (body, cr) = match text.strip_suffix('\r') {
            Some(t) => (t, "\r"),
            None => (text.as_ref(), ""),
        };
        let redacted = match body.split_once(':') {
            Some((name, value)) if i > 0 && is_secret_name(name.trim()) => {
                let v = value.trim();
                if v.is_empty() {
                    body.to_string()
                } else {
                    format!("{name}: {}", hide(v))
                }
            }
            // A CONNECT's target is authority form: all of a userinfo there is hidden.
            _ if i == 0 && body.starts_with("CONNECT ") => {
                let mut parts = body.splitn(3, ' ');
                let (m, target, rest) = (parts.next(), parts.next(), parts.next());
                match (m, target, rest) {
                    (Some(m), Some(t), Some(v)) => {
                        format!("{m} {} {}", redact_authority(t), redact_text(v))
                    }
                    _ => redact_text(body),
                }
            }
            _ => redact_text(body),
        };
        if redacted == body && std::str::from_utf8(line).is_ok() {
            out.extend_from_slice(line);
        } else {
            out.extend_from_slice(redacted.as_bytes());
            out.extend_from_slice(cr.as_bytes());
        }
    }
    out.extend_from_slice(&body_keys(rest).0);
    out
}

fn find_head_end(raw: &[u8]) -> Option<usize> {
    raw.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| p + 4)
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|p| p + 2))
}

/// `--redact-body`: a body with every Anthropic-key-shaped string replaced by its marker,
/// and the number of replacements. The marker holds no quote or backslash, so a JSON body
/// stays valid JSON; its size and digest then describe the redacted bytes.
pub fn body_keys(body: &[u8]) -> (Cow<'_, [u8]>, usize) {
    let mut n = 0;
    let out = BODY_KEY.replace_all(body, |c: &regex::bytes::Captures| {
        n += 1;
        marker(&String::from_utf8_lossy(&c[0])).into_bytes()
    });
    (out, n)
}

/// Redact every string of an exchange that is not a body: header values, the request
/// method and target, the source's upstream URL, the error message, and strings inside notes. Returns
/// `None` when nothing needed redaction (the common case: sources redact at capture time).
pub fn exchange(x: &Exchange) -> Option<Exchange> {
    if !exchange_dirty(x) {
        return None;
    }
    let mut y = x.clone();
    exchange_in_place(&mut y);
    Some(y)
}

/// True when a string of `x` that is not a body needs redaction.
fn exchange_dirty(x: &Exchange) -> bool {
    headers_dirty(&x.request.headers)
        || x.response
            .as_ref()
            .is_some_and(|r| headers_dirty(&r.headers))
        || is_dirty(&x.request.target)
        || is_dirty(&x.request.method)
        || is_dirty(&x.request.version)
        || x.response.as_ref().is_some_and(|r| is_dirty(&r.version))
        || source_strings(&x.source).any(|s| is_dirty(s))
        || x.error.as_ref().is_some_and(|e| is_dirty(&e.message))
        || x.notes.values().any(json_dirty)
}

/// The strings of a source that come from outside: addresses, file, format, mode and
/// what an import says is missing.
fn source_strings(s: &super::Source) -> impl Iterator<Item = &String> {
    [
        &s.upstream,
        &s.server,
        &s.client,
        &s.file,
        &s.format,
        &s.mode,
    ]
    .into_iter()
    .flatten()
    .chain(&s.missing)
}

/// [`exchange`] for an exchange the caller owns: the same strings redacted in place, so
/// the bodies are not copied.
pub fn exchange_in_place(y: &mut Exchange) {
    if !exchange_dirty(y) {
        return;
    }
    redact_headers(&mut y.request.headers);
    if let Some(r) = y.response.as_mut() {
        redact_headers(&mut r.headers);
    }
    y.request.target = redact_text(&y.request.target);
    y.request.method = redact_text(&y.request.method);
    y.request.version = redact_text(&y.request.version);
    if let Some(r) = y.response.as_mut() {
        r.version = redact_text(&r.version);
    }
    let src = &mut y.source;
    for s in [
        &mut src.upstream,
        &mut src.server,
        &mut src.client,
        &mut src.file,
        &mut src.format,
        &mut src.mode,
    ]
    .into_iter()
    .flatten()
    {
        *s = redact_text(s);
    }
    for s in &mut src.missing {
        *s = redact_text(s);
    }
    if let Some(e) = y.error.as_mut() {
        e.message = redact_text(&e.message);
    }
    for v in y.notes.values_mut() {
        redact_json(v);
    }
}

/// Redact a recording context: the command line ([`redact_argv`]), environment values
/// ([`redact_env`]), base URL and label ([`redact_text`]).
pub fn context(c: &Context) -> Context {
    let mut c = c.clone();
    c.command = redact_argv(&c.command);
    for (k, v) in c.env.iter_mut() {
        *v = redact_env(k, v);
    }
    for s in [&mut c.base_url, &mut c.label].into_iter().flatten() {
        *s = redact_text(s);
    }
    c
}

fn is_dirty(s: &str) -> bool {
    redact_text_cow(s) != s
}

fn headers_dirty(h: &[(String, String)]) -> bool {
    h.iter()
        .any(|(k, v)| !is_marker(v) && ((hides(k, v) && !v.is_empty()) || is_dirty(v)))
}

/// True when a JSON value holds something [`redact_json`] would change.
pub fn json_dirty(v: &serde_json::Value) -> bool {
    let mut r = v.clone();
    redact_json(&mut r);
    r != *v
}

/// Redact every string of a JSON value in place ([`redact_text`]); values under secret
/// names ([`is_secret_name`]) become markers, whatever their type (a number, every string
/// of an object or array; `null` and booleans stay); an array of strings is a command
/// line and passes [`redact_argv`] (`"args": ["--api-key", "V"]`). Used for notes, MCP
/// messages and records, and command-line arguments that are JSON (`--mcp-config '{…}'`).
pub fn redact_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => *s = redact_text(s),
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_string) => {
            let argv: Vec<String> = a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect();
            *a = redact_argv(&argv).into_iter().map(Value::String).collect();
        }
        Value::Array(a) => a.iter_mut().for_each(redact_json),
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                if hides(k, v.as_str().unwrap_or("")) {
                    hide_json(v);
                } else {
                    redact_json(v);
                }
            }
        }
        _ => {}
    }
}

/// Every string and number inside `v` replaced by its marker (`null`, booleans, and
/// empty strings stay).
fn hide_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) if !s.is_empty() => *s = hide(s),
        Value::Number(n) => *v = Value::String(hide(&n.to_string())),
        Value::Array(a) => a.iter_mut().for_each(hide_json),
        Value::Object(o) => o.values_mut().for_each(hide_json),
        _ => {}
    }
}

/// A command-line argument that is a JSON object or array (an inline `--mcp-config`,
/// `--settings`) with [`redact_json`] applied, re-serialized when that changed it; `None`
/// for any other argument (and one with nothing to redact, kept as written).
fn json_argument(a: &str) -> Option<String> {
    let t = a.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(a).ok()?;
    let mut r = v.clone();
    redact_json(&mut r);
    (r != v).then(|| r.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-UNIQUEfakeKEY0123456789";

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
    fn marker_fingerprint_is_the_sha256_prefix_of_the_value() {
        // `printf k1 | sha256sum` = 6ab9f1eb…, `printf 'Bearer abc.def' | sha256sum` =
        // df5c542f…: the same secret gets the same marker in every trace.
        assert_eq!(marker("k1"), "[redacted fp=6ab9f1eb]");
        assert_eq!(marker("Bearer abc.def"), "[redacted Bearer fp=df5c542f]");
        assert_ne!(marker("k1"), marker("k2"));
    }

    #[test]
    fn headers_redacted_by_name_and_by_value() {
        let mut h = vec![
            ("X-Api-Key".to_string(), "sk-ant-api03-zzz".to_string()),
            ("Cookie".to_string(), "a=b".to_string()),
            ("x-auth-token".to_string(), "t".to_string()),
            (
                "x-custom".to_string(),
                "sk-ant-api03-hiddenhidden".to_string(),
            ),
            ("content-type".to_string(), "application/json".to_string()),
            ("x-claude-code-session-id".to_string(), "abc".to_string()),
            (
                "anthropic-ratelimit-tokens-remaining".to_string(),
                "1000".to_string(),
            ),
        ];
        redact_headers(&mut h);
        for kv in &h[..3] {
            assert!(is_marker(&kv.1), "{kv:?}");
        }
        assert!(h[3].1.starts_with("[redacted sk-ant-api03"), "{:?}", h[3]);
        assert_eq!(h[4].1, "application/json");
        assert_eq!(h[5].1, "abc");
        assert_eq!(h[6].1, "1000", "plural 'tokens' is a count, not a secret");
    }

    #[test]
    fn secret_names() {
        for n in [
            "x-api-key",
            "OPENAI_APIKEY",
            "MYAPIKEY",
            "AWS_CREDS",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "X-Amz-Signature",
            "sig",
            "access_token",
            "client_secret",
            "proxy-authorization",
            "DB_PASS",
            "GH_PAT",
            "set-cookie",
            "api-key",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "max_tokens",
            "content-type",
            "beta",
            "ENABLE_TOOL_SEARCH",
            "PATH",
            "author",
            "anthropic-version",
            "keep-alive",
            "x-claude-code-session-id",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
    }

    #[test]
    fn secrets_in_text() {
        let t = redact_text(&format!(
            "/v1/messages?beta=true&key=QSECRET1&X-Amz-Signature=abcd1234&sig=s1g http://u:PW123@h/x https://ghtoken999@github.com/x --api-key={KEY} Authorization: Bearer tok.tok.tok"
        ));
        for s in [
            "QSECRET1",
            "PW123",
            "UNIQUEfake",
            "abcd1234",
            "s1g",
            "ghtoken999",
            "tok.tok",
        ] {
            assert!(!t.contains(s), "{s} in {t}");
        }
        assert!(
            t.starts_with("/v1/messages?beta=true&key=[redacted fp="),
            "{t}"
        );
        assert_eq!(redact_text(&t), t, "idempotent");
        assert_eq!(
            redact_text("/v1/messages?beta=true"),
            "/v1/messages?beta=true"
        );
        assert_eq!(redact_text("max_tokens=100"), "max_tokens=100");
    }

    #[test]
    fn env_secrets() {
        for k in [
            "ANTHROPIC_API_KEY",
            "DB_PASS",
            "GH_PAT",
            "SESSION_COOKIE",
            "MY_PASSWORD",
            "OPENAI_APIKEY",
            "SERVICE_CREDS",
        ] {
            assert!(is_marker(&redact_env(k, "v")), "{k}");
        }
        assert_eq!(redact_env("ANTHROPIC_BASE_URL", "http://x"), "http://x");
        assert!(!redact_env("ANTHROPIC_BASE_URL", "http://u:SECRET@x").contains("SECRET"));
        assert_eq!(redact_env("ENABLE_TOOL_SEARCH", "true"), "true");
        assert_eq!(redact_env("PATH", "/usr/bin"), "/usr/bin");
    }

    #[test]
    fn argv_secrets() {
        let argv: Vec<String> = [
            "claude",
            "--api-key",
            "VALUE1",
            "--token=VALUE2",
            KEY,
            "-p",
            "hello",
            "--max-tokens",
            "100",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = redact_argv(&argv).join(" ");
        for s in ["VALUE1", "VALUE2", "UNIQUEfake"] {
            assert!(!r.contains(s), "{s} in {r}");
        }
        assert!(r.contains("-p hello --max-tokens 100"), "{r}");
    }

    #[test]
    fn raw_heads_lose_their_secrets() {
        let raw = format!("POST /v1/messages?key=Q1 HTTP/1.1\r\nx-api-key: {KEY}\r\nAuthorization: Bearer abcdefgh\r\nhost: x\r\n\r\n{{\"k\":\"{KEY}\"}}");
        let r = String::from_utf8(raw_head(raw.as_bytes())).unwrap();
        assert!(
            !r.contains("UNIQUEfake") && !r.contains("abcdefgh") && !r.contains("Q1"),
            "{r}"
        );
        assert!(r.contains("\r\nhost: x\r\n\r\n"), "{r}");
        // a head cut off mid-line is still redacted
        let cut = format!("GET / HTTP/1.1\r\nx-api-key: {}", &KEY[..20]);
        assert!(!String::from_utf8(raw_head(cut.as_bytes()))
            .unwrap()
            .contains("UNIQUE"));
    }

    #[test]
    fn body_keys_keep_json_valid() {
        let body = format!("{{\"text\":\"my key is {KEY}, ok\"}}");
        let (out, n) = body_keys(body.as_bytes());
        assert_eq!(n, 1);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(v["text"]
            .as_str()
            .unwrap()
            .contains("[redacted sk-ant-api03 fp="));
    }

    /// Reported by an adversarial tester: a secret query parameter inside a URL that is
    /// itself a value passed — an absolute-form target (`POST http://h/v1/messages?token=T`
    /// through the proxy or in a pcap), a Referer or Location header, reqwest's error text
    /// naming the upstream URL, `url=` values, a URL argument of `record -- cmd`: the
    /// `http:` of the URL matched as a harmless `name: value` pair and swallowed the rest.
    #[test]
    fn secrets_in_urls_inside_values_are_redacted() {
        for (text, secret) in [
            ("http://api/v1/messages?token=PABS1234", "PABS1234"),
            ("https://example.com/cb?access_token=REFTOKEN1", "REFTOKEN1"),
            ("https://x/?a=1&token=PLOC5678", "PLOC5678"),
            ("<https://a/?sig=SIGVALUE9>; rel=next", "SIGVALUE9"),
            (
                "error sending request for url (http://127.0.0.1:1/base/v1/messages?key=UPKEY123&beta=true)",
                "UPKEY123",
            ),
            ("next=https://h/?password=HUNTER22", "HUNTER22"),
            ("Location: /login?token=TOK98765", "TOK98765"),
        ] {
            let r = redact_text(text);
            assert!(!r.contains(secret), "{text} -> {r}");
            assert!(r.contains("[redacted fp="), "{text} -> {r}");
            assert_eq!(redact_text(&r), r, "idempotent");
        }
        // What is not secret stays readable.
        assert_eq!(
            redact_text("http://127.0.0.1:8080/v1/messages?beta=true"),
            "http://127.0.0.1:8080/v1/messages?beta=true"
        );
        let argv = redact_argv(&["curl".into(), "https://x/?token=ARGSECRET5".into()]);
        assert!(!argv[1].contains("ARGSECRET5"), "{argv:?}");
    }

    /// The rule table of the README's Security section, one row per line: a header (or
    /// any `name: value` / `name=value` / JSON pair) and whether its value is hidden.
    /// Before issue 32, `x-session`, `x-vercel-protection-bypass`, `x-honeycomb-team` and
    /// `?code=` were kept.
    const RULES: &[(&str, &str, bool)] = &[
        ("x-api-key", "k1234567", true),
        ("authorization", "Bearer abcdefgh", true),
        ("x-session", "0123abcd0123abcd", true),
        ("session", "s%3Aabc.def", true),
        ("x-vercel-protection-bypass", "bypass12345678", true),
        ("x-honeycomb-team", "hcteam12345678", true),
        ("x-session-id", "ses_01HXYZabcdef", false),
        ("x-session", "01a30000-0000-7000-8000-00000000c1a5", false),
        // A process session number (Codex's `write_stdin {session_id}`), kept.
        ("session", "27907", false),
        (
            "x-claude-code-session-id",
            "9f0e8d7c-0000-4000-8000-000000000000",
            false,
        ),
        ("mcp-session-id", "anything-at-all", false),
        ("max_tokens", "1024", false),
        ("anthropic-version", "2023-06-01", false),
    ];

    #[test]
    fn each_row_of_the_name_rule_table() {
        for (name, value, hidden) in RULES {
            let mut h = vec![(name.to_string(), value.to_string())];
            redact_headers(&mut h);
            assert_eq!(is_marker(&h[0].1), *hidden, "header {name}: {value}");
            let mut j = serde_json::json!({ *name: value });
            redact_json(&mut j);
            assert_eq!(
                j[name].as_str().is_some_and(is_marker),
                *hidden,
                "json {name}"
            );
        }
        // `code=` only as a query parameter with a code-sized value
        assert!(!redact_text("/cb?code=4/0AeanS0ZxYz&state=s").contains("0AeanS0ZxYz"));
        assert!(redact_text("exit code=1").contains("code=1"));
        let mut j = serde_json::json!({"code": 12345678, "error": {"code": "invalid_request"}});
        redact_json(&mut j);
        assert_eq!(j["code"], 12345678, "an error code is no secret");
    }

    #[test]
    fn version_and_missing_are_written_redacted() {
        // Before: `request.version` and `source.missing` were written as given.
        let mut x = crate::trace::test_exchange("POST", "/v1/messages", &[], b"{}");
        x.request.version = format!("HTTP/1.1 {KEY}");
        x.source.missing = vec![format!("key {KEY}")];
        let y = exchange(&x).expect("dirty");
        assert!(!y.request.version.contains("UNIQUE") && !y.source.missing[0].contains("UNIQUE"));
    }

    /// Reported by an adversarial tester: `jwt=` and session-cookie query parameters
    /// were written raw. Session ids that sessions and MCP analysis key on stay.
    #[test]
    fn session_cookie_and_jwt_parameters_are_secret() {
        for n in ["JSESSIONID", "PHPSESSID", "jwt", "id_jwt"] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "x-claude-code-session-id",
            "session_id",
            "sessionId",
            "Mcp-Session-Id",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
        assert!(!redact_text("/cb;jsessionid=PXSESS12?a=1").contains("PXSESS12"));
        assert!(!redact_text("/cb?jwt=JWT987654").contains("JWT987654"));
    }

    /// Reported by an adversarial tester: a key sent as the request method was written raw
    /// in `request.method`.
    #[test]
    fn a_secret_sent_as_the_method_is_redacted() {
        let x = crate::trace::test_exchange(KEY, "/v1/messages", &[], b"");
        let y = exchange(&x).expect("the method is dirty");
        assert!(
            !y.request.method.contains(&KEY[12..]),
            "{}",
            y.request.method
        );
        assert!(y.request.method.starts_with("[redacted sk-ant-api03 fp="));
    }

    /// Reported by an adversarial tester: `--redact-body` missed a key whose dashes are
    /// JSON escapes (`sk\u002dant-…`), the same string once the JSON is parsed.
    #[test]
    fn body_keys_with_json_escaped_dashes_are_found() {
        let escaped = KEY.replace('-', "\\u002d");
        let body = format!("{{\"text\":\"{escaped}\"}}");
        let (out, n) = body_keys(body.as_bytes());
        assert_eq!(n, 1);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let text = v["text"].as_str().unwrap();
        assert!(!text.contains(&KEY[12..]), "{text}");
    }

    /// Every Anthropic token kind is hidden in free text, not only `sk-ant-api03` keys:
    /// OAuth access and refresh tokens (`sk-ant-oat01`, `sk-ant-ort01`, what `claude
    /// login` stores) and admin keys (`sk-ant-admin01`); the marker keeps the kind.
    #[test]
    fn oauth_and_other_anthropic_token_kinds_are_redacted_in_text() {
        for (token, kind) in [
            ("sk-ant-oat01-OAUTHsecretVALUE_0123456789", "sk-ant-oat01"),
            ("sk-ant-ort01-REFRESHsecretVALUE-98765", "sk-ant-ort01"),
            ("sk-ant-admin01-ADMINsecretVALUE12345", ""),
            ("sk-ant-api03-APIsecretVALUE12345", "sk-ant-api03"),
        ] {
            let t = redact_text(&format!("error: token {token} was rejected"));
            let secret = &token[token.rfind('-').unwrap() + 1..];
            assert!(!t.contains(secret), "{token} leaked: {t}");
            let m = marker(token);
            assert_eq!(t, format!("error: token {m} was rejected"));
            if kind.is_empty() {
                assert!(m.starts_with("[redacted fp="), "{m}");
            } else {
                assert!(m.starts_with(&format!("[redacted {kind} fp=")), "{m}");
            }
            // and inside a header value and a body (`--redact-body`)
            let mut h = vec![("x-note".to_string(), format!("retry with {token}"))];
            redact_headers(&mut h);
            assert!(!h[0].1.contains(secret), "{h:?}");
            let body = format!("{{\"k\":\"{token}\"}}");
            let (b, n) = body_keys(body.as_bytes());
            assert_eq!(n, 1);
            assert!(!String::from_utf8_lossy(&b).contains(secret));
        }
    }

    /// Query strings in request targets: every secret-named parameter is hidden, others
    /// are kept as they were, in order.
    #[test]
    fn gemini_keys_in_the_header_the_query_and_free_text_are_redacted() {
        let key = "AIzaSyA1234567890abcdefghijklmnopqrstuv";
        let mut h = vec![("x-goog-api-key".to_string(), key.to_string())];
        redact_headers(&mut h);
        assert!(is_marker(&h[0].1), "{:?}", h);
        let url = format!("/v1beta/models/gemini-3.8-flash:generateContent?key={key}&alt=sse");
        let r = redact_text(&url);
        assert!(!r.contains(key) && r.contains("alt=sse"), "{r}");
        let said = redact_text(&format!("upstream said: bad key {key}"));
        assert!(!said.contains(key), "{said}");
    }

    #[test]
    fn query_string_secrets_are_redacted_and_other_parameters_kept() {
        let t = redact_text("/v1/messages?beta=true&api_key=QK1&x=1&access_token=QK2&max_tokens=5");
        assert_eq!(
            t,
            format!(
                "/v1/messages?beta=true&api_key={}&x=1&access_token={}&max_tokens=5",
                marker("QK1"),
                marker("QK2")
            )
        );
    }

    /// An AWS access key id alone (no `=`, `:`, space or other character the other rules
    /// need) still passes the key rules: the fast path for plain text does not skip it.
    #[test]
    fn a_bare_aws_access_key_id_is_redacted() {
        // AWS's documented example id; `printf AKIAIOSFODNN7EXAMPLE | sha256sum` = 1a5d44a2…
        let id = "AKIAIOSFODNN7EXAMPLE";
        assert_eq!(redact_text(id), "[redacted fp=1a5d44a2]");
        assert_eq!(redact_text("plaintext"), "plaintext");
    }

    /// `--name=value` options: a secret name's whole value is hidden (even with commas,
    /// which free-text redaction stops at) and the dashes are kept; other options are kept
    /// as given. Fingerprints by `sha256sum`: `ab,cd` 956a04a7.
    #[test]
    fn secret_option_values_are_hidden_whole_and_other_options_kept() {
        let argv: Vec<String> = ["claude", "--token=ab,cd", "--model=opus", "-p"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            redact_argv(&argv),
            [
                "claude",
                "--token=[redacted fp=956a04a7]",
                "--model=opus",
                "-p"
            ]
        );
    }

    /// A raw request head kept for diagnosis: secrets in the target and in secret header
    /// lines become markers, every other byte (line ends, the blank line) stays; the body
    /// gets only key-shaped strings replaced (`token=t` stays). The header value is hidden
    /// whole (free text would stop at the comma). Fingerprints by `sha256sum`: `QK1`
    /// 64f03c4a, `k,2` 5f575b6a, `sk-ant-api03-BODYKEY123` bc14eb2e.
    #[test]
    fn raw_head_replaces_only_the_secrets_and_keeps_every_other_byte() {
        let raw =
            b"POST /v1/messages?api_key=QK1 HTTP/1.1\r\nHost: a\r\nx-api-key: k,2\r\n\r\nbody token=t sk-ant-api03-BODYKEY123";
        assert_eq!(
            String::from_utf8(raw_head(raw)).unwrap(),
            "POST /v1/messages?api_key=[redacted fp=64f03c4a] HTTP/1.1\r\nHost: a\r\nx-api-key: [redacted fp=5f575b6a]\r\n\r\nbody token=t [redacted sk-ant-api03 fp=bc14eb2e]"
        );
        // The request line is never read as a header line, even with a colon in it
        // (`abc` ba7816bf).
        assert_eq!(
            String::from_utf8(raw_head(b"GET /cb?token:abc HTTP/1.1\r\n\r\n")).unwrap(),
            "GET /cb?token:[redacted fp=ba7816bf] HTTP/1.1\r\n\r\n"
        );
        // A head with bare LF line ends ends at the first blank line too (`q` 8e35c2cd,
        // `s` 043a7187).
        assert_eq!(
            String::from_utf8(raw_head(b"GET /?token=q HTTP/1.1\nx-api-key: s\n\nbody token=t")).unwrap(),
            "GET /?token=[redacted fp=8e35c2cd] HTTP/1.1\nx-api-key: [redacted fp=043a7187]\n\nbody token=t"
        );
    }

    /// Each place of an exchange that can hold a secret is redacted even when it is the
    /// only dirty one (the error message, a note), and a clean exchange is left alone.
    /// `printf QK9 | sha256sum` = 601488f1.
    #[test]
    fn an_exchange_is_redacted_when_only_its_error_or_only_a_note_holds_a_secret() {
        use crate::trace::{Body, ExchangeError};
        let mut clean =
            crate::trace::test_exchange("POST", "/v1/messages", &[("host", "a")], b"{}");
        clean.error = Some(ExchangeError {
            kind: "upstream_error".into(),
            message: "connection refused".into(),
        });
        clean.notes.insert(
            "phase".into(),
            serde_json::json!({"step": "start", "n": [1, "two"]}),
        );
        assert!(exchange(&clean).is_none());
        let want = "GET /x?api_key=[redacted fp=601488f1]";
        let mut x = clean.clone();
        x.error.as_mut().unwrap().message = "GET /x?api_key=QK9".into();
        assert_eq!(exchange(&x).unwrap().error.unwrap().message, want);
        let mut x = clean.clone();
        x.notes
            .insert("upstream".into(), serde_json::json!("GET /x?api_key=QK9"));
        assert_eq!(exchange(&x).unwrap().notes["upstream"], want);
        let mut x = clean.clone();
        x.notes
            .insert("calls".into(), serde_json::json!([1, "GET /x?api_key=QK9"]));
        assert_eq!(exchange(&x).unwrap().notes["calls"][1], want);
        // The request target, the source's upstream and server URLs, a response header.
        let mut x = clean.clone();
        x.request.target = "/x?api_key=QK9".into();
        assert_eq!(exchange(&x).unwrap().request.target, &want[4..]);
        let mut x = clean.clone();
        x.source.upstream = Some("GET /x?api_key=QK9".into());
        assert_eq!(exchange(&x).unwrap().source.upstream.unwrap(), want);
        let mut x = clean.clone();
        x.source.server = Some("GET /x?api_key=QK9".into());
        assert_eq!(exchange(&x).unwrap().source.server.unwrap(), want);
        let mut x = clean.clone();
        x.response = Some(crate::trace::HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("set-cookie".into(), "QK9".into())].into(),
            body: Body::new(Vec::new()),
            chunks: Vec::new(),
            first_byte_at: None,
        });
        let r = exchange(&x).unwrap().response.unwrap();
        assert_eq!(r.headers[0].1, &want[15..]);
    }

    /// A recording context keeps what identifies the run (CLI, version, plain options,
    /// plain environment values, host) and hides the secrets in it: a secret option's
    /// value, a secret environment variable, URL userinfo. Fingerprints by `sha256sum`:
    /// `ab` fb8e20fc, `s3cret` 1ec1c26b, `u:pw` aa12c3c4 (the whole userinfo).
    #[test]
    fn a_password_in_a_target_without_a_scheme_is_redacted() {
        // Found by an adversarial test: `CONNECT alice:PASSWORDXYZ@api.anthropic.com:443`
        // reached the trace whole.
        for (text, secret, kept) in [
            (
                "alice:PASSWORDXYZ@api.anthropic.com:443",
                "PASSWORDXYZ",
                "@api.anthropic.com:443",
            ),
            (
                "cannot connect to bob:hunter2@db.internal:5432 (refused)",
                "hunter2",
                "cannot connect to [redacted fp=",
            ),
            ("proxy=carol:s3cret@[::1]:3128", "s3cret", "@[::1]:3128"),
        ] {
            let r = redact_text(text);
            assert!(!r.contains(secret), "{r}");
            assert!(r.contains(kept), "{r}");
            assert_eq!(redact_text(&r), r, "applied twice");
        }
        // Found by a second adversarial round: an empty user, a password holding `/` or
        // `@`, `//` without a scheme, a token as the whole userinfo of a URL.
        for (text, secret, kept) in [
            (
                ":EMPTYUSERPW1@api.anthropic.com:443",
                "EMPTYUSERPW1",
                "@api.anthropic.com:443",
            ),
            (
                "alice:PA/SSWORD2@api.anthropic.com:443",
                "SSWORD2",
                "@api.anthropic.com:443",
            ),
            (
                "alice:p@SSWORD3@api.anthropic.com:443",
                "SSWORD3",
                "@api.anthropic.com:443",
            ),
            (
                "//alice:TARGETPW7@h/v1/messages",
                "TARGETPW7",
                "//[redacted fp=",
            ),
            (
                "X-Proxy: :EMPTYUSER9@proxy:8080",
                "EMPTYUSER9",
                "@proxy:8080",
            ),
            ("https://u:pa/SLASHPW@host/p", "SLASHPW", "]@host/p"),
            ("https://TOKENUSER@host/p", "TOKENUSER", "]@host/p"),
            ("https://u:PW4@h/x@y", "PW4", "]@h/x@y"),
        ] {
            let r = redact_text(text);
            assert!(!r.contains(secret), "{text} -> {r}");
            assert!(r.contains(kept), "{text} -> {r}");
            assert_eq!(redact_text(&r), r, "applied twice");
        }
        // URLs whose path holds an `@` keep their host and path.
        for url in [
            "https://registry.npmjs.org/@anthropic-ai/claude-code",
            "http://localhost:4873/@anthropic-ai/claude-code",
        ] {
            assert_eq!(redact_text(url), url);
        }
        assert_eq!(
            redact_authority("TOKENONLYUSER123@api.anthropic.com:443"),
            format!("{}@api.anthropic.com:443", marker("TOKENONLYUSER123"))
        );
        assert_eq!(
            redact_authority("api.anthropic.com:443"),
            "api.anthropic.com:443"
        );
        // The second round: JSON pairs quoted in free text (a HAR comment, an error).
        let r = redact_text(
            r#"upstream said {"api_key": "JSONKEY1 x", "password":"JSONPW2", "model":"m"}"#,
        );
        assert!(!r.contains("JSONKEY1") && !r.contains("JSONPW2"), "{r}");
        assert!(
            r.contains(r#""api_key": "[redacted fp="#) && r.contains(r#""model":"m""#),
            "{r}"
        );
        assert_eq!(redact_text(&r), r, "applied twice");
        // An e-mail address and a URL's userinfo (its own rule) are not matched here.
        assert_eq!(
            redact_text("mail dana@example.com"),
            "mail dana@example.com"
        );
        let url = redact_text("https://erin:pw123456@h.example/x");
        assert!(
            url.starts_with("https://[redacted fp=") && url.ends_with("]@h.example/x"),
            "{url}"
        );
    }

    #[test]
    fn a_recording_context_keeps_the_run_and_hides_its_secrets() {
        let mut c = Context::new();
        c.cli = Some("claude-code".into());
        c.command = ["claude", "--api-key", "ab", "--model=opus"]
            .map(String::from)
            .to_vec();
        c.env.insert("HOME".into(), "/root".into());
        c.env.insert("MY_TOKEN".into(), "s3cret".into());
        c.base_url = Some("http://u:pw@127.0.0.1:9/".into());
        c.label = Some("nightly".into());
        let r = context(&c);
        assert_eq!(r.cli.as_deref(), Some("claude-code"));
        assert_eq!(
            r.command,
            [
                "claude",
                "--api-key",
                "[redacted fp=fb8e20fc]",
                "--model=opus"
            ]
        );
        assert_eq!(r.env["HOME"], "/root");
        assert_eq!(r.env["MY_TOKEN"], "[redacted fp=1ec1c26b]");
        assert_eq!(
            r.base_url.as_deref(),
            Some("http://[redacted fp=aa12c3c4]@127.0.0.1:9/")
        );
        assert_eq!(r.label.as_deref(), Some("nightly"));
    }
}
