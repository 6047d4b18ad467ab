//! agentwire's own certificate authority: created on first use under the user's data
//! directory (`ca.pem`, and `ca.key` readable only by the owner, mode 0600), reused across
//! runs, rotated on request; it mints leaf certificates for the hosts it is asked for.
//! The key never leaves its file (never logged, never in a trace).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::Diagnostics;

/// Common name of agentwire's CA.
pub const CA_NAME: &str = "agentwire local interception CA";

/// Errors of the CA.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    /// A CA file could not be read, written or made private.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`, `lock`, …), as the message says it.
        action: &'static str,
        /// The file or directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CA key file is not a key agentwire can sign with.
    #[error("CA key {path} is unusable: {message} (run `agentwire ca --rotate` to make a new CA)")]
    BadKey {
        /// The key file.
        path: String,
        /// Why it is unusable.
        message: String,
    },
    /// rcgen could not make a certificate (its message).
    #[error("certificate generation failed: {0}")]
    Generate(String),
    /// The CA certificate is there but its key is not.
    #[error("CA key {path} is missing but its certificate is there: the CA cannot sign; run `agentwire ca --rotate` to make a new CA (clients must then trust the new certificate)")]
    MissingKey {
        /// The missing key file.
        path: String,
    },
}

/// A CA that can mint leaf certificates.
pub struct CertificateAuthority {
    cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
    dir: Option<PathBuf>,
}

/// Default CA directory: `$AGENTWIRE_DATA_DIR`, else the user data directory
/// (`~/.local/share/agentwire/ca` on Linux).
pub fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("AGENTWIRE_DATA_DIR") {
        return PathBuf::from(d).join("ca");
    }
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("agentwire")
        .join("ca")
}

fn ca_params() -> CertificateParams {
    let mut p = CertificateParams::default();
    p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    p.distinguished_name.push(DnType::CommonName, CA_NAME);
    p.distinguished_name
        .push(DnType::OrganizationName, "agentwire");
    p.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let now = time_now();
    p.not_before = now - std::time::Duration::from_secs(86_400);
    p.not_after = now + std::time::Duration::from_secs(10 * 365 * 86_400);
    p
}

fn time_now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CaError {
    let path = path.display().to_string();
    move |source| CaError::Io {
        action,
        path,
        source,
    }
}

fn gen_err(e: rcgen::Error) -> CaError {
    CaError::Generate(e.to_string())
}

impl CertificateAuthority {
    /// A fresh CA kept in memory only (tests, one-off runs).
    pub fn generate() -> Result<Self, CaError> {
        let key = KeyPair::generate().map_err(gen_err)?;
        let params = ca_params();
        let cert = params.self_signed(&key).map_err(gen_err)?;
        Ok(CertificateAuthority {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
            dir: None,
        })
    }

    /// Load the CA from `dir`, creating it on first use. Both files are written to
    /// temporary siblings and renamed into place (the key first, mode 0600), under an
    /// exclusive lock on `dir/ca.lock`, so concurrent first uses agree on one CA and a
    /// crash never leaves a half-written file. A half-present CA is repaired or refused:
    /// a key without its certificate (a crash between the two renames) gets its
    /// certificate re-issued from the same key (clients that trusted the old one keep
    /// working: same name, same key); a certificate without its key is refused, with the
    /// command that replaces the CA.
    ///
    /// A repair is not reported ([`Self::load_or_create_reporting`] reports it).
    ///
    /// Errors: [`CaError::Io`], [`CaError::BadKey`], [`CaError::MissingKey`].
    pub fn load_or_create(dir: &Path) -> Result<Self, CaError> {
        Self::load_or_create_reporting(dir, &Diagnostics::silent())
    }

    /// [`Self::load_or_create`], reporting a repaired CA to `diagnostics` (as a status
    /// line).
    ///
    /// Errors: as [`Self::load_or_create`].
    pub fn load_or_create_reporting(
        dir: &Path,
        diagnostics: &Diagnostics,
    ) -> Result<Self, CaError> {
        crate::output::create_private_dir(dir).map_err(io_err("create", dir))?;
        let _lock = Lock::take(dir)?;
        Self::load_or_create_locked(dir, diagnostics)
    }

