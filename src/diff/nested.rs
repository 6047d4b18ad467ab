//! Nested tool declarations across two sides: the functions a tool's description declares
//! (Codex's code-mode `exec`, [`crate::api::responses::nested`]) compared one by one, so a
//! change to `exec_command` inside `exec` shows as such, with its bytes. Each is an entry
//! named `PARENT/NAME` (`functions.exec/exec_command`) in the tool diff; its bytes are its
//! section of the description (UTF-8), and its description diff is that section's text.

use std::collections::BTreeSet;

use super::entry::{ToolEntry, ToolState, ToolStatus};
use super::norm::Norm;
use super::text::diff_text;
use crate::api::Tool;

/// Entries for the nested declarations of a tool on each side (`None`: the tool is absent
/// there), in A's order then B's new ones; none when neither side declares any.
pub(crate) fn diff_nested(
    parent: &str,
    a: Option<&Tool>,
    b: Option<&Tool>,
    norm: &mut Norm,
) -> Vec<ToolEntry> {
    let list = |t: Option<&Tool>| t.map(|t| t.nested.clone()).unwrap_or_default();
    let (na, nb) = (list(a), list(b));
    if na.is_empty() && nb.is_empty() {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    let names: Vec<String> = na
        .iter()
        .chain(&nb)
        .map(|n| n.name.clone())
        .filter(|n| seen.insert(n.clone()))
        .collect();
    names
        .iter()
        .map(|name| {
            let text = |t: Option<&Tool>, list: &[crate::api::NestedTool]| {
                let t = t?;
                let n = list.iter().find(|n| &n.name == name)?;
                Some(t.nested_text(n).to_string())
            };
            entry(parent, name, text(a, &na), text(b, &nb), norm)
        })
        .collect()
}

/// One nested declaration's entry from its text on each side.
fn entry(
    parent: &str,
    name: &str,
    a: Option<String>,
    b: Option<String>,
    norm: &mut Norm,
) -> ToolEntry {
    let state = |t: &Option<String>| {
        if t.is_some() {
            ToolState::Loaded
        } else {
            ToolState::Absent
        }
    };
    let (a_bytes, b_bytes) = (
        a.as_ref().map_or(0, String::len),
        b.as_ref().map_or(0, String::len),
    );
    let mut e = ToolEntry {
        name: format!("{parent}/{name}"),
        status: ToolStatus::Same,
        a: state(&a),
        b: state(&b),
        a_bytes,
        b_bytes,
        delta: b_bytes as i64 - a_bytes as i64,
        description: None,
        schema: vec![],
        other: vec![],
    };
    e.status = match (&a, &b) {
        (None, Some(_)) => ToolStatus::Added,
        (Some(_), None) => ToolStatus::Removed,
        (Some(ta), Some(tb)) if ta == tb => ToolStatus::Same,
        (Some(ta), Some(tb)) => {
            let (da, db) = (norm.quiet(ta), norm.quiet(tb));
            if da == db {
                ToolStatus::Same
            } else {
                e.description = Some(diff_text(&da, &db));
                ToolStatus::Changed
            }
        }
        (None, None) => ToolStatus::Same,
    };
    e
}
