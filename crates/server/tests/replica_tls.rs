//! A onelogd replica over TLS (`MASTER_SSL=1`, `MASTER_SSL_CA`,
//! `MASTER_SSL_VERIFY_SERVER_CERT`) of a onelogd primary whose replication account
//! `REQUIRE`s SSL: refused in plain text (1045), refused when the certificate does not
//! verify (2026: wrong CA, or a host name the certificate does not name), replicating
//! once it verifies, and still over TLS after a restart (`master.info`).

mod common;
use common::replica::slave_status;
use common::*;
use mysql::prelude::Queryable;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn openssl(args: &[&str]) {
    let o = Command::new("openssl").args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A CA (`name.pem`) and a certificate for `localhost` it signed (`name-server.pem`, key
/// `name-server-key.pem`).
fn ca_and_server(dir: &Path, name: &str) -> (String, String, String) {
    let p = |f: &str| dir.join(f).display().to_string();
    let (ca, ca_key) = (p(&format!("{name}.pem")), p(&format!("{name}-key.pem")));
    let (cert, key) = (
        p(&format!("{name}-server.pem")),
        p(&format!("{name}-server-key.pem")),
    );
    let (csr, ext) = (p(&format!("{name}.csr")), p(&format!("{name}.ext")));
    let subj = format!("/CN={name} test CA");
    openssl(&[
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", &subj, "-keyout",
        &ca_key, "-out", &ca,
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &key,
        "-out",
        &csr,
    ]);
    std::fs::write(
        &ext,
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        &ext,
        "-out",
        &cert,
    ]);
    (ca, cert, key)
}

/// Waits for the IO thread's error `code`; returns its message.
fn io_error(c: &mut mysql::Conn, code: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if slave_status(c, "Last_IO_Errno") == code {
            return slave_status(c, "Last_IO_Error");
        }
        assert!(
            Instant::now() < deadline,
            "no IO error {code}: {} {}",
            slave_status(c, "Last_IO_Errno"),
            slave_status(c, "Last_IO_Error")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn wait_for(c: &mut mysql::Conn, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pos: String = c.query_first("SELECT @@gtid_slave_pos").unwrap().unwrap();
        if pos == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica at {pos}, want {want}; IO error: {}",
            slave_status(c, "Last_IO_Error")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn replica_over_tls_verifies_the_primary() {
    if !have("openssl", "replica_over_tls_verifies_the_primary") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = ca_and_server(dir.path(), "primary");
    let (other_ca, _, _) = ca_and_server(dir.path(), "other");
    let primary = Server::start(&[
        "--server-id=1",
        &format!("--ssl-cert={cert}"),
        &format!("--ssl-key={key}"),
    ]);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw' REQUIRE SSL")
        .unwrap();
    pc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    pc.query_drop("CREATE DATABASE app").unwrap();
    pc.query_drop("CREATE TABLE app.t (id INT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    pc.query_drop("INSERT INTO app.t VALUES (1, 'over tls')")
        .unwrap();

    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    let change = |rc: &mut mysql::Conn, host: &str, extra: &str| {
        rc.query_drop(format!(
            "CHANGE MASTER TO master_host='{host}', master_port={}, master_user='repl', \
             master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1{extra}",
            primary.port
        ))
        .unwrap();
    };
    // Plain text: the account refuses it.
    change(&mut rc, "127.0.0.1", "");
    rc.query_drop("START SLAVE").unwrap();
    io_error(&mut rc, "1045");
    rc.query_drop("STOP SLAVE").unwrap();
    // A CA that did not sign the primary's certificate.
    change(
        &mut rc,
        "127.0.0.1",
        &format!(", master_ssl=1, master_ssl_ca='{other_ca}'"),
    );
    rc.query_drop("START SLAVE").unwrap();
    let e = io_error(&mut rc, "2026");
    assert!(e.contains("SSL connection error"), "{e}");
    rc.query_drop("STOP SLAVE").unwrap();
    // The right CA, but the certificate names localhost, not 127.0.0.1.
    change(
        &mut rc,
        "127.0.0.1",
        &format!(", master_ssl_ca='{ca}', master_ssl_verify_server_cert=1"),
    );
    rc.query_drop("START SLAVE").unwrap();
    io_error(&mut rc, "2026");
    rc.query_drop("STOP SLAVE").unwrap();
    // The name it has.
    change(&mut rc, "localhost", "");
    rc.query_drop("START SLAVE").unwrap();
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    wait_for(&mut rc, &want);
    assert_eq!(slave_status(&mut rc, "Master_SSL_Allowed"), "Yes");
    assert_eq!(slave_status(&mut rc, "Master_SSL_CA_File"), ca);
    assert_eq!(
        slave_status(&mut rc, "Master_SSL_Verify_Server_Cert"),
        "Yes"
    );
    assert_eq!(dump_tables(&mut rc), dump_tables(&mut pc));

    // After a restart: the TLS settings were kept.
    drop(rc);
    replica.kill9();
    replica.restart();
    let mut rc = replica.conn(None);
    pc.query_drop("INSERT INTO app.t VALUES (2, 'after restart')")
        .unwrap();
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    wait_for(&mut rc, &want);
    assert_eq!(slave_status(&mut rc, "Master_SSL_Allowed"), "Yes");
    assert_eq!(dump_tables(&mut rc), dump_tables(&mut pc));
    replica.assert_no_panic();
}

/// Revocation lists of the CA `name` (see [`ca_and_server`]): one that revokes nothing and
/// one that revokes its server certificate.
fn crls(dir: &Path, name: &str) -> (String, String) {
    let p = |f: &str| dir.join(f).display().to_string();
    let (ca, ca_key, cert) = (
        p(&format!("{name}.pem")),
        p(&format!("{name}-key.pem")),
        p(&format!("{name}-server.pem")),
    );
    std::fs::write(dir.join("index.txt"), "").unwrap();
    std::fs::write(dir.join("crlnumber"), "01\n").unwrap();
    let cnf = p("ca.cnf");
    std::fs::write(
        &cnf,
        format!(
            "[ca]\ndefault_ca=d\n[d]\ndatabase={}\ncrlnumber={}\ndefault_md=sha256\n\
             default_crl_days=2\n",
            p("index.txt"),
            p("crlnumber")
        ),
    )
    .unwrap();
    let (empty, revoked) = (p("crl-empty.pem"), p("crl-revoked.pem"));
    let ca_args = ["-config", &cnf, "-keyfile", &ca_key, "-cert", &ca];
    let gencrl = |out: &str| {
        let mut a = vec!["ca"];
        a.extend(ca_args);
        a.extend(["-gencrl", "-out", out]);
        openssl(&a);
    };
    gencrl(&empty);
    let mut a = vec!["ca"];
    a.extend(ca_args);
    a.extend(["-revoke", &cert]);
    openssl(&a);
    gencrl(&revoked);
    (empty, revoked)
}

/// MASTER_SSL_CAPATH (a directory of CAs), MASTER_SSL_CRL / MASTER_SSL_CRLPATH (a revoked
/// primary certificate is refused: 2026) and MASTER_SSL_CIPHER (the suites offered: one
/// the primary's RSA certificate cannot use fails, an unknown list fails), shown in SHOW
/// SLAVE STATUS and kept across a restart.
#[test]
fn replica_tls_capath_crl_and_cipher() {
    if !have("openssl", "replica_tls_capath_crl_and_cipher") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = ca_and_server(dir.path(), "primary");
    let (crl_empty, crl_revoked) = crls(dir.path(), "primary");
    let capath = dir.path().join("capath");
    std::fs::create_dir(&capath).unwrap();
    std::fs::copy(&ca, capath.join("primary-ca.pem")).unwrap();
    std::fs::write(capath.join("README"), "not a certificate\n").unwrap();
    let crlpath = dir.path().join("crlpath");
    std::fs::create_dir(&crlpath).unwrap();
    std::fs::copy(&crl_revoked, crlpath.join("primary.crl")).unwrap();
    let capath = capath.display().to_string();
    let crlpath = crlpath.display().to_string();

    let primary = Server::start(&[
        "--server-id=1",
        &format!("--ssl-cert={cert}"),
        &format!("--ssl-key={key}"),
    ]);
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw' REQUIRE SSL")
        .unwrap();
    pc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    pc.query_drop("CREATE DATABASE app").unwrap();
    pc.query_drop("CREATE TABLE app.t (id INT PRIMARY KEY)")
        .unwrap();
    pc.query_drop("INSERT INTO app.t VALUES (1)").unwrap();

    let mut replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    let run = |rc: &mut mysql::Conn, extra: &str| {
        rc.query_drop("STOP SLAVE").unwrap();
        rc.query_drop(format!(
            "CHANGE MASTER TO master_host='localhost', master_port={}, master_user='repl', \
             master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1, \
             master_ssl=1, master_ssl_verify_server_cert=1, master_ssl_capath='{capath}'{extra}",
            primary.port
        ))
        .unwrap();
        rc.query_drop("START SLAVE").unwrap();
    };
    // A revocation list that names the primary's certificate, as a file and in a directory.
    run(&mut rc, &format!(", master_ssl_crl='{crl_revoked}'"));
    let e = io_error(&mut rc, "2026");
    assert!(e.contains("SSL connection error"), "{e}");
    run(
        &mut rc,
        &format!(", master_ssl_crl='', master_ssl_crlpath='{crlpath}'"),
    );
    io_error(&mut rc, "2026");
    // Suites the primary's RSA certificate cannot use (TLS 1.2 with ECDSA only).
    run(
        &mut rc,
        ", master_ssl_crlpath='', master_ssl_cipher='ECDHE-ECDSA-AES256-GCM-SHA384'",
    );
    io_error(&mut rc, "2026");
    // No suite onelog has.
    run(&mut rc, ", master_ssl_cipher='RC4-MD5:DES-CBC3-SHA'");
    let e = io_error(&mut rc, "2026");
    assert!(e.contains("MASTER_SSL_CIPHER"), "{e}");
    // A list that revokes nothing, and a suite the certificate can use.
    run(
        &mut rc,
        &format!(", master_ssl_crl='{crl_empty}', master_ssl_cipher='ECDHE-RSA-AES256-GCM-SHA384'"),
    );
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    wait_for(&mut rc, &want);
    let fields = [
        ("Master_SSL_CA_Path", capath.as_str()),
        ("Master_SSL_Cipher", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("Master_SSL_Crl", crl_empty.as_str()),
        ("Master_SSL_Crlpath", ""),
    ];
    for (f, v) in fields {
        assert_eq!(slave_status(&mut rc, f), v, "{f}");
    }
    drop(rc);
    replica.kill9();
    replica.restart();
    let mut rc = replica.conn(None);
    pc.query_drop("INSERT INTO app.t VALUES (2)").unwrap();
    let want: String = pc.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    wait_for(&mut rc, &want);
    for (f, v) in fields {
        assert_eq!(slave_status(&mut rc, f), v, "{f} after a restart");
    }
    assert_eq!(dump_tables(&mut rc), dump_tables(&mut pc));
    replica.assert_no_panic();
}
