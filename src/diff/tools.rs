//! Tool-definition diff: added, removed, moved behind ToolSearch, brought back, changed
//! (description text and input-schema properties), each tool's size in wire bytes, and
//! which ToolSearch mechanism each side offers.
//!
//! A tool is *deferred* on a side when its definition carries `defer_loading: true`, or
//! when it is not defined but announced by name in a deferred-tools listing (see
//! [`announced_tools`]) for a ToolSearch tool to load. Source for the listing format:
//! Claude Code 2.1.304 requests (`ENABLE_TOOL_SEARCH` default against a custom base URL)
//! carry, in a `system`-role message, a paragraph "The following deferred tools are now
//! available via ToolSearch. ...:" followed by one tool name per line; the API's own
//! `<available-deferred-tools>` tag form is accepted too.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::schema::{diff_schema, SchemaChange};
use super::text::{diff_text, TextDiff};
use super::Norm;
use crate::api::{MessagesRequest, Tool};

/// Where a tool stands on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolState {
    /// Neither defined nor announced.
    Absent,
    /// Defined and loaded.
    Defined,
    /// Defined with `defer_loading: true`.
    DeferLoading,
    /// Not defined; announced by name for ToolSearch.
    Announced,
}

impl ToolState {
    fn deferred(self) -> bool {
        matches!(self, ToolState::DeferLoading | ToolState::Announced)
    }
    fn defined(self) -> bool {
        matches!(self, ToolState::Defined | ToolState::DeferLoading)
    }
}

/// What happened to a tool between A and B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// New definition in B.
    Added,
    /// Definition gone in B (and not deferred).
    Removed,
    /// Loaded in A, deferred in B.
    Deferred,
    /// Deferred in A, loaded in B.
    Undeferred,
    /// Newly announced for ToolSearch in B (never defined in A).
    Announced,
    /// Announced in A, neither defined nor announced in B.
    Unannounced,
    /// Announced in A; in B its definition is sent with `defer_loading: true` (what a
    /// client does after ToolSearch returned a `tool_reference` to it).
    Loaded,
    /// The reverse of [`ToolStatus::Loaded`].
    Unloaded,
    /// Defined (or deferred) on both sides, with a different definition or deferral.
    Changed,
    /// The same on both sides.
    Same,
}

/// One tool across both sides.
#[derive(Clone, Debug, Serialize)]
pub struct ToolEntry {
    /// Tool name.
    pub name: String,
    /// Status.
    pub status: ToolStatus,
    /// State in A.
    pub a: ToolState,
    /// State in B.
    pub b: ToolState,
    /// Definition size in A, bytes as sent (0 when not defined).
    pub a_bytes: usize,
    /// Definition size in B, bytes.
    pub b_bytes: usize,
    /// `b_bytes - a_bytes`.
    pub delta: i64,
    /// Description diff (normalized text), when both define it and it differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<TextDiff>,
    /// Input-schema changes by property.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schema: Vec<SchemaChange>,
    /// Other members that changed (`type`, `cache_control`, `defer_loading`, ...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other: Vec<String>,
}

/// A ToolSearch mechanism offered by a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mechanism {
    /// `client` (a client tool named ToolSearch) or `server` (`tool_search_tool_*`).
    pub kind: String,
    /// Tool name (client) or tool type (server).
    pub tool: String,
}

/// The tool part of a request diff.
#[derive(Clone, Debug, Serialize)]
pub struct ToolsDiff {
    /// True when the normalized `tools` arrays are byte-identical.
    pub identical: bool,
    /// ToolSearch mechanisms in A.
    pub a_mechanisms: Vec<Mechanism>,
    /// ToolSearch mechanisms in B.
    pub b_mechanisms: Vec<Mechanism>,
    /// Names announced for ToolSearch in A.
    pub a_announced: Vec<String>,
    /// Names announced for ToolSearch in B.
    pub b_announced: Vec<String>,
    /// Names per status (everything but `same`), in A's tool order then B's.
    pub added: Vec<String>,
    /// Removed.
    pub removed: Vec<String>,
    /// Moved behind ToolSearch.
    pub deferred: Vec<String>,
    /// Brought back from deferred.
    pub undeferred: Vec<String>,
    /// Newly announced.
    pub announced: Vec<String>,
    /// No longer announced.
    pub unannounced: Vec<String>,
    /// Definitions sent after ToolSearch loaded them.
    pub loaded: Vec<String>,
    /// Definitions no longer sent, still announced.
    pub unloaded: Vec<String>,
    /// Changed.
    pub changed: Vec<String>,
    /// Every tool, sorted by |delta| (largest first), then status, then name.
    pub entries: Vec<ToolEntry>,
}

