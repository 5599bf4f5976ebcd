//! `mysqlslap` with 4 concurrent clients inserting 35 KB blobs built by REPEAT().

mod common;
use common::*;
use std::time::Duration;

#[test]
fn mysqlslap_blobs() {
    if !have("mysqlslap", "mysqlslap_blobs") {
        return;
    }
    let mut srv = Server::start(&[]);
    srv.sql("CREATE DATABASE slap");
    srv.sql("CREATE TABLE slap.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, b MEDIUMBLOB NOT NULL)");
    let (ok, out, err) = run(
        "mysqlslap",
        &[
            "--no-defaults".into(),
            format!("--socket={}", srv.socket.display()),
            "-uroot".into(),
            "--create-schema=slap".into(),
            "--query=INSERT INTO t(b) VALUES (REPEAT('x',35000))".into(),
            "--concurrency=4".into(),
            "--number-of-queries=800".into(),
            "--iterations=1".into(),
            "--no-drop".into(),
        ],
        Duration::from_secs(120),
    );
    assert!(ok, "mysqlslap failed:\n{out}\n{err}\n{}", srv.log_text());
    assert!(
        out.contains("Number of clients running queries: 4"),
        "{out}"
    );
    // The same over TCP.
    let (ok, out, err) = run(
        "mysqlslap",
        &[
            "--no-defaults".into(),
            "--protocol=tcp".into(),
            "-h127.0.0.1".into(),
            format!("-P{}", srv.port),
            "-uroot".into(),
            "--create-schema=slap".into(),
            "--query=INSERT INTO t(b) VALUES (REPEAT('y',35000))".into(),
            "--concurrency=4".into(),
            "--number-of-queries=200".into(),
            "--iterations=1".into(),
            "--no-drop".into(),
        ],
        Duration::from_secs(120),
    );
    assert!(
        ok,
        "mysqlslap (tcp) failed:\n{out}\n{err}\n{}",
        srv.log_text()
    );
    let check = "SELECT COUNT(*), SUM(LENGTH(b)), SUM(b = REPEAT('x',35000)), \
                 SUM(b = REPEAT('y',35000)), COUNT(DISTINCT id), MAX(id) FROM slap.t";
    assert_eq!(srv.sql(check), "1000\t35000000\t800\t200\t1000\t1000\n");
    // Survives a crash: everything acknowledged is there after recovery.
    srv.kill9();
    srv.restart();
    assert_eq!(srv.sql(check), "1000\t35000000\t800\t200\t1000\t1000\n");
    srv.stop();
}
