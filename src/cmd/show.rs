//! `agentwire show`: one line per exchange of a trace (or of any input agentwire imports).

use std::process::ExitCode;

use anyhow::Result;

use agentwire::input::{open_input, InputOptions};
use agentwire::report;
use agentwire::trace::mcp::Continuity;
use agentwire::trace::Record;

use super::diag::Warnings;
use super::io::print_stdout;
use crate::cli::ShowArgs;

pub(super) fn show(a: ShowArgs) -> Result<ExitCode> {
    // Stream: keep one small row per exchange, never the exchanges themselves.
    let mut builder = report::show::RowBuilder::default();
    let mut rows = Vec::new();
    let mut mcp = Vec::new();
    let mut warnings = Warnings::new(&a.trace.display().to_string());
    let opts = InputOptions {
        since: a.since,
        progress: None,
    };
    let mut input = open_input(&a.trace, &opts)?;
    let several_files = a.trace.is_dir();
    // MCP records lost from the file being read (each file numbers them from 0)
    let mut lost = Continuity::default();
    let mut lost_file = a.trace.clone();
    while let Some(rec) = input.next() {
        match rec? {
            Record::Exchange(x) if !a.mcp => {
                let mut row = builder.row(&x);
                // A directory's files number their exchanges each from 0: name the file.
                if several_files {
                    row.file = Some(input.file().display().to_string());
                }
                for p in &row.problems {
                    warnings.bad_exchange(input.file(), x.id, p);
                }
                rows.push(row);
            }
            Record::Mcp(m) => {
                lost.see(&m);
                mcp.push(report::mcp::show_rows(std::slice::from_ref(&m)));
            }
            Record::Bad(p) => warnings.bad_line(&p),
            Record::Header { .. } => {
                lost_warnings(std::mem::take(&mut lost), &lost_file, &mut warnings);
                lost_file = input.file().to_path_buf();
                builder.new_context();
            }
            Record::Exchange(_) | Record::Other(_) => {}
        }
    }
    lost_warnings(lost, &lost_file, &mut warnings);
    warnings.skipped(input.skipped());
    let mcp: Vec<_> = mcp.into_iter().flatten().collect();
    if a.mcp {
        print_stdout(&report::mcp::render_show(&mcp, a.format.into(), false))?;
    } else {
        // MCP messages follow the exchanges in the text formats; JSON keeps its shape.
        let text = !matches!(a.format, crate::cli::FormatArg::Json);
        if !(text && rows.is_empty() && !mcp.is_empty()) {
            print_stdout(&report::show::render(&rows, a.format.into()))?;
        }
        if text && !mcp.is_empty() {
            if !rows.is_empty() {
                print_stdout("\n")?;
            }
            print_stdout(&report::mcp::render_show(&mcp, a.format.into(), true))?;
        }
    }
    Ok(warnings.finish())
}

/// Warn about the MCP records lost from `file` (markers, gaps in `seq`).
fn lost_warnings(c: Continuity, file: &std::path::Path, w: &mut Warnings) {
    for text in c.warnings() {
        w.bad_line_text(&format!("{}: {text}", file.display()));
    }
}
