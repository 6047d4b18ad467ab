//! Merging many inputs into one trace (`agentwire import`): the records of every input,
//! in order, written to one trace whose exchanges are numbered anew from 0. Each input's
//! header (each imported file or session) starts a recording context of its own in the
//! merged trace, so sessions without ids never run on across inputs; exchanges are
//! tallied by the format they came from.
//!
//! [`Merge`] is a sink: the caller opens each input (the input layer, above this one)
//! and hands its records over one by one, reporting the unreadable ones [`Merge::push`]
//! hands back. The trace is written whole or not at all ([`TraceWriter::create_atomic`]),
//! and not at all when no input held a record.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::trace::{
    Context, ReadProblem, Record, SourceKind, TraceError, TraceWriter, FORMAT_NAME, FORMAT_VERSION,
};

/// Where a merge writes, and what it is made of.
#[derive(Clone, Debug)]
pub struct MergeOptions {
    /// The trace to write.
    pub output: PathBuf,
    /// Replace an existing `output`.
    pub force: bool,
    /// The inputs as the user named them, in order (for the trace's label).
    pub inputs: Vec<String>,
}

/// What a merge wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeSummary {
    /// Exchanges written.
    pub exchanges: u64,
    /// Exchanges per format they came from (`har`, `agentwire-trace`, `packet capture`).
    pub formats: BTreeMap<String, u64>,
}

impl MergeSummary {
    /// `2 har, 1 agentwire-trace`: the exchanges per format, formats in name order.
    pub fn by_format(&self) -> String {
        let parts: Vec<String> = self
            .formats
            .iter()
            .map(|(f, n)| format!("{n} {f}"))
            .collect();
        parts.join(", ")
    }
}

/// A merge in progress ([module docs](self)).
pub struct Merge {
    opts: MergeOptions,
    writer: Option<TraceWriter>,
    summary: MergeSummary,
}

impl Merge {
    /// A merge into `opts.output`; nothing is written before the first record.
    pub fn new(opts: MergeOptions) -> Merge {
        Merge {
            opts,
            writer: None,
            summary: MergeSummary::default(),
        }
    }

    /// Add the next record of the current input. An unreadable record is handed back,
    /// for the caller to report against its input; MCP and unknown records go through
    /// as they are once a trace is open.
    ///
    /// Errors: [`TraceError`] when the trace cannot be created or written.
    pub fn push(&mut self, rec: Record) -> Result<Option<ReadProblem>, TraceError> {
        match rec {
            Record::Header { context, .. } => match &mut self.writer {
                None => self.writer = Some(self.create(context)?),
                Some(w) => w.write_record(&serde_json::json!({
                    "type": "trace",
                    "format": FORMAT_NAME,
                    "version": FORMAT_VERSION,
                    "context": context,
                }))?,
            },
            Record::Exchange(mut x) => {
                if self.writer.is_none() {
                    self.writer = Some(self.create(Context::new())?);
                }
                x.id = self.summary.exchanges;
                self.summary.exchanges += 1;
                let format = match (&x.source.format, x.source.kind) {
                    (Some(f), _) => f.clone(),
                    (None, SourceKind::Pcap | SourceKind::Live) => "packet capture".into(),
                    (None, _) => "agentwire-trace".into(),
                };
                *self.summary.formats.entry(format).or_default() += 1;
                if let Some(w) = &mut self.writer {
                    w.write_exchange(&x)?;
                }
            }
            Record::Mcp(m) => {
                if let Some(w) = &mut self.writer {
                    w.write_record(&m.line())?;
                }
            }
            Record::Other(v) => {
                if let Some(w) = &mut self.writer {
                    w.write_record(&v)?;
                }
            }
            Record::Bad(p) => return Ok(Some(p)),
        }
        Ok(None)
    }

    /// Complete the trace (it appears whole, or not at all); what was written.
    ///
    /// Errors: [`TraceError`] when the trace cannot be completed.
    pub fn finish(self) -> Result<MergeSummary, TraceError> {
        if let Some(w) = self.writer {
            w.finish()?;
        }
        Ok(self.summary)
    }

    /// The merged trace, its first context `context` with this agentwire's version, no
    /// CLI version when several inputs are merged, and a label naming the inputs.
    fn create(&self, mut context: Context) -> Result<TraceWriter, TraceError> {
        context.agentwire_version = env!("CARGO_PKG_VERSION").into();
        if self.opts.inputs.len() > 1 {
            context.cli_version = None;
        }
        context.label = Some(format!("imported from {}", self.opts.inputs.join(", ")));
        TraceWriter::create_atomic(&self.opts.output, self.opts.force, &context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Trace;

    fn exchange(id: u64, format: Option<&str>) -> Record {
        let mut x = crate::trace::test_exchange("POST", "/v1/messages", &[], b"{}");
        x.id = id;
        x.source.format = format.map(str::to_string);
        Record::Exchange(Box::new(x))
    }

    fn header(version: &str) -> Record {
        let mut context = Context::new();
        context.cli_version = Some(version.into());
        Record::Header {
            version: FORMAT_VERSION,
            context,
        }
    }

    #[test]
    fn merged_exchanges_are_renumbered_each_input_keeps_its_context_and_formats_are_tallied() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("m.jsonl");
        let mut m = Merge::new(MergeOptions {
            output: output.clone(),
            force: false,
            inputs: vec!["a.har".into(), "b.jsonl".into()],
        });
        for r in [
            header("1"),
            exchange(7, Some("har")),
            exchange(7, Some("har")),
        ] {
            assert!(m.push(r).unwrap().is_none());
        }
        for r in [header("2"), exchange(0, None)] {
            assert!(m.push(r).unwrap().is_none());
        }
        let s = m.finish().unwrap();
        assert_eq!(s.exchanges, 3);
        assert_eq!(s.by_format(), "1 agentwire-trace, 2 har");
        let t = Trace::read(&output).unwrap();
        let ids: Vec<u64> = t.exchanges.iter().map(|x| x.id).collect();
        assert_eq!(ids, [0, 1, 2]);
        assert_eq!(
            t.context.label.as_deref(),
            Some("imported from a.har, b.jsonl")
        );
        assert_eq!(
            t.context.cli_version, None,
            "several inputs: no one version"
        );
        assert!(
            t.starts_context(2),
            "the second input starts its own context"
        );
    }

    #[test]
    fn nothing_is_written_without_a_record_and_bad_records_are_handed_back() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("m.jsonl");
        let mut m = Merge::new(MergeOptions {
            output: output.clone(),
            force: false,
            inputs: vec!["a".into()],
        });
        let bad = ReadProblem {
            line: 3,
            offset: 10,
            truncated: false,
            message: "not JSON".into(),
            raw: b"{".to_vec(),
            file: None,
        };
        let back = m.push(Record::Bad(bad)).unwrap().expect("handed back");
        assert_eq!((back.line, back.message.as_str()), (3, "not JSON"));
        assert_eq!(m.finish().unwrap(), MergeSummary::default());
        assert!(!output.exists());
    }
}
