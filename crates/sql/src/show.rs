//! SHOW statements, built from the catalog and the server state when a statement reads
//! them (`info_schema.rs` has the information_schema tables).

mod binlog;
mod session_info;
mod tables;

use std::sync::atomic::Ordering;

use onelog_engine::TableStats;
use onelog_engine::{ColumnDef, TableDef};
use onelog_types::{code, Collation, ColumnType, SqlError, Value};

use crate::binder::{unsupported, VirtualColumn};
use crate::parser::{Admin, Parsed, Scope, ShowFilter};
use crate::session::Session;
use crate::users::{self, Priv};
use crate::vars;
use crate::{sql_err, QueryResult, ResultColumn};

pub(crate) fn s(v: &str) -> Value {
    Value::str(v)
}

pub(crate) fn u(v: u64) -> Value {
    Value::UInt(v)
}

pub(crate) fn opt_s(v: Option<&str>) -> Value {
    v.map(Value::str).unwrap_or(Value::Null)
}

/// A SHOW result: text columns (except the listed numeric ones), filtered by LIKE on the
/// first column or by WHERE over the columns.
pub(crate) fn result(
    sess: &Session,
    names: &[&str],
    numeric: &[&str],
    rows: Vec<Vec<Value>>,
    filter: &Option<ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let cols: Vec<VirtualColumn> = names
        .iter()
        .map(|n| {
            if numeric.contains(n) {
                VirtualColumn::int(n)
            } else {
                VirtualColumn::text(n)
            }
        })
        .collect();
    let rows = match filter {
        None => rows,
        Some(ShowFilter::Like(p)) => rows
            .into_iter()
            .filter(|r| {
                crate::expr::like(
                    crate::expr::to_string(&r[0]).to_lowercase().as_bytes(),
                    p.to_lowercase().as_bytes(),
                    b'\\',
                    Collation::Utf8mb4Bin,
                )
            })
            .collect(),
        Some(ShowFilter::Where(e)) => sess.filter_rows(&cols, rows, e)?,
    };
    let columns = cols
        .iter()
        .map(|c| {
            if numeric.contains(&c.name.as_str()) {
                ResultColumn::uint(&c.name)
            } else {
                ResultColumn::text(&c.name)
            }
        })
        .collect();
    Ok(QueryResult::Rows { columns, rows })
}

pub(crate) fn type_name(c: &ColumnDef) -> String {
    let name = c.ty.sql_name();
    // An integer's declared display width replaces the type's default one.
    let name = match (c.display_width, &c.ty) {
        (Some(w), ColumnType::Int { .. }) => match (name.find('('), name.find(')')) {
            (Some(a), Some(b)) => format!("{}({w}){}", &name[..a], &name[b + 1..]),
            _ => name,
        },
        _ => name,
    };
    crate::num_attrs::decorate(c, name)
}

fn default_text(c: &ColumnDef) -> Option<String> {
    if c.default_now {
        return Some(crate::binder::now_text(&c.ty));
    }
    if let Some(e) = &c.default_expr {
        return Some(e.clone());
    }
    // A BLOB or TEXT column keeps its default as an expression in MariaDB: shown quoted.
    if c.default.is_some() && matches!(c.ty, ColumnType::Blob { .. }) {
        return quote_default(c);
    }
    c.default
        .as_ref()
        .map(|v| crate::num_attrs::shown(c, v).unwrap_or_else(|| crate::expr::to_string(v)))
}

pub(crate) fn quote_default(c: &ColumnDef) -> Option<String> {
    if c.default_now {
        return Some(crate::binder::now_text(&c.ty));
    }
    if let Some(e) = &c.default_expr {
        return Some(e.clone());
    }
    match &c.default {
        Some(Value::Null) | None => {
            if c.nullable {
                Some("NULL".into())
            } else {
                None
            }
        }
        Some(Value::UInt(u)) if matches!(c.ty, ColumnType::Bit { .. }) => Some(format!("b'{u:b}'")),
        Some(v @ (Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_))) => {
            Some(crate::num_attrs::shown(c, v).unwrap_or_else(|| v.to_string()))
        }
        Some(v) => Some(format!(
            "'{}'",
            crate::expr::to_string(v).replace('\'', "''")
        )),
    }
}

