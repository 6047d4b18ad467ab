//! The tool side of a request in the field's words: which tools are *loaded* (sent as
//! definitions and part of the cached prompt prefix), *deferred* (loadable on demand
//! through ToolSearch), *announced* (named in a deferred-tools listing) and which
//! definitions are *placeholders*. Every report uses these names (glossary:
//! `docs/diff.md`, "Tool words").
//!
//! Sources: Anthropic, "Tool search tool" and "Tool use with prompt caching" (a tool sent
//! with `defer_loading: true` is not part of the prompt prefix; it is loaded on demand
//! through a `tool_reference`); Claude Code 2.1.304 requests (`ENABLE_TOOL_SEARCH`
//! default) for the listing format: in a `system`-role message, a paragraph "The following
//! deferred tools are now available via ToolSearch. ...:" followed by one tool name per
//! line; the API's own `<available-deferred-tools>` tag form is accepted too. Claude Code
//! also sends a `DeferredToolPlaceholder` definition with `defer_loading: true` that
//! "keeps deferred tool loading active" and names no real tool.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{MessagesRequest, Tool};

/// A ToolSearch mechanism offered by a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mechanism {
    /// `client` (a client tool named ToolSearch) or `server` (`tool_search_tool_*`).
    pub kind: String,
    /// Tool name (client) or tool type (server).
    pub tool: String,
}

/// The tools of one request, by role.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ToolView {
    /// Definitions sent without `defer_loading`: in the prompt and its cached prefix.
    pub loaded: Vec<String>,
    /// Definitions sent with `defer_loading: true` that name a real tool (loaded on
    /// demand; not part of the cached prefix).
    pub deferred_definitions: Vec<String>,
    /// `defer_loading` definitions that stand for no tool (see [`is_placeholder`]).
    pub placeholders: Vec<String>,
    /// Names listed for ToolSearch in a deferred-tools listing, defined or not.
    pub announced: Vec<String>,
    /// Deferred tools as Claude Code counts them: announced names and deferred
    /// definitions, without placeholders, in order of first appearance.
    pub deferred: Vec<String>,
    /// ToolSearch mechanisms.
    pub mechanisms: Vec<Mechanism>,
}

impl ToolView {
    /// The view of a request.
    pub fn of(req: &MessagesRequest) -> ToolView {
        let announced = announced_tools(req);
        let mut v = ToolView {
            announced,
            mechanisms: mechanisms(req),
            ..ToolView::default()
        };
        for t in &req.tools {
            let name = t.qualified_name();
            if !t.defer_loading {
                v.loaded.push(name);
            } else if is_placeholder(t) && !v.announced.contains(&t.name) {
                v.placeholders.push(name);
            } else {
                v.deferred_definitions.push(name);
            }
        }
        let mut seen = BTreeSet::new();
        for n in v.announced.iter().chain(&v.deferred_definitions) {
            if seen.insert(n.as_str()) {
                v.deferred.push(n.clone());
            }
        }
        v
    }
}

