//! TLS to the primary: `CHANGE MASTER TO MASTER_SSL=1` with `MASTER_SSL_CA`,
//! `MASTER_SSL_CERT`, `MASTER_SSL_KEY` and `MASTER_SSL_VERIFY_SERVER_CERT`, as a MariaDB
//! 10.11 replica has them, with rustls.
//!
//! With `MASTER_SSL_CA` the primary's certificate chain must verify against those CAs;
//! its name is checked against `MASTER_HOST` only with `MASTER_SSL_VERIFY_SERVER_CERT=1`
//! (which needs a CA). Without a CA the connection is encrypted but the primary is not
//! authenticated (MariaDB 10.11's behaviour with `MASTER_SSL=1` alone). A client
//! certificate (`MASTER_SSL_CERT` and `MASTER_SSL_KEY`) is sent when the primary asks.
//! The TLS handshake completes before the login continues, so a certificate that does not
//! verify is the IO thread's error (2026), retried like any connection error.
//!
//! `MASTER_SSL_CAPATH` names a directory whose certificate files (every file that holds
//! PEM certificates) are CAs too. `MASTER_SSL_CRL` (a PEM file of revocation lists) and
//! `MASTER_SSL_CRLPATH` (a directory of them) make a revoked certificate in the primary's
//! chain fail; they need a CA. `MASTER_SSL_CIPHER` is an OpenSSL-style list (`:` between
//! names) of the cipher suites the replica offers, in OpenSSL's names
//! (`ECDHE-RSA-AES256-GCM-SHA384`, `TLS_AES_128_GCM_SHA256`, ...) or rustls's
//! (`TLS13_AES_128_GCM_SHA256`); names of suites rustls does not have are left out, and a
//! list with none it has is an error.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{
    CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime,
};
use rustls::{
    CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore,
};

use super::conf::MasterConf;

