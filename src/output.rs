//! Opening output files: the one policy every writer follows (traces, Parquet tables, the
//! matrix directory, agentwire's CA).
//!
//! - An existing output is never replaced unless the user passed `--force`
//!   ([`OutputError::Exists`] says so); a directory is never replaced.
//! - Commands check their inputs before they open an output, so a mistyped input path
//!   cannot cost an existing file.
//! - Batch outputs are written to a temporary file in the destination's directory and
//!   renamed over the destination only when complete ([`AtomicFile::commit`]); a failed
//!   run leaves the old file untouched and no partial one.
//! - Live recorders (`serve`, `capture`, `record`'s working trace) write in place instead
//!   ([`create_in_place`]), so a crash or `kill -9` keeps every exchange recorded so far.
//! - Files are created readable and writable by the owner only (mode 0600): traces hold
//!   request bodies, which may hold whatever a user pasted into a prompt.
//! - `-` as the main output path means standard output ([`is_stdout`]).

use std::fs::File;
use std::path::{Path, PathBuf};

/// Errors opening or completing an output file; each names the path and what to do.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output exists and `--force` was not given.
    #[error("{path} already exists; pass --force to overwrite it, or choose another output path")]
    Exists {
        /// The output path.
        path: String,
    },
    /// The output path is a file where a directory is expected (`--parquet DIR`, `matrix -d`).
    #[error(
        "{path} is a file; this output is a directory (created if missing): give a directory path"
    )]
    NotADirectory {
        /// The output path.
        path: String,
    },
    /// The output path is a directory where a file is expected.
    #[error("{path} is a directory; give a file path for this output")]
    IsDirectory {
        /// The output path.
        path: String,
    },
    /// The output is one of the command's inputs (even with `--force`).
    #[error("{path} is also an input of this command; writing it would destroy what is being read: choose another output path")]
    IsInput {
        /// The output path.
        path: String,
    },
    /// The file or its temporary sibling could not be created or written.
    #[error("cannot write {path}: {source} (check that the directory exists and is writable, and free space)")]
    Write {
        /// The output path.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> OutputError + '_ {
    move |source| OutputError::Write {
        path: path.display().to_string(),
        source,
    }
}

/// True when `path` is `-`, meaning standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Check that `path` may be written: it does not exist (or is an empty file), or `force`
/// is set. Standard output (`-`) always may.
///
/// Errors: [`OutputError::Exists`], [`OutputError::IsDirectory`].
pub fn check(path: &Path, force: bool) -> Result<(), OutputError> {
    if is_stdout(path) {
        return Ok(());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(OutputError::IsDirectory {
            path: path.display().to_string(),
        }),
        Ok(m) if m.len() > 0 && !force => Err(OutputError::Exists {
            path: path.display().to_string(),
        }),
        _ => Ok(()),
    }
}

/// Check that the output `path` is none of `inputs` (the same file, by device and inode,
/// under any name or link): `--force` replaces an earlier output, never the input a
/// command is reading. Inputs that do not exist, `-` and directories are skipped.
///
/// Errors: [`OutputError::IsInput`].
pub fn check_not_input<P: AsRef<Path>>(path: &Path, inputs: &[P]) -> Result<(), OutputError> {
    if is_stdout(path) {
        return Ok(());
    }
    let Ok(out) = std::fs::metadata(path) else {
        return Ok(()); // a new file cannot be an existing input
    };
    for input in inputs {
        let input = input.as_ref();
        if let Ok(m) = std::fs::metadata(input) {
            if m.is_file() && same_file(&out, &m) {
                return Err(OutputError::IsInput {
                    path: path.display().to_string(),
                });
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// Create (or, with `force`, truncate) `path` for a live recorder that writes in place,
/// mode 0600.
///
/// Errors: as [`check`], and [`OutputError::Write`].
pub fn create_in_place(path: &Path, force: bool) -> Result<File, OutputError> {
    check(path, force)?;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path).map_err(write_err(path))?;
    restrict(&f, path)?;
    Ok(f)
}

/// Make an existing file owner-only (a truncated older file keeps its old mode otherwise).
fn restrict(f: &File, path: &Path) -> Result<(), OutputError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(write_err(path))?;
    }
    #[cfg(not(unix))]
    let _ = (f, path);
    Ok(())
}

/// A file written to a temporary sibling and renamed over its destination on
/// [`commit`](AtomicFile::commit); dropped uncommitted, it disappears.
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    dest: PathBuf,
    force: bool,
}

impl AtomicFile {
    /// Start writing `dest` (checked with [`check`] first), mode 0600.
    ///
    /// Errors: as [`check`], and [`OutputError::Write`] when the temporary file cannot be
    /// created next to `dest`.
    pub fn create(dest: &Path, force: bool) -> Result<AtomicFile, OutputError> {
        check(dest, force)?;
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(write_err(dest))?;
        restrict(tmp.as_file(), dest)?;
        Ok(AtomicFile {
            tmp,
            dest: dest.to_path_buf(),
            force,
        })
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.tmp.as_file_mut()
    }

    /// The final path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flush to disk and rename over the destination. Without `force`, a file that
    /// appeared at the destination meanwhile is not replaced.
    ///
    /// Errors: [`OutputError::Write`], [`OutputError::Exists`].
    pub fn commit(self) -> Result<(), OutputError> {
        self.tmp
            .as_file()
            .sync_all()
            .map_err(write_err(&self.dest))?;
        let dest = self.dest;
        let r = if self.force {
            self.tmp.persist(&dest).map(|_| ())
        } else {
            // An empty placeholder (created by the user or a previous failed run) may go.
            if std::fs::metadata(&dest).is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = std::fs::remove_file(&dest);
            }
            self.tmp.persist_noclobber(&dest).map(|_| ())
        };
        r.map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                OutputError::Exists {
                    path: dest.display().to_string(),
                }
            } else {
                OutputError::Write {
                    path: dest.display().to_string(),
                    source: e.error,
                }
            }
        })
    }
}

impl std::io::Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn existing_outputs_need_force_and_failed_writes_leave_them() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.jsonl");
        std::fs::write(&p, b"old").unwrap();
        assert!(matches!(
            AtomicFile::create(&p, false),
            Err(OutputError::Exists { .. })
        ));
        let mut f = AtomicFile::create(&p, true).unwrap();
        f.write_all(b"new").unwrap();
        drop(f); // not committed: the old file stays, no temporary is left
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        let mut f = AtomicFile::create(&p, true).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(matches!(
            check(d.path(), true),
            Err(OutputError::IsDirectory { .. })
        ));
        assert!(check(Path::new("-"), false).is_ok());
    }
}
