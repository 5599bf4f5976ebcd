//! Crash recovery with a real process: a child process runs concurrent transactions and
//! records each acknowledged commit; the parent SIGKILLs it at a random moment, reopens the
//! data directory and checks that
//! 1. every acknowledged commit survived, and every transaction is all-or-nothing;
//! 2. the tables equal a replay of the binlog from scratch (the binlog files copied into an
//!    empty directory and opened: recovery rebuilds every table from the log alone).
//!
//! Repeated several times on the same directory, in `engine` and `file` modes.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use common::*;
use onelog_engine::*;
use onelog_types::{ColumnType, Value};

const THREADS: i64 = 6;
const CHILD_ENV: &str = "ONELOG_CRASH_CHILD";

fn mode_name(m: LogMode) -> &'static str {
    match m {
        LogMode::Engine => "engine",
        LogMode::File => "file",
        LogMode::Off => "off",
    }
}

/// The child: thread `t` repeatedly inserts row `t*1_000_000 + n` and sets its counter
/// row `t` to `n`, in one transaction; after each commit it appends `t n` to `acked`.
#[test]
#[ignore = "the child process of sigkill_recovery_*"]
fn crash_child() {
    let dir = child_dir(CHILD_ENV);
    let mode = match std::env::var("ONELOG_CRASH_MODE").as_deref() {
        Ok("file") => LogMode::File,
        _ => LogMode::Engine,
    };
    let dir = Path::new(&dir);
    let e = open(&dir.join("data"), mode);
    if e.catalog().table("test", "accounts").is_none() {
        setup(&e);
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "accounts").unwrap();
        for i in 0..THREADS {
            t.insert(&def, row(i, "counter", 0)).unwrap();
        }
        t.commit().unwrap();
    }
    // The previous round was killed, perhaps in the middle of a line: end that line, or
    // this round's first line would be glued to it ("4 248" + "1 17" = "4 2481 17").
    let path = dir.join("acked");
    let cut = std::fs::read(&path).is_ok_and(|b| b.last().is_some_and(|&c| c != b'\n'));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap();
    if cut {
        file.write_all(b"\n").unwrap();
    }
    let acked = Arc::new(parking_lot::Mutex::new(file));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let e = e.clone();
            let acked = acked.clone();
            std::thread::spawn(move || loop {
                let mut tx = e.begin(Isolation::RepeatableRead);
                let def = tx.open_table("test", "accounts").unwrap();
                let old = tx
                    .get(&def, &[Value::Int(t)], LockMode::Exclusive)
                    .unwrap()
                    .unwrap();
                let Value::Int(n) = old[2] else { panic!() };
                let n = n + 1;
                tx.insert(&def, row((t + 1) * 1_000_000 + n, &format!("t{t}"), n))
                    .unwrap();
                tx.update(&def, &old, row(t, "counter", n)).unwrap();
                tx.commit().unwrap();
                // One write per line (O_APPEND): a kill cannot cut it in the middle.
                acked
                    .lock()
                    .write_all(format!("{t} {n}\n").as_bytes())
                    .unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn rows_by_id(e: &Arc<Engine>) -> HashMap<i64, i64> {
    all_rows(e)
        .into_iter()
        .map(|r| match (&r[0], &r[2]) {
            (Value::Int(id), Value::Int(v)) => (*id, *v),
            _ => panic!("bad row {r:?}"),
        })
        .collect()
}

fn check_round(dir: &Path, mode: LogMode) {
    let e = open(&dir.join("data"), mode);
    let rows = rows_by_id(&e);
    let acked = std::fs::read_to_string(dir.join("acked")).unwrap_or_default();
    let mut last_acked: HashMap<i64, i64> = HashMap::new();
    for line in acked.lines() {
        let mut it = line.split(' ');
        let (Some(t), Some(n), None) = (it.next(), it.next(), it.next()) else {
            continue; // a line cut by the kill
        };
        let (Ok(t), Ok(n)) = (t.parse::<i64>(), n.parse::<i64>()) else {
            continue;
        };
        let e = last_acked.entry(t).or_default();
        *e = (*e).max(n);
    }
    for t in 0..THREADS {
        let counter = rows[&t];
        // Nothing acknowledged is lost.
        assert!(
            counter >= last_acked.get(&t).copied().unwrap_or(0),
            "{mode:?}: thread {t} acknowledged {:?} but counter is {counter}",
            last_acked.get(&t)
        );
        // All-or-nothing: exactly the rows 1..=counter exist for this thread.
        for n in 1..=counter {
            assert_eq!(
                rows.get(&((t + 1) * 1_000_000 + n)),
                Some(&n),
                "{mode:?}: thread {t} row {n} missing"
            );
        }
        assert!(!rows.contains_key(&((t + 1) * 1_000_000 + counter + 1)));
    }
    if mode == LogMode::Engine {
        // Binlog == tables: replay the copied binlog into an empty directory.
        let replay = dir.join("replay");
        let _ = std::fs::remove_dir_all(&replay);
        std::fs::create_dir_all(&replay).unwrap();
        for f in std::fs::read_dir(dir.join("data")).unwrap() {
            let f = f.unwrap();
            if f.file_name().to_string_lossy().starts_with("binlog") {
                std::fs::copy(f.path(), replay.join(f.file_name())).unwrap();
            }
        }
        let r = open(&replay, mode);
        assert_eq!(
            rows_by_id(&r),
            rows,
            "{mode:?}: tables differ from a binlog replay"
        );
        r.shutdown().unwrap();
    }
    e.shutdown().unwrap();
}

/// The directory a child process works in, from `env` (set by the test that runs it).
fn child_dir(env: &str) -> String {
    std::env::var(env).unwrap_or_else(|_| {
        panic!("a child process of another test: run by it, with {env} set to its directory")
    })
}

/// Runs test `name` of this binary as a child process with `env` set to `dir`.
fn spawn_child(exe: &Path, name: &str, env: &str, dir: &Path) -> std::process::Child {
    Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            name,
            "--nocapture",
            "--test-threads=1",
        ])
        .env(env, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn crash_rounds(mode: LogMode, rounds: usize) {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed(&format!(
        "sigkill_recovery_{}_mode",
        mode_name(mode)
    )));
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .env("ONELOG_CRASH_MODE", mode_name(mode))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let ms = rng.gen_range(300..1000);
        std::thread::sleep(Duration::from_millis(ms));
        // SIGKILL: no clean shutdown, memtables (and in engine mode, everything not yet
        // flushed to SST files) are lost; only the log survives.
        child.kill().unwrap();
        child.wait().unwrap();
        check_round(dir.path(), mode);
        eprintln!("{mode:?} round {round}: recovered after kill at {ms} ms");
    }
}

