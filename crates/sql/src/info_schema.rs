//! The read-only `information_schema`: SCHEMATA, TABLES, COLUMNS, STATISTICS, PARTITIONS,
//! PROCESSLIST, SESSION_VARIABLES, GLOBAL_VARIABLES, ENGINES, CHECK_CONSTRAINTS, PLUGINS,
//! USER_PRIVILEGES, SCHEMA_PRIVILEGES, TRIGGERS, VIEWS, ROUTINES, PARAMETERS, EVENTS and the
//! empty FILES (onelog has no tablespaces), and onelog's ONELOG_BINLOG_FILES,
//! ONELOG_SYNC_HISTOGRAM and ONELOG_GROUP_COMMIT_HISTOGRAM (`onelog.rs`), built from the
//! catalog and the server state when a statement reads them.

mod innodb_trx;
mod keys;
mod onelog;
mod plugins;
mod privileges;

pub(crate) use plugins::show_rows as plugin_rows;

use onelog_engine::Catalog;
use onelog_types::{ColumnType, Value};

use crate::binder::VirtualColumn;
use crate::parser::Scope;
use crate::session::Session;
use crate::show::{
    data_type, engine_rows, extra_of, index_rows, key_of, opt_s, quote_default, s, type_name, u,
    variable_rows,
};
use crate::users::{self, Priv};

pub(crate) fn visible_dbs(sess: &Session, cat: &Catalog) -> Vec<String> {
    let acc = sess.account();
    let mut v: Vec<String> = cat
        .databases
        .keys()
        .filter(|d| acc.has_global(Priv::SHOW_DB) || users::any_db_privilege(&acc, d))
        .cloned()
        .collect();
    v.push("information_schema".into());
    v.sort();
    v
}

