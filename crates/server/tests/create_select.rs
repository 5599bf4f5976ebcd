//! CREATE TABLE ... SELECT on the real onelogd: logged as MariaDB 10.11 logs it (one group:
//! the CREATE TABLE with its full column list, then the rows, XID), applied by a MariaDB
//! 10.11 replica, by a onelogd replica of a MariaDB primary, and all-or-nothing across a
//! SIGKILL (the table and its rows survive together, and the binlog agrees).

mod common;

use std::time::Duration;

use common::replica::{add_repl_user, mariadb_primary, Replica};
use common::{have, Server};
use mysql::prelude::Queryable;

fn err_code(r: Result<(), mysql::Error>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn tables(c: &mut mysql::Conn) -> Vec<String> {
    c.query("SHOW TABLES").unwrap()
}

/// The Info column of SHOW BINLOG EVENTS of every file, with its event type.
fn binlog_events(c: &mut mysql::Conn) -> Vec<(String, String)> {
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    let mut out = Vec::new();
    for (f, _) in files {
        let rows: Vec<mysql::Row> = c.query(format!("SHOW BINLOG EVENTS IN '{f}'")).unwrap();
        for r in rows {
            let ty: String = r.get("Event_type").unwrap();
            let info: String = r.get("Info").unwrap();
            out.push((ty, info));
        }
    }
    out
}

/// The events of the group whose QUERY starts with `query`: from its GTID to its end.
fn group_of(events: &[(String, String)], query: &str) -> Vec<(String, String)> {
    let at = events
        .iter()
        .position(|(t, i)| t == "Query" && i.contains(query))
        .unwrap_or_else(|| panic!("no event `{query}` in {events:#?}"));
    let end = events[at..]
        .iter()
        .position(|(t, i)| t == "Xid" || (t == "Query" && i == "COMMIT"))
        .map(|n| at + n)
        .unwrap();
    events[at - 1..=end].to_vec()
}

#[test]
fn create_select_is_one_group_replicated_and_crash_safe() {
    let test = "create_select_is_one_group_replicated_and_crash_safe";
    let mut primary = Server::start(&["--server-id=1"]);
    add_repl_user(&primary);
    let replica = Replica::start(test, &primary, 2);
    let mut c = primary.conn(None);
    c.query_drop("CREATE DATABASE cs").unwrap();
    c.query_drop("USE cs").unwrap();
    c.query_drop(
        "CREATE TABLE src (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'n', \
         amount DECIMAL(8,2))",
    )
    .unwrap();
    c.query_drop("INSERT INTO src VALUES (1, 'one', 1.50), (2, 'two', NULL), (3, 'three', 3)")
        .unwrap();
    c.query_drop("CREATE TABLE copy1 (PRIMARY KEY (id)) SELECT id, name, amount AS twice FROM src")
        .unwrap();
    c.query_drop("CREATE TABLE empty1 SELECT id FROM src WHERE id > 10")
        .unwrap();
    c.query_drop("CREATE OR REPLACE TABLE empty1 SELECT name FROM src WHERE id = 2")
        .unwrap();
    // Failures leave no table and log nothing.
    assert_eq!(
        err_code(c.query_drop(
            "CREATE TABLE bad1 (id INT PRIMARY KEY) SELECT 1 AS id UNION ALL SELECT 1"
        )),
        1062
    );
    assert_eq!(
        err_code(c.query_drop("CREATE TABLE copy1 SELECT id FROM src")),
        1050
    );
    c.query_drop("CREATE TABLE IF NOT EXISTS copy1 SELECT id FROM src")
        .unwrap();
    assert_eq!(
        tables(&mut c),
        vec!["copy1".to_string(), "empty1".into(), "src".into()]
    );

    let events = binlog_events(&mut c);
    let g = group_of(&events, "CREATE TABLE `copy1`");
    let kinds: Vec<&str> = g.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Gtid",
            "Query",
            "Annotate_rows",
            "Table_map",
            "Write_rows_v1",
            "Xid"
        ],
        "{g:#?}"
    );
    assert!(g[0].1.starts_with("BEGIN GTID"), "{g:#?}");
    assert_eq!(
        g[1].1,
        "use `cs`; CREATE TABLE `copy1` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) NOT NULL DEFAULT 'n',\n  `twice` decimal(8,2) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n)"
    );
    let g = group_of(&events, "CREATE TABLE `empty1`");
    let kinds: Vec<&str> = g.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(kinds, ["Gtid", "Query", "Query"], "{g:#?}");
    let g = group_of(&events, "CREATE OR REPLACE TABLE `empty1`");
    assert_eq!(g.len(), 6, "{g:#?}");
    for absent in ["bad1", "EXISTS copy1", "EXISTS `copy1`"] {
        assert!(
            !events.iter().any(|(_, i)| i.contains(absent)),
            "{absent} is in the binlog: {events:#?}"
        );
    }
    if have("mariadb-binlog", test) {
        let log = common::clients::binlog_text(&primary, true);
        assert!(log.contains("GTID 0-1-"), "{log}");
        assert!(
            log.contains(
                "### INSERT INTO `cs`.`copy1`\n### SET\n###   @1=1\n###   @2='one'\n###   @3=1.50"
            ),
            "{log}"
        );
    }
    if let Some(r) = &replica {
        r.wait_for(&primary, Duration::from_secs(30));
        let mut rc = r.db.conn(Some("cs"));
        let rows: Vec<(i64, String, Option<String>)> = rc
            .query("SELECT id, name, twice FROM copy1 ORDER BY id")
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (1, "one".into(), Some("1.50".into())),
                (2, "two".into(), None),
                (3, "three".into(), Some("3.00".into()))
            ]
        );
        let names: Vec<String> = rc.query("SELECT name FROM empty1").unwrap();
        assert_eq!(names, vec!["two".to_string()]);
        assert!(!tables(&mut rc).contains(&"bad1".to_string()));
    }

    // SIGKILL right after a large CREATE ... SELECT is acknowledged: after the restart
    // (recovery replays the group) the table has every row.
    c.query_drop(
        "CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(40)) SELECT seq AS id, \
         CONCAT('row ', seq) AS v FROM (WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL \
         SELECT seq + 1 FROM n WHERE seq < 5000) SELECT seq FROM n) AS g",
    )
    .unwrap();
    drop(c);
    primary.kill9();
    primary.restart();
    let mut c = primary.conn(Some("cs"));
    let n: Option<(i64, i64)> = c.query_first("SELECT COUNT(*), SUM(id) FROM big").unwrap();
    assert_eq!(n, Some((5000, 5000 * 5001 / 2)));
    let rows: Vec<(i64, String)> = c.query("SELECT id, name FROM copy1 ORDER BY id").unwrap();
    assert_eq!(rows.len(), 3);
    primary.assert_no_panic();
}

