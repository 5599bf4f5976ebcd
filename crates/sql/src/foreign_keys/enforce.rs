//! Enforcement in the row operations every DML statement ends in.
//!
//! - A child row inserted, or updated with changed constraint columns, needs a parent row
//!   with the same values (any of them NULL: no check), found through the parent's index
//!   by a share-locking read, which keeps the parent until the transaction ends. A row of a
//!   self-referencing table may reference itself.
//! - A parent row deleted, or updated with changed referenced columns: constraints with
//!   RESTRICT / NO ACTION fail (1451) while a child row matches (InnoDB checks before the
//!   row is gone, so a row referencing itself counts); then the row is changed; then
//!   CASCADE deletes or updates the matching child rows and SET NULL clears their columns,
//!   each through the same steps (so cascades nest). As in InnoDB, a cascade nested 15
//!   deep fails (error 193), and an ON UPDATE CASCADE that would update a table an
//!   enclosing update is changing fails with 1451.
//!
//! Child rows are found through the index over the constraint's columns (bound with the
//! constraint) and locked exclusively when a cascade changes them.

use std::cmp::Ordering;
use std::sync::Arc;

use onelog_engine::{FkAction, ForeignKeyDef, KeyRange, LockMode, ScanOptions, TableDef, TableId};
use onelog_types::{Collation, SqlError, Value};

use super::bind::supporting_index;
use super::{no_parent, referenced, too_deep, MAX_CASCADE_DEPTH};
use crate::executor::{engine_err, ExecCtx};

/// A row operation enclosing a cascade: its table and whether it deletes.
type Ancestor = (TableId, bool);

fn col_positions(t: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| t.column_index(n)).collect()
}

fn same(a: &Value, b: &Value, coll: Collation) -> bool {
    crate::expr::compare(a, b, coll) == Some(Ordering::Equal)
}

fn coll_of(t: &TableDef, c: usize) -> Collation {
    t.columns[c].ty.collation().unwrap_or(Collation::Binary)
}

/// Whether the values at `cols` differ between `a` and `b` (bytewise, as InnoDB decides
/// whether an update touches a constraint).
fn changed(a: &[Value], b: &[Value], cols: &[usize]) -> bool {
    cols.iter()
        .any(|&c| a[c].is_null() != b[c].is_null() || !same(&a[c], &b[c], Collation::Binary))
}

/// The primary key values of a row as read (the row id for a hidden primary key).
fn pk_of(t: &TableDef, row: &[Value]) -> Vec<Value> {
    if t.hidden_pk {
        vec![row.get(t.columns.len()).cloned().unwrap_or(Value::Null)]
    } else {
        t.primary()
            .columns
            .iter()
            .map(|&c| row[c].clone())
            .collect()
    }
}

/// Rows of `t` whose columns `cols` equal `vals`, read with `lock`.
fn matching(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    cols: &[usize],
    vals: &[Value],
    lock: LockMode,
    first_only: bool,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let (index, range) = match supporting_index(&t.indexes, cols) {
        Some(i) => (i, KeyRange::prefix(vals.to_vec())),
        None => (0, KeyRange::all()),
    };
    let opts = ScanOptions {
        lock,
        ..Default::default()
    };
    let cursor = cx.txn.scan(t, index, range, opts).map_err(engine_err)?;
    let mut out = Vec::new();
    for row in cursor {
        let row = row.map_err(engine_err)?;
        if cols
            .iter()
            .zip(vals)
            .all(|(&c, v)| same(&row[c], v, coll_of(t, c)))
        {
            out.push(row);
            if first_only {
                break;
            }
        }
    }
    Ok(out)
}

/// The constraints referencing `t`, with their child tables as the transaction sees them,
/// in InnoDB's order (by `db/name` of the constraint).
fn referencing(cx: &ExecCtx, t: &TableDef) -> Vec<(Arc<TableDef>, ForeignKeyDef)> {
    let cat = cx.txn.catalog();
    let mut v: Vec<(Arc<TableDef>, ForeignKeyDef)> = cat
        .referencing(&t.db, &t.name)
        .into_iter()
        .filter_map(|(c, f)| Some((cat.table(&c.db, &c.name)?.clone(), f.clone())))
        .collect();
    v.sort_by(|(a, f), (b, g)| {
        (a.db.as_bytes(), f.name.as_bytes()).cmp(&(b.db.as_bytes(), g.name.as_bytes()))
    });
    v
}

