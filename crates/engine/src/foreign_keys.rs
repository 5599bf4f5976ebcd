//! FOREIGN KEY constraints in the catalog.
//!
//! A constraint belongs to its child table's [`TableDef`] (`foreign_keys`) and names its
//! parent by database, table and column names, as InnoDB's dictionary does: the parent
//! need not exist (`foreign_key_checks=0` lets a dump create children first), and the
//! catalog keeps the names consistent when the parent is renamed (RENAME TABLE rewrites the
//! children's records in the same batch). The SQL layer binds, validates and enforces the
//! constraints; the engine only stores them and keeps them consistent across DDL.

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, TableDef};
use crate::ddl::Change;

/// What happens to the child rows when a parent row is deleted or its key updated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FkAction {
    Restrict,
    Cascade,
    SetNull,
    NoAction,
}

impl FkAction {
    /// The rule's name as SHOW CREATE TABLE and information_schema print it.
    pub fn keyword(self) -> &'static str {
        match self {
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
            FkAction::NoAction => "NO ACTION",
        }
    }
}

/// One FOREIGN KEY constraint of a child table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    /// Unique among the constraints of the child's database (`t_ibfk_1` when not given).
    pub name: String,
    /// The child's columns, by name.
    pub columns: Vec<String>,
    pub ref_db: String,
    pub ref_table: String,
    /// The parent's columns, by name, one per child column.
    pub ref_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    /// Whether the constraint references table `db`.`table`.
    pub fn references(&self, db: &str, table: &str) -> bool {
        self.ref_db == db && self.ref_table == table
    }
}

impl Catalog {
    /// The constraints that reference `db`.`table`, with their child tables (the table
    /// itself among them when it references itself), in catalog order.
    pub fn referencing(&self, db: &str, table: &str) -> Vec<(&TableDef, &ForeignKeyDef)> {
        let mut out = Vec::new();
        for t in self.tables.values() {
            for fk in &t.foreign_keys {
                if fk.references(db, table) {
                    out.push((&**t, fk));
                }
            }
        }
        out
    }

    /// Whether any table has foreign keys (most catalogs have none: DML skips the work).
    pub fn has_foreign_keys(&self) -> bool {
        self.tables.values().any(|t| !t.foreign_keys.is_empty())
    }
}

/// The number of an auto-generated constraint name `<table>_ibfk_<n>`, if `name` is one.
pub fn ibfk_number(table: &str, name: &str) -> Option<u32> {
    let rest = name.strip_prefix(table)?.strip_prefix("_ibfk_")?;
    rest.parse().ok()
}

/// Renames the references to a renamed parent table, and (InnoDB's rule) the
/// auto-generated names `<old>_ibfk_<n>` of a renamed child's own constraints.
pub(crate) fn rename_table(
    t: &mut TableDef,
    from: (&str, &str),
    to: (&str, &str),
    renamed_self: bool,
) -> bool {
    let mut changed = false;
    for fk in &mut t.foreign_keys {
        if fk.references(from.0, from.1) {
            fk.ref_db = to.0.to_string();
            fk.ref_table = to.1.to_string();
            changed = true;
        }
        if renamed_self {
            if let Some(n) = ibfk_number(from.1, &fk.name) {
                fk.name = format!("{}_ibfk_{n}", to.1);
                changed = true;
            }
        }
    }
    changed
}

/// Follows a column rename in the table's own constraints.
pub(crate) fn rename_column(t: &mut TableDef, from: &str, to: &str) {
    if from == to {
        return;
    }
    let self_ref = |fk: &ForeignKeyDef| fk.references(&t.db, &t.name);
    let selfs: Vec<bool> = t.foreign_keys.iter().map(self_ref).collect();
    for (fk, is_self) in t.foreign_keys.iter_mut().zip(selfs) {
        for c in &mut fk.columns {
            if c.eq_ignore_ascii_case(from) {
                *c = to.to_string();
            }
        }
        if is_self {
            for c in &mut fk.ref_columns {
                if c.eq_ignore_ascii_case(from) {
                    *c = to.to_string();
                }
            }
        }
    }
}

/// RENAME TABLE: the constraints of other tables that reference the renamed table follow
/// it (the renamed table's own were rewritten with it).
pub(crate) fn follow_table_rename(ch: &mut Change, from: (&str, &str), to: (&str, &str)) {
    let children: Vec<TableDef> = ch
        .cat
        .tables
        .values()
        .filter(|t| !(t.db == to.0 && t.name == to.1))
        .filter(|t| t.foreign_keys.iter().any(|f| f.references(from.0, from.1)))
        .map(|t| (**t).clone())
        .collect();
    for mut t in children {
        rename_table(&mut t, from, to, false);
        ch.put_table(t);
    }
}

/// ALTER TABLE renamed columns of `new` (`origin`: each new column's old position): the
/// constraints of other tables that reference them follow.
pub(crate) fn follow_column_renames(
    ch: &mut Change,
    old: &TableDef,
    new: &TableDef,
    origin: &[Option<usize>],
) {
    let renames: Vec<(&str, &str)> = new
        .columns
        .iter()
        .zip(origin)
        .filter_map(|(c, o)| {
            let before = &old.columns[(*o)?].name;
            (before != &c.name).then_some((before.as_str(), c.name.as_str()))
        })
        .collect();
    if renames.is_empty() {
        return;
    }
    let children: Vec<TableDef> = ch
        .cat
        .tables
        .values()
        .filter(|t| t.id != new.id)
        .filter(|t| {
            t.foreign_keys
                .iter()
                .any(|f| f.references(&new.db, &new.name))
        })
        .map(|t| (**t).clone())
        .collect();
    for mut t in children {
        for fk in &mut t.foreign_keys {
            if !fk.references(&new.db, &new.name) {
                continue;
            }
            for c in &mut fk.ref_columns {
                if let Some((_, to)) = renames.iter().find(|(f, _)| c.eq_ignore_ascii_case(f)) {
                    *c = to.to_string();
                }
            }
        }
        ch.put_table(t);
    }
}
