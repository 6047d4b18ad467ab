//! The shareable version-diff report (`agentwire report diff`): a [`DiffReport`] with its
//! inputs described ([`InputMeta`]), as standalone Markdown, a self-contained HTML page,
//! or JSON. The figures are the diff layer's; this module only words and lays them out:
//! a title naming both sides, a summary in plain words, the figures, per-tool and
//! per-system-block diffs in full, schema changes with each property's type, enum values,
//! default and description, and a glossary of every label shown.

use serde::Serialize;

use super::chart::{self, ToolBar};
use super::diff::{mechanisms, state, status, tool_groups};
use super::glossary::{self, Entry};
use super::meta::{InputMeta, Meta};
use super::page;
use super::textview::{view, DiffView};
use super::DocFormat;
use crate::api::estimate_tokens;
use crate::diff::headers::HeadersDiff;
use crate::diff::request::{RequestDiff, SideInfo, SystemBlock};
use crate::diff::schema::{PropertyFacts, SchemaChange};
use crate::diff::select::DiffReport;
use crate::diff::tools::{ToolEntry, ToolStatus, ToolsDiff};
use crate::text::fmt::{pct_change, thousands};

/// Rendering options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Shorten diff lines longer than this many characters (`…` marks the cut); `None`
    /// (the default) shows every line whole.
    pub max_line: Option<usize>,
}

/// The label a report shows for a size metric of the diff layer.
pub fn metric_label(metric: &str) -> &str {
    match metric {
        "tools" => "tool definitions",
        "loaded_tools" => "loaded tools",
        "deferred_tools" => "deferred tools",
        "announced_tools" => "announced for ToolSearch",
        "deferred_definitions" => "deferred definitions",
        "placeholder_tools" => "placeholders",
        "tool_bytes" => "tool bytes",
        "system_bytes" => "system bytes",
        "messages_bytes" => "messages bytes",
        "body_bytes" => "body bytes",
        "est_tokens" => "est. tokens",
        other => other,
    }
}

#[derive(Serialize)]
struct Figure {
    label: String,
    a: u64,
    b: u64,
    delta: i64,
    pct: String,
}

#[derive(Serialize)]
struct ToolRow {
    name: String,
    status: &'static str,
    a_state: &'static str,
    b_state: &'static str,
    a_bytes: usize,
    b_bytes: usize,
    delta: i64,
}

#[derive(Serialize)]
struct NamedList {
    label: &'static str,
    names: Vec<String>,
}

#[derive(Serialize)]
struct Facts {
    present: bool,
    r#type: Option<String>,
    r#enum: Vec<String>,
    default: Option<String>,
    description: Option<String>,
}

impl Facts {
    fn of(p: &Option<PropertyFacts>) -> Facts {
        match p {
            Some(p) => Facts {
                present: true,
                r#type: p.r#type.clone(),
                r#enum: p.r#enum.clone(),
                default: p.default.clone(),
                description: p.description.clone(),
            },
            None => Facts {
                present: false,
                r#type: None,
                r#enum: vec![],
                default: None,
                description: None,
            },
        }
    }
}

#[derive(Serialize)]
struct SchemaRow {
    property: String,
    change: String,
    a_value: Option<String>,
    b_value: Option<String>,
    a: Facts,
    b: Facts,
}

#[derive(Serialize)]
struct ToolDetail {
    name: String,
    status: &'static str,
    a_bytes: usize,
    b_bytes: usize,
    other: Vec<String>,
    schema: Vec<SchemaRow>,
    description: Option<DiffView>,
}

#[derive(Serialize)]
struct BlockRow {
    index: usize,
    a_bytes: Option<usize>,
    b_bytes: Option<usize>,
    a_cache: Option<String>,
    b_cache: Option<String>,
    status: &'static str,
    diff: Option<DiffView>,
}

#[derive(Serialize)]
struct Pair {
    name: String,
    a: Option<String>,
    b: Option<String>,
    note: &'static str,
}

#[derive(Serialize)]
struct Injected {
    kind: String,
    status: String,
    at: String,
    diff: DiffView,
}

