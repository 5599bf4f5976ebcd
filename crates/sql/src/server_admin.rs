//! Server administration statements and commands: `FLUSH ...`, COM_REFRESH (what
//! `mariadb-admin refresh` sends), `SHUTDOWN` / COM_SHUTDOWN, `BACKUP SERVER TO 'dir'`,
//! and `ALTER TABLE ... DISABLE | ENABLE KEYS`.

use onelog_types::SqlError;

use crate::executor::engine_err;
use crate::parser::{FlushWhat, ReplicaStmt};
use crate::session::Session;
use crate::users::{self, Priv};
use crate::{sql_err, QueryResult};

/// COM_REFRESH option bits (`REFRESH_*` in mysql_com.h); the command carries one byte.
pub mod refresh {
    pub const GRANT: u8 = 1;
    pub const LOG: u8 = 2;
    pub const TABLES: u8 = 4;
    pub const HOSTS: u8 = 8;
    pub const STATUS: u8 = 16;
    pub const THREADS: u8 = 32;
    pub const SLAVE: u8 = 64;
    pub const MASTER: u8 = 128;
}

impl Session {
    /// `FLUSH option, ...` (RELOAD privilege).
    pub(crate) fn flush(&mut self, what: &[FlushWhat]) -> Result<QueryResult, SqlError> {
        self.require_global(Priv::RELOAD)?;
        for w in what {
            match w {
                FlushWhat::Logs => {
                    self.flush_binary_logs()?;
                    self.flush_engine_logs()?;
                }
                FlushWhat::BinaryLogs => self.flush_binary_logs()?,
                FlushWhat::EngineLogs => self.flush_engine_logs()?,
                FlushWhat::Privileges => users::reload(&self.db)?,
                FlushWhat::TablesWithReadLock => self.flush_with_read_lock()?,
                FlushWhat::TablesListWithReadLock(tables) => {
                    let items: Vec<crate::parser::LockItem> = tables
                        .iter()
                        .map(|(db, t)| crate::parser::LockItem {
                            db: db.clone(),
                            table: t.clone(),
                            alias: None,
                            kind: crate::parser::LockKind::Read,
                        })
                        .collect();
                    self.lock_tables(&items)?;
                }
                // No table cache, host cache, status reset or query cache, and no error,
                // general, slow or relay log files: nothing to do.
                FlushWhat::UnusedLogs | FlushWhat::Tables | FlushWhat::Nothing => {}
            }
        }
        Ok(QueryResult::ok())
    }

    fn flush_binary_logs(&mut self) -> Result<(), SqlError> {
        if self.db.engine.options().mode == onelog_engine::LogMode::Off {
            return Ok(());
        }
        self.db.engine.flush_binary_logs().map_err(engine_err)
    }

    fn flush_engine_logs(&mut self) -> Result<(), SqlError> {
        self.db.engine.flush_engine_logs().map_err(engine_err)
    }

    /// COM_REFRESH with `options` ([`refresh`] bits), as MariaDB's `reload_acl_and_cache`
    /// runs it: the open transaction is committed first; RELOAD privilege.
    pub fn refresh(&mut self, options: u8) -> Result<QueryResult, SqlError> {
        self.implicit_commit()?;
        self.require_global(Priv::RELOAD)?;
        if options & refresh::GRANT != 0 {
            users::reload(&self.db)?;
        }
        if options & refresh::LOG != 0 {
            self.flush_binary_logs()?;
            self.flush_engine_logs()?;
        }
        if options & refresh::SLAVE != 0 {
            crate::replication::run_replica_stmt(self, &ReplicaStmt::Reset { all: false })?;
        }
        if options & refresh::MASTER != 0 {
            self.db.engine.reset_master().map_err(engine_err)?;
        }
        // TABLES, HOSTS, STATUS, THREADS: no table cache, host cache, resettable status
        // or thread cache.
        Ok(QueryResult::ok())
    }

    /// `BACKUP SERVER TO 'dir'` (RELOAD, the privilege of MariaDB's BACKUP STAGE): the
    /// server writes a consistent copy of itself into `dir`, an absolute path to a new or
    /// empty directory (see the engine's `backup.rs`), and returns where its binlog ends:
    /// one row as SHOW MASTER STATUS's, with the GTID position.
    pub(crate) fn backup_server(&mut self, dir: &str) -> Result<QueryResult, SqlError> {
        self.require_global(Priv::RELOAD)?;
        self.implicit_commit()?;
        let info = self
            .db
            .engine
            .backup(std::path::Path::new(dir))
            .map_err(engine_err)?;
        let rows = vec![vec![
            crate::show::s(&info.binlog_file),
            crate::show::u(info.binlog_pos),
            crate::show::s(&onelog_binlog::format_gtid_list(&info.gtid_binlog_pos)),
        ]];
        crate::show::result(
            self,
            &["File", "Position", "Gtid_Binlog_Pos"],
            &["Position"],
            rows,
            &None,
        )
    }

    /// `SHUTDOWN` and COM_SHUTDOWN (SHUTDOWN privilege): the server stops cleanly, as on
    /// SIGTERM, after answering.
    pub fn shutdown(&mut self) -> Result<QueryResult, SqlError> {
        self.require_global(Priv::SHUTDOWN)?;
        if !self.db.request_shutdown() {
            return Err(sql_err(
                onelog_types::code::ER_NOT_SUPPORTED_YET,
                "This version of MariaDB doesn't yet support 'SHUTDOWN of an embedded database'",
            ));
        }
        Ok(QueryResult::ok())
    }

    /// `ALTER TABLE t DISABLE | ENABLE KEYS`: onelog's secondary indexes are always
    /// maintained, as InnoDB's are; MariaDB answers InnoDB tables with note 1031 and so
    /// does onelog (after the checks an ALTER TABLE makes).
    pub(crate) fn alter_keys(
        &mut self,
        db: Option<&str>,
        table: &str,
    ) -> Result<QueryResult, SqlError> {
        let db = match db {
            Some(d) => d.to_string(),
            None => self
                .current_db()
                .ok_or_else(|| sql_err(onelog_types::code::ER_NO_DB_ERROR, "No database selected"))?
                .to_string(),
        };
        self.check_tables(&[(db.clone(), table.to_string())], Priv::ALTER)?;
        let r = crate::locks::plain_ref(&db, table);
        self.check_locked_tables(&[], std::slice::from_ref(&r))?;
        self.implicit_commit()?;
        let Some(t) = self.db.engine.catalog().table(&db, table).cloned() else {
            return Err(sql_err(
                onelog_types::code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{table}' doesn't exist"),
            ));
        };
        let engine = if t.engine_name.is_empty() {
            "InnoDB"
        } else {
            t.engine_name.as_str()
        };
        self.warnings.push(sql_err(
            1031,
            format!(
                "Storage engine {engine} of the table `{db}`.`{table}` doesn't have this option"
            ),
        ));
        Ok(QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 1,
            info: String::new(),
        })
    }
}