/// Rows of an information_schema table.
pub fn info_schema(
    sess: &Session,
    cat: &Catalog,
    table: &str,
) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
    let text = |names: &[&str]| -> Vec<VirtualColumn> {
        names.iter().map(|n| VirtualColumn::text(n)).collect()
    };
    let dbs = visible_dbs(sess, cat);
    let tables = || {
        cat.tables
            .values()
            .filter(|t| dbs.contains(&t.db))
            .cloned()
            .collect::<Vec<_>>()
    };
    let views = || {
        cat.objects_of(onelog_engine::ObjectKind::View)
            .filter(|v| dbs.contains(&v.db))
            .cloned()
            .collect::<Vec<_>>()
    };
    Some(match table {
        "SCHEMATA" => (
            text(&[
                "CATALOG_NAME",
                "SCHEMA_NAME",
                "DEFAULT_CHARACTER_SET_NAME",
                "DEFAULT_COLLATION_NAME",
                "SQL_PATH",
                "SCHEMA_COMMENT",
            ]),
            dbs.iter()
                .map(|d| {
                    vec![
                        s("def"),
                        s(d),
                        s("utf8mb4"),
                        s("utf8mb4_general_ci"),
                        Value::Null,
                        s(""),
                    ]
                })
                .collect(),
        ),
        "TABLES" => {
            let mut cols = text(&[
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "TABLE_TYPE",
                "ENGINE",
                "VERSION",
                "ROW_FORMAT",
                "TABLE_ROWS",
                "AVG_ROW_LENGTH",
                "DATA_LENGTH",
                "MAX_DATA_LENGTH",
                "INDEX_LENGTH",
                "DATA_FREE",
                "AUTO_INCREMENT",
                "CREATE_TIME",
                "UPDATE_TIME",
                "CHECK_TIME",
                "TABLE_COLLATION",
                "CHECKSUM",
                "CREATE_OPTIONS",
                "TABLE_COMMENT",
            ]);
            for c in cols.iter_mut() {
                if matches!(
                    c.name.as_str(),
                    "VERSION"
                        | "TABLE_ROWS"
                        | "AVG_ROW_LENGTH"
                        | "DATA_LENGTH"
                        | "MAX_DATA_LENGTH"
                        | "INDEX_LENGTH"
                        | "DATA_FREE"
                        | "AUTO_INCREMENT"
                ) {
                    c.ty = VirtualColumn::int("x").ty;
                }
            }
            let mut rows: Vec<Vec<Value>> = tables()
                .iter()
                .map(|t| {
                    let mut row = vec![s("def"), s(&t.db), s(&t.name), s(table_type(t))];
                    row.extend(crate::show::table_status_cells(
                        t,
                        sess.db.engine.table_stats(t).ok(),
                    ));
                    row
                })
                .collect();
            for v in views() {
                let mut row = vec![s("def"), s(&v.db), s(&v.name), s("VIEW")];
                row.extend(crate::show::view_status_cells());
                rows.push(row);
            }
            (cols, rows)
        }
        "COLUMNS" => {
            let mut cols = text(&[
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "COLUMN_NAME",
                "ORDINAL_POSITION",
                "COLUMN_DEFAULT",
                "IS_NULLABLE",
                "DATA_TYPE",
                "CHARACTER_MAXIMUM_LENGTH",
                "CHARACTER_OCTET_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "DATETIME_PRECISION",
                "CHARACTER_SET_NAME",
                "COLLATION_NAME",
                "COLUMN_TYPE",
                "COLUMN_KEY",
                "EXTRA",
                "PRIVILEGES",
                "COLUMN_COMMENT",
                "IS_GENERATED",
                "GENERATION_EXPRESSION",
            ]);
            for c in cols.iter_mut() {
                if matches!(
                    c.name.as_str(),
                    "ORDINAL_POSITION"
                        | "CHARACTER_MAXIMUM_LENGTH"
                        | "CHARACTER_OCTET_LENGTH"
                        | "NUMERIC_PRECISION"
                        | "NUMERIC_SCALE"
                        | "DATETIME_PRECISION"
                ) {
                    c.ty = VirtualColumn::int("x").ty;
                }
            }
            let mut rows = Vec::new();
            let mut all = tables();
            // A view's columns are its query's (not while binding a view: a view over
            // this table would bind itself again).
            if !crate::binder::binding_view() {
                for v in views() {
                    let def = sess.bind("", |b| {
                        crate::views::view_table_def(b.env(), cat, &v.db, &v.name)
                    });
                    if let Ok(Some(def)) = def {
                        all.push(std::sync::Arc::new(def));
                    }
                }
            }
            for t in all {
                for (i, c) in t.columns.iter().enumerate() {
                    let (cmax, coct) = match c.ty {
                        ColumnType::Char { len, binary, .. }
                        | ColumnType::Varchar { len, binary, .. } => {
                            (u(len as u64), u(len as u64 * if binary { 1 } else { 4 }))
                        }
                        ColumnType::Blob { .. } => {
                            let m = c.ty.max_bytes().unwrap_or(0);
                            (u(m), u(m))
                        }
                        ColumnType::Enum { .. } | ColumnType::Set { .. } => {
                            let m = c.ty.max_bytes().unwrap_or(0);
                            (u(m / 4), u(m))
                        }
                        _ => (Value::Null, Value::Null),
                    };
                    let (np, ns) = match c.ty {
                        ColumnType::Int { bytes, unsigned } => (
                            u(match (bytes, unsigned) {
                                (1, _) => 3,
                                (2, _) => 5,
                                (3, _) => 7,
                                (4, _) => 10,
                                (_, true) => 20,
                                _ => 19,
                            }),
                            u(0),
                        ),
                        ColumnType::Decimal { precision, scale } => {
                            (u(precision as u64), u(scale as u64))
                        }
                        ColumnType::Float => (u(12), Value::Null),
                        ColumnType::Double => (u(22), Value::Null),
                        ColumnType::Bit { bits } => (u(bits as u64), Value::Null),
                        _ => (Value::Null, Value::Null),
                    };
                    let dp = match c.ty {
                        ColumnType::Time { fsp }
                        | ColumnType::DateTime { fsp }
                        | ColumnType::Timestamp { fsp } => u(fsp as u64),
                        ColumnType::Date => u(0),
                        _ => Value::Null,
                    };
                    let textual = c.ty.is_string() && !c.ty.is_binary();
                    rows.push(vec![
                        s("def"),
                        s(&t.db),
                        s(&t.name),
                        s(&c.name),
                        u(i as u64 + 1),
                        opt_s(quote_default(c).as_deref()),
                        s(if c.nullable { "YES" } else { "NO" }),
                        s(data_type(&c.ty)),
                        cmax,
                        coct,
                        np,
                        ns,
                        dp,
                        match c.ty.collation() {
                            Some(coll) if textual => s(coll.charset()),
                            _ => Value::Null,
                        },
                        match c.ty.collation() {
                            Some(coll) if textual => s(coll.name()),
                            _ => Value::Null,
                        },
                        s(&type_name(c)),
                        s(key_of(&t, i)),
                        s(&extra_of(c)),
                        s("select,insert,update,references"),
                        s(&c.comment),
                        // onelog has no generated columns.
                        s("NEVER"),
                        Value::Null,
                    ]);
                }
            }
            (cols, rows)
        }
        "STATISTICS" => {
            let mut cols = text(&[
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "NON_UNIQUE",
                "INDEX_SCHEMA",
                "INDEX_NAME",
                "SEQ_IN_INDEX",
                "COLUMN_NAME",
                "COLLATION",
                "CARDINALITY",
                "SUB_PART",
                "PACKED",
                "NULLABLE",
                "INDEX_TYPE",
                "COMMENT",
                "INDEX_COMMENT",
            ]);
            for c in cols.iter_mut() {
                if matches!(
                    c.name.as_str(),
                    "NON_UNIQUE" | "SEQ_IN_INDEX" | "CARDINALITY" | "SUB_PART"
                ) {
                    c.ty = VirtualColumn::int("x").ty;
                }
            }
            let mut rows = Vec::new();
            for t in tables() {
                let stats = sess.db.engine.table_stats(&t).ok();
                rows.extend(index_rows(&t, stats.as_ref()).into_iter().map(|r| {
                    vec![
                        s("def"),
                        s(&t.db),
                        r[0].clone(),
                        r[1].clone(),
                        s(&t.db),
                        r[2].clone(),
                        r[3].clone(),
                        r[4].clone(),
                        r[5].clone(),
                        r[6].clone(),
                        r[7].clone(),
                        r[8].clone(),
                        r[9].clone(),
                        r[10].clone(),
                        r[11].clone(),
                        r[12].clone(),
                    ]
                }));
            }
            (cols, rows)
        }
        "PROCESSLIST" => {
            let mut cols = text(&[
                "ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO",
            ]);
            cols[0].ty = VirtualColumn::int("x").ty;
            cols[5].ty = VirtualColumn::int("x").ty;
            let rows = sess
                .db
                .process_list()
                .into_iter()
                .map(|p| {
                    vec![
                        u(p.id as u64),
                        s(&p.user),
                        s(&p.host),
                        opt_s(p.db.as_deref()),
                        s(&p.command),
                        u(p.time),
                        s(&p.state),
                        opt_s(p.info.as_deref()),
                    ]
                })
                .collect();
            (cols, rows)
        }
        "SESSION_VARIABLES" | "GLOBAL_VARIABLES" => {
            let scope = if table == "GLOBAL_VARIABLES" {
                Some(Scope::Global)
            } else {
                None
            };
            (
                text(&["VARIABLE_NAME", "VARIABLE_VALUE"]),
                variable_rows(sess, scope)
                    .into_iter()
                    .map(|(n, v)| {
                        vec![
                            s(&n.to_uppercase()),
                            Value::Bytes(crate::expr::to_bytes(&v)),
                        ]
                    })
                    .collect(),
            )
        }
        "ENGINES" => (
            text(&[
                "ENGINE",
                "SUPPORT",
                "COMMENT",
                "TRANSACTIONS",
                "XA",
                "SAVEPOINTS",
            ]),
            engine_rows(),
        ),
        "PARTITIONS" => {
            // One row per table, as MariaDB shows a table that is not partitioned.
            let cols = with_ints(
                &[
                    "TABLE_CATALOG",
                    "TABLE_SCHEMA",
                    "TABLE_NAME",
                    "PARTITION_NAME",
                    "SUBPARTITION_NAME",
                    "PARTITION_ORDINAL_POSITION",
                    "SUBPARTITION_ORDINAL_POSITION",
                    "PARTITION_METHOD",
                    "SUBPARTITION_METHOD",
                    "PARTITION_EXPRESSION",
                    "SUBPARTITION_EXPRESSION",
                    "PARTITION_DESCRIPTION",
                    "TABLE_ROWS",
                    "AVG_ROW_LENGTH",
                    "DATA_LENGTH",
                    "MAX_DATA_LENGTH",
                    "INDEX_LENGTH",
                    "DATA_FREE",
                    "CREATE_TIME",
                    "UPDATE_TIME",
                    "CHECK_TIME",
                    "CHECKSUM",
                    "PARTITION_COMMENT",
                    "NODEGROUP",
                    "TABLESPACE_NAME",
                ],
                &[
                    "PARTITION_ORDINAL_POSITION",
                    "SUBPARTITION_ORDINAL_POSITION",
                    "TABLE_ROWS",
                    "AVG_ROW_LENGTH",
                    "DATA_LENGTH",
                    "MAX_DATA_LENGTH",
                    "INDEX_LENGTH",
                    "DATA_FREE",
                    "CHECKSUM",
                ],
            );
            let rows = tables()
                .iter()
                .map(|t| {
                    let mut r = vec![s("def"), s(&t.db), s(&t.name)];
                    r.extend(std::iter::repeat_n(Value::Null, 9));
                    r.extend([u(0), u(0), u(0), Value::Null, u(0), u(0)]);
                    r.extend(std::iter::repeat_n(Value::Null, 4));
                    r.extend([s(""), s(""), Value::Null]);
                    r
                })
                .collect();
            (cols, rows)
        }
        "CHECK_CONSTRAINTS" => {
            let mut rows = Vec::new();
            for t in tables() {
                for c in &t.checks {
                    rows.push(vec![
                        s("def"),
                        s(&t.db),
                        s(&t.name),
                        s(&c.name),
                        s(if c.column_level { "Column" } else { "Table" }),
                        s(&c.expr),
                    ]);
                }
            }
            (
                text(&[
                    "CONSTRAINT_CATALOG",
                    "CONSTRAINT_SCHEMA",
                    "TABLE_NAME",
                    "CONSTRAINT_NAME",
                    "LEVEL",
                    "CHECK_CLAUSE",
                ]),
                rows,
            )
        }
        "FILES" => (
            with_ints(
                &[
                    "FILE_ID",
                    "FILE_NAME",
                    "FILE_TYPE",
                    "TABLESPACE_NAME",
                    "TABLE_CATALOG",
                    "TABLE_SCHEMA",
                    "TABLE_NAME",
                    "LOGFILE_GROUP_NAME",
                    "LOGFILE_GROUP_NUMBER",
                    "ENGINE",
                    "FULLTEXT_KEYS",
                    "DELETED_ROWS",
                    "UPDATE_COUNT",
                    "FREE_EXTENTS",
                    "TOTAL_EXTENTS",
                    "EXTENT_SIZE",
                    "INITIAL_SIZE",
                    "MAXIMUM_SIZE",
                    "AUTOEXTEND_SIZE",
                    "CREATION_TIME",
                    "LAST_UPDATE_TIME",
                    "LAST_ACCESS_TIME",
                    "RECOVER_TIME",
                    "TRANSACTION_COUNTER",
                    "VERSION",
                    "ROW_FORMAT",
                    "TABLE_ROWS",
                    "AVG_ROW_LENGTH",
                    "DATA_LENGTH",
                    "MAX_DATA_LENGTH",
                    "INDEX_LENGTH",
                    "DATA_FREE",
                    "CREATE_TIME",
                    "UPDATE_TIME",
                    "CHECK_TIME",
                    "CHECKSUM",
                    "STATUS",
                    "EXTRA",
                ],
                &[
                    "FILE_ID",
                    "LOGFILE_GROUP_NUMBER",
                    "DELETED_ROWS",
                    "UPDATE_COUNT",
                    "FREE_EXTENTS",
                    "TOTAL_EXTENTS",
                    "EXTENT_SIZE",
                    "INITIAL_SIZE",
                    "MAXIMUM_SIZE",
                    "AUTOEXTEND_SIZE",
                    "RECOVER_TIME",
                    "TRANSACTION_COUNTER",
                    "VERSION",
                    "TABLE_ROWS",
                    "AVG_ROW_LENGTH",
                    "DATA_LENGTH",
                    "MAX_DATA_LENGTH",
                    "INDEX_LENGTH",
                    "DATA_FREE",
                    "CHECKSUM",
                ],
            ),
            vec![],
        ),
        "TRIGGERS" => (
            with_ints(
                &[
                    "TRIGGER_CATALOG",
                    "TRIGGER_SCHEMA",
                    "TRIGGER_NAME",
                    "EVENT_MANIPULATION",
                    "EVENT_OBJECT_CATALOG",
                    "EVENT_OBJECT_SCHEMA",
                    "EVENT_OBJECT_TABLE",
                    "ACTION_ORDER",
                    "ACTION_CONDITION",
                    "ACTION_STATEMENT",
                    "ACTION_ORIENTATION",
                    "ACTION_TIMING",
                    "ACTION_REFERENCE_OLD_TABLE",
                    "ACTION_REFERENCE_NEW_TABLE",
                    "ACTION_REFERENCE_OLD_ROW",
                    "ACTION_REFERENCE_NEW_ROW",
                    "CREATED",
                    "SQL_MODE",
                    "DEFINER",
                    "CHARACTER_SET_CLIENT",
                    "COLLATION_CONNECTION",
                    "DATABASE_COLLATION",
                ],
                &["ACTION_ORDER"],
            ),
            crate::routines::info_rows(cat, "TRIGGERS", &dbs).unwrap_or_default(),
        ),
        "VIEWS" => (
            text(&[
                "TABLE_CATALOG",
                "TABLE_SCHEMA",
                "TABLE_NAME",
                "VIEW_DEFINITION",
                "CHECK_OPTION",
                "IS_UPDATABLE",
                "DEFINER",
                "SECURITY_TYPE",
                "CHARACTER_SET_CLIENT",
                "COLLATION_CONNECTION",
                "ALGORITHM",
            ]),
            views()
                .iter()
                .filter_map(|v| {
                    let def = crate::views::ViewDef::decode(v).ok()?;
                    let updatable = !crate::binder::binding_view()
                        && sess
                            .bind("", |b| {
                                crate::binder::bind_view_query(
                                    b.env(),
                                    &v.db,
                                    &def.query,
                                    &def.columns,
                                )
                            })
                            .is_ok_and(|(sel, _)| crate::views::ViewDef::updatable(&sel));
                    Some(vec![
                        s("def"),
                        s(&v.db),
                        s(&v.name),
                        s(&def.query),
                        s(&def.check_option),
                        s(if updatable { "YES" } else { "NO" }),
                        s(&format!("{}@{}", def.definer_user, def.definer_host)),
                        s(&def.security),
                        s(&def.charset_client),
                        s(&def.collation_connection),
                        s(&def.algorithm),
                    ])
                })
                .collect(),
        ),
        "ROUTINES" => (
            with_ints(
                &[
                    "SPECIFIC_NAME",
                    "ROUTINE_CATALOG",
                    "ROUTINE_SCHEMA",
                    "ROUTINE_NAME",
                    "ROUTINE_TYPE",
                    "DATA_TYPE",
                    "CHARACTER_MAXIMUM_LENGTH",
                    "CHARACTER_OCTET_LENGTH",
                    "NUMERIC_PRECISION",
                    "NUMERIC_SCALE",
                    "DATETIME_PRECISION",
                    "CHARACTER_SET_NAME",
                    "COLLATION_NAME",
                    "DTD_IDENTIFIER",
                    "ROUTINE_BODY",
                    "ROUTINE_DEFINITION",
                    "EXTERNAL_NAME",
                    "EXTERNAL_LANGUAGE",
                    "PARAMETER_STYLE",
                    "IS_DETERMINISTIC",
                    "SQL_DATA_ACCESS",
                    "SQL_PATH",
                    "SECURITY_TYPE",
                    "CREATED",
                    "LAST_ALTERED",
                    "SQL_MODE",
                    "ROUTINE_COMMENT",
                    "DEFINER",
                    "CHARACTER_SET_CLIENT",
                    "COLLATION_CONNECTION",
                    "DATABASE_COLLATION",
                ],
                &[
                    "CHARACTER_MAXIMUM_LENGTH",
                    "CHARACTER_OCTET_LENGTH",
                    "NUMERIC_PRECISION",
                    "NUMERIC_SCALE",
                    "DATETIME_PRECISION",
                ],
            ),
            crate::routines::info_rows(cat, "ROUTINES", &dbs).unwrap_or_default(),
        ),
        "PARAMETERS" => (
            with_ints(
                &[
                    "SPECIFIC_CATALOG",
                    "SPECIFIC_SCHEMA",
                    "SPECIFIC_NAME",
                    "ORDINAL_POSITION",
                    "PARAMETER_MODE",
                    "PARAMETER_NAME",
                    "DATA_TYPE",
                    "CHARACTER_MAXIMUM_LENGTH",
                    "CHARACTER_OCTET_LENGTH",
                    "NUMERIC_PRECISION",
                    "NUMERIC_SCALE",
                    "DATETIME_PRECISION",
                    "CHARACTER_SET_NAME",
                    "COLLATION_NAME",
                    "DTD_IDENTIFIER",
                    "ROUTINE_TYPE",
                ],
                &[
                    "ORDINAL_POSITION",
                    "CHARACTER_MAXIMUM_LENGTH",
                    "CHARACTER_OCTET_LENGTH",
                    "NUMERIC_PRECISION",
                    "NUMERIC_SCALE",
                    "DATETIME_PRECISION",
                ],
            ),
            crate::routines::info_rows(cat, "PARAMETERS", &dbs).unwrap_or_default(),
        ),
        "EVENTS" => crate::events::info_schema(sess, cat, &dbs),
        "PLUGINS" => plugins::info_rows(sess),
        "INNODB_TRX" => innodb_trx::info_rows(sess),
        other => {
            return keys::rows(other, &tables())
                .or_else(|| privileges::rows(sess, other))
                .or_else(|| onelog::rows(sess, other));
        }
    })
}

/// Text columns `names`, except `ints`, which are unsigned integers.
fn with_ints(names: &[&str], ints: &[&str]) -> Vec<VirtualColumn> {
    names
        .iter()
        .map(|n| {
            if ints.contains(n) {
                VirtualColumn::int(n)
            } else {
                VirtualColumn::text(n)
            }
        })
        .collect()
}

/// TABLE_TYPE of a table: BASE TABLE, or SEQUENCE.
pub(crate) fn table_type(t: &onelog_engine::TableDef) -> &'static str {
    if t.sequence {
        "SEQUENCE"
    } else {
        "BASE TABLE"
    }
}
