//! `agentwire ca`: print, locate or rotate the local CA.

use std::process::ExitCode;

use anyhow::Result;

use super::io::print_stdout;
use crate::cli::CaArgs;

pub(super) fn ca(a: CaArgs) -> Result<ExitCode> {
    use agentwire::capture::ca::{default_dir, CertificateAuthority};
    let dir = default_dir();
    let ca = if a.rotate {
        CertificateAuthority::rotate(&dir)?
    } else {
        CertificateAuthority::load_or_create_reporting(&dir, &super::diag::reporter())?
    };
    let path = ca.cert_path().unwrap_or_else(|| dir.join("ca.pem"));
    if a.path || a.rotate {
        print_stdout(&format!("{}\n", path.display()))?;
    } else {
        print_stdout(ca.cert_pem())?;
    }
    Ok(ExitCode::SUCCESS)
}
