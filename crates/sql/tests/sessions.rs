//! Multi-session behaviour of the embedded database: concurrency (counters and transfers
//! end with exact totals, deadlocks reported as 1213 and not hung on), privileges,
//! prepared statements, KILL, recovery of DDL and data after reopening.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};
use onelog_types::Value;

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

fn root(db: &Arc<Database>) -> Session {
    Session::new(
        db.clone(),
        "root".into(),
        "localhost".into(),
        db.next_connection_id(),
    )
}

fn exec(s: &mut Session, sql: &str) -> QueryResult {
    match s.query(sql) {
        Ok(r) => r,
        Err(e) => panic!("{sql}: {e}"),
    }
}

fn scalar(s: &mut Session, sql: &str) -> Value {
    match exec(s, sql) {
        QueryResult::Rows { rows, .. } => rows[0][0].clone(),
        other => panic!("{sql}: {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Decimal(d) => d.narrow().unwrap() as i64 / 10i64.pow(d.scale as u32),
        other => other.to_string().parse().unwrap(),
    }
}

/// Retries a transaction body on deadlock / lock wait timeout, as sysbench does.
fn retry(s: &mut Session, stmts: &[String]) -> u32 {
    let mut deadlocks = 0;
    'again: loop {
        for st in stmts {
            if let Err(e) = s.query(st) {
                if e.code == 1213 || e.code == 1205 {
                    if e.code == 1213 {
                        deadlocks += 1;
                    }
                    let _ = s.query("ROLLBACK");
                    continue 'again;
                }
                panic!("{st}: {e}");
            }
        }
        return deadlocks;
    }
}

#[test]
fn concurrent_counters_and_transfers() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE bank");
    exec(&mut s, "USE bank");
    exec(
        &mut s,
        "CREATE TABLE counter (id INT PRIMARY KEY, n BIGINT NOT NULL)",
    );
    exec(&mut s, "INSERT INTO counter VALUES (1, 0)");
    exec(
        &mut s,
        "CREATE TABLE acct (id INT PRIMARY KEY, bal BIGINT NOT NULL)",
    );
    let accounts = 10;
    for i in 0..accounts {
        exec(&mut s, &format!("INSERT INTO acct VALUES ({i}, 1000)"));
    }
    let threads = 8;
    let per = 150;
    let deadlocks = Arc::new(AtomicU64::new(0));
    let mut hs = Vec::new();
    for t in 0..threads {
        let db = db.clone();
        let deadlocks = deadlocks.clone();
        hs.push(std::thread::spawn(move || {
            let mut s = root(&db);
            exec(&mut s, "USE bank");
            let mut seed = t as u64 * 7919 + 1;
            for i in 0..per {
                // autocommit increment
                exec(&mut s, "UPDATE counter SET n = n + 1 WHERE id = 1");
                // a transfer between two accounts in an explicit transaction, locking in
                // random order (deadlocks possible)
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let a = (seed >> 33) % accounts;
                let b = (a + 1 + (seed >> 40) % (accounts - 1)) % accounts;
                let amt = (i % 7) + 1;
                let d = retry(
                    &mut s,
                    &[
                        "BEGIN".into(),
                        format!("UPDATE acct SET bal = bal - {amt} WHERE id = {a}"),
                        format!("UPDATE acct SET bal = bal + {amt} WHERE id = {b}"),
                        "COMMIT".into(),
                    ],
                );
                deadlocks.fetch_add(d as u64, Ordering::Relaxed);
            }
        }));
    }
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(
        int(&scalar(&mut s, "SELECT n FROM counter WHERE id = 1")),
        threads * per as i64
    );
    assert_eq!(
        int(&scalar(&mut s, "SELECT SUM(bal) FROM acct")),
        1000 * accounts as i64
    );
    eprintln!("deadlocks retried: {}", deadlocks.load(Ordering::Relaxed));
}

