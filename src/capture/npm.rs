//! Fetching npm-published CLIs: resolves a spec like `claude-code@2.1.304` to the native
//! package for this platform (`@anthropic-ai/claude-code-linux-x64@2.1.304`; Codex ships its
//! native builds as platform versions of its own package, `@openai/codex@0.171.0-linux-x64`,
//! with the binary under `vendor/TRIPLE/bin/codex`, measured on 0.165.0 and 0.171.0), downloads it
//! with the `npm` client (`npm pack`), verifies the tarball against the registry's
//! `dist.integrity` (SHA-512, Subresource Integrity format), and unpacks it into the user
//! cache directory, where later runs find it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use sha2::{Digest, Sha512};

/// Errors fetching a CLI.
#[derive(Debug, thiserror::Error)]
pub enum NpmError {
    /// A spec that is not `NAME@VERSION`, `NAME@TAG` or `NAME@A..B`.
    #[error("{spec:?} is not a CLI spec; use NAME@VERSION (claude-code@2.1.304), NAME@TAG (claude-code@latest) or, where a command takes several versions, NAME@A..B (claude-code@2.1.300..2.1.304)")]
    BadSpec {
        /// The spec as written.
        spec: String,
    },
    /// The registry knows no such dist-tag for the CLI.
    #[error("{package} has no dist-tag {tag:?} on the npm registry; its tags: {known}")]
    UnknownTag {
        /// The npm package asked.
        package: String,
        /// The tag asked.
        tag: String,
        /// The tags it has, listed.
        known: String,
    },
    /// No version was published between a range's ends.
    #[error("{spec:?}: no version of {package} published from {from} to {to}; list them with `npm view {package} versions`")]
    EmptyRange {
        /// The spec as written.
        spec: String,
        /// The npm package whose versions were listed.
        package: String,
        /// The range's first end.
        from: String,
        /// The range's last end.
        to: String,
    },
    /// A range given where one version is wanted.
    #[error("{spec:?} is a range, but this command takes one version; give NAME@VERSION or NAME@TAG (ranges work with `matrix --cli`)")]
    RangeNotAllowed {
        /// The spec as written.
        spec: String,
    },
    /// A CLI name agentwire does not know.
    #[error("unknown CLI {name:?}; known: claude-code, codex, gemini (or run any command with `agentwire record -- COMMAND`)")]
    UnknownCli {
        /// The name.
        name: String,
    },
    /// No native package of the CLI for this platform.
    #[error("no native package of this CLI for platform {platform} (claude-code: linux, darwin and win32 on x64 and arm64; codex: linux and darwin on x64 and arm64, win32-x64)")]
    Platform {
        /// This platform (`linux-x64`, …).
        platform: String,
    },
    /// Running `npm` failed.
    #[error("`npm {args}` failed: {detail} (is npm installed and the registry reachable?)")]
    Npm {
        /// Its arguments.
        args: String,
        /// Its error output, or what was wrong with its answer.
        detail: String,
    },
    /// The version is not published.
    #[error("{package} is not published on the npm registry; check the version (`npm view {} versions` lists them)", package_name(package))]
    NoSuchVersion {
        /// The package and version (`NAME@VERSION`).
        package: String,
    },
    /// A downloaded tarball does not match the registry's digest.
    #[error("integrity check failed for {package}: registry says {expected}, downloaded tarball is {actual}; the download was corrupted or tampered with — retry")]
    Integrity {
        /// The package and version.
        package: String,
        /// The registry's integrity string.
        expected: String,
        /// The downloaded tarball's.
        actual: String,
    },
    /// A tarball could not be unpacked.
    #[error("cannot unpack {package} into {dir}: {source}")]
    Unpack {
        /// The package and version.
        package: String,
        /// Where it was unpacked.
        dir: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An unpacked package lacks its executable.
    #[error("package {package} has no executable {binary}")]
    NoBinary {
        /// The package and version.
        package: String,
        /// The executable looked for.
        binary: String,
    },
}

/// `NAME` of `NAME@VERSION` (a scoped name keeps its leading `@`).
fn package_name(package: &str) -> &str {
    match package.rfind('@') {
        Some(i) if i > 0 => &package[..i],
        _ => package,
    }
}

/// A resolved CLI spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CliSpec {
    /// Short name, e.g. `claude-code`.
    pub name: String,
    /// Version, e.g. `2.1.304`.
    pub version: String,
    /// Platform, e.g. `linux-x64`.
    pub platform: String,
    /// npm package, e.g. `@anthropic-ai/claude-code-linux-x64`.
    pub package: String,
    /// The package's version to fetch: `version`, or a platform build of it
    /// (`0.171.0-linux-x64` for Codex).
    pub package_version: String,
    /// Executable inside the package, e.g. `claude`.
    pub binary: String,
    /// The npm dist-tag `version` was resolved from (`latest`), when the spec named one.
    pub tag: Option<String>,
}