pub(crate) fn key_of(t: &TableDef, c: usize) -> &'static str {
    for idx in &t.indexes {
        if idx.columns.first() == Some(&c) {
            return if idx.primary {
                "PRI"
            } else if idx.unique && idx.columns.len() == 1 {
                "UNI"
            } else {
                "MUL"
            };
        }
    }
    if t.indexes
        .iter()
        .any(|i| i.primary && i.columns.contains(&c))
    {
        return "PRI";
    }
    ""
}

pub(crate) fn extra_of(c: &ColumnDef) -> String {
    let mut e = Vec::new();
    if c.auto_increment {
        e.push("auto_increment".to_string());
    }
    if c.on_update_now {
        e.push(format!("on update {}", crate::binder::now_text(&c.ty)));
    }
    e.join(" ")
}

/// `SHOW CREATE TABLE` text.
pub fn create_table_sql(t: &TableDef, autoinc: Option<u64>) -> String {
    if t.sequence {
        return crate::sequences::create_table_sql(t);
    }
    let mut lines = Vec::new();
    for c in &t.columns {
        let mut l = format!("  `{}` {}", c.name, type_name(c));
        // As MariaDB: a text column's collation is shown when it differs from the table's.
        if let Some(coll) = c.ty.collation().filter(|&x| x != Collation::Binary) {
            if coll != t.collation {
                l += &format!(" CHARACTER SET {} COLLATE {}", coll.charset(), coll.name());
            }
        }
        if !c.nullable {
            l += " NOT NULL";
        } else if matches!(c.ty, ColumnType::Timestamp { .. }) {
            // MariaDB spells out a nullable TIMESTAMP's NULL.
            l += " NULL";
        }
        if let Some(d) = quote_default(c) {
            if !(c.auto_increment) {
                l += &format!(" DEFAULT {d}");
            }
        }
        if c.on_update_now {
            l += &format!(" ON UPDATE {}", crate::binder::now_text(&c.ty));
        }
        if c.auto_increment {
            l += " AUTO_INCREMENT";
        }
        if !c.comment.is_empty() {
            l += &format!(" COMMENT '{}'", c.comment.replace('\'', "''"));
        }
        for ck in t
            .checks
            .iter()
            .filter(|k| k.column_level && k.name.eq_ignore_ascii_case(&c.name))
        {
            l += &format!(" CHECK ({})", ck.expr);
        }
        lines.push(l);
    }
    for idx in &t.indexes {
        if idx.columns.is_empty() {
            continue;
        }
        let cols: Vec<String> = idx
            .columns
            .iter()
            .enumerate()
            .map(|(i, &c)| match idx.prefix_lens.get(i).copied().flatten() {
                Some(p) => format!("`{}`({p})", t.columns[c].name),
                None => format!("`{}`", t.columns[c].name),
            })
            .collect();
        let cols = cols.join(",");
        lines.push(if idx.primary {
            format!("  PRIMARY KEY ({cols})")
        } else if idx.unique {
            format!("  UNIQUE KEY `{}` ({cols})", idx.name)
        } else {
            format!("  KEY `{}` ({cols})", idx.name)
        });
    }
    lines.extend(crate::foreign_keys::show_lines(t));
    for ck in t.checks.iter().filter(|k| !k.column_level) {
        lines.push(format!("  CONSTRAINT `{}` CHECK ({})", ck.name, ck.expr));
    }
    let mut out = format!(
        "CREATE TABLE `{}` (\n{}\n) ENGINE=",
        t.name,
        lines.join(",\n")
    );
    out += if t.engine_name.is_empty() {
        "InnoDB"
    } else {
        &t.engine_name
    };
    if let Some(a) = autoinc.filter(|a| *a > 1) {
        out += &format!(" AUTO_INCREMENT={a}");
    }
    out += &format!(
        " DEFAULT CHARSET={} COLLATE={}",
        t.collation.charset(),
        t.collation.name()
    );
    out += &t.create_options_sql();
    if !t.comment.is_empty() {
        out += &format!(" COMMENT='{}'", t.comment.replace('\'', "''"));
    }
    out
}

