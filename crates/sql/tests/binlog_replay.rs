//! What `mariadb-binlog` output runs, through a session: `BINLOG 'base64'` events (format
//! description, table map, rows) applied in the session's transaction, the session
//! settings it makes (`server_id`, `gtid_domain_id` and `gtid_seq_no` naming the GTID,
//! `sql_mode` as a number), comment-only statements, and the errors MariaDB gives.

use std::sync::Arc;

use onelog_binlog::{Event, FileEvents, RealFs};
use onelog_engine::EngineOptions;
use onelog_sql::{Database, QueryResult, Session};
use onelog_types::Value;

fn open(dir: &std::path::Path) -> Arc<Database> {
    Database::open(EngineOptions {
        datadir: dir.to_path_buf(),
        block_cache_size: 8 << 20,
        ..Default::default()
    })
    .expect("open")
}

fn session(db: &Arc<Database>, user: &str) -> Session {
    Session::new(
        db.clone(),
        user.into(),
        "localhost".into(),
        db.next_connection_id(),
    )
}

fn exec(s: &mut Session, sql: &str) -> QueryResult {
    s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn scalar(s: &mut Session, sql: &str) -> String {
    match exec(s, sql) {
        QueryResult::Rows { rows, .. } => match &rows[0][0] {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            v => format!("{v:?}"),
        },
        r => panic!("{sql}: {r:?}"),
    }
}

fn base64(data: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

const TABLE: &str = "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))";

/// The FORMAT_DESCRIPTION and the TABLE_MAP + rows events of an INSERT, an UPDATE and a
/// DELETE, as another server logged them (raw, CRC32 included).
fn logged_events() -> (Vec<u8>, Vec<Vec<u8>>) {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = session(&db, "root");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, TABLE);
    exec(&mut s, "INSERT INTO d.t VALUES (1, 'one'), (2, 'two')");
    exec(&mut s, "UPDATE d.t SET v = 'TWO' WHERE id = 2");
    exec(&mut s, "DELETE FROM d.t WHERE id = 1");
    db.engine().shutdown().unwrap();
    let mut fde = Vec::new();
    let mut groups = Vec::new();
    for ev in FileEvents::open(&RealFs, &dir.path().join("binlog-000000")).unwrap() {
        let ev = ev.unwrap();
        match &ev.event {
            Event::FormatDescription(_) => fde = ev.raw,
            Event::TableMap(m) if m.db == "d" => groups.push(ev.raw),
            Event::Rows(_) if !groups.is_empty() => groups.last_mut().unwrap().extend(ev.raw),
            _ => {}
        }
    }
    assert_eq!(groups.len(), 3);
    (fde, groups)
}

#[test]
fn binlog_statements_replay_row_events_under_their_gtids() {
    let (fde, groups) = logged_events();
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut s = session(&db, "root");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, TABLE);

    // Rows before any format description: 1609.
    let rows = format!("BINLOG '\n{}\n'", base64(&groups[0]));
    assert_eq!(s.query(&rows).unwrap_err().code, 1609);
    // Not base64: 1575.
    assert_eq!(s.query("BINLOG 'a*b'").unwrap_err().code, 1575);

    // What mariadb-binlog prints for each transaction.
    exec(&mut s, &format!("BINLOG '\n{}\n'", base64(&fde)));
    exec(&mut s, "/*!*/");
    exec(&mut s, "SET @@session.sql_mode=1411383296");
    assert_eq!(
        scalar(&mut s, "SELECT @@sql_mode"),
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
    );
    exec(
        &mut s,
        "SET @@session.pseudo_thread_id=5, @@session.check_constraint_checks=1, \
         @@session.sql_if_exists=0, @@session.explicit_defaults_for_timestamp=1, \
         @@session.system_versioning_insert_history=0",
    );
    exec(
        &mut s,
        "SET @@session.character_set_client=utf8mb4, @@session.collation_connection=45, \
         @@session.collation_server=45, @@session.lc_time_names=0",
    );
    assert_eq!(
        scalar(&mut s, "SELECT @@collation_connection"),
        "utf8mb4_general_ci"
    );
    for (i, g) in groups.iter().enumerate() {
        exec(
            &mut s,
            "SET @@session.server_id=7, @@session.gtid_domain_id=3",
        );
        exec(&mut s, &format!("SET @@session.gtid_seq_no={}", 100 + i));
        exec(&mut s, "START TRANSACTION");
        // As two fragments, the form mariadb-binlog uses for large events.
        let text = base64(g);
        let (a, b) = text.split_at(text.len() / 2);
        exec(&mut s, &format!("SET @f0 = '{a}', @f1 = '{b}'"));
        exec(&mut s, "BINLOG @f0, @f1");
        exec(&mut s, "COMMIT");
    }
    assert_eq!(scalar(&mut s, "SELECT @@session.server_id"), "UInt(7)");
    assert_eq!(scalar(&mut s, "SELECT @@global.server_id"), "UInt(1)");
    // Domain 0 has this server's own DDL; domain 3 the replayed transactions.
    let pos = scalar(&mut s, "SELECT @@gtid_binlog_pos");
    assert!(
        pos.starts_with("0-1-") && pos.ends_with(",3-7-102"),
        "{pos}"
    );
    assert_eq!(
        scalar(&mut s, "SELECT GROUP_CONCAT(id, v) FROM d.t"),
        "2TWO"
    );

    // A rows event that does not apply fails its statement only.
    exec(&mut s, "START TRANSACTION");
    exec(&mut s, "INSERT INTO d.t VALUES (5, 'five')");
    let e = s
        .query(&format!("BINLOG '{}'", base64(&groups[2])))
        .unwrap_err();
    assert!(e.message.contains("Could not execute"), "{e:?}");
    exec(&mut s, "COMMIT");
    assert_eq!(scalar(&mut s, "SELECT COUNT(*) FROM d.t"), "Int(2)");

    // SUPER (MariaDB: BINLOG REPLAY) for BINLOG and the session's GTID parts.
    exec(&mut s, "CREATE USER plain@localhost");
    exec(&mut s, "GRANT ALL ON d.* TO plain@localhost");
    let mut p = session(&db, "plain");
    assert_eq!(p.query("BINLOG 'AAAA'").unwrap_err().code, 1227);
    assert_eq!(p.query("SET SESSION server_id = 9").unwrap_err().code, 1227);
    assert_eq!(s.query("SET GLOBAL server_id = 9").unwrap_err().code, 1238);
    assert_eq!(
        s.query("SET @@session.explicit_defaults_for_timestamp=0")
            .unwrap_err()
            .code,
        1231
    );
}
