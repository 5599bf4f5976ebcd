//! Parallel apply on a onelogd replica (`slave_parallel_threads`, `slave_parallel_mode`):
//! conflicting transactions from many writers end identical on the replica in every mode,
//! committed in the primary's order (the replica's binlog lists the primary's GTIDs in the
//! primary's order) and sharing syncs; SIGKILL during a parallel catch-up loses and
//! repeats nothing; an apply error stops the SQL thread with nothing after the failed
//! group committed; the settings are refused while the replica runs.

mod common;
use common::mariadb::MariaDb;
use common::replica::slave_status;
use common::*;
use mysql::prelude::Queryable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn onelog_primary() -> Server {
    let primary = Server::start(&["--server-id=1"]);
    let mut c = primary.conn(None);
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    primary
}

fn change_master(c: &mut mysql::Conn, port: u16) {
    c.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1, \
         master_heartbeat_period=0.5"
    ))
    .unwrap();
}

fn one(c: &mut mysql::Conn, sql: &str) -> String {
    let v: Option<mysql::Value> = c.query_first(sql).unwrap();
    match v {
        Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
        Some(mysql::Value::NULL) | None => String::new(),
        Some(v) => v.as_sql(true).trim_matches('\'').to_string(),
    }
}

/// Waits until the replica has applied `want` (its gtid_slave_pos), failing on a stopped
/// SQL thread.
fn wait_for(r: &mut mysql::Conn, want: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        if one(r, "SELECT @@gtid_slave_pos") == want {
            return;
        }
        let err = slave_status(r, "Last_SQL_Error");
        assert!(err.is_empty(), "replica stopped: {err}");
        assert!(
            Instant::now() < deadline,
            "replica at '{}', want '{want}'",
            one(r, "SELECT @@gtid_slave_pos")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The GTIDs of `server_id` in the order the server's binlog holds them.
fn gtid_order(c: &mut mysql::Conn, server_id: u32) -> Vec<String> {
    let files: Vec<mysql::Row> = c.query("SHOW BINARY LOGS").unwrap();
    let mut out = Vec::new();
    let tag = format!("-{server_id}-");
    for f in files {
        let name: String = f.get(0).unwrap();
        let events: Vec<mysql::Row> = c.query(format!("SHOW BINLOG EVENTS IN '{name}'")).unwrap();
        for e in events {
            let kind: String = e.get("Event_type").unwrap();
            let info: String = e.get("Info").unwrap();
            if kind != "Gtid" {
                continue;
            }
            let gtid = info
                .split_whitespace()
                .skip_while(|w| *w != "GTID")
                .nth(1)
                .unwrap_or_default()
                .to_string();
            if gtid.contains(&tag) {
                out.push(gtid);
            }
        }
    }
    out
}

const ACCOUNTS: i64 = 20;

fn schema(c: &mut mysql::Conn) {
    for sql in [
        "CREATE DATABASE bank",
        "CREATE TABLE bank.acct (id INT PRIMARY KEY, bal BIGINT NOT NULL, touched INT NOT NULL DEFAULT 0)",
        "CREATE TABLE bank.ledger (id BIGINT PRIMARY KEY, acct INT NOT NULL, amt INT NOT NULL, \
         tag VARCHAR(20) NOT NULL, UNIQUE KEY (tag), KEY (acct))",
        "CREATE TABLE bank.nokey (w INT, n INT)",
    ] {
        c.query_drop(sql).unwrap();
    }
    let rows: Vec<String> = (0..ACCOUNTS).map(|i| format!("({i}, 1000, 0)")).collect();
    c.query_drop(format!("INSERT INTO bank.acct VALUES {}", rows.join(",")))
        .unwrap();
}

/// One writer's transactions: transfers between a few hot accounts, ledger rows inserted
/// and later deleted by the same writer (a replica that ran the delete first finds no
/// row), a unique tag freed by one transaction and taken by the next, and a table without
/// a primary key.
fn writer(opts: mysql::Opts, w: i64, stop: Arc<AtomicBool>, max: i64) -> i64 {
    let mut c = mysql::Conn::new(opts).unwrap();
    let mut rng = (w as u64 + 1) * 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut i = 0;
    while i < max && !stop.load(Ordering::Relaxed) {
        let id = w * 1_000_000 + i;
        let (a, b) = (
            (next() % ACCOUNTS as u64) as i64,
            (next() % ACCOUNTS as u64) as i64,
        );
        let amt = (next() % 50) as i64 + 1;
        let mut stmts = vec![
            "BEGIN".to_string(),
            format!("UPDATE bank.acct SET bal = bal - {amt}, touched = touched + 1 WHERE id = {a}"),
            format!("UPDATE bank.acct SET bal = bal + {amt}, touched = touched + 1 WHERE id = {b}"),
            format!(
                "INSERT INTO bank.ledger VALUES ({id}, {a}, {amt}, 'w{w}-{}')",
                i % 3
            ),
        ];
        if i >= 3 {
            // The tag this row takes was freed by deleting the row of three transactions ago.
            stmts.insert(1, format!("DELETE FROM bank.ledger WHERE id = {}", id - 3));
        }
        if i % 5 == 0 && i < 200 {
            // Each update of the table without a key is a scan on the replica: kept small.
            stmts.push(format!("INSERT INTO bank.nokey VALUES ({w}, {i})"));
        }
        if i % 7 == 3 {
            stmts.push(format!("UPDATE bank.nokey SET n = n + 1 WHERE w = {w}"));
        }
        stmts.push("COMMIT".into());
        // Transfers in both directions deadlock now and then: retried, as applications do.
        'retry: loop {
            for s in &stmts {
                match c.query_drop(s) {
                    Ok(()) => {}
                    Err(mysql::Error::MySqlError(e)) if e.code == 1213 || e.code == 1205 => {
                        c.query_drop("ROLLBACK").unwrap();
                        continue 'retry;
                    }
                    Err(e) => panic!("{s}: {e}"),
                }
            }
            break;
        }
        i += 1;
    }
    i
}

fn write_backlog(primary: &Server, writers: i64, per_writer: i64) {
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (opts, stop) = (primary.opts(None), stop.clone());
            std::thread::spawn(move || writer(opts, w, stop, per_writer))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

fn parallel_replica(threads: u32, mode: &str) -> Server {
    let replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    rc.query_drop(format!("SET GLOBAL slave_parallel_threads = {threads}"))
        .unwrap();
    rc.query_drop(format!("SET GLOBAL slave_parallel_mode = '{mode}'"))
        .unwrap();
    replica
}

/// A backlog of conflicting transactions from 8 writers, applied by 8 workers in each
/// mode: identical tables, the primary's GTID order, and groups sharing syncs.
#[test]
fn every_mode_ends_identical_in_the_primary_order() {
    let primary = onelog_primary();
    let mut pc = primary.conn(None);
    schema(&mut pc);
    write_backlog(&primary, 8, 60);
    let want = one(&mut pc, "SELECT @@gtid_binlog_pos");
    let primary_order = gtid_order(&mut pc, 1);
    let primary_tables = dump_tables(&mut pc);
    let mut retried = 0;
    for mode in [
        "optimistic",
        "conservative",
        "minimal",
        "aggressive",
        "none",
    ] {
        let replica = parallel_replica(8, mode);
        let mut rc = replica.conn(None);
        assert_eq!(one(&mut rc, "SELECT @@slave_parallel_mode"), mode);
        change_master(&mut rc, primary.port);
        rc.query_drop("START SLAVE").unwrap();
        wait_for(&mut rc, &want, Duration::from_secs(120));
        assert_eq!(slave_status(&mut rc, "Parallel_Mode"), mode);
        assert_eq!(dump_tables(&mut rc), primary_tables, "mode {mode}");
        assert_eq!(gtid_order(&mut rc, 1), primary_order, "mode {mode}");
        retried += replica.status_var("Slave_retried_transactions");
        rc.query_drop("STOP SLAVE").unwrap();
        replica.assert_no_panic();
    }
    // Hot accounts and reused tags conflict: optimistic and aggressive apply hit them.
    assert!(retried > 0, "no conflict was retried");
}

/// Writers that do not conflict: 8 workers share syncs (several commits per group),
/// where one applier thread commits one transaction per sync.
#[test]
fn workers_share_syncs() {
    let primary = onelog_primary();
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE app").unwrap();
    pc.query_drop("CREATE TABLE app.t (w INT, i INT, pad VARCHAR(50), PRIMARY KEY (w, i))")
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let opts = primary.opts(None);
            std::thread::spawn(move || {
                let mut c = mysql::Conn::new(opts).unwrap();
                for i in 0..150 {
                    c.query_drop(format!("INSERT INTO app.t VALUES ({w}, {i}, 'x')"))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let want = one(&mut pc, "SELECT @@gtid_binlog_pos");
    let mut per_group = Vec::new();
    for threads in [0, 8] {
        let replica = parallel_replica(threads, "optimistic");
        let mut rc = replica.conn(None);
        change_master(&mut rc, primary.port);
        rc.query_drop("START SLAVE").unwrap();
        wait_for(&mut rc, &want, Duration::from_secs(120));
        assert_eq!(dump_tables(&mut rc), dump_tables(&mut pc));
        let commits = replica.status_var("Binlog_commits");
        let groups = replica.status_var("Binlog_group_commits");
        per_group.push(commits as f64 / groups as f64);
    }
    // MASTER_GTID_WAIT: at once for an applied position, -1 after its timeout for a future
    // one, 1941 for a malformed one.
    let replica = Server::start(&["--server-id=3"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    assert_eq!(
        one(&mut rc, &format!("SELECT MASTER_GTID_WAIT('{want}', 60)")),
        "0"
    );
    let seq: u64 = want.rsplit('-').next().unwrap().parse().unwrap();
    let t = Instant::now();
    assert_eq!(
        one(
            &mut rc,
            &format!("SELECT MASTER_GTID_WAIT('0-1-{}', 0.3)", seq + 5)
        ),
        "-1"
    );
    assert!(t.elapsed() >= Duration::from_millis(300));
    let e = rc
        .query_drop("SELECT MASTER_GTID_WAIT('x-y', 1)")
        .unwrap_err();
    assert!(e.to_string().contains("1941"), "{e}");
    assert!(per_group[0] < 1.1, "one applier thread: {per_group:?}");
    assert!(per_group[1] > 2.0, "eight workers: {per_group:?}");
}

/// Four writers (ids from `first_writer`) on the primary while the replica is SIGKILLed
/// and restarted ten times; then the replica catches up and must end identical, every
/// transfer applied once, in the primary's GTID order.
fn kill_ten_times_under_writers(
    replica: &mut Server,
    opts: &mysql::Opts,
    first_writer: i64,
    primary: &mut mysql::Conn,
) {
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (opts, stop) = (opts.clone(), stop.clone());
            std::thread::spawn(move || writer(opts, first_writer + w, stop, i64::MAX))
        })
        .collect();
    for round in 0..10 {
        std::thread::sleep(Duration::from_millis(200 + 40 * round));
        replica.kill9();
        replica.restart();
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let mut rc = replica.conn(None);
    let want = one(primary, "SELECT @@gtid_binlog_pos");
    wait_for(&mut rc, &want, Duration::from_secs(120));
    assert_eq!(
        one(&mut rc, "SELECT SUM(bal) FROM bank.acct"),
        (ACCOUNTS * 1000).to_string()
    );
    assert_eq!(dump_tables(&mut rc), dump_tables(primary));
    assert_eq!(gtid_order(&mut rc, 1), gtid_order(primary, 1));
    replica.assert_no_panic();
}

/// SIGKILL ten times while 8 workers catch up with a live primary: the replica ends
/// identical, every transfer applied once (the account balances add up).
#[test]
fn parallel_replica_killed_ten_times_ends_identical() {
    let primary = onelog_primary();
    let mut pc = primary.conn(None);
    schema(&mut pc);
    write_backlog(&primary, 4, 40);
    let mut replica = Server::start(&[
        "--server-id=2",
        "--slave-parallel-threads=8",
        "--slave-parallel-mode=optimistic",
    ]);
    let mut rc = replica.conn(None);
    assert_eq!(one(&mut rc, "SELECT @@slave_parallel_threads"), "8");
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    drop(rc);
    kill_ten_times_under_writers(&mut replica, &primary.opts(None), 10, &mut pc);
}

/// A group the replica cannot apply stops the SQL thread with MariaDB's message; nothing
/// after it is committed even though workers had applied later groups; after the cause is
/// fixed, START SLAVE resumes and ends identical.
#[test]
fn an_apply_error_commits_nothing_after_it() {
    let primary = onelog_primary();
    let mut pc = primary.conn(None);
    pc.query_drop("CREATE DATABASE app").unwrap();
    pc.query_drop("CREATE TABLE app.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    let replica = parallel_replica(4, "aggressive");
    let mut rc = replica.conn(None);
    change_master(&mut rc, primary.port);
    rc.query_drop("START SLAVE").unwrap();
    wait_for(
        &mut rc,
        &one(&mut pc, "SELECT @@gtid_binlog_pos"),
        Duration::from_secs(30),
    );
    // A row only the replica has: the primary's insert of the same key fails there.
    rc.query_drop("SET sql_log_bin = 0").unwrap();
    rc.query_drop("INSERT INTO app.t VALUES (50, -1)").unwrap();
    rc.query_drop("SET sql_log_bin = 1").unwrap();
    rc.query_drop("STOP SLAVE").unwrap();
    for i in 0..100 {
        pc.query_drop(format!("INSERT INTO app.t VALUES ({i}, {i})"))
            .unwrap();
    }
    let failing = {
        let gtids = gtid_order(&mut pc, 1);
        // The 51st insert (id 50) is the one the replica cannot apply.
        gtids[gtids.len() - 50].clone()
    };
    rc.query_drop("START SLAVE").unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while slave_status(&mut rc, "Slave_SQL_Running") == "Yes" {
        assert!(Instant::now() < deadline, "the replica did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(slave_status(&mut rc, "Last_SQL_Errno"), "1062");
    let err = slave_status(&mut rc, "Last_SQL_Error");
    assert!(err.contains("Duplicate entry '50'"), "{err}");
    // Exactly the groups before the failed one are there.
    assert_eq!(
        one(&mut rc, "SELECT COUNT(*) FROM app.t WHERE v >= 0"),
        "50"
    );
    let (d, s, n) = {
        let p: Vec<u64> = failing.split('-').map(|x| x.parse().unwrap()).collect();
        (p[0], p[1], p[2])
    };
    assert_eq!(
        one(&mut rc, "SELECT @@gtid_slave_pos"),
        format!("{d}-{s}-{}", n - 1)
    );
    // Settings are taken at START SLAVE: refused while it runs.
    rc.query_drop("DELETE FROM app.t WHERE id = 50").unwrap();
    rc.query_drop("START SLAVE").unwrap();
    let e = rc
        .query_drop("SET GLOBAL slave_parallel_threads = 2")
        .unwrap_err();
    assert!(e.to_string().contains("1198"), "{e}");
    wait_for(
        &mut rc,
        &one(&mut pc, "SELECT @@gtid_binlog_pos"),
        Duration::from_secs(30),
    );
    assert_eq!(dump_tables(&mut rc), dump_tables(&mut pc));
    replica.assert_no_panic();
}

/// A MariaDB 10.11 primary on a TCP port (binlog on, row format, `extra` options) with a
/// `repl` account and the bank schema; its port and client options.
fn mariadb_primary(test: &str, extra: &[&str]) -> Option<(MariaDb, u16, mysql::Opts)> {
    let port = free_port();
    let mut args = vec![
        format!("--port={port}"),
        "--server-id=1".into(),
        "--log-bin=mb".into(),
        "--binlog-format=ROW".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let m = MariaDb::start_with(test, &args)?;
    let mut mc = m.conn(None);
    mc.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    mc.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    schema(&mut mc);
    let opts = mysql::Opts::from(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root")),
    );
    Some((m, port, opts))
}

/// A MariaDB 10.11 primary whose writers group-commit (commit ids in its GTID events):
/// conservative and optimistic onelog replicas end identical, in its order.
#[test]
fn parallel_replica_of_a_mariadb_primary() {
    let Some((m, port, opts)) = mariadb_primary(
        "parallel_replica_of_a_mariadb_primary",
        &[
            "--binlog-commit-wait-count=4",
            "--binlog-commit-wait-usec=2000",
        ],
    ) else {
        return;
    };
    let mut mc = m.conn(None);
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..8)
        .map(|w| {
            let (opts, stop) = (opts.clone(), stop.clone());
            std::thread::spawn(move || writer(opts, w, stop, 40))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let want = one(&mut mc, "SELECT @@gtid_binlog_pos");
    for mode in ["conservative", "optimistic"] {
        let replica = parallel_replica(4, mode);
        let mut rc = replica.conn(None);
        change_master(&mut rc, port);
        rc.query_drop("START SLAVE").unwrap();
        wait_for(&mut rc, &want, Duration::from_secs(120));
        assert_eq!(dump_tables(&mut rc), dump_tables(&mut mc), "mode {mode}");
        assert_eq!(
            gtid_order(&mut rc, 1),
            gtid_order(&mut mc, 1),
            "mode {mode}"
        );
        replica.assert_no_panic();
    }
}

/// A MariaDB 10.11 primary under 4 writers; the onelogd replica (4 workers) is SIGKILLed
/// ten times while it applies: it ends identical, every transfer applied once.
#[test]
fn mariadb_primary_replica_killed_ten_times() {
    let Some((m, port, opts)) = mariadb_primary("mariadb_primary_replica_killed_ten_times", &[])
    else {
        return;
    };
    let mut mc = m.conn(None);
    let mut replica = Server::start(&["--server-id=2", "--slave-parallel-threads=4"]);
    let mut rc = replica.conn(None);
    change_master(&mut rc, port);
    rc.query_drop("START SLAVE").unwrap();
    drop(rc);
    kill_ten_times_under_writers(&mut replica, &opts, 20, &mut mc);
}
