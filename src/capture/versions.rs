//! What a CLI spec names, resolved through the npm registry: `claude-code@2.1.304` (an
//! exact version), `claude-code@latest` (a dist-tag: the version the tag points at now) and,
//! where a command takes several versions, `claude-code@2.1.300..2.1.304` (every version
//! published for this platform from A to B, both included, in semver order; either end may
//! be a dist-tag: `claude-code@2.1.330..latest`).
//!
//! Dist-tags are read from the CLI's main package (`@anthropic-ai/claude-code`, what
//! `npm view @anthropic-ai/claude-code dist-tags` shows); ranges from the list of versions
//! of this platform's native package, because only those can run here.

use std::collections::BTreeMap;

use semver::Version;

use super::npm::{is_version, npm, CliSpec, NpmError};

/// One end of a request: an exact version or a dist-tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionReq {
    /// `2.1.304`.
    Exact(String),
    /// `latest`, `next`, `stable`.
    Tag(String),
}

/// A parsed `NAME@…` spec, before any registry look-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliRequest {
    /// The spec as written.
    pub written: String,
    /// CLI name as written (`claude-code`).
    pub name: String,
    /// First (or only) version.
    pub from: VersionReq,
    /// Last version of a range `A..B`; `None` for one version.
    pub to: Option<VersionReq>,
}

/// An npm dist-tag: a letter, then letters, digits, `.`, `_` or `-` (never a version, never
/// anything that could name a path or an option).
fn is_tag(t: &str) -> bool {
    t.len() <= 64
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-')
}

fn parse_req(spec: &str, v: &str) -> Result<VersionReq, NpmError> {
    if is_version(v) {
        Ok(VersionReq::Exact(v.into()))
    } else if is_tag(v) {
        Ok(VersionReq::Tag(v.into()))
    } else {
        Err(NpmError::BadSpec { spec: spec.into() })
    }
}

impl CliRequest {
    /// Parse `NAME@VERSION`, `NAME@TAG` or `NAME@A..B` (no network). Errors:
    /// [`NpmError::BadSpec`], [`NpmError::UnknownCli`].
    pub fn parse(spec: &str) -> Result<CliRequest, NpmError> {
        let bad = || NpmError::BadSpec { spec: spec.into() };
        let (name, rest) = spec
            .rsplit_once('@')
            .filter(|(n, r)| !n.is_empty() && !r.is_empty())
            .ok_or_else(bad)?;
        main_package(name)?;
        let (from, to) = match rest.split_once("..") {
            Some((a, b)) => (parse_req(spec, a)?, Some(parse_req(spec, b)?)),
            None => (parse_req(spec, rest)?, None),
        };
        Ok(CliRequest {
            written: spec.into(),
            name: name.into(),
            from,
            to,
        })
    }

    /// True for `NAME@A..B`.
    pub fn is_range(&self) -> bool {
        self.to.is_some()
    }

    /// The one version this spec names, asking the registry for a dist-tag. Errors:
    /// [`NpmError::RangeNotAllowed`] for a range, [`NpmError::UnknownTag`], registry
    /// errors ([`NpmError::Npm`]).
    pub fn resolve_one(&self) -> Result<CliSpec, NpmError> {
        if self.is_range() {
            return Err(NpmError::RangeNotAllowed {
                spec: self.written.clone(),
            });
        }
        self.resolve_end(&self.from, &mut None)
    }

    /// Every version this spec names: one for a version or tag, or each version of a range
    /// published for this platform, oldest first. Errors: as [`Self::resolve_one`], and
    /// [`NpmError::EmptyRange`] when no published version lies in the range.
    pub fn resolve_all(&self) -> Result<Vec<CliSpec>, NpmError> {
        let Some(to) = &self.to else {
            return Ok(vec![self.resolve_one()?]);
        };
        let mut tags = None;
        let (a, b) = (
            self.resolve_end(&self.from, &mut tags)?,
            self.resolve_end(to, &mut tags)?,
        );
        let (lo, hi) = (semver_of(&a.version), semver_of(&b.version));
        let published = list_versions(&a.package)?;
        let chosen = select_range(&published, &lo, &hi);
        if chosen.is_empty() {
            return Err(NpmError::EmptyRange {
                spec: self.written.clone(),
                package: a.package.clone(),
                from: a.version,
                to: b.version,
            });
        }
        chosen.iter().map(|v| CliSpec::new(&self.name, v)).collect()
    }

