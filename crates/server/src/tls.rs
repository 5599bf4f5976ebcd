//! TLS (`--ssl-cert`, `--ssl-key`) with rustls.
//!
//! A client that wants TLS sends an SSLRequest packet after the server's handshake; the
//! server then runs the TLS handshake on the same socket and reads the real handshake
//! response inside it (MariaDB's protocol). `require_secure_transport` refuses TCP logins
//! without TLS; unix-socket connections count as secure, as in MariaDB.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;

/// Loads the certificate chain and key into a rustls server configuration.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("can't read --ssl-cert {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad certificate in {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("can't read --ssl-key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("bad --ssl-cert/--ssl-key: {e}"))?;
    Ok(Arc::new(cfg))
}
