//! Header diff: `anthropic-beta` as a set, `anthropic-version`, the user agent and the
//! client version it names, and every other header whose normalized value changed.
//!
//! Header names compare case-insensitively; repeated fields are joined with `, ` (RFC 9110
//! §5.3). `anthropic-beta` is compared as a set ([`BetaSet`]). A side recorded without
//! any header lines (a bare request body) has *unknown* headers: nothing is reported as
//! added, removed or changed against it.

use serde::Serialize;

use super::norm::Norm;
use crate::api::betas::{BetaSet, BETA_HEADER};
use crate::api::Dialect;

/// A header whose value differs.
#[derive(Clone, Debug, Serialize)]
pub struct HeaderChange {
    /// Lowercase name.
    pub name: String,
    /// Normalized value in A (`None`: absent).
    pub a: Option<String>,
    /// In B.
    pub b: Option<String>,
}

/// The header part of a diff.
#[derive(Clone, Debug, Serialize)]
pub struct HeadersDiff {
    /// False when A was recorded without header lines (a bare body): its headers and
    /// betas are unknown, and nothing is compared against them.
    pub a_known: bool,
    /// The same for B.
    pub b_known: bool,
    /// Betas in A, in order sent (`null`: unknown).
    pub a_betas: Option<Vec<String>>,
    /// Betas in B.
    pub b_betas: Option<Vec<String>>,
    /// Betas only in B.
    pub betas_added: Vec<String>,
    /// Betas only in A.
    pub betas_removed: Vec<String>,
    /// `anthropic-version` of A.
    pub a_version: Option<String>,
    /// Of B.
    pub b_version: Option<String>,
    /// `user-agent` of A.
    pub a_user_agent: Option<String>,
    /// Of B.
    pub b_user_agent: Option<String>,
    /// Client version from the user agent of A (`claude-cli/2.1.303 ...` → `2.1.303`).
    pub a_client_version: Option<String>,
    /// Of B.
    pub b_client_version: Option<String>,
    /// Other headers whose normalized value differs, by name.
    pub changed: Vec<HeaderChange>,
    /// The headers the betas were read from, as reports name them (`anthropic-beta`;
    /// `openai-beta, x-codex-beta-features` for the OpenAI dialects).
    #[serde(skip)]
    pub beta_headers: &'static str,
    /// The API-version header of the dialect, if it has one (`anthropic-version`).
    #[serde(skip)]
    pub version_header: Option<&'static str>,
}

impl HeadersDiff {
    /// True when betas, version, user agent and all other headers are the same (or one
    /// side's headers are unknown).
    pub fn identical(&self) -> bool {
        if !(self.a_known && self.b_known) {
            return true;
        }
        self.betas_added.is_empty()
            && self.betas_removed.is_empty()
            && self.a_version == self.b_version
            && self.a_user_agent == self.b_user_agent
            && self.changed.is_empty()
    }
}

fn get(h: &[(String, String)], name: &str) -> Option<String> {
    let vals: Vec<&str> = h
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
        .collect();
    (!vals.is_empty()).then(|| vals.join(", "))
}

/// Client version from a user agent: the first `/`-separated token's version
/// (`claude-cli/2.1.304 (external, sdk-cli)` → `2.1.304`).
pub fn client_version(ua: &str) -> Option<String> {
    let first = ua.split_whitespace().next()?;
    let (_, v) = first.split_once('/')?;
    (!v.is_empty()).then(|| v.to_string())
}

