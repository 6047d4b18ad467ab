//! The version-history report (`agentwire history`): per version the first main-thread
//! request's tool definitions, loaded and deferred tools, tools announced for ToolSearch,
//! tool bytes, system bytes, estimated tokens and betas (the diff layer's figures, in the
//! api layer's tool words), what changed from
//! the previous version in plain words, and a link to that step's pairwise diff; a line
//! chart across versions in HTML, a table in Markdown and JSON.

use serde::Serialize;

use super::chart;
use super::diff_page;
use super::glossary::{self, Entry};
use super::meta::{InputMeta, Meta};
use super::page;
use super::DocFormat;
use crate::api::normalize::Normalizer;
use crate::diff::request::{diff_parsed, RequestDiff, RequestSide};
use crate::diff::select::{items_of, DiffReport, REPORT_VERSION};
use crate::trace::Trace;

/// One version of the history as given to [`build`].
pub struct Step<'t> {
    /// Label: the version (`2.1.304`) or the input.
    pub label: String,
    /// The input as written (`claude-code@2.1.304`, a path).
    pub input: String,
    /// Its trace.
    pub trace: &'t Trace,
    /// `cache` (an earlier recording), `new` (recorded now) or `file`.
    pub recorded: String,
}

impl<'t> Step<'t> {
    /// The step of `trace`, given as `input`: labelled by the version its recording
    /// context or user agent names when `by_version` (versions recorded from a spec, else
    /// the input's name when none is known), or by the input's name ([`InputMeta::name`]:
    /// `claude-code 2.1.304`, else the input) for trace files.
    pub fn new(input: &str, trace: &'t Trace, recorded: &str, by_version: bool) -> Step<'t> {
        let m = InputMeta::of(input, trace);
        Step {
            label: m
                .version
                .clone()
                .filter(|_| by_version)
                .unwrap_or_else(|| m.name()),
            input: input.to_string(),
            trace,
            recorded: recorded.to_string(),
        }
    }
}

/// Make the labels of `steps` unique: two captures of one version (other settings) would
/// show as the same row and the same chart label, so every label shared by several steps
/// gets its input's file name added, `2.1.304 (a.jsonl)`.
pub fn unique_labels(steps: &mut [Step]) {
    let labels: Vec<String> = steps.iter().map(|s| s.label.clone()).collect();
    for s in steps {
        if labels.iter().filter(|l| **l == s.label).count() > 1 {
            let file = std::path::Path::new(&s.input)
                .file_name()
                .map_or_else(|| s.input.clone(), |f| f.to_string_lossy().into_owned());
            s.label = format!("{} ({file})", s.label);
        }
    }
}

/// One row of the history.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Version (or input label).
    pub version: String,
    /// The input as written.
    pub input: String,
    /// Tool definitions sent.
    pub tools: u64,
    /// Definitions sent without `defer_loading` (in the prompt).
    pub loaded: u64,
    /// Deferred tools as Claude Code counts them: announced names and deferred
    /// definitions, without placeholders.
    pub deferred: u64,
    /// Tools named in a deferred-tools listing for ToolSearch.
    pub announced: u64,
    /// Tool bytes.
    pub tool_bytes: u64,
    /// System prompt bytes.
    pub system_bytes: u64,
    /// Estimated input tokens of the request.
    pub est_tokens: u64,
    /// `anthropic-beta` values sent (`None`: recorded without header lines).
    pub betas: Option<Vec<String>>,
    /// `cache`, `new` or `file`.
    pub recorded: String,
    /// What changed from the previous version, in plain words (empty for the first).
    pub changes: Vec<String>,
    /// Relative link to the pairwise diff report of this step, if written.
    pub diff: Option<String>,
}

/// The history: rows, and the pairwise diffs (step `i` compares row `i-1` with row `i`).
pub struct History {
    /// One row per version.
    pub rows: Vec<Row>,
    /// Pairwise diff reports, one per step after the first, with both inputs described.
    pub steps: Vec<(DiffReport, InputMeta, InputMeta)>,
    /// Inputs without a readable main-thread request.
    pub problems: Vec<String>,
}

fn side<'a>(s: &Step, i: &'a crate::diff::select::Item<'_>) -> RequestSide<'a> {
    i.side(&s.input)
}

fn size(d: &RequestDiff, m: &str) -> u64 {
    d.size(m).map_or(0, |r| r.b)
}

/// Build the history of `steps` (in order).
pub fn build(steps: &[Step]) -> History {
    let norm = Normalizer::defaults();
    let mut problems = Vec::new();
    let mut picked = Vec::new();
    for s in steps {
        let items = items_of(s.trace, &s.input, &mut problems);
        match items.into_iter().find(|i| i.thread == "main") {
            Some(i) => picked.push((s, i)),
            None => problems.push(format!(
                "{}: no main-thread POST /v1/messages request; left out",
                s.input
            )),
        }
    }
    let mut rows = Vec::new();
    let mut out_steps = Vec::new();
    for k in 0..picked.len() {
        let (s, cur) = &picked[k];
        let (ps, prev) = if k == 0 { &picked[k] } else { &picked[k - 1] };
        let d = diff_parsed(&side(ps, prev), &prev.req, &side(s, cur), &cur.req, &norm);
        let (ma, mb) = (
            InputMeta::of(&ps.input, ps.trace),
            InputMeta::of(&s.input, s.trace),
        );
        let changes = if k == 0 {
            Vec::new()
        } else {
            diff_page::summary(&d, &ma.name(), &mb.name())
        };
        rows.push(Row {
            version: s.label.clone(),
            input: s.input.clone(),
            tools: size(&d, "tools"),
            loaded: size(&d, "loaded_tools"),
            deferred: size(&d, "deferred_tools"),
            announced: size(&d, "announced_tools"),
            tool_bytes: size(&d, "tool_bytes"),
            system_bytes: size(&d, "system_bytes"),
            est_tokens: size(&d, "est_tokens"),
            betas: d.headers.b_betas.clone(),
            recorded: s.recorded.clone(),
            changes,
            diff: None,
        });
        if k > 0 {
            let report = DiffReport {
                version: REPORT_VERSION,
                mode: "first".into(),
                a: ps.input.clone(),
                b: s.input.clone(),
                comparisons: vec![d],
                unmatched: vec![],
                problems: vec![],
                gates: vec![],
            };
            out_steps.push((report, ma, mb));
        }
    }
    History {
        rows,
        steps: out_steps,
        problems,
    }
}

