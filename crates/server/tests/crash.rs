//! SIGKILL crash tests through the wire protocol: 8 client threads commit inserts,
//! updates and deletes; the server is killed at a random moment and restarted on the same
//! datadir. Every acknowledged commit must be there with its acknowledged value; a commit
//! in flight may or may not be. Then the binlog must equal the tables: replaying the
//! datadir's binlog files into an empty datadir gives the same table contents.

mod common;
use common::*;
use mysql::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const THREADS: i64 = 8;
const ROUNDS: usize = 5;

/// (table 1 or 2, id) -> v
type Model = BTreeMap<(u8, i64), i64>;

struct ThreadLog {
    /// Acknowledged state of this thread's keys: Some(v) present, None deleted.
    acked: BTreeMap<(u8, i64), Option<i64>>,
    /// The operation whose answer never came: (key, value it would leave).
    in_flight: Option<((u8, i64), Option<i64>)>,
    /// An error that happened before the kill (a bug).
    early_error: Option<String>,
    commits: u64,
}

fn read_model(c: &mut mysql::Conn) -> Model {
    let mut m = Model::new();
    let a: Vec<(i64, i64)> = c.query("SELECT id, v FROM crash.t1").unwrap();
    for (id, v) in a {
        m.insert((1, id), v);
    }
    let b: Vec<(i64, i64)> = c.query("SELECT id, v FROM crash.t2").unwrap();
    for (id, v) in b {
        m.insert((2, id), v);
    }
    m
}

fn worker(
    srv_opts: mysql::Opts,
    t: i64,
    mut own: Vec<i64>,
    killed: Arc<AtomicBool>,
    log: Arc<Mutex<ThreadLog>>,
    seed: u64,
) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut c = match mysql::Conn::new(srv_opts) {
        Ok(c) => c,
        Err(e) => {
            if !killed.load(Ordering::SeqCst) {
                log.lock().unwrap().early_error = Some(format!("connect: {e}"));
            }
            return;
        }
    };
    let mut next_id = t * 1_000_000 + own.iter().map(|x| x % 1_000_000).max().unwrap_or(0) + 1;
    loop {
        let v: i64 = rng.gen_range(0..1_000_000_000);
        let dice = rng.gen_range(0..100);
        let (key, after, r) = if dice < 40 || own.is_empty() {
            let id = next_id;
            next_id += 1;
            let pad = "p".repeat(rng.gen_range(0..200));
            let r = c.exec_drop(
                "INSERT INTO crash.t1 (id, v, pad) VALUES (?, ?, ?)",
                (id, v, pad),
            );
            ((1u8, id), Some(v), r.map(|_| id))
        } else if dice < 75 {
            let id = own[rng.gen_range(0..own.len())];
            let r = c.query_drop(format!("UPDATE crash.t1 SET v = {v} WHERE id = {id}"));
            ((1, id), Some(v), r.map(|_| id))
        } else if dice < 80 {
            let i = rng.gen_range(0..own.len());
            let id = own[i];
            let r = c.exec_drop("DELETE FROM crash.t1 WHERE id = ?", (id,));
            ((1, id), None, r.map(|_| id))
        } else {
            // Auto-increment: the id is known only from the answer.
            let r = c.exec_drop("INSERT INTO crash.t2 (k, v) VALUES (?, ?)", (t, v));
            let id = c.last_insert_id() as i64;
            ((2, -1), Some(v), r.map(|_| id))
        };
        let mut l = log.lock().unwrap();
        match r {
            Ok(id) => {
                let key = (key.0, id);
                l.acked.insert(key, after);
                l.commits += 1;
                if key.0 == 1 {
                    match after {
                        Some(_) if !own.contains(&id) => own.push(id),
                        None => own.retain(|x| *x != id),
                        _ => {}
                    }
                }
            }
            Err(e) => {
                if killed.load(Ordering::SeqCst) {
                    l.in_flight = Some((key, after));
                } else {
                    l.early_error = Some(format!("{key:?}: {e}"));
                }
                return;
            }
        }
    }
}