#[derive(Serialize)]
struct Comparison {
    a_label: String,
    b_label: String,
    identical: bool,
    figures: Vec<Figure>,
    tool_lists: Vec<NamedList>,
    mechanisms_a: String,
    mechanisms_b: String,
    tools: Vec<ToolRow>,
    unchanged_tools: usize,
    tool_details: Vec<ToolDetail>,
    blocks: Vec<BlockRow>,
    breakpoints_moved: bool,
    betas_added: Vec<String>,
    betas_removed: Vec<String>,
    /// The headers the betas were read from, in the dialect's own names (`anthropic-beta`;
    /// `openai-beta, x-codex-beta-features`).
    beta_headers: &'static str,
    /// Sides recorded without header lines (their betas are unknown).
    betas_unknown: Vec<&'static str>,
    headers: Vec<Pair>,
    params: Vec<Pair>,
    injected: Vec<Injected>,
    normalized: Vec<Pair>,
    chart: minijinja::Value,
}

#[derive(Serialize)]
struct Page<'r> {
    meta: Meta,
    a_name: String,
    b_name: String,
    summary: Vec<String>,
    comparisons: Vec<Comparison>,
    problems: &'r [String],
    unmatched: Vec<String>,
    glossary: Vec<Entry>,
}

#[derive(Serialize)]
struct JsonDoc<'r> {
    report: &'static str,
    meta: &'r Meta,
    summary: &'r [String],
    glossary: &'r [Entry],
    diff: &'r DiffReport,
}

fn signed_tokens(bytes: i64) -> String {
    let t = estimate_tokens(bytes.unsigned_abs() as usize) as i64;
    let t = if bytes < 0 { -t } else { t };
    format!("≈{}{} tokens", if t >= 0 { "+" } else { "" }, thousands(t))
}

fn signed_bytes(n: i64) -> String {
    format!("{}{} bytes", if n >= 0 { "+" } else { "" }, thousands(n))
}

fn names(v: &[String]) -> String {
    v.join(", ")
}

/// The summary of one comparison in plain words: the tool definitions, their bytes, the
/// system prompt, the betas, the parameters and the estimated tokens, a sentence each.
pub(crate) fn summary(d: &RequestDiff, a: &str, b: &str) -> Vec<String> {
    let mut out = tool_sentences(d, a, b);
    out.extend(tool_bytes_sentence(d));
    out.push(system_sentence(d));
    out.extend(betas_sentence(&d.headers));
    out.extend(params_sentence(d));
    out.push(tokens_sentence(d));
    out
}

/// A size row's A and B values and change (zeros when the diff has no such row).
fn size(d: &RequestDiff, metric: &str) -> (u64, u64, i64) {
    d.size(metric).map_or((0, 0, 0), |r| (r.a, r.b, r.delta))
}

/// How many tool definitions each side sends, the groups that moved (added, removed,
/// deferred, …) by name, and the changed definitions with their bytes.
fn tool_sentences(d: &RequestDiff, a: &str, b: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (ta, tb, _) = size(d, "tools");
    let t = &d.tools;
    if ta == tb && t.identical {
        out.push(format!(
            "{b} sends the same {tb} tool definitions as {a}, unchanged."
        ));
    } else if ta == tb {
        out.push(format!("{b} sends {tb} tool definitions, as {a} does."));
    } else {
        out.push(format!(
            "{b} sends {tb} tool definitions where {a} sends {ta}."
        ));
    }
    // Changed definitions get their own sentence, with the bytes, below.
    for (v, _, what) in tool_groups(t) {
        if !v.is_empty() && !std::ptr::eq(v, &t.changed) {
            let noun = if v.len() == 1 { "tool" } else { "tools" };
            out.push(format!("{} {noun} {what}: {}.", v.len(), names(v)));
        }
    }
    if !t.changed.is_empty() {
        let bytes: i64 = t
            .entries
            .iter()
            .filter(|e| e.status == ToolStatus::Changed)
            .map(|e| e.delta)
            .sum();
        let defs = if t.changed.len() == 1 {
            "tool definition"
        } else {
            "tool definitions"
        };
        out.push(format!(
            "{} {defs} changed ({}, {}): {}.",
            t.changed.len(),
            signed_bytes(bytes),
            signed_tokens(bytes),
            names(&t.changed)
        ));
    }
    out
}

