//! Accounts that require TLS, against a real onelogd and the real `mariadb` client:
//! `REQUIRE SSL` refused over plain TCP (1045) and accepted over TLS; `REQUIRE X509`
//! needing a client certificate verified against `--ssl-ca`; ISSUER / SUBJECT / CIPHER
//! compared with the certificate and the session; the `Ssl_*` status variables;
//! `Aborted_connects` (wrong password, a garbage handshake) and `Max_used_connections`;
//! the TLS options in `onelogd --help`. Certificates are made with the openssl CLI: a CA,
//! a server certificate and a client certificate it signs.

mod common;
use common::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn openssl(args: &[&str], dir: &Path) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "openssl {args:?}: {}", out(&o));
}

/// ca.pem, server.pem/server.key (CN=localhost), client.pem/client.key
/// (`/C=FI/O=onelog/CN=client one`), both signed by the CA (`/CN=onelog test CA`).
fn make_certs(dir: &Path) {
    openssl(
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=onelog test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
        ],
        dir,
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    std::fs::write(dir.join("client.ext"), "extendedKeyUsage=clientAuth\n").unwrap();
    for (name, subj) in [
        ("server", "/CN=localhost"),
        ("client", "/C=FI/O=onelog/CN=client one"),
    ] {
        let (key, csr, pem, ext) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("{name}.ext"),
        );
        openssl(
            &[
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", subj, "-keyout", &key, "-out",
                &csr,
            ],
            dir,
        );
        openssl(
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &ext,
                "-out",
                &pem,
            ],
            dir,
        );
    }
}

struct Tls {
    dir: PathBuf,
}

