//! UUID and INET6 columns end to end: rows survive SIGKILL (binlog crash replay),
//! `mariadb-binlog --verbose` decodes onelog's row images to MariaDB's bytes (BINARY(16),
//! the UUID in text order), a MariaDB 10.11 replica applies onelog's binlog, and onelogd
//! replicates a MariaDB primary's UUID/INET6 rows.

mod common;
use common::replica::{add_repl_user, catch_up, follow, mariadb_primary, Replica};
use common::*;
use mysql::prelude::Queryable;
use std::time::Duration;

const TABLE: &str = "CREATE TABLE ui.t (id UUID PRIMARY KEY, ip INET6, n INT, UNIQUE KEY (ip))";

/// Rows of every kind: time-based UUIDs (stored swapped in keys), others, NULL, IPv6 with
/// trailing zero bytes (shortened in the binlog) and IPv4-mapped addresses.
const ROWS: &str = "INSERT INTO ui.t VALUES \
    ('123e4567-e89b-12d3-a456-426655440000', '::1', 1), \
    ('11223344-5566-7788-19aa-bbccddeeff00', '2001:db8::', 2), \
    ('ffeeddcc-bbaa-1988-9766-554433221100', '::ffff:192.0.2.1', 3), \
    ('00000000-0000-0000-0000-000000000000', NULL, 4), \
    ('0123456789AB4DEF8123456789abcdef', 'fe80::1:2:3:4', 5)";

/// The table as text, in UUID order.
fn rows(c: &mut mysql::Conn) -> Vec<(String, Option<String>, i64)> {
    c.query("SELECT id, ip, n FROM ui.t ORDER BY id").unwrap()
}

fn expected() -> Vec<(String, Option<String>, i64)> {
    [
        ("00000000-0000-0000-0000-000000000000", None, 4),
        (
            "11223344-5566-7788-19aa-bbccddeeff00",
            Some("2001:db8::"),
            2,
        ),
        ("123e4567-e89b-12d3-a456-426655440000", Some("::1"), 1),
        (
            "01234567-89ab-4def-8123-456789abcdef",
            Some("fe80::1:2:3:4"),
            5,
        ),
        (
            "ffeeddcc-bbaa-1988-9766-554433221100",
            Some("::ffff:192.0.2.1"),
            3,
        ),
    ]
    .into_iter()
    .map(|(a, b, n)| (a.to_string(), b.map(str::to_string), n))
    .collect()
}

fn load(c: &mut mysql::Conn) {
    c.query_drop("CREATE DATABASE ui").unwrap();
    c.query_drop(TABLE).unwrap();
    c.query_drop(ROWS).unwrap();
    c.query_drop("UPDATE ui.t SET ip = '::2' WHERE id = '123e4567e89b12d3a456426655440000'")
        .unwrap();
    c.query_drop("UPDATE ui.t SET ip = '::1' WHERE id = '123e4567e89b12d3a456426655440000'")
        .unwrap();
    c.query_drop("INSERT INTO ui.t VALUES ('99999999-9999-1999-9999-999999999999', '::9', 9)")
        .unwrap();
    c.query_drop("DELETE FROM ui.t WHERE n = 9").unwrap();
}

#[test]
fn rows_survive_sigkill() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    load(&mut c);
    assert_eq!(rows(&mut c), expected());
    drop(c);
    srv.kill9();
    srv.restart();
    let mut c = srv.conn(None);
    assert_eq!(rows(&mut c), expected());
    // The keys came back too: lookups and ranges through both indexes.
    let n: Option<i64> = c
        .query_first("SELECT n FROM ui.t WHERE id = 'FFEEDDCC-BBAA-1988-9766-554433221100'")
        .unwrap();
    assert_eq!(n, Some(3));
    let ns: Vec<i64> = c
        .query("SELECT n FROM ui.t WHERE ip >= '::1' ORDER BY ip")
        .unwrap();
    assert_eq!(ns, vec![1, 3, 2, 5]);
    srv.stop();
}

