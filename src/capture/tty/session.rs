//! One terminal session: the CLI on a pseudo-terminal ([`portable_pty`]) of the scenario's
//! size, its screen kept by a terminal emulator ([`vt100`]), the scenario's steps and
//! answers typed into it, everything it printed and everything typed written to the cast
//! with a marker per recorded exchange, until the steps are done, the CLI exits, a step or
//! the whole session passes its bound, or agentwire is interrupted. Then the CLI and
//! everything it started are killed ([`super::reap`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cast::{Cast, Code};
use super::scenario::{Step, Terminal};
use super::LiveExchanges;
use super::{End, TtyError, TtyOutcome};

/// How long one read from the terminal waits before the session looks at its clock.
const TICK: Duration = Duration::from_millis(20);
/// The least time between two writes (a CLI reading keys takes a burst as a paste).
const WRITE_GAP: Duration = Duration::from_millis(150);
/// How long output is still read after the CLI exited (its last frame).
const DRAIN: Duration = Duration::from_millis(300);

/// What the session drives: the program, its arguments, environment and directory.
pub struct Spawn<'a> {
    /// The program.
    pub program: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// Its whole environment.
    pub env: &'a BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: &'a Path,
}

/// The running session's state.
struct Run<'a> {
    term: &'a Terminal,
    parser: vt100::Parser,
    cast: Cast,
    writer: Box<dyn Write + Send>,
    start: Instant,
    start_at: chrono::DateTime<chrono::Utc>,
    last_output: Instant,
    /// Whether the CLI printed anything yet (an idle wait starts at its first output).
    printed: bool,
    last_write: Option<Instant>,
    armed: Vec<bool>,
    answered: usize,
}

impl Run<'_> {
    fn t(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn output(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.parser.process(bytes);
        self.last_output = Instant::now();
        self.printed = true;
        let t = self.t();
        self.cast.output(t, bytes)
    }

    /// Type `bytes` (recorded as an input event); false while the gap since the last
    /// write has not passed.
    fn write(&mut self, bytes: &[u8]) -> Result<bool, TtyError> {
        if self.last_write.is_some_and(|w| w.elapsed() < WRITE_GAP) {
            return Ok(false);
        }
        self.writer
            .write_all(bytes)
            .and_then(|_| self.writer.flush())
            .map_err(TtyError::Pty)?;
        self.last_write = Some(Instant::now());
        let t = self.t();
        self.cast
            .event(t, Code::Input, &String::from_utf8_lossy(bytes))
            .map_err(TtyError::Cast)?;
        Ok(true)
    }

    /// Markers for the exchanges recorded since the last look.
    fn markers(&mut self, rx: &mut LiveExchanges) -> std::io::Result<()> {
        use tokio::sync::broadcast::error::TryRecvError;
        loop {
            match rx.try_recv() {
                Ok(x) => {
                    let us = (x.started_at - self.start_at)
                        .num_microseconds()
                        .unwrap_or(0);
                    let label = format!(
                        "exchange {}: {} {}",
                        x.id, x.request.method, x.request.target
                    );
                    self.cast
                        .event(us.max(0) as f64 / 1e6, Code::Marker, &label)?;
                }
                Err(TryRecvError::Lagged(_)) => continue,
                Err(_) => return Ok(()),
            }
        }
    }

    /// Answer every prompt the screen shows that was not showing when last answered.
    fn answer(&mut self) -> Result<(), TtyError> {
        let screen = self.parser.screen().contents();
        for k in 0..self.term.answers.len() {
            let shows = self.term.answers[k].when.is_match(&screen);
            if shows && !self.armed[k] {
                let send = self.term.answers[k].send.clone();
                if self.write(&send)? {
                    self.armed[k] = true;
                    self.answered += 1;
                }
            } else if !shows {
                self.armed[k] = false;
            }
        }
        Ok(())
    }
}

