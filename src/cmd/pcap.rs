//! `agentwire pcap`: run the packet extractor over capture files, write the trace, show
//! progress on stderr, print the summary.

use std::fs::File;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::pcap::{self, Config, Extractor, PcapError, TraceSink};
use agentwire::report;
use agentwire::trace::{Context, SourceKind, TraceWriter};

use super::{progress_bytes, shown, summary as summary_out, DEGRADED, ERROR};
use crate::cli::{PacketFilterArgs, PcapArgs};

pub(super) fn config(f: &PacketFilterArgs, kind: SourceKind) -> Config {
    Config {
        ports: f.ports.clone(),
        hosts: f.hosts.clone(),
        kind,
        ..Config::default()
    }
}

pub(super) fn write_ready(ex: &mut Extractor, w: &mut TraceSink) -> Result<()> {
    Ok(w.write(ex.take())?)
}

pub(super) fn progress_message(ex: &Extractor) -> String {
    let s = ex.summary();
    format!(
        "{}, {}",
        agentwire::text::fmt::plural(s.packets, "packet"),
        agentwire::text::fmt::plural(s.exchanges, "exchange")
    )
}

/// End of input (files or a live capture): release the exchanges still held, complete
/// the trace at `output`, print the summary (in `f.format`) and say how many exchanges
/// were written where; warn about packets of link types not decoded. Returns the number
/// of those warnings (non-zero makes the run degraded).
pub(super) fn finish(
    ex: Extractor,
    mut w: TraceSink,
    f: &PacketFilterArgs,
    output: &Path,
) -> Result<usize> {
    let (rest, summary) = ex.finish();
    w.write(rest)?;
    w.finish()?;
    summary_out(&report::capture::render(&summary, f.format.into()), output)?;
    message!(
        "wrote {}{} to {}",
        agentwire::text::fmt::plural(summary.exchanges, "exchange"),
        summary.websocket_note(),
        shown(output)
    );
    let skipped = pcap::link::skipped_warnings(&summary.unknown_link_types);
    for p in &skipped {
        super::warn(p);
    }
    // A filter that kept nothing is most often a wrong port or address: say so.
    if summary.exchanges == 0 && summary.filtered_out > 0 {
        super::warn(&format!(
            "no exchange found: --port/--host left out {} TCP segments; check the port and address (without them every connection is read)",
            summary.filtered_out
        ));
    }
    Ok(skipped.len())
}

/// Refuse an input that is not a capture (a directory, a trace, garbage) before the
/// output is touched: its first bytes are no capture's magic number.
fn check_capture(path: &Path, f: &File) -> Result<()> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 4];
    let n = f.read_at(&mut head, 0).map_err(|e| {
        anyhow::anyhow!(
            "cannot read capture {}: {e} (give a pcap or pcapng file; no output was written)",
            path.display()
        )
    })?;
    if !pcap::is_capture_start(&head[..n]) {
        anyhow::bail!(
            "{} is not a packet capture: it starts with no pcap, pcapng or gzip magic number (tcpdump -w or Wireshark files are; traces and HAR files are read by show, diff and analyze); no output was written",
            path.display()
        );
    }
    Ok(())
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
        check_capture(path, &f)?;
        inputs.push((path, f));
    }
    agentwire::output::check_not_input(&a.output, &a.files)?;
    let w = TraceWriter::create_atomic(&a.output, a.force, &Context::new())?;
    let mut w = TraceSink::new(w, a.threads.get());
    let total: u64 = inputs
        .iter()
        .filter_map(|(_, f)| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    let pb = progress_bytes(total);
    // Every file opened (checked above); files that turn out not to be captures make the
    // run an error (exit 1), files read partly (truncated, corrupt) make it degraded
    // (exit 3). Either way the other files are still read and their exchanges written.
    let (mut unreadable, mut partial) = (0, 0);
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
                // After a failed write (a closed pipe, a full disk) nothing more is written.
                if write_err.is_none() {
                    write_err = write_ready(&mut ex, &mut w).err();
                }
            }
        });
        if let Some(e) = write_err {
            return Err(e);
        }
        match r {
            Ok(info) => {
                for p in info.problems(&name) {
                    pb.suspend(|| super::warn(&p));
                    partial += 1;
                }
            }
            Err(
                e @ (PcapError::Open { .. }
                | PcapError::NotACapture { .. }
                | PcapError::HeaderCut { .. }),
            ) => {
                pb.suspend(|| super::stderr_line("error", &e.to_string()));
                unreadable += 1;
            }
            Err(e) => {
                pb.suspend(|| super::warn(&e.to_string()));
                partial += 1;
            }
        }
        write_ready(&mut ex, &mut w)?;
    }
    pb.finish_and_clear();
    partial += finish(ex, w, &a.filter, &a.output)?;
    Ok(if unreadable > 0 {
        ExitCode::from(ERROR)
    } else if partial > 0 {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}
