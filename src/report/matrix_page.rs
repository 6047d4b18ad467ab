//! The matrix as one self-contained HTML page (`agentwire matrix --html FILE`): every
//! run's row (the request's figures in its provider's terms, and the run's analysis), and
//! bar charts of tool-schema, system-prompt and body bytes per run and of cost per run
//! (drawn by [`super::chart::hbars`]).

use serde::Serialize;

use super::chart;
use super::glossary::{self, Entry};
use super::matrix::{betas_cell, cost_cell, hit_cell, Doc, RunFigures};
use super::meta::{InputMeta, Meta};
use super::page;
use crate::diff::matrix::Matrix;

/// One table row, every cell already a string.
#[derive(Serialize)]
struct Cells {
    label: String,
    provider: String,
    dialect: String,
    path: String,
    tools: usize,
    tool_bytes: usize,
    system_bytes: usize,
    body_bytes: usize,
    est_tokens: u64,
    betas: String,
    beta_names: Vec<String>,
    beta_headers: String,
    tool_group: String,
    requests: String,
    polls: String,
    redundant: String,
    hit: String,
    cost: String,
}

#[derive(Serialize)]
struct Page {
    meta: Meta,
    rows: Vec<Cells>,
    identical_tools: Vec<Vec<String>>,
    problems: Vec<String>,
    bytes: minijinja::Value,
    tokens: minijinja::Value,
    cost: Option<minijinja::Value>,
    glossary: Vec<Entry>,
}

/// The HTML page of `m` (`figures`: one per row, or empty), titled `title`, with each
/// run's input described by `inputs`.
pub fn render(m: &Matrix, figures: &[RunFigures], title: &str, inputs: Vec<InputMeta>) -> String {
    let d = Doc::new(m, figures);
    let dash = || "-".to_string();
    let rows = d
        .rows
        .iter()
        .map(|r| {
            let (m, f) = (r.row, r.run);
            let n = |g: fn(&RunFigures) -> usize| f.map_or_else(dash, |f| g(f).to_string());
            Cells {
                label: m.label.clone(),
                provider: m.provider.clone().unwrap_or_else(dash),
                dialect: m.dialect.clone().unwrap_or_else(dash),
                path: m.path.clone().unwrap_or_else(dash),
                tools: m.tools,
                tool_bytes: m.tool_bytes,
                system_bytes: m.system_bytes,
                body_bytes: m.body_bytes,
                est_tokens: m.est_tokens,
                betas: betas_cell(m),
                beta_names: m.betas.clone().unwrap_or_default(),
                beta_headers: m.beta_headers.clone(),
                tool_group: m.tool_group.clone(),
                requests: n(|f| f.requests),
                polls: n(|f| f.polls),
                redundant: n(|f| f.redundant_polls),
                hit: hit_cell(f),
                cost: cost_cell(f),
            }
        })
        .collect();
    let bars = |g: fn(&crate::diff::matrix::MatrixRow) -> f64| -> Vec<(String, f64)> {
        m.rows.iter().map(|r| (r.label.clone(), g(r))).collect()
    };
    let priced: Vec<(String, f64)> = m
        .rows
        .iter()
        .zip(figures)
        .filter_map(|(r, f)| f.cost_usd.map(|c| (r.label.clone(), c)))
        .collect();
    let page = Page {
        meta: Meta::new(title.to_string(), inputs),
        rows,
        identical_tools: m.identical_tools.clone(),
        problems: m.problems.clone(),
        bytes: page::svg(grouped_bytes(m)),
        tokens: page::svg(chart::hbars(
            "Estimated tokens of the first request",
            &bars(|r| r.est_tokens as f64),
            "tokens",
        )),
        cost: (!priced.is_empty())
            .then(|| page::svg(chart::hbars("Cost of the run", &priced, "USD"))),
        glossary: glossary::for_terms([
            "tool definitions",
            "tool bytes",
            "system bytes",
            "body bytes",
            "est. tokens",
            "betas",
            "requests",
            "polls",
            "redundant polls",
            "cache hit rate",
            "cost",
        ]),
    };
    page::render("matrix.html", page)
}

/// Tool-schema, system-prompt and body bytes per run, as one bar chart (three bars a run,
/// labelled `RUN · tools`, `RUN · system`, `RUN · body`).
fn grouped_bytes(m: &Matrix) -> Result<String, String> {
    let items: Vec<(String, f64)> = m
        .rows
        .iter()
        .flat_map(|r| {
            [
                (format!("{} · tools", r.label), r.tool_bytes as f64),
                (format!("{} · system", r.label), r.system_bytes as f64),
                (format!("{} · body", r.label), r.body_bytes as f64),
            ]
        })
        .collect();
    chart::hbars("Bytes of the first request", &items, "bytes")
}
