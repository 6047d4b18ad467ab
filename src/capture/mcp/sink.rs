//! Where one MCP recording source (a stdio tap or a Streamable HTTP proxy) writes its
//! `mcp` records: a trace file of its own, one line per record, numbered in making order.
//!
//! A record that cannot be written (the disk is full, its line is over the bound readers
//! accept, it cannot be serialized) is *lost*, never silently: the relay goes on (the
//! protocol traffic matters more than its recording), the loss is counted
//! ([`McpSink::lost`]: `mcp-tap` then fails), and a `lost` marker record naming the
//! missing sequence numbers is written before the next record that can be written (or at
//! [`McpSink::close`]). Readers warn on the marker, and on a gap in `seq` no marker
//! explains (the marker itself could not be written): [`crate::trace::mcp::Continuity`].

use std::path::Path;
use std::sync::Mutex;

use crate::capture::Diagnostics;
use crate::trace::mcp::{McpTransport, LOST_EVENT};
use crate::trace::{Context, McpRecord, TraceError, TraceWriter};

/// Records lost by a sink so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// Records that could not be written.
    pub count: u64,
    /// Records made in all (written or not).
    pub total: u64,
    /// The first failure's message (`None` while nothing was lost).
    pub first: Option<String>,
}

/// Lost records not yet marked in the trace.
struct Unmarked {
    first_seq: u64,
    last_seq: u64,
    count: u64,
    why: String,
    server: String,
    transport: McpTransport,
}

struct State {
    writer: TraceWriter,
    next_seq: u64,
    lost: Lost,
    unmarked: Option<Unmarked>,
}

/// A trace file receiving `mcp` records from several threads (see the module doc).
pub struct McpSink {
    inner: Mutex<State>,
    diagnostics: Diagnostics,
    max_line: usize,
}

impl McpSink {
    /// Create `path` with a trace header naming the source (`context.label` = `label`).
    ///
    /// Errors: [`TraceError::Write`] when the file cannot be created.
    pub fn create(path: &Path, label: &str) -> Result<McpSink, TraceError> {
        let mut ctx = Context::new();
        ctx.label = Some(crate::trace::redact::redact_text(label));
        Ok(McpSink {
            inner: Mutex::new(State {
                writer: TraceWriter::create(path, &ctx)?,
                next_seq: 0,
                lost: Lost::default(),
                unmarked: None,
            }),
            diagnostics: Diagnostics::silent(),
            max_line: crate::trace::MAX_LINE,
        })
    }

    /// The sink, reporting write errors to `diagnostics` (by default they are not
    /// reported).
    pub fn reporting_to(mut self, diagnostics: Diagnostics) -> McpSink {
        self.diagnostics = diagnostics;
        self
    }

    /// The sink with a smaller line bound than the readers' (bytes), for tests of loss.
    #[doc(hidden)]
    pub fn with_max_line(mut self, bytes: usize) -> McpSink {
        self.max_line = bytes;
        self
    }

    /// Number and write one record. A failure loses the record (counted, reported: the
    /// first, then every thousandth) and is marked before the next record written.
    pub fn write(&self, mut record: McpRecord) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        self.mark(&mut g);
        record.seq = g.next_seq;
        g.next_seq += 1;
        g.lost.total += 1;
        if let Err(e) = g.writer.write_record_within(&record.line(), self.max_line) {
            let why = e.to_string();
            g.lost.count += 1;
            if g.lost.count == 1 || g.lost.count % 1000 == 0 {
                self.diagnostics
                    .status(&format!("agentwire mcp: record lost: {why}"));
            }
            g.lost.first.get_or_insert_with(|| why.clone());
            match g.unmarked.as_mut() {
                Some(u) => {
                    u.last_seq = record.seq;
                    u.count += 1;
                }
                None => {
                    g.unmarked = Some(Unmarked {
                        first_seq: record.seq,
                        last_seq: record.seq,
                        count: 1,
                        why,
                        server: record.server.clone(),
                        transport: record.transport,
                    })
                }
            }
        }
    }

    /// Write the marker of records lost since the last one, if any (a marker that cannot
    /// be written either waits for the next chance).
    fn mark(&self, g: &mut State) {
        let Some(u) = g.unmarked.take() else { return };
        let seqs = if u.first_seq == u.last_seq {
            format!("seq {}", u.first_seq)
        } else {
            format!("seq {}–{}", u.first_seq, u.last_seq)
        };
        let detail = format!(
            "{} lost ({seqs}): {}",
            crate::text::fmt::plural(u.count, "record"),
            u.why
        );
        let mut marker = McpRecord::event(&u.server, u.transport, LOST_EVENT, &detail);
        marker.seq = g.next_seq;
        if g.writer
            .write_record_within(&marker.line(), self.max_line)
            .is_ok()
        {
            g.next_seq += 1;
        } else {
            g.unmarked = Some(u);
        }
    }

    /// Records lost so far.
    pub fn lost(&self) -> Lost {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.lost.clone()
    }

    /// Write the marker of the last records lost (if it can be written now) and return
    /// what was lost in all.
    pub fn close(&self) -> Lost {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        self.mark(&mut g);
        g.lost.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::mcp::{Continuity, McpDirection};
    use crate::trace::Trace;

    fn msg(text: &str) -> McpRecord {
        McpRecord::message(
            "s",
            McpTransport::Stdio,
            McpDirection::ToServer,
            text.as_bytes(),
            false,
        )
    }

    /// What broke: a record that could not be written vanished; the trace read as whole.
    #[test]
    fn a_lost_record_is_counted_marked_and_warned_about() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let sink = McpSink::create(&path, "t").unwrap().with_max_line(400);
        sink.write(msg(r#"{"id":1,"method":"a"}"#));
        let big = format!(r#"{{"id":2,"method":"{}"}}"#, "x".repeat(500));
        sink.write(msg(&big));
        sink.write(msg(&big));
        sink.write(msg(r#"{"id":3,"method":"b"}"#));
        let lost = sink.close();
        assert_eq!((lost.count, lost.total), (2, 4));
        assert!(lost.first.unwrap().contains("400-byte line bound"));
        let t = Trace::read(&path).unwrap();
        let seqs: Vec<u64> = t.mcp.iter().map(|r| r.seq).collect();
        // 0 written, 1 lost, 2 its marker, 3 lost, 4 its marker, 5 the last message
        assert_eq!(seqs, [0, 2, 4, 5]);
        assert_eq!(t.mcp[1].event.as_deref(), Some(LOST_EVENT));
        assert!(t.mcp[1]
            .detail
            .as_deref()
            .unwrap()
            .starts_with("1 record lost (seq 1): "));
        assert!(t.mcp[2]
            .detail
            .as_deref()
            .unwrap()
            .starts_with("1 record lost (seq 3): "));
        let warnings = |recs: &[McpRecord]| {
            let mut c = Continuity::default();
            recs.iter().for_each(|r| c.see(r));
            c.warnings()
        };
        let w = warnings(&t.mcp);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("1 record lost (seq 1)"), "{w:?}");
        // a lost marker (a gap no marker explains) is warned about too
        let w = warnings(&[t.mcp[0].clone(), t.mcp[2].clone(), t.mcp[3].clone()]);
        assert!(
            w.iter()
                .any(|w| w.contains("2 records missing from the trace")),
            "{w:?}"
        );
    }
}
