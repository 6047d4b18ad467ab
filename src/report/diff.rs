//! `agentwire diff` report: terminal text (optionally coloured), Markdown, or JSON (shape:
//! `schemas/diff.schema.json`).

use crate::api::tools::Mechanism;
use crate::diff::request::{RequestDiff, SystemBlock};
use crate::diff::select::DiffReport;
use crate::diff::tools::{ToolEntry, ToolState, ToolStatus, ToolsDiff};

use super::Format;
use crate::text::fmt::pct_change;

use super::writer::{clip, code, Writer};

/// Longest parameter or header value shown in tables (characters); JSON has them whole.
const MAX_VALUE: usize = 72;

/// Render a diff report. `color` adds ANSI colours to the terminal format (the caller
/// decides: a TTY and `NO_COLOR` unset).
pub fn render(report: &DiffReport, format: Format, color: bool) -> String {
    render_with(report, format, color, false)
}

/// [`render`], with the rows that did not change (parameters, headers, the version
/// header) shown when `unchanged` is set; by default they are counted, not listed.
pub fn render_with(report: &DiffReport, format: Format, color: bool, unchanged: bool) -> String {
    format.finish(render_unchecked(report, format, color, unchanged))
}

fn render_unchecked(report: &DiffReport, format: Format, color: bool, unchanged: bool) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(report);
    }
    let mut w = Writer {
        md: format == Format::Markdown,
        color: color && format == Format::Table,
        out: String::new(),
    };
    if report.comparisons.is_empty() {
        w.line(&format!("no requests to compare ({} mode)", report.mode));
    }
    let sections: Vec<Vec<(&str, String)>> = report
        .comparisons
        .iter()
        .map(|d| sections(&w, d, unchanged))
        .collect();
    let common = common_sections(&sections);
    if !common.is_empty() {
        w.heading(0, &format!("Common to all {} comparisons", sections.len()));
        for (_, text) in sections[0].iter().filter(|(n, _)| common.contains(n)) {
            append(&mut w, text);
        }
    }
    for (d, secs) in report.comparisons.iter().zip(&sections) {
        comparison(&mut w, d, secs, &common);
    }
    if !report.unmatched.is_empty() {
        w.heading(1, "Unmatched requests");
        let rows = report
            .unmatched
            .iter()
            .map(|u| {
                vec![
                    u.side.clone(),
                    u.exchange.to_string(),
                    u.thread.clone(),
                    u.turn.to_string(),
                ]
            })
            .collect();
        w.table(&["side", "exchange", "thread", "turn"], rows);
    }
    if !report.problems.is_empty() {
        w.heading(1, "Problems");
        for p in &report.problems {
            w.bullet(p);
        }
    }
    if !report.gates.is_empty() {
        w.heading(1, "Gates");
        for g in &report.gates {
            let state = if g.tripped { "TRIPPED" } else { "ok" };
            w.bullet(&format!("{} — {state}", code(&w, &g.expr)));
            for d in &g.details {
                w.line(&format!("    {d}"));
            }
        }
    }
    w.out
}

fn side_name(d: &RequestDiff, a: bool) -> String {
    let s = if a { &d.a } else { &d.b };
    let thread = s.thread.as_deref().unwrap_or("?");
    let session = s.session.as_deref().unwrap_or("?");
    format!("{} ({session}/{thread}, turn {})", s.label, s.turn)
}

fn delta(n: i64) -> String {
    if n == 0 {
        "0".into()
    } else {
        format!("{n:+}")
    }
}

/// The sections of one comparison that may repeat from turn to turn, each rendered on
/// its own: `(name, text)`.
fn sections<'a>(w: &Writer, d: &RequestDiff, unchanged: bool) -> Vec<(&'a str, String)> {
    let run = |f: &dyn Fn(&mut Writer)| {
        // Started non-empty so its first heading keeps the blank line it has in one
        // writer; stripped again, and added back by [`append`].
        let mut s = Writer {
            md: w.md,
            color: w.color,
            out: "\n".into(),
        };
        f(&mut s);
        s.out.trim_start_matches('\n').to_string()
    };
    vec![
        ("Tools", run(&|s| tools(s, d))),
        ("System prompt", run(&|s| system(s, d))),
        ("Headers", run(&|s| headers(s, d, unchanged))),
        ("Parameters", run(&|s| params(s, d, unchanged))),
        ("Injected context", run(&|s| injected(s, d))),
    ]
}

/// Add a section rendered on its own (it opens with a heading, after a blank line).
fn append(w: &mut Writer, text: &str) {
    w.blank();
    w.out.push_str(text);
}