/// The connection to the primary, plain or TLS.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// The TCP socket under it (timeouts, shutdown).
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.get_ref(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

fn certs(path: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{what} '{path}': {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{what} '{path}': {e}"))?;
    if certs.is_empty() {
        return Err(format!("{what} '{path}': no certificate"));
    }
    Ok(certs)
}

/// The regular files of directory `dir` (`what` names the option in errors).
fn files_in(dir: &str, what: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{what} '{dir}': {e}"))? {
        let path = e.map_err(|e| format!("{what} '{dir}': {e}"))?.path();
        if path.is_file() {
            out.push(path.display().to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// The CAs of MASTER_SSL_CA and MASTER_SSL_CAPATH (None: neither given).
fn roots(c: &MasterConf) -> Result<Option<RootCertStore>, String> {
    let mut files = Vec::new();
    if let Some(ca) = &c.ssl_ca {
        files.push((certs(ca, "MASTER_SSL_CA")?, ca.clone()));
    }
    if let Some(dir) = &c.ssl_capath {
        for f in files_in(dir, "MASTER_SSL_CAPATH")? {
            // Files that are not certificates (an index, a CRL) are not CAs.
            if let Ok(found) = certs(&f, "MASTER_SSL_CAPATH") {
                files.push((found, f));
            }
        }
        if files.is_empty() {
            return Err(format!("MASTER_SSL_CAPATH '{dir}': no certificate"));
        }
    }
    if files.is_empty() {
        return Ok(None);
    }
    let mut roots = RootCertStore::empty();
    for (found, f) in files {
        for cert in found {
            roots.add(cert).map_err(|e| format!("'{f}': {e}"))?;
        }
    }
    Ok(Some(roots))
}

/// The revocation lists of MASTER_SSL_CRL and MASTER_SSL_CRLPATH.
fn crls(c: &MasterConf) -> Result<Vec<CertificateRevocationListDer<'static>>, String> {
    let mut files = Vec::new();
    if let Some(f) = &c.ssl_crl {
        files.push((f.clone(), "MASTER_SSL_CRL"));
    }
    if let Some(dir) = &c.ssl_crlpath {
        for f in files_in(dir, "MASTER_SSL_CRLPATH")? {
            files.push((f, "MASTER_SSL_CRLPATH"));
        }
    }
    let mut out = Vec::new();
    for (f, what) in files {
        let found: Vec<_> = CertificateRevocationListDer::pem_file_iter(&f)
            .map_err(|e| format!("{what} '{f}': {e}"))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{what} '{f}': {e}"))?;
        if found.is_empty() && what == "MASTER_SSL_CRL" {
            return Err(format!("{what} '{f}': no revocation list"));
        }
        out.extend(found);
    }
    Ok(out)
}

/// OpenSSL's name of a cipher suite rustls (ring) has, and its rustls name.
const CIPHER_NAMES: [(&str, &str); 9] = [
    ("TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
    ("TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS13_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// The provider with only the suites of MASTER_SSL_CIPHER (all without it).
fn provider(c: &MasterConf) -> Result<CryptoProvider, String> {
    let mut p = rustls::crypto::ring::default_provider();
    let Some(list) = &c.ssl_cipher else {
        return Ok(p);
    };
    let wanted: Vec<String> = list
        .split([':', ','])
        .map(|n| n.trim().to_ascii_uppercase())
        .filter(|n| !n.is_empty())
        .map(|n| {
            CIPHER_NAMES
                .iter()
                .find(|(openssl, _)| *openssl == n)
                .map_or(n, |(_, rustls)| rustls.to_string())
        })
        .collect();
    p.cipher_suites
        .retain(|s| wanted.iter().any(|w| format!("{:?}", s.suite()) == *w));
    if p.cipher_suites.is_empty() {
        return Err(format!(
            "MASTER_SSL_CIPHER '{list}': none of these cipher suites is available"
        ));
    }
    Ok(p)
}

/// Verifies the primary's certificate as the module docs say.
#[derive(Debug)]
struct Verifier {
    /// None: no CA, nothing verified.
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The TLS settings of `c` (None without `MASTER_SSL=1`).
pub fn client_config(c: &MasterConf) -> Result<Option<Arc<ClientConfig>>, String> {
    if !c.ssl {
        return Ok(None);
    }
    let provider = Arc::new(provider(c)?);
    let crls = crls(c)?;
    let chain = match roots(c)? {
        Some(roots) => Some(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .with_crls(crls)
                .build()
                .map_err(|e| format!("MASTER_SSL_CA: {e}"))?,
        ),
        None if c.ssl_verify_server_cert || !crls.is_empty() => {
            return Err(
                "MASTER_SSL_VERIFY_SERVER_CERT=1 and MASTER_SSL_CRL need MASTER_SSL_CA or \
                 MASTER_SSL_CAPATH to verify the primary's certificate with"
                    .into(),
            )
        }
        None => None,
    };
    let verifier = Arc::new(Verifier {
        chain,
        check_name: c.ssl_verify_server_cert,
        provider: provider.clone(),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("MASTER_SSL_CIPHER: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let cfg = match (&c.ssl_cert, &c.ssl_key) {
        (Some(cert), Some(key)) => {
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("MASTER_SSL_KEY '{key}': {e}"))?;
            builder
                .with_client_auth_cert(certs(cert, "MASTER_SSL_CERT")?, key)
                .map_err(|e| format!("MASTER_SSL_CERT/MASTER_SSL_KEY: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("MASTER_SSL_CERT and MASTER_SSL_KEY go together".into()),
    };
    Ok(Some(Arc::new(cfg)))
}

/// Runs the TLS handshake with `host` on a plain stream (see `Client::login_with`).
pub fn upgrade(cfg: Arc<ClientConfig>, host: &str, s: Stream) -> std::io::Result<Stream> {
    let Stream::Plain(mut tcp) = s else {
        return Ok(s);
    };
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| std::io::Error::other(format!("'{host}': {e}")))?;
    let mut conn = ClientConnection::new(cfg, name).map_err(std::io::Error::other)?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp)?;
    }
    Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(conn, tcp))))
}
