//! Index builds through ingested table files (`engine/bulk.rs`): the entries agree with the
//! table whether they were sorted in memory or spilled and merged, unique indexes still
//! refuse duplicates, and the indexes survive a clean restart and a SIGKILL right after
//! the ALTER TABLE (recovery re-runs it over the ingested files).

mod common;
use common::*;
use mysql::prelude::Queryable;

const ROWS: u64 = 20_000;

/// Creates `b.t` with `ROWS` rows: `a` repeats (every 1,000 rows), `s` is a string that
/// sorts differently from `id`.
fn fill(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE b").unwrap();
    c.query_drop(
        "CREATE TABLE b.t (id INT PRIMARY KEY, a INT NOT NULL, s VARCHAR(32) NOT NULL, \
         u INT NOT NULL)",
    )
    .unwrap();
    for start in (0..ROWS).step_by(2000) {
        let vals: Vec<String> = (start..start + 2000)
            .map(|i| {
                format!(
                    "({i}, {}, 'k{:05}', {})",
                    i % 1000,
                    (i * 7919) % 20011,
                    ROWS - i
                )
            })
            .collect();
        c.query_drop(format!("INSERT INTO b.t VALUES {}", vals.join(",")))
            .unwrap();
    }
}

type Row = (i64, i64, String, i64);

/// Every row of `b.t`: id, a, s, u.
fn table_rows(c: &mut mysql::Conn) -> Vec<Row> {
    c.query("SELECT id, a, s, u FROM b.t").unwrap()
}

/// What `query` reads through an index, in the index's order, equals `rows` mapped by
/// `key` and sorted.
fn assert_index_order<K>(c: &mut mysql::Conn, query: &str, rows: &[Row], key: impl Fn(&Row) -> K)
where
    K: Ord + std::fmt::Debug + mysql::prelude::FromRow,
{
    let got: Vec<K> = c.query(query).unwrap();
    let mut want: Vec<K> = rows.iter().map(key).collect();
    want.sort();
    assert_eq!(got, want, "{query}");
}

/// Each index's entries, read through the index in its order, against the table's rows
/// sorted by the same columns.
fn assert_indexes_agree(c: &mut mysql::Conn) {
    let rows = table_rows(c);
    assert_eq!(rows.len() as u64, ROWS);
    let q = "SELECT a, id FROM b.t FORCE INDEX (ia) WHERE a >= 0";
    assert_index_order(c, q, &rows, |r| (r.1, r.0));
    let q = "SELECT s, a, id FROM b.t FORCE INDEX (isa) WHERE s >= ''";
    assert_index_order(c, q, &rows, |r| (r.2.clone(), r.1, r.0));
    let q = "SELECT u, id FROM b.t FORCE INDEX (uu) WHERE u >= 0";
    assert_index_order(c, q, &rows, |r| (r.3, r.0));
}

#[test]
fn ingested_index_builds_agree_with_the_table() {
    // 64 KiB of sort memory: a 20,000-row build spills dozens of runs and merges them.
    for merge_buf in [
        "--rocksdb-merge-buf-size=64K",
        "--rocksdb-merge-buf-size=64M",
    ] {
        let mut srv = Server::start(&[merge_buf]);
        let mut c = srv.conn(None);
        fill(&mut c);
        let ingested = srv.status_var("Onelog_ingested_files");
        c.query_drop("ALTER TABLE b.t ADD INDEX ia (a), ADD INDEX isa (s, a), ADD UNIQUE uu (u)")
            .unwrap();
        assert!(
            srv.status_var("Onelog_ingested_files") > ingested,
            "{merge_buf}: the build wrote through the memtable"
        );
        assert_indexes_agree(&mut c);

        // A unique index over duplicate values is refused, and leaves nothing behind.
        let e = c
            .query_drop("ALTER TABLE b.t ADD UNIQUE ua (a)")
            .unwrap_err();
        match e {
            mysql::Error::MySqlError(e) => assert_eq!(e.code, 1062, "{e:?}"),
            e => panic!("{e:?}"),
        }
        let create: (String, String) = c.query_first("SHOW CREATE TABLE b.t").unwrap().unwrap();
        assert!(!create.1.contains("`ua`"), "{}", create.1);

        // A rewrite (new column) goes through the same path: rows and indexes intact.
        c.query_drop("ALTER TABLE b.t ADD COLUMN z INT NOT NULL DEFAULT 5 AFTER a")
            .unwrap();
        let (n, z): (u64, i64) = c
            .query_first("SELECT COUNT(*), SUM(z) FROM b.t")
            .unwrap()
            .unwrap();
        assert_eq!((n, z), (ROWS, 5 * ROWS as i64));
        assert_indexes_agree(&mut c);
        drop(c);

        // A clean restart keeps the ingested files; leftovers of a build cut short go.
        srv.stop();
        let stale = srv.datadir.join("bulk").join("4242");
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::write(stale.join("run-0"), b"left by a killed build").unwrap();
        srv.restart();
        assert!(
            !stale.exists(),
            "a killed build's temporary files were kept"
        );
        let mut c = srv.conn(None);
        assert_indexes_agree(&mut c);
        srv.assert_no_panic();
    }
}

#[test]
fn sigkill_right_after_an_ingested_build() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    fill(&mut c);
    c.query_drop("ALTER TABLE b.t ADD INDEX ia (a), ADD INDEX isa (s, a), ADD UNIQUE uu (u)")
        .unwrap();
    c.query_drop("INSERT INTO b.t VALUES (-1, 1, 'late', -1)")
        .unwrap();
    let before = dump_tables(&mut c);
    drop(c);
    // The catalog change is in the binlog and the memtable only; the entries are in table
    // files. Recovery re-runs the ALTER TABLE under the same index ids.
    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(dump_tables(&mut c), before);
    let rows = table_rows(&mut c);
    let q = "SELECT a, id FROM b.t FORCE INDEX (ia) WHERE a >= 0";
    assert_index_order(&mut c, q, &rows, |r| (r.1, r.0));
    let late: Option<i64> = c
        .query_first("SELECT id FROM b.t FORCE INDEX (uu) WHERE u = -1")
        .unwrap();
    assert_eq!(late, Some(-1));
    srv.assert_no_panic();
}
