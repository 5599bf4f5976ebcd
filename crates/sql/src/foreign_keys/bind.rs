//! Binding FOREIGN KEY clauses: CREATE TABLE (table constraints and column-level
//! REFERENCES) and ALTER TABLE ADD [CONSTRAINT name] FOREIGN KEY / DROP FOREIGN KEY.
//!
//! Like MariaDB, every FOREIGN KEY clause also declares a "generated" key over the child's
//! columns, named after the constraint (else after the index name, else after the first
//! column); it is left out when another key starts with the same columns (of two generated
//! ones the later wins). The definition is checked against the parent (errors 1005 with
//! errno 150) whenever the parent exists; a missing parent is an error only under
//! `foreign_key_checks=1`. Statements replayed from the binlog bind with the checks off:
//! they succeeded when they were logged.

use onelog_engine::{
    ibfk_number, AlterOp, CheckDef, ColumnDef, FkAction, ForeignKeyDef, IndexDef, TableDef,
};
use onelog_types::{ColumnType, SqlError};
use sqlparser::ast as sq;

use crate::binder::{ident_eq, Binder};
use crate::parser::name_parts;
use crate::sql_err;

/// Whether `foreign_key_checks` is on for the statement being bound (off when replaying).
fn checks_on(b: &Binder) -> bool {
    b.env()
        .sys_var(None, "foreign_key_checks")
        .is_ok_and(|v| crate::expr::truth(&v) == Some(true))
}

/// 1005 with InnoDB's errno 150.
fn malformed(db: &str, table: &str) -> SqlError {
    sql_err(
        1005,
        format!(
            "Can't create table `{db}`.`{table}` (errno: 150 \"Foreign key constraint is incorrectly formed\")"
        ),
    )
}

/// 1005 with errno 121: the constraint name is taken in the database.
fn duplicate_name(db: &str, table: &str) -> SqlError {
    sql_err(
        1005,
        format!(
            "Can't create table `{db}`.`{table}` (errno: 121 \"Duplicate key on write or update\")"
        ),
    )
}