/// Checks the constraints of child table `t` for a row inserted (`old` None) or updated
/// from `old` to `new` (1452 when a parent row is missing).
pub(crate) fn check_child(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: Option<&[Value]>,
    new: &[Value],
) -> Result<(), SqlError> {
    if !cx.foreign_key_checks || t.foreign_keys.is_empty() {
        return Ok(());
    }
    let cat = cx.txn.catalog();
    for fk in &t.foreign_keys {
        let Some(cols) = col_positions(t, &fk.columns) else {
            continue;
        };
        if cols.iter().any(|&c| new[c].is_null()) {
            continue;
        }
        if old.is_some_and(|o| !changed(o, new, &cols)) {
            continue;
        }
        let vals: Vec<Value> = cols.iter().map(|&c| new[c].clone()).collect();
        let Some(parent) = cat.table(&fk.ref_db, &fk.ref_table).cloned() else {
            return Err(no_parent(t, fk));
        };
        let Some(rcols) = col_positions(&parent, &fk.ref_columns) else {
            return Err(no_parent(t, fk));
        };
        // A row of a self-referencing table may reference itself.
        if parent.id == t.id
            && rcols
                .iter()
                .zip(&vals)
                .all(|(&r, v)| same(&new[r], v, coll_of(t, r)))
        {
            continue;
        }
        if matching(cx, &parent, &rcols, &vals, LockMode::Shared, true)?.is_empty() {
            return Err(no_parent(t, fk));
        }
    }
    Ok(())
}

/// The referenced values of parent row `row` for constraint `fk` (None: a NULL among them
/// or an unknown column, which no child row can match).
fn parent_values(t: &TableDef, fk: &ForeignKeyDef, row: &[Value]) -> Option<Vec<Value>> {
    let rcols = col_positions(t, &fk.ref_columns)?;
    let vals: Vec<Value> = rcols.iter().map(|&r| row[r].clone()).collect();
    (!vals.iter().any(Value::is_null)).then_some(vals)
}

/// RESTRICT / NO ACTION: 1451 if a child row references `vals`. The parent row as it was
/// (`old`, already changed in the transaction) counts when it references itself: InnoDB
/// still finds it through the child's index.
fn restrict(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &[Value],
    child: &Arc<TableDef>,
    fk: &ForeignKeyDef,
    vals: &[Value],
) -> Result<(), SqlError> {
    let Some(cols) = col_positions(child, &fk.columns) else {
        return Ok(());
    };
    let itself = child.id == t.id
        && cols
            .iter()
            .zip(vals)
            .all(|(&c, v)| same(&old[c], v, coll_of(t, c)));
    if itself || !matching(cx, child, &cols, vals, LockMode::Shared, true)?.is_empty() {
        return Err(referenced(child, fk));
    }
    Ok(())
}

fn restricts(a: FkAction) -> bool {
    matches!(a, FkAction::Restrict | FkAction::NoAction)
}

/// Deletes row `old` of `t` (as read, locked) with its constraints enforced.
pub(crate) fn delete_parent(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &Vec<Value>,
) -> Result<(), SqlError> {
    if !cx.foreign_key_checks || !cx.txn.catalog().has_foreign_keys() {
        return cx.txn.delete(t, old).map_err(engine_err);
    }
    delete_rec(cx, t, old, &mut Vec::new())
}

/// Updates row `old` of `t` to `new` with its constraints enforced (as a child and as a
/// parent).
pub(crate) fn update_parent(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &Vec<Value>,
    new: Vec<Value>,
) -> Result<(), SqlError> {
    if !cx.foreign_key_checks || !cx.txn.catalog().has_foreign_keys() {
        return cx.txn.update(t, old, new).map_err(engine_err);
    }
    update_rec(cx, t, old, new, &mut Vec::new())
}

fn delete_rec(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &Vec<Value>,
    anc: &mut Vec<Ancestor>,
) -> Result<(), SqlError> {
    let refs = referencing(cx, t);
    cx.txn.delete(t, old).map_err(engine_err)?;
    anc.push((t.id, true));
    for (child, fk) in &refs {
        let Some(vals) = parent_values(t, fk, old) else {
            continue;
        };
        if restricts(fk.on_delete) {
            restrict(cx, t, old, child, fk, &vals)?;
        } else {
            cascade(cx, child, fk, &vals, None, fk.on_delete, anc)?;
        }
    }
    anc.pop();
    Ok(())
}