fn crash_test(args: &[&str], label: &str) {
    let started = Instant::now();
    let mut srv = Server::start(args);
    {
        let mut c = srv.conn(None);
        c.query_drop("CREATE DATABASE crash").unwrap();
        c.query_drop(
            "CREATE TABLE crash.t1 (id BIGINT PRIMARY KEY, v BIGINT NOT NULL, pad VARCHAR(255), KEY kv (v))",
        )
        .unwrap();
        c.query_drop(
            "CREATE TABLE crash.t2 (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL, v BIGINT NOT NULL, KEY kk (k))",
        )
        .unwrap();
    }
    let mut model = Model::new();
    let mut total_commits = 0;
    let seed = onelog_types::seed::test_seed(&format!("crash_{label}_mode"));
    let mut rng = StdRng::seed_from_u64(seed);
    for round in 0..ROUNDS {
        let killed = Arc::new(AtomicBool::new(false));
        let logs: Vec<Arc<Mutex<ThreadLog>>> = (0..THREADS)
            .map(|_| {
                Arc::new(Mutex::new(ThreadLog {
                    acked: BTreeMap::new(),
                    in_flight: None,
                    early_error: None,
                    commits: 0,
                }))
            })
            .collect();
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let own: Vec<i64> = model
                    .keys()
                    .filter(|k| k.0 == 1 && k.1 / 1_000_000 == t)
                    .map(|k| k.1)
                    .collect();
                let (opts, killed, log) =
                    (srv.opts(None), killed.clone(), logs[t as usize].clone());
                let seed = rng.gen();
                std::thread::spawn(move || worker(opts, t, own, killed, log, seed))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.gen_range(700..1800)));
        killed.store(true, Ordering::SeqCst);
        srv.kill9();
        for h in handles {
            h.join().unwrap();
        }
        // Expected state: acknowledged changes applied on the previous model.
        let mut maybe: Vec<((u8, i64), Option<i64>)> = Vec::new();
        let mut commits = 0;
        for l in &logs {
            let l = l.lock().unwrap();
            assert!(
                l.early_error.is_none(),
                "{label}: error before the kill: {:?}",
                l.early_error
            );
            commits += l.commits;
            for (k, v) in &l.acked {
                match v {
                    Some(v) => model.insert(*k, *v),
                    None => model.remove(k),
                };
            }
            if let Some(x) = l.in_flight {
                maybe.push(x);
            }
        }
        total_commits += commits;
        srv.restart();
        let mut c = srv.conn(None);
        let actual = read_model(&mut c);
        // Every acknowledged row, with its acknowledged value, or the in-flight change to it.
        let mut expected_alt = model.clone();
        let mut auto_inc_maybe = 0;
        for (k, after) in &maybe {
            if k.0 == 2 {
                auto_inc_maybe += 1;
                continue;
            }
            match after {
                Some(v) => expected_alt.insert(*k, *v),
                None => expected_alt.remove(k),
            };
        }
        for (k, v) in &model {
            let got = actual.get(k);
            let alt = expected_alt.get(k);
            assert!(
                got == Some(v) || (got == alt && maybe.iter().any(|m| m.0 == *k)),
                "{label} round {round}: acknowledged {k:?} = {v} but found {got:?}"
            );
        }
        let mut extra_t2 = 0;
        for (k, v) in &actual {
            if model.contains_key(k) {
                continue;
            }
            if k.0 == 2 {
                extra_t2 += 1;
                continue;
            }
            assert!(
                expected_alt.get(k) == Some(v),
                "{label} round {round}: row {k:?} = {v} was never acknowledged"
            );
        }
        assert!(
            extra_t2 <= auto_inc_maybe,
            "{label} round {round}: {extra_t2} unacknowledged auto-increment rows, {auto_inc_maybe} in flight"
        );
        // The in-flight changes are now decided: the recovered state is the new model.
        model = actual;
        println!(
            "{label} round {round}: {commits} acknowledged commits, {} in flight, {} rows",
            maybe.len(),
            model.len()
        );
        assert!(commits > 0, "{label}: no commits in round {round}");

        // The binlog equals the tables: replay it into an empty datadir.
        let dump = dump_tables_conn(&mut c);
        drop(c);
        let rdir = srv.dir.join(format!("replay{round}"));
        let rdata = rdir.join("data");
        copy_binlogs(&srv.datadir, &rdata);
        // A fresh datadir in the default (engine) mode replays the whole binlog into empty
        // tables, whichever mode wrote it (a file-mode server doesn't replay its binlog into
        // an empty datadir: there the binlog is not the WAL).
        let mut replica = Server::start_in(&rdir, &rdata, &[]);
        let rdump = replica.dump_tables();
        assert!(
            dump == rdump,
            "{label} round {round}: tables differ from the binlog replay\n--- recovered:\n{}\n--- replayed:\n{}",
            head(&dump),
            head(&rdump)
        );
        replica.stop();
        std::fs::remove_dir_all(&rdir).unwrap();
    }
    srv.stop();
    println!(
        "{label}: {ROUNDS} crashes, {total_commits} acknowledged commits, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

fn dump_tables_conn(c: &mut mysql::Conn) -> String {
    dump_tables(c)
}

fn head(s: &str) -> String {
    s.lines().take(40).collect::<Vec<_>>().join("\n")
}

#[test]
fn crash_engine_mode() {
    crash_test(&[], "engine");
}

#[test]
fn crash_file_mode() {
    crash_test(&["--binlog-storage=file"], "file");
}

/// A panic on the commit path (a test hook makes the commit of the 150th group panic)
/// answers that group with an error and fails the log: the other writers get errors, none
/// hangs, and the server stops; a restart recovers every acknowledged commit.
#[test]
fn a_panic_in_a_commit_fails_the_log_and_the_restart_recovers() {
    let mut srv = Server::start_with_env(&[], &[("ONELOG_TEST_PANIC_AT_GROUP", "150")]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE p").unwrap();
    c.query_drop("CREATE TABLE p.t (id INT PRIMARY KEY, w INT)")
        .unwrap();
    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
    let writers: Vec<_> = (0..4u32)
        .map(|w| {
            let opts = srv.opts(None);
            let acked = acked.clone();
            std::thread::spawn(move || -> String {
                let mut c = mysql::Conn::new(opts).unwrap();
                for i in 0..100_000u32 {
                    let id = w * 1_000_000 + i;
                    match c.query_drop(format!("INSERT INTO p.t VALUES ({id}, {w})")) {
                        Ok(()) => acked.lock().unwrap().push(id),
                        Err(e) => return e.to_string(),
                    }
                }
                "no error".into()
            })
        })
        .collect();
    let t = Instant::now();
    let errors: Vec<String> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    assert!(t.elapsed() < Duration::from_secs(60), "writers hung");
    for e in &errors {
        assert_ne!(e, "no error");
    }
    // The server stops by itself after the failure.
    let deadline = Instant::now() + Duration::from_secs(30);
    while srv.is_running() {
        assert!(
            Instant::now() < deadline,
            "onelogd still running after the panic"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = srv.log_text();
    assert!(log.contains("a commit panicked"), "{log}");
    srv.kill9(); // reaps the exited process
    srv.restart();
    let mut c = srv.conn(None);
    let have: Vec<u32> = c.query("SELECT id FROM p.t").unwrap();
    let have: std::collections::HashSet<u32> = have.into_iter().collect();
    let acked = acked.lock().unwrap();
    assert!(
        acked.len() > 50,
        "only {} commits before the panic",
        acked.len()
    );
    let missing = acked.iter().filter(|i| !have.contains(i)).count();
    assert_eq!(
        missing,
        0,
        "acknowledged commits lost: {missing} of {}",
        acked.len()
    );
}
