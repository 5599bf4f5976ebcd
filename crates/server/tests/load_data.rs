//! LOAD DATA [LOCAL] INFILE against onelogd, compared with a real MariaDB 10.11 on the same
//! files: the statement's outcome (rows affected, "Records: ...", the error), SHOW WARNINGS
//! and the table afterwards, for the formats, conversions, duplicates and errors of
//! `cases()`. Then what only onelog is checked for (MariaDB's answers are in the
//! comments): privileges, LOCAL refused, a client that sends nothing, the connection after a
//! failed LOCAL load, the binlog events of a load, a large file, and `mariadb-import`.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::mariadb::{socket_opts, MariaDb};
use common::{have, run, Server};
use mysql::prelude::Queryable;
use mysql::{LocalInfileHandler, OptsBuilder};

/// Connection options that serve LOAD DATA LOCAL from the local file system.
fn with_local_files(opts: mysql::Opts) -> mysql::Opts {
    OptsBuilder::from_opts(opts)
        .local_infile_handler(Some(LocalInfileHandler::new(|name, out| {
            let name = String::from_utf8_lossy(name).into_owned();
            let data = std::fs::read(&name)?;
            out.write_all(&data)?;
            Ok(())
        })))
        .into()
}

/// What a statement did, as a client sees it.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Ok {
        affected: u64,
        info: String,
        warnings: Vec<String>,
    },
    Err {
        code: u16,
        message: String,
    },
}