#[test]
fn deadlock_is_reported_not_hung() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    exec(&mut s, "INSERT INTO d.t VALUES (1, 0), (2, 0)");
    let mut a = root(&db);
    let mut b = root(&db);
    exec(&mut a, "BEGIN");
    exec(&mut b, "BEGIN");
    exec(&mut a, "UPDATE d.t SET v = 1 WHERE id = 1");
    exec(&mut b, "UPDATE d.t SET v = 2 WHERE id = 2");
    let h = std::thread::spawn(move || {
        let r = a.query("UPDATE d.t SET v = 1 WHERE id = 2");
        (a, r)
    });
    std::thread::sleep(Duration::from_millis(200));
    let rb = b.query("UPDATE d.t SET v = 2 WHERE id = 1");
    let (mut a, ra) = h.join().unwrap();
    let codes: Vec<u16> = [&ra, &rb]
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.code))
        .collect();
    assert_eq!(
        codes,
        vec![1213],
        "exactly one deadlock victim: {ra:?} {rb:?}"
    );
    // The victim's transaction is gone; the other one commits.
    let _ = a.query("COMMIT");
    let _ = b.query("COMMIT");
    let total = int(&scalar(&mut s, "SELECT COUNT(*) FROM d.t WHERE v <> 0"));
    assert_eq!(total, 2);
}

/// Sessions racing to insert the same ascending keys (the shape that skips the duplicate
/// lookup, see the engine's primary key bound): every key is inserted exactly once, every
/// other attempt gets 1062, also when the first writer is still open or rolls back.
#[test]
fn racing_inserts_of_the_same_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "CREATE TABLE d.t (id INT PRIMARY KEY, who INT)");
    const KEYS: i64 = 400;
    let wins = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            let wins = wins.clone();
            std::thread::spawn(move || {
                let mut c = root(&db);
                for id in 1..=KEYS {
                    match c.query(&format!("INSERT INTO d.t VALUES ({id}, {w})")) {
                        Ok(_) => {
                            wins.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => assert_eq!(e.code, 1062, "{e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(wins.load(Ordering::Relaxed), KEYS as u64);
    assert_eq!(int(&scalar(&mut s, "SELECT COUNT(*) FROM d.t")), KEYS);

    // A writer holding a new key: the second one waits, then sees the committed row.
    let mut a = root(&db);
    exec(&mut a, "BEGIN");
    exec(&mut a, "INSERT INTO d.t VALUES (1000, 0)");
    let db2 = db.clone();
    let h = std::thread::spawn(move || root(&db2).query("INSERT INTO d.t VALUES (1000, 1)"));
    std::thread::sleep(Duration::from_millis(200));
    exec(&mut a, "COMMIT");
    assert_eq!(h.join().unwrap().unwrap_err().code, 1062);
    // ... or, if the first writer rolls back, inserts it.
    exec(&mut a, "BEGIN");
    exec(&mut a, "INSERT INTO d.t VALUES (2000, 0)");
    let db2 = db.clone();
    let h = std::thread::spawn(move || root(&db2).query("INSERT INTO d.t VALUES (2000, 1)"));
    std::thread::sleep(Duration::from_millis(200));
    exec(&mut a, "ROLLBACK");
    h.join().unwrap().unwrap();
    assert_eq!(
        int(&scalar(&mut s, "SELECT who FROM d.t WHERE id = 2000")),
        1
    );
    let e = s.query("INSERT INTO d.t VALUES (2000, 2)").unwrap_err();
    assert_eq!(e.code, 1062);
}

/// CREATE INDEX over more entries than one build batch (4 MiB, written in key order): the
/// index holds exactly the table's values, in order, and a unique build still finds a
/// duplicate in the last batch.
#[test]
fn index_build_over_several_batches() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE d");
    exec(
        &mut s,
        "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(120) NOT NULL)",
    );
    const ROWS: u64 = 50_000;
    let value = |i: u64| {
        format!(
            "{:016x}{}",
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            "p".repeat(100)
        )
    };
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(1000) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|&i| format!("({i}, '{}')", value(i)))
            .collect();
        exec(
            &mut s,
            &format!("INSERT INTO d.t VALUES {}", vals.join(",")),
        );
    }
    exec(&mut s, "CREATE INDEX kv ON d.t (v)");
    let QueryResult::Rows { rows, .. } = exec(
        &mut s,
        "SELECT v FROM d.t FORCE INDEX (kv) WHERE v >= '' ORDER BY v",
    ) else {
        panic!("rows expected");
    };
    let mut want: Vec<String> = (0..ROWS).map(value).collect();
    want.sort();
    let got: Vec<String> = rows.iter().map(|r| r[0].to_string()).collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "index entries differ from the table's values");
    // A duplicate value in the last rows: the unique build fails and leaves no index.
    exec(
        &mut s,
        &format!("UPDATE d.t SET v = '{}' WHERE id = {}", value(3), ROWS - 1),
    );
    let e = s.query("CREATE UNIQUE INDEX uv ON d.t (v)").unwrap_err();
    assert_eq!(e.code, 1062, "{e}");
    assert!(s
        .query("SELECT v FROM d.t FORCE INDEX (uv) WHERE v >= ''")
        .is_err());
}

#[test]
fn privileges_are_enforced() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE app");
    exec(&mut s, "CREATE DATABASE secret");
    exec(&mut s, "CREATE TABLE app.t (id INT PRIMARY KEY)");
    exec(&mut s, "CREATE TABLE secret.t (id INT PRIMARY KEY)");
    exec(&mut s, "CREATE USER 'u1'@'%' IDENTIFIED BY 'pw'");
    exec(&mut s, "GRANT SELECT, INSERT ON app.* TO 'u1'@'%'");
    exec(&mut s, "GRANT REPLICATION SLAVE ON *.* TO 'u1'@'%'");
    let grants = match exec(&mut s, "SHOW GRANTS FOR 'u1'@'%'") {
        QueryResult::Rows { rows, .. } => rows,
        _ => unreachable!(),
    };
    let g: Vec<String> = grants.iter().map(|r| r[0].to_string()).collect();
    assert!(
        g[0].starts_with("GRANT REPLICATION SLAVE ON *.* TO `u1`@`%` IDENTIFIED BY PASSWORD '*"),
        "{g:?}"
    );
    assert_eq!(g[1], "GRANT SELECT, INSERT ON `app`.* TO `u1`@`%`");
    // Authentication: right and wrong passwords.
    let hash = db.password_hash("u1", "10.0.0.1").unwrap();
    assert_eq!(hash.len(), 41);
    assert!(db
        .authenticate("u1", "10.0.0.1", b"01234567890123456789", b"", None)
        .is_err());
    assert_eq!(
        db.authenticate("nobody", "localhost", b"x", b"", None)
            .unwrap_err()
            .code,
        1045
    );

    let mut u = Session::new(
        db.clone(),
        "u1".into(),
        "10.0.0.1".into(),
        db.next_connection_id(),
    );
    exec(&mut u, "USE app");
    exec(&mut u, "INSERT INTO t VALUES (1)");
    exec(&mut u, "SELECT * FROM t");
    assert_eq!(u.query("DELETE FROM t").unwrap_err().code, 1142);
    assert_eq!(u.query("SELECT * FROM secret.t").unwrap_err().code, 1142);
    assert_eq!(u.query("USE secret").unwrap_err().code, 1044);
    assert_eq!(
        u.query("CREATE TABLE app.x (a INT)").unwrap_err().code,
        1142
    );
    assert_eq!(
        u.query("SET GLOBAL sync_binlog = 0").unwrap_err().code,
        1227
    );
    exec(&mut s, "REVOKE INSERT ON app.* FROM 'u1'@'%'");
    assert_eq!(
        u.query("INSERT INTO app.t VALUES (2)").unwrap_err().code,
        1142
    );
    exec(&mut s, "DROP USER 'u1'@'%'");
    assert_eq!(s.query("DROP USER 'u1'@'%'").unwrap_err().code, 1396);
}

