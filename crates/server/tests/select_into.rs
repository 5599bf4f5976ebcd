//! SELECT ... INTO OUTFILE / DUMPFILE / @var against onelogd, compared with a real MariaDB
//! 10.11: the files both write for the same rows and FIELDS / LINES options are compared
//! byte for byte, and LOAD DATA with the same options reads onelog's file back into an
//! identical table.

mod common;

use std::path::Path;

use common::mariadb::{socket_opts, MariaDb};
use common::Server;
use mysql::prelude::Queryable;

const SETUP: &[&str] = &[
    "DROP DATABASE IF EXISTS so",
    "CREATE DATABASE so",
    "CREATE TABLE so.t (id INT PRIMARY KEY, s VARCHAR(40), n DECIMAL(10,3), f DOUBLE, \
     d DATE, dt DATETIME(3), tm TIME, b VARBINARY(10), u BIGINT UNSIGNED)",
    "INSERT INTO so.t VALUES \
     (1, 'plain', 1.5, 0.25, '2024-02-29', '2024-02-29 13:05:09.120', '-01:02:03', 'ab', 18446744073709551615), \
     (2, 'tab\\there, comma, \"quote\"', -2, -1e-3, NULL, NULL, NULL, NULL, 0), \
     (3, 'newline\\nand \\\\ backslash', 0, 12345.5, '1999-12-31', '2000-01-01 00:00:00', '838:59:59', X'00FF0A09', 5), \
     (4, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL), \
     (5, '', 123456.789, 1e20, '0000-00-00', '0000-00-00 00:00:00', '00:00:00', 'N', 7), \
     (6, 'NULL', 1, 3, '2020-01-01', '2020-01-01 01:01:01.5', '12:00', 'x,y', 1)",
];

/// FIELDS / LINES options and whether LOAD DATA reads the file back to the same rows.
const FORMATS: &[(&str, bool)] = &[
    ("", true),
    (
        "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n'",
        true,
    ),
    ("FIELDS TERMINATED BY ',' ENCLOSED BY '\"'", true),
    // Escaping by the enclosing character: NUL and newlines do not read back.
    (
        "FIELDS TERMINATED BY ';' ENCLOSED BY '\\'' ESCAPED BY '\\''",
        false,
    ),
    (
        "FIELDS ESCAPED BY '' LINES STARTING BY '>' TERMINATED BY '|'",
        false,
    ),
    ("FIELDS TERMINATED BY 'n'", false),
    (
        "FIELDS TERMINATED BY '.' OPTIONALLY ENCLOSED BY '\"'",
        false,
    ),
    (
        "FIELDS TERMINATED BY '||' LINES TERMINATED BY '<eol>'",
        true,
    ),
];

fn warnings(c: &mut mysql::Conn) -> Vec<String> {
    let w: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
    w.into_iter()
        .map(|(l, n, m)| format!("{l} {n} {m}"))
        .collect()
}

/// Writes `so.t` with `format` to `file`; the file's bytes, the rows affected and warnings.
fn export(c: &mut mysql::Conn, format: &str, file: &Path) -> (Vec<u8>, u64, Vec<String>) {
    c.query_drop(format!(
        "SELECT * FROM so.t ORDER BY id INTO OUTFILE '{}' {format}",
        file.display()
    ))
    .unwrap_or_else(|e| panic!("{format}: {e}"));
    let n = c.affected_rows();
    (std::fs::read(file).unwrap(), n, warnings(c))
}