/// SIGKILL at random moments while CREATE ... SELECT statements run: after each restart
/// every table is either absent or complete, and every acknowledged one is there.
#[test]
fn create_select_is_all_or_nothing_under_sigkill() {
    let mut srv = Server::start(&[]);
    let mut c = srv.conn(None);
    c.query_drop("CREATE DATABASE k").unwrap();
    c.query_drop("USE k").unwrap();
    c.query_drop("CREATE TABLE src (id INT PRIMARY KEY, v VARCHAR(30))")
        .unwrap();
    let values: Vec<String> = (1..=3000).map(|i| format!("({i}, 'value {i}')")).collect();
    c.query_drop(format!("INSERT INTO src VALUES {}", values.join(",")))
        .unwrap();
    drop(c);
    let mut acknowledged: Vec<String> = Vec::new();
    for round in 0..4u64 {
        let port = srv.port;
        let writer = std::thread::spawn(move || {
            let opts = mysql::OptsBuilder::new()
                .ip_or_hostname(Some("127.0.0.1"))
                .tcp_port(port)
                .user(Some("root"))
                .db_name(Some("k"));
            let mut done = Vec::new();
            let Ok(mut c) = mysql::Conn::new(opts) else {
                return done;
            };
            for i in 0.. {
                let name = format!("t{round}_{i}");
                let sql = format!("CREATE TABLE {name} (PRIMARY KEY (id)) SELECT * FROM src");
                if c.query_drop(sql).is_err() {
                    break;
                }
                done.push(name);
            }
            done
        });
        std::thread::sleep(Duration::from_millis(300 + 250 * round));
        srv.kill9();
        acknowledged.extend(writer.join().unwrap());
        srv.restart();
        let mut c = srv.conn(Some("k"));
        let names: Vec<String> = c.query("SHOW TABLES").unwrap();
        for a in &acknowledged {
            assert!(names.contains(a), "{a} was acknowledged and is lost");
        }
        for n in names.iter().filter(|n| n.starts_with('t')) {
            let count: Option<i64> = c
                .query_first(format!("SELECT COUNT(*) FROM `{n}`"))
                .unwrap();
            assert_eq!(count, Some(3000), "{n} is partial");
        }
    }
    assert!(acknowledged.len() > 1, "too few statements ran");
    srv.assert_no_panic();
}

/// onelogd replicating a MariaDB primary applies its CREATE ... SELECT group (the table
/// and its rows) and logs it the same way.
#[test]
fn onelog_replica_applies_mariadb_create_select() {
    let test = "onelog_replica_applies_mariadb_create_select";
    let Some((primary, pport)) = mariadb_primary(test, 1) else {
        return;
    };
    let mut pc = primary.conn(None);
    for s in [
        "CREATE DATABASE m",
        "CREATE TABLE m.src (id INT PRIMARY KEY, v VARCHAR(10))",
        "INSERT INTO m.src VALUES (1, 'a'), (2, 'b')",
        "CREATE TABLE m.dst (PRIMARY KEY (id)) SELECT id, v, id * 10 AS t FROM m.src",
        "CREATE TABLE m.none SELECT id FROM m.src WHERE 0",
    ] {
        pc.query_drop(s).unwrap();
    }
    let replica = Server::start(&["--server-id=2"]);
    let mut rc = replica.conn(None);
    common::replica::follow(&mut rc, pport);
    common::replica::catch_up(&mut rc, &mut pc);
    let rows: Vec<(i64, String, i64)> = rc.query("SELECT id, v, t FROM m.dst ORDER BY id").unwrap();
    assert_eq!(rows, vec![(1, "a".into(), 10), (2, "b".into(), 20)]);
    let n: Option<i64> = rc.query_first("SELECT COUNT(*) FROM m.none").unwrap();
    assert_eq!(n, Some(0));
    let events = binlog_events(&mut rc);
    let g = group_of(&events, "CREATE TABLE `m`.`dst`");
    let kinds: Vec<&str> = g.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "Gtid",
            "Query",
            "Annotate_rows",
            "Table_map",
            "Write_rows_v1",
            "Xid"
        ],
        "{g:#?}"
    );
    replica.assert_no_panic();
}
