//! Sources of exchanges: the fake API server and the recorder that runs CLIs under it.

pub mod ca;
pub mod matrix;
pub mod npm;
pub mod record;
pub mod resend;
pub mod server;
