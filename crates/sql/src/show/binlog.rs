//! SHOW statements about the binary log: SHOW BINARY LOGS, SHOW MASTER STATUS, SHOW
//! SLAVE HOSTS and SHOW BINLOG EVENTS.

use onelog_types::SqlError;

use super::*;
use crate::executor::engine_err;
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};

/// SHOW BINARY LOGS.
pub(super) fn show_binary_logs(sess: &mut Session) -> Result<QueryResult, SqlError> {
    sess.require_global(Priv::REPL_CLIENT)
        .or_else(|_| sess.require_global(Priv::SUPER))?;
    if sess.db.engine.options().mode == onelog_engine::LogMode::Off {
        return Err(sql_err(1381, "You are not using binary logging"));
    }
    let rows = sess
        .db
        .engine
        .binlog_files()
        .into_iter()
        .map(|(n, sz)| vec![s(&n), u(sz)])
        .collect();
    result(
        sess,
        &["Log_name", "File_size"],
        &["File_size"],
        rows,
        &None,
    )
}

/// SHOW MASTER STATUS.
pub(super) fn show_master_status(sess: &mut Session) -> Result<QueryResult, SqlError> {
    sess.require_global(Priv::REPL_CLIENT)
        .or_else(|_| sess.require_global(Priv::SUPER))?;
    let rows = match sess.db.engine.master_status() {
        Some((f, pos)) => vec![vec![s(&f), u(pos), s(""), s("")]],
        None => vec![],
    };
    result(
        sess,
        &["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"],
        &["Position"],
        rows,
        &None,
    )
}

/// SHOW SLAVE HOSTS.
pub(super) fn show_slave_hosts(sess: &mut Session) -> Result<QueryResult, SqlError> {
    // REPLICATION MASTER ADMIN, a part of SUPER here.
    sess.require_global(Priv::SUPER)?;
    let rows = sess
        .db
        .replicas()
        .hosts()
        .into_iter()
        .map(|h| {
            vec![
                u(h.server_id as u64),
                s(&h.host),
                u(h.port as u64),
                u(h.master_id as u64),
            ]
        })
        .collect();
    result(
        sess,
        &["Server_id", "Host", "Port", "Master_id"],
        &["Server_id", "Port", "Master_id"],
        rows,
        &None,
    )
}

/// SHOW BINLOG EVENTS [IN file] [FROM pos] [LIMIT [offset,] n].
pub(super) fn show_binlog_events(
    sess: &mut Session,
    file: &Option<String>,
    from: &u64,
    offset: &u64,
    limit: &Option<u64>,
) -> Result<QueryResult, SqlError> {
    sess.require_global(Priv::REPL_SLAVE)
        .or_else(|_| sess.require_global(Priv::REPL_CLIENT))?;
    let ev = sess
        .db
        .engine
        .binlog_events(file.as_deref(), *from, *offset, *limit)
        .map_err(engine_err)?;
    let rows = ev
        .into_iter()
        .map(|e| {
            vec![
                s(&e.log_name),
                u(e.pos),
                s(&e.event_type),
                u(e.server_id as u64),
                u(e.end_log_pos),
                s(&e.info),
            ]
        })
        .collect();
    result(
        sess,
        &[
            "Log_name",
            "Pos",
            "Event_type",
            "Server_id",
            "End_log_pos",
            "Info",
        ],
        &["Pos", "Server_id", "End_log_pos"],
        rows,
        &None,
    )
}