fn action(a: Option<&sq::ReferentialAction>) -> FkAction {
    match a {
        Some(sq::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(sq::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(sq::ReferentialAction::NoAction) => FkAction::NoAction,
        // InnoDB does not implement SET DEFAULT: it keeps such a constraint as RESTRICT.
        Some(sq::ReferentialAction::Restrict | sq::ReferentialAction::SetDefault) | None => {
            FkAction::Restrict
        }
    }
}

/// The column-level `REFERENCES` clauses of a column definition, as table constraints
/// over that column.
pub(crate) fn column_references(c: &sq::ColumnDef) -> Vec<sq::ForeignKeyConstraint> {
    c.options
        .iter()
        .filter_map(|o| match &o.option {
            sq::ColumnOption::ForeignKey(fk) => {
                let mut fk = fk.clone();
                fk.columns = vec![c.name.clone()];
                if fk.name.is_none() {
                    fk.name = o.name.clone();
                }
                Some(fk)
            }
            _ => None,
        })
        .collect()
}

/// Whether a child column of type `a` may reference a parent column of type `b` (InnoDB:
/// the same type, integers of the same size and sign, strings of the same collation).
fn compatible(a: &ColumnType, b: &ColumnType) -> bool {
    use ColumnType as T;
    match (a, b) {
        (T::Char { .. } | T::Varchar { .. }, T::Char { .. } | T::Varchar { .. }) => {
            a.collation() == b.collation()
        }
        (T::Blob { .. }, _) | (_, T::Blob { .. }) => false,
        _ => a == b,
    }
}

/// The position of the first index of `indexes` whose leading columns are `cols` (whole
/// columns, in order).
pub(super) fn supporting_index(indexes: &[IndexDef], cols: &[usize]) -> Option<usize> {
    indexes.iter().position(|i| {
        i.columns.len() >= cols.len()
            && i.columns[..cols.len()] == *cols
            && i.prefix_lens[..cols.len().min(i.prefix_lens.len())]
                .iter()
                .all(Option::is_none)
    })
}

fn positions(columns: &[ColumnDef], names: &[String]) -> Option<Vec<usize>> {
    names
        .iter()
        .map(|n| columns.iter().position(|c| ident_eq(&c.name, n)))
        .collect()
}

fn unique_key_name(existing: &[IndexDef], base: &str) -> String {
    let taken = |n: &str| existing.iter().any(|i| ident_eq(&i.name, n)) || ident_eq(n, "PRIMARY");
    if !taken(base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|c| !taken(c))
        .expect("a free name")
}

/// The child table as the constraint sees it: its name, columns and indexes.
pub(super) struct Child<'a> {
    pub db: &'a str,
    pub name: &'a str,
    pub columns: &'a [ColumnDef],
    pub indexes: &'a [IndexDef],
}

/// The constraint names already used in the child's database (other tables' and, through
/// `own`, this table's).
fn names_in_db(b: &Binder, db: &str, table: &str, own: &[ForeignKeyDef]) -> Vec<String> {
    let cat = b.env().catalog();
    let mut v: Vec<String> = cat
        .tables_in(db)
        .filter(|t| t.name != table)
        .flat_map(|t| t.foreign_keys.iter().map(|f| f.name.clone()))
        .collect();
    v.extend(own.iter().map(|f| f.name.clone()));
    v
}

/// Binds one FOREIGN KEY clause for `child` (whose earlier constraints are `own`, CHECK
/// constraints `checks`). Returns the constraint and the name its generated key takes.
fn bind_one(
    b: &Binder,
    child: &Child,
    own: &[ForeignKeyDef],
    checks: &[CheckDef],
    spec: &sq::ForeignKeyConstraint,
) -> Result<(ForeignKeyDef, String), SqlError> {
    let given = spec
        .name
        .as_ref()
        .or(spec.index_name.as_ref())
        .map(|i| i.value.clone());
    if spec.columns.len() != spec.referred_columns.len() || spec.columns.is_empty() {
        let what = given
            .clone()
            .unwrap_or_else(|| "foreign key without name".to_string());
        return Err(sql_err(
            1239,
            format!(
                "Incorrect foreign key definition for '{what}': Key reference and table reference don't match"
            ),
        ));
    }
    let columns: Vec<String> = spec.columns.iter().map(|i| i.value.clone()).collect();
    let Some(cols) = positions(child.columns, &columns) else {
        let missing = columns
            .iter()
            .find(|n| !child.columns.iter().any(|c| ident_eq(&c.name, n)))
            .cloned()
            .unwrap_or_default();
        return Err(sql_err(
            1072,
            format!("Key column '{missing}' doesn't exist in table"),
        ));
    };
    // Names as the child's columns spell them.
    let columns: Vec<String> = cols
        .iter()
        .map(|&c| child.columns[c].name.clone())
        .collect();
    let mut parts = name_parts(&spec.foreign_table);
    let ref_table = parts.pop().unwrap_or_default();
    let ref_db = match parts.pop() {
        Some(d) => d,
        None => child.db.to_string(),
    };
    let on_delete = action(spec.on_delete.as_ref());
    let on_update = action(spec.on_update.as_ref());
    let set_null = on_delete == FkAction::SetNull || on_update == FkAction::SetNull;
    if set_null && cols.iter().any(|&c| !child.columns[c].nullable) {
        return Err(malformed(child.db, child.name));
    }
    let name = match &given {
        Some(n) => {
            if checks.iter().any(|c| ident_eq(&c.name, n)) {
                return Err(sql_err(
                    1826,
                    format!("Duplicate CHECK constraint name '{n}'"),
                ));
            }
            n.clone()
        }
        None => {
            let next = own
                .iter()
                .filter_map(|f| ibfk_number(child.name, &f.name))
                .max()
                .unwrap_or(0)
                + 1;
            format!("{}_ibfk_{next}", child.name)
        }
    };
    if own.iter().any(|f| ident_eq(&f.name, &name)) {
        return Err(match given {
            Some(_) if spec.name.is_some() => duplicate_name(child.db, child.name),
            _ => malformed(child.db, child.name),
        });
    }
    if names_in_db(b, child.db, child.name, &[])
        .iter()
        .any(|n| ident_eq(n, &name))
    {
        return Err(duplicate_name(child.db, child.name));
    }
    let ref_columns: Vec<String> = spec
        .referred_columns
        .iter()
        .map(|i| i.value.clone())
        .collect();
    // The parent: the table itself, else the catalog's.
    let self_ref = ref_db == child.db && ref_table == child.name;
    let cat = b.env().catalog();
    let parent = cat.table(&ref_db, &ref_table);
    let (pcols, pidx): (&[ColumnDef], &[IndexDef]) = if self_ref {
        (child.columns, child.indexes)
    } else if let Some(p) = parent {
        (&p.columns, &p.indexes)
    } else {
        if checks_on(b) {
            return Err(malformed(child.db, child.name));
        }
        (&[], &[])
    };
    let mut ref_columns = ref_columns;
    if self_ref || parent.is_some() {
        let Some(rcols) = positions(pcols, &ref_columns) else {
            return Err(malformed(child.db, child.name));
        };
        if cols
            .iter()
            .zip(&rcols)
            .any(|(&c, &r)| !compatible(&child.columns[c].ty, &pcols[r].ty))
        {
            return Err(malformed(child.db, child.name));
        }
        if supporting_index(pidx, &rcols).is_none() {
            return Err(malformed(child.db, child.name));
        }
        ref_columns = rcols.iter().map(|&r| pcols[r].name.clone()).collect();
    }
    let key_name = given.unwrap_or_else(|| child.columns[cols[0]].name.clone());
    Ok((
        ForeignKeyDef {
            name,
            columns,
            ref_db,
            ref_table,
            ref_columns,
            on_delete,
            on_update,
        },
        key_name,
    ))
}

/// Whether the shorter of two keys' column lists is a prefix of the longer.
fn key_prefix(a: &IndexDef, b: &IndexDef) -> bool {
    let (s, l) = if a.columns.len() <= b.columns.len() {
        (a, b)
    } else {
        (b, a)
    };
    s.columns == l.columns[..s.columns.len()]
        && (0..s.columns.len()).all(|k| {
            s.prefix_lens.get(k).copied().flatten() == l.prefix_lens.get(k).copied().flatten()
        })
}

/// CREATE TABLE: binds the FOREIGN KEY clauses `specs` (column-level ones first) of table
/// `db`.`name`, adding the generated keys that survive to `indexes`.
pub(crate) fn bind_create(
    b: &Binder,
    db: &str,
    name: &str,
    columns: &[ColumnDef],
    indexes: &mut Vec<IndexDef>,
    checks: &[CheckDef],
    specs: &[sq::ForeignKeyConstraint],
) -> Result<Vec<ForeignKeyDef>, SqlError> {
    let mut fks: Vec<ForeignKeyDef> = Vec::new();
    let mut generated: Vec<IndexDef> = Vec::new();
    for spec in specs {
        let all: Vec<IndexDef> = indexes.iter().chain(&generated).cloned().collect();
        let child = Child {
            db,
            name,
            columns,
            indexes: &all,
        };
        // Two constraints of one name in one CREATE TABLE: errno 150.
        let given = spec.name.as_ref().or(spec.index_name.as_ref());
        if given.is_some_and(|g| fks.iter().any(|f| ident_eq(&f.name, &g.value))) {
            return Err(malformed(db, name));
        }
        let (fk, key_name) = bind_one(b, &child, &fks, checks, spec)?;
        let cols = positions(columns, &fk.columns).expect("bound columns");
        let key = IndexDef {
            id: 0,
            name: key_name,
            prefix_lens: vec![None; cols.len()],
            columns: cols,
            unique: false,
            primary: false,
        };
        // A later generated key replaces an earlier one it extends or repeats.
        if let Some(p) = generated.iter().position(|g| key_prefix(g, &key)) {
            if key.columns.len() >= generated[p].columns.len() {
                generated.remove(p);
                generated.push(key);
            }
        } else {
            generated.push(key);
        }
        fks.push(fk);
    }
    for mut g in generated {
        if indexes.iter().any(|i| key_prefix(i, &g)) {
            continue;
        }
        g.name = unique_key_name(indexes, &g.name);
        indexes.push(g);
    }
    Ok(fks)
}

/// The table ALTER TABLE's other operations leave (columns and indexes), for binding the
/// foreign key operations of the same statement against it.
fn simulate(
    t: &TableDef,
    ops: &[AlterOp],
) -> (Vec<ColumnDef>, Vec<IndexDef>, Vec<(String, String)>) {
    let mut cols = t.columns.clone();
    let mut idx: Vec<IndexDef> = t.indexes.clone();
    if t.hidden_pk {
        idx.remove(0);
    }
    let mut renames = Vec::new();
    for op in ops {
        match op {
            AlterOp::AddIndex(i) => {
                if i.primary {
                    idx.retain(|x| !x.primary);
                    idx.insert(0, i.clone());
                } else {
                    idx.push(i.clone());
                }
            }
            AlterOp::DropIndex(n) => idx.retain(|i| !ident_eq(&i.name, n)),
            AlterOp::AddColumn { def, position } => {
                let p = position.unwrap_or(cols.len()).min(cols.len());
                cols.insert(p, def.clone());
                for i in &mut idx {
                    for c in &mut i.columns {
                        if *c >= p {
                            *c += 1;
                        }
                    }
                }
            }
            AlterOp::DropColumn(n) => {
                let Some(p) = cols.iter().position(|c| ident_eq(&c.name, n)) else {
                    continue;
                };
                cols.remove(p);
                for i in &mut idx {
                    if let Some(k) = i.columns.iter().position(|&c| c == p) {
                        i.columns.remove(k);
                        if k < i.prefix_lens.len() {
                            i.prefix_lens.remove(k);
                        }
                    }
                    for c in &mut i.columns {
                        if *c > p {
                            *c -= 1;
                        }
                    }
                }
                idx.retain(|i| !i.columns.is_empty());
            }
            AlterOp::ChangeColumn {
                name,
                def,
                position,
            } => {
                let Some(p) = cols.iter().position(|c| ident_eq(&c.name, name)) else {
                    continue;
                };
                if cols[p].name != def.name {
                    renames.push((cols[p].name.clone(), def.name.clone()));
                }
                cols.remove(p);
                let to = position.unwrap_or(p).min(cols.len());
                cols.insert(to, def.clone());
                for i in &mut idx {
                    for c in &mut i.columns {
                        if *c == p {
                            *c = to;
                        } else if p < to && *c > p && *c <= to {
                            *c -= 1;
                        } else if to < p && *c >= to && *c < p {
                            *c += 1;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    (cols, idx, renames)
}

/// 1553 for the index of `before` that supported a constraint over `cols` and is gone.
fn index_needed(before: &[IndexDef], after: &[IndexDef], cols: &[usize]) -> SqlError {
    let name = before
        .iter()
        .filter(|i| !after.iter().any(|a| ident_eq(&a.name, &i.name)))
        .find(|i| i.columns.first() == cols.first())
        .or_else(|| {
            before
                .iter()
                .find(|i| !after.iter().any(|a| ident_eq(&a.name, &i.name)))
        })
        .map(|i| i.name.clone())
        .unwrap_or_default();
    sql_err(
        1553,
        format!("Cannot drop index '{name}': needed in a foreign key constraint"),
    )
}

/// ALTER TABLE: binds the statement's ADD FOREIGN KEY and DROP FOREIGN KEY operations
/// (after the others, `ops`, which they are appended to), and refuses to drop an index
/// a constraint needs (1553).
pub(crate) fn bind_alter_ops(
    b: &Binder,
    t: &TableDef,
    stmt: &[sq::AlterTableOperation],
    mut ops: Vec<AlterOp>,
) -> Result<Vec<AlterOp>, SqlError> {
    let (cols, mut idx, renames) = simulate(t, &ops);
    let renamed = |n: &str| -> String {
        renames
            .iter()
            .find(|(f, _)| ident_eq(f, n))
            .map_or(n.to_string(), |(_, to)| to.clone())
    };
    let mut fks: Vec<ForeignKeyDef> = t
        .foreign_keys
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.columns = f.columns.iter().map(|c| renamed(c)).collect();
            f
        })
        .collect();
    let mut added = Vec::new();
    for op in stmt {
        match op {
            sq::AlterTableOperation::DropForeignKey { name, .. } => {
                let Some(p) = fks.iter().position(|f| ident_eq(&f.name, &name.value)) else {
                    return Err(sql_err(
                        1091,
                        format!(
                            "Can't DROP FOREIGN KEY `{}`; check that it exists",
                            name.value
                        ),
                    ));
                };
                let f = fks.remove(p);
                ops.push(AlterOp::DropForeignKey(f.name));
            }
            sq::AlterTableOperation::AddConstraint {
                constraint: sq::TableConstraint::ForeignKey(spec),
                ..
            } => {
                let child = Child {
                    db: &t.db,
                    name: &t.name,
                    columns: &cols,
                    indexes: &idx,
                };
                let (fk, key_name) = bind_one(b, &child, &fks, &t.checks, spec)?;
                let fcols = positions(&cols, &fk.columns).expect("bound columns");
                if supporting_index(&idx, &fcols).is_none() {
                    let key = IndexDef {
                        id: 0,
                        name: unique_key_name(&idx, &key_name),
                        prefix_lens: vec![None; fcols.len()],
                        columns: fcols,
                        unique: false,
                        primary: false,
                    };
                    idx.push(key.clone());
                    ops.push(AlterOp::AddIndex(key));
                }
                fks.push(fk.clone());
                added.push(fk);
            }
            _ => {}
        }
    }
    ops.extend(added.into_iter().map(AlterOp::AddForeignKey));
    // Every constraint keeps an index over its columns; a referenced table keeps one over
    // the referenced columns.
    let before: Vec<IndexDef> = t
        .indexes
        .iter()
        .filter(|i| !i.columns.is_empty())
        .cloned()
        .collect();
    for f in &fks {
        match positions(&cols, &f.columns) {
            Some(fc) if supporting_index(&idx, &fc).is_some() => {}
            Some(fc) => return Err(index_needed(&before, &idx, &fc)),
            None => {
                let orig = positions(&t.columns, &f.columns).unwrap_or_default();
                return Err(index_needed(&before, &idx, &orig));
            }
        }
    }
    if checks_on(b) {
        let cat = b.env().catalog();
        for (child, f) in cat.referencing(&t.db, &t.name) {
            if child.id == t.id {
                continue;
            }
            let refs: Vec<String> = f.ref_columns.iter().map(|c| renamed(c)).collect();
            match positions(&cols, &refs) {
                Some(rc) if supporting_index(&idx, &rc).is_some() => {}
                other => {
                    let orig = other
                        .and_then(|_| positions(&t.columns, &f.ref_columns))
                        .or_else(|| positions(&t.columns, &f.ref_columns))
                        .unwrap_or_default();
                    return Err(index_needed(&before, &idx, &orig));
                }
            }
        }
    }
    Ok(ops)
}
