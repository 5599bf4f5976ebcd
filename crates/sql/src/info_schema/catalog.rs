//! information_schema tables of the catalog: SCHEMATA, TABLES, COLUMNS, STATISTICS,
//! PARTITIONS, CHECK_CONSTRAINTS and the empty FILES.

use onelog_types::{ColumnType, Value};

use super::{table_type, text, visible_tables, visible_views, with_ints, Ctx, Rows};
use crate::binder::VirtualColumn;
use crate::show::{data_type, extra_of, index_rows, key_of, opt_s, quote_default, s, type_name, u};

pub(super) fn schemata(cx: &Ctx) -> Rows {
    let Ctx { dbs, .. } = *cx;
    (
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
    )
}

pub(super) fn tables(cx: &Ctx) -> Rows {
    let Ctx { sess, cat, dbs } = *cx;
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
    let mut rows: Vec<Vec<Value>> = visible_tables(cat, dbs)
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
    for v in visible_views(cat, dbs) {
        let mut row = vec![s("def"), s(&v.db), s(&v.name), s("VIEW")];
        row.extend(crate::show::view_status_cells());
        rows.push(row);
    }
    (cols, rows)
}

pub(super) fn columns(cx: &Ctx) -> Rows {
    let Ctx { sess, cat, dbs } = *cx;
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
    let mut all = visible_tables(cat, dbs);
    // A view's columns are its query's (not while binding a view: a view over
    // this table would bind itself again).
    if !crate::binder::binding_view() {
        for v in visible_views(cat, dbs) {
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
                ColumnType::Char { len, binary, .. } | ColumnType::Varchar { len, binary, .. } => {
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
                        (3, false) => 7,
                        (3, true) => 8,
                        (4, _) => 10,
                        (_, true) => 20,
                        _ => 19,
                    }),
                    u(0),
                ),
                ColumnType::Decimal { precision, scale } => (u(precision as u64), u(scale as u64)),
                ColumnType::Float | ColumnType::Double if c.num.digits.is_some() => {
                    let (m, d) = c.num.digits.unwrap_or_default();
                    (u(m as u64), u(d as u64))
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

pub(super) fn statistics(cx: &Ctx) -> Rows {
    let Ctx { sess, cat, dbs } = *cx;
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
    for t in visible_tables(cat, dbs) {
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

pub(super) fn partitions(cx: &Ctx) -> Rows {
    let Ctx { cat, dbs, .. } = *cx;
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
    let rows = visible_tables(cat, dbs)
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

pub(super) fn check_constraints(cx: &Ctx) -> Rows {
    let Ctx { cat, dbs, .. } = *cx;
    let mut rows = Vec::new();
    for t in visible_tables(cat, dbs) {
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

pub(super) fn files(_cx: &Ctx) -> Rows {
    (
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
    )
}