/// The sections whose text is the same in every comparison (with two or more): shown
/// once, as a roll-up, instead of once per turn (`--all` and `--within` printed the same
/// tool diff for every turn).
fn common_sections<'a>(all: &[Vec<(&'a str, String)>]) -> Vec<&'a str> {
    if all.len() < 2 {
        return Vec::new();
    }
    all[0]
        .iter()
        .filter(|(name, text)| {
            all[1..]
                .iter()
                .all(|secs| secs.iter().any(|(n, t)| n == name && t == text))
        })
        .map(|(name, _)| *name)
        .collect()
}

fn comparison(w: &mut Writer, d: &RequestDiff, secs: &[(&str, String)], common: &[&str]) {
    w.heading(
        0,
        &format!("{} → {}", side_name(d, true), side_name(d, false)),
    );
    if d.identical {
        w.line("requests identical after normalization (conversation messages aside)");
    }
    w.heading(1, "Sizes");
    let rows = d
        .sizes
        .iter()
        .map(|r| {
            vec![
                r.metric.clone(),
                r.a.to_string(),
                r.b.to_string(),
                delta(r.delta),
                pct_change(r.a, r.b),
            ]
        })
        .collect();
    w.table(&["metric", "A", "B", "delta", "%"], rows);
    let shared: Vec<&str> = secs
        .iter()
        .filter(|(n, _)| common.contains(n))
        .map(|(n, _)| *n)
        .collect();
    if !shared.is_empty() {
        w.line(&format!(
            "{}: as in every comparison (above)",
            shared.join(", ")
        ));
    }
    for (_, text) in secs.iter().filter(|(n, _)| !common.contains(n)) {
        append(w, text);
    }
    if !d.normalized.is_empty() {
        w.heading(1, "Normalized before comparing");
        let rows = d
            .normalized
            .iter()
            .map(|n| {
                vec![
                    n.rule.clone(),
                    n.a.to_string(),
                    n.b.to_string(),
                    n.description.clone(),
                ]
            })
            .collect();
        w.table(&["rule", "A", "B", "hides"], rows);
    }
}

/// How a side loads deferred tools, in words: `client tool ToolSearch`, or `none`.
pub(crate) fn mechanisms(m: &[Mechanism]) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|m| format!("{} tool {}", m.kind, m.tool))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The words for where a tool stands on one side, in every diff report (terminal,
/// Markdown, the shareable reports and their glossary): the api layer's tool words.
pub fn state(s: ToolState) -> &'static str {
    match s {
        ToolState::Absent => "-",
        ToolState::Loaded => "loaded",
        ToolState::DeferredDefinition => "deferred definition",
        ToolState::Placeholder => "placeholder",
        ToolState::Announced => "announced",
    }
}

/// The words for what happened to a tool between A and B, in every diff report.
/// Distinct from the [`state`] words, so a glossary gives each one meaning.
pub fn status(s: ToolStatus) -> &'static str {
    match s {
        ToolStatus::Added => "added",
        ToolStatus::Removed => "removed",
        ToolStatus::Deferred => "moved behind ToolSearch",
        ToolStatus::Undeferred => "brought back",
        ToolStatus::Announced => "newly announced",
        ToolStatus::Unannounced => "no longer announced",
        ToolStatus::Fetched => "fetched by ToolSearch",
        ToolStatus::Unfetched => "unfetched",
        ToolStatus::Changed => "changed",
        ToolStatus::Same => "same",
    }
}

fn tools(w: &mut Writer, d: &RequestDiff) {
    let t = &d.tools;
    w.heading(1, "Tools");
    tools_overview(w, t);
    tools_table(w, t);
    for e in t.entries.iter().filter(|e| e.status == ToolStatus::Changed) {
        tool_changes(w, e);
    }
}

/// Every kind of tool change: the names, the short label for the headline and the long one
/// for the list (the shareable reports use the same).
pub fn tool_groups(t: &ToolsDiff) -> [(&Vec<String>, &'static str, &'static str); 9] {
    [
        (&t.added, "added", "added"),
        (&t.removed, "removed", "removed"),
        (
            &t.deferred,
            "moved behind ToolSearch",
            "moved behind ToolSearch",
        ),
        (
            &t.undeferred,
            "brought back from deferred",
            "brought back from deferred",
        ),
        (&t.announced, "newly announced", "newly announced"),
        (&t.unannounced, "no longer announced", "no longer announced"),
        (
            &t.fetched,
            "fetched by ToolSearch",
            "fetched by ToolSearch (now a deferred definition)",
        ),
        (&t.unfetched, "unfetched", "unfetched (announced only)"),
        (&t.changed, "changed", "changed"),
    ]
}