/// Tool names announced for ToolSearch in a request's messages and system prompt, in
/// order of appearance, without duplicates.
pub fn announced_tools(req: &MessagesRequest) -> Vec<String> {
    let mut names = Vec::new();
    let mut seen = BTreeSet::new();
    let texts = req
        .system
        .iter()
        .flat_map(|s| s.blocks.iter())
        .chain(req.messages.iter().flat_map(|m| m.content.iter()))
        .filter_map(|b| {
            if b.block_type() == "text" {
                b.text()
            } else {
                None
            }
        });
    for t in texts {
        for n in listing_names(t) {
            if seen.insert(n.to_string()) {
                names.push(n.to_string());
            }
        }
    }
    names
}

fn is_tool_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
        && s.len() <= 128
}

/// Names listed in one text: lines after an intro line that mentions deferred tools and
/// ends with `:`, up to the first line that is not a tool name; or the lines inside
/// `<available-deferred-tools>` tags.
fn listing_names(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if !text.contains("deferred tools")
        && !text.contains("deferred-tools")
        && !text.contains("Deferred tools")
    {
        return out;
    }
    let mut in_list = false;
    for line in text.lines() {
        let l = line.trim();
        if in_list {
            let name = l.strip_prefix("- ").unwrap_or(l);
            if is_tool_name(name) {
                out.push(name);
                continue;
            }
            in_list = false;
        }
        let lower = l.to_ascii_lowercase();
        if lower == "<available-deferred-tools>"
            || (lower.contains("deferred tools") && l.ends_with(':'))
        {
            in_list = true;
        }
    }
    out
}

/// ToolSearch mechanisms of a request.
pub fn mechanisms(req: &MessagesRequest) -> Vec<Mechanism> {
    req.tools
        .iter()
        .filter_map(|t| match &t.tool_type {
            Some(ty) if ty.starts_with("tool_search_tool_") => Some(Mechanism {
                kind: "server".into(),
                tool: ty.clone(),
            }),
            _ if !t.is_server_tool() && t.name == "ToolSearch" => Some(Mechanism {
                kind: "client".into(),
                tool: t.name.clone(),
            }),
            _ => None,
        })
        .collect()
}

fn state(tool: Option<&Tool>, announced: &[String], name: &str) -> ToolState {
    match tool {
        Some(t) if t.defer_loading => ToolState::DeferLoading,
        Some(_) => ToolState::Defined,
        None if announced.iter().any(|a| a == name) => ToolState::Announced,
        None => ToolState::Absent,
    }
}

fn status(a: ToolState, b: ToolState, same_definition: bool) -> ToolStatus {
    use ToolState::*;
    match (a, b) {
        (Absent, Defined | DeferLoading) => ToolStatus::Added,
        (Defined | DeferLoading, Absent) => ToolStatus::Removed,
        (Defined, DeferLoading | Announced) => ToolStatus::Deferred,
        (DeferLoading | Announced, Defined) => ToolStatus::Undeferred,
        (Absent, Announced) => ToolStatus::Announced,
        (Announced, Absent) => ToolStatus::Unannounced,
        (Absent, Absent) | (Announced, Announced) => ToolStatus::Same,
        (Announced, DeferLoading) => ToolStatus::Loaded,
        (DeferLoading, Announced) => ToolStatus::Unloaded,
        (Defined, Defined) | (DeferLoading, DeferLoading) if same_definition => ToolStatus::Same,
        (Defined, Defined) | (DeferLoading, DeferLoading) => ToolStatus::Changed,
    }
}

/// One side of the tool diff: the parsed request, its body, and the normalizer.
pub(crate) struct ToolSide<'a> {
    pub req: &'a MessagesRequest,
    pub body: &'a [u8],
}