/// True for a `defer_loading` definition that names no real tool: Claude Code's
/// `DeferredToolPlaceholder` ("Reserved placeholder that keeps deferred tool loading
/// active; never call this tool"). Rule: the name ends with `Placeholder`, or the
/// description calls it a placeholder.
pub fn is_placeholder(t: &Tool) -> bool {
    t.defer_loading
        && (t.name.ends_with("Placeholder")
            || t.description
                .as_deref()
                .is_some_and(|d| d.to_ascii_lowercase().contains("placeholder")))
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
            Some(ty) if ty.starts_with("tool_search_tool_") || ty == "tool_search" => {
                Some(Mechanism {
                    kind: "server".into(),
                    tool: ty.clone(),
                })
            }
            _ if !t.is_server_tool() && t.name == "ToolSearch" => Some(Mechanism {
                kind: "client".into(),
                tool: t.name.clone(),
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_counts_announced_and_deferred_definitions_not_the_placeholder() {
        // Shaped like Claude Code 2.1.304 after ToolSearch loaded CronList: the listing
        // names three tools, CronList's definition is sent with defer_loading, and the
        // placeholder keeps deferred loading on.
        let body = br#"{"tools":[{"name":"Bash"},{"name":"ToolSearch"},
            {"name":"CronList","defer_loading":true,"description":"List crons"},
            {"name":"DeferredToolPlaceholder","defer_loading":true,"description":"Reserved placeholder that keeps deferred tool loading active; never call this tool."}],
            "messages":[{"role":"system","content":"The following deferred tools are now available via ToolSearch. Use ToolSearch:\nCronCreate\nCronList\nWebFetch\n\nOther text"}]}"#;
        let r = MessagesRequest::parse(body).unwrap();
        let v = ToolView::of(&r);
        assert_eq!(v.loaded, ["Bash", "ToolSearch"]);
        assert_eq!(v.deferred_definitions, ["CronList"]);
        assert_eq!(v.placeholders, ["DeferredToolPlaceholder"]);
        assert_eq!(v.announced, ["CronCreate", "CronList", "WebFetch"]);
        assert_eq!(v.deferred, ["CronCreate", "CronList", "WebFetch"]);
        assert_eq!(v.mechanisms[0].kind, "client");
    }

    /// The older announcement form: names between `<available-deferred-tools>` tags (in a
    /// user message), one per line, up to the closing tag. Each name is announced once.
    #[test]
    fn available_deferred_tools_tag_announcement_is_recognised() {
        let body = br#"{"tools":[{"name":"ToolSearch"}],
            "system":[{"type":"text","text":"You are Claude Code."}],
            "messages":[{"role":"user","content":[
              {"type":"text","text":"<available-deferred-tools>\nCronCreate\nmcp__jobs__get_status\n</available-deferred-tools>"},
              {"type":"text","text":"<available-deferred-tools>\n  WebFetch\nCronCreate\n</available-deferred-tools>\nfix the build"}]}]}"#;
        let r = MessagesRequest::parse(body).unwrap();
        let v = ToolView::of(&r);
        assert_eq!(
            v.announced,
            ["CronCreate", "mcp__jobs__get_status", "WebFetch"]
        );
        assert_eq!(v.deferred, v.announced);
        assert_eq!(v.loaded, ["ToolSearch"]);
        // Text that only mentions the tag, or lists names without an intro, announces nothing.
        let r = MessagesRequest::parse(
            br#"{"messages":[{"role":"user","content":"see available-deferred-tools\nBash\nRead"}]}"#,
        )
        .unwrap();
        assert!(ToolView::of(&r).announced.is_empty());
    }

    /// A listing in the system prompt counts as much as one in a message; a name line ends
    /// the list at the first line that is not a tool name, and a `- ` bullet is not part
    /// of the name. A placeholder that is also announced by name is a deferred tool.
    #[test]
    fn deferred_tools_listing_in_system_with_bullets_ends_at_prose() {
        let body = br#"{"tools":[
              {"name":"Grep","defer_loading":true,"description":"A placeholder-free grep."},
              {"name":"LaterPlaceholder","defer_loading":true,"description":"x"}],
            "system":[{"type":"text","text":"Deferred tools you may load:\n- Grep\n- LaterPlaceholder\nThat is all, thanks.\nNotATool"}],
            "messages":[{"role":"user","content":"hi"}]}"#;
        let r = MessagesRequest::parse(body).unwrap();
        let v = ToolView::of(&r);
        assert_eq!(v.announced, ["Grep", "LaterPlaceholder"]);
        // "placeholder-free" in Grep's description still makes it a placeholder by the
        // documented rule, but it is announced by name, so it counts as deferred.
        assert_eq!(v.placeholders, Vec::<String>::new());
        assert_eq!(v.deferred_definitions, ["Grep", "LaterPlaceholder"]);
        assert_eq!(v.deferred, ["Grep", "LaterPlaceholder"]);
    }

    /// The placeholder rule: only a `defer_loading` definition, and either its name ends
    /// with `Placeholder` or its description says placeholder; a real deferred tool is
    /// none, and neither is a loaded definition whatever its name.
    #[test]
    fn a_placeholder_is_a_deferred_definition_named_or_described_so() {
        let body = br#"{"tools":[
              {"name":"KeepAlivePlaceholder","defer_loading":true},
              {"name":"Reserved","defer_loading":true,"description":"A Placeholder; never call."},
              {"name":"Grep","defer_loading":true,"description":"Search files."},
              {"name":"DeferredToolPlaceholder","description":"Reserved placeholder."}],
            "messages":[{"role":"user","content":"hi"}]}"#;
        let r = MessagesRequest::parse(body).unwrap();
        let got: Vec<bool> = r.tools.iter().map(|t| is_placeholder(t)).collect();
        assert_eq!(got, [true, true, false, false]);
        let v = ToolView::of(&r);
        assert_eq!(v.placeholders, ["KeepAlivePlaceholder", "Reserved"]);
        assert_eq!(v.deferred_definitions, ["Grep"]);
        assert_eq!(v.deferred, ["Grep"]);
        assert_eq!(v.loaded, ["DeferredToolPlaceholder"]);
    }

    /// A listing starts only at an intro line that mentions deferred tools and ends with
    /// `:`: a sentence about deferred tools, or another heading ending with `:`, starts
    /// none. A ToolSearch mechanism is the client tool named ToolSearch or a server tool
    /// of type `tool_search_tool_*`; other server tools (web search) are none.
    #[test]
    fn only_a_deferred_tools_intro_starts_a_listing_and_only_tool_search_is_a_mechanism() {
        let body = br#"{"tools":[
              {"type":"web_search_20250305","name":"web_search"},
              {"type":"tool_search_tool_regex_20251119","name":"tool_search_tool_regex"},
              {"name":"Bash"},
              {"name":"ToolSearch"}],
            "messages":[{"role":"user","content":[
              {"type":"text","text":"Deferred tools are off in this session.\nBash\nRead"},
              {"type":"text","text":"The following deferred tools are now available via ToolSearch:\nCronList\n\nNotes:\nWebFetch"}]}]}"#;
        let r = MessagesRequest::parse(body).unwrap();
        let v = ToolView::of(&r);
        assert_eq!(v.announced, ["CronList"]);
        let m: Vec<(&str, &str)> = v
            .mechanisms
            .iter()
            .map(|m| (m.kind.as_str(), m.tool.as_str()))
            .collect();
        assert_eq!(
            m,
            [
                ("server", "tool_search_tool_regex_20251119"),
                ("client", "ToolSearch")
            ]
        );
    }
}
