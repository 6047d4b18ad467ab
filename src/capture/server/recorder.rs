//! The recorder: one writer thread owns the trace file; request handlers hand it finished
//! exchanges through a channel, so lines never interleave and every line is complete.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::sync::mpsc;

use crate::trace::{Exchange, TraceError, TraceWriter};

/// A cheap, cloneable handle to send exchanges to the writer thread.
#[derive(Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Msg>,
    sent: Arc<AtomicU64>,
}

/// The writer thread; [`RecorderThread::finish`] waits for it after the last
/// [`Recorder`] clone is dropped.
pub struct RecorderThread {
    handle: JoinHandle<Result<u64, TraceError>>,
}

enum Msg {
    Exchange(Box<Exchange>),
    Stop,
}

/// Start the writer thread.
pub fn spawn(mut writer: TraceWriter) -> (Recorder, RecorderThread) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Msg>();
    let handle = std::thread::Builder::new()
        .name("agentwire-recorder".into())
        .spawn(move || {
            let mut n = 0u64;
            let mut first_err = None;
            while let Some(Msg::Exchange(x)) = rx.blocking_recv() {
                match writer.write_exchange(&x) {
                    Ok(()) => n += 1,
                    Err(e) => {
                        // Keep draining so senders never block; report the first error.
                        eprintln!("error: {e}");
                        first_err.get_or_insert(e);
                    }
                }
            }
            match first_err {
                Some(e) => Err(e),
                None => Ok(n),
            }
        })
        .expect("spawn recorder thread");
    (
        Recorder {
            tx,
            sent: Arc::new(AtomicU64::new(0)),
        },
        RecorderThread { handle },
    )
}

impl Recorder {
    /// Queue an exchange for writing.
    pub fn record(&self, x: Exchange) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        // The receiver lives until every sender is gone, so this cannot fail while `self`
        // exists.
        let _ = self.tx.send(Msg::Exchange(Box::new(x)));
    }

    /// Ask the writer to finish after what is queued now, even if other senders are still
    /// alive (connections past the shutdown grace period).
    pub fn stop(&self) {
        let _ = self.tx.send(Msg::Stop);
    }

    /// Exchanges handed to the recorder so far.
    pub fn count(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl RecorderThread {
    /// Wait until every exchange queued before [`Recorder::stop`] (or before the last
    /// [`Recorder`] clone was dropped) is written; returns how many were written.
    pub fn finish(self) -> Result<u64, TraceError> {
        self.handle.join().unwrap_or(Ok(0))
    }
}
