//! A directory input: the files under it to read, in order, and the entries skipped with
//! why (not regular files, unreadable, links back up the tree).

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::trace::TraceError;

/// Files of a directory input to read (path, size in bytes) and entries skipped (path, why).
pub(super) type DirFiles = (VecDeque<(PathBuf, u64)>, Vec<(PathBuf, String)>);

/// What makes two paths one file (see [`file_id`]).
type FileId = (u64, u64, PathBuf);

/// The walk under one directory input.
struct Walk {
    since: Option<DateTime<Utc>>,
    /// Files found: path, size in bytes, identity.
    found: Vec<(PathBuf, u64, FileId)>,
    skipped: Vec<(PathBuf, String)>,
    seen_dirs: HashSet<FileId>,
    /// Directories still to read.
    stack: Vec<PathBuf>,
}

/// Every regular file under `dir`, sorted, with its size; subagent transcripts whose
/// session file exists are left to that session; files last written before `since` are
/// left out. Symbolic links are followed, but a directory or file reached twice (a link
/// back up the tree, two links to one file) is read once, and entries that are not
/// regular files (a FIFO would block forever, a socket or device is no trace) are
/// returned as skipped, with why.
///
/// Errors: [`TraceError::Open`] when `dir` itself cannot be read.
pub(super) fn dir_files(dir: &Path, since: Option<DateTime<Utc>>) -> Result<DirFiles, TraceError> {
    let open = |d: &Path, e| TraceError::Open {
        path: d.display().to_string(),
        source: e,
    };
    let root = std::fs::metadata(dir).map_err(|e| open(dir, e))?;
    let mut walk = Walk {
        since,
        found: Vec::new(),
        skipped: Vec::new(),
        seen_dirs: HashSet::from([file_id(dir, &root)]),
        stack: vec![dir.to_path_buf()],
    };
    while let Some(d) = walk.stack.pop() {
        // The top directory must read; a subdirectory that cannot is skipped and named,
        // like a file that cannot (a dangling symbolic link, no permission).
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) if d != dir => {
                let why = format!(
                    "{}: cannot read this directory ({e}); not read",
                    d.display()
                );
                walk.skipped.push((d.clone(), why));
                continue;
            }
            Err(e) => return Err(open(&d, e)),
        };
        for e in entries.flatten() {
            walk.entry(&e);
        }
    }
    // Sorted by path, one path per file: the first name in order wins.
    let Walk {
        mut found,
        mut skipped,
        ..
    } = walk;
    found.sort();
    let mut seen_files = HashSet::new();
    let files = found
        .into_iter()
        .filter(|(_, _, id)| seen_files.insert(id.clone()))
        .map(|(p, size, _)| (p, size))
        .collect();
    skipped.sort();
    Ok((files, skipped))
}

impl Walk {
    /// One directory entry: a directory to read (once), a file to read, or one skipped.
    fn entry(&mut self, e: &std::fs::DirEntry) {
        let p = e.path();
        let meta = match std::fs::metadata(&p) {
            Ok(meta) => meta,
            Err(err) => {
                let why = format!(
                    "{}: cannot read ({err}; a dangling symbolic link?); not read",
                    p.display()
                );
                self.skipped.push((p, why));
                return;
            }
        };
        if meta.is_dir() {
            if self.seen_dirs.insert(file_id(&p, &meta)) {
                self.stack.push(p);
            }
            return;
        }
        if !meta.is_file() {
            let why = format!(
                "{}: not a regular file (a FIFO, socket or device); not read",
                p.display()
            );
            self.skipped.push((p, why));
            return;
        }
        if is_session_subagent(&p) {
            return;
        }
        let modified = meta.modified().ok().map(DateTime::<Utc>::from);
        if let (Some(s), Some(m)) = (self.since, modified) {
            if m < s {
                return;
            }
        }
        self.found.push((p, meta.len(), file_id(&e.path(), &meta)));
    }
}

/// What makes two paths one file: device and inode.
#[cfg(unix)]
fn file_id(_: &Path, meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino(), PathBuf::new())
}

/// What makes two paths one file: the canonical path.
#[cfg(not(unix))]
fn file_id(p: &Path, _: &std::fs::Metadata) -> FileId {
    (
        0,
        0,
        std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf()),
    )
}

/// `<dir>/<session>/subagents/<file>` next to an existing `<dir>/<session>.jsonl`.
fn is_session_subagent(p: &Path) -> bool {
    let Some(sub) = p.parent() else { return false };
    if sub.file_name().is_none_or(|n| n != "subagents") {
        return false;
    }
    sub.parent()
        .is_some_and(|session| session.with_extension("jsonl").is_file())
}
