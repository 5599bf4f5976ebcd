//! Triggers: their DDL (order among the triggers of one table, timing and event) and the
//! row a running trigger sees (`NEW` / `OLD`).

use std::sync::Arc;

use onelog_engine::{Catalog, Ddl, ObjectKind, StoredObject, TableDef};
use onelog_types::{ColumnType, SqlError, Value};

use super::parse::CreateTrigger;
use super::{convert, quote, TriggerDef};
use crate::executor::{engine_err, ExecCtx};
use crate::sql_err;

pub(crate) fn decode(obj: &StoredObject) -> Result<TriggerDef, SqlError> {
    serde_json::from_str(&obj.definition)
        .map_err(|e| sql_err(1457, format!("Failed to load trigger {}. {e}", obj.name)))
}

/// The trigger's CREATE statement (SHOW CREATE TRIGGER, the binlog).
pub(crate) fn create_text(_name: &str, _table: &str, def: &TriggerDef) -> String {
    format!(
        "CREATE DEFINER={}@{} {}",
        quote(&def.definer.0),
        quote(&def.definer.1),
        def.body_stmt()
    )
}

impl TriggerDef {
    /// The statement from TRIGGER on.
    fn body_stmt(&self) -> &str {
        &self.tail
    }
}

/// The triggers of database `db`, by table, timing, event and order.
pub(crate) fn of_db(cat: &Catalog, db: &str) -> Vec<(Arc<StoredObject>, TriggerDef)> {
    let mut v: Vec<(Arc<StoredObject>, TriggerDef)> = cat
        .objects_in(ObjectKind::Trigger, db)
        .filter_map(|o| Some((o.clone(), decode(o).ok()?)))
        .collect();
    v.sort_by(|(a, x), (b, y)| {
        (a.table.as_deref(), &x.event, &x.timing)
            .cmp(&(b.table.as_deref(), &y.event, &y.timing))
            .then(x.order.total_cmp(&y.order))
    });
    v
}

/// The triggers of a table for one timing and event, in order.
pub(crate) fn for_table(
    cat: &Catalog,
    db: &str,
    table: &str,
    timing: &str,
    event: &str,
) -> Vec<(Arc<StoredObject>, TriggerDef)> {
    let mut v: Vec<(Arc<StoredObject>, TriggerDef)> = cat
        .objects_in(ObjectKind::Trigger, db)
        .filter(|o| o.table.as_deref() == Some(table))
        .filter_map(|o| Some((o.clone(), decode(o).ok()?)))
        .filter(|(_, d)| d.timing == timing && d.event == event)
        .collect();
    v.sort_by(|(_, x), (_, y)| x.order.total_cmp(&y.order));
    v
}

/// ACTION_ORDER: the trigger's position (from 1) among its table's triggers of the same
/// timing and event.
pub(crate) fn action_order(cat: &Catalog, obj: &StoredObject, def: &TriggerDef) -> u64 {
    let table = obj.table.as_deref().unwrap_or("");
    for_table(cat, &obj.db, table, &def.timing, &def.event)
        .iter()
        .position(|(o, _)| o.name == obj.name)
        .map_or(1, |p| p as u64 + 1)
}

/// The DDL of CREATE TRIGGER and the statement to log.
pub(crate) fn ddl_of(
    t: &CreateTrigger,
    current_db: Option<&str>,
    definer: (String, String),
    sql_mode: &str,
    cat: &Catalog,
) -> Result<(Ddl, String), SqlError> {
    let db =
        t.db.clone()
            .or(current_db.map(str::to_string))
            .ok_or_else(|| sql_err(1046, "No database selected"))?;
    let definer = match &t.definer {
        Some((u, _)) if u.is_empty() => definer,
        Some(d) => d.clone(),
        None => definer,
    };
    if cat.table(&db, &t.table).is_none() {
        return Err(sql_err(
            1146,
            format!("Table '{db}.{}' doesn't exist", t.table),
        ));
    }
    let mut same = for_table(cat, &db, &t.table, &t.timing, &t.event);
    same.retain(|(o, _)| o.name != t.name);
    let orders: Vec<f64> = same.iter().map(|(_, d)| d.order).collect();
    let order = match &t.order {
        None => orders.last().map_or(1.0, |o| o + 1.0),
        Some((how, other)) => {
            let Some(k) = same
                .iter()
                .position(|(o, _)| o.name.eq_ignore_ascii_case(other))
            else {
                return Err(sql_err(
                    4031,
                    format!(
                        "Referenced trigger '{other}' for the given action time and event type does not exist"
                    ),
                ));
            };
            if how == "FOLLOWS" {
                match orders.get(k + 1) {
                    Some(n) => (orders[k] + n) / 2.0,
                    None => orders[k] + 1.0,
                }
            } else if k == 0 {
                orders[0] - 1.0
            } else {
                (orders[k - 1] + orders[k]) / 2.0
            }
        }
    };
    let def = TriggerDef {
        timing: t.timing.clone(),
        event: t.event.clone(),
        order,
        definer,
        sql_mode: sql_mode.to_string(),
        created: format!("{:.2}", crate::database::now()),
        body: t.body.clone(),
        tail: t.tail.clone(),
    };
    // The body must compile.
    super::compile::compile_trigger(&def.body, def.timing == "AFTER")?;
    let head = if t.or_replace { "OR REPLACE " } else { "" };
    let text = format!(
        "CREATE {head}DEFINER={}@{} {}",
        quote(&def.definer.0),
        quote(&def.definer.1),
        def.tail
    );
    let obj = StoredObject {
        kind: ObjectKind::Trigger,
        db,
        name: t.name.clone(),
        table: Some(t.table.clone()),
        definition: serde_json::to_string(&def).expect("trigger definition"),
    };
    Ok((
        Ddl::CreateObject {
            obj,
            or_replace: t.or_replace,
            if_not_exists: t.if_not_exists,
        },
        text,
    ))
}