    /// Resolve one end; `tags` caches the registry's dist-tags across both ends.
    fn resolve_end(
        &self,
        req: &VersionReq,
        tags: &mut Option<BTreeMap<String, String>>,
    ) -> Result<CliSpec, NpmError> {
        match req {
            VersionReq::Exact(v) => CliSpec::new(&self.name, v),
            VersionReq::Tag(t) => {
                let package = main_package(&self.name)?;
                if tags.is_none() {
                    *tags = Some(dist_tags(package)?);
                }
                let known = tags.as_ref().expect("filled above");
                let v = known.get(t).ok_or_else(|| NpmError::UnknownTag {
                    package: package.into(),
                    tag: t.clone(),
                    known: known
                        .iter()
                        .map(|(k, v)| format!("{k} ({v})"))
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
                let mut spec = CliSpec::new(&self.name, v)?;
                spec.tag = Some(t.clone());
                Ok(spec)
            }
        }
    }
}

/// Resolve a spec naming one version: `NAME@VERSION` or `NAME@TAG`.
pub fn resolve(spec: &str) -> Result<CliSpec, NpmError> {
    CliRequest::parse(spec)?.resolve_one()
}

/// Resolve a spec naming one or several versions: `NAME@VERSION`, `NAME@TAG` or
/// `NAME@A..B`, oldest first (for commands that take several versions: `matrix`, a
/// version history).
pub fn resolve_range(spec: &str) -> Result<Vec<CliSpec>, NpmError> {
    CliRequest::parse(spec)?.resolve_all()
}

/// Every version `spec` names, oldest first within each item: `NAME@ITEM,ITEM,...` where
/// an item is a version, a dist-tag or a range `A..B` ([`resolve_range`]). A range keeps
/// every `step`-th version and always both ends (`step` 0 counts as 1); a version named
/// twice is kept once, where it first appears.
///
/// Errors: [`NpmError`] for a bad spec or item, and for registry failures.
pub fn expand(spec: &str, step: usize) -> Result<Vec<CliSpec>, NpmError> {
    expand_with(spec, step, resolve_range)
}

/// [`expand`] with `resolve` in place of the registry look-up of one `NAME@ITEM`.
fn expand_with(
    spec: &str,
    step: usize,
    resolve: impl Fn(&str) -> Result<Vec<CliSpec>, NpmError>,
) -> Result<Vec<CliSpec>, NpmError> {
    let step = step.max(1);
    let (name, list) = spec.rsplit_once('@').unwrap_or((spec, ""));
    let mut out: Vec<CliSpec> = Vec::new();
    for item in list.split(',') {
        let all = resolve(&format!("{name}@{item}"))?;
        let last = all.len().saturating_sub(1);
        for (k, s) in all.into_iter().enumerate() {
            let kept = k % step == 0 || k == last;
            if kept && !out.iter().any(|o| o.version == s.version) {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// The npm package carrying a CLI's dist-tags (`claude-code` → `@anthropic-ai/claude-code`).
fn main_package(name: &str) -> Result<&'static str, NpmError> {
    match name {
        "claude-code" | "claude" => Ok("@anthropic-ai/claude-code"),
        "codex" => Ok("@openai/codex"),
        "gemini" | "gemini-cli" => Ok("@google/gemini-cli"),
        "opencode" => Ok("opencode-ai"),
        _ => Err(NpmError::UnknownCli { name: name.into() }),
    }
}

/// A version already checked by [`is_version`].
fn semver_of(v: &str) -> Version {
    Version::parse(v).unwrap_or_else(|_| Version::new(0, 0, 0))
}

/// The versions of `published` from `lo` to `hi` (both included), in semver order.
/// Pre-releases (`2.1.0-beta.1`) are left out unless an end is itself a pre-release, as
/// npm's own ranges do.
pub fn select_range(published: &[String], lo: &Version, hi: &Version) -> Vec<String> {
    let with_pre = !lo.pre.is_empty() || !hi.pre.is_empty();
    let mut vs: Vec<Version> = published
        .iter()
        .filter_map(|v| Version::parse(v).ok())
        .filter(|v| v >= lo && v <= hi && (with_pre || v.pre.is_empty()))
        .collect();
    vs.sort();
    vs.dedup();
    vs.iter().map(Version::to_string).collect()
}

/// `npm view PACKAGE dist-tags --json`: tag → version.
fn dist_tags(package: &str) -> Result<BTreeMap<String, String>, NpmError> {
    let out = npm(&["view", package, "dist-tags", "--json"])?;
    serde_json::from_str(&out).map_err(|e| NpmError::Npm {
        args: format!("view {package} dist-tags --json"),
        detail: format!("unexpected output: {e}"),
    })
}

/// `npm view PACKAGE versions --json`: every published version (npm prints a bare string
/// when there is only one).
fn list_versions(package: &str) -> Result<Vec<String>, NpmError> {
    let out = npm(&["view", package, "versions", "--json"])?;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| NpmError::Npm {
        args: format!("view {package} versions --json"),
        detail: format!("unexpected output: {e}"),
    })?;
    Ok(match v {
        serde_json::Value::String(s) => vec![s],
        serde_json::Value::Array(a) => a
            .into_iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    #[test]
    fn specs_parse_into_versions_tags_and_ranges() {
        let r = CliRequest::parse("claude-code@latest").unwrap();
        assert_eq!(r.from, VersionReq::Tag("latest".into()));
        assert!(!r.is_range());
        let r = CliRequest::parse("claude-code@2.1.300..latest").unwrap();
        assert_eq!(r.from, VersionReq::Exact("2.1.300".into()));
        assert_eq!(r.to, Some(VersionReq::Tag("latest".into())));
        for bad in [
            "claude-code",
            "claude-code@",
            "claude-code@../x",
            "claude-code@2.1",
            "claude-code@2.1.1..",
            "claude-code@-rf",
            "@latest",
        ] {
            assert!(
                matches!(CliRequest::parse(bad), Err(NpmError::BadSpec { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            CliRequest::parse("vim@latest"),
            Err(NpmError::UnknownCli { .. })
        ));
        assert!(matches!(
            CliRequest::parse("claude-code@2.1.1..2.1.3")
                .unwrap()
                .resolve_one(),
            Err(NpmError::RangeNotAllowed { .. })
        ));
    }

    #[test]
    fn a_range_keeps_the_published_versions_between_its_ends_in_semver_order() {
        // npm lists in publication order; 2.1.10 > 2.1.9 numerically, not as text
        let published: Vec<String> = [
            "0.0.0",
            "2.1.9",
            "2.1.10",
            "2.1.8",
            "2.1.11-beta.1",
            "2.1.11",
            "2.1.12",
            "3.0.0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            select_range(&published, &v("2.1.9"), &v("2.1.11")),
            ["2.1.9", "2.1.10", "2.1.11"]
        );
        // an end that was never published still bounds the range
        assert_eq!(
            select_range(&published, &v("2.1.0"), &v("2.1.9")),
            ["2.1.8", "2.1.9"]
        );
        // pre-releases only when an end is one
        assert_eq!(
            select_range(&published, &v("2.1.11-beta.0"), &v("2.1.11")),
            ["2.1.11-beta.1", "2.1.11"]
        );
        // reversed ends select nothing
        assert!(select_range(&published, &v("2.1.12"), &v("2.1.9")).is_empty());
    }

    /// A stand-in for the registry: `NAME@A..B` over versions 2.1.A to 2.1.B, `NAME@N`
    /// for 2.1.N.
    fn fake_resolve(spec: &str) -> Result<Vec<CliSpec>, NpmError> {
        let (name, item) = spec.split_once('@').unwrap();
        let (lo, hi) = item.split_once("..").unwrap_or((item, item));
        let (lo, hi): (u32, u32) = (lo.parse().unwrap(), hi.parse().unwrap());
        Ok((lo..=hi)
            .map(|n| CliSpec::new(name, &format!("2.1.{n}")).unwrap())
            .collect())
    }

    fn versions(specs: &[CliSpec]) -> Vec<String> {
        specs.iter().map(|s| s.version.clone()).collect()
    }

    #[test]
    fn expand_keeps_every_step_th_version_of_a_range_and_both_ends_once() {
        let got = expand_with("claude-code@300..307", 3, fake_resolve).unwrap();
        assert_eq!(versions(&got), ["2.1.300", "2.1.303", "2.1.306", "2.1.307"]);
        // A list mixes ranges and versions; a version named twice is kept once, first.
        let got = expand_with("claude-code@305,300..302,301,310", 1, fake_resolve).unwrap();
        assert_eq!(
            versions(&got),
            ["2.1.305", "2.1.300", "2.1.301", "2.1.302", "2.1.310"]
        );
        // A step larger than the range keeps its ends.
        let got = expand_with("claude-code@300..304", 1000, fake_resolve).unwrap();
        assert_eq!(versions(&got), ["2.1.300", "2.1.304"]);
        assert_eq!(got[0].name, "claude-code");
    }
}
