//! The analysis result, built on the detectors' output: [`rows`] (one type per row of the
//! report), [`summary`] (the totals computed from the rows), [`analysis`] (the whole
//! report, [`Analysis`]) and [`build`] (how it is priced and assembled, [`Analysis::build`]).

pub mod analysis;
pub mod attribution;
pub mod build;
mod reconcile;
mod redact;
pub mod rows;
pub mod summary;

pub use analysis::{Analysis, PriceInfo, UsageUsed, SCHEMA_VERSION};
pub use attribution::CostAttribution;
pub use build::BuildInput;
pub use reconcile::TtlBilled;
pub use rows::{
    EpisodeRow, InputInfo, JobRow, RedundantPoll, RequestRow, SkippedFile, ThreadRow, Unattributed,
    LISTED_BAD_LINES,
};
pub use summary::{Agreement, CauseRow, Totals};