impl Tls {
    /// `mariadb` over TCP as `user` (password `pw` when given): with TLS (and the client
    /// certificate when `cert`), or plain.
    fn run(
        &self,
        srv: &Server,
        user: &str,
        pw: Option<&str>,
        tls: bool,
        cert: bool,
        sql: &str,
    ) -> std::process::Output {
        let mut args = vec![format!("-u{user}"), "-N".into(), "-B".into()];
        if let Some(pw) = pw {
            args.push(format!("-p{pw}"));
        }
        if tls {
            args.push("--ssl".into());
            args.push(format!("--ssl-ca={}", self.dir.join("ca.pem").display()));
            if cert {
                args.push(format!(
                    "--ssl-cert={}",
                    self.dir.join("client.pem").display()
                ));
                args.push(format!(
                    "--ssl-key={}",
                    self.dir.join("client.key").display()
                ));
            }
        } else {
            args.push("--skip-ssl".into());
        }
        args.push("-e".into());
        args.push(sql.into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        srv.mariadb_tcp(&refs, "")
    }
}

/// Waits until `name` reaches `want` (connection threads count their failures as they
/// end), then returns its value.
fn status_reaching(srv: &Server, name: &str, want: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let v = srv.status_var(name);
        if v >= want || std::time::Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `mariadb -N -B -e sql` as root over the socket without TLS (the client would use TLS
/// there too, as with MariaDB, and count in `Ssl_accepts`).
fn plain(srv: &Server, sql: &str) -> String {
    ok_text(&srv.mariadb(&["--skip-ssl", "-N", "-B", "-e", sql], ""))
}

fn plain_status(srv: &Server, name: &str) -> u64 {
    let out = plain(srv, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    out.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn ok_text(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", out(o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn denied(o: &std::process::Output, user: &str, pw: bool) {
    let text = out(o);
    assert!(!o.status.success(), "{user} got in: {text}");
    let want = format!(
        "ERROR 1045 (28000): Access denied for user '{user}'@'localhost' (using password: {})",
        if pw { "YES" } else { "NO" }
    );
    assert!(text.contains(&want), "{user}: {text}");
}

#[test]
fn require_ssl_x509_issuer_subject_cipher() {
    if !have(MARIADB, "tls_accounts") || !have("openssl", "tls_accounts") {
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    make_certs(certs.path());
    let arg = |o: &str, f: &str| format!("--ssl-{o}={}", certs.path().join(f).display());
    let (c, k, a) = (
        arg("cert", "server.pem"),
        arg("key", "server.key"),
        arg("ca", "ca.pem"),
    );
    let srv = Server::start(&[&c, &k, &a]);
    let t = Tls {
        dir: certs.path().to_path_buf(),
    };
    plain(
        &srv,
        "CREATE USER s1@'%' IDENTIFIED BY 'pw' REQUIRE SSL; \
         CREATE USER x1@'%' REQUIRE X509; \
         CREATE USER sub@'%' REQUIRE ISSUER '/CN=onelog test CA' AND SUBJECT '/C=FI/O=onelog/CN=client one'; \
         CREATE USER wrongsub@'%' REQUIRE SUBJECT '/C=FI/O=onelog/CN=client two'; \
         CREATE USER c2@'%' REQUIRE CIPHER 'NULL-SHA'",
    );
    let mut tls_runs = 0;

    // REQUIRE SSL: refused over plain TCP, accepted over TLS.
    denied(
        &t.run(&srv, "s1", Some("pw"), false, false, "SELECT 1"),
        "s1",
        true,
    );
    let o = t.run(
        &srv,
        "s1",
        Some("pw"),
        true,
        false,
        "SELECT CURRENT_USER(); SHOW STATUS LIKE 'Ssl_version'; SHOW STATUS LIKE 'Ssl_cipher'",
    );
    tls_runs += 1;
    let text = ok_text(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "s1@%", "{text}");
    let version = lines[1].strip_prefix("Ssl_version\t").unwrap();
    assert!(version == "TLSv1.3" || version == "TLSv1.2", "{text}");
    let cipher = lines[2].strip_prefix("Ssl_cipher\t").unwrap().to_string();
    assert!(!cipher.is_empty() && !cipher.contains("TLS13_"), "{text}");
    // Not TLS: empty, as MariaDB.
    assert_eq!(
        plain(&srv, "SHOW STATUS LIKE 'Ssl_cipher'"),
        "Ssl_cipher\t\n"
    );

    // REQUIRE X509: a verified client certificate.
    denied(
        &t.run(&srv, "x1", None, true, false, "SELECT 1"),
        "x1",
        false,
    );
    tls_runs += 1;
    let o = t.run(&srv, "x1", None, true, true, "SELECT CURRENT_USER()");
    tls_runs += 1;
    assert_eq!(ok_text(&o), "x1@%\n");
    denied(
        &t.run(&srv, "x1", None, false, false, "SELECT 1"),
        "x1",
        false,
    );

    // ISSUER / SUBJECT compare the certificate's names; CIPHER the session's cipher.
    let o = t.run(&srv, "sub", None, true, true, "SELECT 2");
    tls_runs += 1;
    assert_eq!(ok_text(&o), "2\n");
    denied(
        &t.run(&srv, "sub", None, true, false, "SELECT 1"),
        "sub",
        false,
    );
    tls_runs += 1;
    denied(
        &t.run(&srv, "wrongsub", None, true, true, "SELECT 1"),
        "wrongsub",
        false,
    );
    tls_runs += 1;
    plain(
        &srv,
        &format!("CREATE USER c1@'%' REQUIRE CIPHER '{cipher}'"),
    );
    // A cipher alone needs no client certificate (MariaDB 10.11).
    let o = t.run(&srv, "c1", None, true, false, "SHOW CREATE USER c1@'%'");
    tls_runs += 1;
    assert_eq!(
        ok_text(&o),
        format!("CREATE USER `c1`@`%` REQUIRE CIPHER '{cipher}'\n")
    );
    denied(
        &t.run(&srv, "c2", None, true, true, "SELECT 1"),
        "c2",
        false,
    );
    tls_runs += 1;

    // Every TLS handshake above was begun and completed.
    assert_eq!(plain_status(&srv, "Ssl_accepts"), tls_runs);
    assert_eq!(plain_status(&srv, "Ssl_finished_accepts"), tls_runs);
    // The refused logins: s1 and x1 without TLS, x1 and sub without a certificate,
    // wrongsub and c2; and the test harness's start-up probe, a TCP connection closed
    // before the handshake (pre-authentication).
    assert_eq!(status_reaching(&srv, "Aborted_connects", 7), 7);
    assert_eq!(plain_status(&srv, "Aborted_connects_preauth"), 1);

    // A restart keeps the requirements (they are stored with the accounts).
    let mut srv = srv;
    srv.stop();
    srv.restart();
    denied(
        &t.run(&srv, "s1", Some("pw"), false, false, "SELECT 1"),
        "s1",
        true,
    );
    assert_eq!(
        ok_text(&t.run(&srv, "sub", None, true, true, "SELECT 3")),
        "3\n"
    );
    srv.assert_no_panic();
}

#[test]
fn aborted_connects_and_max_used_connections() {
    if !have(MARIADB, "aborted_connects") {
        return;
    }
    let srv = Server::start(&[]);
    srv.sql("CREATE USER u@'%' IDENTIFIED BY 'pw'");
    // The harness's start-up probe: a TCP connection closed before the handshake.
    assert_eq!(status_reaching(&srv, "Aborted_connects_preauth", 1), 1);
    assert_eq!(srv.status_var("Aborted_connects"), 1);
    // A wrong password and an unknown user.
    let o = srv.mariadb_tcp(&["-uu", "-pbad", "-e", "SELECT 1"], "");
    denied(&o, "u", true);
    let o = srv.mariadb_tcp(&["-unosuch", "-e", "SELECT 1"], "");
    denied(&o, "nosuch", false);
    assert_eq!(srv.status_var("Aborted_connects"), 3);
    assert_eq!(srv.status_var("Aborted_connects_preauth"), 1);
    // A garbage handshake response, and a client that goes away before answering.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    let mut greeting = [0u8; 4];
    s.read_exact(&mut greeting).unwrap();
    s.write_all(b"\x05\x00\x00\x01hello").unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    drop(std::net::TcpStream::connect(("127.0.0.1", srv.port)).unwrap());
    assert_eq!(status_reaching(&srv, "Aborted_connects", 5), 5);
    assert_eq!(status_reaching(&srv, "Aborted_connects_preauth", 3), 3);

    // Max_used_connections: the most connections open at once.
    let mut conns: Vec<mysql::Conn> = (0..5).map(|_| srv.conn(None)).collect();
    use mysql::prelude::Queryable;
    let row: Option<(String, u64)> = conns[0]
        .query_first("SHOW GLOBAL STATUS LIKE 'Max_used_connections'")
        .unwrap();
    let max = row.unwrap().1;
    assert!((5..=6).contains(&max), "{max}");
    conns.clear();
    assert_eq!(srv.status_var("Max_used_connections"), max);

    // The TLS options are in --help.
    let o = Command::new(ONELOGD).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for opt in [
        "--ssl-ca=",
        "--ssl-cert=",
        "--ssl-key=",
        "--require-secure-transport",
    ] {
        assert!(help.contains(opt), "{opt} missing from --help:\n{help}");
    }
    srv.assert_no_panic();
}
