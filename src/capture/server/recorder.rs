//! The recorder: one writer thread owns the trace file; request handlers hand it finished
//! exchanges through a queue, so lines never interleave and every line is complete.
//!
//! The queue is bounded in bytes (backpressure): a new request waits in
//! [`Recorder::admit`] while the queued exchanges hold more than the limit, so a disk
//! slower than the clients costs latency, not memory. When the trace cannot be written
//! (disk full), the exchange is kept and retried, the server answers new requests 503
//! (`overloaded_error`) until a write succeeds again, and says so on stderr.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{mpsc, Notify};

use crate::capture::Diagnostics;
use crate::trace::{Exchange, TraceError, TraceWriter};

/// Exchanges a live viewer may fall behind by before it skips some (and reloads).
const LIVE_BACKLOG: usize = 1024;
/// How long the writer waits between attempts to write a record that failed.
const RETRY: Duration = Duration::from_millis(200);
/// Attempts at shutdown before a record that cannot be written is given up (≈ 2 s).
const FINAL_ATTEMPTS: u32 = 10;

/// A cheap, cloneable handle to send exchanges to the writer thread.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Msg>,
    shared: Arc<Shared>,
}

/// Counters shared by the handles and the writer thread.
struct Shared {
    /// Exchanges handed over.
    sent: AtomicU64,
    /// Bytes (estimated) and exchanges in the queue now, and their peaks.
    queued_bytes: AtomicU64,
    queued: AtomicU64,
    peak_bytes: AtomicU64,
    peak: AtomicU64,
    /// Queue limit in bytes.
    limit: u64,
    /// Woken when the queue shrinks or the trace becomes writable.
    space: Notify,
    /// False while the last write failed.
    writable: AtomicBool,
    /// The server is stopping: exchanges cut now are cut by the shutdown.
    shutting_down: AtomicBool,
    /// [`Recorder::stop`] was called.
    stop_requested: AtomicBool,
    /// Exchanges recorded with the error kind `shutdown`.
    cut_by_shutdown: AtomicU64,
    /// Exchanges not recorded: the 503 answers given while the trace could not be
    /// written and the queue was full, and records given up at shutdown.
    not_recorded: AtomicU64,
    /// The trace's reader went away (a pipe closed: `serve -o - | head`): nothing can
    /// ever be written again, the server should stop.
    reader_gone: AtomicBool,
    /// Woken when `reader_gone` is set.
    gone: Notify,
    /// Each exchange once written, for live viewers ([`Recorder::subscribe`]); its
    /// non-body strings redacted as the trace has them.
    live: tokio::sync::broadcast::Sender<Arc<Exchange>>,
}

/// What the recorder did, for the server's closing summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecorderSummary {
    /// Exchanges written to the trace.
    pub written: u64,
    /// Exchanges still in flight when the server stopped, written with the error kind
    /// `shutdown` and what had been seen.
    pub cut_by_shutdown: u64,
    /// Exchanges that could not be written (the trace stayed unwritable).
    pub not_recorded: u64,
    /// Most exchanges waiting for the writer at once.
    pub peak_queue: u64,
    /// Most bytes (request and response bodies plus a fixed overhead per exchange)
    /// waiting for the writer at once.
    pub peak_queue_bytes: u64,
    /// The queue's limit in bytes.
    pub queue_limit: u64,
}

/// The writer thread; [`RecorderThread::finish`] waits for it after [`Recorder::stop`].
pub struct RecorderThread {
    handle: JoinHandle<Result<u64, TraceError>>,
    shared: Arc<Shared>,
}

enum Msg {
    Exchange(Box<Exchange>, u64),
    Stop,
}

/// Why a request cannot be admitted now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The trace cannot be written (disk full, I/O error): answer 503 so clients retry.
    Unwritable,
}

/// Estimated memory of a queued exchange, bytes: bodies plus 2 KiB for heads and fields.
fn weight(x: &Exchange) -> u64 {
    let resp = x.response.as_ref().map_or(0, |r| r.body.len());
    (x.request.body.len() + resp) as u64 + 2048
}

