//! TLS for the server's listener (rustls): load a certificate chain and key from PEM files,
//! or build a config from DER parts (tests, the intercepting proxy's minted leaves).

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::error::ServerError;

/// A rustls server config for HTTP/1.1 from PEM files.
///
/// Errors: [`ServerError::Tls`] naming the file that could not be read or used.
pub fn server_config_from_pem(
    cert: &Path,
    key: &Path,
) -> Result<Arc<rustls::ServerConfig>, ServerError> {
    let err = |path: &Path, message: String| ServerError::Tls {
        path: path.display().to_string(),
        message,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| err(cert, e.to_string()))?
        .collect::<Result<_, _>>()
        .map_err(|e| err(cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(err(cert, "no PEM certificate in it".into()));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| err(key, e.to_string()))?;
    server_config(chain, key_der).map_err(|m| err(cert, m))
}

/// A rustls server config for HTTP/1.1 from a certificate chain and its key.
pub fn server_config(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}
