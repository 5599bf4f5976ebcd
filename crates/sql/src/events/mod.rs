//! Events (MariaDB's event scheduler): CREATE / ALTER / DROP EVENT, SHOW EVENTS, SHOW
//! CREATE EVENT, information_schema.EVENTS, and the scheduler that runs them.
//!
//! - `parse`: the statements, on the stored-program tokens.
//! - `timing`: EVERY intervals and the times on a schedule.
//! - `show`: SHOW EVENTS / SHOW CREATE EVENT and the information_schema rows.
//! - `scheduler`: `@@event_scheduler` and the thread that runs due events.
//!
//! An event is a catalog object ([`StoredObject`] of kind `Event`) whose definition is the
//! JSON of [`EventDef`]: the schedule with its times evaluated (whole seconds, UTC, the
//! session time zone), status, ON COMPLETION, comment, definer, sql_mode, creation and
//! change times, the last execution and the body as written. CREATE / ALTER / DROP are
//! DDL, logged in the form SHOW CREATE EVENT shows (times as literals, so that recovery and
//! replicas get the same schedule); recovery parses the logged statement again. The last
//! execution time, and the DISABLED status a finished ON COMPLETION PRESERVE event takes,
//! are written to the catalog without logging, as MariaDB does not log them either.

mod parse;
mod scheduler;
mod show;
mod timing;

use onelog_engine::{Catalog, Ddl, ObjectKind, StoredObject};
use onelog_types::{DateTime, SqlError, Value};

use crate::routines::quote;
use crate::sql_err;
use crate::users::Priv;
use crate::{QueryResult, Session};

pub(crate) use parse::{detect, parse, EventStmt};
use parse::{ScheduleText, Status};
pub(crate) use scheduler::{set_global, Scheduler};
pub(crate) use show::info_schema;
use timing::{whole_seconds, Every};

/// An event as stored (the JSON of `StoredObject::definition`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EventDef {
    pub definer: (String, String),
    /// ONE TIME: AT.
    pub execute_at: Option<DateTime>,
    /// RECURRING: EVERY, with STARTS (always set) and ENDS.
    pub every: Option<Every>,
    pub starts: Option<DateTime>,
    pub ends: Option<DateTime>,
    pub status: Status,
    /// ON COMPLETION PRESERVE.
    pub preserve: bool,
    pub comment: String,
    pub sql_mode: String,
    pub created: DateTime,
    pub modified: DateTime,
    #[serde(default)]
    pub last_executed: Option<DateTime>,
    /// The server id of the server that created it.
    pub originator: u32,
    pub body: String,
}

pub(crate) fn decode(obj: &StoredObject) -> Result<EventDef, SqlError> {
    serde_json::from_str(&obj.definition)
        .map_err(|e| sql_err(1457, format!("Failed to load event {}. {e}", obj.name)))
}

fn encode(def: &EventDef) -> String {
    serde_json::to_string(def).expect("event definition")
}

fn unknown(name: &str) -> SqlError {
    sql_err(1539, format!("Unknown event '{name}'"))
}

/// `ON SCHEDULE ...` as SHOW CREATE EVENT writes it.
fn schedule_text(def: &EventDef) -> String {
    match (&def.execute_at, &def.every) {
        (_, Some(e)) => {
            let mut s = format!("EVERY {} {}", e.value_text(), e.unit);
            if let Some(t) = def.starts {
                s.push_str(&format!(" STARTS '{t:.0}'"));
            }
            if let Some(t) = def.ends {
                s.push_str(&format!(" ENDS '{t:.0}'"));
            }
            s
        }
        (Some(t), None) => format!("AT '{t:.0}'"),
        (None, None) => String::new(),
    }
}

/// The clauses after the name, as SHOW CREATE EVENT writes them.
fn clauses(def: &EventDef, rename: Option<(&str, &str)>) -> String {
    let mut s = format!(
        "ON SCHEDULE {} ON COMPLETION {}PRESERVE ",
        schedule_text(def),
        if def.preserve { "" } else { "NOT " }
    );
    if let Some((d, n)) = rename {
        s.push_str(&format!("RENAME TO {}.{} ", quote(d), quote(n)));
    }
    s.push_str(def.status.clause());
    if !def.comment.is_empty() {
        s.push_str(&format!(" COMMENT '{}'", def.comment.replace('\'', "''")));
    }
    s.push_str(" DO ");
    s.push_str(&def.body);
    s
}

fn definer_text(def: &EventDef) -> String {
    format!(
        "DEFINER={}@{}",
        quote(&def.definer.0),
        quote(&def.definer.1)
    )
}

