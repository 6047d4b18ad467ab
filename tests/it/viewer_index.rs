//! The viewer's index of a plain trace file, built in batches on every core with
//! `analyze`'s batched parse (issue 30's 2 s open), against an index built the plain way:
//! the trace read one line at a time, each exchange's row made on its own, and `analyze`
//! run over the file by itself. The turn rows, the analysis and every turn read back from
//! its byte offset must be the same.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agentwire::analyze::{analyze_files, AnalyzeConfig};
use agentwire::trace::{Record, TraceReader};
use agentwire::viewer::detail;
use agentwire::viewer::model::{BodyRef, Model};

use crate::common::{bin, files_under, repo, shared_capture};

/// Plain trace files of the corpus: agentwire's samples, and the trace `agentwire pcap`
/// writes of each shared real capture (into `dir`; the captures are pcaps).
fn traces(dir: &Path) -> Vec<PathBuf> {
    let is_trace = |p: &Path| {
        p.extension().is_some_and(|e| e == "jsonl")
            && std::fs::read(p).is_ok_and(|b| b.starts_with(b"{\"type\":\"trace\""))
    };
    let mut out: Vec<PathBuf> = files_under(&repo().join("captures"))
        .into_iter()
        .filter(|p| is_trace(p))
        .collect();
    let mut captures: Vec<PathBuf> = files_under(&shared_capture(""))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    captures.sort();
    for (i, c) in captures.iter().enumerate() {
        let t = dir.join(format!("{i:03}.jsonl"));
        let o = Command::new(bin())
            .arg("pcap")
            .arg(c)
            .arg("-o")
            .arg(&t)
            .output()
            .unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 3)),
            "{}: {}",
            c.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        if is_trace(&t) {
            out.push(t);
        }
    }
    out.sort();
    out
}

/// The index built one line at a time, each turn's exchange held, with `analyze` over
/// the file run on its own.
fn one_at_a_time(path: &Path) -> (Model, Vec<Arc<agentwire::trace::Exchange>>) {
    let mut m = Model::new(path);
    let mut held = Vec::new();
    let key = path.display().to_string();
    let mut r = TraceReader::open(path).unwrap().verify_digests(false);
    while let Some(rec) = r.next() {
        match rec.unwrap() {
            Record::Exchange(x) => {
                let x: Arc<agentwire::trace::Exchange> = Arc::from(x);
                m.push(&x, BodyRef::Held(x.clone()), &key, Some(r.line_no()));
                held.push(x);
            }
            Record::Header { .. } if !m.turns.is_empty() => m.new_context(),
            Record::Bad(p) => m.bad_line(&p),
            _ => {}
        }
    }
    agentwire::viewer::badges::attach(
        &mut m,
        analyze_files(&[path], AnalyzeConfig::default()).unwrap(),
    );
    (m, held)
}

/// The batched index of `path` equals the one built a line at a time: rows, problems,
/// analysis, and each turn read back from its offset is the exchange of its line.
fn check_same(path: &Path) {
    let got = agentwire::viewer::open(path, AnalyzeConfig::default()).unwrap();
    let (want, held) = one_at_a_time(path);
    let name = path.display();
    assert_eq!(json(&got.turns), json(&want.turns), "{name}: rows");
    assert_eq!(
        json(&got.problems),
        json(&want.problems),
        "{name}: problems"
    );
    assert_eq!(
        json(&got.analysis),
        json(&want.analysis),
        "{name}: analysis"
    );
    for (n, x) in held.iter().enumerate() {
        assert!(
            matches!(got.extra[n].body, BodyRef::At { .. }),
            "{name}#{n}"
        );
        let back = detail::load(&got, n).unwrap();
        assert_eq!(back.id, x.id, "{name}: turn {n} read back");
        assert_eq!(back.request.body.bytes, x.request.body.bytes, "{name}#{n}");
        assert_eq!(got.extra[n].prev_in_thread, want.extra[n].prev_in_thread);
        assert_eq!(got.extra[n].calls, want.extra[n].calls, "{name}#{n}");
    }
}

/// Any serializable value as JSON, to compare two indexes field by field.
fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn the_batched_index_equals_one_exchange_at_a_time_on_every_corpus_trace() {
    let dir = tempfile::tempdir().unwrap();
    let files = traces(dir.path());
    assert!(files.len() >= 10, "the corpus is there: {}", files.len());
    for f in &files {
        check_same(f);
    }
}

/// Longer than one batch (512 records), with recording contexts starting
/// mid-file, a blank line and a bad line: every turn at its own line and offset.
#[test]
fn a_trace_of_many_batches_with_headers_and_bad_lines_indexes_every_turn_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let files = traces(dir.path());
    let path = dir.path().join("many.jsonl");
    let mut out = Vec::new();
    let mut exchanges = 0;
    let mut bad = false;
    // The smaller traces only: many exchanges in few bytes (a cheap test).
    let small: Vec<_> = files
        .iter()
        .filter(|f| std::fs::metadata(f).unwrap().len() < 200_000)
        .collect();
    'fill: loop {
        for f in &small {
            let text = std::fs::read(f).unwrap();
            exchanges += text
                .split(|b| *b == b'\n')
                .filter(|l| l.starts_with(b"{\"type\":\"exchange\""))
                .count();
            out.extend_from_slice(&text);
            if !text.ends_with(b"\n") {
                out.push(b'\n');
            }
            if exchanges > 300 && !bad {
                out.extend_from_slice(b"\n{\"type\":\"exchange\",\"id\":\n");
                bad = true;
            }
            if exchanges > 600 {
                break 'fill;
            }
        }
    }
    std::fs::write(&path, &out).unwrap();
    check_same(&path);
    let m = agentwire::viewer::open(&path, AnalyzeConfig::default()).unwrap();
    assert!(m.turns.len() > 600, "{}", m.turns.len());
    assert!(!m.problems.is_empty(), "the bad line is marked");
    // Each row's line number is the line its offset starts (counted here by hand, the
    // rows being in file order).
    let (mut line, mut counted) = (1, 0);
    for (row, extra) in m.turns.iter().zip(&m.extra) {
        let BodyRef::At { offset, len } = extra.body else {
            panic!("a plain trace is indexed by offset");
        };
        line += out[counted..offset as usize]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        counted = offset as usize;
        assert_eq!(row.line, Some(line as u64));
        assert_eq!(out[(offset + len - 1) as usize], b'\n');
    }
}
