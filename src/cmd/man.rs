//! `agentwire man [--dir DIR]`: the man pages generated from the clap definitions.

use std::process::ExitCode;

use anyhow::{Context as _, Result};

use crate::cli::{self, ManArgs};

pub(super) fn man(a: ManArgs) -> Result<ExitCode> {
    match &a.dir {
        Some(dir) => {
            let pages = cli::write_man_pages(dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
            message!("wrote {} man pages to {}", pages.len(), dir.display());
        }
        None => {
            let mut buf = Vec::new();
            cli::write_man_page(&mut buf)?;
            super::out(&String::from_utf8_lossy(&buf))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
