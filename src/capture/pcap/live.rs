//! Live capture through libpcap (crate `pcap`): open an interface, apply a BPF filter,
//! and feed every packet to an [`Extractor`] until a duration elapses or `stop` is set.
//! Needs root or CAP_NET_RAW; the error says so.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Extractor, Packet, PcapError};

/// Settings of a live capture.
#[derive(Clone, Debug, Default)]
pub struct LiveConfig {
    /// Interface name (`lo`, `eth0`, `any`).
    pub iface: String,
    /// BPF filter expression (`tcp port 8080`); none: everything.
    pub filter: Option<String>,
    /// Stop after this long; none: until `stop` is set.
    pub duration: Option<Duration>,
}

/// Capture on `cfg.iface`, feeding `ex`; `on_tick` runs after every packet and every
/// read timeout (for progress and for writing finished exchanges). Returns the packets
/// captured.
///
/// Errors: [`PcapError::Permission`] without CAP_NET_RAW, [`PcapError::Live`] for an
/// unknown interface or a bad filter.
pub fn capture(
    cfg: &LiveConfig,
    ex: &mut Extractor,
    stop: &AtomicBool,
    on_tick: &mut dyn FnMut(&mut Extractor),
) -> Result<u64, PcapError> {
    let iface = cfg.iface.clone();
    let live_err = |e: pcap::Error| {
        let detail = e.to_string();
        let lower = detail.to_ascii_lowercase();
        if lower.contains("permission") || lower.contains("not permitted") {
            PcapError::Permission {
                iface: iface.clone(),
                detail,
            }
        } else {
            PcapError::Live {
                iface: iface.clone(),
                detail,
            }
        }
    };
    let mut cap = pcap::Capture::from_device(cfg.iface.as_str())
        .map_err(live_err)?
        .promisc(false)
        .snaplen(262_144)
        .immediate_mode(true)
        .timeout(100)
        .precision(pcap::Precision::Nano)
        .open()
        .map_err(live_err)?;
    if let Some(f) = &cfg.filter {
        cap.filter(f, true).map_err(|e| PcapError::Live {
            iface: cfg.iface.clone(),
            detail: format!("invalid BPF filter {f:?}: {e}"),
        })?;
    }
    let link_type = cap.get_datalink().0 as u32;
    ex.set_source(Some(format!("iface:{}", cfg.iface)));
    let start = Instant::now();
    let mut frame = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) || cfg.duration.is_some_and(|d| start.elapsed() >= d) {
            break;
        }
        match cap.next_packet() {
            Ok(p) => {
                frame += 1;
                let ts = p.header.ts;
                // time_t and suseconds_t are not i64 on every platform.
                #[allow(clippy::unnecessary_cast)]
                let ts_ns = ts.tv_sec as i64 * 1_000_000_000 + ts.tv_usec as i64;
                ex.packet(&Packet {
                    frame,
                    ts_ns,
                    link_type,
                    data: p.data,
                    orig_len: p.header.len,
                });
            }
            Err(pcap::Error::TimeoutExpired) => {}
            Err(e) => return Err(live_err(e)),
        }
        on_tick(ex);
    }
    Ok(frame)
}