/// The row a trigger runs for: `NEW` (INSERT, UPDATE; writable in BEFORE triggers) and
/// `OLD` (UPDATE, DELETE).
#[derive(Debug, Clone)]
pub(crate) struct RowCtx {
    pub cols: Vec<(String, ColumnType)>,
    pub new: Option<Vec<Value>>,
    pub old: Option<Vec<Value>>,
    pub before: bool,
}

impl RowCtx {
    fn col(&self, name: &str, which: &str) -> Result<usize, SqlError> {
        self.cols
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| sql_err(1054, format!("Unknown column '{name}' in '{which}'")))
    }

    pub fn get(&self, new: bool, col: &str) -> Result<Value, SqlError> {
        let (row, which) = if new {
            (&self.new, "NEW")
        } else {
            (&self.old, "OLD")
        };
        let i = self.col(col, which)?;
        match row {
            Some(r) => Ok(r.get(i).cloned().unwrap_or(Value::Null)),
            None => Err(if new {
                sql_err(1363, "There is no NEW row in on DELETE trigger")
            } else {
                sql_err(1363, "There is no OLD row in on INSERT trigger")
            }),
        }
    }

    pub fn set_new(&mut self, col: &str, v: Value) -> Result<(), SqlError> {
        if !self.before {
            return Err(sql_err(
                1362,
                "Updating of NEW row is not allowed in after trigger",
            ));
        }
        let i = self.col(col, "NEW")?;
        let ty = self.cols[i].1;
        match &mut self.new {
            Some(r) => {
                r[i] = convert(v, &ty);
                Ok(())
            }
            None => Err(sql_err(1363, "There is no NEW row in on DELETE trigger")),
        }
    }
}

/// A trigger ready to run.
pub(crate) struct Trigger {
    pub db: String,
    pub name: String,
    pub prog: Arc<super::Program>,
}

/// Runs the BEFORE or AFTER triggers of `t` for `event` on one row; returns NEW as the
/// BEFORE triggers left it (`new` unchanged when there are none).
fn fire(
    cx: &mut ExecCtx,
    t: &TableDef,
    before: bool,
    event: &str,
    old: Option<&[Value]>,
    new: Option<Vec<Value>>,
) -> Result<Option<Vec<Value>>, SqlError> {
    if cx.host.is_none() || onelog_engine::is_temp_table(t) {
        return Ok(new);
    }
    let cat = cx.txn.catalog();
    if cat.objects_in(ObjectKind::Trigger, &t.db).next().is_none() {
        return Ok(new);
    }
    let timing = if before { "BEFORE" } else { "AFTER" };
    let list = for_table(&cat, &t.db, &t.name, timing, event);
    if list.is_empty() {
        return Ok(new);
    }
    let mut trg = Vec::with_capacity(list.len());
    for (o, d) in &list {
        trg.push(Trigger {
            db: o.db.clone(),
            name: o.name.clone(),
            prog: super::trigger_program(d)?,
        });
    }
    let row = RowCtx {
        cols: t.columns.iter().map(|c| (c.name.clone(), c.ty)).collect(),
        new,
        old: old.map(<[Value]>::to_vec),
        before,
    };
    let ExecCtx {
        host,
        txn,
        warnings,
        ..
    } = cx;
    match host.as_deref_mut() {
        Some(h) => h.fire_triggers(t, &trg, row, txn, warnings),
        None => Ok(row.new),
    }
}

fn has_after(cx: &ExecCtx, t: &TableDef, event: &str) -> bool {
    if cx.host.is_none() || onelog_engine::is_temp_table(t) {
        return false;
    }
    let cat = cx.txn.catalog();
    cat.objects_in(ObjectKind::Trigger, &t.db).next().is_some()
        && !for_table(&cat, &t.db, &t.name, "AFTER", event).is_empty()
}

/// Inserts a row with the table's INSERT triggers around it.
pub(crate) fn insert(cx: &mut ExecCtx, t: &TableDef, row: Vec<Value>) -> Result<(), SqlError> {
    let row = fire(cx, t, true, "INSERT", None, Some(row))?.unwrap_or_default();
    let after = has_after(cx, t, "INSERT").then(|| row.clone());
    crate::foreign_keys::check_child(cx, t, None, &row)?;
    cx.txn.insert(t, row).map_err(engine_err)?;
    if let Some(r) = after {
        fire(cx, t, false, "INSERT", None, Some(r))?;
    }
    Ok(())
}

/// Updates a row with the table's UPDATE triggers around it.
pub(crate) fn update(
    cx: &mut ExecCtx,
    t: &TableDef,
    old: &Vec<Value>,
    new: Vec<Value>,
) -> Result<(), SqlError> {
    let new = fire(cx, t, true, "UPDATE", Some(old), Some(new))?.unwrap_or_default();
    let after = has_after(cx, t, "UPDATE").then(|| new.clone());
    crate::foreign_keys::update_parent(cx, t, old, new)?;
    if let Some(r) = after {
        fire(cx, t, false, "UPDATE", Some(old), Some(r))?;
    }
    Ok(())
}

/// Deletes a row with the table's DELETE triggers around it.
pub(crate) fn delete(cx: &mut ExecCtx, t: &TableDef, old: &Vec<Value>) -> Result<(), SqlError> {
    fire(cx, t, true, "DELETE", Some(old), None)?;
    crate::foreign_keys::delete_parent(cx, t, old)?;
    fire(cx, t, false, "DELETE", Some(old), None)?;
    Ok(())
}
