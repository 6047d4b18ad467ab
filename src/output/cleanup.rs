//! Removing the temporary files of uncommitted outputs when the process is stopped by
//! SIGINT (Ctrl-C), SIGTERM or SIGHUP, then ending the process as the signal would have
//! (the shell reports 130, 143 and 129). SIGKILL cannot be caught: after `kill -9` the
//! hidden temporary sibling stays.
//!
//! How it works, and why this way:
//! - Each temporary output registers its path while it is uncommitted ([`Pending`]; the
//!   registration ends when it is dropped, after the rename of a commit). The list is
//!   locked from just before the file is created until it is registered ([`hold`]), so a
//!   signal cannot slip in between.
//! - The first registration of the process starts listening, once, for each of the three
//!   signals whose disposition is still the default one (terminate). A signal the process
//!   ignores (`nohup`, a background job of a non-interactive shell) stays ignored; one
//!   that already has a handler (tokio's, in `serve`, `capture`, `record`, `mcp-tap`)
//!   stays with that handler. A process that never writes a batch output never listens.
//! - The signals are received on a thread of their own (signal-hook's
//!   [`Signals`](signal_hook::iterator::Signals) iterator: its handler only writes a byte
//!   to a pipe). Removing files and staging directories, the lock around the list and its
//!   allocations are therefore ordinary code, none of it inside a signal handler, where
//!   only async-signal-safe calls are allowed. The thread removes every registered path,
//!   then emulates the default action (signal-hook's `emulate_default_handler`: reset to
//!   the default, unblock, raise): the process dies by the signal, as it would have
//!   without the listener.
//! - signal-hook cannot give the default disposition back (`unregister` leaves its
//!   handler installed, and the signal would be ignored from then on), so the listener
//!   stays for the rest of the process and emulates the default action also when nothing
//!   is pending.
//! - A command that stops gracefully on a signal calls [`handled_by_caller`] before it
//!   installs its own handler ([`crate::capture::record::interrupted`] does): from then
//!   on the listener leaves that signal alone, and the command commits or drops its
//!   outputs itself.

use std::path::{Path, PathBuf};
#[cfg(unix)]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The signals whose default action would leave a temporary output behind.
#[cfg(unix)]
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Uncommitted temporary outputs: registration id, path, and whether it is a directory.
static PENDING: Mutex<Vec<(usize, PathBuf, bool)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicUsize = AtomicUsize::new(0);
/// Bit `n` set: signal `n` is handled by the command itself (see [`handled_by_caller`]).
#[cfg(unix)]
static HANDLED_BY_CALLER: AtomicU64 = AtomicU64::new(0);

/// A temporary output (a file, or a staging directory and everything in it) that a
/// SIGINT, SIGTERM or SIGHUP removes before the process ends, until this is dropped.
/// Drop it only once the output was renamed into place or removed.
#[must_use = "the path is protected only while the Pending lives"]
#[derive(Debug)]
pub struct Pending(usize);

/// The list of pending outputs, locked between the creation of a temporary output and its
/// registration ([`hold`]): a signal that lands in between waits for the registration.
#[must_use = "register the path created meanwhile"]
pub struct Registering(MutexGuard<'static, Vec<(usize, PathBuf, bool)>>);

/// Call just before creating a temporary output, then register it with
/// [`Registering::file`] or [`Registering::dir`]: the listener is running before the
/// file exists, and cannot run its cleanup between the creation and the registration.
pub fn hold() -> Registering {
    #[cfg(unix)]
    {
        static LISTEN: std::sync::Once = std::sync::Once::new();
        LISTEN.call_once(listen);
    }
    Registering(PENDING.lock().unwrap_or_else(PoisonError::into_inner))
}

impl Registering {
    /// Register the temporary file `path`.
    pub fn file(self, path: &Path) -> Pending {
        self.push(path, false)
    }

    /// Register the staging directory `path` (removed with its content).
    pub fn dir(self, path: &Path) -> Pending {
        self.push(path, true)
    }

    fn push(mut self, path: &Path, dir: bool) -> Pending {
        // Absolute, so that the path still names the file if the working directory changes.
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        self.0.push((id, path, dir));
        Pending(id)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut p = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
        p.retain(|(id, _, _)| *id != self.0);
    }
}

/// Leave `signals` to the command's own handler from now on (a graceful stop that
/// commits or drops its outputs): the listener neither removes anything nor ends the
/// process on them. Call it before installing that handler.
#[cfg(unix)]
pub fn handled_by_caller(signals: &[libc::c_int]) {
    for &s in signals {
        if (0..64).contains(&s) {
            HANDLED_BY_CALLER.fetch_or(1 << s, Ordering::SeqCst);
        }
    }
}

/// True when the process ignores `sig` (`nohup` ignores SIGHUP): a command that stops
/// gracefully on signals leaves such a one ignored.
#[cfg(unix)]
pub fn is_ignored(sig: libc::c_int) -> bool {
    // SAFETY: as in `is_default`: a read of the current action only.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// True when `sig`'s disposition is the default one (for these signals: terminate).
#[cfg(unix)]
fn is_default(sig: libc::c_int) -> bool {
    // SAFETY: sigaction(2) with a null new action only reads the current one into `old`,
    // a zeroed plain C struct owned here.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_DFL
    }
}

/// Start the listener thread for the signals that would end the process by default.
#[cfg(unix)]
fn listen() {
    let caller = HANDLED_BY_CALLER.load(Ordering::SeqCst);
    let signals: Vec<libc::c_int> = SIGNALS
        .into_iter()
        .filter(|&s| caller & (1 << s) == 0 && is_default(s))
        .collect();
    if signals.is_empty() {
        return;
    }
    // Registered on the thread, which reports back before the first temporary file is
    // created: a thread that cannot start leaves the default actions in place.
    let (ready, registered) = std::sync::mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("agentwire-signals".into())
        .spawn(move || {
            let iter = signal_hook::iterator::Signals::new(&signals);
            let _ = ready.send(());
            let Ok(mut iter) = iter else {
                return; // nothing registered: the signals keep their default action
            };
            for sig in iter.forever() {
                if HANDLED_BY_CALLER.load(Ordering::SeqCst) & (1 << sig) != 0 {
                    continue;
                }
                // Held until the process ends: nothing is registered or renamed meanwhile.
                let pending = PENDING.lock().unwrap_or_else(PoisonError::into_inner);
                for (_, path, dir) in pending.iter() {
                    let _ = if *dir {
                        std::fs::remove_dir_all(path)
                    } else {
                        std::fs::remove_file(path)
                    };
                }
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                // Not reached for terminating signals; the status the shell would show.
                std::process::exit(128 + sig);
            }
        });
    if spawned.is_ok() {
        let _ = registered.recv();
    }
}
