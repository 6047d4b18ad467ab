//! `mcp-tap`'s stop: SIGTERM, SIGINT and SIGHUP sent to the tap are forwarded to the
//! server child; the tap then waits up to a bound ([`STOP_GRACE`]) for the server to
//! exit and kills it (SIGKILL) after that, so a stopped tap never leaves its server
//! running as an orphan. The tap itself exits after the server, with the `exited` record
//! written.
//!
//! The signals arrive on a thread of signal-hook's [`Signals`] iterator (its handler only
//! writes to a pipe); the thread forwards each with kill(2) under the lock the waiting
//! loop takes to reap the child ([`Stop::reap`]), so a signal is never sent to a pid
//! that was reaped (and could be reused). A signal the process ignores when the tap
//! starts (SIGHUP under `nohup`) stays ignored.

use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use signal_hook::iterator::{Handle, Signals};

/// How long a server may take to exit after a forwarded signal before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// How often the waiting loop checks for the server's exit.
const POLL: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Shared {
    reaped: bool,
    /// The first signal forwarded, and when.
    forwarded: Option<(i32, Instant)>,
}

/// The forwarding of stop signals to one child, until it is reaped.
pub struct Stop {
    shared: Arc<Mutex<Shared>>,
    handle: Option<Handle>,
    grace: Duration,
}

/// How the server's run ended.
pub struct Ended {
    /// Its exit status.
    pub status: ExitStatus,
    /// The first signal forwarded to it, if any.
    pub forwarded: Option<i32>,
    /// True when it was killed after not exiting within the grace time.
    pub killed: bool,
    /// The grace time.
    pub grace: Duration,
}

impl Stop {
    /// Start forwarding the stop signals to `child` (call right after spawning it).
    /// Without a signal thread (it cannot start) the signals keep their default action.
    pub fn forward(child: &Child, grace: Duration) -> Stop {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let pid = child.id() as libc::pid_t;
        let wanted: [libc::c_int; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];
        let wanted: Vec<libc::c_int> = wanted
            .into_iter()
            .filter(|&s| !crate::output::cleanup::is_ignored(s))
            .collect();
        crate::output::cleanup::handled_by_caller(&wanted);
        let handle = Signals::new(&wanted).ok().map(|mut signals| {
            let handle = signals.handle();
            let shared = shared.clone();
            std::thread::spawn(move || {
                for sig in signals.forever() {
                    let mut g = shared.lock().unwrap_or_else(|p| p.into_inner());
                    if g.reaped {
                        break;
                    }
                    // SAFETY: kill(2) on the child's pid, which is not reaped yet (the
                    // reaping loop holds this lock while it reaps).
                    unsafe { libc::kill(pid, sig) };
                    g.forwarded.get_or_insert((sig, Instant::now()));
                }
            });
            handle
        });
        Stop {
            shared,
            handle,
            grace,
        }
    }

    /// Wait for the child to exit; kill it when a forwarded signal did not end it within
    /// the grace time.
    ///
    /// Errors: waiting for the child failed.
    pub fn reap(mut self, child: &mut Child) -> std::io::Result<Ended> {
        let mut killed = false;
        let ended = loop {
            {
                let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(status) = child.try_wait()? {
                    g.reaped = true;
                    break Ended {
                        status,
                        forwarded: g.forwarded.map(|f| f.0),
                        killed,
                        grace: self.grace,
                    };
                }
                if let Some((_, at)) = g.forwarded {
                    if !killed && at.elapsed() >= self.grace {
                        let _ = child.kill();
                        killed = true;
                    }
                }
            }
            std::thread::sleep(POLL);
        };
        if let Some(h) = self.handle.take() {
            h.close();
        }
        Ok(ended)
    }
}

impl Ended {
    /// The `exited` record's detail: the status (code or signal), and the stop.
    pub fn detail(&self) -> String {
        let mut d = self.status.to_string();
        if let Some(sig) = self.forwarded {
            d.push_str(&format!("; after {} was forwarded", signal_name(sig)));
            if self.killed {
                d.push_str(&format!(
                    ", killed (SIGKILL) after {} s without exiting",
                    self.grace.as_secs_f64()
                ));
            }
        }
        d
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