pub(crate) fn data_type(ty: &ColumnType) -> &'static str {
    match ty {
        ColumnType::Int { bytes: 1, .. } => "tinyint",
        ColumnType::Int { bytes: 2, .. } => "smallint",
        ColumnType::Int { bytes: 3, .. } => "mediumint",
        ColumnType::Int { bytes: 4, .. } => "int",
        ColumnType::Int { .. } => "bigint",
        ColumnType::Float => "float",
        ColumnType::Double => "double",
        ColumnType::Decimal { .. } => "decimal",
        ColumnType::Char { binary: false, .. } => "char",
        ColumnType::Char { binary: true, .. } => "binary",
        ColumnType::Varchar { binary: false, .. } => "varchar",
        ColumnType::Varchar { binary: true, .. } => "varbinary",
        ColumnType::Blob {
            len_bytes: 1,
            binary: false,
            ..
        } => "tinytext",
        ColumnType::Blob {
            len_bytes: 2,
            binary: false,
            ..
        } => "text",
        ColumnType::Blob {
            len_bytes: 3,
            binary: false,
            ..
        } => "mediumtext",
        ColumnType::Blob { binary: false, .. } => "longtext",
        ColumnType::Blob {
            len_bytes: 1,
            binary: true,
            ..
        } => "tinyblob",
        ColumnType::Blob {
            len_bytes: 2,
            binary: true,
            ..
        } => "blob",
        ColumnType::Blob {
            len_bytes: 3,
            binary: true,
            ..
        } => "mediumblob",
        ColumnType::Blob { binary: true, .. } => "longblob",
        ColumnType::Date => "date",
        ColumnType::Time { .. } => "time",
        ColumnType::DateTime { .. } => "datetime",
        ColumnType::Timestamp { .. } => "timestamp",
        ColumnType::Enum { .. } => "enum",
        ColumnType::Set { .. } => "set",
        ColumnType::Bit { .. } => "bit",
        ColumnType::Year => "year",
        ColumnType::Uuid => "uuid",
        ColumnType::Inet6 => "inet6",
    }
}

pub(crate) fn engine_rows() -> Vec<Vec<Value>> {
    vec![vec![
        s("InnoDB"),
        s("DEFAULT"),
        s("onelog: RocksDB tables whose write-ahead log is the binary log"),
        // Transactions, XA (`XA PREPARE` ... `XA COMMIT`) and savepoints.
        s("YES"),
        s("YES"),
        s("YES"),
    ]]
}

/// SHOW INDEX rows: Table, Non_unique, Key_name, Seq_in_index, Column_name, Collation,
/// Cardinality, Sub_part, Packed, Null, Index_type, Comment, Index_comment.
pub(crate) fn index_rows(t: &TableDef, stats: Option<&TableStats>) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for (ii, idx) in t.indexes.iter().enumerate() {
        for (i, &c) in idx.columns.iter().enumerate() {
            let card = stats
                .and_then(|st| st.cardinality.get(ii))
                .and_then(|cs| cs.get(i))
                .copied()
                .unwrap_or(0);
            rows.push(vec![
                s(&t.name),
                u(!idx.unique as u64),
                s(&idx.name),
                u(i as u64 + 1),
                s(&t.columns[c].name),
                s("A"),
                u(card),
                idx.prefix_lens
                    .get(i)
                    .copied()
                    .flatten()
                    .map(|p| u(p as u64))
                    .unwrap_or(Value::Null),
                Value::Null,
                s(if t.columns[c].nullable { "YES" } else { "" }),
                s("BTREE"),
                s(""),
                s(""),
            ]);
        }
    }
    rows
}

pub(crate) fn variable_rows(sess: &Session, scope: Option<Scope>) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for d in vars::VARS {
        if scope == Some(Scope::Global) && d.scope == vars::VarScope::Session {
            continue;
        }
        if let Ok(v) = sess.get_var(scope, d.name) {
            out.push((d.name.to_string(), vars::show_value(d, &v)));
        }
    }
    out
}

/// `mysql.general_log` and `mysql.slow_log` as MariaDB 10.11 defines them: onelog writes
/// no general or slow query log, but `mariadb-dump --all-databases` copies these two
/// definitions (never their rows) from every server. A table of that name created in the
/// catalog (a restored dump) is shown instead.
fn log_table_sql(sess: &Session, db: &Option<String>, table: &str) -> Option<&'static str> {
    let d = db.as_deref().or(sess.current_db())?;
    if d != "mysql" || sess.db.engine.catalog().table(d, table).is_some() {
        return None;
    }
    match table {
        "general_log" => Some(
            "CREATE TABLE `general_log` (\n  `event_time` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),\n  `user_host` mediumtext NOT NULL,\n  `thread_id` bigint(21) unsigned NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `command_type` varchar(64) NOT NULL,\n  `argument` mediumtext NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci COMMENT='General log'",
        ),
        "slow_log" => Some(
            "CREATE TABLE `slow_log` (\n  `start_time` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),\n  `user_host` mediumtext NOT NULL,\n  `query_time` time(6) NOT NULL,\n  `lock_time` time(6) NOT NULL,\n  `rows_sent` bigint(20) unsigned NOT NULL,\n  `rows_examined` bigint(20) unsigned NOT NULL,\n  `db` varchar(512) NOT NULL,\n  `last_insert_id` int(11) NOT NULL,\n  `insert_id` int(11) NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `sql_text` mediumtext NOT NULL,\n  `thread_id` bigint(21) unsigned NOT NULL,\n  `rows_affected` bigint(20) unsigned NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci COMMENT='Slow log'",
        ),
        _ => None,
    }
}

