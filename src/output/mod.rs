//! Opening output files: the one policy every writer follows (traces, Parquet tables, the
//! matrix directory, agentwire's CA).
//!
//! - An existing output is never replaced unless the user passed `--force`
//!   ([`OutputError::Exists`] says so); a directory is never replaced.
//! - Commands check their inputs before they open an output, so a mistyped input path
//!   cannot cost an existing file.
//! - Batch outputs are written to a temporary file in the destination's directory and
//!   renamed over the destination only when complete ([`AtomicFile::commit`]); a failed
//!   run leaves the old file untouched and no partial one. A symbolic link is written
//!   through (its target replaced, the link kept); a device or FIFO (`/dev/null`, a named
//!   pipe) is written to directly, never replaced, and keeps its mode.
//! - Live recorders (`serve`, `capture`, `record`'s working trace) write in place instead
//!   ([`create_in_place`]), so a crash or `kill -9` keeps every exchange recorded so far.
//! - Large batch outputs (traces) are written past the page cache where the file system
//!   allows it ([`AtomicFile::direct`]).
//! - Files are created readable and writable by the owner only (mode 0600): traces hold
//!   request bodies, which may hold whatever a user pasted into a prompt.
//! - `-` as the main output path means standard output ([`is_stdout`]).
//! - SIGINT, SIGTERM and SIGHUP remove the temporary files of uncommitted outputs before
//!   the process ends ([`cleanup`]).

pub mod cleanup;
mod direct;
mod private;
mod streams;

use std::fs::File;
use std::path::{Path, PathBuf};

use direct::Direct;
pub use private::create_private_dir;

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
    /// The output lies inside a directory given as an input: this run or the next would
    /// read it back as one of its inputs (even with `--force`).
    #[error("{path} is inside {dir}, an input directory of this command, which would read it back as an input: write it outside {dir}")]
    InsideInput {
        /// The output path.
        path: String,
        /// The input directory.
        dir: String,
    },
    /// The file or its temporary sibling could not be created or written.
    #[error("cannot write {path}: {source} ({})", write_hint(.source))]
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

/// What to do about a failed write, by its cause (the end of every write error's
/// message: one wording for every output).
pub fn write_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => "free some space, or write elsewhere",
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "check the permissions of the file and its directory"
        }
        Some(libc::EROFS) => "the file system is read-only: write elsewhere",
        Some(libc::ENAMETOOLONG) => "choose a shorter name",
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => "check that the directory exists",
        Some(libc::ELOOP) => "the path runs into a loop of symbolic links: fix or remove them",
        Some(libc::EPIPE) => "the reader went away",
        _ => "check the path, its permissions and free space",
    }
}

/// True when `path` means standard output: `-`, or a name of the file standard output
/// already is (`/dev/stdout`, `/proc/self/fd/1`, the file a shell redirected it to),
/// which is then written as standard output is, never replaced.
pub fn is_stdout(path: &Path) -> bool {
    stream(path) == Some(1)
}

/// True when `path` is written as it is and never replaced: standard output or standard
/// error under any name, a device or a FIFO. Such an output has no directory of its own
/// to put working files in.
pub fn writes_through(path: &Path) -> bool {
    stream(path).is_some() || resolve(path).is_ok_and(|p| is_special(&p))
}

/// The standard stream `path` means (1 for `-`), if any ([`streams::stream_of`]).
fn stream(path: &Path) -> Option<i32> {
    if path.as_os_str() == "-" {
        return Some(1);
    }
    streams::stream_of(path)
}