/// The CREATE statement of an event as SHOW CREATE EVENT shows it.
pub(crate) fn create_text(name: &str, def: &EventDef) -> String {
    format!(
        "CREATE {} EVENT {} {}",
        definer_text(def),
        quote(name),
        clauses(def, None)
    )
}

/// What a statement needs from the session that runs it.
pub(crate) struct Ctx<'a> {
    pub current_db: Option<String>,
    /// The account running it (the default DEFINER).
    pub user: (String, String),
    pub sql_mode: String,
    pub now: DateTime,
    /// The server id of the primary whose statement a replica applies (the event is then
    /// created SLAVESIDE_DISABLED); None on the server itself.
    pub replica_of: Option<u32>,
    pub server_id: u32,
    /// Recovery re-running a logged statement: it succeeded, so times in the past are not
    /// checked again.
    pub replay: bool,
    /// Evaluates an expression of the statement (a time or an interval amount).
    pub eval: &'a mut dyn FnMut(&str) -> Result<Value, SqlError>,
}

/// What a statement does: its DDL and logged text (None: nothing to change), and notes.
pub(crate) struct Plan {
    pub ddl: Option<(Ddl, String)>,
    pub notes: Vec<SqlError>,
}

fn eval_time(cx: &mut Ctx, text: &str, what: &str) -> Result<DateTime, SqlError> {
    let v = (cx.eval)(text)?;
    crate::dates::datetime_of(&v)
        .map(whole_seconds)
        .ok_or_else(|| {
            let shown = if v.is_null() {
                "NULL".to_string()
            } else {
                crate::expr::to_string(&v)
            };
            sql_err(1525, format!("Incorrect {what} value: '{shown}'"))
        })
}

/// Sets the schedule of `def` from `sched`.
fn set_schedule(cx: &mut Ctx, def: &mut EventDef, sched: &ScheduleText) -> Result<(), SqlError> {
    match sched {
        ScheduleText::At(t) => {
            def.execute_at = Some(eval_time(cx, t, "AT")?);
            def.every = None;
            def.starts = None;
            def.ends = None;
        }
        ScheduleText::Every {
            amount,
            unit,
            starts,
            ends,
        } => {
            let v = (cx.eval)(amount)?;
            def.every = Some(Every::new(&v, unit)?);
            def.execute_at = None;
            def.starts = Some(match starts {
                Some(t) => eval_time(cx, t, "STARTS")?,
                None => whole_seconds(cx.now),
            });
            def.ends = match ends {
                Some(t) => Some(eval_time(cx, t, "ENDS")?),
                None => None,
            };
            if def.ends.is_some_and(|e| Some(e) < def.starts) {
                return Err(sql_err(1543, "ENDS is either invalid or before STARTS"));
            }
        }
    }
    Ok(())
}

/// Whether the schedule has ended before `now` (an AT in the past, an ENDS passed).
fn in_the_past(def: &EventDef, now: DateTime) -> bool {
    let now = whole_seconds(now);
    match (def.execute_at, def.ends) {
        (Some(at), _) => at < now,
        (None, Some(end)) => end < now,
        _ => false,
    }
}

fn note_disabled() -> SqlError {
    SqlError::note(
        1544,
        "Event execution time is in the past. Event has been disabled",
    )
}

/// A status as a replica applying its primary's statement stores it.
fn status_here(cx: &Ctx, s: Status) -> Status {
    match (cx.replica_of, s) {
        (Some(_), Status::Enabled | Status::Disabled) => Status::SlavesideDisabled,
        _ => s,
    }
}

fn db_of(cx: &Ctx, db: &Option<String>) -> Result<String, SqlError> {
    db.clone()
        .or_else(|| cx.current_db.clone())
        .ok_or_else(|| sql_err(1046, "No database selected"))
}