fn outcome(c: &mut mysql::Conn, sql: &str) -> Outcome {
    match c.query_drop(sql) {
        Ok(()) => {
            let affected = c.affected_rows();
            let info = c.info_str().into_owned();
            let warnings: Vec<(String, u32, String)> = c.query("SHOW WARNINGS").unwrap();
            Outcome::Ok {
                affected,
                info,
                warnings: warnings
                    .into_iter()
                    .map(|(l, n, m)| format!("{l} {n} {m}"))
                    .collect(),
            }
        }
        Err(mysql::Error::MySqlError(e)) => Outcome::Err {
            code: e.code,
            message: e.message,
        },
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The rows of `t`, in order, as text.
fn rows(c: &mut mysql::Conn, t: &str) -> Vec<String> {
    let q = format!("SELECT * FROM {t}");
    let r: Vec<mysql::Row> = match c.query(&q) {
        Ok(r) => r,
        Err(e) => return vec![format!("{e}")],
    };
    let n = r.first().map_or(1, |r| r.len());
    let order: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    let r: Vec<mysql::Row> = c
        .query(format!("{q} ORDER BY {}", order.join(",")))
        .unwrap();
    r.into_iter()
        .map(|r| {
            r.unwrap()
                .into_iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect()
}

/// One comparison: a table, a file, and statements run in order (`{f}`: the file's path).
struct Case {
    name: &'static str,
    setup: &'static str,
    data: &'static [u8],
    statements: &'static [&'static str],
}

const T4: &str = "CREATE TABLE t (a INT NOT NULL DEFAULT 7, b VARCHAR(3), c DATE, d INT DEFAULT 5)";
const TSV: &[u8] = b"1\tabc\t2020-01-01\n2\t\\N\t\n3\txyz\n4\ta\tb\tc\nx5\t12abc\t2020-13-01\n\\N\tq\t2021-01-01\n6\ta\t2020-02-02\t1\t\n7\tb\t2020-02-03\t1\tmore\n";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "tab-separated defaults, non-strict",
            setup: T4,
            data: TSV,
            statements: &["SET sql_mode = ''", "LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "tab-separated defaults, strict",
            setup: T4,
            data: TSV,
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "LOCAL in strict mode gives warnings",
            setup: T4,
            data: TSV,
            statements: &["LOAD DATA LOCAL INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "LOCAL REPLACE keeps strict mode",
            setup: T4,
            data: TSV,
            statements: &["LOAD DATA LOCAL INFILE '{f}' REPLACE INTO TABLE t"],
        },
        Case {
            name: "CSV, optionally enclosed",
            setup: "CREATE TABLE t (a INT, b VARCHAR(20), c VARCHAR(20), d DOUBLE, e DECIMAL(8,2))",
            data: b"1,\"x,y\",\"say \"\"hi\"\"\",1.5,2.345\n2,\"multi\nline\",NULL,1e3,-1\n3,\\N,\"\\N\",abc,12.5x\n4,\"NULL\",\"a\\\"b\",,\n",
            statements: &[
                "SET sql_mode = ''",
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'",
            ],
        },
        Case {
            name: "CRLF lines, a header skipped",
            setup: "CREATE TABLE t (a INT, b VARCHAR(10))",
            data: b"a,b\r\n1,one\r\n2,two\r\n\r\n3,three",
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES",
            ],
        },
        Case {
            name: "lines starting by a prefix",
            setup: "CREATE TABLE t (a INT, b VARCHAR(10))",
            data: b"junk xxx1\tone\nno prefix here\nxxx2\ttwo\nxxx3\n",
            statements: &[
                "SET sql_mode = ''",
                "LOAD DATA INFILE '{f}' INTO TABLE t LINES STARTING BY 'xxx'",
            ],
        },
        Case {
            name: "terminators of two bytes",
            setup: "CREATE TABLE t (a INT, b VARCHAR(10), c VARCHAR(10))",
            data: b"1||a|b||c##2||d#e||f##3||##",
            statements: &[
                "SET sql_mode = ''",
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY '||' LINES TERMINATED BY '##'",
            ],
        },
        Case {
            name: "variables and SET",
            setup: "CREATE TABLE t (a INT NOT NULL, b VARCHAR(10), c VARCHAR(20), d INT NOT NULL)",
            data: b"1\tone\tx\n2\ttwo\t\\N\n3\n",
            statements: &[
                "SET sql_mode = ''",
                "LOAD DATA INFILE '{f}' INTO TABLE t (@a, b, @c) SET a = @a * 2, c = CONCAT(@c, '!'), d = NULL",
                "SELECT @a, @c",
            ],
        },
        Case {
            name: "SET NULL into NOT NULL, strict",
            setup: "CREATE TABLE t (a INT NOT NULL, d INT NOT NULL)",
            data: b"1\n2\n",
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t (@x) SET a = @x, d = NULL"],
        },
        Case {
            name: "a column without a default outside the list",
            setup: "CREATE TABLE t (a INT, b INT NOT NULL, c INT DEFAULT 3)",
            data: b"1\n2\n",
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t (a)"],
        },
        Case {
            name: "duplicates: error, IGNORE, REPLACE",
            setup: "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(5))",
            data: b"1\t\\N\n1\tb\n2\tc\n",
            statements: &[
                "INSERT INTO t VALUES (2, 'old')",
                "LOAD DATA INFILE '{f}' INTO TABLE t",
                "LOAD DATA INFILE '{f}' IGNORE INTO TABLE t",
                "LOAD DATA INFILE '{f}' REPLACE INTO TABLE t",
                "LOAD DATA INFILE '{f}' REPLACE INTO TABLE t",
                "LOAD DATA LOCAL INFILE '{f}' INTO TABLE t",
            ],
        },
        Case {
            name: "REPLACE over two unique keys",
            setup: "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(5), c INT, UNIQUE KEY kb (b))",
            data: b"1\tx\t1\n2\tx\t2\n3\ty\t3\n1\ty\t4\n",
            statements: &[
                "INSERT INTO t VALUES (9, 'y', 0)",
                "LOAD DATA INFILE '{f}' REPLACE INTO TABLE t",
            ],
        },
        Case {
            name: "auto-increment",
            setup: "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))",
            data: b"\\N\ta\n0\tb\n5\tc\n\\N\td\n",
            // (Not a second load: InnoDB reserves auto-increment values for a load in
            // growing batches, and the next value after it follows the last batch.)
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t",
                "SELECT LAST_INSERT_ID()",
            ],
        },
        Case {
            name: "escapes",
            setup: "CREATE TABLE t (a INT, b VARBINARY(20))",
            data: b"1\ta\\tb\\nc\n2\tq\\\\r\\0s\\Zt\n3\tlast\\\nline\n4\tx\\y\n5\t\\N\n6\tN\n",
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t",
                "SELECT a, HEX(b) FROM t ORDER BY a",
            ],
        },
        Case {
            name: "no escape character",
            setup: "CREATE TABLE t (a INT, b VARCHAR(10))",
            data: b"1\t\\N\n2\ta\\tb\n",
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t FIELDS ESCAPED BY ''"],
        },
        Case {
            name: "escape character equal to the enclosure",
            setup: "CREATE TABLE t (a INT, b VARCHAR(20))",
            data: b"1,\"a\"\"b\"\n2,\"c\\nd\"\n",
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' ESCAPED BY '\"'",
            ],
        },
        Case {
            name: "types and their warnings",
            setup: "CREATE TABLE t (a TINYINT UNSIGNED, b BIGINT, c DATETIME(6), d TIME, e CHAR(3), f DECIMAL(5,2), g FLOAT, h TEXT)",
            data: b"-1\t99999999999999999999\t2020-01-02 03:04:05.123456\t-12:34:56\tabcd\t1.005\t1.5\tok\n300\t12\t2020-02-30\t25:00:00\tab\t999.999\tx\t\n7\t-5\t0000-00-00 00:00:00\t1:2:3\t\t-0.5\t1e40\t\\N\n",
            statements: &["SET sql_mode = ''", "LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "types, strict",
            setup: "CREATE TABLE t (a TINYINT UNSIGNED, b BIGINT, c DATETIME(6))",
            data: b"1\t2\t2020-01-02 03:04:05\n300\t2\t2020-01-02\n",
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "empty lines, no final newline",
            setup: "CREATE TABLE t (a INT, b VARCHAR(5))",
            data: b"\n1\ta\n\n2\tb",
            statements: &["SET sql_mode = ''", "LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "an empty file",
            setup: "CREATE TABLE t (a INT)",
            data: b"",
            statements: &["LOAD DATA INFILE '{f}' INTO TABLE t"],
        },
        Case {
            name: "latin1 file",
            setup: "CREATE TABLE t (a INT, b VARCHAR(10))",
            data: b"1\tcaf\xe9\n2\t\x80uro\n",
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t CHARACTER SET latin1",
                "SELECT a, HEX(b) FROM t ORDER BY a",
            ],
        },
        Case {
            name: "statement errors",
            setup: "CREATE TABLE t (a INT, b VARCHAR(5))",
            data: b"1\ta\n",
            statements: &[
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS ENCLOSED BY 'ab'",
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS ESCAPED BY '\\\\\\\\'",
                "LOAD DATA INFILE '{f}' INTO TABLE t (a, nosuch)",
                "LOAD DATA INFILE '{f}' INTO TABLE nosuch",
                "LOAD DATA INFILE '{f}.missing' INTO TABLE t",
                "LOAD DATA INFILE '{dir}' INTO TABLE t",
                "LOAD DATA INFILE '/etc/hostname' INTO TABLE t",
                "LOAD DATA INFILE 'relative.txt' INTO TABLE t",
                "LOAD DATA INFILE '{f}' INTO TABLE t CHARACTER SET nosuch",
                "LOAD DATA INFILE '{f}' INTO TABLE t FIELDS TERMINATED BY 'é'",
            ],
        },
    ]
}

