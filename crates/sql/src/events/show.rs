//! SHOW EVENTS, SHOW CREATE EVENT and the rows of information_schema.EVENTS.

use onelog_engine::{Catalog, ObjectKind};
use onelog_types::{Collation, ColumnType, SqlError, Value};

use super::{create_text, decode, unknown, EventDef};
use crate::binder::VirtualColumn;
use crate::parser::ShowFilter;
use crate::show::{result, s};
use crate::users::Priv;
use crate::{sql_err, QueryResult, Session};

const CS_CLIENT: &str = "utf8mb4";
const COLL_CONN: &str = "utf8mb4_general_ci";
const DB_COLL: &str = "utf8mb4_general_ci";

fn db_or_current(sess: &Session, db: Option<&str>) -> Result<String, SqlError> {
    db.map(str::to_string)
        .or_else(|| sess.current_db.clone())
        .ok_or_else(|| sql_err(1046, "No database selected"))
}

/// The events of one database, in name order.
fn events_of(cat: &Catalog, db: &str) -> Vec<(String, EventDef)> {
    cat.objects_in(ObjectKind::Event, db)
        .filter_map(|o| Some((o.name.clone(), decode(o).ok()?)))
        .collect()
}

fn time(t: Option<onelog_types::DateTime>) -> Value {
    t.map_or(Value::Null, |t| s(&format!("{t:.0}")))
}

pub(crate) fn show_create(
    sess: &Session,
    db: Option<&str>,
    name: &str,
) -> Result<QueryResult, SqlError> {
    let db = db_or_current(sess, db)?;
    sess.check_db(&db, Priv::EVENT)?;
    let cat = sess.db.engine.catalog();
    let obj = cat
        .object(ObjectKind::Event, &db, name)
        .ok_or_else(|| unknown(name))?;
    let def = decode(obj)?;
    result(
        sess,
        &[
            "Event",
            "sql_mode",
            "time_zone",
            "Create Event",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        &[],
        vec![vec![
            s(&obj.name),
            s(&def.sql_mode),
            s("SYSTEM"),
            s(&create_text(&obj.name, &def)),
            s(CS_CLIENT),
            s(COLL_CONN),
            s(DB_COLL),
        ]],
        &None,
    )
}

pub(crate) fn show_events(
    sess: &Session,
    db: Option<&str>,
    filter: Option<&ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let db = db_or_current(sess, db)?;
    sess.check_db(&db, Priv::EVENT)?;
    let cat = sess.db.engine.catalog();
    let mut rows = Vec::new();
    for (name, def) in events_of(&cat, &db) {
        if let Some(ShowFilter::Like(p)) = filter {
            let m = crate::expr::like(
                name.to_lowercase().as_bytes(),
                p.to_lowercase().as_bytes(),
                b'\\',
                Collation::Utf8mb4Bin,
            );
            if !m {
                continue;
            }
        }
        let (kind, value, field) = match &def.every {
            Some(e) => ("RECURRING", s(&e.value_text()), s(&e.unit)),
            None => ("ONE TIME", Value::Null, Value::Null),
        };
        rows.push(vec![
            s(&db),
            s(&name),
            s(&format!("{}@{}", def.definer.0, def.definer.1)),
            s("SYSTEM"),
            s(kind),
            time(def.execute_at),
            value,
            field,
            time(def.starts),
            time(def.ends),
            s(def.status.name()),
            Value::UInt(def.originator as u64),
            s(CS_CLIENT),
            s(COLL_CONN),
            s(DB_COLL),
        ]);
    }
    let filter = match filter {
        Some(ShowFilter::Where(e)) => Some(ShowFilter::Where(e.clone())),
        _ => None,
    };
    result(
        sess,
        &[
            "Db",
            "Name",
            "Definer",
            "Time zone",
            "Type",
            "Execute at",
            "Interval value",
            "Interval field",
            "Starts",
            "Ends",
            "Status",
            "Originator",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        &["Originator"],
        rows,
        &filter,
    )
}

/// information_schema.EVENTS: the events of the databases where the session has the
/// EVENT privilege.
pub(crate) fn info_schema(
    sess: &Session,
    cat: &Catalog,
    dbs: &[String],
) -> (Vec<VirtualColumn>, Vec<Vec<Value>>) {
    const TIMES: &[&str] = &[
        "EXECUTE_AT",
        "STARTS",
        "ENDS",
        "CREATED",
        "LAST_ALTERED",
        "LAST_EXECUTED",
    ];
    let names = [
        "EVENT_CATALOG",
        "EVENT_SCHEMA",
        "EVENT_NAME",
        "DEFINER",
        "TIME_ZONE",
        "EVENT_BODY",
        "EVENT_DEFINITION",
        "EVENT_TYPE",
        "EXECUTE_AT",
        "INTERVAL_VALUE",
        "INTERVAL_FIELD",
        "SQL_MODE",
        "STARTS",
        "ENDS",
        "STATUS",
        "ON_COMPLETION",
        "CREATED",
        "LAST_ALTERED",
        "LAST_EXECUTED",
        "EVENT_COMMENT",
        "ORIGINATOR",
        "CHARACTER_SET_CLIENT",
        "COLLATION_CONNECTION",
        "DATABASE_COLLATION",
    ];
    let cols = names
        .iter()
        .map(|n| {
            if *n == "ORIGINATOR" {
                VirtualColumn::int(n)
            } else if TIMES.contains(n) {
                VirtualColumn {
                    name: n.to_string(),
                    ty: ColumnType::DateTime { fsp: 0 },
                }
            } else {
                VirtualColumn::text(n)
            }
        })
        .collect();
    let acc = sess.account();
    let dt = |t: Option<onelog_types::DateTime>| t.map_or(Value::Null, Value::DateTime);
    let mut rows = Vec::new();
    for db in dbs {
        if !sess.internal && !acc.has(Priv::EVENT, db) {
            continue;
        }
        for (name, def) in events_of(cat, db) {
            let (kind, value, field) = match &def.every {
                Some(e) => ("RECURRING", s(&e.value_text()), s(&e.unit)),
                None => ("ONE TIME", Value::Null, Value::Null),
            };
            rows.push(vec![
                s("def"),
                s(db),
                s(&name),
                s(&format!("{}@{}", def.definer.0, def.definer.1)),
                s("SYSTEM"),
                s("SQL"),
                s(&def.body),
                s(kind),
                dt(def.execute_at),
                value,
                field,
                s(&def.sql_mode),
                dt(def.starts),
                dt(def.ends),
                s(def.status.name()),
                s(if def.preserve {
                    "PRESERVE"
                } else {
                    "NOT PRESERVE"
                }),
                Value::DateTime(def.created),
                Value::DateTime(def.modified),
                dt(def.last_executed),
                s(&def.comment),
                Value::UInt(def.originator as u64),
                s(CS_CLIENT),
                s(COLL_CONN),
                s(DB_COLL),
            ]);
        }
    }
    (cols, rows)
}
