//! SHOW statements about tables and databases: SHOW [FULL] TABLES, SHOW INDEX, SHOW
//! CREATE TABLE, SHOW CREATE DATABASE and SHOW TABLE STATUS.

use onelog_types::{code, SqlError, Value};

use super::*;
use crate::parser::ShowFilter;
use crate::session::Session;
use crate::users;
use crate::{sql_err, QueryResult};

/// SHOW [FULL] TABLES [FROM db] [LIKE ... | WHERE ...].
pub(super) fn show_tables(
    sess: &mut Session,
    db: &Option<String>,
    full: &bool,
    filter: &Option<ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    let d = db_or_current(sess, db)?;
    if !cat.has_database(&d) {
        return Err(sql_err(
            code::ER_BAD_DB_ERROR,
            format!("Unknown database '{d}'"),
        ));
    }
    if !users::any_db_privilege(&sess.account(), &d) {
        return Err(sql_err(
            code::ER_DBACCESS_DENIED_ERROR,
            format!(
                "Access denied for user '{}'@'{}' to database '{d}'",
                sess.user, sess.account_host
            ),
        ));
    }
    let col = format!("Tables_in_{d}");
    let mut named: Vec<(&str, &str)> = cat
        .tables_in(&d)
        .map(|t| (t.name.as_str(), crate::info_schema::table_type(t)))
        .chain(
            cat.objects_in(onelog_engine::ObjectKind::View, &d)
                .map(|v| (v.name.as_str(), "VIEW")),
        )
        .collect();
    named.sort();
    let rows: Vec<Vec<Value>> = named
        .into_iter()
        .map(|(n, kind)| {
            if *full {
                vec![s(n), s(kind)]
            } else {
                vec![s(n)]
            }
        })
        .collect();
    if *full {
        result(sess, &[&col, "Table_type"], &[], rows, filter)
    } else {
        result(sess, &[&col], &[], rows, filter)
    }
}

/// SHOW INDEX FROM table.
pub(super) fn show_index(
    sess: &mut Session,
    db: &Option<String>,
    table: &str,
) -> Result<QueryResult, SqlError> {
    let t = table_def(sess, db, table)?;
    let stats = sess.db.engine.table_stats(&t).ok();
    let mut rows = index_rows(&t, stats.as_ref());
    for r in &mut rows {
        r.push(s("NO"));
    }
    result(
        sess,
        &[
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
            "Ignored",
        ],
        &["Non_unique", "Seq_in_index", "Cardinality", "Sub_part"],
        rows,
        &None,
    )
}

/// SHOW CREATE TABLE (a table, a view or a sequence).
pub(super) fn show_create_table(
    sess: &mut Session,
    db: &Option<String>,
    table: &str,
) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    let d = db.clone().or_else(|| sess.current_db().map(str::to_string));
    if let Some(d) = &d {
        if cat.table(d, table).is_none()
            && cat
                .object(onelog_engine::ObjectKind::View, d, table)
                .is_some()
        {
            return sess.show_create_view(db, table);
        }
    }
    if let Some(sql) = log_table_sql(sess, db, table) {
        let rows = vec![vec![s(table), s(sql)]];
        return result(sess, &["Table", "Create Table"], &[], rows, &None);
    }
    let t = table_def(sess, db, table)?;
    sess.check_locked_tables(&[crate::locks::plain_ref(&t.db, &t.name)], &[])?;
    let next = sess
        .db
        .engine
        .auto_increment_next(&t)
        .map_err(crate::executor::engine_err)?;
    let mut sql = create_table_sql(&t, next);
    if onelog_engine::is_temp_table(&t) {
        sql.replace_range(.."CREATE TABLE".len(), "CREATE TEMPORARY TABLE");
    }
    result(
        sess,
        &["Table", "Create Table"],
        &[],
        vec![vec![s(&t.name), s(&sql)]],
        &None,
    )
}

/// SHOW CREATE DATABASE.
pub(super) fn show_create_database(
    sess: &mut Session,
    name: &str,
) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    if !cat.has_database(name) {
        return Err(sql_err(
            code::ER_BAD_DB_ERROR,
            format!("Unknown database '{name}'"),
        ));
    }
    result(
        sess,
        &["Database", "Create Database"],
        &[],
        vec![vec![
            s(name),
            s(&format!(
                "CREATE DATABASE `{name}` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"
            )),
        ]],
        &None,
    )
}

/// SHOW TABLE STATUS [FROM db] [LIKE ... | WHERE ...].
pub(super) fn show_table_status(
    sess: &mut Session,
    db: &Option<String>,
    filter: &Option<ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    let d = db_or_current(sess, db)?;
    let mut rows: Vec<Vec<Value>> = cat
        .tables_in(&d)
        .map(|t| {
            let mut row = vec![s(&t.name)];
            row.extend(table_status_cells(t, sess.db.engine.table_stats(t).ok()));
            row.extend([u(0), s("N")]);
            row
        })
        .chain(
            cat.objects_in(onelog_engine::ObjectKind::View, &d)
                .map(|v| {
                    let mut row = vec![s(&v.name)];
                    row.extend(view_status_cells());
                    row.extend([Value::Null, Value::Null]);
                    row
                }),
        )
        .collect();
    rows.sort_by(|a, b| crate::expr::to_string(&a[0]).cmp(&crate::expr::to_string(&b[0])));
    result(
        sess,
        &[
            "Name",
            "Engine",
            "Version",
            "Row_format",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Create_time",
            "Update_time",
            "Check_time",
            "Collation",
            "Checksum",
            "Create_options",
            "Comment",
            "Max_index_length",
            "Temporary",
        ],
        &[
            "Version",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Max_index_length",
        ],
        rows,
        filter,
    )
}
