//! The diff of two Messages requests: sizes, tools, system prompt, headers, parameters and
//! injected context, after normalization of volatile values.

use serde::Serialize;
use serde_json::Value;

use super::headers::{diff_headers, HeadersDiff};
use super::norm::{Norm, NormalizedRow};
use super::text::{diff_text, TextDiff};
use super::tools::{diff_tools, ToolSide, ToolsDiff};
use super::DiffError;
use crate::api::normalize::Normalizer;
use crate::api::tools::ToolView;
use crate::api::{estimate_tokens, Message, MessagesRequest};

/// Parameters always shown (besides any key new to either side).
pub const TRACKED_PARAMS: &[&str] = &[
    "model",
    "max_tokens",
    "thinking",
    "context_management",
    "output_config",
    "tool_choice",
    "stream",
    "temperature",
    "metadata",
];

/// One side of a comparison.
#[derive(Clone, Debug)]
pub struct RequestSide<'a> {
    /// What this side is (`a.jsonl#0`).
    pub label: String,
    /// Exchange id in its trace.
    pub exchange: Option<u64>,
    /// Session label (`s1`, ...).
    pub session: Option<String>,
    /// Thread label (`main`, `sub-1`, ...).
    pub thread: Option<String>,
    /// Header fields as recorded.
    pub headers: &'a [(String, String)],
    /// The body as sent.
    pub body: &'a [u8],
}

/// Identity of one side in a report.
#[derive(Clone, Debug, Serialize)]
pub struct SideInfo {
    /// Label.
    pub label: String,
    /// Exchange id.
    pub exchange: Option<u64>,
    /// Session label.
    pub session: Option<String>,
    /// Thread.
    pub thread: Option<String>,
    /// Turn number in its thread (assistant messages before it).
    pub turn: usize,
}

/// One size metric per side, in wire bytes or counts.
#[derive(Clone, Debug, Serialize)]
pub struct SizeRow {
    /// `tools` (definitions sent), `loaded_tools` (definitions without
    /// `defer_loading`), `deferred_tools` (loadable through ToolSearch: announced or
    /// deferred definitions, as Claude Code counts them), `announced_tools` (names in the
    /// deferred-tools listing), `deferred_definitions` (definitions with `defer_loading`),
    /// `placeholder_tools`, `tool_bytes`, `system_bytes`, `messages_bytes`, `body_bytes`,
    /// `est_tokens`. Glossary: `docs/diff.md`, "Tool words".
    pub metric: String,
    /// Value in A.
    pub a: u64,
    /// Value in B.
    pub b: u64,
    /// `b - a`.
    pub delta: i64,
}

/// One `system` block.
#[derive(Clone, Debug, Serialize)]
pub struct SystemBlock {
    /// Index from 0.
    pub index: usize,
    /// Size of the block as sent, bytes.
    pub bytes: usize,
    /// Offset of the block's end from the start of `system`, bytes: where a cache
    /// breakpoint on it cuts the prompt.
    pub end_offset: usize,
    /// `cache_control` as compact JSON (a cache breakpoint), if set.
    pub cache_control: Option<String>,
}

/// The system-prompt part of a diff.
#[derive(Clone, Debug, Serialize)]
pub struct SystemDiff {
    /// Blocks of A.
    pub a_blocks: Vec<SystemBlock>,
    /// Blocks of B.
    pub b_blocks: Vec<SystemBlock>,
    /// True when the cache breakpoints sit on the same block indices.
    pub same_breakpoints: bool,
    /// Diff of the normalized text (blocks joined by a newline).
    pub text: TextDiff,
    /// The blocks paired by index, each with its own text diff (normalized): which
    /// cached block changed.
    pub blocks: Vec<BlockDiff>,
}

/// One `system` block of A paired with the block of B at the same index.
#[derive(Clone, Debug, Serialize)]
pub struct BlockDiff {
    /// Index in A (`None`: the block is new in B).
    pub a_index: Option<usize>,
    /// Index in B (`None`: the block was dropped).
    pub b_index: Option<usize>,
    /// Diff of the block's normalized text.
    pub text: TextDiff,
}

/// A parameter that differs.
#[derive(Clone, Debug, Serialize)]
pub struct ParamRow {
    /// Top-level key.
    pub key: String,
    /// True when the API documents the key.
    pub known: bool,
    /// Normalized compact JSON in A (`None`: absent).
    pub a: Option<String>,
    /// In B.
    pub b: Option<String>,
    /// True when the normalized values differ.
    pub changed: bool,
}