/// The headline (counts per kind of change), the ToolSearch mechanisms, and the names per
/// kind of change.
fn tools_overview(w: &mut Writer, t: &ToolsDiff) {
    if t.identical {
        w.line("tool definitions identical");
    } else {
        let parts: Vec<String> = tool_groups(t)
            .iter()
            .filter(|(names, _, _)| !names.is_empty())
            .map(|(names, short, _)| format!("{} {short}", names.len()))
            .collect();
        let summary = if parts.is_empty() {
            "order or formatting only".to_string()
        } else {
            parts.join(", ")
        };
        w.line(&format!("tool definitions differ: {summary}"));
    }
    w.bullet(&format!(
        "ToolSearch: A {}; B {}",
        mechanisms(&t.a_mechanisms),
        mechanisms(&t.b_mechanisms)
    ));
    for (names, _, label) in tool_groups(t) {
        if !names.is_empty() {
            w.bullet(&format!("{label} ({}): {}", names.len(), names.join(", ")));
        }
    }
}

/// One row per tool whose status or size changed, then how many did not.
fn tools_table(w: &mut Writer, t: &ToolsDiff) {
    let moved: Vec<_> = t
        .entries
        .iter()
        .filter(|e| e.status != ToolStatus::Same || e.delta != 0)
        .collect();
    if !moved.is_empty() {
        let rows = moved
            .iter()
            .map(|e| {
                vec![
                    e.name.clone(),
                    status(e.status).into(),
                    state(e.a).into(),
                    state(e.b).into(),
                    e.a_bytes.to_string(),
                    e.b_bytes.to_string(),
                    delta(e.delta),
                ]
            })
            .collect();
        w.table(
            &["tool", "status", "A", "B", "A bytes", "B bytes", "delta"],
            rows,
        );
    }
    // Counted per category (a count mixing loaded and announced tools read as "16
    // tools unchanged" next to "12 → 12" tools).
    let mut same: Vec<(&str, u64)> = Vec::new();
    for e in t
        .entries
        .iter()
        .filter(|e| e.status == ToolStatus::Same && e.delta == 0)
    {
        match same.iter_mut().find(|(k, _)| *k == state(e.b)) {
            Some((_, n)) => *n += 1,
            None => same.push((state(e.b), 1)),
        }
    }
    if !same.is_empty() && !t.identical {
        let indent = if w.md { "" } else { "  " };
        let parts: Vec<String> = same.iter().map(|(k, n)| format!("{n} {k}")).collect();
        w.line(&format!("{indent}unchanged: {}", parts.join(", ")));
    }
}

/// What changed inside one tool: other members, the schema by property, the description.
fn tool_changes(w: &mut Writer, e: &ToolEntry) {
    w.heading(2, &format!("Tool {}", e.name));
    for o in &e.other {
        w.bullet(&format!("member changed: {o}"));
    }
    for c in &e.schema {
        let path = if c.path.is_empty() {
            "(schema)"
        } else {
            &c.path
        };
        let vals = match (&c.a, &c.b) {
            (Some(a), Some(b)) => format!(": {} → {}", clip(a, MAX_VALUE), clip(b, MAX_VALUE)),
            (None, Some(b)) => format!(": {}", clip(b, MAX_VALUE)),
            (Some(a), None) => format!(": was {}", clip(a, MAX_VALUE)),
            (None, None) => String::new(),
        };
        w.bullet(&format!("schema {path} {}{vals}", c.change));
    }
    if let Some(desc) = &e.description {
        w.line(&format!(
            "  description: {} → {} bytes, {} chars deleted, {} inserted",
            desc.a_bytes, desc.b_bytes, desc.deleted_chars, desc.inserted_chars
        ));
        w.diff(desc);
    }
}

fn cache(b: Option<&SystemBlock>) -> (String, String) {
    match b {
        None => ("-".into(), String::new()),
        Some(b) => (
            b.bytes.to_string(),
            b.cache_control.clone().unwrap_or_default(),
        ),
    }
}

