//! COM_STMT_BULK_EXECUTE (MariaDB's array binding of a prepared statement), sent byte for
//! byte by a raw client to onelogd and to MariaDB 10.11: the same requests must get the
//! same answers (affected rows, first insert id, error codes) and leave the same rows.
//! Covered: types sent and reused, NULL indicators, a prepared UPDATE, a duplicate key in
//! the middle of an autocommit bulk (all or nothing), a SELECT (refused), an unknown
//! statement id, the last-prepared id 0xFFFFFFFF, and a client that did not announce the
//! capability.

mod common;
use common::mariadb::MariaDb;
use common::raw::{err_of, Raw};
use common::*;
use mysql::prelude::Queryable;

const TC_LONG: u8 = 3;
const TC_VAR_STRING: u8 = 253;
/// MARIADB_CLIENT_STMT_BULK_OPERATIONS (1 << 34) in the extended-capability word.
const EXT_BULK: u32 = 1 << 2;

/// Reads a lenenc integer at `*at`.
fn lenenc(p: &[u8], at: &mut usize) -> u64 {
    let b = p[*at];
    *at += 1;
    let n = match b {
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        _ => return b as u64,
    };
    let mut v = 0u64;
    for i in 0..n {
        v |= (p[*at + i] as u64) << (8 * i);
    }
    *at += n;
    v
}

/// An answer as text: `ok affected=N id=N` or `err CODE`.
fn answer(p: &[u8]) -> String {
    match p[0] {
        0x00 => {
            let mut at = 1;
            let affected = lenenc(p, &mut at);
            let id = lenenc(p, &mut at);
            format!("ok affected={affected} id={id}")
        }
        0xFF => format!("err {}", err_of(p).0),
        other => format!("packet 0x{other:02x}"),
    }
}

/// COM_STMT_PREPARE; reads the parameter and column definitions. Returns the id.
fn prepare(r: &mut Raw, sql: &str) -> u32 {
    let mut p = vec![0x16];
    p.extend_from_slice(sql.as_bytes());
    let ok = r.command(&p);
    assert_eq!(ok[0], 0, "prepare {sql}: {}", String::from_utf8_lossy(&ok));
    let id = u32::from_le_bytes(ok[1..5].try_into().unwrap());
    let cols = u16::from_le_bytes([ok[5], ok[6]]);
    let params = u16::from_le_bytes([ok[7], ok[8]]);
    for n in [params, cols] {
        if n > 0 {
            for _ in 0..n {
                r.read();
            }
            assert_eq!(r.read()[0], 0xFE, "EOF after definitions");
        }
    }
    id
}

