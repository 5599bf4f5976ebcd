//! The foreign keys' rows in information_schema: TABLE_CONSTRAINTS, KEY_COLUMN_USAGE and
//! REFERENTIAL_CONSTRAINTS.

use std::sync::Arc;

use onelog_engine::TableDef;
use onelog_types::Value;

use super::bind::supporting_index;
use crate::show::{s, u};

/// TABLE_CONSTRAINTS rows of table `t`'s foreign keys.
pub(crate) fn table_constraints(t: &TableDef, rows: &mut Vec<Vec<Value>>) {
    for fk in &t.foreign_keys {
        rows.push(vec![
            s("def"),
            s(&t.db),
            s(&fk.name),
            s(&t.db),
            s(&t.name),
            s("FOREIGN KEY"),
        ]);
    }
}

/// KEY_COLUMN_USAGE rows of table `t`'s foreign keys: one per column, with the column it
/// references.
pub(crate) fn key_column_usage(t: &TableDef, rows: &mut Vec<Vec<Value>>) {
    for fk in &t.foreign_keys {
        for (i, (c, r)) in fk.columns.iter().zip(&fk.ref_columns).enumerate() {
            rows.push(vec![
                s("def"),
                s(&t.db),
                s(&fk.name),
                s("def"),
                s(&t.db),
                s(&t.name),
                s(c),
                u(i as u64 + 1),
                u(i as u64 + 1),
                s(&fk.ref_db),
                s(&fk.ref_table),
                s(r),
            ]);
        }
    }
}

/// REFERENTIAL_CONSTRAINTS rows of table `t` (`tables`: where its parents are found, for
/// the name of the index the constraint uses in the parent).
pub(crate) fn referential_constraints(
    t: &TableDef,
    tables: &[Arc<TableDef>],
    rows: &mut Vec<Vec<Value>>,
) {
    for fk in &t.foreign_keys {
        let unique_name = tables
            .iter()
            .find(|p| fk.references(&p.db, &p.name))
            .and_then(|p| {
                let cols: Option<Vec<usize>> =
                    fk.ref_columns.iter().map(|c| p.column_index(c)).collect();
                let i = supporting_index(&p.indexes, &cols?)?;
                Some(s(&p.indexes[i].name))
            })
            .unwrap_or(Value::Null);
        rows.push(vec![
            s("def"),
            s(&t.db),
            s(&fk.name),
            s("def"),
            s(&fk.ref_db),
            unique_name,
            s("NONE"),
            s(fk.on_update.keyword()),
            s(fk.on_delete.keyword()),
            s(&t.name),
            s(&fk.ref_table),
        ]);
    }
}
