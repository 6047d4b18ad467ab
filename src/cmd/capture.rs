//! `agentwire capture`: run the packet extractor on a live interface until a signal or
//! `--duration`, write the trace, print the summary. Needs the `libpcap` cargo feature
//! (on by default); without it the command says how to get a build that has it.

use std::process::ExitCode;
#[cfg(feature = "libpcap")]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(feature = "libpcap")]
use std::sync::Arc;

use anyhow::Result;

#[cfg(feature = "libpcap")]
use agentwire::capture::pcap::{self, Extractor, LiveConfig, TraceSink};
#[cfg(feature = "libpcap")]
use agentwire::trace::{Context, SourceKind};

#[cfg(feature = "libpcap")]
use super::io::live_trace;
#[cfg(feature = "libpcap")]
use super::pcap::{finish, progress_message, write_ready};
#[cfg(feature = "libpcap")]
use super::term::progress_spinner;
use crate::cli::CaptureArgs;
#[cfg(feature = "libpcap")]
use crate::cli::{config, exit::degraded_if};

/// `agentwire capture` in a build without libpcap.
#[cfg(not(feature = "libpcap"))]
pub(super) fn capture(_a: CaptureArgs) -> Result<ExitCode> {
    anyhow::bail!(
        "this agentwire was built without live capture (cargo feature `libpcap`); install a build with it (`cargo install --path .` with default features, libpcap-dev installed), or capture with `tcpdump -w FILE` and run `agentwire pcap FILE`"
    )
}

/// `agentwire capture --iface IFACE`
#[cfg(feature = "libpcap")]
pub(super) fn capture(a: CaptureArgs) -> Result<ExitCode> {
    let mut ex = Extractor::new(config::packet_filter(&a.packet_filter, SourceKind::Live));
    // The input (the interface) is opened before the output.
    let cfg = LiveConfig {
        iface: a.iface.clone(),
        filter: a.filter.clone(),
        duration: a.duration,
    };
    let mut live = pcap::open_live(&cfg)?;
    let mut w = TraceSink::new(live_trace(&a.output, a.force, &Context::new())?, 2);
    let stop = stop_on_signal()?;
    let pb = progress_spinner();
    pb.suspend(|| {
        message!(
            "agentwire: capturing on {} (link type {}); Ctrl-C to stop",
            cfg.iface,
            live.link_type
        )
    });
    let mut write_err = None;
    let r = live.run(&mut ex, &stop, &mut |ex| {
        pb.set_message(progress_message(ex));
        // After a failed write (a closed pipe, a full disk) nothing more is written.
        if write_err.is_none() {
            write_err = write_ready(ex, &mut w).err();
        }
    });
    pb.finish_and_clear();
    r?;
    if let Some(e) = write_err {
        return Err(e);
    }
    let (dropped, if_dropped) = live.dropped();
    if dropped + if_dropped > 0 {
        warn!(
            "{dropped} packets dropped by the kernel (capture buffer full) and {if_dropped} by the interface; exchanges on those connections are incomplete"
        );
    }
    let skipped = finish(ex, w, &a.packet_filter, &a.output)?;
    Ok(degraded_if(dropped + if_dropped > 0 || skipped > 0))
}

/// The one signal listener (SIGINT and SIGTERM), installed before the capture is
/// announced; a thread waits on it and sets the flag the capture loop stops on.
#[cfg(feature = "libpcap")]
fn stop_on_signal() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let signalled = {
        let _in_runtime = rt.enter();
        agentwire::capture::record::interrupted()
    };
    let flag = stop.clone();
    std::thread::spawn(move || {
        rt.block_on(signalled);
        flag.store(true, Ordering::Relaxed);
    });
    Ok(stop)
}
