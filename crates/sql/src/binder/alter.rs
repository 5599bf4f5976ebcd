//! Binding ALTER TABLE: each operation (columns added, dropped, changed or moved; indexes,
//! keys and constraints; defaults; renames) against the table's definition, checked as
//! MariaDB checks them, into the engine's `AlterOp`s.

use super::ddl::*;
use super::default_expr::apply_default;
use super::*;

/// Binds ALTER TABLE operations (and CREATE/DROP INDEX) against the table's current
/// definition.
pub fn bind_alter(t: &TableDef, ops: &[sq::AlterTableOperation]) -> Result<Vec<AlterOp>, SqlError> {
    bind_alter_columns(t, ops).map(|(ops, _)| ops)
}

/// [`bind_alter`], and the table's columns after the operations.
pub(super) fn bind_alter_columns(
    t: &TableDef,
    ops: &[sq::AlterTableOperation],
) -> Result<(Vec<AlterOp>, Vec<ColumnDef>), SqlError> {
    let mut cols: Vec<ColumnDef> = t.columns.clone();
    let mut idx: Vec<IndexDef> = t.indexes.clone();
    if t.hidden_pk {
        idx.remove(0);
    }
    let mut out = Vec::new();
    let mut checks = t.checks.clone();
    for op in ops {
        use sq::AlterTableOperation as A;
        match op {
            A::AddConstraint {
                constraint: sq::TableConstraint::Check(ck),
                ..
            } => {
                add_table_check(
                    &mut checks,
                    ck.name.as_ref().map(|n| n.value.as_str()),
                    &ck.expr,
                )?;
                out.push(AlterOp::AddCheck(checks.last().expect("added").clone()));
            }
            A::DropConstraint {
                name, if_exists, ..
            } if checks.iter().any(|c| ident_eq(&c.name, &name.value))
                || !idx.iter().any(|i| ident_eq(&i.name, &name.value)) =>
            {
                if !checks.iter().any(|c| ident_eq(&c.name, &name.value)) {
                    if *if_exists {
                        continue;
                    }
                    return Err(err(
                        crate::codes::ER_CANT_DROP_FIELD_OR_KEY,
                        format!(
                            "Can't DROP CONSTRAINT `{}`; check that it exists",
                            name.value
                        ),
                    ));
                }
                checks.retain(|c| !ident_eq(&c.name, &name.value));
                out.push(AlterOp::DropCheck(name.value.clone()));
            }
            A::AddConstraint { constraint, .. } => {
                let Some(i) = constraint_index(&cols, &idx, constraint)? else {
                    continue;
                };
                if i.primary && idx.iter().any(|x| x.primary) {
                    return Err(err(
                        code::ER_MULTIPLE_PRI_KEY,
                        "Multiple primary key defined",
                    ));
                }
                if idx.iter().any(|x| ident_eq(&x.name, &i.name)) {
                    return Err(err(
                        code::ER_DUP_KEYNAME,
                        format!("Duplicate key name '{}'", i.name),
                    ));
                }
                idx.push(i.clone());
                out.push(AlterOp::AddIndex(i));
            }
            A::AddColumn {
                column_def,
                column_position,
                if_not_exists,
                ..
            } => add_column(
                t,
                column_def,
                column_position.as_ref(),
                *if_not_exists,
                (&mut cols, &mut idx, &mut checks),
                &mut out,
            )?,
            A::DropColumn {
                column_names,
                if_exists,
                ..
            } => drop_columns(column_names, *if_exists, &mut cols, &mut idx, &mut out)?,
            A::DropIndex { name } => {
                if !idx.iter().any(|i| ident_eq(&i.name, &name.value)) {
                    return Err(err(
                        code::ER_CANT_DROP_FIELD_OR_KEY,
                        format!("Can't DROP INDEX `{}`; check that it exists", name.value),
                    ));
                }
                idx.retain(|i| !ident_eq(&i.name, &name.value));
                out.push(AlterOp::DropIndex(name.value.clone()));
            }
            A::DropPrimaryKey { .. } => {
                if !idx.iter().any(|i| i.primary) {
                    return Err(err(
                        code::ER_CANT_DROP_FIELD_OR_KEY,
                        "Can't DROP INDEX `PRIMARY`; check that it exists",
                    ));
                }
                idx.retain(|i| !i.primary);
                out.push(AlterOp::DropIndex("PRIMARY".into()));
            }
            A::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => change_column(
                t,
                &mut cols,
                &mut idx,
                &mut out,
                &col_name.value,
                &sq::ColumnDef {
                    name: col_name.clone(),
                    data_type: data_type.clone(),
                    options: column_options(options),
                },
                column_position.as_ref(),
            )?,
            A::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => change_column(
                t,
                &mut cols,
                &mut idx,
                &mut out,
                &old_name.value,
                &sq::ColumnDef {
                    name: new_name.clone(),
                    data_type: data_type.clone(),
                    options: column_options(options),
                },
                column_position.as_ref(),
            )?,
            A::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let pos = find_column(t, &cols, &old_column_name.value)?;
                let to = &new_column_name.value;
                check_new_column_name(&cols, pos, to)?;
                let mut def = cols[pos].clone();
                def.name = to.clone();
                cols[pos] = def.clone();
                out.push(AlterOp::ChangeColumn {
                    name: old_column_name.value.clone(),
                    def,
                    position: None,
                });
            }
            A::AlterColumn { column_name, op } => {
                let pos = find_column(t, &cols, &column_name.value)?;
                let mut def = cols[pos].clone();
                match op {
                    sq::AlterColumnOperation::SetDefault { value } => {
                        if apply_default(&mut def, value)? && !def.nullable {
                            return Err(err(
                                code::ER_INVALID_DEFAULT,
                                format!("Invalid default value for '{}'", def.name),
                            ));
                        }
                    }
                    sq::AlterColumnOperation::DropDefault => {
                        def.default = None;
                        def.default_now = false;
                        def.default_expr = None;
                    }
                    other => return Err(unsupported(&format!("ALTER COLUMN ... {other}"))),
                }
                cols[pos] = def.clone();
                out.push(AlterOp::ChangeColumn {
                    name: column_name.value.clone(),
                    def,
                    position: None,
                });
            }
            A::SetOptionsParens { .. } | A::AutoIncrement { .. } => {
                bind_options(t, op, &mut cols, &mut out)?
            }
            // onelog picks its own algorithm and always holds an exclusive metadata lock.
            A::Algorithm { .. } | A::Lock { .. } => {}
            // Bound by `foreign_keys::bind_alter_ops`.
            A::DropForeignKey { .. } => {}
            other => return Err(unsupported(&format!("ALTER TABLE {other}"))),
        }
    }
    check_auto_key(&cols, &idx)?;
    Ok((out, cols))
}