/// Diff the tool definitions of two requests.
pub(crate) fn diff_tools(a: &ToolSide, b: &ToolSide, norm: &mut Norm) -> ToolsDiff {
    let text_a = a
        .req
        .tools_span
        .map(|s| String::from_utf8_lossy(s.slice(a.body)));
    let text_b = b
        .req
        .tools_span
        .map(|s| String::from_utf8_lossy(s.slice(b.body)));
    let identical = match (&text_a, &text_b) {
        (Some(x), Some(y)) => x == y || norm.a(x) == norm.b(y),
        (None, None) => true,
        _ => false,
    };
    let ann_a = announced_tools(a.req);
    let ann_b = announced_tools(b.req);
    let mut names: Vec<&str> = Vec::new();
    let mut seen = BTreeSet::new();
    for n in a
        .req
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .chain(ann_a.iter().map(String::as_str))
        .chain(b.req.tools.iter().map(|t| t.name.as_str()))
        .chain(ann_b.iter().map(String::as_str))
    {
        if seen.insert(n) {
            names.push(n);
        }
    }
    let mut d = ToolsDiff {
        identical,
        a_mechanisms: mechanisms(a.req),
        b_mechanisms: mechanisms(b.req),
        a_announced: ann_a.clone(),
        b_announced: ann_b.clone(),
        added: vec![],
        removed: vec![],
        deferred: vec![],
        undeferred: vec![],
        announced: vec![],
        unannounced: vec![],
        loaded: vec![],
        unloaded: vec![],
        changed: vec![],
        entries: vec![],
    };
    for name in names {
        let ta = a.req.tools.iter().find(|t| t.name == name);
        let tb = b.req.tools.iter().find(|t| t.name == name);
        let entry = entry(
            name,
            (ta, a.body, &ann_a),
            (tb, b.body, &ann_b),
            identical,
            norm,
        );
        let list = match entry.status {
            ToolStatus::Added => &mut d.added,
            ToolStatus::Removed => &mut d.removed,
            ToolStatus::Deferred => &mut d.deferred,
            ToolStatus::Undeferred => &mut d.undeferred,
            ToolStatus::Announced => &mut d.announced,
            ToolStatus::Unannounced => &mut d.unannounced,
            ToolStatus::Loaded => &mut d.loaded,
            ToolStatus::Unloaded => &mut d.unloaded,
            ToolStatus::Changed => &mut d.changed,
            ToolStatus::Same => {
                d.entries.push(entry);
                continue;
            }
        };
        list.push(name.to_string());
        d.entries.push(entry);
    }
    d.entries.sort_by(|x, y| {
        y.delta
            .abs()
            .cmp(&x.delta.abs())
            .then(x.status.cmp(&y.status))
            .then(x.name.cmp(&y.name))
    });
    d
}

type SideTool<'a> = (Option<&'a Tool>, &'a [u8], &'a [String]);

fn entry(name: &str, a: SideTool, b: SideTool, all_same: bool, norm: &mut Norm) -> ToolEntry {
    let (ta, body_a, ann_a) = a;
    let (tb, body_b, ann_b) = b;
    let sa = state(ta, ann_a, name);
    let sb = state(tb, ann_b, name);
    let a_bytes = ta.map_or(0, |t| t.span.len());
    let b_bytes = tb.map_or(0, |t| t.span.len());
    let mut e = ToolEntry {
        name: name.to_string(),
        status: ToolStatus::Same,
        a: sa,
        b: sb,
        a_bytes,
        b_bytes,
        delta: b_bytes as i64 - a_bytes as i64,
        description: None,
        schema: vec![],
        other: vec![],
    };
    let mut same_definition = true;
    if let (Some(ta), Some(tb)) = (ta, tb) {
        let raw_a = String::from_utf8_lossy(ta.span.slice(body_a));
        let raw_b = String::from_utf8_lossy(tb.span.slice(body_b));
        same_definition = all_same || raw_a == raw_b || norm.a(&raw_a) == norm.b(&raw_b);
        if !same_definition {
            let da = norm.a(ta.description.as_deref().unwrap_or(""));
            let db = norm.b(tb.description.as_deref().unwrap_or(""));
            if da != db {
                e.description = Some(diff_text(&da, &db));
            }
            let null = Value::Null;
            let sch_a = ta.input_schema.as_ref().unwrap_or(&null);
            let sch_b = tb.input_schema.as_ref().unwrap_or(&null);
            diff_schema("", sch_a, sch_b, &mut e.schema, norm);
            super::schema::attach_facts(&mut e.schema, sch_a, sch_b, norm);
            e.other = other_members(ta, tb, body_a, body_b);
        }
    }
    if sa.deferred() != sb.deferred() && sa.defined() && sb.defined() {
        e.other.push("defer_loading".into());
    }
    e.status = status(sa, sb, same_definition);
    e
}

/// Members other than name/description/input_schema whose values differ.
fn other_members(ta: &Tool, tb: &Tool, body_a: &[u8], body_b: &[u8]) -> Vec<String> {
    use crate::api::span::object_members;
    let skip = ["name", "description", "input_schema"];
    let ma: Vec<(String, &[u8])> = object_members(body_a, ta.span)
        .into_iter()
        .map(|m| (m.key, m.value.slice(body_a)))
        .collect();
    let mb: Vec<(String, &[u8])> = object_members(body_b, tb.span)
        .into_iter()
        .map(|m| (m.key, m.value.slice(body_b)))
        .collect();
    let mut keys: Vec<&String> = ma.iter().chain(mb.iter()).map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !skip.contains(&k.as_str()))
        .filter(|k| {
            let va = ma.iter().find(|(x, _)| x == *k).map(|(_, v)| *v);
            let vb = mb.iter().find(|(x, _)| x == *k).map(|(_, v)| *v);
            va != vb
        })
        .map(|k| k.to_string())
        .collect()
}