    fn load_or_create_locked(dir: &Path, diagnostics: &Diagnostics) -> Result<Self, CaError> {
        let (cert_path, key_path) = (dir.join("ca.pem"), dir.join("ca.key"));
        match (cert_path.is_file(), key_path.is_file()) {
            (true, true) => {
                let cert_pem =
                    std::fs::read_to_string(&cert_path).map_err(io_err("read", &cert_path))?;
                let key = read_key(&key_path)?;
                Ok(CertificateAuthority {
                    cert_pem,
                    issuer: Issuer::new(ca_params(), key),
                    dir: Some(dir.to_path_buf()),
                })
            }
            (false, true) => {
                let key = read_key(&key_path)?;
                let params = ca_params();
                let cert = params.self_signed(&key).map_err(gen_err)?;
                let cert_pem = cert.pem();
                write_atomic(&cert_path, cert_pem.as_bytes(), 0o644)
                    .map_err(io_err("write", &cert_path))?;
                diagnostics.status(&format!(
                    "agentwire: the CA in {} had its key but no certificate (an interrupted write); the certificate was re-issued from the same key",
                    dir.display()
                ));
                Ok(CertificateAuthority {
                    cert_pem,
                    issuer: Issuer::new(params, key),
                    dir: Some(dir.to_path_buf()),
                })
            }
            (true, false) => Err(CaError::MissingKey {
                path: key_path.display().to_string(),
            }),
            (false, false) => {
                let mut ca = Self::generate()?;
                ca.save(dir)?;
                ca.dir = Some(dir.to_path_buf());
                Ok(ca)
            }
        }
    }

    /// Replace the CA in `dir` with a new one.
    pub fn rotate(dir: &Path) -> Result<Self, CaError> {
        crate::output::create_private_dir(dir).map_err(io_err("create", dir))?;
        let _lock = Lock::take(dir)?;
        let mut ca = Self::generate()?;
        ca.save(dir)?;
        ca.dir = Some(dir.to_path_buf());
        Ok(ca)
    }

    /// Write the key, then the certificate, each atomically (the caller holds the lock).
    fn save(&self, dir: &Path) -> Result<(), CaError> {
        let key_path = dir.join("ca.key");
        write_atomic(
            &key_path,
            self.issuer.key().serialize_pem().as_bytes(),
            0o600,
        )
        .map_err(io_err("write", &key_path))?;
        let cert_path = dir.join("ca.pem");
        write_atomic(&cert_path, self.cert_pem.as_bytes(), 0o644)
            .map_err(io_err("write", &cert_path))?;
        Ok(())
    }

    /// The CA certificate, PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// Path of the CA certificate file, when the CA lives on disk.
    pub fn cert_path(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join("ca.pem"))
    }

    /// Mint a leaf certificate (valid 7 days, server auth) for `hosts` (DNS names or IP
    /// addresses). Returns the chain (leaf, CA) and the leaf's key.
    pub fn mint_leaf(
        &self,
        hosts: &[String],
    ) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), CaError> {
        let mut p = CertificateParams::new(hosts.to_vec()).map_err(gen_err)?;
        if let Some(h) = hosts.first() {
            p.distinguished_name.push(DnType::CommonName, h.as_str());
        }
        p.use_authority_key_identifier_extension = true;
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let now = time_now();
        p.not_before = now - std::time::Duration::from_secs(3600);
        p.not_after = now + std::time::Duration::from_secs(7 * 86_400);
        let key = KeyPair::generate().map_err(gen_err)?;
        let leaf = p.signed_by(&key, &self.issuer).map_err(gen_err)?;
        let ca_der = rustls::pki_types::pem::PemObject::from_pem_slice(self.cert_pem.as_bytes())
            .map_err(|e| CaError::Generate(e.to_string()))?;
        Ok((
            vec![leaf.der().clone(), ca_der],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        ))
    }
}