/// The database `db` names, or the session's current one (1046 without one).
pub(crate) fn db_or_current(sess: &Session, db: &Option<String>) -> Result<String, SqlError> {
    match db {
        Some(d) => Ok(d.clone()),
        None => sess
            .current_db()
            .map(str::to_string)
            .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected")),
    }
}

fn table_def(
    sess: &Session,
    db: &Option<String>,
    table: &str,
) -> Result<std::sync::Arc<TableDef>, SqlError> {
    let d = db_or_current(sess, db)?;
    if let Some(t) = sess.temp.get(&d, table) {
        return Ok(t.clone());
    }
    let cat = sess.db.engine.catalog();
    let t = match cat.table(&d, table) {
        Some(t) => t.clone(),
        None => match sess.bind("", |b| {
            crate::views::view_table_def(b.env(), &cat, &d, table)
        })? {
            Some(v) => std::sync::Arc::new(v),
            None => {
                return Err(sql_err(
                    code::ER_NO_SUCH_TABLE,
                    format!("Table '{d}.{table}' doesn't exist"),
                ))
            }
        },
    };
    let acc = sess.account();
    if !acc.has(Priv::SELECT, &d) && !users::any_db_privilege(&acc, &d) {
        return Err(sql_err(
            code::ER_TABLEACCESS_DENIED_ERROR,
            format!(
                "SELECT command denied to user '{}'@'{}' for table `{d}`.`{table}`",
                sess.user, sess.account_host
            ),
        ));
    }
    Ok(t)
}