#[test]
fn sigkill_recovery_engine_mode() {
    crash_rounds(LogMode::Engine, 5);
}

#[test]
fn sigkill_recovery_file_mode() {
    crash_rounds(LogMode::File, 3);
}

/// Child for the DDL crash test: loads rows, then builds an index over them.
#[test]
#[ignore = "the child process of sigkill_during_index_build"]
fn crash_ddl_child() {
    let dir = child_dir("ONELOG_CRASH_DDL_CHILD");
    let e = open(&Path::new(&dir).join("data"), LogMode::Engine);
    setup(&e);
    for chunk in 0..30 {
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "accounts").unwrap();
        for i in 0..1000 {
            let id = chunk * 1000 + i;
            t.insert(&def, row(id, "x", id % 977)).unwrap();
        }
        t.commit().unwrap();
    }
    run_ddl(&e, "CREATE INDEX bal ON accounts (balance)");
    std::thread::sleep(Duration::from_secs(30));
}

/// SIGKILL while a table is loaded and indexed: after recovery the index, if the catalog
/// has it, covers every row, and the tables equal a binlog replay.
#[test]
fn sigkill_during_index_build() {
    let exe = std::env::current_exe().unwrap();
    let mut rng =
        StdRng::seed_from_u64(onelog_types::seed::test_seed("sigkill_during_index_build"));
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn_child(
            &exe,
            "crash_ddl_child",
            "ONELOG_CRASH_DDL_CHILD",
            dir.path(),
        );
        std::thread::sleep(Duration::from_millis(rng.gen_range(200..1700)));
        child.kill().unwrap();
        child.wait().unwrap();
        let data = dir.path().join("data");
        if !data.join("rocksdb").exists() {
            continue;
        }
        let e = open(&data, LogMode::Engine);
        if e.catalog().table("test", "accounts").is_none() {
            continue;
        }
        let rows = all_rows(&e);
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "accounts").unwrap();
        if let Some((pos, _)) = def.index_by_name("bal") {
            let n = t
                .scan(&def, pos, KeyRange::all(), ScanOptions::default())
                .unwrap()
                .count();
            assert_eq!(n, rows.len(), "index covers every row");
        }
        t.commit().unwrap();
        let replay = dir.path().join("replay");
        std::fs::create_dir_all(&replay).unwrap();
        for f in std::fs::read_dir(&data).unwrap() {
            let f = f.unwrap();
            if f.file_name().to_string_lossy().starts_with("binlog") {
                std::fs::copy(f.path(), replay.join(f.file_name())).unwrap();
            }
        }
        let r = open(&replay, LogMode::Engine);
        assert_eq!(all_rows(&r), rows, "tables equal a binlog replay");
        assert_eq!(
            r.catalog().table("test", "accounts").unwrap().indexes.len(),
            def.indexes.len()
        );
    }
}

