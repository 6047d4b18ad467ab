//! Tool-definition diff: added, removed, deferred, undeferred, announced, fetched by
//! ToolSearch, changed (description text and input-schema properties), each tool's size
//! in wire bytes, and which ToolSearch mechanism each side offers.
//!
//! The words (loaded, deferred, announced, deferred definition, placeholder, fetched) are
//! the api layer's ([`crate::api::tools`]); the glossary is in `docs/diff.md`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::norm::Norm;
use super::schema::diff_schema;
use super::text::diff_text;
use crate::api::tools::{is_placeholder, Mechanism, ToolView};
use crate::api::{MessagesRequest, Tool};

pub use super::entry::{ToolEntry, ToolState, ToolStatus};

/// The tool part of a request diff.
#[derive(Clone, Debug, Serialize)]
pub struct ToolsDiff {
    /// True when the `tools` arrays are the same after normalization: byte-identical, or
    /// both present with the same tools in the same order, each the same after
    /// normalization (over its JSON's text view: strings decoded, layout dropped).
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
    /// Definitions sent (deferred) after ToolSearch fetched them.
    pub fetched: Vec<String>,
    /// Definitions no longer sent, still announced.
    pub unfetched: Vec<String>,
    /// Changed.
    pub changed: Vec<String>,
    /// Every tool, sorted by |delta| (largest first), then status, then name.
    pub entries: Vec<ToolEntry>,
}

fn state(tool: Option<&Tool>, announced: &[String], name: &str) -> ToolState {
    match tool {
        Some(t) if is_placeholder(t) && !announced.iter().any(|a| a == name) => {
            ToolState::Placeholder
        }
        Some(t) if t.defer_loading => ToolState::DeferredDefinition,
        Some(_) => ToolState::Loaded,
        None if announced.iter().any(|a| a == name) => ToolState::Announced,
        None => ToolState::Absent,
    }
}

fn status(a: ToolState, b: ToolState, same_definition: bool) -> ToolStatus {
    use ToolState::*;
    match (a, b) {
        (Absent, Loaded | DeferredDefinition | Placeholder) => ToolStatus::Added,
        (Loaded | DeferredDefinition | Placeholder, Absent) => ToolStatus::Removed,
        (Loaded | Placeholder, DeferredDefinition | Announced) => ToolStatus::Deferred,
        (DeferredDefinition | Announced, Loaded | Placeholder) => ToolStatus::Undeferred,
        (Absent, Announced) => ToolStatus::Announced,
        (Announced, Absent) => ToolStatus::Unannounced,
        (Absent, Absent) | (Announced, Announced) => ToolStatus::Same,
        (Announced, DeferredDefinition) => ToolStatus::Fetched,
        (DeferredDefinition, Announced) => ToolStatus::Unfetched,
        (Loaded, Placeholder) | (Placeholder, Loaded) => ToolStatus::Changed,
        (Loaded, Loaded)
        | (DeferredDefinition, DeferredDefinition)
        | (Placeholder, Placeholder)
            if same_definition =>
        {
            ToolStatus::Same
        }
        (Loaded, Loaded)
        | (DeferredDefinition, DeferredDefinition)
        | (Placeholder, Placeholder) => ToolStatus::Changed,
    }
}

/// One side of the tool diff: the parsed request, its body, and the normalizer.
pub(crate) struct ToolSide<'a> {
    pub req: &'a MessagesRequest,
    pub body: &'a [u8],
}

/// A tool's key on one side: its name and occurrence (the k-th `Bash` of A pairs with
/// the k-th `Bash` of B).
type Key<'a> = (&'a str, usize);

/// The tools of one side with their keys, in order; `names` are their qualified names
/// ([`Tool::qualified_name`]: `namespace.name` for a tool sent in a namespace).
fn keyed<'a>(tools: &'a [Arc<Tool>], names: &'a [String]) -> Vec<(Key<'a>, &'a Tool)> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    tools
        .iter()
        .zip(names)
        .map(|(t, name)| {
            let k = count.entry(name.as_str()).or_default();
            *k += 1;
            ((name.as_str(), *k - 1), &**t)
        })
        .collect()
}

