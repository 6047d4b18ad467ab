//! `agentwire cache list|prune`: the downloaded CLIs and the recordings `history` keeps.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::{cache, npm};
use agentwire::report;
use agentwire::text::fmt::mib;

use super::io::print_stdout;
use crate::cli::CacheCommand;

fn table(entries: &[cache::Entry]) -> String {
    let mut t = report::table::table(&["kind", "name", "version", "entry", "size"]);
    for e in entries {
        t.add_row(vec![
            e.kind.to_string(),
            agentwire::text::printable(&e.name),
            agentwire::text::printable(&e.version),
            agentwire::text::printable(&e.detail),
            mib(e.bytes),
        ]);
    }
    report::table::table_text(&t)
}

pub(super) fn cache(c: CacheCommand) -> Result<ExitCode> {
    let root = npm::cache_root();
    match c {
        CacheCommand::List => {
            let all = cache::list();
            let total: u64 = all.iter().map(|e| e.bytes).sum();
            print_stdout(&table(&all))?;
            print_stdout(&format!(
                "{} entries, {} in {}\n",
                all.len(),
                mib(total),
                root.display()
            ))?;
        }
        CacheCommand::Prune(p) => {
            let kind = if p.cli {
                Some("cli")
            } else if p.recordings {
                Some("recording")
            } else {
                None
            };
            let removed = cache::prune(kind, usize::from(p.keep), p.dry_run)?;
            let total: u64 = removed.iter().map(|e| e.bytes).sum();
            print_stdout(&table(&removed))?;
            print_stdout(&format!(
                "{} {} entries ({})\n",
                if p.dry_run { "would remove" } else { "removed" },
                removed.len(),
                mib(total)
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