/// The DDL of an event statement (CREATE / ALTER / DROP).
pub(crate) fn plan(cx: &mut Ctx, cat: &Catalog, stmt: &EventStmt) -> Result<Plan, SqlError> {
    let mut notes = Vec::new();
    let ddl = match stmt {
        EventStmt::Create(c) => {
            let db = db_of(cx, &c.db)?;
            let definer = match &c.definer {
                Some((u, _)) if !u.is_empty() => c.definer.clone().unwrap_or_default(),
                _ => cx.user.clone(),
            };
            let mut def = EventDef {
                definer,
                execute_at: None,
                every: None,
                starts: None,
                ends: None,
                status: status_here(cx, c.status.unwrap_or(Status::Enabled)),
                preserve: c.preserve.unwrap_or(false),
                comment: c.comment.clone().unwrap_or_default(),
                sql_mode: cx.sql_mode.clone(),
                created: whole_seconds(cx.now),
                modified: whole_seconds(cx.now),
                last_executed: None,
                originator: cx.replica_of.unwrap_or(cx.server_id),
                body: c.body.clone(),
            };
            set_schedule(cx, &mut def, &c.schedule)?;
            crate::routines::event_program(&def.body)?;
            if !cx.replay && in_the_past(&def, cx.now) {
                if !def.preserve {
                    notes.push(SqlError::note(
                        1588,
                        "Event execution time is in the past and ON COMPLETION NOT PRESERVE is set. The event was dropped immediately after creation",
                    ));
                    return Ok(Plan { ddl: None, notes });
                }
                if def.status == Status::Enabled {
                    def.status = Status::Disabled;
                }
                notes.push(note_disabled());
            }
            let mut text = String::from("CREATE ");
            if c.or_replace {
                text.push_str("OR REPLACE ");
            }
            text.push_str(&definer_text(&def));
            text.push_str(" EVENT ");
            if c.if_not_exists {
                text.push_str("IF NOT EXISTS ");
            }
            if let Some(d) = &c.db {
                text.push_str(&format!("{}.", quote(d)));
            }
            text.push_str(&format!("{} {}", quote(&c.name), clauses(&def, None)));
            let obj = StoredObject {
                kind: ObjectKind::Event,
                db,
                name: c.name.clone(),
                table: None,
                definition: encode(&def),
            };
            let ddl = Ddl::CreateObject {
                obj,
                or_replace: c.or_replace,
                if_not_exists: c.if_not_exists,
            };
            (ddl, text)
        }
        EventStmt::Alter(a) => {
            let db = db_of(cx, &a.db)?;
            let obj = cat
                .object(ObjectKind::Event, &db, &a.name)
                .ok_or_else(|| unknown(&a.name))?;
            let mut def = decode(obj)?;
            if let Some((u, h)) = &a.definer {
                def.definer = if u.is_empty() {
                    cx.user.clone()
                } else {
                    (u.clone(), h.clone())
                };
            }
            if let Some(p) = a.preserve {
                def.preserve = p;
            }
            if let Some(s) = &a.schedule {
                set_schedule(cx, &mut def, s)?;
                def.last_executed = None;
            }
            if let Some(s) = a.status {
                def.status = status_here(cx, s);
            }
            if let Some(c) = &a.comment {
                def.comment = c.clone();
            }
            if let Some(b) = &a.body {
                crate::routines::event_program(b)?;
                def.body = b.clone();
            }
            if !cx.replay && a.schedule.is_some() && in_the_past(&def, cx.now) {
                if !def.preserve {
                    return Err(sql_err(
                        1589,
                        "Event execution time is in the past and ON COMPLETION NOT PRESERVE is set. The event was not changed. Specify a time in the future",
                    ));
                }
                if def.status == Status::Enabled {
                    def.status = Status::Disabled;
                }
                notes.push(note_disabled());
            }
            def.modified = whole_seconds(cx.now);
            let (new_db, new_name) = match &a.rename {
                Some((d, n)) => (d.clone().unwrap_or_else(|| db.clone()), n.clone()),
                None => (db.clone(), obj.name.clone()),
            };
            let rename = a
                .rename
                .as_ref()
                .map(|_| (new_db.as_str(), new_name.as_str()));
            let mut text = format!("ALTER {} EVENT ", definer_text(&def));
            if let Some(d) = &a.db {
                text.push_str(&format!("{}.", quote(d)));
            }
            text.push_str(&format!("{} {}", quote(&a.name), clauses(&def, rename)));
            let new = StoredObject {
                kind: ObjectKind::Event,
                db: new_db,
                name: new_name,
                table: None,
                definition: encode(&def),
            };
            let ddl = Ddl::AlterObject {
                from: (db, obj.name.clone()),
                obj: new,
            };
            (ddl, text)
        }
        EventStmt::Drop {
            if_exists,
            db: qual,
            name,
        } => {
            let db = db_of(cx, qual)?;
            let mut text = format!("DROP EVENT {}", if *if_exists { "IF EXISTS " } else { "" });
            if let Some(d) = qual {
                text.push_str(&format!("{}.", quote(d)));
            }
            text.push_str(&quote(name));
            let ddl = Ddl::DropObjects {
                kind: ObjectKind::Event,
                names: vec![(db, name.clone())],
                if_exists: *if_exists,
            };
            (ddl, text)
        }
        EventStmt::Show { .. } | EventStmt::ShowCreate { .. } => {
            return Err(sql_err(1064, "not an event DDL statement"))
        }
    };
    Ok(Plan {
        ddl: Some(ddl),
        notes,
    })
}

