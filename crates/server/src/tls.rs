//! TLS (`--ssl-cert`, `--ssl-key`, `--ssl-ca`) with rustls.
//!
//! A client that wants TLS sends an SSLRequest packet after the server's handshake; the
//! server then runs the TLS handshake on the same socket and reads the real handshake
//! response inside it (MariaDB's protocol). `require_secure_transport` refuses TCP logins
//! without TLS; unix-socket connections count as secure, as in MariaDB.
//!
//! With `--ssl-ca` the server asks for a client certificate and verifies one that is sent
//! against those CAs (a client without one still connects, as with MariaDB; an account
//! that `REQUIRE`s X509, ISSUER or SUBJECT then refuses it). What the session established
//! ([`peer_tls`]) goes to the login check and to `Ssl_cipher` / `Ssl_version`.

use std::path::Path;
use std::sync::Arc;

use onelog_sql::{CertNames, PeerTls};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{CipherSuite, ProtocolVersion, RootCertStore, ServerConfig, ServerConnection};

fn read_certs(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("can't read {option} {}: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("bad certificate in {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("no certificate in {}", path.display()));
    }
    Ok(certs)
}

/// Loads the certificate chain and key (and the CAs client certificates are verified
/// against) into a rustls server configuration.
pub fn server_config(
    cert: &Path,
    key: &Path,
    ca: Option<&Path>,
) -> Result<Arc<ServerConfig>, String> {
    let certs = read_certs(cert, "--ssl-cert")?;
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("can't read --ssl-key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let builder = match ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in read_certs(ca, "--ssl-ca")? {
                roots
                    .add(c)
                    .map_err(|e| format!("bad CA certificate in {}: {e}", ca.display()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .allow_unauthenticated()
                .build()
                .map_err(|e| format!("bad --ssl-ca {}: {e}", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let cfg = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("bad --ssl-cert/--ssl-key: {e}"))?;
    Ok(Arc::new(cfg))
}

/// What a completed TLS handshake established: protocol and cipher by OpenSSL's names
/// (as MariaDB reports them), and the verified client certificate's issuer and subject.
pub fn peer_tls(conn: &ServerConnection) -> PeerTls {
    let version = match conn.protocol_version() {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "",
    };
    let cipher = conn
        .negotiated_cipher_suite()
        .map(|s| openssl_cipher_name(s.suite()))
        .unwrap_or_default();
    let cert = conn
        .peer_certificates()
        .and_then(|c| c.first())
        .and_then(|c| crate::x509_name::issuer_and_subject(c.as_ref()))
        .map(|(issuer, subject)| CertNames { issuer, subject });
    PeerTls {
        version: version.into(),
        cipher,
        cert,
    }
}

/// OpenSSL's name of a cipher suite (the names `Ssl_cipher` and `REQUIRE CIPHER` use).
fn openssl_cipher_name(s: CipherSuite) -> String {
    use CipherSuite as C;
    let name = match s {
        C::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        C::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        C::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "ECDHE-ECDSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "ECDHE-ECDSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-ECDSA-CHACHA20-POLY1305",
        C::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "ECDHE-RSA-AES256-GCM-SHA384",
        C::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "ECDHE-RSA-AES128-GCM-SHA256",
        C::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => "ECDHE-RSA-CHACHA20-POLY1305",
        other => return format!("{other:?}"),
    };
    name.into()
}
