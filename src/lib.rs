//! agentwire: record the HTTP traffic AI agent CLIs send to the Anthropic Messages API and
//! turn it into answers.
//!
//! The pipeline (see `DESIGN.md` in the README): sources ([`capture`]) produce
//! [`trace::Exchange`] records; everything downstream reads exchanges through the
//! [`api`] view of their bodies; [`diff`] compares requests.

pub mod analyze;
pub mod api;
pub mod capture;
pub mod diff;
pub mod http;
pub mod output;
pub mod report;
pub mod trace;