/// Check that `path` may be written: it does not exist (or is an empty file), or `force`
/// is set. Standard output (`-`) always may.
///
/// Errors: [`OutputError::Exists`], [`OutputError::IsDirectory`].
pub fn check(path: &Path, force: bool) -> Result<(), OutputError> {
    if stream(path).is_some() {
        return Ok(());
    }
    // `out.jsonl/`, `out.jsonl/.` and `x/..` name directories, whatever exists there now.
    let raw = path.as_os_str().as_encoded_bytes();
    let names_dir =
        [&b"/"[..], b"/.", b"/.."].iter().any(|e| raw.ends_with(e)) || raw == b"." || raw == b"..";
    if names_dir {
        return Err(OutputError::IsDirectory {
            path: path.display().to_string(),
        });
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
/// under any name or link) and lies in none of the input directories (whose walk would
/// read it back, in this run or the next): `--force` replaces an earlier output, never
/// an input. Inputs that do not exist and `-` are skipped.
///
/// Errors: [`OutputError::IsInput`], [`OutputError::InsideInput`].
pub fn check_not_input<P: AsRef<Path>>(path: &Path, inputs: &[P]) -> Result<(), OutputError> {
    // The file the output lands in, and the directories it is in: for a standard stream,
    // the file the shell opened for it (a terminal or pipe cannot be read back); for any
    // other path the path as given and, links followed, where it leads.
    let parent = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf()
    };
    let (out, dirs, shown): (Option<std::fs::Metadata>, Vec<PathBuf>, String) = match stream(path) {
        Some(fd) => match streams::regular_file(fd) {
            Some((m, p)) => {
                let which = if fd == 1 {
                    "standard output"
                } else {
                    "standard error"
                };
                let shown = match &p {
                    Some(p) => format!("{} ({which})", p.display()),
                    None => which.to_string(),
                };
                (Some(m), p.iter().map(|p| parent(p)).collect(), shown)
            }
            None => return Ok(()),
        },
        None => (
            std::fs::metadata(path).ok(),
            // (the path itself too: an output directory, such as `--parquet DIR`)
            vec![path.to_path_buf(), parent(path), parent(&resolve(path)?)],
            path.display().to_string(),
        ),
    };
    for input in inputs {
        let input = input.as_ref();
        let Ok(m) = std::fs::metadata(input) else {
            continue;
        };
        if m.is_file() && out.as_ref().is_some_and(|o| same_file(o, &m)) {
            return Err(OutputError::IsInput { path: shown });
        }
        if m.is_dir() && dirs.iter().any(|d| is_within(d, &m)) {
            return Err(OutputError::InsideInput {
                path: shown,
                dir: input.display().to_string(),
            });
        }
    }
    Ok(())
}

/// True when directory `d` is the directory `dir` or lies below it, compared by device
/// and inode up the chain of parents (so a link or a bind mount cannot hide it).
fn is_within(d: &Path, dir: &std::fs::Metadata) -> bool {
    let Ok(mut p) = std::fs::canonicalize(d) else {
        return false;
    };
    loop {
        if std::fs::metadata(&p).is_ok_and(|m| same_file(&m, dir)) {
            return true;
        }
        if !p.pop() {
            return false;
        }
    }
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
    // Standard error under a name: its own descriptor, not a truncated reopening.
    if let Some(fd) = streams::stream_of(path) {
        return streams::dup(fd).map_err(write_err(path));
    }
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
/// Only regular files: a device or FIFO the user named (`/dev/null`) keeps its mode.
fn restrict(f: &File, path: &Path) -> Result<(), OutputError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if f.metadata().is_ok_and(|m| m.is_file()) {
            f.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(write_err(path))?;
        }
    }
    #[cfg(not(unix))]
    let _ = (f, path);
    Ok(())
}

/// Bytes of the destination's name kept in its temporary sibling's name (255 at most in
/// all: the dots, 6 random characters and `.tmp` take 12).
const TEMP_NAME_KEEP: usize = 200;

/// Most symbolic links followed from an output path (Linux's own limit, `path_resolution(7)`).
const MAX_LINKS: usize = 40;

/// What an output path names once links are followed: a symbolic link is replaced through
/// (its target is the output, the links stay), a chain of links to its end; anything
/// else is itself.
///
/// Errors: [`OutputError::Write`] (`ELOOP`) for a loop of links or a chain longer than 40.
fn resolve(dest: &Path) -> Result<PathBuf, OutputError> {
    let mut p = dest.to_path_buf();
    for _ in 0..MAX_LINKS {
        let is_link = std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            return Ok(p);
        }
        if let Ok(real) = std::fs::canonicalize(&p) {
            return Ok(real);
        }
        // A dangling link: its target, relative to the link's directory.
        let t = std::fs::read_link(&p).map_err(write_err(dest))?;
        p = match p.parent() {
            Some(d) if !t.is_absolute() => d.join(&t),
            _ => t,
        };
    }
    Err(OutputError::Write {
        path: dest.display().to_string(),
        source: std::io::Error::from_raw_os_error(libc::ELOOP),
    })
}

