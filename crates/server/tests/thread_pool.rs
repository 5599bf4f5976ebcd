//! `--thread-handling=pool-of-threads`: statements take turns, and a statement that waits
//! (row lock, group commit) gives its turn away, so a pool of one cannot deadlock.

mod common;
use common::*;
use mysql::prelude::Queryable;
use std::time::{Duration, Instant};

/// A pool of one whose stall limit (60 s) is far longer than any wait in these tests: a
/// statement that kept its turn while waiting would make the others wait a minute.
fn pool_of_one() -> Server {
    Server::start(&[
        "--thread-handling=pool-of-threads",
        "--thread-pool-size=1",
        "--thread-pool-stall-limit=60000",
    ])
}

#[test]
fn variables_show_the_pool_and_set_global_resizes_it() {
    let s = pool_of_one();
    assert_eq!(
        s.sql(
            "SELECT @@thread_handling, @@thread_pool_size, @@thread_pool_stall_limit, \
             @@thread_pool_oversubscribe"
        ),
        "pool-of-threads\t1\t60000\t3\n"
    );
    let mut c = s.conn(None);
    c.query_drop("SET GLOBAL thread_pool_size = 0").unwrap();
    assert_eq!(c.warnings(), 1);
    let w: Vec<(String, u16, String)> = c.query("SHOW WARNINGS").unwrap();
    assert_eq!(w[0].1, 1292, "{w:?}");
    assert_eq!(s.sql("SELECT @@global.thread_pool_size"), "1\n");
    c.query_drop("SET GLOBAL thread_pool_size = 4").unwrap();
    assert_eq!(s.sql("SELECT @@thread_pool_size"), "4\n");
    let e = c.query_drop("SET thread_pool_size = 2").unwrap_err();
    assert!(e.to_string().contains("1229"), "{e}");
    let e = c
        .query_drop("SET GLOBAL thread_handling = 'pool-of-threads'")
        .unwrap_err();
    assert!(e.to_string().contains("1238"), "{e}");

    let plain = Server::start(&[]);
    assert_eq!(
        plain.sql("SELECT @@thread_handling"),
        "one-thread-per-connection\n"
    );
}

#[test]
fn a_lock_wait_gives_its_turn_to_the_lock_holder() {
    let s = pool_of_one();
    let mut a = s.conn(None);
    a.query_drop("CREATE DATABASE p").unwrap();
    a.query_drop("CREATE TABLE p.t (id INT PRIMARY KEY, v INT)")
        .unwrap();
    a.query_drop("INSERT INTO p.t VALUES (1, 0)").unwrap();
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE p.t SET v = 1 WHERE id = 1").unwrap();

    let opts = s.opts(None);
    let waiter = std::thread::spawn(move || {
        let mut b = mysql::Conn::new(opts).unwrap();
        let t = Instant::now();
        b.query_drop("UPDATE p.t SET v = v + 10 WHERE id = 1")
            .unwrap();
        t.elapsed()
    });
    // Wait for the second UPDATE to reach its lock wait. Each poll is a query, which
    // runs only while fewer than thread_pool_size (1) statements run: if the waiting
    // UPDATE kept its turn, every poll after it started would wait the 60 s stall limit.
    let mut q = s.conn(None);
    let t = Instant::now();
    loop {
        let poll = Instant::now();
        let n: Option<i64> = q
            .query_first(
                "SELECT COUNT(*) FROM information_schema.processlist \
                 WHERE info LIKE 'UPDATE p.t SET v = v + 10%'",
            )
            .unwrap();
        assert!(
            poll.elapsed() < Duration::from_secs(20),
            "a query waited {:?} for a turn held by a lock waiter",
            poll.elapsed()
        );
        if n == Some(1) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the UPDATE never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let poll = Instant::now();
    let one: Option<i64> = q.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));
    assert!(
        poll.elapsed() < Duration::from_secs(20),
        "{:?}",
        poll.elapsed()
    );
    let t = Instant::now();
    a.query_drop("COMMIT").unwrap();
    let commit = t.elapsed();
    let waited = waiter.join().unwrap();
    assert!(
        commit < Duration::from_secs(20),
        "COMMIT waited {commit:?} for a turn held by a lock waiter"
    );
    assert!(waited < Duration::from_secs(30), "{waited:?}");
    let v: Option<i64> = a.query_first("SELECT v FROM p.t WHERE id = 1").unwrap();
    assert_eq!(v, Some(11));
}

#[test]
fn concurrent_commits_share_a_pool_of_one() {
    let s = pool_of_one();
    let mut c = s.conn(None);
    c.query_drop("CREATE DATABASE p").unwrap();
    c.query_drop("CREATE TABLE p.t (id INT PRIMARY KEY, k INT, KEY (k))")
        .unwrap();
    let t = Instant::now();
    let threads: Vec<_> = (0..8)
        .map(|n| {
            let opts = s.opts(Some("p"));
            std::thread::spawn(move || {
                let mut c = mysql::Conn::new(opts).unwrap();
                for i in 0..100 {
                    let id = n * 1000 + i;
                    c.exec_drop("INSERT INTO t VALUES (?, ?)", (id, id % 7))
                        .unwrap();
                    if i % 10 == 0 {
                        let _: Vec<i64> = c.query("SELECT id FROM t WHERE k = 3 LIMIT 5").unwrap();
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(t.elapsed() < Duration::from_secs(50), "{:?}", t.elapsed());
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM p.t").unwrap();
    assert_eq!(n, Some(800));
    s.assert_no_panic();
}

#[test]
fn mysqlslap_mixed_load_through_a_pool_of_one_survives_a_crash() {
    if !have(
        "mysqlslap",
        "mysqlslap_mixed_load_through_a_pool_of_one_survives_a_crash",
    ) {
        return;
    }
    let mut s = pool_of_one();
    s.sql("CREATE DATABASE slap");
    s.sql("CREATE TABLE slap.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, KEY (k))");
    let t = Instant::now();
    let (ok, out, err) = run(
        "mysqlslap",
        &[
            "--no-defaults".into(),
            format!("--socket={}", s.socket.display()),
            "-uroot".into(),
            "--create-schema=slap".into(),
            "--delimiter=;".into(),
            "--query=INSERT INTO t(k) VALUES (7);SELECT COUNT(*) FROM t WHERE k = 7;\
                     BEGIN;UPDATE t SET k = 8 WHERE k = 7 LIMIT 1;COMMIT"
                .into(),
            "--concurrency=16".into(),
            "--number-of-queries=1600".into(),
            "--iterations=1".into(),
            "--no-drop".into(),
        ],
        Duration::from_secs(120),
    );
    assert!(ok, "mysqlslap failed:\n{out}\n{err}\n{}", s.log_text());
    assert!(t.elapsed() < Duration::from_secs(50), "{:?}", t.elapsed());
    let before = s.sql("SELECT COUNT(*), SUM(k = 7), SUM(k = 8) FROM slap.t");
    let n: u64 = before.split('\t').next().unwrap().parse().unwrap();
    assert!(n >= 300, "{before}");
    s.kill9();
    s.restart();
    assert_eq!(
        s.sql("SELECT COUNT(*), SUM(k = 7), SUM(k = 8) FROM slap.t"),
        before
    );
    s.stop();
}