fn system(w: &mut Writer, d: &RequestDiff) {
    let s = &d.system;
    w.heading(1, "System prompt");
    let n = s.a_blocks.len().max(s.b_blocks.len());
    let rows = (0..n)
        .map(|i| {
            let (ab, ac) = cache(s.a_blocks.get(i));
            let (bb, bc) = cache(s.b_blocks.get(i));
            vec![i.to_string(), ab, ac, bb, bc]
        })
        .collect();
    w.table(
        &[
            "block",
            "A bytes",
            "A cache_control",
            "B bytes",
            "B cache_control",
        ],
        rows,
    );
    if !s.same_breakpoints {
        w.line("cache breakpoints moved");
    }
    if s.text.identical {
        w.line("system prompt text identical");
    } else {
        w.line(&format!(
            "system prompt text differs: {} chars deleted, {} inserted",
            s.text.deleted_chars, s.text.inserted_chars
        ));
        w.diff(&s.text);
    }
}

fn opt(v: &Option<String>) -> String {
    v.as_deref().map_or("-".to_string(), |s| clip(s, MAX_VALUE))
}

fn headers(w: &mut Writer, d: &RequestDiff, unchanged: bool) {
    let h = &d.headers;
    w.heading(1, "Headers");
    if h.identical() {
        w.line("headers identical");
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    if !(h.a_known && h.b_known) {
        let side = if h.a_known { "B" } else { "A" };
        w.bullet(&format!(
            "headers of {side} were not recorded (a bare request body): betas and headers unknown, not compared"
        ));
        return;
    }
    if unchanged || !h.betas_added.is_empty() || !h.betas_removed.is_empty() {
        w.bullet(&format!(
            "{} added: {}",
            h.beta_headers,
            list(&h.betas_added)
        ));
        w.bullet(&format!(
            "{} removed: {}",
            h.beta_headers,
            list(&h.betas_removed)
        ));
    }
    if let Some(v) = h
        .version_header
        .filter(|_| unchanged || h.a_version != h.b_version)
    {
        w.bullet(&format!(
            "{v}: {} → {}",
            opt(&h.a_version),
            opt(&h.b_version)
        ));
    }
    if unchanged || h.a_client_version != h.b_client_version {
        w.bullet(&format!(
            "client version: {} → {}",
            opt(&h.a_client_version),
            opt(&h.b_client_version)
        ));
    }
    if h.a_user_agent != h.b_user_agent {
        w.bullet(&format!(
            "user-agent: {} → {}",
            opt(&h.a_user_agent),
            opt(&h.b_user_agent)
        ));
    }
    if !h.changed.is_empty() {
        let rows = h
            .changed
            .iter()
            .map(|c| vec![c.name.clone(), opt(&c.a), opt(&c.b)])
            .collect();
        w.table(&["header", "A", "B"], rows);
    }
}

fn params(w: &mut Writer, d: &RequestDiff, unchanged: bool) {
    w.heading(1, "Parameters");
    let same = d.params.iter().filter(|p| !p.changed && p.known).count();
    let shown: Vec<_> = d
        .params
        .iter()
        .filter(|p| unchanged || p.changed || !p.known)
        .collect();
    if shown.is_empty() {
        w.line(&format!(
            "{} unchanged",
            crate::text::fmt::plural(same as u64, "parameter")
        ));
        return;
    }
    let rows = shown
        .iter()
        .map(|p| {
            let mark = match (p.changed, p.known) {
                (true, false) => "changed (undocumented key)",
                (true, true) => "changed",
                (false, false) => "undocumented key",
                (false, true) => "",
            };
            vec![p.key.clone(), opt(&p.a), opt(&p.b), mark.into()]
        })
        .collect();
    w.table(&["key", "A", "B", ""], rows);
    if !unchanged && same > 0 {
        w.line(&format!(
            "{} unchanged (--unchanged lists them)",
            crate::text::fmt::plural(same as u64, "other parameter")
        ));
    }
}

fn injected(w: &mut Writer, d: &RequestDiff) {
    w.heading(1, "Injected context");
    if d.injected.is_empty() {
        w.line("system reminders and system messages identical");
        return;
    }
    for i in &d.injected {
        let at = match (&i.a_at, &i.b_at) {
            (Some(a), Some(b)) if a == b => a.clone(),
            (Some(a), Some(b)) => format!("{a} → {b}"),
            (Some(a), None) => a.clone(),
            (None, Some(b)) => b.clone(),
            (None, None) => String::new(),
        };
        w.bullet(&format!(
            "{} {} at {at} ({} → {} bytes; {} chars deleted, {} inserted)",
            i.kind, i.status, i.a_bytes, i.b_bytes, i.diff.deleted_chars, i.diff.inserted_chars
        ));
        if i.status == "changed" {
            w.diff(&i.diff);
        }
    }
}
