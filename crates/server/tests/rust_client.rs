//! The Rust `mysql` crate against onelogd: text and prepared (binary protocol) queries
//! with parameters of every type, NULLs, long data, errors, transactions.

mod common;
use common::*;
use mysql::prelude::Queryable;
use mysql::{Params, Row, TxOpts, Value};

fn err_code<T: std::fmt::Debug>(r: mysql::Result<T>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => panic!("expected bytes, got {other:?}"),
    }
}

#[test]
fn rust_mysql_crate() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE r").unwrap();
    c.query_drop("USE r").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, \
         mi MEDIUMINT, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, \
         de DECIMAL(20,6), ch CHAR(5), vc VARCHAR(100), tx MEDIUMTEXT, vb VARBINARY(20), bl LONGBLOB, \
         dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(6))",
    )
    .unwrap();
    let big = insert_rows(&mut c);
    binary_results(&mut c, &big);
    text_results(&mut c);
    typed_parameters(&mut c, &big);
    cached_statement(&mut c);
    errors_and_transactions(&mut c);
    dates(&mut c);

    // Over the unix socket too, and COM_RESET_CONNECTION / COM_CHANGE_USER.
    let opts: mysql::Opts = mysql::OptsBuilder::new()
        .socket(Some(srv.socket.to_str().unwrap()))
        .user(Some("root"))
        .db_name(Some("r"))
        .into();
    let mut s = mysql::Conn::new(opts).unwrap();
    let n: Option<i64> = s
        .exec_first("SELECT COUNT(*) FROM kv WHERE k < ?", (50,))
        .unwrap();
    assert_eq!(n, Some(49));
    s.query_drop("SET @x = 5").unwrap();
    s.reset().unwrap();
    let x: Option<Option<i64>> = s.query_first("SELECT @x").unwrap();
    assert_eq!(x, Some(None));
    drop(s);
    drop(c);
    srv.stop();
}

/// Rows 1-3 of `t` through the binary protocol: every type, all NULLs, the extremes; returns the 3 MB blob of row 1.
fn insert_rows(c: &mut mysql::Conn) -> Vec<u8> {
    let ins = "INSERT INTO t VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let row1: Vec<Value> = vec![
        Value::Int(1),
        Value::Int(-128),
        Value::UInt(255),
        Value::Int(-32768),
        Value::Int(8388607),
        Value::Int(i32::MIN as i64),
        Value::UInt(u32::MAX as u64),
        Value::Int(i64::MIN),
        Value::UInt(u64::MAX),
        Value::Float(1.5),
        Value::Double(-2.5e-300),
        Value::Bytes(b"-12345678901234.123456".to_vec()),
        Value::Bytes(b"ab".to_vec()),
        Value::Bytes("ünï 日本 😀".as_bytes().to_vec()),
        Value::Bytes("x".repeat(70_000).into_bytes()),
        Value::Bytes(vec![0, 255, 39, 92, 0]),
        Value::Bytes(big.clone()),
        Value::Date(2024, 2, 29, 0, 0, 0, 0),
        Value::Date(1999, 12, 31, 23, 59, 58, 123456),
        Value::Date(2020, 6, 1, 12, 30, 0, 500000),
        Value::Time(true, 2, 3, 4, 5, 6),
    ];
    let n = c.exec_iter(ins, row1.clone()).unwrap().affected_rows();
    assert_eq!(n, 1);
    // All NULLs but the key, then the maxima, with the same statement (types resent).
    let mut row2 = vec![Value::NULL; 21];
    row2[0] = Value::Int(2);
    c.exec_drop(ins, row2).unwrap();
    let row3: Vec<Value> = vec![
        3i64.into(),
        127i64.into(),
        0u64.into(),
        32767i64.into(),
        (-8388608i64).into(),
        (i32::MAX as i64).into(),
        0u64.into(),
        i64::MAX.into(),
        0u64.into(),
        Value::Float(0.0),
        Value::Double(1.7976931348623157e308),
        "0.000001".into(),
        "abcde".into(),
        "".into(),
        "".into(),
        Value::Bytes(vec![]),
        Value::NULL,
        Value::Date(1000, 1, 1, 0, 0, 0, 0),
        Value::Date(9999, 12, 31, 23, 59, 59, 999999),
        Value::NULL,
        Value::Time(false, 34, 22, 59, 59, 0),
    ];
    c.exec_drop(ins, row3).unwrap();
    big
}

