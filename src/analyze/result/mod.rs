//! The analysis result, built on the detectors' output: [`rows`] (one type per row of the
//! report), [`summary`] (the totals computed from the rows) and [`build`] (the whole
//! report, [`Analysis`], priced and assembled by [`Analysis::build`]).

pub mod attribution;
pub mod build;
mod reconcile;
mod redact;
pub mod rows;
pub mod summary;

pub use attribution::CostAttribution;
pub use build::{Analysis, BuildInput, PriceInfo, UsageUsed, SCHEMA_VERSION};
pub use reconcile::TtlBilled;
pub use rows::{
    EpisodeRow, InputInfo, JobRow, RedundantPoll, RequestRow, SkippedFile, ThreadRow, Unattributed,
    LISTED_BAD_LINES,
};
pub use summary::{Agreement, CauseRow, Totals};
