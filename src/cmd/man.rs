//! `agentwire man [--dir DIR]`: the man pages generated from the clap definitions.

use std::process::ExitCode;

use anyhow::Result;

use super::io::print_stdout;
use crate::cli::{self, ManArgs};

pub(super) fn man(a: ManArgs) -> Result<ExitCode> {
    match &a.dir {
        Some(dir) => {
            // The cause is part of the message (the binary prints one line per error:
            // `cmd::diag::fail`), so a failure says why.
            let pages = cli::write_man_pages(dir).map_err(|e| {
                anyhow::anyhow!("cannot write man pages into {}: {e}", dir.display())
            })?;
            message!("wrote {} man pages to {}", pages.len(), dir.display());
        }
        None => {
            let mut buf = Vec::new();
            cli::write_man_page(&mut buf)?;
            print_stdout(&String::from_utf8_lossy(&buf))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
