//! Prompt export (`agentwire prompt`): the full system prompt blocks, tool definitions and
//! the context injected into the messages (marked as such) of one request, as Markdown (what people publish by hand to track prompt
//! history) or JSON. Nothing is shortened; recorded text sits in code fences long enough
//! that it cannot close them.

use serde::Serialize;

use super::meta::{InputMeta, Meta};
use super::{page, DocFormat};
use crate::api::tools::ToolView;
use crate::api::MessagesRequest;

/// One system block: its index, size and breakpoint (as the diff reports them) and its
/// whole text.
#[derive(Clone, Debug, Serialize)]
pub struct SystemBlock {
    /// Index, size in bytes, end offset and `cache_control`.
    #[serde(flatten)]
    pub block: crate::diff::request::SystemBlock,
    /// The block's text, whole.
    pub text: String,
}

/// One tool definition.
#[derive(Clone, Debug, Serialize)]
pub struct ToolDef {
    /// Name.
    pub name: String,
    /// Size of the definition as sent, bytes.
    pub bytes: usize,
    /// `type` of a server tool.
    pub r#type: Option<String>,
    /// `defer_loading: true`.
    pub defer_loading: bool,
    /// The tool's role in the api layer's words ([`crate::api::tools`]): `loaded`,
    /// `deferred definition` or `placeholder`.
    pub role: &'static str,
    /// Description, whole.
    pub description: Option<String>,
    /// `input_schema`, pretty-printed JSON.
    pub input_schema: Option<String>,
}

/// The prompt of one request.
#[derive(Clone, Debug, Serialize)]
pub struct Prompt {
    /// Head: title and input.
    pub meta: Meta,
    /// Exchange id in its trace.
    pub exchange: u64,
    /// `model`, if sent.
    pub model: Option<String>,
    /// System blocks in order.
    pub system: Vec<SystemBlock>,
    /// Tool definitions in order.
    pub tools: Vec<ToolDef>,
    /// Context the client injected into the messages (`system`-role messages,
    /// `<system-reminder>` blocks), marked by kind, in order.
    pub injected: Vec<crate::diff::request::Injected>,
    /// Tools announced by name for ToolSearch (not defined), in order.
    pub announced: Vec<String>,
    /// The tools by role, as the api layer counts them (loaded, deferred, announced,
    /// deferred definitions, placeholders).
    pub view: ToolView,
}

/// The prompt of request `req` (parsed from `body`, the decoded request body), exchange
/// `exchange` of `input`.
pub fn prompt(req: &MessagesRequest, body: &[u8], exchange: u64, input: InputMeta) -> Prompt {
    let texts = req.system.iter().flat_map(|s| s.blocks.iter());
    let system = crate::diff::request::system_blocks(req)
        .into_iter()
        .zip(texts)
        .map(|(block, b)| SystemBlock {
            block,
            text: b.text().unwrap_or_default().to_string(),
        })
        .collect();
    let view = ToolView::of(req);
    let defined: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    let role = |name: &str| {
        if view.placeholders.iter().any(|n| n == name) {
            "placeholder"
        } else if view.deferred_definitions.iter().any(|n| n == name) {
            "deferred definition"
        } else {
            "loaded"
        }
    };
    let title = format!("Prompt of {} — {}", input.name(), input.setup());
    Prompt {
        meta: Meta::new(title, vec![input]),
        exchange,
        model: req.model.clone(),
        system,
        injected: crate::diff::request::injected(req),
        tools: req
            .tools
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                bytes: t.span.len(),
                r#type: t.tool_type.clone(),
                defer_loading: t.defer_loading,
                role: role(&t.name),
                description: t.description.clone(),
                // Pretty-printed when serde_json reads it; as sent when it does not (a
                // number such as 1e400, nesting past 128 levels), never as `null`.
                input_schema: t.schema_span.map(|s| {
                    let raw = s.slice(body);
                    serde_json::from_slice::<serde_json::Value>(raw)
                        .map(|v| serde_json::to_string_pretty(&v).expect("JSON value"))
                        .unwrap_or_else(|_| crate::api::span::utf8_lossy(raw).into_owned())
                }),
            })
            .collect(),
        announced: view
            .announced
            .iter()
            .filter(|n| !defined.contains(&n.as_str()))
            .cloned()
            .collect(),
        view,
    }
}

/// Render a prompt as Markdown or JSON (HTML is not offered: the Markdown renders on any
/// forge).
pub fn render(p: &Prompt, format: DocFormat) -> String {
    match format {
        DocFormat::Json => crate::text::safe_json::pretty(p),
        DocFormat::Markdown | DocFormat::Html => page::render("prompt.md", p),
    }
}