/// This machine's platform in npm's naming (`linux-x64`, `darwin-arm64`, ...).
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        o => o,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        a => a,
    };
    let musl = if cfg!(target_env = "musl") {
        "-musl"
    } else {
        ""
    };
    format!("{os}-{arch}{musl}")
}

/// An exact semver version (`2.1.304`, `1.0.0-beta.2`): nothing that could name a path.
pub(crate) fn is_version(v: &str) -> bool {
    let (core, pre) = v.split_once('-').map_or((v, None), |(c, p)| (c, Some(p)));
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()))
        && pre.is_none_or(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        })
}

impl CliSpec {
    /// Parse `NAME@VERSION` (an exact version) for this platform. Dist-tags and ranges:
    /// [`super::versions::CliRequest`].
    pub fn parse(spec: &str) -> Result<CliSpec, NpmError> {
        let (name, version) = spec
            .rsplit_once('@')
            .filter(|(n, v)| !n.is_empty() && is_version(v))
            .ok_or_else(|| NpmError::BadSpec { spec: spec.into() })?;
        CliSpec::new(name, version)
    }

    /// The spec of CLI `name` (`claude-code`, or its alias `claude`) at exact `version`, for
    /// this platform. Errors: [`NpmError::UnknownCli`], [`NpmError::Platform`],
    /// [`NpmError::BadSpec`] for a version that is not exact semver.
    pub fn new(name: &str, version: &str) -> Result<CliSpec, NpmError> {
        if !is_version(version) {
            return Err(NpmError::BadSpec {
                spec: format!("{name}@{version}"),
            });
        }
        let platform = platform();
        match name {
            "claude-code" | "claude" => {
                if ![
                    "linux-x64",
                    "linux-arm64",
                    "darwin-x64",
                    "darwin-arm64",
                    "linux-x64-musl",
                    "linux-arm64-musl",
                    "win32-x64",
                ]
                .contains(&platform.as_str())
                {
                    return Err(NpmError::Platform { platform });
                }
                Ok(CliSpec {
                    name: "claude-code".into(),
                    version: version.into(),
                    package: format!("@anthropic-ai/claude-code-{platform}"),
                    package_version: version.into(),
                    binary: if platform.starts_with("win32") {
                        "claude.exe"
                    } else {
                        "claude"
                    }
                    .into(),
                    platform,
                    tag: None,
                })
            }
            "codex" => codex(version, platform),
            "gemini" | "gemini-cli" => Ok(CliSpec {
                name: "gemini".into(),
                version: version.into(),
                package: "@google/gemini-cli".into(),
                package_version: version.into(),
                // One bundled script for every platform (`bin` of its package.json),
                // run by the `node` on PATH (engines: node >= 20).
                binary: "bundle/gemini.js".into(),
                platform,
                tag: None,
            }),
            "opencode" => opencode(version, platform),
            _ => Err(NpmError::UnknownCli { name: name.into() }),
        }
    }

    /// `PACKAGE@VERSION`.
    pub fn package_spec(&self) -> String {
        format!("{}@{}", self.package, self.package_version)
    }
}

