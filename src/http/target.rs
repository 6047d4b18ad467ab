//! Request targets normalized once, before they are forwarded, re-sent or recorded: the
//! path's percent-encoded dots (`%2e`) decoded, backslashes read as `/` (as WHATWG URL
//! parsers do for http and https), and dot segments removed (RFC 3986 §5.2.4). A path
//! whose `..` would climb above its root is refused ([`TargetError`]): appended to an
//! upstream's base path (`http://host/prefix/`), it would leave that prefix — `/v1/../../admin`
//! once reached `host/admin` with the upstream's credentials.

/// Errors of target normalization.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The path climbs above its root.
    #[error("the request path {path:?} climbs above its root with `..` (dot segments, `%2e%2e` and `\\` count); it would leave the upstream's base path, so it was refused")]
    Escapes {
        /// The path as received.
        path: String,
    },
}

/// `path` (no query) normalized: `%2e`/`%2E` decoded to `.`, `\` to `/`, `.` and `..`
/// segments removed; always starts with `/`.
///
/// Errors: a `..` with nothing left to remove ([`TargetError::Escapes`]).
pub fn normalize_path(path: &str) -> Result<String, TargetError> {
    let decoded = decode_dots(path).replace('\\', "/");
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = decoded.split('/').collect();
    let last = segments.len().saturating_sub(1);
    // A trailing `.` or `..` leaves a trailing slash (RFC 3986 §5.2.4 step 2).
    let mut trailing = false;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => trailing = i == last,
            ".." => {
                if out.pop().is_none() {
                    return Err(TargetError::Escapes {
                        path: path.to_string(),
                    });
                }
                trailing = i == last;
            }
            "" if i == 0 => {}
            s => {
                out.push(s);
                trailing = false;
            }
        }
    }
    let mut s = String::with_capacity(decoded.len() + 1);
    for seg in &out {
        s.push('/');
        s.push_str(seg);
    }
    if trailing || s.is_empty() {
        s.push('/');
    }
    Ok(s)
}

/// `%2e` and `%2E` decoded (the only escapes that change how a path's segments read).
fn decode_dots(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find('%') {
        s.push_str(&rest[..i]);
        let esc = rest.get(i..i + 3);
        if esc.is_some_and(|e| e.eq_ignore_ascii_case("%2e")) {
            s.push('.');
            rest = &rest[i + 3..];
        } else {
            s.push('%');
            rest = &rest[i + 1..];
        }
    }
    s.push_str(rest);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_removed_and_escapes_refused() {
        let ok = |p: &str| normalize_path(p).unwrap();
        assert_eq!(ok("/v1/messages"), "/v1/messages");
        assert_eq!(ok("/v1/./x/../messages"), "/v1/messages");
        assert_eq!(ok("/v1/%2E%2e/v1/messages"), "/v1/messages");
        assert_eq!(ok("/v1\\..\\v2"), "/v2");
        assert_eq!(ok("/a/b/.."), "/a/");
        assert_eq!(ok(""), "/");
        assert_eq!(ok("/a//b"), "/a//b", "empty segments are not dot segments");
        assert_eq!(ok("/a%2fb"), "/a%2fb", "other escapes stay");
        for bad in [
            "/v1/../../admin/delete",
            "/%2e%2e/admin",
            "/v1\\..\\..\\admin",
            "/..",
        ] {
            assert!(normalize_path(bad).is_err(), "{bad}");
        }
    }
}
