//! Text on its way out, at the bottom of the layers (beside [`crate::output`]): the
//! printable filter every terminal-bound string passes ([`printable()`]), JSON text made
//! safe for a terminal ([`safe_json`]), the Markdown escaping rules ([`markdown`]) and the
//! number and noun formats every renderer and message shares ([`fmt`]). Nothing here
//! reads or writes files; every other layer may use it.

pub mod fmt;
pub mod markdown;
pub mod name;
pub mod printable;
pub mod safe_json;

pub use printable::{printable, printable_lines};