/// The bytes of all tool definitions together, when they changed.
fn tool_bytes_sentence(d: &RequestDiff) -> Option<String> {
    let (ba, bb, bd) = size(d, "tool_bytes");
    (bd != 0).then(|| {
        format!(
            "All tool definitions together: {} → {} bytes ({}, {:+.1}%, {}).",
            thousands(ba as i64),
            thousands(bb as i64),
            signed_bytes(bd),
            if ba == 0 {
                0.0
            } else {
                bd as f64 / ba as f64 * 100.0
            },
            signed_tokens(bd)
        )
    })
}

/// The system prompt: unchanged, or how it grew or shrank, which blocks changed, and how
/// much of the difference the normalization rules took away.
fn system_sentence(d: &RequestDiff) -> String {
    let (sa, sb, sd) = size(d, "system_bytes");
    if d.system.text.identical && sd == 0 {
        return "The system prompt is unchanged.".into();
    }
    let growth = if sa == 0 {
        String::new()
    } else if sd != 0 {
        let p = (sd as f64 / sa as f64 * 100.0).abs();
        // Whole percents, but a change under 10% keeps a decimal (never "grew 0%").
        let p = if p < 10.0 {
            format!("{p:.1}")
        } else {
            format!("{p:.0}")
        };
        let verb = if sd > 0 { "grew" } else { "shrank" };
        format!(" {verb} {p}%")
    } else {
        " kept its size".to_string()
    };
    format!(
        "The system prompt{growth} ({} → {} bytes){}.",
        thousands(sa as i64),
        thousands(sb as i64),
        system_blocks_changed(d, sd)
    )
}

/// `; only block 2 changed` (or several), and the bytes normalized away, for
/// [`system_sentence`]; `sd` is the system prompt's change in bytes.
fn system_blocks_changed(d: &RequestDiff, sd: i64) -> String {
    let changed_blocks: Vec<String> = d
        .system
        .blocks
        .iter()
        .filter(|x| !x.text.identical)
        .map(|x| x.a_index.or(x.b_index).unwrap_or(0).to_string())
        .collect();
    let mut which = match changed_blocks.len() {
        0 => String::new(),
        1 => format!("; only block {} changed", changed_blocks[0]),
        _ => format!("; blocks {} changed", changed_blocks.join(", ")),
    };
    // Bytes can differ where texts compare the same: the volatile values the rules
    // replaced (a working directory, a date) have other lengths.
    let normalized_delta: i64 = d
        .system
        .blocks
        .iter()
        .map(|x| x.text.b_bytes as i64 - x.text.a_bytes as i64)
        .sum();
    let away = sd - normalized_delta;
    if away != 0 && !d.normalized.is_empty() {
        which.push_str(&format!(
            "; {} of the difference are values normalized away (see \"Normalized before comparing\")",
            signed_bytes(away)
        ));
    }
    which
}

/// The betas added and removed (in the dialect's beta headers), when any were.
fn betas_sentence(h: &HeadersDiff) -> Option<String> {
    if h.betas_added.is_empty() && h.betas_removed.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    if !h.betas_added.is_empty() {
        parts.push(format!("added {}", names(&h.betas_added)));
    }
    if !h.betas_removed.is_empty() {
        parts.push(format!("removed {}", names(&h.betas_removed)));
    }
    Some(format!("Betas ({}): {}.", h.beta_headers, parts.join("; ")))
}

/// The parameters that changed, by name, when any did.
fn params_sentence(d: &RequestDiff) -> Option<String> {
    let changed_params: Vec<String> = d
        .params
        .iter()
        .filter(|p| p.changed)
        .map(|p| p.key.clone())
        .collect();
    (!changed_params.is_empty()).then(|| format!("Parameters changed: {}.", names(&changed_params)))
}