fn update_rec(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &Vec<Value>,
    new: Vec<Value>,
    anc: &mut Vec<Ancestor>,
) -> Result<(), SqlError> {
    check_child(cx, t, Some(old), &new)?;
    let refs: Vec<(Arc<TableDef>, ForeignKeyDef)> = referencing(cx, t)
        .into_iter()
        .filter(|(_, f)| col_positions(t, &f.ref_columns).is_some_and(|rc| changed(old, &new, &rc)))
        .collect();
    let after = (!refs.is_empty()).then(|| new.clone());
    cx.txn.update(t, old, new).map_err(engine_err)?;
    let Some(new) = after else {
        return Ok(());
    };
    anc.push((t.id, false));
    for (child, fk) in &refs {
        let Some(vals) = parent_values(t, fk, old) else {
            continue;
        };
        if restricts(fk.on_update) {
            restrict(cx, t, old, child, fk, &vals)?;
            continue;
        }
        let to = col_positions(t, &fk.ref_columns)
            .map(|rc| rc.iter().map(|&r| new[r].clone()).collect::<Vec<_>>());
        cascade(cx, child, fk, &vals, to.as_deref(), fk.on_update, anc)?;
    }
    anc.pop();
    Ok(())
}

/// Applies `action` (CASCADE or SET NULL) to the rows of `child` that reference `vals`:
/// deletes them (`to` None, CASCADE), sets their columns to `to` (CASCADE of an update)
/// or to NULL (SET NULL). The rows it changes are logged as rows a replica changes
/// itself (see `Txn::begin_cascade`).
fn cascade(
    cx: &mut ExecCtx,
    child: &Arc<TableDef>,
    fk: &ForeignKeyDef,
    vals: &[Value],
    to: Option<&[Value]>,
    action: FkAction,
    anc: &mut Vec<Ancestor>,
) -> Result<(), SqlError> {
    cx.txn.begin_cascade();
    let r = cascade_rows(cx, child, fk, vals, to, action, anc);
    cx.txn.end_cascade();
    r
}

fn cascade_rows(
    cx: &mut ExecCtx,
    child: &Arc<TableDef>,
    fk: &ForeignKeyDef,
    vals: &[Value],
    to: Option<&[Value]>,
    action: FkAction,
    anc: &mut Vec<Ancestor>,
) -> Result<(), SqlError> {
    let Some(cols) = col_positions(child, &fk.columns) else {
        return Ok(());
    };
    let rows = matching(cx, child, &cols, vals, LockMode::Exclusive, false)?;
    if rows.is_empty() {
        return Ok(());
    }
    if anc.len() >= MAX_CASCADE_DEPTH {
        return Err(too_deep(child, fk));
    }
    let is_update_cascade = action == FkAction::Cascade && to.is_some();
    if is_update_cascade && anc.iter().any(|&(id, del)| id == child.id && !del) {
        return Err(referenced(child, fk));
    }
    for row in rows {
        // An earlier cascade of this statement may have changed or removed the row.
        let pk = pk_of(child, &row);
        let Some(cur) = cx
            .txn
            .get(child, &pk, LockMode::Exclusive)
            .map_err(engine_err)?
        else {
            continue;
        };
        let mut cur = cur;
        if child.hidden_pk && cur.len() == child.columns.len() {
            cur.push(pk[0].clone());
        }
        if !cols
            .iter()
            .zip(vals)
            .all(|(&c, v)| same(&cur[c], v, coll_of(child, c)))
        {
            continue;
        }
        match (action, to) {
            (FkAction::Cascade, None) => delete_rec(cx, child, &cur, anc)?,
            _ => {
                let mut new = cur.clone();
                for (k, &c) in cols.iter().enumerate() {
                    new[c] = match (action, to) {
                        (FkAction::Cascade, Some(to)) => to[k].clone(),
                        _ => Value::Null,
                    };
                }
                update_rec(cx, child, &cur, new, anc)?;
            }
        }
    }
    Ok(())
}

/// Whether enforced constraints reference `t` (REPLACE then deletes and inserts a
/// conflicting row instead of updating it, as MariaDB does).
pub(crate) fn is_referenced(cx: &ExecCtx, t: &TableDef) -> bool {
    cx.foreign_key_checks && !cx.txn.catalog().referencing(&t.db, &t.name).is_empty()
}
