//! The embedded engine API: DDL, writes, reads, scans, locks, recovery, all three modes.

mod common;

use std::ops::Bound;
use std::sync::Arc;

use common::*;
use onelog_engine::*;
use onelog_types::Value;

fn basic_workload(e: &Arc<Engine>) {
    setup(e);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    for i in 1..=100 {
        t.statement_begin();
        t.insert(&def, row(i, &format!("owner{}", i % 10), i * 10))
            .unwrap();
        t.statement_end(Some("INSERT ..."));
    }
    t.commit().unwrap();

    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    // Duplicate primary key.
    let err = t.insert(&def, row(5, "x", 0)).unwrap_err();
    assert!(matches!(err, EngineError::DuplicateKey { .. }), "{err}");
    assert_eq!(err.to_sql_error().code, 1062);
    // Update and delete.
    let old = t
        .get(&def, &[Value::Int(7)], LockMode::Exclusive)
        .unwrap()
        .unwrap();
    t.update(&def, &old, row(7, "owner7", 12345)).unwrap();
    let old = t
        .get(&def, &[Value::Int(8)], LockMode::Exclusive)
        .unwrap()
        .unwrap();
    t.delete(&def, &old).unwrap();
    t.commit().unwrap();
}

#[test]
fn write_read_scan_in_every_mode() {
    let mut contents = Vec::new();
    for mode in [LogMode::Engine, LogMode::File, LogMode::Off] {
        let dir = tempfile::tempdir().unwrap();
        let e = open(dir.path(), mode);
        basic_workload(&e);
        let rows = all_rows(&e);
        assert_eq!(rows.len(), 99, "{mode:?}");
        // Secondary index range scan: owner3 rows, in pk order within the owner.
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "accounts").unwrap();
        let got: Vec<_> = t
            .scan(
                &def,
                1,
                KeyRange::prefix(vec![Value::str("owner3")]),
                ScanOptions::default(),
            )
            .unwrap()
            .map(|r| r.unwrap()[0].clone())
            .collect();
        assert_eq!(got.len(), 10);
        assert_eq!(got[0], Value::Int(3));
        // Reverse primary range scan with bounds.
        let got: Vec<_> = t
            .scan(
                &def,
                0,
                KeyRange {
                    lower: Bound::Excluded(vec![Value::Int(90)]),
                    upper: Bound::Included(vec![Value::Int(95)]),
                },
                ScanOptions {
                    reverse: true,
                    ..Default::default()
                },
            )
            .unwrap()
            .map(|r| r.unwrap()[0].clone())
            .collect();
        assert_eq!(got, (91..=95).rev().map(Value::Int).collect::<Vec<_>>());
        t.commit().unwrap();
        assert_eq!(
            t_get(&e, 7)[2],
            Value::Int(12345),
            "update visible in {mode:?}"
        );
        e.shutdown().unwrap();
        drop(e);
        // Clean restart keeps everything.
        let e = open(dir.path(), mode);
        assert_eq!(all_rows(&e).len(), 99, "{mode:?} after restart");
        assert_eq!(e.lock_count(), 0);
        contents.push(all_rows(&e));
    }
    // The same workload gives the same tables in all three modes.
    assert_eq!(contents[0], contents[1]);
    assert_eq!(contents[0], contents[2]);
}

fn t_get(e: &Arc<Engine>, id: i64) -> Vec<Value> {
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let r = t
        .get(&def, &[Value::Int(id)], LockMode::None)
        .unwrap()
        .unwrap();
    t.commit().unwrap();
    r
}

#[test]
fn snapshot_isolation_and_own_writes() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut w = e.begin(Isolation::RepeatableRead);
    let def = w.open_table("test", "accounts").unwrap();
    w.insert(&def, row(1, "a", 1)).unwrap();
    // Own write visible to self through scan and get.
    assert_eq!(
        w.scan(&def, 0, KeyRange::all(), ScanOptions::default())
            .unwrap()
            .count(),
        1
    );
    let mut r = e.begin(Isolation::RepeatableRead);
    let rdef = r.open_table("test", "accounts").unwrap();
    assert!(r
        .get(&rdef, &[Value::Int(1)], LockMode::None)
        .unwrap()
        .is_none());
    w.commit().unwrap();
    // Repeatable read: r's snapshot was taken at its first read.
    assert!(r
        .get(&rdef, &[Value::Int(1)], LockMode::None)
        .unwrap()
        .is_none());
    // A locking read sees the latest committed version.
    assert!(r
        .get(&rdef, &[Value::Int(1)], LockMode::Shared)
        .unwrap()
        .is_some());
    r.commit().unwrap();
}