/// One parameter of a bulk row.
enum P {
    Int(i32),
    Str(&'static str),
    Null,
}

/// A COM_STMT_BULK_EXECUTE packet (types sent when `types` is given).
fn bulk(id: u32, types: Option<&[u8]>, rows: &[&[P]]) -> Vec<u8> {
    let mut p = vec![0xFA];
    p.extend_from_slice(&id.to_le_bytes());
    let flags: u16 = if types.is_some() { 128 } else { 0 };
    p.extend_from_slice(&flags.to_le_bytes());
    if let Some(t) = types {
        for &code in t {
            p.extend_from_slice(&[code, 0]);
        }
    }
    for row in rows {
        for v in row.iter() {
            match v {
                P::Int(i) => {
                    p.push(0);
                    p.extend_from_slice(&i.to_le_bytes());
                }
                P::Str(s) => {
                    p.push(0);
                    p.push(s.len() as u8);
                    p.extend_from_slice(s.as_bytes());
                }
                P::Null => p.push(1),
            }
        }
    }
    p
}

/// Runs the whole exchange against the server on `port` (database `b` exists); returns
/// its transcript.
fn exchange(port: u16, conn: &mut mysql::Conn) -> Vec<String> {
    let mut out = Vec::new();
    let (mut r, _) = Raw::connect_ext(port, "root", 0, EXT_BULK, Some("b"));
    r.query("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10), n INT UNIQUE)");
    let ins = prepare(&mut r, "INSERT INTO t (v, n) VALUES (?, ?)");
    let types = [TC_VAR_STRING, TC_LONG];
    let rows: &[&[P]] = &[
        &[P::Str("a"), P::Int(1)],
        &[P::Str("b"), P::Int(2)],
        &[P::Null, P::Int(3)],
    ];
    out.push(answer(&r.command(&bulk(ins, Some(&types), rows))));
    // Types from the previous bulk.
    out.push(answer(&r.command(&bulk(
        ins,
        None,
        &[&[P::Str("d"), P::Int(4)]],
    ))));
    // A duplicate in the middle: the whole bulk is one statement.
    let dup: &[&[P]] = &[
        &[P::Str("e"), P::Int(5)],
        &[P::Str("f"), P::Int(1)],
        &[P::Str("g"), P::Int(6)],
    ];
    out.push(answer(&r.command(&bulk(ins, Some(&types), dup))));
    // The statement prepared last.
    let upd = prepare(&mut r, "UPDATE t SET v = ? WHERE n = ?");
    let set: &[&[P]] = &[
        &[P::Str("x"), P::Int(1)],
        &[P::Str("y"), P::Int(2)],
        &[P::Str("z"), P::Int(99)],
    ];
    out.push(answer(&r.command(&bulk(u32::MAX, Some(&types), set))));
    out.push(answer(&r.command(&bulk(
        upd,
        None,
        &[&[P::Null, P::Int(4)]],
    ))));
    // Not an INSERT/UPDATE/DELETE; an unknown statement.
    let sel = prepare(&mut r, "SELECT ?");
    out.push(answer(&r.command(&bulk(
        sel,
        Some(&[TC_LONG]),
        &[&[P::Int(1)]],
    ))));
    out.push(answer(&r.command(&bulk(
        999,
        Some(&[TC_LONG]),
        &[&[P::Int(1)]],
    ))));
    // Inside a transaction the rows join it (and go with its ROLLBACK).
    // The id is not compared: MariaDB's InnoDB reserved ids for all three rows of the
    // failed bulk above, onelog for the rows it tried.
    r.query("BEGIN");
    let a = answer(&r.command(&bulk(ins, Some(&types), &[&[P::Str("t"), P::Int(7)]])));
    out.push(a.split(" id=").next().unwrap_or_default().to_string());
    r.query("ROLLBACK");
    // A client that did not announce the capability.
    let (mut plain, _) = Raw::connect_ext(port, "root", 0, 0, Some("b"));
    let ins2 = prepare(&mut plain, "INSERT INTO t (v, n) VALUES (?, ?)");
    out.push(answer(&plain.command(&bulk(
        ins2,
        Some(&types),
        &[&[P::Str("h"), P::Int(8)]],
    ))));
    let rows: Vec<(u32, Option<String>, Option<i32>)> =
        conn.query("SELECT id, v, n FROM b.t ORDER BY id").unwrap();
    out.push(format!("{rows:?}"));
    out
}

#[test]
fn bulk_execute_answers_as_mariadb() {
    let t = "bulk_execute_answers_as_mariadb";
    let port = free_port();
    let Some(maria) = MariaDb::start_with(
        t,
        &["--skip-grant-tables".to_string(), format!("--port={port}")],
    ) else {
        return;
    };
    let mut mc = maria.conn(None);
    mc.query_drop("CREATE DATABASE b CHARACTER SET utf8mb4")
        .unwrap();
    let theirs = exchange(port, &mut mc);
    let s = Server::start(&[]);
    let mut oc = s.conn(None);
    oc.query_drop("CREATE DATABASE b").unwrap();
    let ours = exchange(s.port, &mut oc);
    assert_eq!(ours, theirs);
    // The exchange did what it says (not only the same on both sides).
    assert!(ours[0].starts_with("ok affected=3"), "{ours:?}");
    s.assert_no_panic();
}