fn read_key(key_path: &Path) -> Result<KeyPair, CaError> {
    let key_pem = std::fs::read_to_string(key_path).map_err(io_err("read", key_path))?;
    KeyPair::from_pem(&key_pem).map_err(|e| CaError::BadKey {
        path: key_path.display().to_string(),
        message: e.to_string(),
    })
}

/// Write `bytes` to a temporary sibling of `path` with `mode`, flush it to disk and
/// rename it over `path`.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let registering = crate::output::cleanup::hold();
    let mut tmp = tempfile::Builder::new()
        .prefix(".ca.")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    let _pending = registering.file(tmp.path());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// An exclusive lock on `DIR/ca.lock` (flock: released when the process ends, even by a
/// crash), so only one process creates or rotates the CA at a time.
struct Lock(#[allow(dead_code)] std::fs::File);

impl Lock {
    fn take(dir: &Path) -> Result<Lock, CaError> {
        let path = dir.join("ca.lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err("lock", &path))?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            // SAFETY: flock(2) on a file descriptor we own; blocks until the lock is ours.
            let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
            if r != 0 {
                return Err(CaError::Io {
                    action: "lock",
                    path: path.display().to_string(),
                    source: std::io::Error::last_os_error(),
                });
            }
        }
        Ok(Lock(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_first_use_agrees_on_one_ca() {
        let dir = tempfile::tempdir().unwrap();
        let pems: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        CertificateAuthority::load_or_create(dir.path())
                            .unwrap()
                            .cert_pem()
                            .to_string()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(
            pems.iter().all(|p| p == &pems[0]),
            "every process ends up with the same CA"
        );
    }

    #[test]
    fn created_once_reused_and_key_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let a = CertificateAuthority::load_or_create(dir.path()).unwrap();
        let b = CertificateAuthority::load_or_create(dir.path()).unwrap();
        assert_eq!(a.cert_pem(), b.cert_pem());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("ca.key"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let c = CertificateAuthority::rotate(dir.path()).unwrap();
        assert_ne!(a.cert_pem(), c.cert_pem());
    }

    /// A key without its certificate (a crash between the two writes) made every run mint
    /// a new, unsaved CA. Now the certificate is re-issued from the saved key and kept.
    #[test]
    fn half_present_ca_is_repaired_or_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = CertificateAuthority::load_or_create(dir.path()).unwrap();
        let key_before = std::fs::read(dir.path().join("ca.key")).unwrap();
        std::fs::remove_file(dir.path().join("ca.pem")).unwrap();
        let b = CertificateAuthority::load_or_create(dir.path()).unwrap();
        assert!(
            dir.path().join("ca.pem").is_file(),
            "the certificate is saved"
        );
        assert_eq!(
            std::fs::read(dir.path().join("ca.key")).unwrap(),
            key_before
        );
        let c = CertificateAuthority::load_or_create(dir.path()).unwrap();
        assert_eq!(b.cert_pem(), c.cert_pem(), "the repaired CA is reused");
        // a leaf minted by the repaired CA verifies against the old certificate (same key)
        let (chain, _) = b.mint_leaf(&["api.anthropic.com".into()]).unwrap();
        use rustls::pki_types::pem::PemObject;
        let old =
            rustls::pki_types::CertificateDer::from_pem_slice(a.cert_pem().as_bytes()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(old).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            std::sync::Arc::new(roots),
            std::sync::Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        use rustls::client::danger::ServerCertVerifier;
        verifier
            .verify_server_cert(
                &chain[0],
                &[],
                &rustls::pki_types::ServerName::try_from("api.anthropic.com").unwrap(),
                &[],
                rustls::pki_types::UnixTime::now(),
            )
            .expect("clients trusting the old certificate trust the repaired CA");
        // a certificate without its key is refused with the fix named
        std::fs::remove_file(dir.path().join("ca.key")).unwrap();
        let e = CertificateAuthority::load_or_create(dir.path())
            .err()
            .unwrap();
        assert!(e.to_string().contains("agentwire ca --rotate"), "{e}");
        // no temporary files are left behind
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }
}