/// Start the writer thread; the queue holds at most `queue_limit` bytes before new
/// requests wait. A trace that stops and starts being writable is reported to
/// `diagnostics`.
pub fn spawn(
    writer: TraceWriter,
    queue_limit: usize,
    diagnostics: Diagnostics,
) -> (Recorder, RecorderThread) {
    let (tx, rx) = mpsc::unbounded_channel::<Msg>();
    let shared = Arc::new(Shared {
        sent: AtomicU64::new(0),
        queued_bytes: AtomicU64::new(0),
        queued: AtomicU64::new(0),
        peak_bytes: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        limit: queue_limit.max(1) as u64,
        space: Notify::new(),
        writable: AtomicBool::new(true),
        shutting_down: AtomicBool::new(false),
        stop_requested: AtomicBool::new(false),
        cut_by_shutdown: AtomicU64::new(0),
        not_recorded: AtomicU64::new(0),
        reader_gone: AtomicBool::new(false),
        gone: Notify::new(),
        live: tokio::sync::broadcast::channel(LIVE_BACKLOG).0,
    });
    let sh = shared.clone();
    let handle = std::thread::Builder::new()
        .name("agentwire-recorder".into())
        .spawn(move || write_loop(writer, rx, &sh, &diagnostics))
        .expect("spawn recorder thread");
    (
        Recorder {
            tx,
            shared: shared.clone(),
        },
        RecorderThread { handle, shared },
    )
}

