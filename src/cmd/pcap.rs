//! `agentwire pcap`: run the packet extractor over capture files, write the trace, show
//! progress on stderr, print the summary.

use std::fs::File;
use std::process::ExitCode;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};

use agentwire::capture::pcap::{self, Config, Extractor};
use agentwire::report;
use agentwire::trace::{Context, SourceKind, TraceWriter};

use super::{report_out, DEGRADED};
use crate::cli::{PacketFilterArgs, PcapArgs};

pub(super) fn config(f: &PacketFilterArgs, kind: SourceKind) -> Config {
    Config {
        ports: f.ports.clone(),
        hosts: f.hosts.clone(),
        kind,
        ..Config::default()
    }
}

pub(super) fn write_ready(ex: &mut Extractor, w: &mut TraceWriter) -> Result<()> {
    for x in ex.take() {
        w.write_exchange(&x)?;
    }
    Ok(())
}

pub(super) fn progress_message(ex: &Extractor) -> String {
    let s = ex.summary();
    format!("{} packets, {} exchanges", s.packets, s.exchanges)
}

/// `agentwire pcap FILE...`
pub(super) fn pcap(a: PcapArgs) -> Result<ExitCode> {
    let mut ex = Extractor::new(config(&a.filter, SourceKind::Pcap));
    // Inputs first: every capture file must open before the output is touched.
    let mut inputs = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let f = File::open(path).map_err(|e| {
            anyhow::anyhow!(
                "cannot read capture {}: {e} (check the path; no output was written)",
                path.display()
            )
        })?;
        inputs.push((path, f));
    }
    let mut w = TraceWriter::create_atomic(&a.output, a.force, &Context::new())?;
    let total: u64 = inputs
        .iter()
        .filter_map(|(_, f)| f.metadata().ok())
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
    for (path, file) in inputs {
        let name = path.display().to_string();
        ex.set_source(Some(name.clone()));
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
            pb.suspend(|| super::warn(&e.to_string()));
            failed += 1;
        }
        write_ready(&mut ex, &mut w)?;
    }
    pb.finish_and_clear();
    let (rest, summary) = ex.finish();
    for x in &rest {
        w.write_exchange(x)?;
    }
    w.finish()?;
    report_out(
        &report::capture::render(&summary, a.filter.format.into()),
        &a.output,
    )?;
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