/// Rows of `t` read back through the binary protocol.
fn binary_results(c: &mut mysql::Conn, big: &[u8]) {
    // Binary protocol results.
    let rows: Vec<Row> = c.exec("SELECT * FROM t WHERE id = ?", (1,)).unwrap();
    assert_eq!(rows.len(), 1);
    let r = rows[0].clone().unwrap();
    assert_eq!(r[0], Value::Int(1));
    assert_eq!(r[1], Value::Int(-128));
    assert_eq!(r[2], Value::Int(255), "tinyint unsigned as binary value");
    assert_eq!(r[3], Value::Int(-32768));
    assert_eq!(r[4], Value::Int(8388607));
    assert_eq!(r[5], Value::Int(i32::MIN as i64));
    assert_eq!(r[6], Value::Int(u32::MAX as i64));
    assert_eq!(r[7], Value::Int(i64::MIN));
    assert_eq!(r[8], Value::UInt(u64::MAX));
    assert_eq!(r[9], Value::Float(1.5));
    assert_eq!(r[10], Value::Double(-2.5e-300));
    assert_eq!(bytes(&r[11]), b"-12345678901234.123456");
    assert_eq!(bytes(&r[12]), b"ab");
    assert_eq!(bytes(&r[13]), "ünï 日本 😀".as_bytes());
    assert_eq!(bytes(&r[14]).len(), 70_000);
    assert_eq!(bytes(&r[15]), vec![0, 255, 39, 92, 0]);
    assert!(bytes(&r[16]) == big, "3 MB blob round trip");
    assert_eq!(r[17], Value::Date(2024, 2, 29, 0, 0, 0, 0));
    assert_eq!(r[18], Value::Date(1999, 12, 31, 23, 59, 58, 123456));
    assert_eq!(r[19], Value::Date(2020, 6, 1, 12, 30, 0, 500000));
    assert_eq!(r[20], Value::Time(true, 2, 3, 4, 5, 6));
    let r: Row = c
        .exec_first("SELECT * FROM t WHERE id = ?", (2,))
        .unwrap()
        .unwrap();
    let r = r.unwrap();
    assert_eq!(r[0], Value::Int(2));
    assert!(r[1..].iter().all(|v| *v == Value::NULL), "{r:?}");
    let r: Row = c
        .exec_first("SELECT * FROM t WHERE id = ?", (3,))
        .unwrap()
        .unwrap();
    let r = r.unwrap();
    assert_eq!(r[7], Value::Int(i64::MAX));
    assert_eq!(r[10], Value::Double(1.7976931348623157e308));
    assert_eq!(bytes(&r[11]), b"0.000001");
    assert_eq!(r[16], Value::NULL);
    assert_eq!(r[17], Value::Date(1000, 1, 1, 0, 0, 0, 0));
    assert_eq!(r[18], Value::Date(9999, 12, 31, 23, 59, 59, 999999));
    assert_eq!(r[20], Value::Time(false, 34, 22, 59, 59, 0));
}

/// Row 1 of `t` through the text protocol: everything as text.
fn text_results(c: &mut mysql::Conn) {
    // Text protocol results: everything as text.
    let r: Row = c
        .query_first("SELECT id, tu, bu, f, d, de, dt, dtm, ts, tm, ch, vb FROM t WHERE id = 1")
        .unwrap()
        .unwrap();
    let r: Vec<Value> = r.unwrap();
    let text: Vec<String> = r
        .iter()
        .map(|v| String::from_utf8_lossy(&bytes(v)).into_owned())
        .collect();
    assert_eq!(
        text,
        [
            "1",
            "255",
            "18446744073709551615",
            "1.5",
            "-2.5e-300",
            "-12345678901234.123456",
            "2024-02-29",
            "1999-12-31 23:59:58.123456",
            "2020-06-01 12:30:00.500",
            "-51:04:05.000006",
            "ab",
            "\0\u{FFFD}'\\\0"
        ]
    );
}

/// Typed parameters in expressions, named parameters, NULL comparisons.
fn typed_parameters(c: &mut mysql::Conn, big: &[u8]) {
    // Typed parameters in expressions, named params, NULL comparisons.
    let v: Option<(i64, Option<i64>, String)> = c
        .exec_first(
            "SELECT ? + 1, ? , CONCAT(?, '-', ?)",
            (41, Value::NULL, "a", 7),
        )
        .unwrap();
    assert_eq!(v, Some((42, None, "a-7".to_string())));
    let ids: Vec<i32> = c
        .exec(
            "SELECT id FROM t WHERE bi > :lo AND vc IS NOT NULL ORDER BY id",
            Params::from(vec![("lo".to_string(), Value::Int(0))]),
        )
        .unwrap();
    assert_eq!(ids, vec![3]);
    let ids: Vec<i32> = c
        .exec(
            "SELECT id FROM t WHERE dtm BETWEEN ? AND ? ORDER BY id",
            (
                Value::Date(1999, 1, 1, 0, 0, 0, 0),
                Value::Date(2100, 1, 1, 0, 0, 0, 0),
            ),
        )
        .unwrap();
    assert_eq!(ids, vec![1]);
    let n: Option<i64> = c
        .exec_first("SELECT COUNT(*) FROM t WHERE bl = ?", (big.to_vec(),))
        .unwrap();
    assert_eq!(n, Some(1));
}