/// The request's estimated input tokens on each side.
fn tokens_sentence(d: &RequestDiff) -> String {
    let (ea, eb, ed) = size(d, "est_tokens");
    format!(
        "Estimated input tokens of the request: {} → {} ({}).",
        thousands(ea as i64),
        thousands(eb as i64),
        if ed == 0 {
            "no change".to_string()
        } else {
            format!("{}{}", if ed > 0 { "+" } else { "" }, thousands(ed))
        }
    )
}

fn facts_row(c: &SchemaChange) -> SchemaRow {
    SchemaRow {
        property: if c.path.is_empty() {
            "(schema)".into()
        } else {
            c.path.clone()
        },
        change: c.change.clone(),
        a_value: c.a.clone(),
        b_value: c.b.clone(),
        a: Facts::of(&c.a_property),
        b: Facts::of(&c.b_property),
    }
}

fn tool_chart(entries: &[ToolEntry], a: &str, b: &str, html: bool) -> minijinja::Value {
    if !html {
        return minijinja::Value::from(());
    }
    let mut bars: Vec<ToolBar> = entries
        .iter()
        .map(|e| ToolBar {
            name: e.name.clone(),
            a: e.a_bytes as u64,
            b: e.b_bytes as u64,
            b_state: e.b,
        })
        .collect();
    bars.sort_by(|x, y| y.a.max(y.b).cmp(&x.a.max(x.b)).then(x.name.cmp(&y.name)));
    page::svg(chart::tool_bytes(&bars, a, b))
}

fn block(b: Option<&SystemBlock>) -> (Option<usize>, Option<String>) {
    (b.map(|b| b.bytes), b.and_then(|b| b.cache_control.clone()))
}

fn comparison(d: &RequestDiff, a_name: &str, b_name: &str, o: &Options, html: bool) -> Comparison {
    let t = &d.tools;
    let h = &d.headers;
    let moved: Vec<&ToolEntry> = t
        .entries
        .iter()
        .filter(|e| e.status != ToolStatus::Same || e.delta != 0)
        .collect();
    Comparison {
        a_label: side_label(&d.a, a_name),
        b_label: side_label(&d.b, b_name),
        identical: d.identical,
        figures: figures(d),
        tool_lists: tool_lists(t),
        mechanisms_a: mechanisms(&t.a_mechanisms),
        mechanisms_b: mechanisms(&t.b_mechanisms),
        tools: moved.iter().map(|e| tool_row(e)).collect(),
        unchanged_tools: t.entries.len() - moved.len(),
        tool_details: tool_details(t, o),
        blocks: block_rows(d, o),
        breakpoints_moved: !d.system.same_breakpoints,
        betas_added: h.betas_added.clone(),
        betas_removed: h.betas_removed.clone(),
        beta_headers: h.beta_headers,
        betas_unknown: [("A", h.a_known), ("B", h.b_known)]
            .into_iter()
            .filter(|(_, known)| !known)
            .map(|(side, _)| side)
            .collect(),
        headers: header_pairs(h),
        params: param_pairs(d),
        injected: injected_rows(d, o),
        normalized: normalized_pairs(d),
        chart: tool_chart(&t.entries, a_name, b_name, html),
    }
}

/// One side of a comparison as its heading names it: `A — a.jsonl#3 (s1/main, turn 2)`.
fn side_label(s: &SideInfo, name: &str) -> String {
    format!(
        "{name} — {} ({}/{}, turn {})",
        s.label,
        s.session.as_deref().unwrap_or("?"),
        s.thread.as_deref().unwrap_or("?"),
        s.turn
    )
}

/// The size figures (tools, bytes, tokens), each with its change in percent of A.
fn figures(d: &RequestDiff) -> Vec<Figure> {
    d.sizes
        .iter()
        .map(|r| Figure {
            label: metric_label(&r.metric).to_string(),
            a: r.a,
            b: r.b,
            delta: r.delta,
            pct: pct_change(r.a, r.b),
        })
        .collect()
}

