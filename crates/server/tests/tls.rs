//! TLS: `--ssl-cert`/`--ssl-key` with a self-signed certificate, the `mariadb` client over
//! TLS, and `--require-secure-transport` refusing plain TCP (the socket stays allowed).

mod common;
use common::*;
use std::process::Command;

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn tls_and_require_secure_transport() {
    if !have(MARIADB, "tls") || !have("openssl", "tls") {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    let (cert, key) = (certs.path().join("cert.pem"), certs.path().join("key.pem"));
    let o = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let cert_arg = format!("--ssl-cert={}", cert.display());
    let key_arg = format!("--ssl-key={}", key.display());
    let srv = Server::start(&[&cert_arg, &key_arg, "--require-secure-transport"]);

    // TLS over TCP: the client reports a cipher.
    let o = srv.mariadb_tcp(
        &[
            "-uroot",
            "--ssl",
            "--disable-ssl-verify-server-cert",
            "-e",
            "\\s",
        ],
        "",
    );
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("Cipher in use is"), "{text}");
    let o = srv.mariadb_tcp(
        &[
            "-uroot",
            "--ssl",
            "--disable-ssl-verify-server-cert",
            "-N",
            "-B",
            "-e",
            "SELECT @@have_ssl, 1+1",
        ],
        "",
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "YES\t2\n",
        "{}",
        out(&o)
    );

    // Plain TCP is refused while secure transport is required; the socket is fine.
    let o = srv.mariadb_tcp(&["-uroot", "--skip-ssl", "-e", "SELECT 1"], "");
    assert!(!o.status.success());
    assert!(out(&o).contains("insecure transport"), "{}", out(&o));
    let o = srv.mariadb(&["-N", "-B", "-e", "SELECT 3"], "");
    assert!(o.status.success(), "{}", out(&o));
    srv.assert_no_panic();
}
