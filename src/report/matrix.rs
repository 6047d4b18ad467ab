//! `agentwire matrix` report: one row per run (versions × settings × agents) with the
//! request's shape in its provider's terms and what `analyze` says of the run, and which
//! runs send identical tool definitions; a table, Markdown, JSON, or an HTML page with
//! charts ([`super::matrix_page`]).

use serde::Serialize;

use super::writer::Writer;
use super::Format;
use crate::analyze::Analysis;
use crate::diff::matrix::{Matrix, MatrixRow};

/// What `analyze` says of one run, for its matrix row.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunFigures {
    /// Model requests of the run (every thread, side calls included).
    pub requests: usize,
    /// Polls.
    pub polls: usize,
    /// Redundant polls (the answer did not change).
    pub redundant_polls: usize,
    /// All input tokens (recorded, else simulated).
    pub input_tokens: u64,
    /// Cache-read tokens.
    pub cache_read_tokens: u64,
    /// `cache_read_tokens / input_tokens`, 0 to 1 (`None`: no input tokens).
    pub cache_hit_rate: Option<f64>,
    /// Cost of the run at the price table's rates, USD (`None`: a model is unpriced).
    pub cost_usd: Option<f64>,
    /// Models without a price row.
    pub unpriced_models: Vec<String>,
}

impl RunFigures {
    /// The figures of a run's analysis.
    pub fn of(a: &Analysis) -> RunFigures {
        let s = &a.summary;
        RunFigures {
            requests: s.requests,
            polls: s.polls,
            redundant_polls: s.redundant_polls,
            input_tokens: s.input_tokens,
            cache_read_tokens: s.cache_read_tokens,
            cache_hit_rate: (s.input_tokens > 0).then_some(s.cache_hit_rate),
            cost_usd: s.unpriced_models.is_empty().then_some(s.total_cost_usd),
            unpriced_models: s.unpriced_models.clone(),
        }
    }
}

/// One row of the report: the request's figures and, when the runs were analysed, the
/// run's.
#[derive(Clone, Debug, Serialize)]
pub struct Row<'m> {
    /// The request's figures.
    #[serde(flatten)]
    pub row: &'m MatrixRow,
    /// The run's (absent from the JSON when not analysed).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub run: Option<&'m RunFigures>,
}

/// The matrix and its runs' figures (`figures` empty, or one per row).
#[derive(Clone, Debug, Serialize)]
pub struct Doc<'m> {
    /// One row per run.
    pub rows: Vec<Row<'m>>,
    /// Groups of runs with identical tool definitions.
    pub identical_tools: &'m [Vec<String>],
    /// Traces or requests that could not be read.
    pub problems: &'m [String],
}

impl<'m> Doc<'m> {
    /// Pair each row of `m` with its figures (none when `figures` is shorter).
    pub fn new(m: &'m Matrix, figures: &'m [RunFigures]) -> Doc<'m> {
        Doc {
            rows: m
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| Row {
                    row,
                    run: figures.get(i),
                })
                .collect(),
            identical_tools: &m.identical_tools,
            problems: &m.problems,
        }
    }
}

/// Render the matrix (`figures`: one per row, or empty when the runs were not analysed).
pub fn render_matrix(m: &Matrix, figures: &[RunFigures], format: Format) -> String {
    format.finish(render_matrix_unchecked(&Doc::new(m, figures), format))
}

/// A beta list as a table cell: the count, `unknown` when no headers were recorded, `-`
/// when the provider has no beta header.
pub fn betas_cell(r: &MatrixRow) -> String {
    match &r.betas {
        None if r.dialect.is_some() => "unknown".into(),
        None => "-".into(),
        Some(_) if r.beta_headers == "(none)" => "-".into(),
        Some(b) => b.len().to_string(),
    }
}

/// A cost cell: `$0.0123`, `unpriced`, or `-` without figures.
pub fn cost_cell(f: Option<&RunFigures>) -> String {
    match f {
        None => "-".into(),
        Some(f) => f
            .cost_usd
            .map_or_else(|| "unpriced".into(), |c| format!("${c:.4}")),
    }
}

/// A cache-hit cell: `87%`, `-` without input tokens or figures.
pub fn hit_cell(f: Option<&RunFigures>) -> String {
    f.and_then(|f| f.cache_hit_rate)
        .map_or_else(|| "-".into(), |r| format!("{:.0}%", r * 100.0))
}

fn render_matrix_unchecked(d: &Doc, format: Format) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(d);
    }
    let mut w = Writer {
        md: format == Format::Markdown,
        color: false,
        out: String::new(),
    };
    let analysed = d.rows.iter().any(|r| r.run.is_some());
    let mut header = vec![
        "run",
        "api",
        "tools",
        "deferred",
        "announced",
        "placeholder",
        "tool bytes",
        "system bytes",
        "body bytes",
        "est. tokens",
        "betas",
        "tool defs",
    ];
    if analysed {
        header.extend(["requests", "polls", "redundant", "cache hit", "cost"]);
    }
    let rows = d.rows.iter().map(|r| cells(r, analysed)).collect();
    w.table(&header, rows);
    w.blank();
    if d.identical_tools.is_empty() {
        w.line("no two runs send identical tool definitions");
    }
    for g in d.identical_tools {
        w.bullet(&format!("tool definitions identical: {}", g.join(" = ")));
    }
    for r in &d.rows {
        if let Some(b) = r.row.betas.as_ref().filter(|b| !b.is_empty()) {
            w.bullet(&format!(
                "betas of {} ({}): {}",
                r.row.label,
                r.row.beta_headers,
                b.join(", ")
            ));
        }
    }
    for p in d.problems {
        w.bullet(&format!("problem: {p}"));
    }
    w.out
}

fn cells(r: &Row, analysed: bool) -> Vec<String> {
    let m = r.row;
    let mut c = vec![
        m.label.clone(),
        m.dialect.clone().unwrap_or_else(|| "-".into()),
        m.tools.to_string(),
        m.deferred_tools.to_string(),
        m.announced_tools.to_string(),
        m.placeholder_tools.to_string(),
        m.tool_bytes.to_string(),
        m.system_bytes.to_string(),
        m.body_bytes.to_string(),
        m.est_tokens.to_string(),
        betas_cell(m),
        m.tool_group.clone(),
    ];
    if analysed {
        let f = r.run;
        let n = |g: fn(&RunFigures) -> usize| f.map_or_else(|| "-".into(), |f| g(f).to_string());
        c.extend([
            n(|f| f.requests),
            n(|f| f.polls),
            n(|f| f.redundant_polls),
            hit_cell(f),
            cost_cell(f),
        ]);
    }
    c
}