#[test]
fn outfile_matches_mariadb_and_loads_back() {
    let test = "outfile_matches_mariadb_and_loads_back";
    let files = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(files.path()).unwrap();
    let priv_arg = format!("--secure-file-priv={}", dir.display());
    let Some(maria) = MariaDb::start_with(test, std::slice::from_ref(&priv_arg)) else {
        return;
    };
    let s = Server::start(&[&priv_arg]);
    let mut m = mysql::Conn::new(socket_opts(&maria.socket, None)).unwrap();
    let mut o = s.conn(None);
    for sql in SETUP {
        m.query_drop(*sql).unwrap();
        o.query_drop(*sql).unwrap();
    }
    let original = common::dump_tables(&mut o);
    let mut diffs = Vec::new();
    for (i, (format, round_trip)) in FORMATS.iter().enumerate() {
        let (want, wn, ww) = export(&mut m, format, &dir.join(format!("m{i}.txt")));
        let (got, gn, gw) = export(&mut o, format, &dir.join(format!("o{i}.txt")));
        if (&want, wn, &ww) != (&got, gn, &gw) {
            diffs.push(format!(
                "== {format}\nMariaDB ({wn} rows, {ww:?}):\n{}\nonelog ({gn} rows, {gw:?}):\n{}",
                String::from_utf8_lossy(&want).escape_debug(),
                String::from_utf8_lossy(&got).escape_debug()
            ));
        }
        if *round_trip {
            o.query_drop("DROP TABLE IF EXISTS so.back").unwrap();
            o.query_drop("CREATE TABLE so.back LIKE so.t").unwrap();
            o.query_drop(format!(
                "LOAD DATA INFILE '{}' INTO TABLE so.back {format}",
                dir.join(format!("o{i}.txt")).display()
            ))
            .unwrap();
            let w = warnings(&mut o);
            assert!(w.is_empty(), "{format}: {w:?}");
            o.query_drop("DROP TABLE so.t").unwrap();
            o.query_drop("RENAME TABLE so.back TO so.t").unwrap();
            assert_eq!(common::dump_tables(&mut o), original, "read back: {format}");
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));

    // DUMPFILE: one row's values back to back.
    let q = |i: &str, p: &str| {
        format!(
            "SELECT s, b, n FROM so.t WHERE id = 3 INTO DUMPFILE '{}'",
            dir.join(format!("{p}{i}")).display()
        )
    };
    m.query_drop(q("dump", "m")).unwrap();
    o.query_drop(q("dump", "o")).unwrap();
    assert_eq!(
        std::fs::read(dir.join("mdump")).unwrap(),
        std::fs::read(dir.join("odump")).unwrap()
    );

    // Errors and @variables: the same answers.
    // `{p}`: a file name prefix of each server's own.
    let d = dir.display();
    let cases = [
        format!("SELECT 1 INTO OUTFILE '{d}/{{p}}0.txt'"),
        format!("SELECT * FROM so.t INTO DUMPFILE '{d}/{{p}}two'"),
        "SELECT * FROM so.t INTO OUTFILE '/etc/onelog-test'".to_string(),
        format!("SELECT 1 INTO OUTFILE '{d}/{{p}}x1' FIELDS ENCLOSED BY 'ab'"),
        "SELECT id, s INTO @a, @b FROM so.t WHERE id = 2".to_string(),
        "SELECT id INTO @a FROM so.t WHERE id = 99".to_string(),
        "SELECT id FROM so.t WHERE id = 6 INTO @c".to_string(),
        "SELECT id, s INTO @a FROM so.t".to_string(),
        "SELECT id INTO @a FROM so.t".to_string(),
        // (A query with a table: MariaDB keeps the last statement's conditions for SHOW
        // WARNINGS across statements without one.)
        "SELECT @a, @b, @c FROM so.t WHERE id = 1".to_string(),
    ];
    for sql in &cases {
        let run = |c: &mut mysql::Conn, p: &str| -> String {
            let sql = sql.replace("{p}", p);
            match c.query::<mysql::Row, _>(&sql) {
                Ok(rows) => format!(
                    "ok {} {:?} {:?}",
                    c.affected_rows(),
                    rows.into_iter()
                        .map(|r| format!("{:?}", r.unwrap()))
                        .collect::<Vec<_>>(),
                    warnings(c)
                ),
                Err(mysql::Error::MySqlError(e)) => {
                    format!(
                        "error {} {}",
                        e.code,
                        e.message.replace(&format!("{d}/{p}"), "DIR/")
                    )
                }
                Err(e) => panic!("{sql}: {e}"),
            }
        };
        assert_eq!(run(&mut m, "m"), run(&mut o, "o"), "{sql}");
    }
    s.assert_no_panic();
}