/// File name of step `k`'s pairwise diff (`1-2.1.303-to-2.1.304.html`): the step's number
/// (from 1) and the version labels with anything but letters, digits, `.` and `-`
/// replaced.
pub fn step_file(h: &History, k: usize, ext: &str) -> String {
    // letters, digits, `.` and `-`; at most 96 bytes each (a long version ends with a
    // digest of the whole: `text::name::bounded`), so the name fits in 255 bytes
    let clean = |s: &str| -> String {
        let safe: String = s
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        crate::text::name::bounded(&safe, crate::text::name::MAX_VALUE)
    };
    // Numbered: two steps may join the same pair of versions (captures of one version
    // with different settings).
    format!(
        "{}-{}-to-{}.{ext}",
        k + 1,
        clean(&h.rows[k].version),
        clean(&h.rows[k + 1].version)
    )
}

#[derive(Serialize)]
struct Page<'h> {
    meta: Meta,
    rows: &'h [Row],
    problems: &'h [String],
    counts: Option<minijinja::Value>,
    sizes: Option<minijinja::Value>,
    glossary: Vec<Entry>,
}

#[derive(Serialize)]
struct JsonDoc<'h> {
    report: &'static str,
    meta: &'h Meta,
    rows: &'h [Row],
    problems: &'h [String],
    glossary: &'h [Entry],
}

/// Render the history; `title` names the range (`claude-code 2.1.303..2.1.332`).
pub fn render(h: &History, title: &str, inputs: Vec<InputMeta>, format: DocFormat) -> String {
    let meta = Meta::new(title.to_string(), inputs);
    let glossary = glossary::for_terms([
        "version",
        "tool definitions",
        "loaded tools",
        "deferred tools",
        "announced for ToolSearch",
        "tool bytes",
        "system bytes",
        "est. tokens",
        "betas",
        "recorded",
        "changes",
    ]);
    if format == DocFormat::Json {
        let doc = JsonDoc {
            report: "history",
            meta: &meta,
            rows: &h.rows,
            problems: &h.problems,
            glossary: &glossary,
        };
        return crate::text::safe_json::pretty(&doc);
    }
    let html = format == DocFormat::Html;
    let (counts, sizes) = if html {
        let (counts, sizes) = charts(h);
        (Some(counts), Some(sizes))
    } else {
        (None, None)
    };
    let page = Page {
        meta,
        rows: &h.rows,
        problems: &h.problems,
        counts,
        sizes,
        glossary,
    };
    page::render(if html { "history.html" } else { "history.md" }, page)
}

/// The HTML page's two charts: tools per version, and bytes and estimated tokens per
/// version.
fn charts(h: &History) -> (minijinja::Value, minijinja::Value) {
    let x: Vec<String> = h.rows.iter().map(|r| r.version.clone()).collect();
    let series = |f: &dyn Fn(&Row) -> u64| h.rows.iter().map(f).collect::<Vec<u64>>();
    let counts = page::svg(chart::lines(
        "Tools per version",
        &x,
        &[
            ("tool definitions".into(), series(&|r| r.tools)),
            ("loaded tools".into(), series(&|r| r.loaded)),
            ("deferred tools".into(), series(&|r| r.deferred)),
            ("announced for ToolSearch".into(), series(&|r| r.announced)),
        ],
    ));
    let sizes = page::svg(chart::lines(
        "Bytes and estimated tokens per version",
        &x,
        &[
            ("tool bytes".into(), series(&|r| r.tool_bytes)),
            ("system bytes".into(), series(&|r| r.system_bytes)),
            ("est. tokens".into(), series(&|r| r.est_tokens)),
        ],
    ));
    (counts, sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_labels_get_their_file_names_and_unique_ones_stay() {
        let t = Trace::default();
        let step = |label: &str, input: &str| Step {
            label: label.into(),
            input: input.into(),
            trace: &t,
            recorded: "file".into(),
        };
        let mut steps = vec![
            step("2.1.304", "dir/a.jsonl"),
            step("2.1.305", "dir/b.jsonl"),
            step("2.1.304", "other/c.jsonl"),
        ];
        unique_labels(&mut steps);
        let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["2.1.304 (a.jsonl)", "2.1.305", "2.1.304 (c.jsonl)"]
        );
    }

    #[test]
    fn a_step_without_a_known_version_is_labelled_by_its_input() {
        let t = Trace::default();
        assert_eq!(Step::new("x.jsonl", &t, "file", true).label, "x.jsonl");
        assert_eq!(Step::new("x.jsonl", &t, "file", false).label, "x.jsonl");
    }
}