/// Runs `case` on one server: a fresh database, its file, its statements.
fn run_case(c: &mut mysql::Conn, case: &Case, dir: &Path, tag: &str) -> Vec<String> {
    let file = dir.join(format!(
        "{tag}_{}.txt",
        case.name.replace([' ', ',', ':'], "_")
    ));
    std::fs::write(&file, case.data).unwrap();
    c.query_drop("DROP DATABASE IF EXISTS ld").unwrap();
    c.query_drop("CREATE DATABASE ld").unwrap();
    c.query_drop("USE ld").unwrap();
    c.query_drop("SET sql_mode = DEFAULT").unwrap();
    c.query_drop(case.setup).unwrap();
    let mut out = Vec::new();
    for s in case.statements {
        let sql = s
            .replace("{f}", file.to_str().unwrap())
            .replace("{dir}", dir.to_str().unwrap());
        if sql.starts_with("SELECT") {
            let r: Vec<mysql::Row> = c.query(&sql).unwrap();
            for r in r {
                let vals: Vec<String> = r.unwrap().iter().map(|v| format!("{v:?}")).collect();
                out.push(format!("{sql} -> {}", vals.join("|")));
            }
            continue;
        }
        let o = outcome(c, &sql);
        out.push(format!("{sql} -> {o:?}"));
        out.push(format!("  rows: {:?}", rows(c, "t")));
    }
    // The statements' text holds the file name; make both servers' lines comparable.
    out.iter()
        .map(|l| l.replace(&format!("{tag}_"), "X_"))
        .collect()
}