/// The database an event DDL statement is about (for its privilege check).
fn stmt_db(s: &Session, stmt: &EventStmt) -> Result<String, SqlError> {
    let db = match stmt {
        EventStmt::Create(c) => c.db.clone(),
        EventStmt::Alter(a) => a.db.clone(),
        EventStmt::Drop { db, .. } => db.clone(),
        EventStmt::Show { db, .. } | EventStmt::ShowCreate { db, .. } => db.clone(),
    };
    db.or_else(|| s.current_db.clone())
        .ok_or_else(|| sql_err(1046, "No database selected"))
}

/// Runs an event statement in a session.
pub(crate) fn run(s: &mut Session, stmt: &EventStmt) -> Result<QueryResult, SqlError> {
    match stmt {
        EventStmt::Show { db, filter } => {
            return show::show_events(s, db.as_deref(), filter.as_deref())
        }
        EventStmt::ShowCreate { db, name } => return show::show_create(s, db.as_deref(), name),
        _ => {}
    }
    if s.sp.in_stmt > 0 {
        return Err(sql_err(
            1422,
            "Explicit or implicit commit is not allowed in stored function or trigger",
        ));
    }
    let db = stmt_db(s, stmt)?;
    s.check_db(&db, Priv::EVENT)?;
    if !s.db.engine.catalog().has_database(&db) {
        return Err(sql_err(1049, format!("Unknown database '{db}'")));
    }
    let replica_of = s.next_gtid.filter(|_| s.internal).map(|g| g.server);
    let server_id = s.db.engine.options().server_id;
    let current_db = s.current_db.clone();
    let user = (s.user.clone(), s.account_host.clone());
    let sql_mode = s.sql_mode();
    let now = s.fixed_now.unwrap_or_else(crate::database::now);
    let cat = s.db.engine.catalog();
    let plan = {
        let mut eval = |e: &str| -> Result<Value, SqlError> {
            let p = crate::parser::parse_one(&format!("SELECT {e}"))?;
            let n = s.warnings.len();
            let r = s.run_parsed(&p);
            s.warnings.truncate(n);
            match r? {
                QueryResult::Rows { rows, .. } => Ok(rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null)),
                _ => Ok(Value::Null),
            }
        };
        let mut cx = Ctx {
            current_db,
            user,
            sql_mode,
            now,
            replica_of,
            server_id,
            replay: false,
            eval: &mut eval,
        };
        plan(&mut cx, &cat, stmt)?
    };
    let Some((ddl, text)) = plan.ddl else {
        s.warnings.extend(plan.notes);
        let n = s.warnings.len();
        return Ok(crate::session::ok(0, 0, n, String::new()));
    };
    let mut r = s.run_ddl(&text, ddl, plan.notes)?;
    let created = matches!(stmt, EventStmt::Create(_));
    // IF [NOT] EXISTS notes; DROP EVENT IF EXISTS of a missing event: MariaDB's is 1305.
    for w in s.warnings.iter_mut() {
        match (stmt, w.code) {
            (EventStmt::Drop { name, .. }, 1539) => {
                *w = SqlError::note(1305, format!("Event {name} does not exist"))
            }
            (EventStmt::Create(_), 1537) => w.note = true,
            _ => {}
        }
    }
    if created && !s.db.events.is_on() {
        s.warnings.push(sql_err(
            1105,
            "Event scheduler is switched off, use SET GLOBAL event_scheduler=ON to enable it.",
        ));
        if let QueryResult::Ok { warnings, .. } = &mut r {
            *warnings = s.warnings.len().min(65535) as u16;
        }
    }
    s.db.events.wake();
    Ok(r)
}

/// Evaluates a literal of a logged statement (recovery has no session): a quoted string
/// or a number, which is all the logged form holds.
fn literal(text: &str) -> Result<Value, SqlError> {
    let t = text.trim();
    if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        return Ok(Value::str(&t[1..t.len() - 1].replace("''", "'")));
    }
    if let Ok(i) = t.parse::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(f) = t.parse::<f64>() {
        return Ok(Value::Double(f));
    }
    Err(sql_err(1064, format!("not a literal: {t}")))
}

/// Recovery: the DDL of a logged event statement.
pub(crate) fn replay_ddl(
    stmt: &EventStmt,
    db: &str,
    catalog: &Catalog,
    server_id: u32,
) -> Result<Ddl, SqlError> {
    let mut eval = |e: &str| literal(e);
    let mut cx = Ctx {
        current_db: (!db.is_empty()).then(|| db.to_string()),
        user: ("root".into(), "localhost".into()),
        sql_mode: crate::vars::SQL_MODE_DEFAULT.to_string(),
        // The logged times are literals; "now" only dates the change.
        now: crate::database::now(),
        replica_of: None,
        server_id,
        replay: true,
        eval: &mut eval,
    };
    match plan(&mut cx, catalog, stmt)?.ddl {
        Some((ddl, _)) => Ok(ddl),
        None => Err(sql_err(1064, "not a DDL statement")),
    }
}
