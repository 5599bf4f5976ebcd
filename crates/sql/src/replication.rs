//! The primary side of replication in the SQL layer: what a binlog dump asks for (the user
//! variables a replica sets before COM_BINLOG_DUMP), the replicas that registered with
//! COM_REGISTER_SLAVE (SHOW SLAVE HOSTS), and one dump per replica server id. The replica
//! side: the replica statements (run by the server's [`ReplicaControl`]) and what its applier
//! needs of a session (apply row changes, commit under the primary's GTID).

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
    control: parking_lot::RwLock<Option<std::sync::Arc<dyn ReplicaControl>>>,
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
    /// `@rpl_semi_sync_slave`: every event packet carries the semi-sync header.
    pub semi_sync: bool,
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
            semi_sync: number(&self.user_variable("rpl_semi_sync_slave")) != 0,
        })
    }
}

/// The columns of SHOW SLAVE STATUS, in MariaDB 10.11's order.
pub const SLAVE_STATUS_COLUMNS: &[&str] = &[
    "Slave_IO_State",
    "Master_Host",
    "Master_User",
    "Master_Port",
    "Connect_Retry",
    "Master_Log_File",
    "Read_Master_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Master_Log_File",
    "Slave_IO_Running",
    "Slave_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Master_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Master_SSL_Allowed",
    "Master_SSL_CA_File",
    "Master_SSL_CA_Path",
    "Master_SSL_Cert",
    "Master_SSL_Cipher",
    "Master_SSL_Key",
    "Seconds_Behind_Master",
    "Master_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Master_Server_Id",
    "Master_SSL_Crl",
    "Master_SSL_Crlpath",
    "Using_Gtid",
    "Gtid_IO_Pos",
    "Replicate_Do_Domain_Ids",
    "Replicate_Ignore_Domain_Ids",
    "Parallel_Mode",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Slave_SQL_Running_State",
    "Slave_DDL_Groups",
    "Slave_Non_Transactional_Groups",
    "Slave_Transactional_Groups",
];

/// The replica (implemented by the server, which has the network client): what the replica
/// statements act on.
pub trait ReplicaControl: Send + Sync {
    /// CHANGE MASTER TO (upper-cased option names, values as written); the notes it gives.
    fn change_master(&self, opts: &[(String, String)]) -> Result<Vec<SqlError>, SqlError>;
    /// START SLAVE.
    fn start(&self) -> Result<(), SqlError>;
    /// STOP SLAVE.
    fn stop(&self) -> Result<(), SqlError>;
    /// RESET SLAVE [ALL]; the notes it gives.
    fn reset(&self, all: bool) -> Result<Vec<SqlError>, SqlError>;
    /// SHOW SLAVE STATUS: (column, value) in MariaDB's order; None when not configured.
    fn status(&self) -> Option<Vec<(&'static str, Value)>>;
    /// Whether the replica threads run.
    fn running(&self) -> bool;
    /// Groups a parallel replica rolled back and applied again after a conflict
    /// (`Slave_retried_transactions`).
    fn retried_transactions(&self) -> u64;
}

impl Replicas {
    /// Installs the replica the replica statements act on.
    pub fn set_control(&self, c: std::sync::Arc<dyn ReplicaControl>) {
        *self.control.write() = Some(c);
    }

    /// Whether this server's replica runs.
    pub fn replica_running(&self) -> bool {
        self.control.read().as_ref().is_some_and(|c| c.running())
    }

    /// `Slave_retried_transactions`.
    pub fn retried_transactions(&self) -> u64 {
        self.control
            .read()
            .as_ref()
            .map_or(0, |c| c.retried_transactions())
    }

