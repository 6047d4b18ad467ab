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
        // 64 MiB of kernel ring: loopback packets are up to 64 KiB each.
        .buffer_size(64 << 20)
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
    // Non-blocking reads: the loop sees stop requests and the duration promptly (a
    // blocking read's timeout is not honoured in immediate mode on every platform).
    let cap = cap.setnonblock().map_err(|e| live_err(iface, e))?;
    Ok(LiveCapture {
        cap,
        cfg: cfg.clone(),
        link_type,
    })
}

impl LiveCapture {
    /// Packets the kernel dropped because the capture buffer was full, and packets the
    /// interface dropped, so far (libpcap's `pcap_stats`).
    pub fn dropped(&mut self) -> (u64, u64) {
        self.cap
            .stats()
            .map_or((0, 0), |s| (u64::from(s.dropped), u64::from(s.if_dropped)))
    }

    /// Feed every packet to `ex` until the duration elapses or `stop` is set (then until
    /// the packets already captured are read); `on_tick`
    /// runs after every packet and every empty read (5 ms apart) (for progress and for writing
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
        // After a stop (flag or duration), packets already captured are still read: the
        // loop ends once nothing arrived for DRAIN (the kernel hands packets over in
        // blocks, so an empty read alone does not mean nothing is pending).
        const DRAIN: Duration = Duration::from_millis(250);
        let mut draining: Option<Instant> = None;
        loop {
            if draining.is_none()
                && (stop.load(Ordering::Relaxed)
                    || self.cfg.duration.is_some_and(|d| start.elapsed() >= d))
            {
                draining = Some(Instant::now());
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
                        ts_ns: Some(ts_ns),
                        link_type: self.link_type,
                        data: p.data,
                        orig_len: p.header.len,
                    });
                    if draining.is_some() {
                        draining = Some(Instant::now());
                    }
                }
                Err(pcap::Error::TimeoutExpired) => {
                    if draining.is_some_and(|t| t.elapsed() >= DRAIN) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(live_err(&self.cfg.iface, e)),
            }
            on_tick(ex);
        }
        Ok(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_privileges_say_how_to_get_them() {
        // libpcap's text when the process lacks CAP_NET_RAW.
        let e = live_err(
            "eth0",
            pcap::Error::PcapError("socket: Operation not permitted".into()),
        );
        assert!(matches!(e, PcapError::Permission { .. }));
        let text = e.to_string();
        assert!(
            text.contains("eth0") && text.contains("CAP_NET_RAW") && text.contains("sudo"),
            "{text}"
        );
        let e = live_err(
            "nosuch0",
            pcap::Error::PcapError("No such device exists".into()),
        );
        assert!(matches!(e, PcapError::Live { .. }));
    }

    #[test]
    fn bad_filter_is_named() {
        let cfg = LiveConfig {
            iface: "lo".into(),
            filter: Some("tcp port banana".into()),
            duration: None,
        };
        match open(&cfg) {
            Err(PcapError::Live { detail, .. }) => {
                assert!(detail.contains("tcp port banana"), "{detail}")
            }
            Err(PcapError::Permission { .. }) => {} // not root: the filter is never reached
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("an invalid filter was accepted"),
        }
    }
}