#[test]
fn load_data_matches_mariadb() {
    let test = "load_data_matches_mariadb";
    let files = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(files.path()).unwrap();
    let priv_arg = format!("--secure-file-priv={}", dir.display());
    let Some(maria) = MariaDb::start_with(test, std::slice::from_ref(&priv_arg)) else {
        return;
    };
    let s = Server::start(&[&priv_arg]);
    let mut m = mysql::Conn::new(with_local_files(socket_opts(&maria.socket, None))).unwrap();
    let mut o = mysql::Conn::new(with_local_files(s.opts(None))).unwrap();
    let mut diffs = Vec::new();
    for case in cases() {
        let want = run_case(&mut m, &case, &dir, "mariadb");
        let got = run_case(&mut o, &case, &dir, "onelog");
        if want != got {
            diffs.push(format!(
                "== {}\nMariaDB:\n{}\nonelog:\n{}",
                case.name,
                want.join("\n"),
                got.join("\n")
            ));
        }
    }
    s.assert_no_panic();
    assert!(diffs.is_empty(), "{}", diffs.join("\n\n"));
}

/// Privileges, as MariaDB 10.11 answers them (checked by hand against mariadbd):
/// without FILE, LOAD DATA INFILE is 1045 and INTO OUTFILE 1227, LOAD DATA LOCAL works;
/// INSERT (and DELETE for REPLACE) are needed on the table.
#[test]
fn load_data_privileges() {
    let files = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(files.path()).unwrap();
    let f = dir.join("p.txt");
    std::fs::write(&f, "1\ta\n2\tb\n").unwrap();
    let s = Server::start(&[&format!("--secure-file-priv={}", dir.display())]);
    s.sql(
        "CREATE DATABASE p; CREATE TABLE p.t (a INT, b VARCHAR(5)); \
         CREATE USER u@'%' IDENTIFIED BY 'pw'; GRANT SELECT, INSERT ON p.* TO u@'%'; \
         CREATE USER v@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON p.* TO v@'%'; \
         GRANT FILE ON *.* TO v@'%'",
    );
    let conn = |user: &str| {
        let opts = OptsBuilder::from_opts(s.opts(Some("p")))
            .user(Some(user))
            .pass(Some("pw"));
        mysql::Conn::new(with_local_files(opts.into())).unwrap()
    };
    let fname = f.to_str().unwrap();
    let mut u = conn("u");
    let load = format!("LOAD DATA INFILE '{fname}' INTO TABLE t");
    match outcome(&mut u, &load) {
        Outcome::Err { code, message } => {
            assert_eq!(code, 1045);
            assert_eq!(
                message,
                "Access denied for user 'u'@'%' (using password: YES)"
            );
        }
        o => panic!("{o:?}"),
    }
    let local = format!("LOAD DATA LOCAL INFILE '{fname}' INTO TABLE t");
    assert!(matches!(
        outcome(&mut u, &local),
        Outcome::Ok { affected: 2, .. }
    ));
    match outcome(
        &mut u,
        &format!("SELECT * FROM t INTO OUTFILE '{fname}.out'"),
    ) {
        Outcome::Err { code, message } => {
            assert_eq!(code, 1227);
            assert!(message.contains("FILE privilege"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    let replace = format!("LOAD DATA LOCAL INFILE '{fname}' REPLACE INTO TABLE t");
    match outcome(&mut u, &replace) {
        Outcome::Err { code, message } => {
            assert_eq!(code, 1142);
            assert!(message.starts_with("DELETE command denied"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    let mut v = conn("v");
    match outcome(&mut v, &load) {
        Outcome::Err { code, message } => {
            assert_eq!(code, 1142);
            assert!(message.starts_with("INSERT command denied"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    // FILE and SELECT are enough for INTO OUTFILE.
    assert!(matches!(
        outcome(&mut v, &format!("SELECT * FROM t INTO OUTFILE '{fname}.v'")),
        Outcome::Ok { affected: 2, .. }
    ));
    s.assert_no_panic();
}

/// LOCAL refused by the server (`local_infile`) or by the client (no CLIENT_LOCAL_FILES):
/// 4166, as MariaDB; a client that cannot read its file sends an empty one; a LOCAL load
/// that fails in the middle reads the client's file to its end, and the connection goes on.
#[test]
fn local_infile_refused_and_recovered() {
    let t = "local_infile_refused_and_recovered";
    let files = tempfile::tempdir().unwrap();
    let f = files.path().join("l.txt");
    std::fs::write(&f, "1\ta\n2\tb\nx\tc\n").unwrap();
    let mut big = String::new();
    for i in 0..50_000 {
        big.push_str(&format!("{i}\tline {i}\n"));
    }
    big.push_str("bad\tlast\n");
    let fbig = files.path().join("big.txt");
    std::fs::write(&fbig, &big).unwrap();
    let s = Server::start(&[]);
    s.sql("CREATE DATABASE l; CREATE TABLE l.t (a INT, b VARCHAR(10))");
    let fname = f.to_str().unwrap();
    let local = format!("LOAD DATA LOCAL INFILE '{fname}' INTO TABLE t");
    if have(common::MARIADB, t) {
        // The real client: with --local-infile=0 it does not announce the capability.
        let o = s.mariadb(&["--local-infile=0", "l", "-e", &local], "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("ERROR 4166"), "{err}");
        let o = s.mariadb(&["--local-infile=1", "l", "-e", &local], "");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // A file the client cannot read: it sends nothing, and says so itself.
        let missing = format!("LOAD DATA LOCAL INFILE '{fname}.missing' INTO TABLE t; SELECT 1");
        let o = s.mariadb(&["--local-infile=1", "l", "-e", &missing], "");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("not found"), "{err}");
    }
    assert_eq!(s.sql("SELECT COUNT(*) FROM l.t").trim(), "3");
    s.sql("SET GLOBAL local_infile = 0");
    let mut c = mysql::Conn::new(with_local_files(s.opts(Some("l")))).unwrap();
    match outcome(&mut c, &local) {
        Outcome::Err { code, .. } => assert_eq!(code, 4166),
        o => panic!("{o:?}"),
    }
    s.sql("SET GLOBAL local_infile = 1");
    // A client without a file handler sends an empty file.
    let mut bare = mysql::Conn::new(s.opts(Some("l"))).unwrap();
    assert!(matches!(
        outcome(&mut bare, &local),
        Outcome::Ok { affected: 0, .. }
    ));
    // Strict mode and REPLACE: the last line fails the statement after 50,000 rows were
    // read; the rest of the file is read and the connection goes on.
    let fb = fbig.to_str().unwrap();
    match outcome(
        &mut c,
        &format!("LOAD DATA LOCAL INFILE '{fb}' REPLACE INTO TABLE t"),
    ) {
        Outcome::Err { code, message } => {
            assert_eq!(code, 1366, "{message}");
            assert!(message.ends_with("at row 50001"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 3);
    // Several statements in one query: the results before the load go out first.
    c.query_drop(format!("SET @x = 1; {local}; SET @y = 2"))
        .unwrap();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 6);
    let y: u64 = c.query_first("SELECT @y").unwrap().unwrap();
    assert_eq!(y, 2);
    s.assert_no_panic();
}

/// The server's `--skip-local-infile`.
#[test]
fn skip_local_infile_option() {
    let s = Server::start(&["--skip-local-infile"]);
    assert_eq!(s.sql("SELECT @@local_infile").trim(), "0");
    s.sql("CREATE DATABASE l; CREATE TABLE l.t (a INT)");
    let mut c = mysql::Conn::new(with_local_files(s.opts(Some("l")))).unwrap();
    match outcome(&mut c, "LOAD DATA LOCAL INFILE '/dev/null' INTO TABLE t") {
        Outcome::Err { code, message } => {
            assert_eq!(code, 4166);
            assert!(message.contains("local infile capability"), "{message}");
        }
        o => panic!("{o:?}"),
    }
    // Without --secure-file-priv the variable is NULL: no restriction.
    assert_eq!(s.sql("SELECT @@secure_file_priv IS NULL").trim(), "1");
}

/// A load is one transaction of row events, annotated with the statement; a large file
/// is read as it goes and its rows survive a restart.
#[test]
fn load_is_logged_as_one_row_transaction() {
    let files = tempfile::tempdir().unwrap();
    let f = files.path().join("rows.csv");
    let mut data = String::new();
    for i in 0..100_000 {
        data.push_str(&format!("{i},\"name {i}, with a comma\",{}.5\n", i % 977));
    }
    std::fs::write(&f, &data).unwrap();
    let mut s = Server::start(&[]);
    s.sql(
        "CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, name VARCHAR(40), \
         v DECIMAL(8,1), KEY (v))",
    );
    let pos_before = s.sql("SELECT @@gtid_binlog_pos");
    let load = format!(
        "LOAD DATA INFILE '{}' INTO TABLE g.t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'",
        f.display()
    );
    let out = s.mariadb(&["-vv", "-e", &load], "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Records: 100000  Deleted: 0  Skipped: 0  Warnings: 0"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pos_after = s.sql("SELECT @@gtid_binlog_pos");
    let seq = |p: &str| -> u64 { p.trim().rsplit('-').next().unwrap().parse().unwrap() };
    assert_eq!(seq(&pos_after), seq(&pos_before) + 1, "one transaction");
    let events = s.sql("SHOW BINLOG EVENTS");
    let last: Vec<&str> = events
        .lines()
        .skip_while(|l| !l.contains("LOAD DATA INFILE"))
        .collect();
    assert!(!last.is_empty(), "annotated with the statement:\n{events}");
    let writes = last.iter().filter(|l| l.contains("Write_rows")).count();
    assert!(writes > 10, "row events cut at 8 KiB: {writes}");
    assert!(last.iter().any(|l| l.contains("Xid")), "{events}");
    assert!(
        !last
            .iter()
            .any(|l| l.contains("\tQuery\t") && l.contains("LOAD")),
        "not logged as a statement"
    );
    s.kill9();
    s.restart();
    assert_eq!(
        s.sql("SELECT COUNT(*), SUM(v), MAX(name) FROM g.t").trim(),
        "100000\t48740837.0\tname 99999, with a comma"
    );
    assert_eq!(s.sql("CHECK TABLE g.t").trim(), "g.t\tcheck\tstatus\tOK");
}

/// `mariadb-import` (Debian's 10.11 binary), with `--local` and without.
#[test]
fn mariadb_import_works() {
    let t = "mariadb_import_works";
    let import = "/usr/bin/mariadb-import";
    if !have(import, t) {
        return;
    }
    let files = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(files.path()).unwrap();
    let s = Server::start(&[&format!("--secure-file-priv={}", dir.display())]);
    s.sql(
        "CREATE DATABASE imp; CREATE TABLE imp.people (id INT PRIMARY KEY, name VARCHAR(30), \
         born DATE); CREATE TABLE imp.other (id INT PRIMARY KEY, name VARCHAR(30), born DATE)",
    );
    let people = dir.join("people.csv");
    std::fs::write(
        &people,
        "1,\"Ada, Countess\",1815-12-10\n2,Alan,1912-06-23\n3,\"Grace \"\"Amazing\"\"\",\\N\n",
    )
    .unwrap();
    let other: PathBuf = dir.join("other.csv");
    std::fs::write(&other, "7,Edsger,1930-05-11\n").unwrap();
    let args = |local: bool, file: &Path| {
        let mut v = vec![
            "--no-defaults".to_string(),
            format!("--socket={}", s.socket.display()),
            "-uroot".to_string(),
            "--fields-terminated-by=,".to_string(),
            "--fields-optionally-enclosed-by=\"".to_string(),
        ];
        if local {
            v.push("--local".to_string());
        }
        v.push("imp".to_string());
        v.push(file.display().to_string());
        v
    };
    let (ok, out, err) = run(import, &args(true, &people), Duration::from_secs(60));
    assert!(ok, "{out}\n{err}\n{}", s.log_text());
    assert!(
        out.contains("imp.people: Records: 3  Deleted: 0  Skipped: 0  Warnings: 0"),
        "{out}"
    );
    assert_eq!(
        s.sql("SELECT * FROM imp.people ORDER BY id"),
        "1\tAda, Countess\t1815-12-10\n2\tAlan\t1912-06-23\n3\tGrace \"Amazing\"\tNULL\n"
    );
    // The server reads the file itself (FILE privilege, under secure_file_priv).
    let (ok, out, err) = run(import, &args(false, &other), Duration::from_secs(60));
    assert!(ok, "{out}\n{err}");
    assert_eq!(s.sql("SELECT name FROM imp.other").trim(), "Edsger");
    // Again with --local: a duplicate key is a warning (MariaDB ignores for LOCAL).
    let (ok, out, _) = run(import, &args(true, &people), Duration::from_secs(60));
    assert!(
        ok && out.contains("Records: 3  Deleted: 0  Skipped: 3  Warnings: 3"),
        "{out}"
    );
    s.assert_no_panic();
}