/// Run the session (blocking: call it off the async runtime). `stop` set from outside ends
/// it as interrupted; `exchanges` are the recording's, for the cast's markers.
///
/// Errors: the pseudo-terminal cannot be made or the CLI started ([`TtyError::Pty`],
/// [`TtyError::Spawn`]), the cast cannot be written ([`TtyError::Cast`]). Once the CLI
/// runs, every way out kills it and everything it started.
pub fn drive(
    spawn: Spawn<'_>,
    term: &Terminal,
    cast_path: &Path,
    max_cast_bytes: u64,
    mut exchanges: LiveExchanges,
    stop: &AtomicBool,
) -> Result<TtyOutcome, TtyError> {
    use portable_pty::{CommandBuilder, PtySize};
    let size = PtySize {
        rows: term.rows,
        cols: term.cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pty_err = |e: anyhow::Error| TtyError::Pty(std::io::Error::other(e.to_string()));
    let pair = portable_pty::native_pty_system()
        .openpty(size)
        .map_err(pty_err)?;
    let mut cmd = CommandBuilder::new(spawn.program);
    cmd.args(spawn.args);
    cmd.env_clear();
    for (k, v) in spawn.env {
        cmd.env(k, v);
    }
    cmd.cwd(spawn.cwd);
    let mut child = pair.slave.spawn_command(cmd).map_err(|e| TtyError::Spawn {
        program: spawn.program.to_string(),
        why: e.to_string(),
    })?;
    drop(pair.slave);
    let pid = child.process_id();
    let result = (|| {
        let reader = pair.master.try_clone_reader().map_err(pty_err)?;
        let writer = pair.master.take_writer().map_err(pty_err)?;
        let rx = read_in_background(reader);
        let start_at = chrono::Utc::now();
        let cast = Cast::create(
            cast_path,
            term.cols,
            term.rows,
            start_at.timestamp(),
            max_cast_bytes,
        )
        .map_err(TtyError::Cast)?;
        let rows = std::num::NonZeroU16::new(term.rows).unwrap_or(std::num::NonZeroU16::MIN);
        let cols = std::num::NonZeroU16::new(term.cols).unwrap_or(std::num::NonZeroU16::MIN);
        let mut run = Run {
            term,
            parser: vt100::Parser::new(rows, cols, 0),
            cast,
            writer,
            start: Instant::now(),
            start_at,
            last_output: Instant::now(),
            printed: false,
            last_write: None,
            armed: vec![false; term.answers.len()],
            answered: 0,
        };
        let (end, steps_done) = steps(&mut run, &rx, child.as_mut(), &mut exchanges, stop)?;
        Ok((run, rx, end, steps_done))
    })();
    // Every way out: the CLI and its family end here.
    let reaped = pid.map_or(0, super::reap::kill_family);
    let _ = child.kill();
    let status = child.wait().ok();
    let (mut run, rx, end, steps_done) = result?;
    // What was printed before the end, and the exchanges of the last moment.
    while let Ok(b) = rx.recv_timeout(Duration::from_millis(50)) {
        run.output(&b).map_err(TtyError::Cast)?;
    }
    run.markers(&mut exchanges).map_err(TtyError::Cast)?;
    let t = run.t();
    run.cast.finish(t).map_err(TtyError::Cast)?;
    let exit_code = match (&end, status) {
        (End::Exited { code }, _) => *code,
        (End::Finished, Some(s)) if s.signal().is_none() => Some(s.exit_code() as i32),
        _ => None,
    };
    Ok(TtyOutcome {
        end,
        exit_code,
        steps_done,
        answered: run.answered,
        screen: crate::trace::redact::redact_text(&run.parser.screen().contents()),
        cast: cast_path.to_path_buf(),
        cast_events: run.cast.events(),
        cast_dropped: run.cast.dropped(),
        reaped,
        seconds: t,
    })
}

/// Read the terminal on a thread of its own; chunks arrive on the channel, which closes
/// when the terminal does (every process holding it ended).
fn read_in_background(mut reader: Box<dyn std::io::Read + Send>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(256);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    rx
}

/// Run the steps until they are done, the CLI exits, a bound passes or `stop` is set;
/// returns why it ended and how many steps were done.
fn steps(
    run: &mut Run<'_>,
    rx: &mpsc::Receiver<Vec<u8>>,
    child: &mut (dyn portable_pty::Child + Send + Sync),
    exchanges: &mut LiveExchanges,
    stop: &AtomicBool,
) -> Result<(End, usize), TtyError> {
    let term = run.term;
    let deadline = run.start + term.timeout;
    let mut i = 0;
    let mut step_start = Instant::now();
    let mut exited: Option<(Option<i32>, Instant)> = None;
    loop {
        match rx.recv_timeout(TICK) {
            Ok(b) => run.output(&b).map_err(TtyError::Cast)?,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(TICK),
        }
        // At most a few chunks a tick: output that never stops must not starve the bounds.
        for _ in 0..16 {
            let Ok(b) = rx.try_recv() else { break };
            run.output(&b).map_err(TtyError::Cast)?;
        }
        run.markers(exchanges).map_err(TtyError::Cast)?;
        if exited.is_none() {
            if let Ok(Some(s)) = child.try_wait() {
                let code = s.signal().is_none().then_some(s.exit_code() as i32);
                exited = Some((code, Instant::now()));
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok((End::Interrupted, i));
        }
        if Instant::now() >= deadline {
            return Ok((
                End::Timeout {
                    seconds: term.timeout.as_secs_f64(),
                },
                i,
            ));
        }
        if let Some((code, at)) = exited {
            // Read its last frame before saying how it ended.
            if at.elapsed() < DRAIN {
                continue;
            }
            return Ok(after_exit(run, i, code));
        }
        run.answer()?;
        let Some(step) = term.steps.get(i) else {
            return Ok((End::Finished, i));
        };
        if advance(run, step, step_start)? {
            i += 1;
            step_start = Instant::now();
        } else if step_start.elapsed() >= term.step_timeout {
            return Ok((
                End::Step {
                    step: i + 1,
                    waited: describe(step),
                    seconds: term.step_timeout.as_secs_f64(),
                },
                i,
            ));
        }
    }
}

/// How a session whose CLI exited at step `i` (from 0) ended: finished when what its last
/// frames showed satisfies the remaining waits up to the end or an exit step; returns the
/// end and the steps done.
fn after_exit(run: &Run<'_>, mut i: usize, code: Option<i32>) -> (End, usize) {
    let steps = &run.term.steps;
    let screen = run.parser.screen().contents();
    while matches!(steps.get(i), Some(Step::Wait(re)) if re.is_match(&screen)) {
        i += 1;
    }
    let done = i >= steps.len() || matches!(steps[i], Step::Exit);
    let end = if done {
        End::Finished
    } else {
        End::Exited { code }
    };
    (end, i + usize::from(done && i < steps.len()))
}

/// Do `step` (typing) or look whether it is done (waiting) in the step begun at
/// `step_start`; true when the session moves on to the next step.
fn advance(run: &mut Run<'_>, step: &Step, step_start: Instant) -> Result<bool, TtyError> {
    Ok(match step {
        Step::Type(t) => run.write(t.as_bytes())?,
        Step::Key(k) => run.write(k)?,
        Step::Wait(re) => re.is_match(&run.parser.screen().contents()),
        // A CLI starting slowly (several at once) is not idle before its first output.
        Step::Idle(d) => run.printed && run.last_output.max(step_start).elapsed() >= *d,
        Step::Exit => false,
    })
}

/// What a waiting step waited for, for the end's reason.
fn describe(step: &Step) -> String {
    match step {
        Step::Wait(re) => format!("the screen to show /{}/", re.as_str()),
        Step::Idle(d) => format!("{} ms without output (after its first)", d.as_millis()),
        Step::Exit => "the CLI to exit".into(),
        Step::Type(_) | Step::Key(_) => "the terminal to take input".into(),
    }
}