/// The `###` lines `mariadb-binlog --verbose` prints for the binlog of the server on
/// `port` from the first row of `ui`.`t` on (bytes as they are: it prints binary strings
/// mostly unescaped).
fn decoded_rows(port: u16, first: &str) -> Vec<u8> {
    let args: Vec<String> = vec![
        "--no-defaults".into(),
        "--read-from-remote-server".into(),
        "--host=127.0.0.1".into(),
        format!("--port={port}"),
        "--user=root".into(),
        "--verbose".into(),
        "--to-last-log".into(),
        first.into(),
    ];
    let out = std::process::Command::new("mariadb-binlog")
        .args(&args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("ERROR"),
        "mariadb-binlog failed: {err}"
    );
    // From the first row event of `ui`.`t` on (onelog logs its account bootstrap first).
    let mut lines = Vec::new();
    let mut ours = false;
    for l in out.stdout.split(|&b| b == b'\n') {
        ours |= l.starts_with(b"### INSERT INTO `ui`.`t`");
        if ours && l.starts_with(b"###") {
            lines.extend_from_slice(l);
            lines.push(b'\n');
        }
    }
    lines
}

#[test]
fn mariadb_binlog_decodes_the_row_images() {
    if !have("mariadb-binlog", "mariadb_binlog_decodes_the_row_images") {
        return;
    }
    let Some((m, port)) = mariadb_primary("mariadb_binlog_decodes_the_row_images", 21) else {
        return;
    };
    let srv = Server::start(&[]);
    let mut c = srv.conn(None);
    load(&mut c);
    let mut mc = m.conn(None);
    mc.query_drop("SET SESSION binlog_format = 'ROW'").unwrap();
    load(&mut mc);
    let first = |c: &mut mysql::Conn| {
        let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
        files[0].0.clone()
    };
    let ours = decoded_rows(srv.port, &first(&mut c));
    let theirs = decoded_rows(port, &first(&mut mc));
    let text = String::from_utf8_lossy(&ours).into_owned();
    // MariaDB logs both types as BINARY(16) in memory (text) order, trailing zero bytes
    // dropped: 2001:db8:: is its first four bytes, the all-zero UUID the empty string.
    for want in [
        "### INSERT INTO `ui`.`t`",
        "### UPDATE `ui`.`t`",
        "### DELETE FROM `ui`.`t`",
        "###   @1=''",
        "###   @2=NULL",
        "###   @2=' \\x01\\x0d",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    assert_eq!(
        text,
        String::from_utf8_lossy(&theirs),
        "onelog's row images decode differently from MariaDB's"
    );
    assert_eq!(ours, theirs);
}

#[test]
fn a_mariadb_replica_applies_the_rows() {
    let primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let Some(replica) = Replica::start("uuid_inet6_mariadb_replica", &primary, 2) else {
        return;
    };
    let mut c = primary.conn(None);
    load(&mut c);
    replica.wait_for(&primary, Duration::from_secs(30));
    let mut r = replica.db.conn(None);
    assert_eq!(rows(&mut r), expected());
    let ty: String = r
        .query_first(
            "SELECT GROUP_CONCAT(data_type ORDER BY ordinal_position) FROM \
             information_schema.columns WHERE table_schema = 'ui' AND table_name = 't'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(ty, "uuid,inet6,int");
}

#[test]
fn onelog_replicates_a_mariadb_primary() {
    let Some((m, port)) = mariadb_primary("uuid_inet6_onelog_replica", 11) else {
        return;
    };
    let replica = Server::start(&["--server-id=12"]);
    let mut rc = replica.conn(None);
    follow(&mut rc, port);
    let mut pc = m.conn(None);
    // Row images (MariaDB's default MIXED format would log these as statements).
    pc.query_drop("SET SESSION binlog_format = 'ROW'").unwrap();
    load(&mut pc);
    catch_up(&mut rc, &mut pc);
    assert_eq!(rows(&mut rc), expected());
    assert_eq!(rows(&mut rc), rows(&mut pc));
    assert_eq!(replica.dump_tables(), common::dump_tables(&mut pc));
    // Result-set metadata as MariaDB sends it: STRING, 36/39 characters, UNSIGNED BINARY.
    assert_eq!(metadata(&mut rc), metadata(&mut pc));
}

/// (type, length, character set, flags) of the columns of a UUID/INET6 query.
fn metadata(c: &mut mysql::Conn) -> Vec<(String, u32, u16, String)> {
    let r = c.query_iter("SELECT id, ip FROM ui.t").unwrap();
    r.columns()
        .as_ref()
        .iter()
        .map(|col| {
            (
                format!("{:?}", col.column_type()),
                col.column_length(),
                col.character_set(),
                // (onelog sends no PART_KEY flag for any column type.)
                format!(
                    "{:?}",
                    col.flags()
                        .difference(mysql::consts::ColumnFlags::PART_KEY_FLAG)
                ),
            )
        })
        .collect()
}
