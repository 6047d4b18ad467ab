//! Input-schema diff by property: properties added and removed, `type`, `description`,
//! `default`, `enum` and other keywords changed, and `required` changes, recursing into
//! nested object properties (`a.b`) and array items (`a[]`).
//!
//! Source: tool `input_schema` is a JSON Schema object (Messages API reference, "Tools").

use serde::Serialize;
use serde_json::{Map, Value};

use super::norm::Norm;

/// One change of an input schema.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchemaChange {
    /// Property path: `command`, `edits[].old_string`; empty for the schema root.
    pub path: String,
    /// What changed: `added`, `removed`, `required_added`, `required_removed`, or the
    /// keyword whose value changed (`type`, `description`, `default`, `enum`, ...).
    pub change: String,
    /// Old value (compact JSON; normalized), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<String>,
    /// New value, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<String>,
    /// The property at `path` before the change (type, enum values, default,
    /// description), when A has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a_property: Option<PropertyFacts>,
    /// The property at `path` after the change, when B has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_property: Option<PropertyFacts>,
}

/// What a reader needs to know of one schema property: its JSON Schema `type`, `enum`
/// values, `default` and `description` (normalized), each as written (compact JSON for
/// non-strings).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PropertyFacts {
    /// `type` (`string`, `["string","null"]`), if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// `enum` values as compact JSON each, if given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub r#enum: Vec<String>,
    /// `default`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// `description`, if given (whole, normalized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl PropertyFacts {
    fn of(v: &Value, norm: &mut dyn FnMut(&str) -> String) -> Option<PropertyFacts> {
        let o = v.as_object()?;
        let f = PropertyFacts {
            r#type: o.get("type").map(compact),
            r#enum: o
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| e.iter().map(|x| x.to_string()).collect())
                .unwrap_or_default(),
            default: o.get("default").map(|d| norm(&d.to_string())),
            description: o.get("description").map(|d| norm(&compact(d))),
        };
        Some(f)
    }
}

const STRUCTURAL: &[&str] = &["properties", "required", "items"];

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn props(v: &Value) -> Option<&Map<String, Value>> {
    v.get("properties").and_then(Value::as_object)
}

