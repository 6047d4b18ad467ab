//! The version × settings × agent matrix: one row per recorded run (its first main-thread
//! request) with tool and size figures in the provider's own terms (the API dialect and
//! path it was sent on, the beta header values of that provider), and which runs send
//! identical tool definitions. A pure table builder: the recorder runs the CLIs and hands
//! over `(label, trace)` pairs.

use serde::Serialize;

use super::select::items_of;
use crate::api::betas::BetaSet;
use crate::api::estimate_tokens;
use crate::api::normalize::{Hits, Normalizer};
use crate::api::tools::ToolView;
use crate::trace::Trace;

/// One run of the matrix.
#[derive(Clone, Debug, Serialize)]
pub struct MatrixRow {
    /// Run label (`claude-code@2.1.304 ENABLE_TOOL_SEARCH=true`).
    pub label: String,
    /// The agent: the label's CLI name (`claude-code`, `codex`, `gemini`, `opencode`).
    pub agent: String,
    /// API dialect of the request ([`crate::api::Dialect::name`]: `messages`,
    /// `responses`, `chat_completions`, `gemini`; `None`: no readable request).
    pub dialect: Option<String>,
    /// The provider whose API that is (`anthropic`, `openai`, `google`).
    pub provider: Option<String>,
    /// Request path without the query (`/v1/messages`,
    /// `/v1beta/models/gemini-2.5-pro:streamGenerateContent`).
    pub path: Option<String>,
    /// Exchange id of the request the row describes (`None`: no readable request).
    pub exchange: Option<u64>,
    /// Tool definitions sent.
    pub tools: usize,
    /// Tools loadable through ToolSearch (announced or deferred definitions), as Claude
    /// Code counts them.
    pub deferred_tools: usize,
    /// Names in the deferred-tools listing.
    pub announced_tools: usize,
    /// `defer_loading` definitions that stand for no tool.
    pub placeholder_tools: usize,
    /// Bytes of the `tools` array as sent.
    pub tool_bytes: usize,
    /// Bytes of `system` as sent.
    pub system_bytes: usize,
    /// Bytes of the body.
    pub body_bytes: usize,
    /// Estimated tokens of the body.
    pub est_tokens: u64,
    /// Beta names the request's beta headers carry ([`beta_headers`](Self::beta_headers)),
    /// in order sent; `None`: recorded without header lines (unknown, not empty).
    pub betas: Option<Vec<String>>,
    /// The header fields the provider carries betas in (`anthropic-beta`;
    /// `openai-beta, x-codex-beta-features`; Gemini: none, so `(none)`).
    pub beta_headers: String,
    /// Tool-definition group: runs with the same letter send identical (normalized)
    /// `tools` arrays. `A` is the first run's group.
    pub tool_group: String,
}

/// The matrix.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    /// Rows in input order.
    pub rows: Vec<MatrixRow>,
    /// Groups of runs with identical tool definitions (groups of one left out).
    pub identical_tools: Vec<Vec<String>>,
    /// Traces or requests that could not be read.
    pub problems: Vec<String>,
}

/// Build the matrix from recorded runs.
pub fn build(runs: &[(String, &Trace)], norm: &Normalizer) -> Matrix {
    let mut problems = Vec::new();
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut rows = Vec::new();
    for (label, trace) in runs {
        let its = items_of(trace, label, &mut problems);
        let Some(it) = its.iter().find(|i| i.thread == "main").or(its.first()) else {
            problems.push(format!("{label}: no readable POST /v1/messages request"));
            rows.push(MatrixRow {
                label: label.clone(),
                agent: agent_of(label),
                dialect: None,
                provider: None,
                path: None,
                exchange: None,
                tools: 0,
                deferred_tools: 0,
                announced_tools: 0,
                placeholder_tools: 0,
                tool_bytes: 0,
                system_bytes: 0,
                body_bytes: 0,
                est_tokens: 0,
                betas: None,
                beta_headers: String::new(),
                tool_group: "-".into(),
            });
            continue;
        };
        let r = &it.req;
        let body = &it.body;
        // Normalized over the JSON's text view, as `diff` compares tool definitions.
        let key = r
            .tools_span
            .map(|s| norm.json(s.slice(body), &mut Hits::new()))
            .unwrap_or_default();
        let g = match groups.iter().position(|(k, _)| *k == key) {
            Some(g) => g,
            None => {
                groups.push((key, Vec::new()));
                groups.len() - 1
            }
        };
        groups[g].1.push(label.clone());
        let v = ToolView::of(r);
        let headers = &it.x.request.headers;
        let betas = BetaSet::from_headers_of(r.dialect, headers);
        rows.push(MatrixRow {
            label: label.clone(),
            agent: agent_of(label),
            dialect: Some(r.dialect.name().to_string()),
            provider: Some(r.dialect.provider().name().to_string()),
            path: Some(it.x.path().to_string()),
            exchange: Some(it.x.id),
            tools: r.tools.len(),
            deferred_tools: v.deferred.len(),
            announced_tools: v.announced.len(),
            placeholder_tools: v.placeholders.len(),
            tool_bytes: r.tools_bytes(),
            system_bytes: r.system_bytes(),
            body_bytes: r.body_bytes,
            est_tokens: estimate_tokens(r.body_bytes),
            betas: betas.known.then_some(betas.names),
            beta_headers: beta_fields(r.dialect),
            tool_group: group_name(g),
        });
    }
    Matrix {
        rows,
        identical_tools: groups
            .into_iter()
            .map(|(_, v)| v)
            .filter(|v| v.len() > 1)
            .collect(),
        problems,
    }
}

/// The beta header fields of `d` joined with `, `, `(none)` for none.
fn beta_fields(d: crate::api::Dialect) -> String {
    let f = crate::api::betas::fields_of(d);
    if f.is_empty() {
        return "(none)".into();
    }
    f.join(", ")
}

/// The CLI name of a run label: what precedes its `@` (`opencode@1.18.33 route=openai` →
/// `opencode`), else its first word.
fn agent_of(label: &str) -> String {
    let first = label.split(' ').next().unwrap_or(label);
    first.split('@').next().unwrap_or(first).to_string()
}

fn group_name(i: usize) -> String {
    let mut s = String::new();
    let mut n = i;
    loop {
        s.insert(0, (b'A' + (n % 26) as u8) as char);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names() {
        assert_eq!(group_name(0), "A");
        assert_eq!(group_name(25), "Z");
        assert_eq!(group_name(26), "AA");
    }
}