/// opencode's spec: the platform build `opencode-PLATFORM@VERSION` (the one the launcher
/// of `opencode-ai` picks), whose executable is `bin/opencode`.
fn opencode(version: &str, platform: String) -> Result<CliSpec, NpmError> {
    let npm_platform = match platform.as_str() {
        "win32-x64" => "windows-x64",
        "linux-x64" | "linux-arm64" | "darwin-x64" | "darwin-arm64" | "linux-x64-musl"
        | "linux-arm64-musl" => platform.as_str(),
        _ => return Err(NpmError::Platform { platform }),
    };
    Ok(CliSpec {
        name: "opencode".into(),
        version: version.into(),
        package: format!("opencode-{npm_platform}"),
        package_version: version.into(),
        binary: if platform.starts_with("win32") {
            "bin/opencode.exe"
        } else {
            "bin/opencode"
        }
        .into(),
        platform,
        tag: None,
    })
}

/// Codex's spec: the platform build `@openai/codex@VERSION-PLATFORM`, whose binary is
/// `vendor/TRIPLE/bin/codex` beside the helpers it starts (`codex-code-mode-host`, a
/// bundled `bwrap`), as Codex's own launcher `bin/codex.js` finds it.
fn codex(version: &str, platform: String) -> Result<CliSpec, NpmError> {
    let triple = match platform.as_str() {
        "linux-x64" | "linux-x64-musl" => "x86_64-unknown-linux-musl",
        "linux-arm64" | "linux-arm64-musl" => "aarch64-unknown-linux-musl",
        "darwin-x64" => "x86_64-apple-darwin",
        "darwin-arm64" => "aarch64-apple-darwin",
        "win32-x64" => "x86_64-pc-windows-msvc",
        _ => return Err(NpmError::Platform { platform }),
    };
    let npm_platform = platform.trim_end_matches("-musl").to_string();
    let exe = if platform.starts_with("win32") {
        "codex.exe"
    } else {
        "codex"
    };
    Ok(CliSpec {
        name: "codex".into(),
        version: version.into(),
        package: "@openai/codex".into(),
        package_version: format!("{version}-{npm_platform}"),
        binary: format!("vendor/{triple}/bin/{exe}"),
        platform,
        tag: None,
    })
}

/// Root of agentwire's cache: `$AGENTWIRE_CACHE_DIR`, else the user cache directory
/// (`~/.cache/agentwire` on Linux).
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("AGENTWIRE_CACHE_DIR") {
        return PathBuf::from(d);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("agentwire")
}