/// Every key of either side once, in order: A's tools, A's announced names, B's tools,
/// B's announced names.
fn all_keys<'a>(
    keys_a: &[Key<'a>],
    ann_a: &'a [String],
    keys_b: &[Key<'a>],
    ann_b: &'a [String],
) -> Vec<Key<'a>> {
    let mut names: Vec<Key<'a>> = Vec::new();
    let mut seen = BTreeSet::new();
    for n in keys_a
        .iter()
        .copied()
        .chain(ann_a.iter().map(|n| (n.as_str(), 0)))
        .chain(keys_b.iter().copied())
        .chain(ann_b.iter().map(|n| (n.as_str(), 0)))
    {
        if seen.insert(n) {
            names.push(n);
        }
    }
    names
}

impl ToolsDiff {
    /// No tools filed yet.
    fn new(identical: bool, a: ToolView, b: ToolView) -> ToolsDiff {
        ToolsDiff {
            identical,
            a_mechanisms: a.mechanisms,
            b_mechanisms: b.mechanisms,
            a_announced: a.announced,
            b_announced: b.announced,
            added: vec![],
            removed: vec![],
            deferred: vec![],
            undeferred: vec![],
            announced: vec![],
            unannounced: vec![],
            fetched: vec![],
            unfetched: vec![],
            changed: vec![],
            entries: vec![],
        }
    }

    /// Keep `entry`, and its name in the list of its status (every status but `same`).
    fn file(&mut self, entry: ToolEntry) {
        let list = match entry.status {
            ToolStatus::Added => &mut self.added,
            ToolStatus::Removed => &mut self.removed,
            ToolStatus::Deferred => &mut self.deferred,
            ToolStatus::Undeferred => &mut self.undeferred,
            ToolStatus::Announced => &mut self.announced,
            ToolStatus::Unannounced => &mut self.unannounced,
            ToolStatus::Fetched => &mut self.fetched,
            ToolStatus::Unfetched => &mut self.unfetched,
            ToolStatus::Changed => &mut self.changed,
            ToolStatus::Same => {
                self.entries.push(entry);
                return;
            }
        };
        list.push(entry.name.clone());
        self.entries.push(entry);
    }
}