/// The tool groups that are not empty (added, removed, deferred, …), with their names.
fn tool_lists(t: &ToolsDiff) -> Vec<NamedList> {
    tool_groups(t)
        .into_iter()
        .filter(|(v, _, _)| !v.is_empty())
        .map(|(v, label, _)| NamedList {
            label,
            names: v.clone(),
        })
        .collect()
}

/// A tool's row in the tools table.
fn tool_row(e: &ToolEntry) -> ToolRow {
    ToolRow {
        name: e.name.clone(),
        status: status(e.status),
        a_state: state(e.a),
        b_state: state(e.b),
        a_bytes: e.a_bytes,
        b_bytes: e.b_bytes,
        delta: e.delta,
    }
}

/// The changed tool definitions in detail: other fields, schema changes, description
/// diff.
fn tool_details(t: &ToolsDiff, o: &Options) -> Vec<ToolDetail> {
    t.entries
        .iter()
        .filter(|e| e.status == ToolStatus::Changed)
        .map(|e| ToolDetail {
            name: e.name.clone(),
            status: status(e.status),
            a_bytes: e.a_bytes,
            b_bytes: e.b_bytes,
            other: e.other.clone(),
            schema: e.schema.iter().map(facts_row).collect(),
            description: e.description.as_ref().map(|x| view(x, o.max_line)),
        })
        .collect()
}

/// One row per system block position on either side: sizes, cache control, status, and
/// the text diff of a changed block.
fn block_rows(d: &RequestDiff, o: &Options) -> Vec<BlockRow> {
    let n = d.system.a_blocks.len().max(d.system.b_blocks.len());
    (0..n)
        .map(|i| {
            let (a_bytes, a_cache) = block(d.system.a_blocks.get(i));
            let (b_bytes, b_cache) = block(d.system.b_blocks.get(i));
            let bd = d
                .system
                .blocks
                .iter()
                .find(|x| x.a_index == Some(i) || x.b_index == Some(i));
            let status = match (a_bytes, b_bytes, bd) {
                (None, Some(_), _) => "added",
                (Some(_), None, _) => "removed",
                (_, _, Some(x)) if !x.text.identical => "changed",
                _ if a_cache != b_cache => "changed",
                _ => "same",
            };
            BlockRow {
                index: i,
                a_bytes,
                b_bytes,
                a_cache,
                b_cache,
                status,
                diff: bd
                    .filter(|x| !x.text.identical)
                    .map(|x| view(&x.text, o.max_line)),
            }
        })
        .collect()
}

/// The headers table: the dialect's version header (`anthropic-version`; OpenAI and Gemini
/// have none) and `user-agent` always, then every changed header.
fn header_pairs(h: &HeadersDiff) -> Vec<Pair> {
    let mut headers: Vec<Pair> = h
        .version_header
        .map(|name| Pair {
            name: name.into(),
            a: h.a_version.clone(),
            b: h.b_version.clone(),
            note: "",
        })
        .into_iter()
        .collect();
    headers.push(Pair {
        name: "user-agent".into(),
        a: h.a_user_agent.clone(),
        b: h.b_user_agent.clone(),
        note: "",
    });
    headers.extend(h.changed.iter().map(|c| Pair {
        name: c.name.clone(),
        a: c.a.clone(),
        b: c.b.clone(),
        note: "",
    }));
    headers
}

/// The parameters table, each marked changed or same.
fn param_pairs(d: &RequestDiff) -> Vec<Pair> {
    d.params
        .iter()
        .map(|p| Pair {
            name: p.key.clone(),
            a: p.a.clone(),
            b: p.b.clone(),
            note: match (p.changed, p.known) {
                (true, _) => "changed",
                (false, _) => "same",
            },
        })
        .collect()
}