pub(crate) fn npm(args: &[&str]) -> Result<String, NpmError> {
    let out = Command::new("npm")
        .args(args)
        .output()
        .map_err(|e| NpmError::Npm {
            args: args.join(" "),
            detail: e.to_string(),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        return Err(NpmError::Npm {
            args: args.join(" "),
            detail: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// SRI string (`sha512-BASE64`) of a file.
fn sri_sha512(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha512::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(h.finalize())
    ))
}

/// Path of the CLI's executable, downloading and unpacking it first if it is not cached.
/// `progress` is called with status lines (for a spinner).
pub fn ensure(spec: &CliSpec, progress: &dyn Fn(&str)) -> Result<PathBuf, NpmError> {
    let dir = cache_root()
        .join("cli")
        .join(&spec.name)
        .join(&spec.version)
        .join(&spec.platform);
    let bin = dir.join(&spec.binary);
    if dir.join("integrity").is_file() && bin.is_file() {
        return Ok(bin);
    }
    let pkg = spec.package_spec();
    progress(&format!("resolving {pkg} on the npm registry"));
    let expected = npm(&["view", &pkg, "dist.integrity"])
        .map_err(|e| match e {
            NpmError::Npm { detail, .. } if detail.contains("E404") || detail.contains("404") => {
                NpmError::NoSuchVersion {
                    package: pkg.clone(),
                }
            }
            other => other,
        })?
        .trim()
        .to_string();
    if !expected.starts_with("sha512-") {
        return Err(NpmError::Npm {
            args: format!("view {pkg} dist.integrity"),
            detail: format!("no such version, or no integrity ({expected:?})"),
        });
    }
    let tmp = tempfile::Builder::new()
        .prefix("agentwire-npm-")
        .tempdir()
        .map_err(|e| unpack_err(&pkg, &dir, e))?;
    progress(&format!("downloading {pkg} with npm pack"));
    let dest = tmp.path().to_string_lossy().into_owned();
    let listing = npm(&["pack", &pkg, "--pack-destination", &dest, "--json"])?;
    let filename = serde_json::from_str::<serde_json::Value>(&listing)
        .ok()
        .and_then(|v| v[0]["filename"].as_str().map(str::to_string))
        .ok_or_else(|| NpmError::Npm {
            args: format!("pack {pkg}"),
            detail: "no filename in npm's JSON output".into(),
        })?;
    let tarball = tmp.path().join(filename);
    progress(&format!("verifying {pkg}"));
    let actual = sri_sha512(&tarball).map_err(|e| unpack_err(&pkg, &dir, e))?;
    if actual != expected {
        return Err(NpmError::Integrity {
            package: pkg,
            expected,
            actual,
        });
    }
    progress(&format!("unpacking {pkg}"));
    let staging = tmp.path().join("unpacked");
    let f = std::fs::File::open(&tarball).map_err(|e| unpack_err(&pkg, &dir, e))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(f));
    archive.set_preserve_permissions(true);
    archive
        .unpack(&staging)
        .map_err(|e| unpack_err(&pkg, &dir, e))?;
    let inner = staging.join("package");
    if !inner.join(&spec.binary).is_file() {
        return Err(NpmError::NoBinary {
            package: pkg,
            binary: spec.binary.clone(),
        });
    }
    make_executable(&inner.join(&spec.binary)).map_err(|e| unpack_err(&pkg, &dir, e))?;
    std::fs::write(inner.join("integrity"), &expected).map_err(|e| unpack_err(&pkg, &dir, e))?;
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|e| unpack_err(&pkg, &dir, e))?;
    }
    // Atomic publish: a concurrent run that got there first wins; its copy is identical.
    if let Err(e) = std::fs::rename(&inner, &dir) {
        if !bin.is_file() {
            return Err(unpack_err(&pkg, &dir, e));
        }
    }
    Ok(bin)
}

/// Mark a package's executable as such: a script's tarball entry (Gemini CLI's
/// `bundle/gemini.js`) need not carry the mode npm's installer gives a `bin`.
fn make_executable(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut p = std::fs::metadata(path)?.permissions();
        p.set_mode(p.mode() | 0o755);
        std::fs::set_permissions(path, p)?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

fn unpack_err(pkg: &str, dir: &Path, e: std::io::Error) -> NpmError {
    NpmError::Unpack {
        package: pkg.into(),
        dir: dir.display().to_string(),
        source: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_resolves_to_native_package() {
        let s = CliSpec::parse("claude-code@2.1.304").unwrap();
        assert_eq!(s.version, "2.1.304");
        assert_eq!(
            s.package,
            format!("@anthropic-ai/claude-code-{}", platform())
        );
        assert_eq!(s.package_spec(), format!("{}@2.1.304", s.package));
    }

    #[test]
    fn bad_specs_are_explained() {
        assert!(matches!(
            CliSpec::parse("claude-code"),
            Err(NpmError::BadSpec { .. })
        ));
        assert!(matches!(
            CliSpec::parse("vim@9.0.1"),
            Err(NpmError::UnknownCli { .. })
        ));
    }

    #[test]
    fn sri_matches_openssl() {
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), b"abc").unwrap();
        // `printf abc | openssl dgst -sha512 -binary | base64`
        assert_eq!(
            sri_sha512(f.path()).unwrap(),
            "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw=="
        );
    }
}