/// Diff two header lists of requests of `dialect` (A's).
pub(crate) fn diff_headers(
    a: &[(String, String)],
    b: &[(String, String)],
    dialect: Dialect,
    norm: &mut Norm,
) -> HeadersDiff {
    let (sa, sb) = (
        BetaSet::from_headers_of(dialect, a),
        BetaSet::from_headers_of(dialect, b),
    );
    let (beta_headers, version_header) = match dialect {
        Dialect::Messages => (BETA_HEADER, Some("anthropic-version")),
        Dialect::Responses | Dialect::ChatCompletions => {
            ("openai-beta, x-codex-beta-features", None)
        }
        Dialect::Gemini => ("(none)", None),
    };
    let special: Vec<&str> = [BETA_HEADER, "anthropic-version", "user-agent"]
        .into_iter()
        .chain(beta_headers.split(", "))
        .collect();
    let (a_known, b_known) = (sa.known, sb.known);
    let betas_added = sa.added_in(&sb);
    let betas_removed = sb.added_in(&sa);
    let mut names: Vec<String> = Vec::new();
    for (k, _) in a.iter().chain(b.iter()) {
        let k = k.to_ascii_lowercase();
        if !special.contains(&k.as_str()) && !names.contains(&k) {
            names.push(k);
        }
    }
    let mut changed = Vec::new();
    for n in names.into_iter().filter(|_| a_known && b_known) {
        let va = get(a, &n).map(|v| norm.header_a(&n, &v));
        let vb = get(b, &n).map(|v| norm.header_b(&n, &v));
        if va != vb {
            changed.push(HeaderChange {
                name: n,
                a: va,
                b: vb,
            });
        }
    }
    let (ua_a, ua_b) = (get(a, "user-agent"), get(b, "user-agent"));
    HeadersDiff {
        a_known,
        b_known,
        a_betas: a_known.then_some(sa.names),
        b_betas: b_known.then_some(sb.names),
        betas_added,
        betas_removed,
        a_version: get(a, "anthropic-version"),
        b_version: get(b, "anthropic-version"),
        a_client_version: ua_a.as_deref().and_then(client_version),
        b_client_version: ua_b.as_deref().and_then(client_version),
        a_user_agent: ua_a,
        b_user_agent: ua_b,
        changed,
        beta_headers,
        version_header,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::normalize::Normalizer;
    use crate::trace::test_headers as h;

    #[test]
    fn betas_as_sets_and_volatile_headers_ignored() {
        let a = h(&[
            ("anthropic-beta", "x-1,y-2"),
            ("User-Agent", "claude-cli/2.1.303 (external, sdk-cli)"),
            ("Content-Length", "100"),
            (
                "X-Claude-Code-Session-Id",
                "9ffd38f7-d97d-4a3c-b0b0-8838467b971a",
            ),
            ("X-Gone", "1"),
        ]);
        let b = h(&[
            ("anthropic-beta", "y-2, z-3"),
            ("user-agent", "claude-cli/2.1.304 (external, sdk-cli)"),
            ("content-length", "200"),
            (
                "x-claude-code-session-id",
                "2d7ec88f-7e19-46dd-9430-a15c8abe1fec",
            ),
        ]);
        let n = Normalizer::defaults();
        let mut norm = Norm::new(&n);
        let d = diff_headers(&a, &b, Dialect::Messages, &mut norm);
        assert_eq!(d.betas_added, ["z-3"]);
        assert_eq!(d.betas_removed, ["x-1"]);
        assert_eq!(d.a_client_version.as_deref(), Some("2.1.303"));
        assert_eq!(d.b_client_version.as_deref(), Some("2.1.304"));
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].name, "x-gone");
        assert!(!d.identical());
    }

    #[test]
    fn a_bare_body_side_has_unknown_headers_never_removed_betas() {
        let a = h(&[
            ("anthropic-beta", "x-1,y-2"),
            ("user-agent", "claude-cli/2.1.304"),
        ]);
        let n = Normalizer::defaults();
        let d = diff_headers(&a, &[], Dialect::Messages, &mut Norm::new(&n));
        assert!(d.betas_removed.is_empty() && d.betas_added.is_empty());
        assert!(d.changed.is_empty());
        assert_eq!((d.a_known, d.b_known), (true, false));
        assert_eq!(d.b_betas, None);
        assert!(d.identical());
    }
}