fn status_rows(sess: &Session) -> Vec<(String, Value)> {
    let st = sess.db.engine.status();
    let hist = sess.db.engine.commit_histograms();
    let (syncs, groups) = (&hist.sync_micros, &hist.group_sizes);
    let mut v: Vec<(String, Value)> = vec![
        ("Aborted_clients".into(), u(0)),
        ("Binlog_bytes_written".into(), u(st.binlog_bytes_written)),
        ("Binlog_commits".into(), u(st.binlog_commits)),
        ("Binlog_group_commits".into(), u(st.binlog_group_commits)),
        (
            "Connections".into(),
            u(sess.db.next_conn.load(Ordering::Relaxed) as u64 - 1),
        ),
        ("Innodb_deadlocks".into(), u(st.deadlocks)),
        ("Innodb_row_lock_timeouts".into(), u(st.lock_timeouts)),
        ("Onelog_commits".into(), u(st.commits)),
        ("Onelog_group_commit_size_avg".into(), u(groups.mean())),
        (
            "Onelog_group_commit_size_p99".into(),
            u(groups.quantile_bound(990)),
        ),
        ("Onelog_ingested_files".into(), u(st.ingested_files)),
        ("Onelog_log_sync_micros_avg".into(), u(syncs.mean())),
        (
            "Onelog_log_sync_micros_p99".into(),
            u(syncs.quantile_bound(990)),
        ),
        ("Onelog_log_syncs".into(), u(st.log_syncs)),
        ("Onelog_rollbacks".into(), u(st.rollbacks)),
        (
            "Queries".into(),
            u(sess.db.questions.load(Ordering::Relaxed)),
        ),
        (
            "Questions".into(),
            u(sess.db.questions.load(Ordering::Relaxed)),
        ),
        (
            "Prepared_stmt_count".into(),
            u(sess.db.prepared.get() as u64),
        ),
        (
            "Threads_connected".into(),
            u(sess.db.threads_connected() as u64),
        ),
        ("Threads_running".into(), u(1)),
        ("Uptime".into(), u(sess.db.uptime())),
    ];
    let ss = sess.db.engine.semisync();
    let semi = ss.status();
    let on_off = |b: bool| s(if b { "ON" } else { "OFF" });
    v.extend([
        ("Rpl_semi_sync_master_clients".into(), u(semi.clients)),
        (
            "Rpl_semi_sync_master_net_avg_wait_time".into(),
            u(semi.net_avg_wait_us),
        ),
        ("Rpl_semi_sync_master_net_waits".into(), u(semi.net_waits)),
        ("Rpl_semi_sync_master_no_tx".into(), u(semi.no_tx)),
        ("Rpl_semi_sync_master_off_times".into(), u(semi.off_times)),
        ("Rpl_semi_sync_master_get_ack".into(), u(semi.acks)),
        ("Rpl_semi_sync_master_status".into(), on_off(semi.on)),
        (
            "Rpl_semi_sync_master_tx_avg_wait_time".into(),
            u(semi.tx_avg_wait_us),
        ),
        ("Rpl_semi_sync_master_tx_waits".into(), u(semi.tx_waits)),
        ("Rpl_semi_sync_master_yes_tx".into(), u(semi.yes_tx)),
        (
            "Rpl_semi_sync_slave_status".into(),
            on_off(ss.slave_status.load(Ordering::Relaxed)),
        ),
        (
            "Slave_retried_transactions".into(),
            u(sess.db.replicas().retried_transactions()),
        ),
        (
            "Slave_running".into(),
            on_off(sess.db.replicas().replica_running()),
        ),
    ]);
    for (k, n) in sess.db.com_counters.lock().iter() {
        v.push((k.to_string(), u(*n)));
    }
    for (k, n) in sess.db.conn_stats.rows() {
        v.push((k.to_string(), u(n)));
    }
    let tls = sess.tls();
    v.push((
        "Ssl_cipher".into(),
        s(tls.map(|t| t.cipher.as_str()).unwrap_or("")),
    ));
    v.push((
        "Ssl_version".into(),
        s(tls.map(|t| t.version.as_str()).unwrap_or("")),
    ));
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The account SHOW GRANTS / SHOW CREATE USER describe (None: the session's own); others'
/// need SELECT on `mysql`. Unknown accounts: 1141 for SHOW GRANTS, 1133 for SHOW CREATE
/// USER (MariaDB's errors).
fn shown_account(
    sess: &Session,
    user: &Option<(String, String)>,
    create_user: bool,
) -> Result<users::Account, SqlError> {
    let (name, host) = match user {
        Some(x) => x.clone(),
        None => (sess.user.clone(), sess.account_host.clone()),
    };
    let me = sess.account();
    if (name != me.user || host != me.host) && !me.has(Priv::SELECT, "mysql") {
        return Err(sql_err(
            code::ER_DBACCESS_DENIED_ERROR,
            format!(
                "Access denied for user '{}'@'{}' to database 'mysql'",
                sess.user, sess.account_host
            ),
        ));
    }
    sess.db
        .accounts
        .read()
        .find(&name, &host)
        .filter(|a| a.host.eq_ignore_ascii_case(&host) || user.is_none())
        .cloned()
        .ok_or_else(|| {
            if create_user {
                sql_err(
                    code::ER_PASSWORD_NO_MATCH,
                    "Can't find any matching row in the user table",
                )
            } else {
                sql_err(
                    code::ER_NONEXISTING_GRANT,
                    format!("There is no such grant defined for user '{name}' on host '{host}'"),
                )
            }
        })
}

pub fn run_show(sess: &mut Session, a: &Admin, _p: &Parsed) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    match a {
        Admin::ShowVariables { scope, filter } => {
            let rows = variable_rows(sess, Some(*scope).filter(|s| *s == Scope::Global))
                .into_iter()
                .map(|(n, v)| vec![s(&n), Value::Bytes(crate::expr::to_bytes(&v))])
                .collect();
            result(sess, &["Variable_name", "Value"], &[], rows, filter)
        }
        Admin::ShowStatus { filter, .. } => {
            let rows = status_rows(sess)
                .into_iter()
                .map(|(n, v)| vec![s(&n), Value::Bytes(crate::expr::to_bytes(&v))])
                .collect();
            result(sess, &["Variable_name", "Value"], &[], rows, filter)
        }
        Admin::ShowDatabases { filter } => {
            let rows = crate::info_schema::visible_dbs(sess, &cat)
                .into_iter()
                .map(|d| vec![s(&d)])
                .collect();
            result(sess, &["Database"], &[], rows, filter)
        }
        Admin::ShowTables { db, full, filter } => tables::show_tables(sess, db, full, filter),
        Admin::ShowColumns {
            db,
            table,
            full,
            filter,
        } => {
            let t = table_def(sess, db, table)?;
            show_columns(sess, &t, *full, filter)
        }
        Admin::Describe { db, table } => {
            let t = table_def(sess, db, table)?;
            show_columns(sess, &t, false, &None)
        }
        Admin::ShowIndex { db, table } => tables::show_index(sess, db, table),
        Admin::ShowCreateTable { db, table } => tables::show_create_table(sess, db, table),
        Admin::ShowCreateDatabase { name } => tables::show_create_database(sess, name),
        Admin::ShowTableStatus { db, filter } => tables::show_table_status(sess, db, filter),
        Admin::ShowProcessList { full } => session_info::show_process_list(sess, full),
        Admin::ShowWarnings { errors, count } => session_info::show_warnings(sess, errors, count),
        Admin::ShowEngine { engine, mutex } => {
            crate::engine_status::show_engine(sess, engine, *mutex)
        }
        Admin::ShowPlugins => result(
            sess,
            &["Name", "Status", "Type", "Library", "License"],
            &[],
            crate::info_schema::plugin_rows(sess),
            &None,
        ),
        Admin::ShowEngines => result(
            sess,
            &[
                "Engine",
                "Support",
                "Comment",
                "Transactions",
                "XA",
                "Savepoints",
            ],
            &[],
            engine_rows(),
            &None,
        ),
        Admin::ShowCollation { filter } => result(
            sess,
            &[
                "Collation",
                "Charset",
                "Id",
                "Default",
                "Compiled",
                "Sortlen",
            ],
            &["Id", "Sortlen"],
            collation_rows(),
            filter,
        ),
        Admin::ShowCharset { filter } => result(
            sess,
            &["Charset", "Description", "Default collation", "Maxlen"],
            &["Maxlen"],
            charset_rows(),
            filter,
        ),
        Admin::ShowGrants { user } => {
            let acc = shown_account(sess, user, false)?;
            let col = format!("Grants for {}@{}", acc.user, acc.host);
            let rows = users::grants_of(&acc)
                .into_iter()
                .map(|g| vec![s(&g)])
                .collect();
            result(sess, &[&col], &[], rows, &None)
        }
        Admin::ShowCreateUser { user } => {
            let acc = shown_account(sess, user, true)?;
            let col = format!("CREATE USER for {}@{}", acc.user, acc.host);
            let rows = vec![vec![s(&users::create_user_of(&acc))]];
            result(sess, &[&col], &[], rows, &None)
        }
        Admin::ShowBinaryLogs => binlog::show_binary_logs(sess),
        Admin::ShowMasterStatus => binlog::show_master_status(sess),
        Admin::ShowSlaveHosts => binlog::show_slave_hosts(sess),
        Admin::ShowBinlogEvents {
            file,
            from,
            offset,
            limit,
        } => binlog::show_binlog_events(sess, file, from, offset, limit),
        Admin::ShowPrivileges => {
            let rows = [
                ("Alter", "Tables", "To alter the table"),
                (
                    "Create",
                    "Databases,Tables,Indexes",
                    "To create new databases and tables",
                ),
                ("Delete", "Tables", "To delete existing rows"),
                ("Drop", "Databases,Tables", "To drop databases and tables"),
                (
                    "Grant option",
                    "Databases,Tables",
                    "To give to other users those privileges you possess",
                ),
                ("Index", "Tables", "To create or drop indexes"),
                ("Insert", "Tables", "To insert data into tables"),
                (
                    "Process",
                    "Server Admin",
                    "To view the plain text of currently executing queries",
                ),
                (
                    "Reload",
                    "Server Admin",
                    "To reload or refresh tables, logs and privileges",
                ),
                (
                    "Replication slave",
                    "Server Admin",
                    "To read binary log events from the master",
                ),
                ("Select", "Tables", "To retrieve rows from table"),
                (
                    "Super",
                    "Server Admin",
                    "To use KILL thread, SET GLOBAL, CHANGE MASTER, etc.",
                ),
                ("Update", "Tables", "To update existing rows"),
            ]
            .iter()
            .map(|(a, b, c)| vec![s(a), s(b), s(c)])
            .collect();
            result(sess, &["Privilege", "Context", "Comment"], &[], rows, &None)
        }
        other => Err(unsupported(&format!("{other:?}"))),
    }
}

fn level_of(w: &SqlError) -> &'static str {
    if w.note {
        return "Note";
    }
    match w.code {
        1003 | 1007 | 1008 | 1031 | 1050 | 1051 | 1973 | 1974 => "Note",
        1213 | 1205 | 1064 | 1146 | 1054 | 1049 => "Error",
        _ => "Warning",
    }
}

