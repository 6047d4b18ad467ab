//! Where extracted exchanges go: the [`TraceSink`] writes them on the extracting thread,
//! or hands them in batches to a writer thread that has each batch encoded on every core
//! (redaction, SHA-256, JSON embedding: [`LineEncoder`]) while reassembly goes on, and
//! writes one batch's lines while the next batch is encoded. Lines are written in the order the exchanges were handed over either
//! way, so the trace is byte-for-byte the same.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use rayon::prelude::*;

use crate::trace::{Exchange, LineEncoder, TraceError, TraceWriter};

/// Most batches waiting for the writer thread; past it the extractor waits, so memory
/// stays bounded when the disk is slower than decoding.
const QUEUE: usize = 2;

/// Writes exchanges to a trace, inline or on a writer thread.
pub struct TraceSink {
    inner: Inner,
}

enum Inner {
    Inline(TraceWriter),
    Thread {
        tx: Option<SyncSender<Vec<Exchange>>>,
        handle: Option<JoinHandle<Result<TraceWriter, TraceError>>>,
    },
}

impl TraceSink {
    /// A sink writing to `w`. With `threads` ≥ 2 exchanges are serialized and written on
    /// a thread of their own; with 1 everything happens on the caller's thread.
    pub fn new(w: TraceWriter, threads: usize) -> Self {
        if threads < 2 {
            return TraceSink {
                inner: Inner::Inline(w),
            };
        }
        let (tx, rx) = sync_channel::<Vec<Exchange>>(QUEUE);
        let handle = std::thread::Builder::new()
            .name("agentwire-trace-writer".into())
            .spawn(move || {
                let mut w = w;
                let enc = w.encoder();
                // Batch k is written while batch k+1 is encoded on the pool.
                let mut encoding: Option<Receiver<std::thread::Result<Lines>>> = None;
                for batch in rx {
                    let (done, lines) = sync_channel(1);
                    rayon::spawn(move || {
                        // A panic goes back to the writer thread (and from there to
                        // whoever joins it), as it would on this thread.
                        let encoded =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                encode(enc, batch)
                            }));
                        let _ = done.send(encoded);
                    });
                    if let Some(prev) = encoding.replace(lines) {
                        write_lines(&mut w, prev)?;
                    }
                }
                if let Some(last) = encoding {
                    write_lines(&mut w, last)?;
                }
                Ok(w)
            })
            .expect("spawning the trace writer thread");
        TraceSink {
            inner: Inner::Thread {
                tx: Some(tx),
                handle: Some(handle),
            },
        }
    }

    /// Write `exchanges`, in order.
    ///
    /// Errors: the first [`TraceError`] the writer met (later exchanges are not written).
    pub fn write(&mut self, exchanges: Vec<Exchange>) -> Result<(), TraceError> {
        match &mut self.inner {
            Inner::Inline(w) => exchanges
                .into_iter()
                .try_for_each(|x| w.write_exchange_owned(x)),
            Inner::Thread { tx, .. } => {
                // The writer already stopped at an error, reported by the call that met it.
                let Some(sender) = tx.as_ref() else {
                    return Err(stopped());
                };
                if !exchanges.is_empty() && sender.send(exchanges).is_err() {
                    // The writer stopped at an error: report it.
                    return self.join().map(|_| ());
                }
                Ok(())
            }
        }
    }

    /// Wait for the writer thread (if any) and return the writer.
    fn join(&mut self) -> Result<TraceWriter, TraceError> {
        match std::mem::replace(
            &mut self.inner,
            Inner::Thread {
                tx: None,
                handle: None,
            },
        ) {
            Inner::Inline(w) => Ok(w),
            Inner::Thread { tx, handle } => {
                drop(tx);
                match handle {
                    Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                    None => Err(stopped()),
                }
            }
        }
    }

    /// Write everything handed over, then complete the trace ([`TraceWriter::finish`]).
    ///
    /// Errors: the first [`TraceError`] of any write, or of finishing.
    pub fn finish(mut self) -> Result<(), TraceError> {
        self.join()?.finish()
    }
}

/// The error of a sink whose writer stopped at an earlier error.
fn stopped() -> TraceError {
    TraceError::Write {
        path: String::new(),
        source: std::io::Error::other("the trace writer stopped at an earlier error"),
    }
}

type Lines = Vec<Result<Vec<u8>, serde_json::Error>>;

/// The lines of `batch`, in order, encoded on every core.
fn encode(enc: LineEncoder, batch: Vec<Exchange>) -> Lines {
    batch.into_par_iter().map(|x| enc.exchange(x)).collect()
}

/// Write the lines a pool job encoded, in order.
fn write_lines(
    w: &mut TraceWriter,
    lines: Receiver<std::thread::Result<Lines>>,
) -> Result<(), TraceError> {
    let lines = match lines.recv() {
        Ok(Ok(lines)) => lines,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => {
            return Err(TraceError::Write {
                path: String::new(),
                source: std::io::Error::other("encoding a batch of trace lines stopped"),
            })
        }
    };
    for line in lines {
        w.write_line(&line.map_err(|e| w.encode_error(e))?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Context;
    use std::path::Path;

    /// Accepts `room` bytes, then fails as a closed pipe does.
    struct ClosesAfter {
        room: usize,
    }

    impl std::io::Write for ClosesAfter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writes_after_the_writer_failed_return_an_error_instead_of_panicking() {
        let out = Box::new(ClosesAfter { room: 4096 });
        let w = TraceWriter::from_writer(out, Path::new("-"), &Context::new()).unwrap();
        let mut sink = TraceSink::new(w, 2);
        let batch = || {
            (0..8)
                .map(|i| {
                    crate::trace::test_exchange("POST", "/v1/messages", &[], &[b'x'; 2048][..i + 1])
                })
                .collect::<Vec<_>>()
        };
        // Keep writing until the failure comes back; then the sink stays failed.
        let mut first = None;
        for _ in 0..1000 {
            if let Err(e) = sink.write(batch()) {
                first = Some(e);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let first = first.expect("the closed output is reported");
        assert!(
            first.to_string().contains("Broken pipe") || first.to_string().contains("broken pipe"),
            "{first}"
        );
        for _ in 0..3 {
            assert!(sink.write(batch()).is_err());
        }
        assert!(sink.finish().is_err());
    }
}
