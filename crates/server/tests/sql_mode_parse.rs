//! sql_mode flags that change how statement text is read, as a client sees them: OK packets
//! carry SERVER_STATUS_NO_BACKSLASH_ESCAPES (0x0200) and SERVER_STATUS_ANSI_QUOTES
//! (0x8000) while the flags are on (as MariaDB 10.11 sends them), and a client library that
//! escapes by that flag round-trips a backslash either way.

mod common;
use common::raw::Raw;
use common::*;
use mysql::prelude::Queryable;

const NO_BACKSLASH_ESCAPES: u16 = 0x0200;
const ANSI_QUOTES: u16 = 0x8000;

/// The status flags of the OK packet answering `sql`.
fn ok_status(r: &mut Raw, sql: &str) -> u16 {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    let ok = r.command(&p);
    assert_eq!(ok[0], 0, "{sql}: {}", String::from_utf8_lossy(&ok));
    // header, affected rows and insert id (one byte each when small), then the status.
    assert!(ok[1] < 0xfb && ok[2] < 0xfb);
    u16::from_le_bytes([ok[3], ok[4]])
}

#[test]
fn status_flags_follow_sql_mode() {
    let srv = Server::start(&[]);
    let mut r = Raw::connect(srv.port, "root");
    let flags = ok_status(&mut r, "SET sql_mode = 'NO_BACKSLASH_ESCAPES'");
    assert_eq!(
        flags & (NO_BACKSLASH_ESCAPES | ANSI_QUOTES),
        NO_BACKSLASH_ESCAPES
    );
    let flags = ok_status(&mut r, "SET sql_mode = 'ANSI_QUOTES'");
    assert_eq!(flags & (NO_BACKSLASH_ESCAPES | ANSI_QUOTES), ANSI_QUOTES);
    let flags = ok_status(&mut r, "SET sql_mode = 'ANSI,NO_BACKSLASH_ESCAPES'");
    assert_eq!(
        flags & (NO_BACKSLASH_ESCAPES | ANSI_QUOTES),
        NO_BACKSLASH_ESCAPES | ANSI_QUOTES
    );
    let flags = ok_status(&mut r, "SET sql_mode = DEFAULT");
    assert_eq!(flags & (NO_BACKSLASH_ESCAPES | ANSI_QUOTES), 0);
    // Session scope only: a global change leaves this session's flags alone.
    let flags = ok_status(&mut r, "SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES'");
    assert_eq!(flags & NO_BACKSLASH_ESCAPES, 0);
    ok_status(&mut r, "SET GLOBAL sql_mode = DEFAULT");
}

/// The mysql crate escapes literals by the status flag it last saw; the stored value is the
/// one it escaped, with the flag on and off.
#[test]
fn client_escaping_round_trips() {
    let srv = Server::start(&[]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE smp").unwrap();
    c.query_drop("CREATE TABLE smp.t (id INT PRIMARY KEY, v VARCHAR(40))")
        .unwrap();
    let value = r"c:\dir\new 'q' \\";
    for (id, mode) in [(1, "NO_BACKSLASH_ESCAPES"), (2, "")] {
        c.query_drop(format!("SET sql_mode = '{mode}'")).unwrap();
        assert_eq!(c.no_backslash_escape(), !mode.is_empty());
        let lit = mysql::Value::from(value).as_sql(c.no_backslash_escape());
        assert_eq!(lit.contains(r"c:\\dir"), mode.is_empty(), "{lit}");
        c.query_drop(format!("INSERT INTO smp.t VALUES ({id}, {lit})"))
            .unwrap();
        let got: Option<String> = c
            .query_first(format!("SELECT v FROM smp.t WHERE id = {id}"))
            .unwrap();
        assert_eq!(got.as_deref(), Some(value), "{mode}");
        let n: Option<u64> = c.query_first(format!("SELECT LENGTH({lit})")).unwrap();
        assert_eq!(n, Some(value.len() as u64), "{mode}");
    }
}
