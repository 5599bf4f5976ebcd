//! information_schema tables about keys, constraints and character sets: TABLE_CONSTRAINTS
//! (primary keys, unique keys, foreign keys, CHECK constraints), KEY_COLUMN_USAGE (their
//! columns), REFERENTIAL_CONSTRAINTS (foreign keys, see `foreign_keys/info.rs`), CHARACTER_SETS and
//! COLLATIONS (those SHOW CHARACTER SET and SHOW COLLATION list).

use std::sync::Arc;

use onelog_engine::TableDef;
use onelog_types::Value;

use super::with_ints;
use crate::binder::VirtualColumn;
use crate::show::{s, u};

/// Rows of one of these tables over `tables` (None: not one of them).
pub(super) fn rows(
    table: &str,
    tables: &[Arc<TableDef>],
) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
    Some(match table {
        "TABLE_CONSTRAINTS" => {
            let mut rows = Vec::new();
            for t in tables {
                for idx in t
                    .indexes
                    .iter()
                    .filter(|i| i.unique && !i.columns.is_empty())
                {
                    let kind = if idx.primary { "PRIMARY KEY" } else { "UNIQUE" };
                    rows.push(vec![
                        s("def"),
                        s(&t.db),
                        s(&idx.name),
                        s(&t.db),
                        s(&t.name),
                        s(kind),
                    ]);
                }
                crate::foreign_keys::info::table_constraints(t, &mut rows);
                for c in &t.checks {
                    rows.push(vec![
                        s("def"),
                        s(&t.db),
                        s(&c.name),
                        s(&t.db),
                        s(&t.name),
                        s("CHECK"),
                    ]);
                }
            }
            (
                with_ints(
                    &[
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "CONSTRAINT_TYPE",
                    ],
                    &[],
                ),
                rows,
            )
        }
        "KEY_COLUMN_USAGE" => {
            let mut rows = Vec::new();
            for t in tables {
                for idx in t.indexes.iter().filter(|i| i.unique) {
                    for (i, &c) in idx.columns.iter().enumerate() {
                        rows.push(vec![
                            s("def"),
                            s(&t.db),
                            s(&idx.name),
                            s("def"),
                            s(&t.db),
                            s(&t.name),
                            s(&t.columns[c].name),
                            u(i as u64 + 1),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                        ]);
                    }
                }
                crate::foreign_keys::info::key_column_usage(t, &mut rows);
            }
            (
                with_ints(
                    &[
                        "CONSTRAINT_CATALOG",
                        "CONSTRAINT_SCHEMA",
                        "CONSTRAINT_NAME",
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "TABLE_NAME",
                        "COLUMN_NAME",
                        "ORDINAL_POSITION",
                        "POSITION_IN_UNIQUE_CONSTRAINT",
                        "REFERENCED_TABLE_SCHEMA",
                        "REFERENCED_TABLE_NAME",
                        "REFERENCED_COLUMN_NAME",
                    ],
                    &["ORDINAL_POSITION", "POSITION_IN_UNIQUE_CONSTRAINT"],
                ),
                rows,
            )
        }
        "REFERENTIAL_CONSTRAINTS" => (
            with_ints(
                &[
                    "CONSTRAINT_CATALOG",
                    "CONSTRAINT_SCHEMA",
                    "CONSTRAINT_NAME",
                    "UNIQUE_CONSTRAINT_CATALOG",
                    "UNIQUE_CONSTRAINT_SCHEMA",
                    "UNIQUE_CONSTRAINT_NAME",
                    "MATCH_OPTION",
                    "UPDATE_RULE",
                    "DELETE_RULE",
                    "TABLE_NAME",
                    "REFERENCED_TABLE_NAME",
                ],
                &[],
            ),
            {
                let mut rows = Vec::new();
                for t in tables {
                    crate::foreign_keys::info::referential_constraints(t, tables, &mut rows);
                }
                rows
            },
        ),
        "CHARACTER_SETS" => (
            with_ints(
                &[
                    "CHARACTER_SET_NAME",
                    "DEFAULT_COLLATE_NAME",
                    "DESCRIPTION",
                    "MAXLEN",
                ],
                &["MAXLEN"],
            ),
            // SHOW CHARACTER SET's columns are in another order.
            crate::show::charset_rows()
                .into_iter()
                .map(|r| vec![r[0].clone(), r[2].clone(), r[1].clone(), r[3].clone()])
                .collect(),
        ),
        "COLLATIONS" => (
            with_ints(
                &[
                    "COLLATION_NAME",
                    "CHARACTER_SET_NAME",
                    "ID",
                    "IS_DEFAULT",
                    "IS_COMPILED",
                    "SORTLEN",
                ],
                &["ID", "SORTLEN"],
            ),
            crate::show::collation_rows(),
        ),
        _ => return None,
    })
}