/// Table options (`ENGINE=`, `COMMENT=`, ..., `CONVERT TO CHARACTER SET`) and sqlparser's
/// `AUTO_INCREMENT =`.
fn bind_options(
    t: &TableDef,
    op: &sq::AlterTableOperation,
    cols: &mut [ColumnDef],
    out: &mut Vec<AlterOp>,
) -> Result<(), SqlError> {
    match op {
        sq::AlterTableOperation::SetOptionsParens { options } => {
            let engine = if t.engine_name.is_empty() {
                "InnoDB"
            } else {
                &t.engine_name
            };
            let bound = super::table_options::bind_table_options(options, engine)?;
            if let Some(c) = bound.convert {
                convert_columns(cols, c, out);
            }
            out.push(AlterOp::SetOptions(bound.set));
        }
        sq::AlterTableOperation::AutoIncrement { value, .. } => {
            let v = value.to_string();
            let n = v.parse().map_err(|_| crate::parser::syntax_error(&v, 0))?;
            out.push(AlterOp::SetOptions(onelog_engine::TableOptionSet {
                auto_increment: Some(n),
                ..Default::default()
            }));
        }
        _ => {}
    }
    Ok(())
}

/// CONVERT TO CHARACTER SET: every text column whose collation differs takes `c`.
fn convert_columns(cols: &mut [ColumnDef], c: Collation, out: &mut Vec<AlterOp>) {
    for col in cols.iter_mut() {
        let Some(ty) = super::table_options::converted_type(&col.ty, c) else {
            continue;
        };
        if ty == col.ty {
            continue;
        }
        col.ty = ty;
        out.push(AlterOp::ChangeColumn {
            name: col.name.clone(),
            def: col.clone(),
            position: None,
        });
    }
}

