//! The index of a plain trace file, built as `analyze` reads a file: lines read ahead on a
//! thread of their own and parsed on every core ([`TraceReader::parallel`],
//! [`ReadAhead`]), then each batch's request and response bodies read once on every core
//! by `analyze`'s own batched parse ([`prepare_batch`]) for both the analysis and the
//! turn rows; the rows and the analysis then take the records in file order, so the index
//! is the same as one exchange at a time. Bodies are dropped batch by batch: memory is
//! bounded by a batch, not by the file.

use std::io::BufRead;
use std::path::Path;

use crate::analyze::analyzer::{prepare_batch, Analyzer};
use crate::input::ahead::ReadAhead;
use crate::trace::{LineAt, Record, TraceError, TraceReader};

use super::model::{BodyRef, Model};
use super::row::ReadRow;
use super::ViewerError;

/// Records parsed at once: at most this many…
const BATCH_RECORDS: usize = 512;
/// …or this many body bytes.
const BATCH_BYTES: usize = 8 << 20;

/// A record with where its line is, or the read error that ends the file.
type Item = Result<(Record, LineAt), TraceError>;

/// A trace reader's records, each with where its line is.
struct Located<R>(TraceReader<R>);

impl<R: BufRead> Iterator for Located<R> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        let rec = self.0.next()?;
        Some(rec.map(|r| (r, self.0.last_line())))
    }
}

/// Body bytes a record holds.
fn body_bytes(r: &Record) -> usize {
    match r {
        Record::Exchange(x) => {
            x.request.body.len() + x.response.as_ref().map_or(0, |r| r.body.len())
        }
        _ => 0,
    }
}

/// Index the plain trace file `path` by byte offset into `model`, feeding `a` in the same
/// pass (stored digests are not checked: the viewer shows what the file holds).
///
/// Errors: the file cannot be opened or a read fails (after the records before it were
/// indexed); unreadable lines are [`Model::problems`].
pub fn index_file(path: &Path, model: &mut Model, a: &mut Analyzer) -> Result<(), ViewerError> {
    let reader = TraceReader::open(path)?
        .verify_digests(false)
        .parallel(true);
    let key = path.display().to_string();
    a.begin_trace(&key);
    model.file = Some(path.to_path_buf());
    let weigh = |r: &Item| r.as_ref().map_or(0, |(r, _)| body_bytes(r));
    let mut items = ReadAhead::spawn_weighed(Located(reader), weigh, Result::is_err);
    let mut batch: Vec<(Record, LineAt)> = Vec::with_capacity(BATCH_RECORDS);
    loop {
        let mut bytes = 0;
        let mut failed = None;
        while batch.len() < BATCH_RECORDS && bytes < BATCH_BYTES {
            match items.next() {
                Some(Ok(item)) => {
                    bytes += body_bytes(&item.0);
                    batch.push(item);
                }
                Some(Err(e)) => {
                    failed = Some(e);
                    break;
                }
                None => break,
            }
        }
        if batch.is_empty() && failed.is_none() {
            return Ok(());
        }
        feed(model, a, &mut batch, &key);
        if let Some(e) = failed {
            return Err(e.into());
        }
    }
}

/// Read a batch's bodies on every core, then give the rows and the analysis its records
/// in order; empties `batch`.
fn feed(model: &mut Model, a: &mut Analyzer, batch: &mut Vec<(Record, LineAt)>, key: &str) {
    let read = prepare_batch(batch, |(r, _)| r, ReadRow::of);
    for ((rec, at), (prepared, row)) in batch.drain(..).zip(read) {
        match rec {
            Record::Exchange(x) => {
                let body = BodyRef::At {
                    offset: at.offset,
                    len: at.len,
                };
                model.push_read(&x, row, body, key, Some(at.line));
                a.push_prepared(&x, prepared);
            }
            Record::Header { context, .. } => {
                if !model.turns.is_empty() {
                    model.new_context();
                }
                a.context(&context);
            }
            Record::Bad(p) => {
                model.bad_line(&p);
                a.bad_line(&p);
            }
            Record::Mcp(m) => a.push_mcp(*m),
            Record::Other(_) => {}
        }
    }
}
