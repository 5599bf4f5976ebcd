//! Python DB-API drivers (mysqlclient `MySQLdb` and `PyMySQL`) against onelogd: round
//! trips of every supported type, NULLs, unicode, parameters, transactions.
//! The script is tests/py/roundtrip.py.

mod common;
use common::*;
use std::time::Duration;

fn roundtrip(driver: &str, test: &str) {
    if !have_python_module(driver, test) {
        return;
    }
    let mut srv = Server::start(&[]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/roundtrip.py");
    for (how, where_) in [
        ("socket", srv.socket.display().to_string()),
        ("tcp", srv.port.to_string()),
    ] {
        let (ok, out, err) = run(
            PYTHON,
            &[script.into(), driver.into(), how.into(), where_],
            Duration::from_secs(120),
        );
        assert!(
            ok && out.contains(&format!("OK {driver} {how}")),
            "{driver} over {how} failed:\n{out}\n{err}\nserver log:\n{}",
            srv.log_text()
        );
    }
    srv.stop();
}

#[test]
fn python_mysqldb() {
    roundtrip("MySQLdb", "python_mysqldb");
}

#[test]
fn python_pymysql() {
    roundtrip("pymysql", "python_pymysql");
}