/// Many executions of one cached statement; window functions over its rows.
fn cached_statement(c: &mut mysql::Conn) {
    // Many executions of one cached statement.
    c.query_drop("CREATE TABLE kv (k BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    let stmt = c.prep("INSERT INTO kv (v) VALUES (?)").unwrap();
    for i in 0..200 {
        let v = if i % 7 == 0 {
            Value::NULL
        } else {
            Value::from(format!("v{i}"))
        };
        c.exec_drop(&stmt, (v,)).unwrap();
        assert_eq!(c.last_insert_id(), i + 1);
    }
    c.close(stmt).unwrap();
    let (n, nn): (i64, i64) = c
        .query_first("SELECT COUNT(*), COUNT(v) FROM kv")
        .unwrap()
        .unwrap();
    assert_eq!((n, nn), (200, 200 - 29));
    let upd = c
        .exec_iter("UPDATE kv SET v = ? WHERE k <= ?", ("u", 10))
        .unwrap()
        .affected_rows();
    assert_eq!(upd, 10);

    let ks: Vec<i64> = c
        .exec("SELECT k FROM kv ORDER BY k DESC LIMIT ? OFFSET ?", (3, 1))
        .unwrap();
    assert_eq!(ks, vec![199, 198, 197]);
    // Window functions through the binary protocol (BIGINT and DOUBLE values).
    type WinRow = (i64, i64, f64, Option<i64>);
    let w: Vec<WinRow> = c
        .exec(
            "SELECT k, ROW_NUMBER() OVER (ORDER BY k DESC), PERCENT_RANK() OVER (ORDER BY k), \
             LAG(k, 2) OVER (ORDER BY k) FROM kv WHERE k <= ? ORDER BY k",
            (5,),
        )
        .unwrap();
    assert_eq!(
        w,
        vec![
            (1, 5, 0.0, None),
            (2, 4, 0.25, None),
            (3, 3, 0.5, Some(1)),
            (4, 2, 0.75, Some(2)),
            (5, 1, 1.0, Some(3))
        ]
    );
}

/// Errors through both protocols, then transactions.
fn errors_and_transactions(c: &mut mysql::Conn) {
    // Errors, both protocols.
    assert_eq!(
        err_code(c.query_drop("INSERT INTO kv VALUES (1, 'dup')")),
        1062
    );
    assert_eq!(
        err_code(c.exec_drop("INSERT INTO kv VALUES (?, 'dup')", (1,))),
        1062
    );
    assert_eq!(err_code(c.query_drop("SELECT * FROM nosuch")), 1146);
    assert_eq!(err_code(c.prep("SELECT * FROM nosuch WHERE a = ?")), 1146);
    assert_eq!(err_code(c.prep("SELEC ?")), 1064);
    assert_eq!(
        err_code(c.exec_drop("INSERT INTO t (id, ti) VALUES (?, ?)", (9, 1000))),
        1264
    );
    // The connection is still fine.
    let one: Option<i64> = c.query_first("SELECT 1").unwrap();
    assert_eq!(one, Some(1));

    // Transactions.
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.exec_drop("DELETE FROM kv WHERE k > ?", (100,)).unwrap();
    tx.rollback().unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM kv").unwrap();
    assert_eq!(n, Some(200));
    let mut tx = c.start_transaction(TxOpts::default()).unwrap();
    tx.exec_drop("DELETE FROM kv WHERE k > ?", (100,)).unwrap();
    tx.commit().unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM kv").unwrap();
    assert_eq!(n, Some(100));
}

/// Date arithmetic and calendar functions through the binary protocol: typed DATE
/// parameters and DATE / DATETIME / TIME / integer results.
fn dates(c: &mut mysql::Conn) {
    // Date arithmetic and calendar functions through the binary protocol: typed DATE
    // parameters and DATE / DATETIME / TIME / integer results.
    let d = |y: u16, m: u8, day: u8| Value::Date(y, m, day, 0, 0, 0, 0);
    let row: Row = c
        .exec_first(
            "SELECT DATE_FORMAT(? + INTERVAL ? DAY, '%Y-%m-%d %W'), \
             TIMESTAMPDIFF(HOUR, ?, '2024-03-01'), STR_TO_DATE(?, '%d/%m/%Y'), \
             DATE '2024-01-31' + INTERVAL ? MONTH, TIMEDIFF(?, '09:00:30'), \
             TIMESTAMP('2024-01-01', '10:00:00')",
            (
                d(2024, 1, 31),
                30,
                d(2024, 2, 29),
                "06/05/2024",
                1,
                "10:00:00",
            ),
        )
        .unwrap()
        .unwrap();
    assert_eq!(bytes(&row[0]), b"2024-03-01 Friday");
    assert_eq!(row[1], Value::Int(24));
    assert_eq!(row[2], d(2024, 5, 6));
    assert_eq!(row[3], d(2024, 2, 29));
    assert_eq!(row[4], Value::Time(false, 0, 0, 59, 30, 0));
    assert_eq!(row[5], Value::Date(2024, 1, 1, 10, 0, 0, 0));
}