/// Diff the tool definitions of two requests.
pub(crate) fn diff_tools<'a>(a: &ToolSide<'a>, b: &ToolSide<'a>, norm: &mut Norm) -> ToolsDiff {
    let text_a = a.req.tools_text(a.body);
    let text_b = b.req.tools_text(b.body);
    let raw_same = match (&text_a, &text_b) {
        (Some(x), Some(y)) => x == y,
        (None, None) => true,
        _ => false,
    };
    let mut d = ToolsDiff::new(raw_same, ToolView::of(a.req), ToolView::of(b.req));
    let (ann_a, ann_b) = (d.a_announced.clone(), d.b_announced.clone());
    let qualified = |r: &MessagesRequest| -> Vec<String> {
        r.tools.iter().map(|t| t.qualified_name()).collect()
    };
    let (names_a, names_b) = (qualified(a.req), qualified(b.req));
    let (tools_a, tools_b) = (keyed(&a.req.tools, &names_a), keyed(&b.req.tools, &names_b));
    let keys_a: Vec<Key> = tools_a.iter().map(|(k, _)| *k).collect();
    let keys_b: Vec<Key> = tools_b.iter().map(|(k, _)| *k).collect();
    let names = all_keys(&keys_a, &ann_a, &keys_b, &ann_b);
    let by_key_a: HashMap<Key, &Tool> = tools_a.into_iter().collect();
    let by_key_b: HashMap<Key, &Tool> = tools_b.into_iter().collect();
    for (name, k) in names {
        let (ta, tb) = (
            by_key_a.get(&(name, k)).copied(),
            by_key_b.get(&(name, k)).copied(),
        );
        let mut entry = entry(
            name,
            (ta, a.body, &ann_a),
            (tb, b.body, &ann_b),
            raw_same,
            norm,
        );
        if k > 0 {
            entry.name = format!("{name} (definition {})", k + 1);
        }
        let parent = entry.name.clone();
        d.file(entry);
        for nested in super::nested::diff_nested(&parent, ta, tb, norm) {
            d.file(nested);
        }
    }
    // Arrays whose bytes differ are the same after normalization when both are there,
    // every tool is the same after normalization, and they come in the same order.
    d.identical = raw_same
        || (text_a.is_some() == text_b.is_some()
            && d.entries.iter().all(|e| e.status == ToolStatus::Same)
            && keys_a == keys_b);
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
        let (raw_a, raw_b) = (ta.span.slice(body_a), tb.span.slice(body_b));
        // Compared over the JSON's text view: strings decoded, layout dropped.
        same_definition = all_same || raw_a == raw_b || norm.json_a(raw_a) == norm.json_b(raw_b);
        if !same_definition {
            // The parts of a changed definition are shown normalized; their replacements
            // were counted with the whole definition above.
            let da = norm.quiet(ta.description.as_deref().unwrap_or(""));
            let db = norm.quiet(tb.description.as_deref().unwrap_or(""));
            if da != db {
                e.description = Some(diff_text(&da, &db));
            }
            let sch_a = ta.input_schema(body_a).unwrap_or(Value::Null);
            let sch_b = tb.input_schema(body_b).unwrap_or(Value::Null);
            diff_schema("", &sch_a, &sch_b, &mut e.schema, norm);
            super::schema::attach_facts(&mut e.schema, &sch_a, &sch_b, norm);
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

#[cfg(test)]
mod tests {
    use crate::api::normalize::Normalizer;
    use crate::diff::request::{diff_requests, RequestDiff, RequestSide};

    fn tool(name: &str, description: &str) -> String {
        format!(
            r#"{{"name":"{name}","description":"{description}","input_schema":{{"type":"object"}}}}"#
        )
    }

    fn diff(a_tools: &[String], b_tools: &[String]) -> RequestDiff {
        let body = |t: &[String]| {
            format!(
                r#"{{"model":"m","max_tokens":1,"tools":[{}],"messages":[{{"role":"user","content":"hi"}}]}}"#,
                t.join(",")
            )
        };
        diff_bodies(body(a_tools), body(b_tools))
    }

    /// The diff of two request bodies, with the default rules.
    fn diff_bodies(a: String, b: String) -> RequestDiff {
        let side = |label: &str, body: &'static str| RequestSide {
            label: label.into(),
            exchange: None,
            session: None,
            thread: None,
            headers: &[],
            body: body.as_bytes(),
        };
        let (a, b): (&'static str, &'static str) = (a.leak(), b.leak());
        diff_requests(&side("a", a), &side("b", b), &Normalizer::defaults()).unwrap()
    }

    fn session_ids(d: &RequestDiff) -> (u64, u64) {
        d.normalized
            .iter()
            .find(|r| r.rule == "session-id")
            .map_or((0, 0), |r| (r.a, r.b))
    }

    const U1: &str = "0b9f4a57-1c2d-4e5f-8a9b-0c1d2e3f4a5b";
    const U2: &str = "7d3e2c1b-9a8f-4e7d-6c5b-4a3f2e1d0c9b";
    const U3: &str = "11111111-2222-4333-8444-555555555555";

    #[test]
    fn tools_that_differ_only_by_a_volatile_id_are_identical_and_each_id_is_counted_once() {
        let d = diff(
            &[tool("Bash", &format!("session {U1}")), tool("Grep", "find")],
            &[tool("Bash", &format!("session {U2}")), tool("Grep", "find")],
        );
        assert!(d.tools.identical);
        assert!(d.tools.changed.is_empty());
        // One UUID hidden per side: the whole list and the tool are one comparison, not two.
        assert_eq!(session_ids(&d), (1, 1));
    }

    #[test]
    fn reordered_tools_are_not_identical_though_each_tool_is_the_same() {
        let (x, y) = (tool("Bash", "run"), tool("Grep", "find"));
        let d = diff(&[x.clone(), y.clone()], &[y, x]);
        assert!(!d.tools.identical);
        assert!(d.tools.changed.is_empty() && d.tools.added.is_empty());
    }

    #[test]
    fn a_changed_tool_makes_the_lists_differ_and_only_its_ids_are_counted() {
        let d = diff(
            &[
                tool("Bash", &format!("session {U1}")),
                tool("Grep", &format!("in {U3}")),
            ],
            &[
                tool("Bash", &format!("session {U2}, now with a timeout")),
                tool("Grep", &format!("in {U3}")),
            ],
        );
        assert!(!d.tools.identical);
        assert_eq!(d.tools.changed, vec!["Bash".to_string()]);
        // Bash's UUID is counted once per side (its definition, not again for its
        // description's diff); Grep's is the same on both sides: nothing was hidden there.
        assert_eq!(session_ids(&d), (1, 1));
    }

    /// Reported by an adversarial tester: text rules ran over the raw JSON of a tool
    /// definition, where a newline is the two characters `\n`: `/tmp/[^\s…]*` swallowed
    /// the rest of the description ("Always" vs "Never" delete files) and the requests
    /// read as identical after normalization.
    #[test]
    fn a_rule_stops_at_the_end_of_a_line_inside_a_tool_description() {
        let d = diff(
            &[tool("Bash", r"Scratch dir /tmp/x\nAlways delete files.")],
            &[tool("Bash", r"Scratch dir /tmp/y\nNever delete files.")],
        );
        assert!(!d.tools.identical);
        assert_eq!(d.tools.changed, vec!["Bash".to_string()]);
        let desc = d.tools.entries[0]
            .description
            .as_ref()
            .expect("a description diff");
        assert!(!desc.identical);
        // Only the path differs: it is hidden.
        let d = diff(
            &[tool("Bash", r"Scratch dir /tmp/x\nAlways delete files.")],
            &[tool("Bash", r"Scratch dir /tmp/y\nAlways delete files.")],
        );
        assert!(d.tools.identical);
    }

    /// Reported by an adversarial tester: only the first tool of a name was compared, so
    /// a changed or removed second `Bash` read as "order or formatting only".
    #[test]
    fn a_second_tool_of_the_same_name_is_compared_too() {
        let d = diff(
            &[tool("Bash", "one"), tool("Bash", "two")],
            &[tool("Bash", "one"), tool("Bash", "two, changed")],
        );
        assert!(!d.tools.identical);
        assert_eq!(d.tools.changed, vec!["Bash (definition 2)".to_string()]);
        let d = diff(
            &[tool("Bash", "one"), tool("Bash", "two")],
            &[tool("Bash", "one")],
        );
        assert_eq!(d.tools.removed, vec!["Bash (definition 2)".to_string()]);
    }

    /// Reported by an adversarial tester: a definition that differed only in layout
    /// (indentation, member order, `\u0061` for `a`) was "changed" with nothing shown.
    #[test]
    fn a_definition_that_differs_only_in_layout_is_the_same() {
        let pretty = "{\n  \"input_schema\": {\"type\": \"object\"},\n  \"description\": \"run\",\n  \"name\": \"B\\u0061sh\"\n}";
        let d = diff(&[tool("Bash", "run")], &[pretty.to_string()]);
        assert!(d.tools.changed.is_empty(), "{:?}", d.tools.changed);
        assert!(d.tools.identical);
        assert_ne!(
            d.size("tool_bytes").unwrap().delta,
            0,
            "sizes stay wire bytes"
        );
    }

    /// The kind of the fault above, in a parameter and in a schema keyword: a text rule run
    /// over JSON text (`Working directory: [^\s]+`) ran past the closing quote into the
    /// next member and hid its change.
    #[test]
    fn a_rule_stops_where_the_string_stops_in_parameters_and_schema_keywords() {
        let body = |meta: &str, enumv: &str| {
            format!(
                r#"{{"model":"m","max_tokens":1,"metadata":{{"note":"Working directory: /w","mode":"{meta}"}},"tools":[{{"name":"T","description":"d","input_schema":{{"type":"object","default":{{"p":"cwd: /x","q":"{enumv}"}}}}}}],"messages":[{{"role":"user","content":"hi"}}]}}"#
            )
        };
        let d = diff_bodies(body("fast", "one"), body("slow", "two"));
        let meta = d.params.iter().find(|p| p.key == "metadata").unwrap();
        assert!(meta.changed, "{meta:?}");
        let t = &d.tools.entries[0];
        assert!(
            t.schema.iter().any(|c| c.change == "default"),
            "{:?}",
            t.schema
        );
        assert!(!d.identical);
    }
}
