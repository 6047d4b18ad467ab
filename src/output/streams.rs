//! Output paths that name the process's own standard output or standard error: `-`'s
//! other names (`/dev/stdout`, `/proc/self/fd/1`, the file a shell redirected it to) and
//! `/dev/stderr`'s. Such an output is written through the descriptor the process already
//! has (an appended log stays appended, its mode stays), never replaced by a renamed
//! temporary file, and, when it is a regular file, it is compared with the command's
//! inputs like any other output.

use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};

/// The standard stream (1: standard output, 2: standard error) whose open file `path`
/// names, compared by device and inode; `None` for any other path.
pub fn stream_of(path: &Path) -> Option<i32> {
    let m = std::fs::metadata(path).ok()?;
    [1, 2].into_iter().find(|&fd| open_file(fd) == Some(id(&m)))
}

/// The regular file behind descriptor `fd` (1 or 2), with its path where the system
/// tells it (Linux: `/proc/self/fd/N`); `None` for a terminal, pipe, device or closed
/// descriptor.
pub fn regular_file(fd: i32) -> Option<(Metadata, Option<PathBuf>)> {
    let link = PathBuf::from(format!("/proc/self/fd/{fd}"));
    let m = std::fs::metadata(&link).ok().filter(Metadata::is_file)?;
    let path = std::fs::read_link(&link).ok().filter(|p| p.is_absolute());
    Some((m, path))
}

/// A new descriptor of standard stream `fd` (1 or 2), sharing its offset and flags.
///
/// Errors: those of `dup(2)`.
pub fn dup(fd: i32) -> std::io::Result<File> {
    use std::os::fd::AsFd;
    let owned = if fd == 1 {
        std::io::stdout().as_fd().try_clone_to_owned()
    } else {
        std::io::stderr().as_fd().try_clone_to_owned()
    }?;
    Ok(File::from(owned))
}

#[cfg(unix)]
fn id(m: &Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn id(_: &Metadata) -> (u64, u64) {
    (u64::MAX, u64::MAX)
}

/// Device and inode of what descriptor `fd` has open (`None`: closed).
#[cfg(unix)]
fn open_file(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat only writes into `st`; a closed descriptor makes it fail.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    Some((st.st_dev as u64, st.st_ino as u64))
}

#[cfg(not(unix))]
fn open_file(_: i32) -> Option<(u64, u64)> {
    None
}