fn show_columns(
    sess: &Session,
    t: &TableDef,
    full: bool,
    filter: &Option<ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let rows = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = vec![s(&c.name), s(&type_name(c))];
            if full {
                r.push(match c.ty.collation() {
                    Some(coll) if !c.ty.is_binary() => s(coll.name()),
                    _ => Value::Null,
                });
            }
            r.push(s(if c.nullable { "YES" } else { "NO" }));
            r.push(s(key_of(t, i)));
            r.push(opt_s(default_text(c).as_deref()));
            r.push(s(&extra_of(c)));
            if full {
                r.push(s("select,insert,update,references"));
                r.push(s(&c.comment));
            }
            r
        })
        .collect();
    if full {
        result(
            sess,
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ],
            &[],
            rows,
            filter,
        )
    } else {
        result(
            sess,
            &["Field", "Type", "Null", "Key", "Default", "Extra"],
            &[],
            rows,
            filter,
        )
    }
}

/// The collations SHOW COLLATION and information_schema.COLLATIONS list: name, charset,
/// id, default, compiled, sort length.
pub(crate) fn collation_rows() -> Vec<Vec<Value>> {
    [
        ("utf8mb4_general_ci", "utf8mb4", 45, "Yes"),
        ("utf8mb4_bin", "utf8mb4", 46, ""),
        ("binary", "binary", 63, "Yes"),
        ("utf8mb3_general_ci", "utf8mb3", 33, "Yes"),
        ("latin1_swedish_ci", "latin1", 8, "Yes"),
    ]
    .into_iter()
    .map(|(name, cs, id, default)| vec![s(name), s(cs), u(id), s(default), s("Yes"), u(1)])
    .collect()
}