/// The injected context that differs (system reminders, system-role messages), with
/// where it sits and its text diff.
fn injected_rows(d: &RequestDiff, o: &Options) -> Vec<Injected> {
    d.injected
        .iter()
        .map(|i| Injected {
            kind: if i.kind == "system_reminder" {
                "system reminder".into()
            } else {
                i.kind.replace('_', " ")
            },
            status: i.status.clone(),
            at: i.b_at.clone().or(i.a_at.clone()).unwrap_or_default(),
            diff: view(&i.diff, o.max_line),
        })
        .collect()
}

/// The values the normalization rules replaced before comparing, by rule.
fn normalized_pairs(d: &RequestDiff) -> Vec<Pair> {
    d.normalized
        .iter()
        .map(|n| Pair {
            name: n.rule.clone(),
            a: Some(n.a.to_string()),
            b: Some(n.b.to_string()),
            note: "",
        })
        .chain(std::iter::empty())
        .collect()
}

/// Where a compared request sits: `s1/main turn 2`.
fn place(s: &SideInfo) -> String {
    format!(
        "{}/{} turn {}",
        s.session.as_deref().unwrap_or("?"),
        s.thread.as_deref().unwrap_or("?"),
        s.turn
    )
}

/// The summary of the whole report: for one comparison its summary; for several (`--all`)
/// how many pairs were compared and differ, then each differing pair's summary, labelled
/// with where it sits; and how many requests found no partner.
fn report_summary(r: &DiffReport, a: &str, b: &str) -> Vec<String> {
    let mut out = match r.comparisons.as_slice() {
        [] => vec!["No requests to compare.".to_string()],
        [d] => summary(d, a, b),
        all => {
            let differ: Vec<&RequestDiff> = all.iter().filter(|d| !d.identical).collect();
            let mut out = vec![format!(
                "{} request pairs compared, aligned by session, thread and turn: {} identical after normalization (conversation messages aside), {} differ.",
                all.len(),
                all.len() - differ.len(),
                differ.len()
            )];
            for d in differ {
                let (pa, pb) = (place(&d.a), place(&d.b));
                let at = if pa == pb {
                    pa
                } else {
                    format!("{pa} → {pb}")
                };
                out.push(format!("At {at}: {}", summary(d, a, b).join(" ")));
            }
            out
        }
    };
    if !r.unmatched.is_empty() {
        out.push(format!(
            "{} request{} found no partner on the other side (listed under Unmatched requests).",
            r.unmatched.len(),
            if r.unmatched.len() == 1 { "" } else { "s" }
        ));
    }
    out
}

/// Title of a diff report: the two versions, route and settings.
pub fn title(a: &InputMeta, b: &InputMeta) -> String {
    let (sa, sb) = (a.setup(), b.setup());
    let same_client = a.client.is_some() && a.client == b.client;
    let b_name = match (&b.version, same_client) {
        (Some(v), true) => v.clone(),
        _ => b.name(),
    };
    if sa == sb {
        format!("{} → {b_name} ({sa})", a.name())
    } else {
        format!("{} ({sa}) → {b_name} ({sb})", a.name())
    }
}

