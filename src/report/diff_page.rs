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
use crate::diff::request::{RequestDiff, SideInfo, SystemBlock};
use crate::diff::schema::{PropertyFacts, SchemaChange};
use crate::diff::select::DiffReport;
use crate::diff::tools::{ToolEntry, ToolStatus};
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

/// The summary of one comparison in plain words.
pub(crate) fn summary(d: &RequestDiff, a: &str, b: &str) -> Vec<String> {
    let mut out = Vec::new();
    let size = |m: &str| d.size(m).map_or((0, 0, 0), |r| (r.a, r.b, r.delta));
    let (ta, tb, _) = size("tools");
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
    let (ba, bb, bd) = size("tool_bytes");
    if bd != 0 {
        out.push(format!(
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
        ));
    }
    let (sa, sb, sd) = size("system_bytes");
    let changed_blocks: Vec<String> = d
        .system
        .blocks
        .iter()
        .filter(|x| !x.text.identical)
        .map(|x| x.a_index.or(x.b_index).unwrap_or(0).to_string())
        .collect();
    if d.system.text.identical && sd == 0 {
        out.push("The system prompt is unchanged.".into());
    } else {
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
        out.push(format!(
            "The system prompt{growth} ({} → {} bytes){which}.",
            thousands(sa as i64),
            thousands(sb as i64)
        ));
    }
    let h = &d.headers;
    if !h.betas_added.is_empty() || !h.betas_removed.is_empty() {
        let mut parts = Vec::new();
        if !h.betas_added.is_empty() {
            parts.push(format!("added {}", names(&h.betas_added)));
        }
        if !h.betas_removed.is_empty() {
            parts.push(format!("removed {}", names(&h.betas_removed)));
        }
        out.push(format!("Betas (anthropic-beta): {}.", parts.join("; ")));
    }
    let changed_params: Vec<String> = d
        .params
        .iter()
        .filter(|p| p.changed)
        .map(|p| p.key.clone())
        .collect();
    if !changed_params.is_empty() {
        out.push(format!("Parameters changed: {}.", names(&changed_params)));
    }
    let (ea, eb, ed) = size("est_tokens");
    out.push(format!(
        "Estimated input tokens of the request: {} → {} ({}).",
        thousands(ea as i64),
        thousands(eb as i64),
        if ed == 0 {
            "no change".to_string()
        } else {
            format!("{}{}", if ed > 0 { "+" } else { "" }, thousands(ed))
        }
    ));
    out
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
    let side = |s: &SideInfo, name: &str| {
        format!(
            "{name} — {} ({}/{}, turn {})",
            s.label,
            s.session.as_deref().unwrap_or("?"),
            s.thread.as_deref().unwrap_or("?"),
            s.turn
        )
    };
    let moved: Vec<&ToolEntry> = t
        .entries
        .iter()
        .filter(|e| e.status != ToolStatus::Same || e.delta != 0)
        .collect();
    let n = d.system.a_blocks.len().max(d.system.b_blocks.len());
    let blocks = (0..n)
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
        .collect();
    let h = &d.headers;
    let mut headers = vec![
        Pair {
            name: "anthropic-version".into(),
            a: h.a_version.clone(),
            b: h.b_version.clone(),
            note: "",
        },
        Pair {
            name: "user-agent".into(),
            a: h.a_user_agent.clone(),
            b: h.b_user_agent.clone(),
            note: "",
        },
    ];
    headers.extend(h.changed.iter().map(|c| Pair {
        name: c.name.clone(),
        a: c.a.clone(),
        b: c.b.clone(),
        note: "",
    }));
    Comparison {
        a_label: side(&d.a, a_name),
        b_label: side(&d.b, b_name),
        identical: d.identical,
        figures: d
            .sizes
            .iter()
            .map(|r| Figure {
                label: metric_label(&r.metric).to_string(),
                a: r.a,
                b: r.b,
                delta: r.delta,
                pct: pct_change(r.a, r.b),
            })
            .collect(),
        tool_lists: tool_groups(t)
            .into_iter()
            .filter(|(v, _, _)| !v.is_empty())
            .map(|(v, label, _)| NamedList {
                label,
                names: v.clone(),
            })
            .collect(),
        mechanisms_a: mechanisms(&t.a_mechanisms),
        mechanisms_b: mechanisms(&t.b_mechanisms),
        tools: moved
            .iter()
            .map(|e| ToolRow {
                name: e.name.clone(),
                status: status(e.status),
                a_state: state(e.a),
                b_state: state(e.b),
                a_bytes: e.a_bytes,
                b_bytes: e.b_bytes,
                delta: e.delta,
            })
            .collect(),
        unchanged_tools: t.entries.len() - moved.len(),
        tool_details: t
            .entries
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
            .collect(),
        blocks,
        breakpoints_moved: !d.system.same_breakpoints,
        betas_added: h.betas_added.clone(),
        betas_removed: h.betas_removed.clone(),
        betas_unknown: [("A", h.a_known), ("B", h.b_known)]
            .into_iter()
            .filter(|(_, known)| !known)
            .map(|(side, _)| side)
            .collect(),
        headers,
        params: d
            .params
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
            .collect(),
        injected: d
            .injected
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
            .collect(),
        normalized: d
            .normalized
            .iter()
            .map(|n| Pair {
                name: n.rule.clone(),
                a: Some(n.a.to_string()),
                b: Some(n.b.to_string()),
                note: "",
            })
            .chain(std::iter::empty())
            .collect(),
        chart: tool_chart(&t.entries, a_name, b_name, html),
    }
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
        "anthropic-beta",
        "same",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for x in c {
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
