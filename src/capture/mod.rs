//! Sources of exchanges: the fake API server, the recorder that runs CLIs under it, and
//! packet captures ([`pcap`]: capture files and live interfaces).

pub mod ca;
pub mod matrix;
pub mod npm;
pub mod pcap;
pub mod record;
pub mod resend;
pub mod server;
