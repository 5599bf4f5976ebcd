//! The primary side of replication in the SQL layer: what a binlog dump asks for (the user
//! variables a replica sets before COM_BINLOG_DUMP), the replicas that registered with
//! COM_REGISTER_SLAVE (SHOW SLAVE HOSTS), and one dump per replica server id.

use std::collections::BTreeMap;

use onelog_types::{code, SqlError, Value};
use parking_lot::Mutex;

use crate::session::Session;
use crate::users::Priv;

/// A registered replica (a row of SHOW SLAVE HOSTS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaHost {
    pub server_id: u32,
    pub host: String,
    pub port: u16,
    pub master_id: u32,
}

/// Replicas and dumps of this server, by connection id.
#[derive(Default)]
pub struct Replicas {
    hosts: Mutex<BTreeMap<u32, ReplicaHost>>,
    /// Running dumps: connection id -> the client's server id.
    dumps: Mutex<BTreeMap<u32, u32>>,
}

impl Replicas {
    /// SHOW SLAVE HOSTS, by server id.
    pub fn hosts(&self) -> Vec<ReplicaHost> {
        let mut v: Vec<ReplicaHost> = self.hosts.lock().values().cloned().collect();
        v.sort_by_key(|h| h.server_id);
        v
    }

    /// Number of dumps running (`Binlog_dump` threads).
    pub fn dumps(&self) -> usize {
        self.dumps.lock().len()
    }

    pub(crate) fn forget(&self, conn_id: u32) {
        self.hosts.lock().remove(&conn_id);
        self.dumps.lock().remove(&conn_id);
    }
}

/// What the client of a dump asked for through its user variables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DumpVars {
    /// `@master_binlog_checksum` (None: the client does not know about checksums).
    pub checksum: Option<String>,
    /// `@slave_connect_state` (None: a dump from a file and position).
    pub connect_state: Option<String>,
    /// `@slave_gtid_strict_mode`.
    pub strict: bool,
    /// `@slave_gtid_ignore_duplicates`.
    pub ignore_duplicates: bool,
    /// `@master_heartbeat_period`, in nanoseconds (0: no heartbeats).
    pub heartbeat_ns: u64,
    /// `@mariadb_slave_capability`.
    pub capability: u64,
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        v => Some(crate::expr::to_string(v)),
    }
}

fn number(v: &Value) -> u64 {
    match v {
        Value::Int(n) => (*n).max(0) as u64,
        Value::UInt(n) => *n,
        Value::Null => 0,
        v => crate::expr::to_string(v)
            .trim()
            .parse::<f64>()
            .map_or(0, |f| f.max(0.0) as u64),
    }
}

impl Session {
    fn user_variable(&self, name: &str) -> Value {
        self.user_vars.get(name).cloned().unwrap_or(Value::Null)
    }

    /// COM_REGISTER_SLAVE: needs REPLICATION SLAVE; the replica shows in SHOW SLAVE HOSTS
    /// while this connection lives.
    pub fn register_replica(
        &mut self,
        server_id: u32,
        host: &str,
        port: u16,
        master_id: u32,
    ) -> Result<(), SqlError> {
        if !self.account().has_global(Priv::REPL_SLAVE) {
            // MariaDB answers a registration without the privilege as a failed login.
            let password = !self.account().password_hash.is_empty();
            return Err(SqlError::from_code(
                code::ER_ACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{}'@'{}' (using password: {})",
                    self.user,
                    self.account_host,
                    if password { "YES" } else { "NO" }
                ),
            ));
        }
        let master_id = if master_id == 0 {
            self.db.engine().options().server_id
        } else {
            master_id
        };
        self.db.replicas().hosts.lock().insert(
            self.conn_id,
            ReplicaHost {
                server_id,
                // An empty report-host: the connection's host, as MariaDB shows it.
                host: if host.is_empty() {
                    self.host.clone()
                } else {
                    host.to_string()
                },
                port,
                master_id,
            },
        );
        Ok(())
    }

    /// COM_BINLOG_DUMP starts: needs REPLICATION SLAVE. An older dump of the same replica
    /// server id is killed (the replica reconnected), as MariaDB does. Returns the
    /// variables the client set.
    pub fn start_dump(&mut self, server_id: u32) -> Result<DumpVars, SqlError> {
        self.require_global(Priv::REPL_SLAVE)?;
        if self.db.engine().binlog_files().is_empty() {
            return Err(SqlError::from_code(
                code::ER_MASTER_FATAL_ERROR_READING_BINLOG,
                "Binary log is not open",
            ));
        }
        let older: Vec<u32> = {
            let mut dumps = self.db.replicas().dumps.lock();
            let older = dumps
                .iter()
                .filter(|&(&c, &s)| server_id != 0 && s == server_id && c != self.conn_id)
                .map(|(&c, _)| c)
                .collect();
            dumps.insert(self.conn_id, server_id);
            older
        };
        for c in older {
            self.db.kill(c, false);
        }
        self.set_proc("Binlog Dump", None);
        Ok(DumpVars {
            checksum: text(&self.user_variable("master_binlog_checksum")),
            connect_state: text(&self.user_variable("slave_connect_state")),
            strict: number(&self.user_variable("slave_gtid_strict_mode")) != 0,
            ignore_duplicates: number(&self.user_variable("slave_gtid_ignore_duplicates")) != 0,
            heartbeat_ns: number(&self.user_variable("master_heartbeat_period")),
            capability: number(&self.user_variable("mariadb_slave_capability")),
        })
    }
}
