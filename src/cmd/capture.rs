//! `agentwire capture`: run the packet extractor on a live interface until a signal or
//! `--duration`, write the trace, print the summary. Needs the `libpcap` cargo feature
//! (on by default); without it the command says how to get a build that has it.

use std::process::ExitCode;
#[cfg(feature = "libpcap")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "libpcap")]
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};

#[cfg(feature = "libpcap")]
use agentwire::capture::pcap::{self, Extractor, LiveConfig};
#[cfg(feature = "libpcap")]
use agentwire::report;
#[cfg(feature = "libpcap")]
use agentwire::trace::{Context, SourceKind, TraceWriter};

#[cfg(feature = "libpcap")]
use super::pcap::{config, progress_message, write_ready};
#[cfg(feature = "libpcap")]
use super::{progress_spinner, shown, summary as summary_out, DEGRADED};
use crate::cli::CaptureArgs;

/// Parse `30`, `30s`, `5m`, `1h`, `1.5s`.
fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('s') => (&s[..s.len() - 1], 1.0),
        Some('m') => (&s[..s.len() - 1], 60.0),
        Some('h') => (&s[..s.len() - 1], 3600.0),
        _ => (s, 1.0),
    };
    let v: f64 = num.parse().with_context(|| {
        format!("invalid --duration {s:?}: use seconds, or a number with s, m or h (30s, 5m)")
    })?;
    anyhow::ensure!(v >= 0.0, "invalid --duration {s:?}: must not be negative");
    Ok(Duration::from_secs_f64(v * mult))
}

/// `agentwire capture` in a build without libpcap.
#[cfg(not(feature = "libpcap"))]
pub(super) fn capture(a: CaptureArgs) -> Result<ExitCode> {
    a.duration
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(super::usage)?;
    anyhow::bail!(
        "this agentwire was built without live capture (cargo feature `libpcap`); install a build with it (`cargo install --path .` with default features, libpcap-dev installed), or capture with `tcpdump -w FILE` and run `agentwire pcap FILE`"
    )
}

/// `agentwire capture --iface IFACE`
#[cfg(feature = "libpcap")]
pub(super) fn capture(a: CaptureArgs) -> Result<ExitCode> {
    let duration = a
        .duration
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(super::usage)?;
    let mut ex = Extractor::new(config(&a.packet_filter, SourceKind::Live));
    let mut w = TraceWriter::create(&a.output, &Context::new())?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        });
    }
    let pb = progress_spinner();
    let cfg = LiveConfig {
        iface: a.iface.clone(),
        filter: a.filter.clone(),
        duration,
    };
    let mut live = pcap::open_live(&cfg)?;
    pb.suspend(|| {
        eprintln!(
            "agentwire: capturing on {} (link type {}); Ctrl-C to stop",
            cfg.iface, live.link_type
        )
    });
    let mut write_err = None;
    let r = live.run(&mut ex, &stop, &mut |ex| {
        pb.set_message(progress_message(ex));
        if let Err(e) = write_ready(ex, &mut w) {
            write_err.get_or_insert(e);
        }
    });
    pb.finish_and_clear();
    r?;
    if let Some(e) = write_err {
        return Err(e);
    }
    let (dropped, if_dropped) = live.dropped();
    if dropped + if_dropped > 0 {
        eprintln!(
            "warning: {dropped} packets dropped by the kernel (capture buffer full) and {if_dropped} by the interface; exchanges on those connections are incomplete"
        );
    }
    let (rest, summary) = ex.finish();
    for x in &rest {
        w.write_exchange(x)?;
    }
    summary_out(
        &report::capture::render(&summary, a.packet_filter.format.into()),
        &a.output,
    )?;
    eprintln!(
        "wrote {} exchanges to {}",
        summary.exchanges,
        shown(&a.output)
    );
    Ok(if dropped + if_dropped > 0 {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("soon").is_err());
    }
}