/// AUTO_INCREMENT: one column at most, and it must lead a key (error 1075).
pub(super) fn check_auto_key(columns: &[ColumnDef], indexes: &[IndexDef]) -> Result<(), SqlError> {
    let autos: Vec<usize> = (0..columns.len())
        .filter(|&i| columns[i].auto_increment)
        .collect();
    if autos.len() > 1
        || autos
            .first()
            .is_some_and(|&a| !indexes.iter().any(|i| i.columns.first() == Some(&a)))
    {
        return Err(err(
            code::ER_WRONG_AUTO_KEY,
            "Incorrect table definition; there can be only one auto column and it must be defined as a key",
        ));
    }
    Ok(())
}

/// Column options of MODIFY / CHANGE as CREATE TABLE has them.
pub(super) fn column_options(options: &[sq::ColumnOption]) -> Vec<sq::ColumnOptionDef> {
    options
        .iter()
        .map(|o| sq::ColumnOptionDef {
            name: None,
            option: o.clone(),
        })
        .collect()
}

/// The position of column `name` among `cols` (1054 if there is none).
pub(super) fn find_column(t: &TableDef, cols: &[ColumnDef], name: &str) -> Result<usize, SqlError> {
    cols.iter()
        .position(|c| ident_eq(&c.name, name))
        .ok_or_else(|| {
            err(
                code::ER_BAD_FIELD_ERROR,
                format!("Unknown column '{name}' in '{}'", t.name),
            )
        })
}

/// 1060 if renaming the column at `pos` to `name` would duplicate another column.
pub(super) fn check_new_column_name(
    cols: &[ColumnDef],
    pos: usize,
    name: &str,
) -> Result<(), SqlError> {
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_COLUMN_NAME,
            format!("Incorrect column name '{name}'"),
        ));
    }
    if cols
        .iter()
        .enumerate()
        .any(|(i, c)| i != pos && ident_eq(&c.name, name))
    {
        return Err(err(
            code::ER_DUP_FIELDNAME,
            format!("Duplicate column name '{name}'"),
        ));
    }
    Ok(())
}

/// MODIFY / CHANGE: replaces column `old` of the simulated table (`cols`, `idx`) by `new`,
/// moved to `position`, and records the operations (plus the keys `new` declares).
#[allow(clippy::too_many_arguments)]
pub(super) fn change_column(
    t: &TableDef,
    cols: &mut Vec<ColumnDef>,
    idx: &mut Vec<IndexDef>,
    out: &mut Vec<AlterOp>,
    old: &str,
    new: &sq::ColumnDef,
    position: Option<&sq::MySQLColumnPosition>,
) -> Result<(), SqlError> {
    let pos = find_column(t, cols, old)?;
    let mut bc = bind_column(new, t.collation)?;
    check_new_column_name(cols, pos, &bc.def.name)?;
    // Columns of the primary key are NOT NULL.
    if idx.iter().any(|i| i.primary && i.columns.contains(&pos)) {
        bc.def.nullable = false;
    }
    let mut rest: Vec<ColumnDef> = cols.clone();
    rest.remove(pos);
    let target = match position {
        None => None,
        Some(sq::MySQLColumnPosition::First) => Some(0),
        Some(sq::MySQLColumnPosition::After(a)) => {
            match rest.iter().position(|c| ident_eq(&c.name, &a.value)) {
                Some(p) => Some(p + 1),
                None => {
                    return Err(err(
                        code::ER_BAD_FIELD_ERROR,
                        format!("Unknown column '{}' in '{}'", a.value, t.name),
                    ))
                }
            }
        }
    };
    let to = target.unwrap_or(pos);
    rest.insert(to, bc.def.clone());
    *cols = rest;
    for i in idx.iter_mut() {
        for c in &mut i.columns {
            *c = if *c == pos {
                to
            } else {
                let c1 = if *c > pos { *c - 1 } else { *c };
                if c1 >= to {
                    c1 + 1
                } else {
                    c1
                }
            };
        }
    }
    out.push(AlterOp::ChangeColumn {
        name: old.to_string(),
        def: bc.def.clone(),
        position: target,
    });
    column_keys(&bc, to, idx, out)?;
    Ok(())
}

