//! The analysis passes the one redaction function before any renderer sees it: every
//! string an analysis takes from a body (poll targets, shell commands and paths, tool
//! names, job references, result lines, MCP task ids) or from a file name goes through
//! [`crate::trace::redact::redact_text`], as the Parquet tables' text columns do. So the
//! table, Markdown, JSON and HTML reports of `analyze` and `report analyze` show
//! `[redacted …]` where a body held `sk-ant-…`, `"api_key": …` or `?token=…`.

use crate::trace::redact::redact_text_cow;

use super::analysis::Analysis;

/// Redact `s` in place (allocates only when something changes).
fn text(s: &mut String) {
    if let std::borrow::Cow::Owned(r) = redact_text_cow(s) {
        *s = r;
    }
}

fn opt(s: &mut Option<String>) {
    if let Some(s) = s {
        text(s);
    }
}

fn all(v: &mut [String]) {
    v.iter_mut().for_each(text);
}

/// Redact every string of `a` that may come from a body or a file name.
pub(super) fn analysis(a: &mut Analysis) {
    all(&mut a.warnings);
    for i in &mut a.inputs {
        text(&mut i.path);
        all(&mut i.bad_bodies);
        all(&mut i.bad_line_notes);
    }
    for s in &mut a.skipped_files {
        text(&mut s.input);
        text(&mut s.path);
        text(&mut s.reason);
    }
    for e in &mut a.episodes {
        text(&mut e.tool);
        text(&mut e.target);
        opt(&mut e.job);
        all(&mut e.calls);
        e.redundant_calls.iter_mut().for_each(|p| text(&mut p.call));
    }
    for r in &mut a.requests {
        text(&mut r.file);
        opt(&mut r.cause_detail);
        opt(&mut r.api_error);
    }
    for j in &mut a.jobs {
        let j = &mut j.job;
        for s in [
            &mut j.reference,
            &mut j.tool,
            &mut j.command,
            &mut j.start_call,
        ] {
            text(s);
        }
        for s in [
            &mut j.artifact,
            &mut j.duplicate_of,
            &mut j.tool_result_error,
        ] {
            opt(s);
        }
        for e in &mut j.events {
            text(&mut e.call);
            text(&mut e.detail);
        }
    }
    for d in &mut a.decisions {
        text(&mut d.job_reference);
        text(&mut d.observed_state);
        text(&mut d.acceptance_check);
        text(&mut d.acceptance_result);
        for s in [
            &mut d.artifact_reference,
            &mut d.unresolved_fact,
            &mut d.tool_result_error,
        ] {
            opt(s);
        }
    }
    mcp(&mut a.mcp);
}

fn mcp(m: &mut crate::analyze::mcp::McpAnalysis) {
    for s in &mut m.servers {
        text(&mut s.server);
        opt(&mut s.protocol_version);
        opt(&mut s.last_event);
    }
    for r in &mut m.methods {
        text(&mut r.server);
        text(&mut r.method);
    }
    for t in &mut m.tasks {
        text(&mut t.server);
        text(&mut t.task_id);
        text(&mut t.tool);
        all(&mut t.states);
        opt(&mut t.terminal);
        opt(&mut t.started_by);
    }
    for l in &mut m.links {
        text(&mut l.tool_use_id);
        text(&mut l.tool);
        opt(&mut l.server);
        opt(&mut l.task_id);
    }
}