#[test]
fn lock_conflicts_timeout_and_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    t.insert(&def, row(1, "a", 1)).unwrap();
    t.insert(&def, row(2, "b", 2)).unwrap();
    t.commit().unwrap();

    let mut a = e.begin(Isolation::RepeatableRead);
    let mut b = e.begin(Isolation::RepeatableRead);
    let da = a.open_table("test", "accounts").unwrap();
    let db = b.open_table("test", "accounts").unwrap();
    a.get(&da, &[Value::Int(1)], LockMode::Exclusive).unwrap();
    let err = b
        .get(&db, &[Value::Int(1)], LockMode::Exclusive)
        .unwrap_err();
    assert!(matches!(err, EngineError::LockWaitTimeout));
    assert_eq!(err.to_sql_error().code, 1205);
    b.get(&db, &[Value::Int(2)], LockMode::Exclusive).unwrap();
    // a waits for 2 (held by b) in another thread; b then asks for 1: deadlock.
    let e2 = e.clone();
    let h = std::thread::spawn(move || {
        let r = a
            .get(&da, &[Value::Int(2)], LockMode::Exclusive)
            .map(|_| ());
        (a, r)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let err = b
        .get(&db, &[Value::Int(1)], LockMode::Exclusive)
        .unwrap_err();
    assert!(matches!(err, EngineError::Deadlock), "{err}");
    assert_eq!(err.to_sql_error().code, 1213);
    b.rollback();
    let (a, r) = h.join().unwrap();
    r.unwrap();
    a.commit().unwrap();
    assert_eq!(e2.lock_count(), 0);
}

#[test]
fn concurrent_transfers_keep_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    for i in 0..10 {
        t.insert(&def, row(i, "x", 1000)).unwrap();
    }
    t.commit().unwrap();
    let threads: Vec<_> = (0..8)
        .map(|n| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut done = 0;
                let mut i = 0u64;
                while done < 50 {
                    i += 1;
                    let from = ((n * 7 + i * 3) % 10) as i64;
                    let to = ((n * 3 + i * 5 + 1) % 10) as i64;
                    if from == to {
                        continue;
                    }
                    let mut t = e.begin(Isolation::RepeatableRead);
                    let def = t.open_table("test", "accounts").unwrap();
                    let r = (|| -> Result<()> {
                        let a = t
                            .get(&def, &[Value::Int(from)], LockMode::Exclusive)?
                            .unwrap();
                        let b = t
                            .get(&def, &[Value::Int(to)], LockMode::Exclusive)?
                            .unwrap();
                        let (Value::Int(x), Value::Int(y)) = (&a[2], &b[2]) else {
                            panic!()
                        };
                        t.update(&def, &a, row(from, "x", x - 1))?;
                        t.update(&def, &b, row(to, "x", y + 1))?;
                        Ok(())
                    })();
                    match r {
                        Ok(()) => {
                            t.commit().unwrap();
                            done += 1;
                        }
                        Err(EngineError::Deadlock) | Err(EngineError::LockWaitTimeout) => {
                            t.rollback()
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let total: i64 = all_rows(&e)
        .iter()
        .map(|r| match r[2] {
            Value::Int(v) => v,
            _ => 0,
        })
        .sum();
    assert_eq!(total, 10_000);
    let st = e.status();
    assert_eq!(st.binlog_commits, 1 + 400 + 2);
    assert!(st.log_syncs <= st.binlog_group_commits);
}

/// Every statement that starts after a commit was answered sees it, through each kind of
/// read: snapshot and locking point reads, locking primary range scans and locking
/// secondary scans (a commit is applied to RocksDB before it is answered; this guards any
/// change to that order).
#[test]
fn answered_commits_are_visible_to_later_statements() {
    use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    const WRITERS: i64 = 4;
    const ROWS: i64 = 250;
    let published: Arc<Vec<AtomicI64>> =
        Arc::new((0..WRITERS).map(|_| AtomicI64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (e, published) = (e.clone(), published.clone());
            std::thread::spawn(move || {
                for k in 1..=ROWS {
                    let mut t = e.begin(Isolation::RepeatableRead);
                    let def = t.open_table("test", "accounts").unwrap();
                    t.statement_begin();
                    t.insert(&def, row(w * 1_000_000 + k, &format!("w{w}"), k))
                        .unwrap();
                    t.statement_end(Some("INSERT"));
                    t.commit().unwrap();
                    published[w as usize].store(k, Ordering::Release);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (e, published, done) = (e.clone(), published.clone(), done.clone());
            std::thread::spawn(move || {
                let mut checks = 0u64;
                let mut i = r as i64;
                while !done.load(Ordering::Acquire) || checks < 50 {
                    i += 1;
                    let w = i % WRITERS;
                    let p = published[w as usize].load(Ordering::Acquire);
                    if p == 0 {
                        continue;
                    }
                    let id = w * 1_000_000 + p;
                    let mut t = e.begin(Isolation::RepeatableRead);
                    let def = t.open_table("test", "accounts").unwrap();
                    t.statement_begin();
                    let range = KeyRange {
                        lower: Bound::Included(vec![Value::Int(w * 1_000_000 + 1)]),
                        upper: Bound::Included(vec![Value::Int(id)]),
                    };
                    let locking = ScanOptions {
                        lock: LockMode::Shared,
                        ..Default::default()
                    };
                    match i % 4 {
                        0 => assert!(t
                            .get(&def, &[Value::Int(id)], LockMode::None)
                            .unwrap()
                            .is_some()),
                        1 => assert!(t
                            .get(&def, &[Value::Int(id)], LockMode::Exclusive)
                            .unwrap()
                            .is_some()),
                        2 => assert_eq!(t.scan(&def, 0, range, locking).unwrap().count() as i64, p),
                        _ => {
                            let n = t
                                .scan(
                                    &def,
                                    1,
                                    KeyRange::prefix(vec![Value::str(&format!("w{w}"))]),
                                    locking,
                                )
                                .unwrap()
                                .count() as i64;
                            assert!(n >= p, "writer {w}: {n} rows seen, {p} answered");
                        }
                    }
                    t.statement_end(None);
                    t.commit().unwrap();
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() >= 50);
    }
    assert_eq!(all_rows(&e).len() as i64, WRITERS * ROWS);
    assert_eq!(e.lock_count(), 0);
}

#[test]
fn ddl_add_index_and_binlog_admin() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    basic_workload(&e);
    run_ddl(&e, "CREATE INDEX bal ON accounts (balance)");
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let (pos, _) = def.index_by_name("bal").unwrap();
    let got: Vec<_> = t
        .scan(
            &def,
            pos,
            KeyRange {
                lower: Bound::Included(vec![Value::Int(900)]),
                upper: Bound::Unbounded,
            },
            ScanOptions {
                covering: true,
                ..Default::default()
            },
        )
        .unwrap()
        .map(|r| r.unwrap()[2].clone())
        .collect();
    // 90..=100 except 8's deleted row (80 < 900) plus 7's updated 12345.
    assert_eq!(got.len(), 12);
    assert_eq!(got.last(), Some(&Value::Int(12345)));
    t.commit().unwrap();
    assert!(!e.gtid_binlog_pos().is_empty());
    let files = e.binlog_files();
    assert_eq!(files.len(), 1);
    e.flush_binary_logs().unwrap();
    assert_eq!(e.binlog_files().len(), 2);
    let events = e.binlog_events(None, 0, 0, None).unwrap();
    assert!(events
        .iter()
        .any(|r| r.event_type == "Query" && r.info.contains("CREATE TABLE")));
    assert!(events.iter().any(|r| r.event_type == "Write_rows_v1"));
    e.purge_binary_logs_to(&e.binlog_files()[1].0).unwrap();
    assert_eq!(e.binlog_files().len(), 1);
}

/// Copies the binlog files of `from` into an empty directory and opens it there: the tables
/// are rebuilt from the binlog alone.
fn replay_binlog(from: &std::path::Path, to: &std::path::Path) -> Arc<Engine> {
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap();
        if f.file_name().to_string_lossy().starts_with("binlog") {
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    open(to, LogMode::Engine)
}

/// Whether `needle` occurs in any binlog file of `dir`.
fn binlog_contains(dir: &std::path::Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir).unwrap().any(|f| {
        let f = f.unwrap();
        f.file_name().to_string_lossy().starts_with("binlog")
            && std::fs::read(f.path())
                .unwrap()
                .windows(needle.len())
                .any(|w| w == needle)
    })
}

/// One statement of a transaction.
fn stmt(t: &mut Txn, f: impl FnOnce(&mut Txn, &TableDef)) {
    t.statement_begin();
    let def = t.open_table("test", "accounts").unwrap();
    f(t, &def);
    t.statement_end(Some("statement"));
}

#[test]
fn savepoints_binlog_holds_only_surviving_changes() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    for i in 1..=3 {
        stmt(&mut t, |t, d| t.insert(d, row(i, "kept", i)).unwrap());
    }
    t.commit().unwrap();

    let mut t = e.begin(Isolation::RepeatableRead);
    stmt(&mut t, |t, d| t.insert(d, row(10, "kept", 10)).unwrap());
    t.savepoint("a");
    stmt(&mut t, |t, d| {
        t.insert(d, row(11, "gone11", 11)).unwrap();
        let old = t
            .get(d, &[Value::Int(1)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.update(d, &old, row(1, "gone1", 100)).unwrap();
        let old = t
            .get(d, &[Value::Int(2)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.delete(d, &old).unwrap();
    });
    t.savepoint("b");
    stmt(&mut t, |t, d| t.insert(d, row(12, "gone12", 12)).unwrap());
    // A failed statement after the savepoints rolls back only itself.
    t.statement_begin();
    let d = t.open_table("test", "accounts").unwrap();
    t.insert(&d, row(14, "gone14", 14)).unwrap();
    t.statement_rollback();
    t.statement_end(None);
    assert!(t.rollback_to_savepoint("A"), "names are case-insensitive");
    assert!(
        !t.rollback_to_savepoint("b"),
        "later savepoints are removed"
    );
    assert!(!t.release_savepoint("nosuch"));
    // The undone insert of 11 left no trace: inserting it again is no duplicate.
    stmt(&mut t, |t, d| {
        t.insert(d, row(11, "kept", 111)).unwrap();
        let old = t
            .get(d, &[Value::Int(3)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.update(d, &old, row(3, "kept", 33)).unwrap();
    });
    // Rolling back to the same savepoint again, then redoing.
    t.savepoint("c");
    stmt(&mut t, |t, d| t.insert(d, row(13, "gone13", 13)).unwrap());
    assert!(t.rollback_to_savepoint("c"));
    assert!(t.rollback_to_savepoint("c"), "the savepoint itself stays");
    // A savepoint of an existing name moves it.
    t.savepoint("a");
    stmt(&mut t, |t, d| t.insert(d, row(15, "kept", 15)).unwrap());
    assert!(t.release_savepoint("a"));
    // `c` was set before `a` moved, so releasing `a` kept it.
    assert!(t.release_savepoint("c"));
    t.commit().unwrap();

    let rows = all_rows(&e);
    let ids: Vec<i64> = rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            _ => panic!(),
        })
        .collect();
    assert_eq!(ids, vec![1, 2, 3, 10, 11, 15]);
    assert_eq!(rows[0], row(1, "kept", 1));
    assert_eq!(rows[2], row(3, "kept", 33));
    assert_eq!(rows[4], row(11, "kept", 111));
    // The secondary index agrees with the rows.
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let by_owner = t
        .scan(&def, 1, KeyRange::all(), ScanOptions::default())
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap();
    assert_eq!(by_owner.len(), rows.len());
    t.commit().unwrap();
    e.shutdown().unwrap();

    // The binlog has no image of an undone change, and replaying it gives the same table.
    for gone in ["gone1", "gone11", "gone12", "gone13", "gone14"] {
        assert!(
            !binlog_contains(dir.path(), gone.as_bytes()),
            "{gone} is in the binlog"
        );
    }
    assert!(binlog_contains(dir.path(), b"kept"));
    let replay = tempfile::tempdir().unwrap();
    let r = replay_binlog(dir.path(), replay.path());
    assert_eq!(all_rows(&r), rows, "binlog replay equals the table");
    r.shutdown().unwrap();
}

#[test]
fn savepoint_rollback_keeps_row_locks() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    stmt(&mut t, |t, d| t.insert(d, row(1, "x", 1)).unwrap());
    t.commit().unwrap();

    let mut a = e.begin(Isolation::RepeatableRead);
    a.savepoint("s");
    stmt(&mut a, |t, d| {
        let old = t
            .get(d, &[Value::Int(1)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.update(d, &old, row(1, "y", 2)).unwrap();
    });
    assert!(a.rollback_to_savepoint("s"));
    let mut b = e.begin(Isolation::RepeatableRead);
    b.set_lock_wait_timeout(std::time::Duration::from_millis(200));
    let def = b.open_table("test", "accounts").unwrap();
    let err = b
        .get(&def, &[Value::Int(1)], LockMode::Exclusive)
        .unwrap_err();
    assert!(matches!(err, EngineError::LockWaitTimeout), "{err}");
    b.rollback();
    a.commit().unwrap();
    assert_eq!(all_rows(&e), vec![row(1, "x", 1)]);
}

#[test]
fn column_type_change_rewrites_rows_and_only_the_affected_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    basic_workload(&e);
    let before = e.catalog().table("test", "accounts").unwrap().clone();
    let rows = all_rows(&e);
    run_ddl(&e, "ALTER TABLE accounts MODIFY balance VARCHAR(20)");
    let after = e.catalog().table("test", "accounts").unwrap().clone();
    assert_ne!(after.indexes[0].id, before.indexes[0].id, "rows rewritten");
    assert_eq!(
        after.indexes[1].id, before.indexes[1].id,
        "the owner index does not contain balance: kept"
    );
    let converted: Vec<Vec<Value>> = rows
        .iter()
        .map(|r| vec![r[0].clone(), r[1].clone(), Value::str(&r[2].to_string())])
        .collect();
    assert_eq!(all_rows(&e), converted);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let by_owner: Vec<Vec<Value>> = t
        .scan(
            &def,
            1,
            KeyRange::prefix(vec![Value::str("owner3")]),
            ScanOptions::default(),
        )
        .unwrap()
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(by_owner.len(), 10);
    assert!(by_owner.iter().all(|r| matches!(r[2], Value::Bytes(_))));
    t.commit().unwrap();
    // An index on the converted column is built from the converted values.
    run_ddl(&e, "CREATE INDEX bal ON accounts (balance)");
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let (pos, _) = def.index_by_name("bal").unwrap();
    let n = t
        .scan(
            &def,
            pos,
            KeyRange::prefix(vec![Value::str("12345")]),
            ScanOptions::default(),
        )
        .unwrap()
        .count();
    assert_eq!(n, 1);
    t.commit().unwrap();
    e.shutdown().unwrap();
    let replay = tempfile::tempdir().unwrap();
    let r = replay_binlog(dir.path(), replay.path());
    assert_eq!(all_rows(&r), converted);
    r.shutdown().unwrap();
}

/// The rows of `names` whose nick equals `nick` (general_ci), read through the unique
/// index as a covering scan (which must read the row: the key holds weights).
fn by_nick(t: &mut Txn, def: &Arc<TableDef>, nick: &str) -> Vec<Vec<Value>> {
    let opts = ScanOptions {
        covering: true,
        ..Default::default()
    };
    t.scan(def, 1, KeyRange::prefix(vec![Value::str(nick)]), opts)
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap()
}

#[test]
fn general_ci_keys() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(&dir.path().join("data"), LogMode::Engine);
    run_ddl(&e, "CREATE DATABASE test");
    run_ddl(&e, "CREATE TABLE names");
    let names = |code: &str, nick: &str| vec![Value::str(code), Value::str(nick)];
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "names").unwrap();
    t.insert(&def, names("alice", "Al")).unwrap();
    t.insert(&def, names("Bob", "bobby")).unwrap();
    t.insert(&def, names("Élodie", "elo ")).unwrap();
    // Case variants, accents and trailing spaces are the same key; the message shows the
    // value being inserted.
    let err = t.insert(&def, names("ALICE", "x")).unwrap_err();
    assert_eq!(
        err.to_sql_error().message,
        "Duplicate entry 'ALICE' for key 'PRIMARY'"
    );
    let err = t.insert(&def, names("elodie  ", "y")).unwrap_err();
    assert!(matches!(err, EngineError::DuplicateKey { .. }), "{err}");
    let err = t.insert(&def, names("carl", "AL")).unwrap_err();
    assert_eq!(
        err.to_sql_error().message,
        "Duplicate entry 'AL' for key 'nick'"
    );
    // Point lookups and covering scans find the stored spelling.
    let got = t.get(&def, &[Value::str("BOB")], LockMode::None).unwrap();
    assert_eq!(got, Some(names("Bob", "bobby")));
    assert_eq!(by_nick(&mut t, &def, "ELO"), vec![names("Élodie", "elo ")]);
    t.commit().unwrap();

    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "names").unwrap();
    // Own uncommitted writes through a covering scan.
    t.insert(&def, names("dave", "Dee")).unwrap();
    assert_eq!(by_nick(&mut t, &def, "dee"), vec![names("dave", "Dee")]);
    // Changing only the case keeps the keys and stores the new spelling.
    let old = t
        .get(&def, &[Value::str("bob")], LockMode::Exclusive)
        .unwrap()
        .unwrap();
    t.update(&def, &old, names("BOB", "BOBBY")).unwrap();
    assert_eq!(by_nick(&mut t, &def, "bobby"), vec![names("BOB", "BOBBY")]);
    let locked = t
        .scan(
            &def,
            1,
            KeyRange::prefix(vec![Value::str("AL")]),
            ScanOptions {
                lock: LockMode::Exclusive,
                ..Default::default()
            },
        )
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap();
    assert_eq!(locked, vec![names("alice", "Al")]);
    t.commit().unwrap();

    // Recovery from the binlog alone builds the same keys.
    let all = |e: &Arc<Engine>| {
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "names").unwrap();
        let rows: Vec<Vec<Value>> = t
            .scan(&def, 0, KeyRange::all(), ScanOptions::default())
            .unwrap()
            .collect::<Result<Vec<_>>>()
            .unwrap();
        let nicks: Vec<Vec<Vec<Value>>> = ["al", "BOBBY", "Elo", "DEE"]
            .iter()
            .map(|n| by_nick(&mut t, &def, n))
            .collect();
        t.commit().unwrap();
        (rows, nicks)
    };
    let before = all(&e);
    assert_eq!(before.0.len(), 4);
    e.shutdown().unwrap();
    let replay = dir.path().join("replay");
    std::fs::create_dir_all(&replay).unwrap();
    for f in std::fs::read_dir(dir.path().join("data")).unwrap() {
        let f = f.unwrap();
        if f.file_name().to_string_lossy().starts_with("binlog") {
            std::fs::copy(f.path(), replay.join(f.file_name())).unwrap();
        }
    }
    let r = open(&replay, LogMode::Engine);
    assert_eq!(all(&r), before);
    r.shutdown().unwrap();
}

/// Large transactions encode their completed statements at statement end; rolling back
/// below what was encoded (a savepoint) and failed statements must still leave exactly
/// the surviving changes in the binlog.
#[test]
fn encoded_ahead_statements_follow_rollbacks() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let many = |t: &mut Txn, from: i64, n: i64, owner: &str| {
        stmt(t, |t, d| {
            for i in from..from + n {
                t.insert(d, row(i, owner, i)).unwrap();
            }
        })
    };
    let mut t = e.begin(Isolation::RepeatableRead);
    many(&mut t, 1, 1500, "kept"); // encoded ahead
    t.savepoint("s");
    many(&mut t, 10_000, 1200, "gone"); // encoded ahead, then rolled back
                                        // A failed statement rolls back only itself.
    t.statement_begin();
    let d = t.open_table("test", "accounts").unwrap();
    t.insert(&d, row(50_000, "gone", 0)).unwrap();
    t.statement_rollback();
    t.statement_end(None);
    assert!(t.rollback_to_savepoint("s"));
    many(&mut t, 20_000, 1100, "kept"); // encoded ahead again, from scratch
    many(&mut t, 30_000, 5, "kept"); // left for COMMIT
    t.commit().unwrap();

    let mut t = e.begin(Isolation::RepeatableRead);
    many(&mut t, 40_000, 1000, "kept"); // encoded ahead, the rest at COMMIT
    stmt(&mut t, |t, d| {
        let old = t
            .get(d, &[Value::Int(1)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.update(d, &old, row(1, "kept", -1)).unwrap();
    });
    t.commit().unwrap();

    let before = all_rows(&e);
    assert_eq!(before.len(), 1500 + 1100 + 5 + 1000);
    assert!(before.iter().all(|r| r[1] == Value::str("kept")));
    e.shutdown().unwrap();
    let replay = tempfile::tempdir().unwrap();
    let r = replay_binlog(dir.path(), replay.path());
    let replayed = all_rows(&r);
    assert!(
        replayed == before,
        "the binlog holds exactly the surviving changes ({} rows replayed, {} expected)",
        replayed.len(),
        before.len()
    );
    r.shutdown().unwrap();
}

/// `use_direct_reads` (onelogd `--rocksdb-use-direct-reads`): table files are opened with
/// O_DIRECT, and rows read back from them after a restart are right.
#[test]
fn direct_reads_open_table_files_with_o_direct() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |direct| EngineOptions {
        datadir: dir.path().to_path_buf(),
        mode: LogMode::Engine,
        block_cache_size: 1 << 20,
        use_direct_reads: direct,
        ..Default::default()
    };
    let e = Engine::open(opts(true), &TestReplayer).unwrap();
    basic_workload(&e);
    let before = all_rows(&e);
    // A clean shutdown flushes the memtables: the rows are in table files from here on.
    e.shutdown().unwrap();
    drop(e);
    for direct in [true, false] {
        let e = Engine::open(opts(direct), &TestReplayer).unwrap();
        assert_eq!(all_rows(&e), before, "direct reads {direct}");
        let sst_flags = sst_open_flags(dir.path());
        assert!(!sst_flags.is_empty(), "no table file open after a scan");
        const O_DIRECT: u32 = 0o40000;
        for f in sst_flags {
            assert_eq!(
                f & O_DIRECT != 0,
                direct,
                "flags {f:o}, direct reads {direct}"
            );
        }
        e.shutdown().unwrap();
    }
}

/// The open flags of every `.sst` file under `dir` this process has open (from
/// /proc/self/fdinfo; other tests run in parallel in this process).
fn sst_open_flags(dir: &std::path::Path) -> Vec<u32> {
    let mut out = Vec::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        if target.starts_with(dir) && target.extension().is_some_and(|x| x == "sst") {
            let info = std::fs::read_to_string(format!(
                "/proc/self/fdinfo/{}",
                fd.file_name().to_string_lossy()
            ))
            .unwrap_or_default();
            if let Some(f) = info.lines().find_map(|l| l.strip_prefix("flags:")) {
                out.push(u32::from_str_radix(f.trim(), 8).unwrap());
            }
        }
    }
    out
}

/// Index data that no table names (a build cut short by a crash after another DDL committed
/// a higher id counter) is deleted when the engine opens; named indexes are untouched.
#[test]
fn unnamed_index_data_is_cleared_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    for id in 0..50 {
        t.insert(&def, row(id, "x", id)).unwrap();
    }
    t.commit().unwrap();
    let rows = all_rows(&e);
    e.shutdown().unwrap();
    drop(e);

    // Entries under two ids no table has: between the table's and past the counter.
    let unnamed = |id: u32| {
        let mut k = vec![b'I'];
        k.extend_from_slice(&id.to_be_bytes());
        k.extend_from_slice(b"entry");
        k
    };
    let path = dir.path().join("rocksdb");
    {
        let db = rocksdb::DB::open_default(&path).unwrap();
        for id in [777, 1_000_000] {
            db.put(unnamed(id), b"").unwrap();
        }
        db.flush().unwrap();
    }
    let e = open(dir.path(), LogMode::Engine);
    assert_eq!(all_rows(&e), rows);
    e.shutdown().unwrap();
    drop(e);
    let db = rocksdb::DB::open_default(&path).unwrap();
    for id in [777, 1_000_000] {
        assert_eq!(db.get(unnamed(id)).unwrap(), None, "index id {id}");
    }
}

/// `--rocksdb-default-cf-options`: applied over onelog's own RocksDB options, refused with a
/// clear error when RocksDB cannot parse them, and never allowed to hand the memtable size
/// back to RocksDB in engine mode (a switch of its own could persist changes the binlog
/// has not made durable).
#[test]
fn rocksdb_options_apply_but_keep_the_memtable_switch() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |extra: &str| EngineOptions {
        datadir: dir.path().to_path_buf(),
        mode: LogMode::Engine,
        rocksdb_options: Some(extra.to_string()),
        ..Default::default()
    };
    let err = Engine::open(opts("no_such_option=1"), &TestReplayer)
        .err()
        .expect("unknown RocksDB option refused")
        .to_string();
    assert!(
        err.contains("invalid RocksDB options 'no_such_option=1'"),
        "{err}"
    );

    let e = Engine::open(
        opts(
            "level0_file_num_compaction_trigger=3;write_buffer_size=4096;\
             db_write_buffer_size=4096;avoid_flush_during_shutdown=false",
        ),
        &TestReplayer,
    )
    .expect("open with RocksDB options");
    basic_workload(&e);
    assert_eq!(all_rows(&e).len(), 99);
    drop(e);
    // RocksDB records the options it runs with in its OPTIONS file.
    let newest = std::fs::read_dir(dir.path().join("rocksdb"))
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("OPTIONS-")
        })
        .max()
        .expect("OPTIONS file");
    let text = std::fs::read_to_string(newest).unwrap();
    assert!(
        text.contains("level0_file_num_compaction_trigger=3"),
        "{text}"
    );
    assert!(
        text.contains(&format!("  write_buffer_size={}", 64u64 << 30)),
        "{text}"
    );
    assert!(text.contains("db_write_buffer_size=0"), "{text}");
    assert!(text.contains("avoid_flush_during_shutdown=true"), "{text}");
}

/// The number of index partitions over all live table files (RocksDB leaves the count
/// out when it is 0: whole-file indexes only).
fn index_partitions(e: &Engine) -> u64 {
    let props = e
        .rocksdb_property("rocksdb.aggregated-table-properties")
        .expect("table properties");
    assert!(props.contains("# data blocks="), "{props}");
    props
        .split(';')
        .find_map(|p| p.trim().strip_prefix("# index partitions="))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// Inserts `n` rows from `first` with distinct 30-byte owners in one commit (left in the
/// memtable).
fn insert_rows(e: &Arc<Engine>, first: i64, n: i64) {
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    for i in first..first + n {
        t.statement_begin();
        let owner = format!("{:030}", i.wrapping_mul(2654435761) % 1_000_000_007);
        t.insert(&def, row(i, &owner, i)).unwrap();
        t.statement_end(Some("INSERT ..."));
    }
    t.commit().unwrap();
}

/// [`insert_rows`], then flushes them to a table file.
fn insert_and_flush(e: &Arc<Engine>, first: i64, n: i64) {
    insert_rows(e, first, n);
    e.checkpoint().unwrap();
}

/// Table files are written with whole-file index and filter blocks while the data fits in
/// the block cache, and with partitioned ones (flushes and index builds alike) once it
/// outgrows it; a user's table options fix the layout.
#[test]
fn index_layout_follows_the_data_size() {
    let dir = tempfile::tempdir().unwrap();
    let opts = |extra: Option<&str>| EngineOptions {
        datadir: dir.path().to_path_buf(),
        mode: LogMode::Engine,
        block_cache_size: 512 << 10,
        rocksdb_options: extra.map(str::to_string),
        ..Default::default()
    };
    let e = Engine::open(opts(None), &TestReplayer).unwrap();
    setup(&e);
    insert_and_flush(&e, 0, 1000);
    assert!(!e.adjust_table_layout(), "a few KiB stay whole-file");
    assert_eq!(index_partitions(&e), 0);
    // Well past 512 KiB of table files.
    insert_and_flush(&e, 1000, 40_000);
    e.adjust_table_layout();
    insert_and_flush(&e, 41_000, 1000);
    let after_flush = index_partitions(&e);
    assert!(after_flush > 0, "the new file has index partitions");
    run_ddl(&e, "CREATE INDEX bal ON accounts (balance)");
    assert!(
        index_partitions(&e) > after_flush,
        "the index build's files have index partitions"
    );
    assert_eq!(all_rows(&e).len(), 42_000);
    drop(e);

    // The user's table options stand, however large the data.
    let dir2 = tempfile::tempdir().unwrap();
    let e = Engine::open(
        EngineOptions {
            datadir: dir2.path().to_path_buf(),
            ..opts(Some("block_based_table_factory={block_size=8192}"))
        },
        &TestReplayer,
    )
    .unwrap();
    setup(&e);
    insert_and_flush(&e, 0, 40_000);
    assert!(!e.adjust_table_layout());
    insert_and_flush(&e, 40_000, 1000);
    assert_eq!(index_partitions(&e), 0);
}

/// Format version 1 keeps the applied binlog position under `Mapplied` and has no version
/// record: the engine upgrades it at open (the position moves to `Aapplied`, version 2 is
/// recorded) and recovers from it, replaying exactly the commits the table files lack. A
/// data directory of a newer format is refused.
#[test]
fn older_formats_upgrade_and_newer_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    basic_workload(&e);
    e.checkpoint().unwrap();
    // Committed to the binlog only: the memtable holding them is not flushed at drop.
    insert_rows(&e, 1000, 10);
    drop(e);

    let raw_path = dir.path().join("rocksdb");
    {
        let db = rocksdb::DB::open_default(&raw_path).unwrap();
        assert_eq!(db.get(b"Cv").unwrap(), Some(2u32.to_le_bytes().to_vec()));
        let pos = db.get(b"Aapplied").unwrap().expect("applied position");
        db.put(b"Mapplied", &pos).unwrap();
        db.delete(b"Aapplied").unwrap();
        db.delete(b"Cv").unwrap();
        db.flush().unwrap();
    }

    let e = open(dir.path(), LogMode::Engine);
    let rows = all_rows(&e);
    assert_eq!(rows.len(), 99 + 10);
    assert_eq!(rows.last().unwrap()[0], Value::Int(1009));
    e.shutdown().unwrap();
    drop(e);
    {
        let db = rocksdb::DB::open_default(&raw_path).unwrap();
        assert!(db.get(b"Aapplied").unwrap().is_some());
        assert!(db.get(b"Mapplied").unwrap().is_none());
        assert_eq!(db.get(b"Cv").unwrap(), Some(2u32.to_le_bytes().to_vec()));
        db.put(b"Cv", 3u32.to_le_bytes()).unwrap();
        db.flush().unwrap();
    }
    let opts = EngineOptions {
        datadir: dir.path().to_path_buf(),
        ..Default::default()
    };
    let err = Engine::open(opts, &TestReplayer)
        .err()
        .expect("a newer format is refused")
        .to_string();
    assert!(err.contains("format version 3"), "{err}");
}

/// A transaction committed as a logged statement (account statements) is logged as
/// `ROW_REDO GTID QUERY`, its rows only inside the row redo; recovery (after a close
/// without flush, and from the binlog alone) replays the row redo exactly, never the QUERY.
#[test]
fn logged_statements_replay_their_row_redo() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    stmt(&mut t, |t, d| {
        for i in 1..=3 {
            t.insert(d, row(i, "plain", i)).unwrap();
        }
    });
    t.commit().unwrap();
    let logged = |sql: &str, invoker: bool, error_code: u16| LoggedStatement {
        db: "test".into(),
        sql: sql.into(),
        thread_id: 7,
        error_code,
        invoker: invoker.then(|| ("root".into(), "localhost".into())),
    };
    // Changes of several statements, one of them rolled back.
    let mut t = e.begin(Isolation::RepeatableRead);
    stmt(&mut t, |t, d| t.insert(d, row(10, "redo", 10)).unwrap());
    stmt(&mut t, |t, d| {
        let old = t
            .get(d, &[Value::Int(1)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.update(d, &old, row(1, "redo", 100)).unwrap();
        let old = t
            .get(d, &[Value::Int(2)], LockMode::Exclusive)
            .unwrap()
            .unwrap();
        t.delete(d, &old).unwrap();
    });
    t.statement_begin();
    let d = t.open_table("test", "accounts").unwrap();
    t.insert(&d, row(11, "gone", 11)).unwrap();
    t.statement_rollback();
    t.statement_end(None);
    t.commit_logged(&logged("GRANT SELECT ON test.* TO u", true, 0))
        .unwrap();
    // No row changes: still logged (replicas run the statement).
    let t = e.begin(Isolation::RepeatableRead);
    t.commit_logged(&logged("DROP USER IF EXISTS nobody", false, 0))
        .unwrap();
    // Large: its statements are encoded ahead of the commit.
    let mut t = e.begin(Isolation::RepeatableRead);
    stmt(&mut t, |t, d| {
        for i in 1000..2500 {
            t.insert(d, row(i, "bulk", i)).unwrap();
        }
    });
    stmt(&mut t, |t, d| t.insert(d, row(20, "last", 20)).unwrap());
    t.commit_logged(&logged("CREATE USER a, b", false, 1396))
        .unwrap();
    let rows = all_rows(&e);
    assert_eq!(rows.len(), 3 + 1 - 1 + 1500 + 1);
    assert_eq!(rows[0], row(1, "redo", 100));

    let events = e.binlog_events(None, 0, 0, None).unwrap();
    let kinds: Vec<(&str, &str)> = events
        .iter()
        .map(|r| (r.event_type.as_str(), r.info.as_str()))
        .collect();
    for sql in [
        "use `test`; GRANT SELECT ON test.* TO u",
        "use `test`; DROP USER IF EXISTS nobody",
        "use `test`; CREATE USER a, b",
    ] {
        let at = kinds
            .iter()
            .position(|k| *k == ("Query", sql))
            .unwrap_or_else(|| panic!("{sql} not in {kinds:?}"));
        assert_eq!(
            kinds[at - 2],
            (
                "Ignorable log event",
                "# Ignorable event type 111 (Unknown)"
            )
        );
        assert_eq!(kinds[at - 1].0, "Gtid");
        assert!(kinds[at - 1].1.starts_with("GTID 0-1-"), "{kinds:?}");
    }
    // Only the first, plain transaction has rows events.
    assert_eq!(
        kinds.iter().filter(|k| k.0 == "Table_map").count(),
        1,
        "{kinds:?}"
    );
    // Closed without a flush: the memtables are lost, recovery replays the binlog.
    drop(e);
    let e = open(dir.path(), LogMode::Engine);
    assert_eq!(all_rows(&e), rows, "after reopening");
    e.shutdown().unwrap();
    let replay = tempfile::tempdir().unwrap();
    let r = replay_binlog(dir.path(), replay.path());
    assert_eq!(all_rows(&r), rows, "replayed from the binlog");
    r.shutdown().unwrap();
}

/// PURGE right after FLUSH BINARY LOGS removes the file the applied position lies in (at
/// its end: every group of it is applied). Another PURGE, and a restart without a clean
/// shutdown, go on from the next file.
#[test]
fn purging_the_applied_positions_file_keeps_recovery_working() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path(), LogMode::Engine);
    setup(&e);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    t.insert(&def, row(1, "a", 1)).unwrap();
    t.commit().unwrap();
    e.flush_binary_logs().unwrap();
    let active = e.binlog_files().last().unwrap().0.clone();
    e.purge_binary_logs_to(&active).unwrap();
    assert_eq!(e.binlog_files().len(), 1);
    e.purge_binary_logs_to(&active).unwrap();
    drop(e);
    let e = open(dir.path(), LogMode::Engine);
    assert_eq!(all_rows(&e), vec![row(1, "a", 1)]);
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    t.insert(&def, row(2, "b", 2)).unwrap();
    t.commit().unwrap();
    drop(e);
    let e = open(dir.path(), LogMode::Engine);
    assert_eq!(all_rows(&e).len(), 2);
    e.shutdown().unwrap();
}