/// A piece of injected context: a `<system-reminder>` block or a `system`-role message.
#[derive(Clone, Debug, Serialize)]
pub struct InjectedItem {
    /// `system_reminder` or `system_message`.
    pub kind: String,
    /// `added`, `removed` or `changed`.
    pub status: String,
    /// Where, as `messages[i].content[j]`, in A.
    pub a_at: Option<String>,
    /// Where in B.
    pub b_at: Option<String>,
    /// Size in A, bytes of text.
    pub a_bytes: usize,
    /// Size in B.
    pub b_bytes: usize,
    /// Text diff (normalized).
    pub diff: TextDiff,
}

/// The diff of two requests.
#[derive(Clone, Debug, Serialize)]
pub struct RequestDiff {
    /// Side A.
    pub a: SideInfo,
    /// Side B.
    pub b: SideInfo,
    /// True when nothing differs after normalization, sizes and the conversation's messages
    /// aside: tools, system prompt, headers, parameters and injected context.
    pub identical: bool,
    /// Sizes.
    pub sizes: Vec<SizeRow>,
    /// Tools.
    pub tools: ToolsDiff,
    /// System prompt.
    pub system: SystemDiff,
    /// Headers.
    pub headers: HeadersDiff,
    /// Tracked parameters and every key present in only one side or changed.
    pub params: Vec<ParamRow>,
    /// Injected context that differs.
    pub injected: Vec<InjectedItem>,
    /// Normalization that was applied.
    pub normalized: Vec<NormalizedRow>,
}

impl RequestDiff {
    /// The size row for `metric`.
    pub fn size(&self, metric: &str) -> Option<&SizeRow> {
        self.sizes.iter().find(|r| r.metric == metric)
    }
}

fn parse<'a>(side: &RequestSide<'a>) -> Result<MessagesRequest, DiffError> {
    MessagesRequest::parse(side.body).map_err(|e| DiffError::Body {
        input: side.label.clone(),
        message: e.to_string(),
    })
}

/// Diff two requests.
///
/// Errors: [`DiffError::Body`] naming the side whose body is not a Messages request.
pub fn diff_requests(
    a: &RequestSide,
    b: &RequestSide,
    normalizer: &Normalizer,
) -> Result<RequestDiff, DiffError> {
    let ra = parse(a)?;
    let rb = parse(b)?;
    Ok(diff_parsed(a, &ra, b, &rb, normalizer))
}

/// Diff two already parsed requests (`ra` parsed from `a.body`, `rb` from `b.body`).
pub fn diff_parsed(
    a: &RequestSide,
    ra: &MessagesRequest,
    b: &RequestSide,
    rb: &MessagesRequest,
    normalizer: &Normalizer,
) -> RequestDiff {
    let mut norm = Norm::new(normalizer);
    let tools = diff_tools(
        &ToolSide {
            req: ra,
            body: a.body,
        },
        &ToolSide {
            req: rb,
            body: b.body,
        },
        &mut norm,
    );
    let system = diff_system(ra, rb, &mut norm);
    let headers = diff_headers(a.headers, b.headers, ra.dialect, &mut norm);
    let params = diff_params(ra, rb, &mut norm);
    let injected = diff_injected(ra, rb, &mut norm);
    let identical = tools.identical
        && system.text.identical
        && system.same_breakpoints
        && headers.identical()
        && params.iter().all(|p| !p.changed)
        && injected.is_empty();
    let normalized = norm.rows();
    RequestDiff {
        a: info(a, ra),
        b: info(b, rb),
        identical,
        sizes: sizes(ra, rb),
        tools,
        system,
        headers,
        params,
        injected,
        normalized,
    }
}

fn info(s: &RequestSide, r: &MessagesRequest) -> SideInfo {
    SideInfo {
        label: s.label.clone(),
        exchange: s.exchange,
        session: s.session.clone(),
        thread: s.thread.clone(),
        turn: r.turn(),
    }
}