#[test]
fn prepared_statements() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    exec(&mut s, "CREATE DATABASE p");
    exec(&mut s, "USE p");
    exec(
        &mut s,
        "CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')",
    );
    let ins = s
        .prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
        .unwrap();
    assert_eq!(ins.params, 4);
    for i in 1..=10 {
        s.execute_prepared(
            ins.id,
            &[
                Value::Int(i),
                Value::Int(i * 10),
                Value::str("c"),
                Value::str("p"),
            ],
        )
        .unwrap();
    }
    // Each execute inserts its own values (the binding is kept between executes).
    assert_eq!(
        scalar(&mut s, "SELECT GROUP_CONCAT(k ORDER BY id) FROM sbtest1"),
        Value::str("10,20,30,40,50,60,70,80,90,100")
    );
    // A wrong number of arguments fails and leaves the statement usable.
    assert_eq!(
        s.execute_prepared(ins.id, &[Value::Int(1)])
            .unwrap_err()
            .code,
        1210
    );
    let sel = s.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
    assert_eq!(sel.params, 1);
    assert_eq!(sel.columns.len(), 1);
    assert_eq!(sel.columns[0].name, "c");
    match s.execute_prepared(sel.id, &[Value::Int(3)]).unwrap() {
        QueryResult::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::str("c")]]),
        other => panic!("{other:?}"),
    }
    let sum = s
        .prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    match s
        .execute_prepared(sum.id, &[Value::Int(1), Value::Int(4)])
        .unwrap()
    {
        QueryResult::Rows { rows, .. } => assert_eq!(int(&rows[0][0]), 100),
        other => panic!("{other:?}"),
    }
    let upd = s.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?").unwrap();
    match s.execute_prepared(upd.id, &[Value::Int(2)]).unwrap() {
        QueryResult::Ok { affected_rows, .. } => assert_eq!(affected_rows, 1),
        other => panic!("{other:?}"),
    }
    s.close_prepared(upd.id);
    assert_eq!(
        s.execute_prepared(upd.id, &[Value::Int(2)])
            .unwrap_err()
            .code,
        1243
    );
    // The table changes between executes: the statement binds to the new definition.
    exec(
        &mut s,
        "ALTER TABLE sbtest1 MODIFY c CHAR(2) NOT NULL DEFAULT ''",
    );
    let row = |i: i64, c: &str| [Value::Int(i), Value::Int(0), Value::str(c), Value::str("p")];
    assert_eq!(
        s.execute_prepared(ins.id, &row(11, "abc"))
            .unwrap_err()
            .code,
        1406
    );
    s.execute_prepared(ins.id, &row(11, "ab")).unwrap();
    exec(&mut s, "ALTER TABLE sbtest1 DROP COLUMN k");
    assert_eq!(
        s.execute_prepared(ins.id, &row(12, "ab")).unwrap_err().code,
        1054
    );
    exec(
        &mut s,
        "ALTER TABLE sbtest1 ADD COLUMN k INT NOT NULL DEFAULT 0 FIRST",
    );
    s.execute_prepared(ins.id, &row(12, "cd")).unwrap();
    assert_eq!(
        scalar(
            &mut s,
            "SELECT GROUP_CONCAT(id, c) FROM sbtest1 WHERE id > 10"
        ),
        Value::str("11ab,12cd")
    );
    assert_eq!(s.prepare("SELEC 1").unwrap_err().code, 1064);
}

