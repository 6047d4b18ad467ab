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

/// Common name of agentwire's CA.
pub const CA_NAME: &str = "agentwire local interception CA";

/// Errors of the CA.
#[derive(Debug, thiserror::Error)]
pub enum CaError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("CA key {path} is unusable: {message} (run `agentwire ca --rotate` to make a new CA)")]
    BadKey { path: String, message: String },
    #[error("certificate generation failed: {0}")]
    Generate(String),
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

    /// Load the CA from `dir`, creating it on first use (key file mode 0600).
    pub fn load_or_create(dir: &Path) -> Result<Self, CaError> {
        let (cert_path, key_path) = (dir.join("ca.pem"), dir.join("ca.key"));
        if cert_path.is_file() && key_path.is_file() {
            let cert_pem =
                std::fs::read_to_string(&cert_path).map_err(io_err("read", &cert_path))?;
            let key_pem = std::fs::read_to_string(&key_path).map_err(io_err("read", &key_path))?;
            let key = KeyPair::from_pem(&key_pem).map_err(|e| CaError::BadKey {
                path: key_path.display().to_string(),
                message: e.to_string(),
            })?;
            return Ok(CertificateAuthority {
                cert_pem,
                issuer: Issuer::new(ca_params(), key),
                dir: Some(dir.to_path_buf()),
            });
        }
        let mut ca = Self::generate()?;
        match ca.save(dir) {
            Ok(()) => {}
            // Another agentwire process created it at the same moment: use theirs.
            Err(CaError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists =>
            {
                for _ in 0..50 {
                    if cert_path.is_file() && key_path.is_file() {
                        return Self::load_or_create(dir);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
            Err(e) => return Err(e),
        }
        ca.dir = Some(dir.to_path_buf());
        Ok(ca)
    }

    /// Replace the CA in `dir` with a new one.
    pub fn rotate(dir: &Path) -> Result<Self, CaError> {
        for f in ["ca.pem", "ca.key"] {
            let p = dir.join(f);
            if p.exists() {
                std::fs::remove_file(&p).map_err(io_err("remove", &p))?;
            }
        }
        Self::load_or_create(dir)
    }

    fn save(&self, dir: &Path) -> Result<(), CaError> {
        std::fs::create_dir_all(dir).map_err(io_err("create", dir))?;
        let key_path = dir.join("ca.key");
        write_private(&key_path, self.issuer.key().serialize_pem().as_bytes())
            .map_err(io_err("write", &key_path))?;
        let cert_path = dir.join("ca.pem");
        let tmp = dir.join(format!("ca.pem.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &self.cert_pem).map_err(io_err("write", &tmp))?;
        std::fs::rename(&tmp, &cert_path).map_err(io_err("write", &cert_path))?;
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

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
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
}