fn required(v: &Value) -> Vec<&str> {
    v.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl SchemaChange {
    /// A change of `change` at `path` from `a` to `b`, without property facts (added by
    /// [`attach_facts`]).
    fn new(path: String, change: &str, a: Option<String>, b: Option<String>) -> SchemaChange {
        SchemaChange {
            path,
            change: change.to_string(),
            a,
            b,
            a_property: None,
            b_property: None,
        }
    }
}

/// Append the changes from schema `a` to schema `b` at `path` to `out`. Keyword values are
/// compared after normalization.
pub(crate) fn diff_schema(
    path: &str,
    a: &Value,
    b: &Value,
    out: &mut Vec<SchemaChange>,
    norm: &mut Norm,
) {
    if a == b {
        return;
    }
    let (Some(oa), Some(ob)) = (a.as_object(), b.as_object()) else {
        let (ca, cb) = (Some(compact(a)), Some(compact(b)));
        out.push(SchemaChange::new(path.to_string(), "schema", ca, cb));
        return;
    };
    keyword_changes(path, oa, ob, out, norm);
    property_changes(path, a, b, out, norm);
    required_changes(path, a, b, out);
    match (a.get("items"), b.get("items")) {
        (Some(ia), Some(ib)) => diff_schema(&format!("{path}[]"), ia, ib, out, norm),
        (None, None) => {}
        (ia, ib) => out.push(SchemaChange::new(
            format!("{path}[]"),
            if ia.is_none() { "added" } else { "removed" },
            ia.map(compact),
            ib.map(compact),
        )),
    }
}

/// Keywords of one node whose values differ: type, description, default, then others by
/// name (the structural ones, [`STRUCTURAL`], are compared by the other steps).
fn keyword_changes(
    path: &str,
    oa: &Map<String, Value>,
    ob: &Map<String, Value>,
    out: &mut Vec<SchemaChange>,
    norm: &mut Norm,
) {
    let mut keys: Vec<&String> = oa.keys().chain(ob.keys()).collect();
    keys.sort_by_key(|k| (rank(k), k.to_string()));
    keys.dedup();
    for k in keys {
        if STRUCTURAL.contains(&k.as_str()) {
            continue;
        }
        // Compared over the values' text views (a rule stops where a string does), shown
        // as compact text; counted once already, with the whole tool definition.
        let (xa, xb) = (oa.get(k), ob.get(k));
        if xa.map(|v| norm.quiet_value(v)) != xb.map(|v| norm.quiet_value(v)) {
            let na = xa.map(|v| norm.quiet(&compact(v)));
            let nb = xb.map(|v| norm.quiet(&compact(v)));
            out.push(SchemaChange::new(path.to_string(), k, na, nb));
        }
    }
}

/// Properties removed, added or changed (recursing), in document order (serde_json
/// `preserve_order`): A's first, then B's new ones.
fn property_changes(
    path: &str,
    a: &Value,
    b: &Value,
    out: &mut Vec<SchemaChange>,
    norm: &mut Norm,
) {
    let empty = Map::new();
    let pa = props(a).unwrap_or(&empty);
    let pb = props(b).unwrap_or(&empty);
    for (k, va) in pa {
        match pb.get(k) {
            None => {
                let ty = va.get("type").map(compact);
                out.push(SchemaChange::new(join(path, k), "removed", ty, None));
            }
            Some(vb) => diff_schema(&join(path, k), va, vb, out, norm),
        }
    }
    for (k, vb) in pb {
        if !pa.contains_key(k) {
            let ty = vb.get("type").map(compact);
            out.push(SchemaChange::new(join(path, k), "added", None, ty));
        }
    }
}

/// Names that became required, then names that stopped being required.
fn required_changes(path: &str, a: &Value, b: &Value, out: &mut Vec<SchemaChange>) {
    let (ra, rb) = (required(a), required(b));
    for r in rb.iter().filter(|r| !ra.contains(r)) {
        out.push(SchemaChange::new(
            join(path, r),
            "required_added",
            None,
            None,
        ));
    }
    for r in ra.iter().filter(|r| !rb.contains(r)) {
        out.push(SchemaChange::new(
            join(path, r),
            "required_removed",
            None,
            None,
        ));
    }
}

/// The property schema at `path` (`a.b`, `a[]`, `a[].b`; empty: the root) of a schema.
fn property_at<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    let mut v = root;
    if path.is_empty() {
        return Some(v);
    }
    for part in path.split('.') {
        let (name, arrays) = match part.find("[]") {
            Some(i) => (&part[..i], part[i..].matches("[]").count()),
            None => (part, 0),
        };
        if !name.is_empty() {
            v = props(v)?.get(name)?;
        }
        for _ in 0..arrays {
            v = v.get("items")?;
        }
    }
    Some(v)
}

/// Fill in [`SchemaChange::a_property`] and [`SchemaChange::b_property`] of `changes`
/// from the two root schemas.
pub(crate) fn attach_facts(changes: &mut [SchemaChange], a: &Value, b: &Value, norm: &Norm) {
    for c in changes {
        if let Some(p) = property_at(a, &c.path) {
            c.a_property = PropertyFacts::of(p, &mut |s| norm.quiet(s));
        }
        if let Some(p) = property_at(b, &c.path) {
            c.b_property = PropertyFacts::of(p, &mut |s| norm.quiet(s));
        }
    }
}

fn rank(k: &str) -> u8 {
    match k {
        "type" => 0,
        "description" => 1,
        "default" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::normalize::Normalizer;
    use serde_json::json;

    #[test]
    fn property_level_changes() {
        let a = json!({"type":"object","properties":{
            "command":{"type":"string","description":"cmd"},
            "timeout":{"type":"number","default":120},
            "old":{"type":"string"},
            "edits":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}}}}},
            "required":["command","old"]});
        let b = json!({"type":"object","properties":{
            "command":{"type":"string","description":"the command"},
            "timeout":{"type":"integer","default":600},
            "edits":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"boolean"}}}},
            "new":{"type":"boolean"}},
            "required":["command","new"],"additionalProperties":false});
        let n = Normalizer::none();
        let mut norm = Norm::new(&n);
        let mut out = Vec::new();
        diff_schema("", &a, &b, &mut out, &mut norm);
        let got: Vec<(String, String)> = out
            .iter()
            .map(|c| (c.path.clone(), c.change.clone()))
            .collect();
        let want = [
            ("", "additionalProperties"),
            ("command", "description"),
            ("timeout", "type"),
            ("timeout", "default"),
            ("old", "removed"),
            ("edits[].y", "added"),
            ("new", "added"),
            ("new", "required_added"),
            ("old", "required_removed"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(out[2].a.as_deref(), Some("number"));
        assert_eq!(out[2].b.as_deref(), Some("integer"));
        assert_eq!(out[3].b.as_deref(), Some("600"));
    }
}
