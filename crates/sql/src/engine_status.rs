//! `SHOW ENGINE InnoDB STATUS` (and `SHOW ENGINE ALL STATUS`, `SHOW ENGINE InnoDB MUTEX`):
//! one row (Type, Name, Status) whose Status text has InnoDB's frame and the sections a
//! DBA reads there, from what onelog has:
//!
//! - TRANSACTIONS: the transaction id counter, and each open transaction that holds locks,
//!   changed rows or waits (`Engine::open_transactions`) with its connection, statement
//!   and the lock it waits for;
//! - LATEST DETECTED DEADLOCK: the transactions of the latest wait-for cycle, the lock
//!   each waited for and held, their statements, and the one rolled back
//!   (`Engine::latest_deadlock`; the statements are taken from the process list by the
//!   victim's session as it gets error 1213, see [`note_deadlock`]);
//! - LOG: the binlog (onelog's only log): where it ends, up to where it is durable;
//! - GROUP COMMIT and LOG SYNCS, onelog's own: groups, commits per group and sync
//!   durations, with per-second rates since the previous printout and their histograms
//!   (`Engine::commit_histograms`);
//! - ROCKSDB: the storage's keys, files, memtables, background work and block cache.
//!
//! `SHOW ENGINE InnoDB MUTEX` is empty, as in MariaDB 10.11. Both need PROCESS (1227);
//! another engine name is unknown (1286).

use std::time::Instant;

use onelog_engine::{Bucket, DeadlockReport, HistogramSnapshot, OpenTxn};
use onelog_types::{code, DateTime, SqlError};
use parking_lot::Mutex;

use crate::show::{result, s};
use crate::users::Priv;
use crate::{sql_err, QueryResult, Session};

const ER_UNKNOWN_STORAGE_ENGINE: u16 = 1286;

/// What the monitor remembers between printouts.
#[derive(Default)]
pub(crate) struct Monitor {
    /// The previous printout: when, and the commit path's counters then.
    last: Mutex<Option<(Instant, Counts)>>,
    /// The statements of the latest deadlock's connections: (the deadlock's time, per
    /// connection: user, host, statement).
    deadlock: Mutex<Option<(i64, Vec<Who>)>>,
}

/// A connection: its id, user, host and the statement it was running.
type Who = (u32, String, String, Option<String>);

#[derive(Clone, Copy, Default)]
struct Counts {
    commits: u64,
    groups: u64,
    syncs: u64,
}

/// Called by a session whose statement was chosen as a deadlock's victim (error 1213):
/// keeps what the cycle's connections were running.
pub(crate) fn note_deadlock(sess: &Session) {
    let Some(report) = sess.db.engine.latest_deadlock() else {
        return;
    };
    if report.transactions.first().map(|t| t.connection) != Some(sess.conn_id) {
        return;
    }
    let procs = sess.db.process_list();
    let stmts = report
        .transactions
        .iter()
        .filter_map(|t| procs.iter().find(|p| p.id == t.connection && p.id != 0))
        .map(|p| (p.id, p.user.clone(), p.host.clone(), p.info.clone()))
        .collect();
    *sess.db.monitor.deadlock.lock() = Some((report.at, stmts));
}

pub(crate) fn show_engine(
    sess: &Session,
    engine: &str,
    mutex: bool,
) -> Result<QueryResult, SqlError> {
    let known = ["innodb", "all"].contains(&engine.to_ascii_lowercase().as_str());
    if !known {
        return Err(SqlError::new(
            ER_UNKNOWN_STORAGE_ENGINE,
            "42000",
            format!("Unknown storage engine '{engine}'"),
        ));
    }
    if !sess.account().has_global(Priv::PROCESS) {
        let mut e = sql_err(
            code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
            "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation",
        );
        e.state = "42000";
        return Err(e);
    }
    let rows = if mutex {
        Vec::new()
    } else {
        vec![vec![s("InnoDB"), s(""), s(&status_text(sess))]]
    };
    result(sess, &["Type", "Name", "Status"], &[], rows, &None)
}

fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// `2026-11-27 17:14:55` (the server's time zone is UTC).
fn stamp(micros: i64) -> String {
    DateTime::from_unix(micros.div_euclid(1_000_000), 0).to_string()
}

