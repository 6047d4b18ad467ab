//! The Google Gemini dialect (`POST …/models/MODEL:generateContent` and
//! `:streamGenerateContent`, any version prefix: `v1`, `v1beta`, `v1alpha`): request
//! bodies ([`parse`]), parts as content blocks ([`parts`]), answers and their streams
//! ([`stream`]), usage ([`usage`]), the implicit prompt cache's rules ([`cache`]) and
//! prices ([`prices`]).

pub mod cache;
pub mod events;
pub mod parts;
pub mod prices;
mod request;
pub mod stream;
pub mod usage;

pub use request::{parse, with_path, KNOWN_PARAMS};
pub use stream::read_body;
