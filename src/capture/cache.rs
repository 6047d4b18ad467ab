//! agentwire's caches on disk: downloaded CLIs (`cli/NAME/VERSION/PLATFORM`, written by
//! [`super::npm::ensure`]) and recordings (`recordings/NAME/VERSION/ROUTE-KEY.jsonl`,
//! written by `history`), both under [`super::npm::cache_root`]. A recording's key is a
//! hash of everything that shapes it besides version and route: the environment changes
//! and the CLI arguments, so a re-run with the same settings finds it and records nothing.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::npm::{cache_root, CliSpec};
use super::route::Route;

/// Where the recording of `spec` with `route`, `env` and `args` is cached.
pub fn recording_path(
    spec: &CliSpec,
    route: Route,
    env: &[(String, Option<String>)],
    args: &[String],
) -> PathBuf {
    let mut env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_deref().unwrap_or("\u{0}unset")))
        .collect();
    env.sort();
    let mut h = Sha256::new();
    for e in &env {
        h.update(e.as_bytes());
        h.update([0]);
    }
    h.update([1]);
    for a in args {
        h.update(a.as_bytes());
        h.update([0]);
    }
    let key = hex::encode(&h.finalize()[..6]);
    cache_root()
        .join("recordings")
        .join(&spec.name)
        .join(&spec.version)
        .join(format!("{}-{}-{key}.jsonl", route.name(), spec.platform))
}

/// Semver order of a cached version directory's name (`2.1.9` < `2.1.10`); names that
/// are not versions sort first.
fn version_order(v: &str) -> Option<semver::Version> {
    semver::Version::parse(v).ok()
}

/// One cache entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `cli` or `recording`.
    pub kind: &'static str,
    /// CLI name (`claude-code`).
    pub name: String,
    /// Version.
    pub version: String,
    /// Platform (CLIs) or file name (recordings).
    pub detail: String,
    /// Path on disk.
    pub path: PathBuf,
    /// Size on disk, bytes.
    pub bytes: u64,
}

fn size(p: &Path) -> u64 {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => std::fs::read_dir(p)
            .map(|d| d.flatten().map(|e| size(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// The entries of directory `p`, sorted; symbolic links among them only with `links`
/// (a linked name or version directory is never entered: what `prune` deletes stays
/// inside the cache, never reached through a link).
fn children(p: &Path, links: bool) -> Vec<(String, PathBuf)> {
    let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(p)
        .map(|d| {
            d.flatten()
                .filter(|e| links || !e.file_type().is_ok_and(|t| t.is_symlink()))
                .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every cached CLI and recording, by kind, name and version (oldest first).
pub fn list() -> Vec<Entry> {
    let root = cache_root();
    let mut out = Vec::new();
    for (kind, sub) in [("cli", "cli"), ("recording", "recordings")] {
        for (name, np) in children(&root.join(sub), false) {
            let mut versions = children(&np, false);
            versions.sort_by_key(|(v, _)| version_order(v));
            for (version, vp) in versions {
                for (detail, path) in children(&vp, true) {
                    if detail.ends_with(".tmp") {
                        continue;
                    }
                    out.push(Entry {
                        kind,
                        name: name.clone(),
                        version: version.clone(),
                        bytes: size(&path),
                        detail,
                        path,
                    });
                }
            }
        }
    }
    out
}

/// Remove cache entries of `kind` (`None`: both), keeping for each CLI name the newest
/// `keep` versions; with `dry_run` nothing is removed. Returns the entries removed (or
/// that would be).
///
/// Errors: an entry that cannot be removed (permissions).
pub fn prune(kind: Option<&str>, keep: usize, dry_run: bool) -> std::io::Result<Vec<Entry>> {
    let all = list();
    let mut removed = Vec::new();
    for e in &all {
        if kind.is_some_and(|k| k != e.kind) {
            continue;
        }
        let mut versions: Vec<&str> = all
            .iter()
            .filter(|x| x.kind == e.kind && x.name == e.name)
            .map(|x| x.version.as_str())
            .collect();
        versions.sort_by_key(|v| version_order(v));
        versions.dedup();
        let newest: Vec<&str> = versions.iter().rev().take(keep).copied().collect();
        if newest.contains(&e.version.as_str()) {
            continue;
        }
        if !dry_run {
            // A link is removed as a link (its target stays); a directory's removal does
            // not follow the links inside it.
            let named = |err: std::io::Error| {
                std::io::Error::new(err.kind(), format!("{}: {err}", e.path.display()))
            };
            let meta = std::fs::symlink_metadata(&e.path).map_err(named)?;
            if meta.is_dir() {
                std::fs::remove_dir_all(&e.path).map_err(named)?;
            } else {
                std::fs::remove_file(&e.path).map_err(named)?;
            }
            if let Some(parent) = e.path.parent() {
                // The version directory goes when it is empty.
                let _ = std::fs::remove_dir(parent);
            }
        }
        removed.push(e.clone());
    }
    Ok(removed)
}