/// The character sets SHOW CHARACTER SET and information_schema.CHARACTER_SETS list:
/// name, description, default collation, maximum bytes per character.
pub(crate) fn charset_rows() -> Vec<Vec<Value>> {
    [
        ("binary", "Binary pseudo charset", "binary", 1),
        ("latin1", "cp1252 West European", "latin1_swedish_ci", 1),
        ("utf8mb3", "UTF-8 Unicode", "utf8mb3_general_ci", 3),
        ("utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", 4),
    ]
    .into_iter()
    .map(|(name, desc, coll, max)| vec![s(name), s(desc), s(coll), u(max)])
    .collect()
}

/// [`table_status_cells`] of a view: NULL but the comment `VIEW`.
pub(crate) fn view_status_cells() -> Vec<Value> {
    let mut v = vec![Value::Null; 16];
    v.push(s("VIEW"));
    v
}

/// The columns SHOW TABLE STATUS and information_schema.TABLES share, from `Engine` to
/// `Comment`: the engine, version 10, row format, the statistics (0 or NULL: not kept), the
/// collation, the create options and the comment.
/// A time kept as Unix seconds, as a DATETIME (NULL: not known).
fn unix_time(secs: Option<i64>) -> Value {
    match secs {
        Some(s) => Value::DateTime(onelog_types::DateTime::from_unix(s, 0)),
        None => Value::Null,
    }
}

pub(crate) fn table_status_cells(
    t: &onelog_engine::TableDef,
    stats: Option<TableStats>,
) -> Vec<Value> {
    let st = stats.unwrap_or_default();
    vec![
        s(if t.engine_name.is_empty() {
            "InnoDB"
        } else {
            &t.engine_name
        }),
        u(10),
        s(&t.row_format()),
        u(st.rows),
        u(st.data_length.checked_div(st.rows).unwrap_or(0)),
        u(st.data_length),
        u(0),
        u(st.index_length),
        u(0),
        st.auto_increment.map(u).unwrap_or(Value::Null),
        unix_time(t.create_time),
        unix_time(st.update_time),
        Value::Null,
        s(t.collation.name()),
        Value::Null,
        s(&t.create_options_text()),
        s(&t.comment),
    ]
}
