//! `agentwire pcap`: run the packet extractor over capture files, write the trace, show
//! progress on stderr, print the summary.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::pcap::{self, Extractor, PcapError, TraceSink};
use agentwire::report;
use agentwire::text::fmt::plural;
use agentwire::trace::{Context, SourceKind, TraceWriter};

use super::diag::warn;
use super::io::{display_name, print_summary};
use super::term::progress_bytes;
use crate::cli::exit::{exit, DEGRADED, ERROR, OK};
use crate::cli::{config, PacketFilterArgs, PcapArgs};

pub(super) fn write_ready(ex: &mut Extractor, w: &mut TraceSink) -> Result<()> {
    Ok(w.write(ex.take())?)
}

pub(super) fn progress_message(ex: &Extractor) -> String {
    let s = ex.summary();
    format!(
        "{}, {}",
        plural(s.packets, "packet"),
        plural(s.exchanges, "exchange")
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
    print_summary(&report::capture::render(&summary, f.format.into()), output)?;
    message!(
        "wrote {}{} to {}",
        plural(summary.exchanges, "exchange"),
        summary.websocket_note(),
        display_name(output)
    );
    let skipped = pcap::link::skipped_warnings(&summary.unknown_link_types);
    for p in &skipped {
        warn(p);
    }
    // A filter that kept nothing is most often a wrong port or address: say so.
    if summary.exchanges == 0 && summary.filtered_out > 0 {
        warn(&format!(
            "no exchange found: --port/--host left out {} TCP segments; check the port and address (without them every connection is read)",
            summary.filtered_out
        ));
    }
    Ok(skipped.len())
}

/// Open every capture file before the output is touched, each refused when it cannot be
/// read or is not a capture (a directory, a trace, garbage: its first bytes are no
/// capture's magic number), in the library's words ([`PcapError`]) and saying that
/// nothing was written.
fn open_captures(files: &[PathBuf]) -> Result<Vec<(&PathBuf, File)>> {
    let nothing_written = |e: PcapError| anyhow::anyhow!("{e}; no output was written");
    let mut inputs = Vec::with_capacity(files.len());
    for path in files {
        let open = |source| PcapError::Open {
            path: path.display().to_string(),
            source,
        };
        let f = File::open(path).map_err(|e| nothing_written(open(e)))?;
        let mut head = [0u8; 4];
        let n = f
            .read_at(&mut head, 0)
            .map_err(|e| nothing_written(open(e)))?;
        if !pcap::is_capture_start(&head[..n]) {
            return Err(nothing_written(PcapError::NotACapture {
                path: path.display().to_string(),
            }));
        }
        inputs.push((path, f));
    }
    Ok(inputs)
}

/// What reading the capture files met: files that are no capture (an error, exit 1) and
/// problems in files read partly (truncated, corrupt: degraded, exit 3).
#[derive(Default)]
struct Tally {
    unreadable: usize,
    partial: usize,
}

/// `agentwire pcap FILE...`
pub(super) fn pcap(a: PcapArgs) -> Result<ExitCode> {
    let mut ex = Extractor::new(config::packet_filter(&a.filter, SourceKind::Pcap));
    // Inputs first: every capture file must open before the output is touched.
    let inputs = open_captures(&a.files)?;
    agentwire::output::check_not_input(&a.output, &a.files)?;
    let w = TraceWriter::create_atomic(&a.output, a.force, &Context::new())?;
    let mut w = TraceSink::new(w, a.threads.get());
    let total: u64 = inputs
        .iter()
        .filter_map(|(_, f)| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    let pb = progress_bytes(total);
    // Either way the other files are still read and their exchanges written.
    let mut tally = Tally::default();
    for (path, file) in inputs {
        read_capture(path, file, &mut ex, &mut w, &pb, &mut tally)?;
    }
    pb.finish_and_clear();
    tally.partial += finish(ex, w, &a.filter, &a.output)?;
    Ok(exit(if tally.unreadable > 0 {
        ERROR
    } else if tally.partial > 0 {
        DEGRADED
    } else {
        OK
    }))
}

/// Read one capture file into the extractor, writing exchanges as they complete; what
/// goes wrong in it is said (above the progress bar) and counted in `tally`. Errors:
/// writing the trace failed.
fn read_capture(
    path: &Path,
    file: File,
    ex: &mut Extractor,
    w: &mut TraceSink,
    pb: &indicatif::ProgressBar,
    tally: &mut Tally,
) -> Result<()> {
    let name = path.display().to_string();
    ex.set_source(Some(name.clone()));
    let mut write_err = None;
    let mut n = 0u32;
    let r = pcap::read_packets(pb.wrap_read(file), &name, &mut |p| {
        ex.packet(p);
        n = n.wrapping_add(1);
        if n % 4096 == 0 {
            pb.set_message(progress_message(ex));
            // After a failed write (a closed pipe, a full disk) nothing more is written.
            if write_err.is_none() {
                write_err = write_ready(ex, w).err();
            }
        }
    });
    if let Some(e) = write_err {
        return Err(e);
    }
    match r {
        Ok(info) => {
            for p in info.problems(&name) {
                pb.suspend(|| warn(&p));
                tally.partial += 1;
            }
        }
        Err(
            e @ (PcapError::Open { .. }
            | PcapError::NotACapture { .. }
            | PcapError::HeaderCut { .. }),
        ) => {
            pb.suspend(|| error!("{e}"));
            tally.unreadable += 1;
        }
        Err(e) => {
            pb.suspend(|| warn(&e.to_string()));
            tally.partial += 1;
        }
    }
    write_ready(ex, w)
}