/// The keys a column definition of ADD / MODIFY / CHANGE declares (`PRIMARY KEY`,
/// `UNIQUE`) on the column now at `pos`.
pub(super) fn column_keys(
    bc: &BoundColumn,
    pos: usize,
    idx: &mut Vec<IndexDef>,
    out: &mut Vec<AlterOp>,
) -> Result<(), SqlError> {
    let to = pos;
    if bc.primary {
        if idx.iter().any(|i| i.primary) {
            return Err(err(
                code::ER_MULTIPLE_PRI_KEY,
                "Multiple primary key defined",
            ));
        }
        let i = IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![to],
            prefix_lens: vec![None],
            unique: true,
            primary: true,
        };
        idx.insert(0, i.clone());
        out.push(AlterOp::AddIndex(i));
    }
    if bc.unique {
        let i = IndexDef {
            id: 0,
            name: unique_index_name(idx, &bc.def.name),
            columns: vec![to],
            prefix_lens: vec![None],
            unique: true,
            primary: false,
        };
        idx.push(i.clone());
        out.push(AlterOp::AddIndex(i));
    }
    Ok(())
}

/// The table's columns, indexes and CHECK constraints as an ALTER TABLE changes them.
type Shape<'a> = (
    &'a mut Vec<ColumnDef>,
    &'a mut Vec<IndexDef>,
    &'a mut Vec<onelog_engine::CheckDef>,
);

/// `ADD [COLUMN] [IF NOT EXISTS] def [FIRST | AFTER c]`.
fn add_column(
    t: &TableDef,
    column_def: &sq::ColumnDef,
    column_position: Option<&sq::MySQLColumnPosition>,
    if_not_exists: bool,
    (cols, idx, checks): Shape,
    out: &mut Vec<AlterOp>,
) -> Result<(), SqlError> {
    let bc = bind_column(column_def, t.collation)?;
    if cols.iter().any(|c| ident_eq(&c.name, &bc.def.name)) {
        if if_not_exists {
            return Ok(());
        }
        return Err(err(
            code::ER_DUP_FIELDNAME,
            format!("Duplicate column name '{}'", bc.def.name),
        ));
    }
    // Existing rows get the DEFAULT, else NULL, else (NOT NULL without DEFAULT)
    // the type's zero value, as in MariaDB; an AUTO_INCREMENT column numbers
    // them 1, 2, ... in primary key order.
    let pos = match column_position {
        None => None,
        Some(sq::MySQLColumnPosition::First) => Some(0),
        Some(sq::MySQLColumnPosition::After(a)) => {
            match cols.iter().position(|c| ident_eq(&c.name, &a.value)) {
                Some(p) => Some(p + 1),
                None => {
                    return Err(err(
                        code::ER_BAD_FIELD_ERROR,
                        format!("Unknown column '{}' in '{}'", a.value, t.name),
                    ))
                }
            }
        }
    };
    let p = pos.unwrap_or(cols.len());
    cols.insert(p, bc.def.clone());
    for i in idx.iter_mut() {
        for c in &mut i.columns {
            if *c >= p {
                *c += 1;
            }
        }
    }
    out.push(AlterOp::AddColumn {
        def: bc.def.clone(),
        position: pos,
    });
    for c in &bc.checks {
        checks.push(c.clone());
        out.push(AlterOp::AddCheck(c.clone()));
    }
    column_keys(&bc, p, idx, out)?;
    Ok(())
}

/// `DROP [COLUMN] [IF EXISTS] c [, ...]`: the indexes left without columns go too.
fn drop_columns(
    column_names: &[sq::Ident],
    if_exists: bool,
    cols: &mut Vec<ColumnDef>,
    idx: &mut Vec<IndexDef>,
    out: &mut Vec<AlterOp>,
) -> Result<(), SqlError> {
    for n in column_names {
        let Some(p) = cols.iter().position(|c| ident_eq(&c.name, &n.value)) else {
            if if_exists {
                continue;
            }
            return Err(err(
                code::ER_CANT_DROP_FIELD_OR_KEY,
                format!("Can't DROP COLUMN `{}`; check that it exists", n.value),
            ));
        };
        cols.remove(p);
        for i in idx.iter_mut() {
            i.columns.retain(|&c| c != p);
            for c in &mut i.columns {
                if *c > p {
                    *c -= 1;
                }
            }
        }
        idx.retain(|i| !i.columns.is_empty());
        out.push(AlterOp::DropColumn(n.value.clone()));
    }
    Ok(())
}
