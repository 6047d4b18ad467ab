//! `agentwire pcap` and `agentwire capture`: run the packet extractor over files or a live
//! interface, write the trace, show progress on stderr, print the summary.

use std::fs::File;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use indicatif::{ProgressBar, ProgressStyle};

use agentwire::capture::pcap::{self, Config, Extractor, LiveConfig};
use agentwire::report;
use agentwire::trace::{Context, SourceKind, TraceWriter};

use crate::cli::{CaptureArgs, PacketFilterArgs, PcapArgs};
use crate::commands::{out, DEGRADED};

fn config(f: &PacketFilterArgs, kind: SourceKind) -> Config {
    Config {
        ports: f.ports.clone(),
        hosts: f.hosts.clone(),
        kind,
        ..Config::default()
    }
}

fn write_ready(ex: &mut Extractor, w: &mut TraceWriter) -> Result<()> {
    for x in ex.take() {
        w.write_exchange(&x)?;
    }
    Ok(())
}

fn progress_message(ex: &Extractor) -> String {
    let s = ex.summary();
    format!("{} packets, {} exchanges", s.packets, s.exchanges)
}

/// `agentwire pcap FILE...`
pub fn pcap(a: PcapArgs) -> Result<ExitCode> {
    let mut ex = Extractor::new(config(&a.filter, SourceKind::Pcap));
    let mut w = TraceWriter::create(&a.output, &Context::new())?;
    let total: u64 = a
        .files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {bytes_per_sec} {msg}")
            .expect("static template"),
    );
    // Hidden for small inputs: only long work shows progress.
    if total < 64 << 20 {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut failed = 0;
    for path in &a.files {
        let name = path.display().to_string();
        ex.set_source(Some(name.clone()));
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                pb.suspend(|| eprintln!("error: cannot read capture {name}: {e}"));
                failed += 1;
                continue;
            }
        };
        let mut write_err = None;
        let mut n = 0u32;
        let r = pcap::read_packets(pb.wrap_read(file), &name, &mut |p| {
            ex.packet(p);
            n = n.wrapping_add(1);
            if n % 4096 == 0 {
                pb.set_message(progress_message(&ex));
                if let Err(e) = write_ready(&mut ex, &mut w) {
                    write_err.get_or_insert(e);
                }
            }
        });
        if let Some(e) = write_err {
            return Err(e);
        }
        if let Err(e) = r {
            pb.suspend(|| eprintln!("warning: {e}"));
            failed += 1;
        }
        write_ready(&mut ex, &mut w)?;
    }
    pb.finish_and_clear();
    let (rest, summary) = ex.finish();
    for x in &rest {
        w.write_exchange(x)?;
    }
    out(&report::capture::render(&summary, a.filter.format.into()))?;
    eprintln!(
        "wrote {} exchanges to {}",
        summary.exchanges,
        a.output.display()
    );
    Ok(if failed > 0 {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}

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

/// `agentwire capture --iface IFACE`
pub fn capture(a: CaptureArgs) -> Result<ExitCode> {
    let duration = a.duration.as_deref().map(parse_duration).transpose()?;
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
    let pb = ProgressBar::new_spinner();
    pb.enable_steady_tick(Duration::from_millis(200));
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
    out(&report::capture::render(
        &summary,
        a.packet_filter.format.into(),
    ))?;
    eprintln!(
        "wrote {} exchanges to {}",
        summary.exchanges,
        a.output.display()
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
