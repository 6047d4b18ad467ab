//! The command line: clap definitions ([`args`], [`sources`], [`answers`], with the
//! flag groups they share in [`shared`]) whose values are parsed into the library's types
//! on the way in ([`parse`]); their conversion into the library's configs, ripgrep's
//! `hiargs` step ([`config`]); the one exit-code list ([`exit`]); and the help around
//! them: the exit-code footer, completions and man pages generated from the same
//! definitions ([`help`]). The library never sees clap.

pub mod answers;
pub mod args;
pub mod config;
pub mod exit;
pub mod help;
pub mod parse;
pub mod shared;
pub mod sources;

pub use answers::*;
pub use args::*;
pub use help::{parse, write_completions, write_man_page, write_man_pages};
pub use shared::*;
pub use sources::*;
