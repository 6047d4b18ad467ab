//! Helpers the benches share (`mod common;` in a bench): peak resident memory and CPU
//! time, so figures taken on a busy shared machine can be read per CPU-second as well as
//! per wall-clock second.

use std::time::Instant;

/// Peak resident set of this process (`VmHWM` in `/proc/self/status`), in KiB; 0 when
/// unreadable.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            l.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// User + system CPU seconds used so far by this process (all its threads), or by its
/// waited-for children with `children`.
fn cpu_secs(children: bool) -> f64 {
    let who = if children {
        libc::RUSAGE_CHILDREN
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// Wall-clock and CPU seconds of one piece of work.
#[derive(Clone, Copy, Debug)]
pub struct Took {
    /// Elapsed seconds.
    pub wall: f64,
    /// User + system CPU seconds (this process's threads, or the children it waited for).
    pub cpu: f64,
}

impl Took {
    /// `MB/s (wall), MB per CPU-second` of `bytes` processed in this time.
    pub fn rates(&self, bytes: u64) -> String {
        let mb = bytes as f64 / 1e6;
        format!(
            "{:.2} s wall, {:.2} CPU-s: {:.0} MB/s, {:.0} MB per CPU-second",
            self.wall,
            self.cpu,
            mb / self.wall,
            mb / self.cpu
        )
    }
}

/// Run `f` in this process and measure it (CPU time of all this process's threads).
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Took) {
    timed(false, f)
}

/// Run `f`, which starts and waits for child processes, and measure the children's time.
pub fn measure_children<T>(f: impl FnOnce() -> T) -> (T, Took) {
    timed(true, f)
}

fn timed<T>(children: bool, f: impl FnOnce() -> T) -> (T, Took) {
    let (c, t) = (cpu_secs(children), Instant::now());
    let r = f();
    let took = Took {
        wall: t.elapsed().as_secs_f64(),
        cpu: cpu_secs(children) - c,
    };
    (r, took)
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), to print next to figures.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// The API a bench's generated traffic speaks: `AGENTWIRE_BENCH_DIALECT` = `messages`
/// (default), `responses`, `gemini` or `chat`: the same conversations in each API's own
/// request and response bodies.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Messages,
    Responses,
    Gemini,
    Chat,
}

/// The [`Api`] `AGENTWIRE_BENCH_DIALECT` names; panics naming the values on any other.
pub fn api() -> Api {
    match std::env::var("AGENTWIRE_BENCH_DIALECT").as_deref() {
        Ok("responses") => Api::Responses,
        Ok("gemini") => Api::Gemini,
        Ok("chat") => Api::Chat,
        Ok("messages") | Err(_) => Api::Messages,
        Ok(other) => {
            panic!("AGENTWIRE_BENCH_DIALECT={other}: use messages, responses, gemini or chat")
        }
    }
}
