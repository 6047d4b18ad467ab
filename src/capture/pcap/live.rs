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

/// An open live capture: the interface is open and the filter applied.
pub struct LiveCapture {
    cap: pcap::Capture<pcap::Active>,
    cfg: LiveConfig,
    /// Link type of the interface (`LINKTYPE_*`).
    pub link_type: u32,
}

fn live_err(iface: &str, e: pcap::Error) -> PcapError {
    let detail = e.to_string();
    let lower = detail.to_ascii_lowercase();
    if lower.contains("permission") || lower.contains("not permitted") {
        PcapError::Permission {
            iface: iface.to_string(),
            detail,
        }
    } else {
        PcapError::Live {
            iface: iface.to_string(),
            detail,
        }
    }
}

/// Open `cfg.iface` and apply `cfg.filter`.
///
/// Errors: [`PcapError::Permission`] without CAP_NET_RAW, [`PcapError::Live`] for an
/// unknown interface or a bad filter.
pub fn open(cfg: &LiveConfig) -> Result<LiveCapture, PcapError> {
    let iface = cfg.iface.as_str();
    let mut cap = pcap::Capture::from_device(iface)
        .map_err(|e| live_err(iface, e))?
        .promisc(false)
        .snaplen(262_144)
        .immediate_mode(true)
        .timeout(100)
        .precision(pcap::Precision::Nano)
        .open()
        .map_err(|e| live_err(iface, e))?;
    if let Some(f) = &cfg.filter {
        cap.filter(f, true).map_err(|e| PcapError::Live {
            iface: cfg.iface.clone(),
            detail: format!("invalid BPF filter {f:?}: {e}"),
        })?;
    }
    let link_type = cap.get_datalink().0 as u32;
    Ok(LiveCapture {
        cap,
        cfg: cfg.clone(),
        link_type,
    })
}

impl LiveCapture {
    /// Feed every packet to `ex` until the duration elapses or `stop` is set; `on_tick`
    /// runs after every packet and every 100 ms read timeout (for progress and for writing
    /// finished exchanges). Returns the packets captured.
    pub fn run(
        &mut self,
        ex: &mut Extractor,
        stop: &AtomicBool,
        on_tick: &mut dyn FnMut(&mut Extractor),
    ) -> Result<u64, PcapError> {
        ex.set_source(Some(format!("iface:{}", self.cfg.iface)));
        let start = Instant::now();
        let mut frame = 0u64;
        loop {
            if stop.load(Ordering::Relaxed)
                || self.cfg.duration.is_some_and(|d| start.elapsed() >= d)
            {
                break;
            }
            match self.cap.next_packet() {
                Ok(p) => {
                    frame += 1;
                    let ts = p.header.ts;
                    // time_t and suseconds_t are not i64 on every platform.
                    #[allow(clippy::unnecessary_cast)]
                    let ts_ns = ts.tv_sec as i64 * 1_000_000_000 + ts.tv_usec as i64;
                    ex.packet(&Packet {
                        frame,
                        ts_ns,
                        link_type: self.link_type,
                        data: p.data,
                        orig_len: p.header.len,
                    });
                }
                Err(pcap::Error::TimeoutExpired) => {}
                Err(e) => return Err(live_err(&self.cfg.iface, e)),
            }
            on_tick(ex);
        }
        Ok(frame)
    }
}