/// Labels of the report, for the glossary.
fn labels(c: &[Comparison]) -> Vec<String> {
    let mut v: Vec<String> = [
        "figure",
        "A",
        "B",
        "delta",
        "%",
        "tool",
        "status",
        "A state",
        "B state",
        "A bytes",
        "B bytes",
        "block",
        "cache_control",
        "header",
        "key",
        "rule",
        "property",
        "change",
        "type",
        "enum",
        "default",
        "description",
        "same",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for x in c {
        v.extend(x.beta_headers.split(", ").map(str::to_string));
        v.extend(x.figures.iter().map(|f| f.label.clone()));
        v.extend(x.tools.iter().map(|t| t.status.to_string()));
        for t in &x.tools {
            v.push(t.a_state.into());
            v.push(t.b_state.into());
        }
        v.extend(x.tool_lists.iter().map(|l| l.label.to_string()));
        v.extend(x.blocks.iter().map(|b| b.status.to_string()));
        v.extend(x.injected.iter().map(|i| i.kind.clone()));
        v.extend(x.injected.iter().map(|i| i.status.clone()));
    }
    v
}

/// Render a diff report for sharing. `a` and `b` describe the two inputs.
pub fn render(
    report: &DiffReport,
    a: InputMeta,
    b: InputMeta,
    format: DocFormat,
    o: &Options,
) -> String {
    let (a_name, b_name) = (a.name(), b.name());
    let meta = Meta::new(title(&a, &b), vec![a, b]);
    let summary = report_summary(report, &a_name, &b_name);
    let html = format == DocFormat::Html;
    let comparisons: Vec<Comparison> = report
        .comparisons
        .iter()
        .map(|d| comparison(d, &a_name, &b_name, o, html))
        .collect();
    let terms = labels(&comparisons);
    let glossary = glossary::for_terms(terms.iter().map(String::as_str));
    if format == DocFormat::Json {
        let doc = JsonDoc {
            report: "diff",
            meta: &meta,
            summary: &summary,
            glossary: &glossary,
            diff: report,
        };
        return crate::text::safe_json::pretty(&doc);
    }
    let page = Page {
        meta,
        a_name,
        b_name,
        summary,
        comparisons,
        problems: &report.problems,
        unmatched: report
            .unmatched
            .iter()
            .map(|u| format!("{} #{} ({}, turn {})", u.side, u.exchange, u.thread, u.turn))
            .collect(),
        glossary,
    };
    page::render(if html { "diff.html" } else { "diff.md" }, page)
}

#[cfg(test)]
mod tests {
    use crate::api::normalize::Normalizer;
    use crate::diff::request::{diff_requests, RequestSide};

    fn side<'a>(label: &str, body: &'a [u8]) -> RequestSide<'a> {
        RequestSide {
            label: label.into(),
            exchange: Some(0),
            session: None,
            thread: None,
            headers: &[],
            body,
        }
    }

    /// Reported by a new user: a recording from this machine against a capture from
    /// another said "The system prompt shrank 0% (6,034 → 6,009 bytes); only block 0
    /// changed" while the figures table showed block 2 at another size marked `same`
    /// (its working directory, normalized away, is 25 bytes longer). The summary now says
    /// how much of the difference the normalization accounts for.
    #[test]
    fn blocks_that_differ_only_in_normalized_values_are_explained() {
        let body = |intro: &str, cwd: &str| {
            serde_json::to_vec(&serde_json::json!({"model": "m", "max_tokens": 1,
                "system": [{"type": "text", "text": intro},
                           {"type": "text", "text": format!("Env\n - Primary working directory: {cwd}\n - Shell: bash")}],
                "messages": [{"role": "user", "content": "hi"}]}))
            .unwrap()
        };
        let a = body(
            "You are a CLI.",
            "/tmp/a-much-longer-working-directory-name",
        );
        let b = body("You are a CLI tool.", "/tmp/w");
        let d = diff_requests(&side("a", &a), &side("b", &b), &Normalizer::defaults()).unwrap();
        let lines = super::summary(&d, "A", "B");
        let system = lines
            .iter()
            .find(|l| l.starts_with("The system prompt"))
            .unwrap();
        assert!(system.contains("only block 0 changed"), "{system}");
        // The working directory is 35 bytes shorter in B (41 vs 6 characters); the intro
        // grew 5: -30 in all, -35 of it normalized away.
        assert!(system.contains("(159 → 129 bytes)"), "{system}");
        assert!(
            system.contains("-35 bytes of the difference are values normalized away"),
            "{system}"
        );
        // Without a normalized difference there is nothing to explain.
        let c = body(
            "You are a CLI tool.",
            "/tmp/a-much-longer-working-directory-name",
        );
        let d = diff_requests(&side("a", &a), &side("c", &c), &Normalizer::defaults()).unwrap();
        let lines = super::summary(&d, "A", "C");
        let system = lines
            .iter()
            .find(|l| l.starts_with("The system prompt"))
            .unwrap();
        assert!(system.contains("grew"), "{system}");
        assert!(!system.contains("normalized away"), "{system}");
    }
}