#[test]
fn data_and_ddl_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let mut s = root(&db);
        exec(&mut s, "CREATE DATABASE r");
        exec(
            &mut s,
            "CREATE TABLE r.t (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(10), KEY kv (v))",
        );
        exec(&mut s, "INSERT INTO r.t (v) VALUES ('a'), ('b')");
        exec(&mut s, "ALTER TABLE r.t ADD COLUMN w INT DEFAULT 3");
        exec(&mut s, "CREATE USER 'keep'@'localhost'");
        drop(s);
        db.shutdown().unwrap();
    }
    let db = open(dir.path());
    let mut s = root(&db);
    assert_eq!(
        int(&scalar(&mut s, "SELECT COUNT(*) FROM r.t WHERE w = 3")),
        2
    );
    assert_eq!(int(&scalar(&mut s, "SELECT id FROM r.t WHERE v = 'b'")), 2);
    exec(&mut s, "INSERT INTO r.t (v) VALUES ('c')");
    assert_eq!(int(&scalar(&mut s, "SELECT MAX(id) FROM r.t")), 3);
    assert!(db.password_hash("keep", "localhost").is_some());
}

#[test]
fn kill_and_processlist() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    let other = root(&db);
    let id = other.connection_id();
    let rows = match exec(&mut s, "SHOW PROCESSLIST") {
        QueryResult::Rows { rows, .. } => rows,
        _ => unreachable!(),
    };
    assert!(rows.len() >= 2);
    exec(&mut s, &format!("KILL QUERY {id}"));
    assert!(!other.is_killed());
    exec(&mut s, &format!("KILL {id}"));
    assert!(other.is_killed());
    assert_eq!(s.query("KILL 999999").unwrap_err().code, 1094);
    drop(other);
    assert_eq!(db.threads_connected(), 1);
}

