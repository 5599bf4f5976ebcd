//! information_schema.INNODB_TRX: the engine's open transactions that hold locks, changed
//! rows or wait for a lock (`onelog_engine::OpenTxn`), in MariaDB 10.11's columns, with
//! the statement each one's connection is running.

use onelog_engine::{Isolation, OpenTxn};
use onelog_types::{ColumnType, DateTime, Value};

use crate::binder::VirtualColumn;
use crate::session::Session;
use crate::show::s;

const TEXT: [&str; 6] = [
    "trx_state",
    "trx_requested_lock_id",
    "trx_query",
    "trx_operation_state",
    "trx_isolation_level",
    "trx_last_foreign_key_error",
];

const COLUMNS: [&str; 22] = [
    "trx_id",
    "trx_state",
    "trx_started",
    "trx_requested_lock_id",
    "trx_wait_started",
    "trx_weight",
    "trx_mysql_thread_id",
    "trx_query",
    "trx_operation_state",
    "trx_tables_in_use",
    "trx_tables_locked",
    "trx_lock_structs",
    "trx_lock_memory_bytes",
    "trx_rows_locked",
    "trx_rows_modified",
    "trx_concurrency_tickets",
    "trx_isolation_level",
    "trx_unique_checks",
    "trx_foreign_key_checks",
    "trx_last_foreign_key_error",
    "trx_is_read_only",
    "trx_autocommit_non_locking",
];

fn time(micros: i64) -> Value {
    Value::DateTime(DateTime::from_unix(micros.div_euclid(1_000_000), 0))
}

fn row(t: &OpenTxn, query: Option<String>) -> Vec<Value> {
    let u = Value::UInt;
    let (state, lock_id, wait_started) = match &t.waiting {
        // `transaction:lock name in hex` (InnoDB's is `transaction:space:page:record`).
        Some((since, key)) => {
            let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
            let mut id = format!("{}:{hex}", t.id);
            id.truncate(81);
            ("LOCK WAIT", s(&id), time(*since))
        }
        None => ("RUNNING", Value::Null, Value::Null),
    };
    vec![
        u(t.id),
        s(state),
        time(t.started),
        lock_id,
        wait_started,
        u(t.rows_modified + t.locks),
        u(t.connection as u64),
        query.map_or(Value::Null, |q| s(&q)),
        s(""),
        u(0),
        u(0),
        u(t.locks),
        u(t.lock_bytes),
        u(t.row_locks),
        u(t.rows_modified),
        u(0),
        s(match t.isolation {
            Isolation::ReadCommitted => "READ COMMITTED",
            Isolation::RepeatableRead => "REPEATABLE READ",
        }),
        Value::Int(1),
        Value::Int(1),
        Value::Null,
        Value::Int(0),
        Value::Int(0),
    ]
}

pub(super) fn info_rows(sess: &Session) -> (Vec<VirtualColumn>, Vec<Vec<Value>>) {
    let cols = COLUMNS
        .iter()
        .map(|&n| {
            let mut c = VirtualColumn::int(n);
            if TEXT.contains(&n) {
                c = VirtualColumn::text(n);
            } else if n.ends_with("_started") {
                c.ty = ColumnType::DateTime { fsp: 0 };
            }
            c
        })
        .collect();
    let procs = sess.db.process_list();
    let rows = sess
        .db
        .engine
        .open_transactions()
        .iter()
        .map(|t| {
            let query = procs
                .iter()
                .find(|p| t.connection != 0 && p.id == t.connection)
                .and_then(|p| p.info.clone());
            row(t, query)
        })
        .collect();
    (cols, rows)
}
