//! Accounts and privileges of the embedded database against MariaDB 10.11's behaviour:
//! `REQUIRE` on CREATE USER / ALTER USER / GRANT (stored, shown by SHOW CREATE USER and
//! SHOW GRANTS, kept across a reopen, checked at login), CURRENT_USER(), and the errors
//! of statements a user may not run (1142 naming the missing privileges, PREPARE refused,
//! SET sql_log_bin, KILL of another user's connection). The expected texts are MariaDB's.

use std::sync::Arc;
use std::time::Duration;

use onelog_engine::EngineOptions;
use onelog_sql::{CertNames, Database, PeerTls, QueryResult, Session};

fn open(dir: &std::path::Path) -> Arc<Database> {
    Database::open(EngineOptions {
        datadir: dir.to_path_buf(),
        sync_binlog: 0,
        lock_wait_timeout: Duration::from_secs(5),
        block_cache_size: 8 << 20,
        ..Default::default()
    })
    .expect("open")
}

fn session(db: &Arc<Database>, user: &str, host: &str) -> Session {
    Session::new(
        db.clone(),
        user.into(),
        host.into(),
        db.next_connection_id(),
    )
}

fn exec(s: &mut Session, sql: &str) -> QueryResult {
    match s.query(sql) {
        Ok(r) => r,
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The first column of every row, as text.
fn column(s: &mut Session, sql: &str) -> Vec<String> {
    match exec(s, sql) {
        QueryResult::Rows { rows, .. } => rows.iter().map(|r| r[0].to_string()).collect(),
        other => panic!("{sql}: {other:?}"),
    }
}

fn err(s: &mut Session, sql: &str) -> (u16, String) {
    match s.query(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => (e.code, e.message),
    }
}

fn tls(cipher: &str, subject: Option<&str>) -> PeerTls {
    PeerTls {
        version: "TLSv1.3".into(),
        cipher: cipher.into(),
        cert: subject.map(|s| CertNames {
            issuer: "/CN=onelog CA".into(),
            subject: s.into(),
        }),
    }
}

#[test]
fn require_clauses_stored_shown_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut r = session(&db, "root", "localhost");
    exec(&mut r, "CREATE USER t1@'%' REQUIRE SSL");
    exec(&mut r, "CREATE USER t2@'%' IDENTIFIED BY 'pw' REQUIRE X509");
    exec(
        &mut r,
        "CREATE USER t3@'%' REQUIRE CIPHER 'AES' AND SUBJECT '/CN=cl' ISSUER '/CN=ca'",
    );
    exec(&mut r, "CREATE USER t4@localhost REQUIRE NONE");
    exec(&mut r, "CREATE USER t5@'%', t6@'%' REQUIRE CIPHER 'it''s'");
    let show = |r: &mut Session, u: &str| column(r, &format!("SHOW CREATE USER {u}"))[0].clone();
    assert_eq!(show(&mut r, "t1@'%'"), "CREATE USER `t1`@`%` REQUIRE SSL");
    assert_eq!(
        show(&mut r, "t2@'%'"),
        "CREATE USER `t2`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122' REQUIRE X509"
    );
    assert_eq!(
        show(&mut r, "t3@'%'"),
        "CREATE USER `t3`@`%` REQUIRE ISSUER '/CN=ca' SUBJECT '/CN=cl' CIPHER 'AES'"
    );
    assert_eq!(show(&mut r, "t4@localhost"), "CREATE USER `t4`@`localhost`");
    assert_eq!(
        show(&mut r, "t6@'%'"),
        "CREATE USER `t6`@`%` REQUIRE CIPHER 'it''s'"
    );
    assert_eq!(
        column(&mut r, "SHOW GRANTS FOR t3@'%'"),
        ["GRANT USAGE ON *.* TO `t3`@`%` REQUIRE ISSUER '/CN=ca' SUBJECT '/CN=cl' CIPHER 'AES'"]
    );
    assert_eq!(
        err(&mut r, "SHOW CREATE USER nosuch@'%'"),
        (1133, "Can't find any matching row in the user table".into())
    );

    // ALTER USER and GRANT replace the whole requirement; without REQUIRE they keep it.
    exec(&mut r, "ALTER USER t4@localhost REQUIRE SUBJECT 'x'");
    exec(
        &mut r,
        "GRANT SELECT ON *.* TO t4@localhost REQUIRE CIPHER 'c' WITH GRANT OPTION",
    );
    assert_eq!(
        column(&mut r, "SHOW GRANTS FOR t4@localhost"),
        ["GRANT SELECT ON *.* TO `t4`@`localhost` REQUIRE CIPHER 'c' WITH GRANT OPTION"]
    );
    exec(&mut r, "GRANT INSERT ON *.* TO t4@localhost");
    assert_eq!(
        show(&mut r, "t4@localhost"),
        "CREATE USER `t4`@`localhost` REQUIRE CIPHER 'c'"
    );
    exec(&mut r, "ALTER USER t4@localhost REQUIRE NONE");
    assert_eq!(show(&mut r, "t4@localhost"), "CREATE USER `t4`@`localhost`");
    assert_eq!(
        err(&mut r, "CREATE USER t7@'%' REQUIRE CIPHER 'a' CIPHER 'b'"),
        (1225, "Option 'CIPHER' used twice in statement".into())
    );
    assert_eq!(
        err(&mut r, "CREATE USER t7@'%' REQUIRE SSL AND X509").0,
        1064
    );
    assert_eq!(
        err(&mut r, "GRANT USAGE ON *.* TO t7@'%' REQUIRE SSL"),
        (1133, "Can't find any matching row in the user table".into())
    );

    // The login check: 1045 as MariaDB, whatever failed.
    let auth = |u: &str, t: Option<&PeerTls>| {
        db.authenticate(u, "10.0.0.1", b"01234567890123456789", b"", t)
            .map(|_| ())
            .map_err(|e| (e.code, e.message))
    };
    assert_eq!(
        auth("t1", None),
        Err((
            1045,
            "Access denied for user 't1'@'10.0.0.1' (using password: NO)".into()
        ))
    );
    assert!(auth("t1", Some(&tls("TLS_AES_256_GCM_SHA384", None))).is_ok());
    assert!(auth("t3", Some(&tls("AES", Some("/CN=cl")))).is_err()); // issuer differs
    assert!(auth("t5", Some(&tls("it's", None))).is_ok()); // a cipher needs no certificate
    assert!(auth("t5", Some(&tls("its", None))).is_err());
    drop(r);
    drop(db);

    // Kept across a reopen (the account tables are logged like any data).
    let db = open(dir.path());
    let mut r = session(&db, "root", "localhost");
    assert_eq!(
        show(&mut r, "t3@'%'"),
        "CREATE USER `t3`@`%` REQUIRE ISSUER '/CN=ca' SUBJECT '/CN=cl' CIPHER 'AES'"
    );
    let t = tls("TLS_AES_256_GCM_SHA384", Some("/CN=u"));
    assert!(db
        .authenticate("t2", "h", b"01234567890123456789", b"", Some(&t))
        .is_err()); // t2 has a password
    assert!(db
        .authenticate("t1", "h", b"01234567890123456789", b"", None)
        .is_err());
}

#[test]
fn privilege_errors_as_mariadb() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut r = session(&db, "root", "localhost");
    for sql in [
        "CREATE DATABASE pdb",
        "CREATE DATABASE odb",
        "CREATE TABLE pdb.t (a INT PRIMARY KEY)",
        "CREATE TABLE odb.t (a INT)",
        "CREATE USER lim@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT ON pdb.* TO lim@'%'",
        "CREATE USER lim2@'%'",
        "GRANT DROP, ALTER, INSERT ON pdb.* TO lim2@'%'",
    ] {
        exec(&mut r, sql);
    }
    let mut u = session(&db, "lim", "localhost");
    assert_eq!(
        column(
            &mut u,
            "SELECT CONCAT(CURRENT_USER(), ' ', USER(), ' ', CURRENT_USER)"
        ),
        ["lim@% lim@localhost lim@%"]
    );
    let denied = |what: &str, db: &str, t: &str| {
        (
            1142,
            format!("{what} command denied to user 'lim'@'localhost' for table `{db}`.`{t}`"),
        )
    };
    assert_eq!(
        err(&mut u, "CREATE TABLE pdb.x (a INT)"),
        denied("CREATE", "pdb", "x")
    );
    assert_eq!(
        err(&mut u, "CREATE TABLE odb.x (a INT)"),
        denied("CREATE", "odb", "x")
    );
    exec(&mut u, "USE pdb");
    assert_eq!(
        err(&mut u, "CREATE TABLE x (a INT)"),
        denied("CREATE", "pdb", "x")
    );
    assert_eq!(err(&mut u, "DROP TABLE pdb.t"), denied("DROP", "pdb", "t"));
    assert_eq!(
        err(&mut u, "ALTER TABLE pdb.t ADD b INT"),
        denied("ALTER", "pdb", "t")
    );
    assert_eq!(
        err(&mut u, "CREATE INDEX i ON pdb.t (a)"),
        denied("INDEX", "pdb", "t")
    );
    assert_eq!(
        err(&mut u, "TRUNCATE TABLE pdb.t"),
        denied("DROP", "pdb", "t")
    );
    assert_eq!(
        err(&mut u, "RENAME TABLE pdb.t TO pdb.t2"),
        denied("DROP, ALTER", "pdb", "t")
    );
    assert_eq!(
        err(&mut u, "REPLACE INTO pdb.t VALUES (1)"),
        denied("INSERT, DELETE", "pdb", "t")
    );
    assert_eq!(
        err(&mut u, "CREATE DATABASE zz"),
        (
            1044,
            "Access denied for user 'lim'@'%' to database 'zz'".into()
        )
    );

    // PREPARE refuses what the user may not run; what it may run prepares.
    for (sql, e) in [
        ("INSERT INTO pdb.t VALUES (1)", denied("INSERT", "pdb", "t")),
        ("UPDATE pdb.t SET a = 1", denied("UPDATE", "pdb", "t")),
        ("DELETE FROM pdb.t", denied("DELETE", "pdb", "t")),
        ("CREATE TABLE pdb.y (a INT)", denied("CREATE", "pdb", "y")),
        ("SELECT * FROM odb.t", denied("SELECT", "odb", "t")),
    ] {
        assert_eq!(err(&mut u, &format!("PREPARE s FROM '{sql}'")), e, "{sql}");
        assert_eq!(
            u.prepare(sql).map(|_| ()).map_err(|e| (e.code, e.message)),
            Err(e),
            "{sql}"
        );
    }
    exec(&mut u, "PREPARE s FROM 'SELECT * FROM pdb.t WHERE a = ?'");
    exec(&mut u, "PREPARE s FROM 'DROP TABLE pdb.t'"); // checked when it runs, as MariaDB

    // SET sql_log_bin needs SUPER or BINLOG ADMIN, in either scope.
    let need = (
        1227,
        "Access denied; you need (at least one of) the SUPER, BINLOG ADMIN privilege(s) for this operation".to_string(),
    );
    for sql in [
        "SET sql_log_bin = 0",
        "SET SESSION sql_log_bin = 0",
        "SET @@sql_log_bin = 1",
        "SET GLOBAL sql_log_bin = 0",
    ] {
        assert_eq!(err(&mut u, sql), need, "{sql}");
    }
    exec(&mut r, "SET sql_log_bin = 0");
    exec(&mut r, "SET sql_log_bin = 1");
    assert_eq!(
        err(&mut r, "SET GLOBAL sql_log_bin = 0"),
        (1238, "Variable 'sql_log_bin' is a SESSION variable".into())
    );
    exec(&mut r, "CREATE USER binadm@'%'");
    exec(&mut r, "GRANT BINLOG ADMIN ON *.* TO binadm@'%'");
    exec(&mut session(&db, "binadm", "h"), "SET sql_log_bin = 0");

    // KILL: another user's connection needs the privilege (1095), one's own does not.
    let victim = session(&db, "root", "localhost");
    let id = victim.connection_id();
    assert_eq!(
        err(&mut u, &format!("KILL {id}")),
        (1095, format!("You are not owner of thread {id}"))
    );
    assert_eq!(
        err(&mut u, &format!("KILL QUERY {id}")),
        (1095, format!("You are not owner of thread {id}"))
    );
    assert!(!victim.is_killed());
    assert_eq!(
        err(&mut u, "KILL 99999"),
        (1094, "Unknown thread id: 99999".into())
    );
    let own = session(&db, "lim", "localhost");
    exec(&mut u, &format!("KILL {}", own.connection_id()));
    assert!(own.is_killed());
    exec(&mut r, &format!("KILL {id}"));
    assert!(victim.is_killed());

    // lim2 holds INSERT but not DELETE / UPDATE / CREATE: only the missing ones are named.
    let mut u2 = session(&db, "lim2", "localhost");
    let denied2 = |what: &str, t: &str| {
        (
            1142,
            format!("{what} command denied to user 'lim2'@'localhost' for table `pdb`.`{t}`"),
        )
    };
    assert_eq!(
        err(&mut u2, "REPLACE INTO pdb.t VALUES (1)"),
        denied2("DELETE", "t")
    );
    assert_eq!(
        err(&mut u2, "RENAME TABLE pdb.t TO pdb.t2"),
        denied2("CREATE", "t2")
    );
    exec(&mut u2, "TRUNCATE TABLE pdb.t");
}
