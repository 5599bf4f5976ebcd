//! SHOW CREATE FUNCTION / PROCEDURE / TRIGGER, SHOW FUNCTION / PROCEDURE STATUS,
//! SHOW TRIGGERS, and the rows of information_schema.ROUTINES, PARAMETERS and TRIGGERS.

use onelog_engine::{Catalog, ObjectKind};
use onelog_types::{Collation, SqlError, Value};

use super::{compile, create_text, decode, trigger, RoutineDef};
use crate::parser::ShowFilter;
use crate::show::{result, s};
use crate::{sql_err, QueryResult, Session};

const CS_CLIENT: &str = "utf8mb4";
const COLL_CONN: &str = "utf8mb4_general_ci";
const DB_COLL: &str = "utf8mb4_general_ci";

fn like(v: &str, p: &str) -> bool {
    crate::expr::like(
        v.to_lowercase().as_bytes(),
        p.to_lowercase().as_bytes(),
        b'\\',
        Collation::Utf8mb4Bin,
    )
}

pub(crate) fn show_create(
    sess: &Session,
    kind: ObjectKind,
    db: Option<&str>,
    name: &str,
) -> Result<QueryResult, SqlError> {
    let db = match db.map(str::to_string).or_else(|| sess.current_db.clone()) {
        Some(d) => d,
        None => return Err(sql_err(1046, "No database selected")),
    };
    let cat = sess.db.engine.catalog();
    let Some(obj) = cat.object(kind, &db, name) else {
        return Err(if kind == ObjectKind::Trigger {
            sql_err(1360, "Trigger does not exist")
        } else {
            sql_err(1305, format!("{} {name} does not exist", kind.keyword()))
        });
    };
    if kind == ObjectKind::Trigger {
        let def = trigger::decode(obj)?;
        let text = trigger::create_text(&obj.name, obj.table.as_deref().unwrap_or(""), &def);
        return result(
            sess,
            &[
                "Trigger",
                "sql_mode",
                "SQL Original Statement",
                "character_set_client",
                "collation_connection",
                "Database Collation",
                "Created",
            ],
            &[],
            vec![vec![
                s(&obj.name),
                s(&def.sql_mode),
                s(&text),
                s(CS_CLIENT),
                s(COLL_CONN),
                s(DB_COLL),
                s(&def.created),
            ]],
            &None,
        );
    }
    let def = decode(obj)?;
    let text = create_text(kind, None, &obj.name, &def, "", false);
    let (a, b) = if kind == ObjectKind::Function {
        ("Function", "Create Function")
    } else {
        ("Procedure", "Create Procedure")
    };
    result(
        sess,
        &[
            a,
            "sql_mode",
            b,
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        &[],
        vec![vec![
            s(&obj.name),
            s(&def.sql_mode),
            s(&text),
            s(CS_CLIENT),
            s(COLL_CONN),
            s(DB_COLL),
        ]],
        &None,
    )
}

fn routines(cat: &Catalog, kind: ObjectKind) -> Vec<(String, String, RoutineDef)> {
    cat.objects_of(kind)
        .filter_map(|o| Some((o.db.clone(), o.name.clone(), decode(o).ok()?)))
        .collect()
}

pub(crate) fn show_status(
    sess: &Session,
    kind: ObjectKind,
    filter: Option<&ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let cat = sess.db.engine.catalog();
    let mut rows = Vec::new();
    for (db, name, def) in routines(&cat, kind) {
        if let Some(ShowFilter::Like(p)) = filter {
            if !like(&name, p) {
                continue;
            }
        }
        rows.push(vec![
            s(&db),
            s(&name),
            s(kind.keyword()),
            s(&format!("{}@{}", def.definer.0, def.definer.1)),
            s(&def.created),
            s(&def.created),
            s(if def.chars.invoker {
                "INVOKER"
            } else {
                "DEFINER"
            }),
            s(&def.chars.comment),
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
            "Type",
            "Definer",
            "Modified",
            "Created",
            "Security_type",
            "Comment",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        &[],
        rows,
        &filter,
    )
}

pub(crate) fn show_triggers(
    sess: &Session,
    db: Option<&str>,
    filter: Option<&ShowFilter>,
) -> Result<QueryResult, SqlError> {
    let db = match db.map(str::to_string).or_else(|| sess.current_db.clone()) {
        Some(d) => d,
        None => return Err(sql_err(1046, "No database selected")),
    };
    let cat = sess.db.engine.catalog();
    let mut rows = Vec::new();
    for (obj, def) in trigger::of_db(&cat, &db) {
        let table = obj.table.clone().unwrap_or_default();
        if let Some(ShowFilter::Like(p)) = filter {
            if !like(&table, p) {
                continue;
            }
        }
        rows.push(vec![
            s(&obj.name),
            s(&def.event),
            s(&table),
            s(&def.body),
            s(&def.timing),
            s(&def.created),
            s(&def.sql_mode),
            s(&format!("{}@{}", def.definer.0, def.definer.1)),
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
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        &[],
        rows,
        &filter,
    )
}

/// Type columns of information_schema for a declared type: DATA_TYPE,
/// CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE,
/// DATETIME_PRECISION, CHARACTER_SET_NAME, COLLATION_NAME, DTD_IDENTIFIER.
fn type_cols(written: &str) -> Vec<Value> {
    use onelog_types::ColumnType as T;
    let dtd = super::returns_text(written);
    let Ok(ty) = compile::type_of_text(written) else {
        return vec![Value::Null; 9];
    };
    let data_type = ty
        .sql_name()
        .split(['(', ' '])
        .next()
        .unwrap_or("")
        .to_string();
    let u = |n: u64| Value::UInt(n);
    let n = Value::Null;
    let (chr, oct, prec, scale, dt, cs, coll) = match &ty {
        T::Int { bytes, unsigned } => {
            let p = match (bytes, unsigned) {
                (1, _) => 3,
                (2, _) => 5,
                (3, _) => 7,
                (4, _) => 10,
                (_, false) => 19,
                _ => 20,
            };
            (
                n.clone(),
                n.clone(),
                u(p),
                u(0),
                n.clone(),
                n.clone(),
                n.clone(),
            )
        }
        T::Decimal { precision, scale } => (
            n.clone(),
            n.clone(),
            u(*precision as u64),
            u(*scale as u64),
            n.clone(),
            n.clone(),
            n.clone(),
        ),
        T::Double => (
            n.clone(),
            n.clone(),
            u(22),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
        ),
        T::Float => (
            n.clone(),
            n.clone(),
            u(12),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
        ),
        T::Char { len, binary, .. } | T::Varchar { len, binary, .. } => {
            let (cs, coll, m) = if *binary {
                (n.clone(), n.clone(), 1)
            } else {
                (s("utf8mb4"), s("utf8mb4_general_ci"), 4)
            };
            (
                u(*len as u64),
                u(*len as u64 * m),
                n.clone(),
                n.clone(),
                n.clone(),
                cs,
                coll,
            )
        }
        T::DateTime { fsp } | T::Timestamp { fsp } | T::Time { fsp } => (
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            u(*fsp as u64),
            n.clone(),
            n.clone(),
        ),
        _ => (
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
        ),
    };
    vec![s(&data_type), chr, oct, prec, scale, dt, cs, coll, s(&dtd)]
}

/// Rows of information_schema.ROUTINES / PARAMETERS / TRIGGERS (None for other tables).
pub(crate) fn info_rows(cat: &Catalog, table: &str, dbs: &[String]) -> Option<Vec<Vec<Value>>> {
    let visible = |d: &str| dbs.iter().any(|x| x == d);
    let mut rows = Vec::new();
    match table {
        "ROUTINES" => {
            for kind in [ObjectKind::Function, ObjectKind::Procedure] {
                for (db, name, def) in routines(cat, kind) {
                    if !visible(&db) {
                        continue;
                    }
                    let mut r = vec![s(&name), s("def"), s(&db), s(&name), s(kind.keyword())];
                    match &def.returns {
                        Some(t) => r.extend(type_cols(t)),
                        None => {
                            r.push(s(""));
                            r.extend(vec![Value::Null; 8]);
                        }
                    }
                    r.extend([
                        s("SQL"),
                        s(&def.body),
                        Value::Null,
                        Value::Null,
                        s("SQL"),
                        s(if def.chars.deterministic { "YES" } else { "NO" }),
                        s(def.chars.access.sql()),
                        Value::Null,
                        s(if def.chars.invoker {
                            "INVOKER"
                        } else {
                            "DEFINER"
                        }),
                        s(&def.created),
                        s(&def.created),
                        s(&def.sql_mode),
                        s(&def.chars.comment),
                        s(&format!("{}@{}", def.definer.0, def.definer.1)),
                        s(CS_CLIENT),
                        s(COLL_CONN),
                        s(DB_COLL),
                    ]);
                    rows.push(r);
                }
            }
        }
        "PARAMETERS" => {
            for kind in [ObjectKind::Function, ObjectKind::Procedure] {
                for (db, name, def) in routines(cat, kind) {
                    if !visible(&db) {
                        continue;
                    }
                    let mut push = |pos: u64, mode: Value, pname: Value, ty: &str| {
                        let mut r = vec![s("def"), s(&db), s(&name), Value::UInt(pos), mode, pname];
                        r.extend(type_cols(ty));
                        r.push(s(kind.keyword()));
                        rows.push(r);
                    };
                    if let Some(t) = &def.returns {
                        push(0, Value::Null, Value::Null, t);
                    }
                    for (i, p) in def.params.iter().enumerate() {
                        let mode = match p.mode {
                            super::Mode::In => "IN",
                            super::Mode::Out => "OUT",
                            super::Mode::InOut => "INOUT",
                        };
                        push(i as u64 + 1, s(mode), s(&p.name), &p.ty);
                    }
                }
            }
        }
        "TRIGGERS" => {
            for db in dbs {
                for (n, (obj, def)) in trigger::of_db(cat, db).into_iter().enumerate() {
                    let _ = n;
                    let order = trigger::action_order(cat, &obj, &def);
                    rows.push(vec![
                        s("def"),
                        s(db),
                        s(&obj.name),
                        s(&def.event),
                        s("def"),
                        s(db),
                        s(obj.table.as_deref().unwrap_or("")),
                        Value::UInt(order),
                        Value::Null,
                        s(&def.body),
                        s("ROW"),
                        s(&def.timing),
                        Value::Null,
                        Value::Null,
                        s("OLD"),
                        s("NEW"),
                        s(&def.created),
                        s(&def.sql_mode),
                        s(&format!("{}@{}", def.definer.0, def.definer.1)),
                        s(CS_CLIENT),
                        s(COLL_CONN),
                        s(DB_COLL),
                    ]);
                }
            }
        }
        _ => return None,
    }
    Some(rows)
}