fn header(out: &mut String, title: &str) {
    let rule = "-".repeat(title.len());
    out.push_str(&format!("{rule}\n{title}\n{rule}\n"));
}

fn status_text(sess: &Session) -> String {
    let engine = &sess.db.engine;
    let st = engine.status();
    let hist = engine.commit_histograms();
    let now = Instant::now();
    let counts = Counts {
        commits: st.binlog_commits,
        groups: st.binlog_group_commits,
        syncs: st.log_syncs,
    };
    let (since, before) = sess
        .db
        .monitor
        .last
        .lock()
        .replace((now, counts))
        .unwrap_or((sess.db.started, Counts::default()));
    let secs = now.duration_since(since).as_secs_f64().max(0.001);
    let mut out = String::new();
    out.push_str(&format!(
        "\n=====================================\n{} 0x{:x} INNODB MONITOR OUTPUT\n\
         =====================================\n\
         Per second averages calculated from the last {} seconds\n",
        stamp(now_micros()),
        sess.conn_id,
        secs.round() as u64
    ));
    transactions(sess, &mut out);
    if let Some(d) = engine.latest_deadlock() {
        deadlock(sess, &d, &mut out);
    }
    header(&mut out, "LOG");
    match (engine.master_status(), engine.binlog_synced()) {
        (Some((file, end)), Some((sfile, spos))) => out.push_str(&format!(
            "Binlog file {file}, written up to {end}\nDurable up to {sfile}:{spos}\n"
        )),
        _ => out.push_str("Binlog off: RocksDB's write-ahead log\n"),
    }
    out.push_str(&format!(
        "{} log syncs, {} bytes written to the binlog\n",
        st.log_syncs, st.binlog_bytes_written
    ));
    let rate = |a: u64, b: u64| a.saturating_sub(b) as f64 / secs;
    header(&mut out, "GROUP COMMIT");
    let groups = &hist.group_sizes;
    out.push_str(&format!(
        "{} commits in {} groups, {:.2} commits per group\n\
         {:.2} commits/s, {:.2} groups/s\n",
        st.binlog_commits,
        st.binlog_group_commits,
        ratio(groups),
        rate(counts.commits, before.commits),
        rate(counts.groups, before.groups)
    ));
    histogram(&mut out, "Commits per group", "", groups);
    header(&mut out, "LOG SYNCS");
    let syncs = &hist.sync_micros;
    out.push_str(&format!(
        "{} syncs, {:.2} syncs/s, average {} us, p50 <= {} us, p99 <= {} us\n",
        syncs.count(),
        rate(counts.syncs, before.syncs),
        syncs.mean(),
        syncs.quantile_bound(500),
        syncs.quantile_bound(990)
    ));
    histogram(&mut out, "Sync duration", " us", syncs);
    rocksdb(sess, &mut out);
    out.push_str("----------------------------\nEND OF INNODB MONITOR OUTPUT\n============================\n");
    out
}

fn ratio(h: &HistogramSnapshot) -> f64 {
    if h.count() == 0 {
        0.0
    } else {
        h.sum as f64 / h.count() as f64
    }
}

/// One line per bucket that has samples: `label 4-7 us: 12`.
fn histogram(out: &mut String, label: &str, unit: &str, h: &HistogramSnapshot) {
    for Bucket { low, high, count } in h.buckets() {
        let range = if low == high {
            low.to_string()
        } else if high == u64::MAX {
            format!(">= {low}")
        } else {
            format!("{low}-{high}")
        };
        out.push_str(&format!("{label} {range}{unit}: {count}\n"));
    }
}

fn transactions(sess: &Session, out: &mut String) {
    let engine = &sess.db.engine;
    header(out, "TRANSACTIONS");
    out.push_str(&format!(
        "Trx id counter {}\nHistory list length 0\nLIST OF TRANSACTIONS FOR EACH SESSION:\n",
        engine.transaction_id_counter()
    ));
    let procs = sess.db.process_list();
    let now = now_micros();
    for t in engine.open_transactions() {
        let p = procs
            .iter()
            .find(|p| t.connection != 0 && p.id == t.connection);
        transaction(out, &t, now, p.map(|p| (&p.user, &p.host, &p.info)));
        if let Some((since, key)) = &t.waiting {
            out.push_str(&format!(
                "------- TRX HAS BEEN WAITING {} SEC FOR THIS LOCK TO BE GRANTED:\n{} waiting\n------------------\n",
                (now - since).max(0) / 1_000_000,
                engine.describe_lock(key)
            ));
        }
    }
}