fn write_loop(
    mut writer: TraceWriter,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    sh: &Shared,
    diagnostics: &Diagnostics,
) -> Result<u64, TraceError> {
    let mut n = 0u64;
    let mut first_err = None;
    let mut stopping = false;
    loop {
        let msg = if stopping {
            match rx.try_recv() {
                Ok(m) => m,
                Err(_) => break,
            }
        } else {
            match rx.blocking_recv() {
                Some(m) => m,
                None => break,
            }
        };
        let (x, w) = match msg {
            Msg::Exchange(x, w) => (x, w),
            Msg::Stop => {
                // Write what is queued now, then end even if senders remain.
                stopping = true;
                continue;
            }
        };
        match write_with_retry(&mut writer, &x, sh, diagnostics, &mut stopping) {
            Ok(true) => {
                n += 1;
                if sh.live.receiver_count() > 0 {
                    let y = crate::trace::redact::exchange(&x).unwrap_or(*x);
                    let _ = sh.live.send(Arc::new(y));
                }
            }
            Ok(false) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        sh.queued_bytes.fetch_sub(w, Ordering::SeqCst);
        sh.queued.fetch_sub(1, Ordering::SeqCst);
        sh.space.notify_waiters();
    }
    if let Err(e) = writer.finish() {
        if !is_broken_pipe(&e) {
            first_err.get_or_insert(e);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

/// Write one exchange, retrying while the trace cannot be written (a full disk may free
/// up): the first failure and the recovery are reported to `diagnostics`. `Ok(true)`:
/// written; `Ok(false)`: the reader is gone, so it is dropped, like the rest of a
/// command's output after its pipe closed; `Err`: given up while stopping (after
/// [`FINAL_ATTEMPTS`]), counted as not recorded. A stop queued behind the record sets
/// `stopping`, to give up sooner.
fn write_with_retry(
    writer: &mut TraceWriter,
    x: &Exchange,
    sh: &Shared,
    diagnostics: &Diagnostics,
    stopping: &mut bool,
) -> Result<bool, TraceError> {
    let mut attempts = 0u32;
    while !sh.reader_gone.load(Ordering::SeqCst) {
        match writer.write_exchange(x) {
            Ok(()) => {
                if !sh.writable.swap(true, Ordering::SeqCst) {
                    diagnostics.status(
                        "agentwire: the trace is writable again; recording and answering resume",
                    );
                }
                return Ok(true);
            }
            Err(e) if is_broken_pipe(&e) => {
                sh.writable.store(false, Ordering::SeqCst);
                sh.reader_gone.store(true, Ordering::SeqCst);
                sh.gone.notify_waiters();
                sh.space.notify_waiters();
            }
            Err(e) => {
                if sh.writable.swap(false, Ordering::SeqCst) {
                    diagnostics.error(&format!("{e}; answering new requests 503 (overloaded_error) until the trace can be written again"));
                }
                attempts += 1;
                if *stopping && attempts >= FINAL_ATTEMPTS {
                    sh.not_recorded.fetch_add(1, Ordering::Relaxed);
                    return Err(e);
                }
                std::thread::sleep(RETRY);
                *stopping |= sh.stop_requested.load(Ordering::SeqCst);
            }
        }
    }
    Ok(false)
}

/// True when a write failed because the trace's reader closed the pipe: the trace can
/// never be written again (unlike a full disk, which may free up).
fn is_broken_pipe(e: &TraceError) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        cur = c.source();
    }
    false
}

impl Recorder {
    /// Every exchange from now on, just after its line is written to the trace (what
    /// `serve --ui` shows live). Sending costs nothing while no one subscribes.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<Exchange>> {
        self.shared.live.subscribe()
    }

    /// Wait until the trace's reader is gone (its pipe closed); pending forever otherwise.
    pub async fn reader_gone(&self) {
        loop {
            let notified = self.shared.gone.notified();
            if self.shared.reader_gone.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    /// Wait until the queue has room for another exchange (backpressure); refuse at once
    /// while the trace cannot be written.
    pub async fn admit(&self) -> Result<(), Refusal> {
        loop {
            let notified = self.shared.space.notified();
            if !self.shared.writable.load(Ordering::SeqCst) {
                return Err(Refusal::Unwritable);
            }
            if self.shared.queued_bytes.load(Ordering::SeqCst) < self.shared.limit {
                return Ok(());
            }
            // Re-checked on every wake-up; a timeout guards against a missed wake-up.
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }

    /// Queue an exchange for writing. Never blocks: the bound is enforced when requests
    /// are admitted. While the trace cannot be written and the queue is full, the
    /// exchange (a 503 answer) is counted as not recorded instead.
    pub fn record(&self, x: Exchange) {
        let sh = &self.shared;
        if !sh.writable.load(Ordering::SeqCst) && sh.queued_bytes.load(Ordering::SeqCst) >= sh.limit
        {
            sh.not_recorded.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if x.error.as_ref().is_some_and(|e| e.kind == "shutdown") {
            sh.cut_by_shutdown.fetch_add(1, Ordering::Relaxed);
        }
        let w = weight(&x);
        sh.sent.fetch_add(1, Ordering::Relaxed);
        let bytes = sh.queued_bytes.fetch_add(w, Ordering::SeqCst) + w;
        let n = sh.queued.fetch_add(1, Ordering::SeqCst) + 1;
        sh.peak_bytes.fetch_max(bytes, Ordering::Relaxed);
        sh.peak.fetch_max(n, Ordering::Relaxed);
        // The receiver lives until the writer thread ends, after the server stopped.
        if self.tx.send(Msg::Exchange(Box::new(x), w)).is_err() {
            sh.not_recorded.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Mark the server as stopping: exchanges cut from now on are cut by the shutdown.
    pub fn begin_shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
    }

    /// True once [`begin_shutdown`](Self::begin_shutdown) was called.
    pub fn shutting_down(&self) -> bool {
        self.shared.shutting_down.load(Ordering::SeqCst)
    }

    /// False while the trace cannot be written.
    pub fn writable(&self) -> bool {
        self.shared.writable.load(Ordering::SeqCst)
    }

    /// Ask the writer to finish after what is queued now, even if other senders are still
    /// alive.
    pub fn stop(&self) {
        self.shared.stop_requested.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Msg::Stop);
    }

    /// Exchanges handed to the recorder so far.
    pub fn count(&self) -> u64 {
        self.shared.sent.load(Ordering::Relaxed)
    }
}

impl RecorderThread {
    /// Wait until every exchange queued before [`Recorder::stop`] is written; returns
    /// what was done.
    ///
    /// Errors: the first [`TraceError`] of a record that could not be written.
    pub fn finish(self) -> Result<RecorderSummary, TraceError> {
        let written = self.handle.join().unwrap_or(Ok(0))?;
        let sh = &self.shared;
        Ok(RecorderSummary {
            written,
            cut_by_shutdown: sh.cut_by_shutdown.load(Ordering::Relaxed),
            not_recorded: sh.not_recorded.load(Ordering::Relaxed),
            peak_queue: sh.peak.load(Ordering::Relaxed),
            peak_queue_bytes: sh.peak_bytes.load(Ordering::Relaxed),
            queue_limit: sh.limit,
        })
    }
}
