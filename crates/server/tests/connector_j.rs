//! MariaDB Connector/J 3.5 (the jar `scripts/install-deps.sh` fetches from Maven Central
//! into ~/.cache/onelog/jars) against onelogd: tests/java/ConnectorJ.java is compiled with
//! javac and run with the jar on the classpath. It connects with plain URLs, once per set
//! of options (client-side and server-side prepared statements, bulk batches on and off),
//! and runs batches of 1,000 rows with generated keys, transactions and savepoints, a
//! result set of every common type, DatabaseMetaData and stored procedures with OUT and
//! INOUT parameters through CallableStatement; it throws on any mismatch.

mod common;
use common::*;
use std::path::PathBuf;
use std::time::Duration;

/// The newest Connector/J 3.5 jar in ~/.cache/onelog/jars; None (with a skip notice)
/// when there is none.
fn connector_jar(test: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").unwrap_or_default();
    let dir = PathBuf::from(home).join(".cache/onelog/jars");
    let mut jars: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("mariadb-java-client-3.5.") && n.ends_with(".jar"))
        })
        .collect();
    jars.sort();
    let jar = jars.pop();
    if jar.is_none() {
        eprintln!(
            "SKIPPED {test}: no mariadb-java-client-3.5.*.jar in {} (scripts/install-deps.sh \
             fetches it)",
            dir.display()
        );
    }
    jar
}

#[test]
fn connector_j() {
    let test = "connector_j";
    if !have("javac", test) || !have("java", test) {
        return;
    }
    let Some(jar) = connector_jar(test) else {
        return;
    };
    let classes = tempfile::tempdir().unwrap();
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/java/ConnectorJ.java");
    let (ok, out, err) = run(
        "javac",
        &[
            "-d".into(),
            classes.path().display().to_string(),
            src.into(),
        ],
        Duration::from_secs(300),
    );
    assert!(ok, "javac failed:\n{out}\n{err}");
    let mut srv = Server::start(&[]);
    let cp = format!("{}:{}", classes.path().display(), jar.display());
    let (ok, out, err) = run(
        "java",
        &[
            "-cp".into(),
            cp,
            "ConnectorJ".into(),
            srv.port.to_string(),
            "root".into(),
            String::new(),
        ],
        Duration::from_secs(600),
    );
    assert!(
        ok && out.contains("OK connector/j"),
        "ConnectorJ failed:\n{out}\n{err}\nserver log:\n{}",
        srv.log_text()
    );
    srv.stop();
}