/// Child for the table-rewrite crash test: loads rows, then changes a column's type (every
/// row is converted and the table rewritten under new index ids).
#[test]
#[ignore = "the child process of sigkill_during_table_rewrite"]
fn crash_rewrite_child() {
    let dir = child_dir("ONELOG_CRASH_REWRITE_CHILD");
    let e = open(&Path::new(&dir).join("data"), LogMode::Engine);
    setup(&e);
    let t0 = std::time::Instant::now();
    for chunk in 0..100 {
        let mut t = e.begin(Isolation::RepeatableRead);
        let def = t.open_table("test", "accounts").unwrap();
        for i in 0..1000 {
            let id = chunk * 1000 + i;
            t.insert(&def, row(id, &format!("o{}", id % 7), id % 977))
                .unwrap();
        }
        t.commit().unwrap();
    }
    eprintln!("loaded after {:?}", t0.elapsed());
    std::fs::write(Path::new(&dir).join("loaded"), b"").unwrap();
    run_ddl(&e, "ALTER TABLE accounts MODIFY balance VARCHAR(20)");
    eprintln!("altered after {:?}", t0.elapsed());
    std::thread::sleep(Duration::from_secs(30));
}

/// SIGKILL while a table is loaded and rewritten by a column type change: after recovery
/// the table is completely the old one or completely the new one (every row converted, the
/// secondary index covering every row), and equals a binlog replay.
#[test]
fn sigkill_during_table_rewrite() {
    let exe = std::env::current_exe().unwrap();
    let mut rng = StdRng::seed_from_u64(onelog_types::seed::test_seed(
        "sigkill_during_table_rewrite",
    ));
    let (mut old_seen, mut new_seen) = (0, 0);
    for round in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn_child(
            &exe,
            "crash_rewrite_child",
            "ONELOG_CRASH_REWRITE_CHILD",
            dir.path(),
        );
        // The kill lands while the rewrite runs (it starts once the rows are loaded and
        // takes about 50 ms here), or around its commit.
        let loaded = dir.path().join("loaded");
        let start = std::time::Instant::now();
        while !loaded.exists() && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let ms = round * 15 + rng.gen_range(0..15);
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let data = dir.path().join("data");
        if !data.join("rocksdb").exists() {
            continue;
        }
        let e = open(&data, LogMode::Engine);
        if e.catalog().table("test", "accounts").is_none() {
            continue;
        }
        let rows = all_rows(&e);
        let def = e.catalog().table("test", "accounts").unwrap().clone();
        let converted = matches!(def.columns[2].ty, ColumnType::Varchar { .. });
        for r in &rows {
            let Value::Int(id) = r[0] else { panic!() };
            let want = if converted {
                Value::str(&(id % 977).to_string())
            } else {
                Value::Int(id % 977)
            };
            assert_eq!(r[2], want, "row {id} after a kill {ms} ms into the rewrite");
        }
        if converted {
            new_seen += 1;
        } else {
            old_seen += 1;
        }
        let mut t = e.begin(Isolation::RepeatableRead);
        let d = t.open_table("test", "accounts").unwrap();
        let n = t
            .scan(&d, 1, KeyRange::all(), ScanOptions::default())
            .unwrap()
            .count();
        assert_eq!(n, rows.len(), "the owner index covers every row");
        t.commit().unwrap();
        e.shutdown().unwrap();
        let replay = dir.path().join("replay");
        std::fs::create_dir_all(&replay).unwrap();
        for f in std::fs::read_dir(&data).unwrap() {
            let f = f.unwrap();
            if f.file_name().to_string_lossy().starts_with("binlog") {
                std::fs::copy(f.path(), replay.join(f.file_name())).unwrap();
            }
        }
        let r = open(&replay, LogMode::Engine);
        assert_eq!(all_rows(&r), rows, "tables equal a binlog replay");
        assert_eq!(
            r.catalog().table("test", "accounts").unwrap().columns,
            def.columns
        );
        r.shutdown().unwrap();
        eprintln!(
            "round {round}: kill {ms} ms into the rewrite, {} rows, {}",
            rows.len(),
            if converted { "rewritten" } else { "old table" }
        );
    }
    eprintln!("old table {old_seen} times, rewritten {new_seen} times");
}