fn transaction(
    out: &mut String,
    t: &OpenTxn,
    now: i64,
    who: Option<(&String, &String, &Option<String>)>,
) {
    out.push_str(&format!(
        "---TRANSACTION {}, ACTIVE {} sec{}\n{} lock struct(s), heap size {}, {} row lock(s), undo log entries {}\n",
        t.id,
        (now - t.started).max(0) / 1_000_000,
        if t.waiting.is_some() { " LOCK WAIT" } else { "" },
        t.locks,
        t.lock_bytes,
        t.row_locks,
        t.rows_modified
    ));
    match who {
        Some((user, host, info)) => {
            out.push_str(&format!(
                "MariaDB thread id {}, OS thread handle 0, query id 0 {host} {user}\n",
                t.connection
            ));
            if let Some(q) = info {
                out.push_str(q);
                out.push('\n');
            }
        }
        None if t.connection != 0 => {
            out.push_str(&format!("MariaDB thread id {}\n", t.connection));
        }
        None => out.push_str("onelog's own (replication applier or sequence cache)\n"),
    }
}

fn deadlock(sess: &Session, d: &DeadlockReport, out: &mut String) {
    header(out, "LATEST DETECTED DEADLOCK");
    out.push_str(&format!("{}\n", stamp(d.at)));
    let stmts = sess.db.monitor.deadlock.lock().clone();
    let stmts = stmts.filter(|(at, _)| *at == d.at).map(|(_, v)| v);
    let n = d.transactions.len();
    for (i, t) in d.transactions.iter().enumerate() {
        out.push_str(&format!(
            "*** ({}) TRANSACTION:\nTRANSACTION {}, ACTIVE {} sec\nLOCK WAIT {} lock struct(s), undo log entries {}\n",
            i + 1,
            t.id,
            (d.at - t.started).max(0) / 1_000_000,
            t.locks,
            t.rows_modified
        ));
        let who = stmts
            .as_ref()
            .and_then(|v| v.iter().find(|(c, ..)| *c == t.connection));
        match who {
            Some((c, user, host, q)) => {
                out.push_str(&format!("MariaDB thread id {c}, {host} {user}\n"));
                if let Some(q) = q {
                    out.push_str(q);
                    out.push('\n');
                }
            }
            None => out.push_str(&format!("MariaDB thread id {}\n", t.connection)),
        }
        // Each holds the lock the one before it waits for (the first: the last one's).
        let held = &d.transactions[(i + n - 1) % n].waiting_for;
        out.push_str(&format!(
            "*** ({}) HOLDS THE LOCK(S):\n{held}\n*** ({}) WAITING FOR THIS LOCK TO BE GRANTED:\n{} waiting\n",
            i + 1,
            i + 1,
            t.waiting_for
        ));
    }
    out.push_str("*** WE ROLL BACK TRANSACTION (1)\n");
}

fn rocksdb(sess: &Session, out: &mut String) {
    header(out, "ROCKSDB");
    let engine = &sess.db.engine;
    for (label, prop) in [
        ("Estimated keys", "rocksdb.estimate-num-keys"),
        ("Live table file bytes", "rocksdb.live-sst-files-size"),
        ("Memtable bytes", "rocksdb.cur-size-all-mem-tables"),
        ("Immutable memtables", "rocksdb.num-immutable-mem-table"),
        ("Running flushes", "rocksdb.num-running-flushes"),
        ("Running compactions", "rocksdb.num-running-compactions"),
        (
            "Pending compaction bytes",
            "rocksdb.estimate-pending-compaction-bytes",
        ),
        ("Block cache bytes", "rocksdb.block-cache-usage"),
    ] {
        if let Some(v) = engine.rocksdb_property(prop) {
            out.push_str(&format!("{label} {}\n", v.trim()));
        }
    }
}
