//! agentwire: record the HTTP traffic AI agent CLIs send to their model APIs and turn it
//! into answers.
//!
//! The pipeline (see `DESIGN.md` in the README), as layers; a lower layer never imports a
//! higher one:
//!
//! - bottom: [`output`] (opening output files, one policy) and [`gzip`] (compressed
//!   files read up to their first error);
//! - [`trace`]: the [`trace::Exchange`] model every source produces, its JSON Lines
//!   reader and writer, redaction;
//! - [`api`]: the view of exchange bodies (request and response models, the canonical
//!   view, normalization, cache rules, prices);
//! - sources: [`capture`] (the fake server, recording proxy, `record`, pcap and live
//!   capture, the MCP tap) and [`import`] (other tools' files);
//! - [`input`]: opening any input (trace, capture, import, directory, `-`) as a record
//!   stream, with format detection;
//! - answers: [`diff`] (requests and traces compared) and [`analyze`] (polling, prompt
//!   cache, background jobs);
//! - [`report`]: the renderers (terminal, Markdown, JSON, HTML, Parquet); above it
//!   [`viewer`], the local web app that shows a trace's conversation with the audit on it.
//!
//! The binary's `cli` and `cmd` sit on top.

#![warn(missing_docs)]

pub mod analyze;
pub mod api;
pub mod capture;
pub mod diff;
pub mod gate;
pub mod gzip;
pub mod http;
pub mod import;
pub mod input;
pub mod output;
pub mod report;
pub mod text;
pub mod trace;
pub mod viewer;
