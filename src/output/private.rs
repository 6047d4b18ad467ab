//! Private directories (the CA's, `record --record-dir`, rewritten MCP configurations,
//! the recording cache): created mode 0700 whatever the umask (`create_dir_all` asks for
//! 0777 and the umask decides, so umask 000 made them world-writable), each missing
//! ancestor as well. Directories that exist keep their mode: they are the user's.

use std::path::Path;

/// Create `path` and its missing ancestors, each mode 0700 (set after creation, so the
/// umask cannot widen or narrow it). An existing directory is left as it is.
///
/// Errors: the creation's or the mode change's; an existing non-directory is
/// `AlreadyExists`.
pub fn create_private_dir(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            create_private_dir(parent)?;
        }
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    match b.create(path) {
        Ok(()) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
            }
            Ok(())
        }
        // created meanwhile by another process
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}