    fn control(&self) -> Result<std::sync::Arc<dyn ReplicaControl>, SqlError> {
        self.control.read().clone().ok_or_else(|| {
            SqlError::from_code(
                code::ER_NOT_SUPPORTED_YET,
                "This version of MariaDB doesn't yet support 'replication in this embedding'",
            )
        })
    }
}

/// Runs CHANGE MASTER, START/STOP/RESET SLAVE and SHOW SLAVE STATUS (they need SUPER, which
/// stands for REPLICATION SLAVE ADMIN here).
pub(crate) fn run_replica_stmt(
    s: &mut Session,
    r: &crate::parser::ReplicaStmt,
) -> Result<crate::QueryResult, SqlError> {
    use crate::parser::ReplicaStmt as R;
    let c = s.db.replicas().control()?;
    if let R::ShowStatus = r {
        s.require_global(Priv::REPL_CLIENT)
            .or_else(|_| s.require_global(Priv::SUPER))?;
        let rows = match c.status() {
            Some(cols) => {
                debug_assert!(cols
                    .iter()
                    .map(|c| c.0)
                    .eq(SLAVE_STATUS_COLUMNS.iter().copied()));
                vec![cols.into_iter().map(|c| c.1).collect()]
            }
            None => Vec::new(),
        };
        return crate::show::result(s, SLAVE_STATUS_COLUMNS, &[], rows, &None);
    }
    s.require_global(Priv::SUPER)?;
    match r {
        R::ChangeMaster(opts) => {
            let notes = c.change_master(opts)?;
            s.warnings.extend(notes);
        }
        R::Start => c.start()?,
        R::Stop => c.stop()?,
        R::Reset { all } => {
            let notes = c.reset(*all)?;
            s.warnings.extend(notes);
        }
        R::ShowStatus => unreachable!(),
    }
    Ok(crate::session::ok(0, 0, s.warnings.len(), String::new()))
}

impl Session {
    /// `read_only=ON`: writes of users without SUPER (READ_ONLY ADMIN) fail with 1290, as
    /// on a MariaDB replica; the replica's applier (an internal session) writes.
    pub(crate) fn check_server_read_only(&self) -> Result<(), SqlError> {
        let on = match self.db.global_variable("read_only") {
            Some(Value::Int(n)) => n != 0,
            Some(Value::UInt(n)) => n != 0,
            _ => false,
        };
        if on && !self.internal && !self.account().has_global(Priv::SUPER) {
            return Err(SqlError::from_code(
                1290,
                "The MariaDB server is running with the --read-only option so it cannot \
                 execute this statement",
            ));
        }
        Ok(())
    }

    /// Logs the next commit (or DDL statement) under `gtid` instead of the next GTID of
    /// this server: a replicated transaction keeps its primary's GTID, in the same group as
    /// its rows.
    pub fn set_next_gtid(&mut self, gtid: Option<onelog_engine::Gtid>) {
        self.next_gtid = gtid;
    }

    /// Fixes NOW() for the following statements (`SET TIMESTAMP`; None frees it): a
    /// replicated statement runs at its primary's time.
    pub fn set_fixed_time(&mut self, unix_secs: Option<i64>) {
        self.fixed_now = unix_secs.map(|s| onelog_types::DateTime::from_unix(s, 0));
    }

    /// Applies the row changes of one binlog rows event to `db.table` (see
    /// `Txn::apply_logged_changes`). `foreign_key_checks`: the event is not flagged
    /// NO_FOREIGN_KEY_CHECKS_F; the foreign keys are then enforced and cascades made
    /// here, as InnoDB makes them on a MariaDB replica (`foreign_keys/apply.rs`).
    pub fn apply_row_changes(
        &mut self,
        db: &str,
        table: &str,
        changes: Vec<onelog_binlog::rows::RowChange>,
        foreign_key_checks: bool,
    ) -> Result<(), SqlError> {
        use onelog_binlog::rows::RowChange;
        let changes: Vec<onelog_engine::LoggedChange> = changes
            .into_iter()
            .map(|c| match c {
                RowChange::Insert(a) => (None, Some(a)),
                RowChange::Update { before, after } => (Some(before), Some(after)),
                RowChange::Delete(b) => (Some(b), None),
            })
            .collect();
        let t = self
            .bind_catalog()
            .table(db, table)
            .cloned()
            .ok_or_else(|| {
                SqlError::from_code(
                    code::ER_NO_SUCH_TABLE,
                    format!("Table '{db}.{table}' doesn't exist"),
                )
            })?;
        let txn = self.ensure_txn();
        txn.set_foreign_key_checks(foreign_key_checks);
        if foreign_key_checks && txn.catalog().has_foreign_keys() {
            return self.apply_with_foreign_keys(&t, changes);
        }
        txn.apply_logged_changes(&t, changes)
            .map_err(crate::executor::engine_err)
    }

    /// Commits a replicated transaction under the GTID set with [`set_next_gtid`]
    /// (logged even when it changed nothing, so the replica's position moves on).
    ///
    /// [`set_next_gtid`]: Session::set_next_gtid
    ///
    /// `order`: the commit waits for its turn there (a replica applying in parallel
    /// commits in its primary's order).
    pub fn commit_replicated(
        &mut self,
        order: Option<std::sync::Arc<dyn onelog_engine::CommitOrder>>,
    ) -> Result<(), SqlError> {
        if self.next_gtid.is_some() || order.is_some() {
            self.ensure_txn().set_commit_order(order);
        }
        self.commit_txn()
    }

    /// Rolls back whatever a replicated group left open (a failed or cut group).
    pub fn rollback_replicated(&mut self) {
        self.next_gtid = None;
        let _ = self.execute("ROLLBACK");
    }
}
