//! A real MariaDB 10.11 replica of an onelogd primary, for the tests that check what a
//! replica makes of onelog's binlog.

use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use super::mariadb::MariaDb;
use super::{free_port, Server};

/// A MariaDB 10.11 replica of `primary` (grant tables on, so account statements apply).
pub struct Replica {
    pub db: MariaDb,
}

impl Replica {
    pub fn start(test: &str, primary: &Server, server_id: u32) -> Option<Replica> {
        let db = MariaDb::start_with(
            test,
            &[
                format!("--server-id={server_id}"),
                "--slave-net-timeout=10".into(),
            ],
        )?;
        let r = Replica { db };
        r.point_at(primary);
        Some(r)
    }

    pub fn point_at(&self, primary: &Server) {
        let mut c = self.db.conn(None);
        c.query_drop("STOP SLAVE").unwrap();
        c.query_drop(format!(
            "CHANGE MASTER TO master_host='127.0.0.1', master_port={}, master_user='repl', \
             master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1, \
             master_heartbeat_period=1",
            primary.port
        ))
        .unwrap();
        c.query_drop("START SLAVE").unwrap();
    }

    pub fn status(&self) -> (String, String, String, String) {
        let mut c = self.db.conn(None);
        (
            slave_status(&mut c, "Slave_IO_Running"),
            slave_status(&mut c, "Slave_SQL_Running"),
            slave_status(&mut c, "Last_IO_Error"),
            slave_status(&mut c, "Last_SQL_Error"),
        )
    }

    pub fn gtid_pos(&self) -> String {
        let mut c = self.db.conn(None);
        c.query_first::<String, _>("SELECT @@gtid_slave_pos")
            .unwrap()
            .unwrap_or_default()
    }

    /// Waits until the replica has applied everything the primary logged.
    pub fn wait_for(&self, primary: &Server, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let want = primary_pos(primary);
        loop {
            let (io, sql, io_err, sql_err) = self.status();
            assert!(
                sql == "Yes" && sql_err.is_empty(),
                "replica SQL thread stopped: {sql_err}\nIO: {io} {io_err}"
            );
            if self.gtid_pos() == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "replica did not catch up: has '{}', primary '{want}'; IO {io} '{io_err}'",
                self.gtid_pos()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One field of `SHOW SLAVE STATUS` on `c` (MariaDB's or onelogd's), as text (`NULL`).
pub fn slave_status(c: &mut mysql::Conn, field: &str) -> String {
    let row: mysql::Row = c.query_first("SHOW SLAVE STATUS").unwrap().unwrap();
    let i = row
        .columns_ref()
        .iter()
        .position(|col| col.name_str() == field)
        .unwrap_or_else(|| panic!("SHOW SLAVE STATUS has no {field}"));
    match &row[i] {
        mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        mysql::Value::NULL => "NULL".into(),
        v => v.as_sql(true),
    }
}

pub fn primary_pos(primary: &Server) -> String {
    let mut c = primary.conn(None);
    c.query_first::<String, _>("SELECT @@gtid_binlog_pos")
        .unwrap()
        .unwrap_or_default()
}

pub fn seq_of(pos: &str) -> u64 {
    pos.split(',')
        .filter_map(|g| g.rsplit('-').next())
        .filter_map(|s| s.parse().ok())
        .max()
        .unwrap_or(0)
}

pub fn add_repl_user(primary: &Server) {
    let mut c = primary.conn(None);
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
}

/// A MariaDB 10.11 primary on a TCP port, binlog on, with a `repl` account.
pub fn mariadb_primary(test: &str, server_id: u32) -> Option<(MariaDb, u16)> {
    let port = free_port();
    let m = MariaDb::start_with(
        test,
        &[
            format!("--port={port}"),
            format!("--server-id={server_id}"),
            "--log-bin=mb".into(),
        ],
    )?;
    let mut c = m.conn(None);
    c.query_drop("CREATE USER repl@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT REPLICATION SLAVE ON *.* TO repl@'%'")
        .unwrap();
    Some((m, port))
}

/// Makes the onelogd behind `rc` a replica of the primary on `port` (account `repl`,
/// GTID positioning) and starts it.
pub fn follow(rc: &mut mysql::Conn, port: u16) {
    rc.query_drop(format!(
        "CHANGE MASTER TO master_host='127.0.0.1', master_port={port}, master_user='repl', \
         master_password='pw', master_use_gtid=slave_pos, master_connect_retry=1"
    ))
    .unwrap();
    rc.query_drop("START SLAVE").unwrap();
}

/// Waits until the replica behind `rc` has applied up to GTID position `want` (fails if
/// its SQL thread stops with an error, or after 30 s).
pub fn wait_gtid(rc: &mut mysql::Conn, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pos: String = rc
            .query_first("SELECT @@gtid_slave_pos")
            .unwrap()
            .unwrap_or_default();
        if pos == want {
            return;
        }
        let err = slave_status(rc, "Last_SQL_Error");
        assert!(err.is_empty(), "replica stopped: {err}");
        assert!(
            Instant::now() < deadline,
            "replica at '{pos}', want '{want}'"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the replica behind `rc` has applied everything the primary behind `pc`
/// logged.
pub fn catch_up(rc: &mut mysql::Conn, pc: &mut mysql::Conn) {
    let want: String = pc
        .query_first("SELECT @@gtid_binlog_pos")
        .unwrap()
        .unwrap_or_default();
    wait_gtid(rc, &want);
}