fn sizes(a: &MessagesRequest, b: &MessagesRequest) -> Vec<SizeRow> {
    let m = |r: &MessagesRequest| -> [(&'static str, u64); 11] {
        let v = ToolView::of(r);
        [
            ("tools", r.tools.len() as u64),
            ("loaded_tools", v.loaded.len() as u64),
            ("deferred_tools", v.deferred.len() as u64),
            ("announced_tools", v.announced.len() as u64),
            ("deferred_definitions", v.deferred_definitions.len() as u64),
            ("placeholder_tools", v.placeholders.len() as u64),
            ("tool_bytes", r.tools_bytes() as u64),
            ("system_bytes", r.system_bytes() as u64),
            ("messages_bytes", r.messages_bytes() as u64),
            ("body_bytes", r.body_bytes as u64),
            ("est_tokens", estimate_tokens(r.body_bytes)),
        ]
    };
    m(a).iter()
        .zip(m(b).iter())
        .map(|((k, x), (_, y))| SizeRow {
            metric: k.to_string(),
            a: *x,
            b: *y,
            delta: *y as i64 - *x as i64,
        })
        .collect()
}

/// The `system` blocks of a request with their sizes, ends and breakpoints.
pub fn system_blocks(r: &MessagesRequest) -> Vec<SystemBlock> {
    let Some(s) = &r.system else { return vec![] };
    s.blocks
        .iter()
        .enumerate()
        .map(|(i, b)| SystemBlock {
            index: i,
            bytes: b.span.len(),
            end_offset: b.span.end.saturating_sub(s.span.start),
            cache_control: b.cache_control.as_ref().map(Value::to_string),
        })
        .collect()
}

fn diff_system(a: &MessagesRequest, b: &MessagesRequest, norm: &mut Norm) -> SystemDiff {
    let ta = a.system.as_ref().map(|s| s.text()).unwrap_or_default();
    let tb = b.system.as_ref().map(|s| s.text()).unwrap_or_default();
    let text = if ta == tb {
        diff_text(&ta, &tb)
    } else {
        diff_text(&norm.a(&ta), &norm.b(&tb))
    };
    let (a_blocks, b_blocks) = (system_blocks(a), system_blocks(b));
    let bp = |v: &[SystemBlock]| -> Vec<usize> {
        v.iter()
            .filter(|b| b.cache_control.is_some())
            .map(|b| b.index)
            .collect()
    };
    let texts = |r: &MessagesRequest| -> Vec<String> {
        r.system.as_ref().map_or_else(Vec::new, |s| {
            s.blocks
                .iter()
                .map(|b| b.text().unwrap_or_default().to_string())
                .collect()
        })
    };
    let (xa, xb) = (texts(a), texts(b));
    let blocks = (0..xa.len().max(xb.len()))
        .map(|i| {
            let (ta, tb) = (xa.get(i), xb.get(i));
            let text = match (ta, tb) {
                (Some(x), Some(y)) if x == y => diff_text(x, y),
                _ => diff_text(
                    &ta.map(|t| norm.quiet(t)).unwrap_or_default(),
                    &tb.map(|t| norm.quiet(t)).unwrap_or_default(),
                ),
            };
            BlockDiff {
                a_index: ta.map(|_| i),
                b_index: tb.map(|_| i),
                text,
            }
        })
        .collect();
    SystemDiff {
        same_breakpoints: bp(&a_blocks) == bp(&b_blocks),
        a_blocks,
        b_blocks,
        text,
        blocks,
    }
}

fn diff_params(a: &MessagesRequest, b: &MessagesRequest, norm: &mut Norm) -> Vec<ParamRow> {
    let value = |r: &MessagesRequest, k: &str| -> Option<Value> {
        if k == "model" {
            return r.model.as_ref().map(|m| Value::String(m.clone()));
        }
        r.param(k).cloned()
    };
    let mut keys: Vec<String> = TRACKED_PARAMS.iter().map(|s| s.to_string()).collect();
    for p in a.params.iter().chain(b.params.iter()) {
        if !keys.contains(&p.key) {
            keys.push(p.key.clone());
        }
    }
    let mut rows = Vec::new();
    for k in keys {
        let (va, vb) = (value(a, &k), value(b, &k));
        if va.is_none() && vb.is_none() {
            continue;
        }
        // Shown as JSON text, normalized; compared over the values' text views, so a rule
        // stops where a string does instead of running on into the next member.
        let na = va.as_ref().map(|v| norm.a(&v.to_string()).into_owned());
        let nb = vb.as_ref().map(|v| norm.b(&v.to_string()).into_owned());
        let tracked = TRACKED_PARAMS.contains(&k.as_str())
            || (a.dialect == crate::api::Dialect::Gemini && k == "generationConfig");
        let changed =
            va.as_ref().map(|v| norm.quiet_value(v)) != vb.as_ref().map(|v| norm.quiet_value(v));
        if !tracked && !changed {
            continue;
        }
        let documented = match a.dialect {
            crate::api::Dialect::Responses => crate::api::responses::KNOWN_PARAMS,
            crate::api::Dialect::Gemini => crate::api::gemini::KNOWN_PARAMS,
            crate::api::Dialect::ChatCompletions => crate::api::chat::KNOWN_PARAMS,
            _ => crate::api::KNOWN_PARAMS,
        };
        rows.push(ParamRow {
            known: k == "model" || documented.contains(&k.as_str()),
            key: k,
            a: na,
            b: nb,
            changed,
        });
    }
    rows
}

/// A piece of context the client injected into the conversation.
#[derive(Clone, Debug, Serialize)]
pub struct Injected {
    /// `system_message` (a `system`-role message) or `system_reminder` (a text block
    /// opening with `<system-reminder>`).
    pub kind: &'static str,
    /// Where: `messages[i].content[j]`.
    pub at: String,
    /// Its text, whole.
    pub text: String,
}

/// The injected context of `r`, in message order: `system`-role messages and
/// `<system-reminder>` text blocks.
pub fn injected(r: &MessagesRequest) -> Vec<Injected> {
    let mut out = Vec::new();
    for (i, m) in r.messages.iter().enumerate() {
        let system = m.role == "system";
        for (j, b) in m.content.iter().enumerate() {
            let Some(t) = b.text().filter(|_| b.block_type() == "text") else {
                continue;
            };
            let kind = if system {
                "system_message"
            } else if t.trim_start().starts_with("<system-reminder>") {
                "system_reminder"
            } else {
                continue;
            };
            out.push(Injected {
                kind,
                at: at(m, i, j),
                text: t.to_string(),
            });
        }
    }
    out
}

fn at(m: &Message, i: usize, j: usize) -> String {
    if m.content_is_string {
        format!("messages[{i}].content")
    } else {
        format!("messages[{i}].content[{j}]")
    }
}

fn diff_injected(a: &MessagesRequest, b: &MessagesRequest, norm: &mut Norm) -> Vec<InjectedItem> {
    let ia = injected(a);
    let ib = injected(b);
    let na: Vec<String> = ia
        .iter()
        .map(|x| format!("{}\u{0}{}", x.kind, norm.a(&x.text)))
        .collect();
    let nb: Vec<String> = ib
        .iter()
        .map(|x| format!("{}\u{0}{}", x.kind, norm.b(&x.text)))
        .collect();
    let strip = |s: &str| {
        s.split_once('\u{0}')
            .map_or(String::new(), |(_, t)| t.to_string())
    };
    let mut out = Vec::new();
    let item = |status: &str, xa: Option<usize>, xb: Option<usize>| InjectedItem {
        kind: xa
            .map(|i| ia[i].kind)
            .or(xb.map(|i| ib[i].kind))
            .unwrap_or("")
            .to_string(),
        status: status.to_string(),
        a_at: xa.map(|i| ia[i].at.clone()),
        b_at: xb.map(|i| ib[i].at.clone()),
        a_bytes: xa.map_or(0, |i| ia[i].text.len()),
        b_bytes: xb.map_or(0, |i| ib[i].text.len()),
        diff: diff_text(
            &xa.map(|i| strip(&na[i])).unwrap_or_default(),
            &xb.map(|i| strip(&nb[i])).unwrap_or_default(),
        ),
    };
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &na, &nb) {
        let (tag, ra, rb) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => {}
            similar::DiffTag::Delete => out.extend(ra.map(|i| item("removed", Some(i), None))),
            similar::DiffTag::Insert => out.extend(rb.map(|j| item("added", None, Some(j)))),
            similar::DiffTag::Replace => {
                let (ra, rb): (Vec<usize>, Vec<usize>) = (ra.collect(), rb.collect());
                let n = ra.len().min(rb.len());
                for k in 0..n {
                    if ia[ra[k]].kind == ib[rb[k]].kind {
                        out.push(item("changed", Some(ra[k]), Some(rb[k])));
                    } else {
                        out.push(item("removed", Some(ra[k]), None));
                        out.push(item("added", None, Some(rb[k])));
                    }
                }
                out.extend(ra[n..].iter().map(|&i| item("removed", Some(i), None)));
                out.extend(rb[n..].iter().map(|&j| item("added", None, Some(j))));
            }
        }
    }
    out
}
