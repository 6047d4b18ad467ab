//! Read-ahead: a file's records (or any items) read and parsed on a thread of their own while the caller
//! works on the records before them, handed over in chunks through a channel of one
//! chunk (so at most two chunks wait: memory stays bounded). Records arrive in file order
//! and are the same records the inner reader gives; an error ends the stream as it does
//! there.

use std::sync::mpsc::{sync_channel, Receiver};

use crate::trace::Record;

/// Records per chunk handed over, at most…
const CHUNK_RECORDS: usize = 64;
/// …or this many body bytes.
const CHUNK_BYTES: usize = 4 << 20;

/// A record, or the error that ends the stream.
type Item<E> = Result<Record, E>;

/// An iterator over items that a background thread reads ahead.
pub struct ReadAhead<T> {
    rx: Receiver<Vec<T>>,
    chunk: std::vec::IntoIter<T>,
}

fn body_bytes<E>(r: &Item<E>) -> usize {
    match r {
        Ok(Record::Exchange(x)) => {
            x.request.body.len() + x.response.as_ref().map_or(0, |r| r.body.len())
        }
        _ => 0,
    }
}

impl<E: Send + 'static> ReadAhead<Item<E>> {
    /// Read `inner` on a new thread. When no thread can be started, `inner` is returned
    /// as it is (read on the caller's thread).
    pub fn spawn<I>(inner: I) -> Box<dyn Iterator<Item = Item<E>>>
    where
        I: Iterator<Item = Item<E>> + Send + 'static,
    {
        ReadAhead::spawn_weighed(inner, body_bytes, Result::is_err)
    }
}

impl<T: Send + 'static> ReadAhead<T> {
    /// Read any `inner` on a new thread, in chunks of at most `CHUNK_RECORDS` (64) items or
    /// `CHUNK_BYTES` (4 MiB) of `weigh` (bytes an item holds); an item that `ends` the stream
    /// (an error) is the last one read. When no thread can be started, `inner` is
    /// returned as it is (read on the caller's thread).
    pub fn spawn_weighed<I>(
        inner: I,
        weigh: fn(&T) -> usize,
        ends: fn(&T) -> bool,
    ) -> Box<dyn Iterator<Item = T>>
    where
        I: Iterator<Item = T> + Send + 'static,
    {
        let (tx, rx) = sync_channel::<Vec<T>>(1);
        // The reader moves into the thread only if the thread starts; keep a way back.
        let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(inner)));
        let theirs = slot.clone();
        let started = std::thread::Builder::new()
            .name("agentwire-read".into())
            .spawn(move || {
                let Some(inner) = theirs.lock().ok().and_then(|mut s| s.take()) else {
                    return;
                };
                let mut chunk = Vec::with_capacity(CHUNK_RECORDS);
                let mut bytes = 0;
                for r in inner {
                    let end = ends(&r);
                    bytes += weigh(&r);
                    chunk.push(r);
                    if end || chunk.len() >= CHUNK_RECORDS || bytes >= CHUNK_BYTES {
                        bytes = 0;
                        // The caller stopped reading: stop too.
                        if tx.send(std::mem::take(&mut chunk)).is_err() || end {
                            return;
                        }
                    }
                }
                let _ = tx.send(chunk);
            });
        match started {
            Ok(_) => Box::new(ReadAhead {
                rx,
                chunk: Vec::new().into_iter(),
            }),
            Err(_) => match slot.lock().ok().and_then(|mut s| s.take()) {
                Some(inner) => Box::new(inner),
                None => Box::new(std::iter::empty()),
            },
        }
    }
}

impl<T> Iterator for ReadAhead<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        loop {
            if let Some(r) = self.chunk.next() {
                return Some(r);
            }
            // Disconnected: the reader finished (or stopped after an error).
            self.chunk = self.rx.recv().ok()?.into_iter();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceError;

    type Item = super::Item<TraceError>;

    fn other(i: u64) -> Item {
        Ok(Record::Other(serde_json::json!({ "i": i })))
    }

    #[test]
    fn records_arrive_in_order_and_all_of_them() {
        let n = 3 * CHUNK_RECORDS as u64 + 5;
        let got: Vec<u64> = ReadAhead::spawn((0..n).map(other))
            .map(|r| match r {
                Ok(Record::Other(v)) => v["i"].as_u64().unwrap(),
                _ => panic!("not an Other record"),
            })
            .collect();
        assert_eq!(got, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_is_delivered_after_the_records_before_it_and_ends_the_stream() {
        let inner = (0..10u64).map(|i| {
            if i == 7 {
                Err(TraceError::Read {
                    path: "t.jsonl".into(),
                    offset: 700,
                    source: std::io::Error::other("disk gone"),
                })
            } else {
                other(i)
            }
        });
        let got: Vec<Item> = ReadAhead::spawn(inner).collect();
        assert_eq!(got.len(), 8, "7 records, then the error, then nothing");
        assert!(got[..7].iter().all(Result::is_ok));
        assert!(got[7]
            .as_ref()
            .err()
            .unwrap()
            .to_string()
            .contains("t.jsonl"));
    }

    #[test]
    fn dropping_the_reader_early_stops_the_thread() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        // An endless input: the thread must stop once the caller goes away, having read
        // at most the chunks the channel holds.
        let produced = Arc::new(AtomicUsize::new(0));
        let count = produced.clone();
        let mut r = ReadAhead::spawn((0..).map(move |i| {
            count.fetch_add(1, Ordering::SeqCst);
            other(i)
        }));
        assert!(r.next().is_some());
        drop(r);
        let settled = |p: &AtomicUsize| {
            let mut last = p.load(Ordering::SeqCst);
            loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let now = p.load(Ordering::SeqCst);
                if now == last {
                    return now;
                }
                last = now;
            }
        };
        let n = settled(&produced);
        assert!(
            n <= 4 * CHUNK_RECORDS,
            "{n} records read after the caller left"
        );
    }
}