#[test]
fn multi_statements_stop_at_first_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = root(&db);
    let r = s.execute("CREATE DATABASE m; USE m; CREATE TABLE t (a INT); INSERT INTO t VALUES (1); SELECT nope FROM t; INSERT INTO t VALUES (2)");
    assert_eq!(r.len(), 5);
    assert_eq!(r[4].as_ref().unwrap_err().code, 1054);
    assert_eq!(int(&scalar(&mut s, "SELECT COUNT(*) FROM m.t")), 1);
    assert_eq!(s.execute("")[0].as_ref().unwrap_err().code, 1065);
    // status flags
    assert_eq!(s.status_flags() & 0x2, 0x2);
    exec(&mut s, "BEGIN");
    assert_eq!(s.status_flags() & 0x1, 0x1);
    exec(&mut s, "COMMIT");
    assert_eq!(s.status_flags() & 0x1, 0);
}

fn all_rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match exec(s, sql) {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("{sql}: {other:?}"),
    }
}

/// ALTER TABLE conversions (strict and not), savepoint rollbacks and text-protocol
/// prepared statements all leave a binlog from which an empty data directory rebuilds the
/// same tables: recovery re-runs the ALTER statements and replays the surviving rows.
#[test]
fn alter_savepoints_and_prepare_replay_from_the_binlog() {
    let dir = tempfile::tempdir().unwrap();
    let queries = [
        "SELECT * FROM r.t ORDER BY id",
        "SELECT id FROM r.t WHERE c = 'abc'",
        "SELECT * FROM r.h ORDER BY a, b",
        "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'r' ORDER BY TABLE_NAME, ORDINAL_POSITION",
    ];
    let before: Vec<_> = {
        let db = open(dir.path());
        let mut s = root(&db);
        exec(&mut s, "CREATE DATABASE r");
        exec(&mut s, "USE r");
        exec(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10), n INT, KEY kc (c))",
        );
        exec(
            &mut s,
            "INSERT INTO t VALUES (1, 'ab', 1), (2, 'abcdef', NULL), (3, '12', 3)",
        );
        // Strict: fails, changes nothing, is not logged.
        assert_eq!(
            s.query("ALTER TABLE t MODIFY c VARCHAR(3)")
                .unwrap_err()
                .code,
            1265
        );
        exec(&mut s, "SET sql_mode = ''");
        exec(
            &mut s,
            "ALTER TABLE t MODIFY c VARCHAR(3), MODIFY n INT NOT NULL",
        );
        assert_eq!(s.warning_count(), 2);
        exec(&mut s, "SET sql_mode = DEFAULT");
        exec(
            &mut s,
            "ALTER TABLE t CHANGE n m BIGINT NOT NULL DEFAULT 4 FIRST",
        );
        exec(&mut s, "CREATE TABLE h (a VARCHAR(10), b INT, KEY kb (b))");
        exec(&mut s, "PREPARE ins FROM 'INSERT INTO h VALUES (?, ?)'");
        exec(&mut s, "BEGIN");
        exec(&mut s, "EXECUTE ins USING '1.5', 1");
        exec(&mut s, "SAVEPOINT sp");
        exec(&mut s, "EXECUTE ins USING 'gone', 2");
        exec(&mut s, "UPDATE t SET c = 'zzz' WHERE id = 1");
        exec(&mut s, "ROLLBACK TO SAVEPOINT sp");
        exec(&mut s, "EXECUTE ins USING '7x', 3");
        exec(&mut s, "INSERT INTO t (id, c) VALUES (4, 'new')");
        exec(&mut s, "COMMIT");
        exec(&mut s, "SET sql_mode = ''");
        exec(
            &mut s,
            "ALTER TABLE h MODIFY a INT NOT NULL, MODIFY b VARCHAR(5)",
        );
        let out = queries.iter().map(|q| all_rows(&mut s, q)).collect();
        drop(s);
        db.shutdown().unwrap();
        out
    };
    assert_eq!(before[1], vec![vec![Value::Int(2)]]);
    let replay = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let f = f.unwrap();
        if f.file_name().to_string_lossy().starts_with("binlog") {
            std::fs::copy(f.path(), replay.path().join(f.file_name())).unwrap();
        }
    }
    for d in [dir.path(), replay.path()] {
        let db = open(d);
        let mut s = root(&db);
        let after: Vec<_> = queries.iter().map(|q| all_rows(&mut s, q)).collect();
        assert_eq!(after, before, "{}", d.display());
        drop(s);
        db.shutdown().unwrap();
    }
}
