//! One tool's row in a tool diff ([`ToolEntry`]): its state on each side ([`ToolState`])
//! and what changed ([`ToolStatus`]); shared by the top-level tool diff and the diff of
//! nested declarations.

use serde::Serialize;

use super::schema::SchemaChange;
use super::text::TextDiff;

/// Where a tool stands on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolState {
    /// Neither defined nor announced.
    Absent,
    /// Defined without `defer_loading`: in the prompt.
    Loaded,
    /// Defined with `defer_loading: true`: loaded on demand.
    DeferredDefinition,
    /// A `defer_loading` definition that stands for no tool.
    Placeholder,
    /// Not defined; announced by name for ToolSearch.
    Announced,
}

impl ToolState {
    pub(super) fn deferred(self) -> bool {
        matches!(self, ToolState::DeferredDefinition | ToolState::Announced)
    }
    pub(super) fn defined(self) -> bool {
        matches!(
            self,
            ToolState::Loaded | ToolState::DeferredDefinition | ToolState::Placeholder
        )
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
    Fetched,
    /// The reverse of [`ToolStatus::Fetched`].
    Unfetched,
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
