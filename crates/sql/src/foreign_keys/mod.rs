//! FOREIGN KEY constraints, enforced as InnoDB enforces them.
//!
//! - `bind`: CREATE TABLE and ALTER TABLE ADD/DROP FOREIGN KEY: names (`t_ibfk_<n>`), the
//!   index created on the child's columns when no index starts with them (MariaDB's
//!   "generated" key), and the checks behind error 1005 (errno 150, "Foreign key
//!   constraint is incorrectly formed").
//! - `enforce`: INSERT / UPDATE / DELETE (and REPLACE, ON DUPLICATE KEY UPDATE, LOAD DATA,
//!   which reach the same row operations): a child row needs its parent (1452); a parent
//!   row's delete or key update is refused (RESTRICT / NO ACTION, 1451) or cascades (CASCADE,
//!   SET NULL) through the children, 15 levels deep at most. Lookups go through the
//!   parent's (child's) index under locking reads, so they see the latest committed rows
//!   and keep them until the transaction ends. Cascaded changes are row changes of the
//!   transaction that fire no triggers; they are logged in row-redo events between its
//!   rows events, which replicas skip: a replica makes the cascades itself.
//! - `apply`: row changes read from a binlog (replica applier, BINLOG statements), with
//!   the checks and cascades a MariaDB replica's InnoDB makes.
//! - `ddl`: DROP TABLE / DROP DATABASE of a referenced parent (1451) and the rows already
//!   in a table that ALTER TABLE ADD FOREIGN KEY constrains (1452).
//!
//! `foreign_key_checks=0` turns off every check and cascade (restoring dumps depends on
//! it); constraints created meanwhile may name parents that do not exist yet.

use std::collections::BTreeSet;

use onelog_engine::{Catalog, FkAction, ForeignKeyDef, TableDef};
use onelog_types::SqlError;

mod apply;
mod bind;
mod ddl;
mod enforce;
pub(crate) mod info;

pub(crate) use bind::{bind_alter_ops, bind_create, column_references};
pub(crate) use ddl::{session_checks, verify_ddl};
pub(crate) use enforce::{check_child, delete_parent, is_referenced, update_parent};

/// InnoDB's limit on nested cascades (FK_MAX_CASCADE_DEL).
const MAX_CASCADE_DEPTH: usize = 15;

fn cols_list(cols: &[String]) -> String {
    cols.iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The constraint as SHOW CREATE TABLE prints it (without the indentation), for a child
/// table in database `child_db`. ON ... RESTRICT is left out, as MariaDB does.
pub(crate) fn clause(fk: &ForeignKeyDef, child_db: &str) -> String {
    let parent = if fk.ref_db == child_db {
        format!("`{}`", fk.ref_table)
    } else {
        format!("`{}`.`{}`", fk.ref_db, fk.ref_table)
    };
    let mut s = format!(
        "CONSTRAINT `{}` FOREIGN KEY ({}) REFERENCES {parent} ({})",
        fk.name,
        cols_list(&fk.columns),
        cols_list(&fk.ref_columns)
    );
    if fk.on_delete != FkAction::Restrict {
        s += &format!(" ON DELETE {}", fk.on_delete.keyword());
    }
    if fk.on_update != FkAction::Restrict {
        s += &format!(" ON UPDATE {}", fk.on_update.keyword());
    }
    s
}

/// The SHOW CREATE TABLE lines of a table's constraints, in InnoDB's order (by name).
pub(crate) fn show_lines(t: &TableDef) -> Vec<String> {
    let mut fks: Vec<&ForeignKeyDef> = t.foreign_keys.iter().collect();
    fks.sort_by(|a, b| a.name.cmp(&b.name));
    fks.iter()
        .map(|fk| format!("  {}", clause(fk, &t.db)))
        .collect()
}

/// `` `db`.`child`, CONSTRAINT ... `` as the 1451 / 1452 messages quote a constraint.
fn describe(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!("`{}`.`{}`, {}", child.db, child.name, clause(fk, &child.db))
}

/// 1452: a child row without its parent.
fn no_parent(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        1452,
        "23000",
        format!(
            "Cannot add or update a child row: a foreign key constraint fails ({})",
            describe(child, fk)
        ),
    )
}

/// 1451: a parent row still referenced.
fn referenced(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        1451,
        "23000",
        format!(
            "Cannot delete or update a parent row: a foreign key constraint fails ({})",
            describe(child, fk)
        ),
    )
}

/// 1451 without a constraint: DROP TABLE / DROP DATABASE of a referenced parent.
fn parent_dropped() -> SqlError {
    SqlError::new(
        1451,
        "23000",
        "Cannot delete or update a parent row: a foreign key constraint fails",
    )
}

/// Cascades nested deeper than InnoDB allows (its error 193, reported as 1296).
fn too_deep(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        1296,
        "HY000",
        format!("Got error 193 '{}' from InnoDB", describe(child, fk)),
    )
}

/// The tables a statement writing `written` reaches through foreign keys, each with
/// whether it may be written (by a cascade): parents of written tables (read), children
/// of written tables (written when the constraint cascades or sets NULL), and so on for
/// the tables cascades write. Tables in `written` themselves are left out.
pub(crate) fn related_tables(
    cat: &Catalog,
    written: &[(String, String)],
) -> Vec<(String, String, bool)> {
    if written.is_empty() || !cat.has_foreign_keys() {
        return Vec::new();
    }
    let mut writes: BTreeSet<(String, String)> = written.iter().cloned().collect();
    let mut reads: BTreeSet<(String, String)> = BTreeSet::new();
    let mut todo: Vec<(String, String)> = written.to_vec();
    while let Some((db, name)) = todo.pop() {
        if let Some(t) = cat.table(&db, &name) {
            for fk in &t.foreign_keys {
                reads.insert((fk.ref_db.clone(), fk.ref_table.clone()));
            }
        }
        for (child, fk) in cat.referencing(&db, &name) {
            let key = (child.db.clone(), child.name.clone());
            let cascades = fk.on_delete == FkAction::Cascade
                || fk.on_delete == FkAction::SetNull
                || fk.on_update == FkAction::Cascade
                || fk.on_update == FkAction::SetNull;
            if cascades {
                if writes.insert(key.clone()) {
                    todo.push(key);
                }
            } else {
                reads.insert(key);
            }
        }
    }
    let mut out: Vec<(String, String, bool)> = writes
        .iter()
        .filter(|k| !written.contains(k))
        .map(|(d, t)| (d.clone(), t.clone(), true))
        .collect();
    for (d, t) in reads {
        if !writes.contains(&(d.clone(), t.clone())) {
            out.push((d, t, false));
        }
    }
    out.sort();
    out
}