/// True when `path` exists and is not a regular file or directory (a character or block
/// device, a FIFO, a socket): written to as it is, never replaced.
fn is_special(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// A file written to a temporary sibling and renamed over its destination on
/// [`commit`](AtomicFile::commit); dropped uncommitted, it disappears. A destination that
/// is a symbolic link is written through (the link's target is replaced, the link stays);
/// one that is a device or FIFO (`/dev/null`, a named pipe) is written directly: renaming
/// a file over it would destroy it.
pub struct AtomicFile {
    out: Out,
    dest: PathBuf,
    force: bool,
    /// Bytes written through [`Write`](std::io::Write) since writeback was last started.
    unsynced: u64,
    /// Set by [`AtomicFile::direct`]: writes collect in an aligned buffer and go to the
    /// disk past the page cache.
    direct: Option<Box<Direct>>,
    /// Removes the temporary file on SIGINT, SIGTERM or SIGHUP until dropped (after `out`).
    _pending: Option<cleanup::Pending>,
}

/// Bytes written between two requests to start writing back (see [`start_writeback`]).
const WRITEBACK_EVERY: u64 = 32 << 20;

/// Ask the kernel to start writing `file`'s dirty pages to disk now, without waiting
/// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)` over the whole file; elsewhere
/// nothing). A large output is then mostly on disk when [`AtomicFile::commit`]'s `fsync`
/// runs: on a 1 GB trace that wait was 0.36 s of a 2.1 s run. Failures are ignored: the
/// `fsync` still decides.
fn start_writeback(file: &File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid open descriptor; the call only schedules I/O on it.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

enum Out {
    Temp(tempfile::NamedTempFile),
    Direct(File),
}

impl AtomicFile {
    /// Start writing `dest` (checked with [`check`] first), mode 0600.
    ///
    /// Errors: as [`check`], and [`OutputError::Write`] when the temporary file cannot be
    /// created next to `dest` (or a device or FIFO cannot be opened for writing).
    pub fn create(dest: &Path, force: bool) -> Result<AtomicFile, OutputError> {
        check(dest, force)?;
        let real = resolve(dest)?;
        let stream = streams::stream_of(dest);
        if stream.is_some() || is_special(&real) {
            let f = match stream {
                // A standard stream's own descriptor: an appended log stays appended.
                Some(fd) => streams::dup(fd),
                None => std::fs::OpenOptions::new().write(true).open(&real),
            }
            .map_err(write_err(dest))?;
            return Ok(AtomicFile {
                out: Out::Direct(f),
                dest: dest.to_path_buf(),
                force,
                unsynced: 0,
                direct: None,
                _pending: None,
            });
        }
        let dir = match real.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let name = real
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `.NAME.XXXXXX.tmp` must stay within the 255 bytes a file name may have.
        let mut cut = name.len().min(TEMP_NAME_KEEP);
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        let registering = cleanup::hold();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", &name[..cut]))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(write_err(dest))?;
        restrict(tmp.as_file(), dest)?;
        Ok(AtomicFile {
            _pending: Some(registering.file(tmp.path())),
            out: Out::Temp(tmp),
            dest: real,
            force,
            unsynced: 0,
            direct: None,
        })
    }

    /// Write past the page cache (Linux `O_DIRECT`, from aligned 4 MiB buffers, on a
    /// thread of its own) where the file system allows it: for large outputs written
    /// once (a trace from `pcap`), whose pages would otherwise cost kernel time to cache
    /// and be written back anyway by the `fsync` of [`AtomicFile::commit`]. Elsewhere,
    /// and for a device or FIFO, nothing changes. Up to 12 MiB of buffers are used.
    pub fn direct(mut self) -> Self {
        if let Out::Temp(t) = &self.out {
            self.direct = Direct::open(t.as_file()).map(Box::new);
        }
        self
    }

    /// Cut the output back to its first `len` bytes (after a failed write, so that the
    /// next write starts on a clean line); later writes go on from there.
    ///
    /// Errors: those of `ftruncate(2)` and `lseek(2)`.
    pub fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        use std::io::Seek;
        let (file, direct) = self.parts();
        match direct {
            Some(d) => d.truncate(file, len),
            None => {
                file.set_len(len)?;
                file.seek(std::io::SeekFrom::Start(len)).map(|_| ())
            }
        }
    }

    /// The open temporary file (or the device or FIFO itself), and the direct-I/O
    /// buffer in front of it, if any.
    fn parts(&mut self) -> (&mut File, Option<&mut Direct>) {
        let file = match &mut self.out {
            Out::Temp(t) => t.as_file_mut(),
            Out::Direct(f) => f,
        };
        (file, self.direct.as_deref_mut())
    }

    /// The final path (a link's target once links are followed).
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flush to disk and rename over the destination. Without `force`, a file that
    /// appeared at the destination meanwhile is not replaced. A device or FIFO was
    /// written directly: nothing is renamed.
    ///
    /// Errors: [`OutputError::Write`], [`OutputError::Exists`].
    pub fn commit(mut self) -> Result<(), OutputError> {
        if let (_, Some(d)) = self.parts() {
            d.flush().map_err(write_err(&self.dest))?;
        }
        let tmp = match self.out {
            Out::Direct(mut f) => {
                return std::io::Write::flush(&mut f).map_err(write_err(&self.dest));
            }
            Out::Temp(t) => t,
        };
        tmp.as_file().sync_all().map_err(write_err(&self.dest))?;
        let dest = self.dest;
        let r = if self.force {
            tmp.persist(&dest).map(|_| ())
        } else {
            // An empty placeholder (created by the user or a previous failed run) may go.
            if std::fs::metadata(&dest).is_ok_and(|m| m.is_file() && m.len() == 0) {
                let _ = std::fs::remove_file(&dest);
            }
            tmp.persist_noclobber(&dest).map(|_| ())
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
        if let (_, Some(d)) = self.parts() {
            d.write(buf)?;
            return Ok(buf.len());
        }
        let n = self.parts().0.write(buf)?;
        self.unsynced += n as u64;
        if self.unsynced >= WRITEBACK_EVERY {
            self.unsynced = 0;
            if let Out::Temp(t) = &self.out {
                start_writeback(t.as_file());
            }
        }
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self.parts() {
            (_, Some(d)) => d.flush(),
            (file, None) => file.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_past_the_writeback_step_is_written_whole_and_in_order() {
        // 40 MiB in 1 MiB writes: writeback is started once past 32 MiB, mid-file.
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("big.jsonl");
        let mut f = AtomicFile::create(&dest, false).unwrap();
        for k in 0..40u8 {
            f.write_all(&vec![b'a' + (k % 26); 1 << 20]).unwrap();
        }
        f.commit().unwrap();
        let got = std::fs::read(&dest).unwrap();
        assert_eq!(got.len(), 40 << 20);
        for k in 0..40usize {
            assert!(got[k << 20..(k + 1) << 20]
                .iter()
                .all(|&b| b == b'a' + (k % 26) as u8));
        }
    }

    #[test]
    fn a_direct_output_of_several_buffers_and_odd_lines_is_written_whole_and_in_order() {
        // 3.5 buffers of lines of 1..=9,999 bytes: no line ends on a block edge by design.
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("direct.jsonl");
        let mut f = AtomicFile::create(&dest, false).unwrap().direct();
        let mut want = Vec::new();
        let mut k = 0usize;
        while want.len() < direct::CHUNK * 7 / 2 {
            k += 1;
            let line: Vec<u8> = (0..k % 9_999 + 1)
                .map(|i| b'a' + ((i + k) % 26) as u8)
                .collect();
            f.write_all(&line).unwrap();
            want.extend_from_slice(&line);
        }
        f.commit().unwrap();
        assert_eq!(std::fs::read(&dest).unwrap(), want);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dest).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

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

    #[cfg(unix)]
    #[test]
    fn force_writes_through_a_symlink_and_keeps_the_link() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target.jsonl");
        let link = d.path().join("link.jsonl");
        std::fs::write(&target, b"old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut f = AtomicFile::create(&link, true).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link: its target is created, the link stays.
        let gone = d.path().join("gone.jsonl");
        let dangling = d.path().join("dangling.jsonl");
        std::os::unix::fs::symlink(&gone, &dangling).unwrap();
        let mut f = AtomicFile::create(&dangling, false).unwrap();
        f.write_all(b"fresh").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&gone).unwrap(), b"fresh");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[cfg(unix)]
    #[test]
    fn force_on_a_fifo_writes_into_it_and_neither_replaces_nor_chmods_it() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg("-m")
            .arg("644")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        for in_place in [false, true] {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read(&fifo).unwrap())
            };
            if in_place {
                let mut f = create_in_place(&fifo, true).unwrap();
                f.write_all(b"live").unwrap();
            } else {
                let mut f = AtomicFile::create(&fifo, true).unwrap();
                f.write_all(b"batch").unwrap();
                f.commit().unwrap();
            }
            let got = reader.join().unwrap();
            assert_eq!(
                got,
                if in_place {
                    &b"live"[..]
                } else {
                    &b"batch"[..]
                }
            );
            let m = std::fs::symlink_metadata(&fifo).unwrap();
            assert!(m.file_type().is_fifo(), "the FIFO was replaced");
            assert_eq!(m.permissions().mode() & 0o777, 0o644);
        }
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }
}
