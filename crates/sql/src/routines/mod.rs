//! Stored functions, procedures and triggers.
//!
//! - `lex`: tokens with offsets, and the splitter's view of `BEGIN ... END` bodies.
//! - `parse`: CREATE / DROP / CALL / SHOW statements of stored programs.
//! - `compile`: a body (SQL/PSM) into instructions whose statements are ordinary parsed
//!   statements with the variables as placeholders.
//! - `exec`: the interpreter (variables, control flow, handlers, cursors, SIGNAL), CALL and
//!   stored function calls from expressions.
//! - `show`: SHOW CREATE / STATUS / TRIGGERS and the information_schema rows.
//! - `trigger`: triggers run for each row of INSERT / UPDATE / DELETE.
//!
//! A program is stored in the catalog as a [`StoredObject`] whose `definition` is the JSON
//! of [`RoutineDef`] (or [`TriggerDef`]): the parameter list as written and parsed, the
//! return type as written, the characteristics, the definer, the sql_mode and creation time,
//! and the body's source text. It is created and dropped as DDL, logged as the statement
//! MariaDB logs (`CREATE DEFINER=... FUNCTION ...`), which recovery parses again.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use onelog_engine::{Ddl, ObjectKind, StoredObject};
use onelog_types::{ColumnType, SqlError, Value};
use parking_lot::Mutex;

use crate::sql_err;

mod compile;
mod exec;
pub(crate) mod lex;
pub(crate) mod parse;
mod prepared_call;
mod show;
pub(crate) mod trigger;

pub(crate) use compile::Program;
pub(crate) use exec::{call_statement, run_event};
pub use lex::Splitter;
pub use parse::RoutineStmt;
use parse::{Chars, Mode, Param};
pub(crate) use prepared_call::CallOut;
pub(crate) use show::info_rows;

/// A function or procedure as stored (the JSON of `StoredObject::definition`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RoutineDef {
    pub params_text: String,
    pub params: Vec<Param>,
    #[serde(default)]
    pub returns: Option<String>,
    pub chars: Chars,
    pub definer: (String, String),
    pub sql_mode: String,
    pub created: String,
    pub body: String,
}

/// A trigger as stored.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TriggerDef {
    /// BEFORE / AFTER
    pub timing: String,
    /// INSERT / UPDATE / DELETE
    pub event: String,
    /// Orders the triggers of one table, timing and event.
    pub order: f64,
    pub definer: (String, String),
    pub sql_mode: String,
    pub created: String,
    pub body: String,
    /// The CREATE statement from the word TRIGGER on, as written.
    pub tail: String,
}

/// What runs stored functions and triggers for a statement: the session, lent the
/// statement's transaction and warnings for the call.
pub trait RoutineHost {
    /// A user-level lock function for this connection (`crate::user_locks`).
    fn user_lock(
        &mut self,
        f: crate::user_locks::UserLockFn,
        name: Option<&str>,
        timeout: f64,
        interrupt: &std::sync::atomic::AtomicBool,
    ) -> Result<onelog_types::Value, SqlError>;

    /// NEXTVAL / LASTVAL / SETVAL for this session (`crate::sequences`).
    fn sequence(
        &mut self,
        f: crate::sequences::SeqFn,
        args: &[Value],
    ) -> Result<onelog_types::Value, SqlError>;

    fn call_function(
        &mut self,
        f: &FnRef,
        args: Vec<Value>,
        txn: &mut onelog_engine::Txn,
        warnings: &mut Vec<SqlError>,
    ) -> Result<Value, SqlError>;

    /// Runs the triggers of `t` for one row; returns NEW as BEFORE triggers left it.
    fn fire_triggers(
        &mut self,
        t: &onelog_engine::TableDef,
        trg: &[trigger::Trigger],
        row: trigger::RowCtx,
        txn: &mut onelog_engine::Txn,
        warnings: &mut Vec<SqlError>,
    ) -> Result<Option<Vec<Value>>, SqlError>;
}

/// Per-session state of running programs.
#[derive(Default)]
pub(crate) struct SpState {
    /// Programs running (nested calls).
    pub depth: u32,
    /// >0: statements run inside an enclosing statement (a function or trigger body).
    pub in_stmt: u32,
    /// Functions and triggers running, by `db.name` (they may not recurse).
    pub running: Vec<String>,
    /// Procedures running, by `db.name` (recursion up to `max_sp_recursion_depth`).
    pub procs: Vec<String>,
    /// Tables used by the statements that called the running functions and triggers
    /// (they may not write them: 1442).
    pub in_use: Vec<(String, String)>,
}

/// A stored function an expression calls.
#[derive(Debug)]
pub struct FnRef {
    pub db: String,
    pub name: String,
    pub def: RoutineDef,
    pub ret: ColumnType,
    pub prog: Arc<Program>,
}

/// Compiled programs by definition text (the catalog's objects are immutable).
type Cache = Mutex<HashMap<(ObjectKind, String), Arc<Program>>>;

fn cache() -> &'static Cache {
    static C: OnceLock<Cache> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The compiled body of a routine definition.
pub(crate) fn program(kind: ObjectKind, def: &RoutineDef) -> Result<Arc<Program>, SqlError> {
    let key = (kind, format!("{}\u{0}{}", def.params_text, def.body));
    if let Some(p) = cache().lock().get(&key) {
        return Ok(p.clone());
    }
    let mut params = Vec::new();
    for p in &def.params {
        params.push((p.name.clone(), compile::type_of_text(&p.ty)?));
    }
    let prog = Arc::new(compile::compile(&def.body, kind, &params)?);
    let mut c = cache().lock();
    if c.len() >= 1024 {
        c.clear();
    }
    c.insert(key, prog.clone());
    Ok(prog)
}

/// The compiled body of a trigger.
pub(crate) fn trigger_program(def: &TriggerDef) -> Result<Arc<Program>, SqlError> {
    let key = (
        ObjectKind::Trigger,
        format!("{}\u{0}{}", def.timing, def.body),
    );
    if let Some(p) = cache().lock().get(&key) {
        return Ok(p.clone());
    }
    let prog = Arc::new(compile::compile_trigger(&def.body, def.timing == "AFTER")?);
    cache().lock().insert(key, prog.clone());
    Ok(prog)
}

/// The compiled body of an event: a procedure without parameters.
pub(crate) fn event_program(body: &str) -> Result<Arc<Program>, SqlError> {
    let key = (ObjectKind::Event, body.to_string());
    if let Some(p) = cache().lock().get(&key) {
        return Ok(p.clone());
    }
    let prog = Arc::new(compile::compile(body, ObjectKind::Procedure, &[])?);
    cache().lock().insert(key, prog.clone());
    Ok(prog)
}

pub(crate) fn decode(obj: &StoredObject) -> Result<RoutineDef, SqlError> {
    serde_json::from_str(&obj.definition)
        .map_err(|e| sql_err(1457, format!("Failed to load routine {}. {e}", obj.name)))
}

fn not_exist(kind: ObjectKind, db: &str, name: &str) -> SqlError {
    sql_err(
        1305,
        format!("{} {db}.{name} does not exist", kind.keyword()),
    )
}

/// Backquotes an identifier as MariaDB's SHOW CREATE does.
pub(crate) fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A routine's return type as SHOW CREATE prints it (`int(11)`, `varchar(20) CHARSET
/// utf8mb4 COLLATE utf8mb4_general_ci`).
pub(crate) fn returns_text(written: &str) -> String {
    let Ok(ty) = compile::type_of_text(written) else {
        return written.to_string();
    };
    let mut s = ty.sql_name();
    let upper = written.to_uppercase();
    let toks: Vec<&str> = written.split_whitespace().collect();
    let utoks: Vec<&str> = upper.split_whitespace().collect();
    let after = |k: &str| {
        utoks
            .iter()
            .position(|t| *t == k)
            .and_then(|i| toks.get(i + 1))
            .map(|s| s.to_lowercase())
    };
    let cs = after("CHARSET").or_else(|| after("SET"));
    let coll = after("COLLATE");
    if let Some(cs) = cs {
        let coll = coll.unwrap_or_else(|| format!("{cs}_general_ci"));
        s.push_str(&format!(" CHARSET {cs} COLLATE {coll}"));
    } else if let Some(coll) = coll {
        let cs = coll.split('_').next().unwrap_or("").to_string();
        s.push_str(&format!(" CHARSET {cs} COLLATE {coll}"));
    }
    if upper.contains("ZEROFILL") {
        s.push_str(" zerofill");
    }
    s
}

/// The CREATE statement of a routine as SHOW CREATE shows it and the binlog logs it.
pub(crate) fn create_text(
    kind: ObjectKind,
    db: Option<&str>,
    name: &str,
    def: &RoutineDef,
    head: &str,
    if_not_exists: bool,
) -> String {
    let mut s = format!(
        "CREATE {head}DEFINER={}@{} {} {}",
        quote(&def.definer.0),
        quote(&def.definer.1),
        kind.keyword(),
        if if_not_exists { "IF NOT EXISTS " } else { "" }
    );
    if let Some(d) = db {
        s.push_str(&quote(d));
        s.push('.');
    }
    s.push_str(&quote(name));
    s.push('(');
    s.push_str(&def.params_text);
    s.push(')');
    if let Some(r) = &def.returns {
        s.push_str(" RETURNS ");
        s.push_str(&returns_text(r));
    }
    s.push('\n');
    let c = &def.chars;
    if c.access != parse::Access::ContainsSql {
        s.push_str(&format!("    {}\n", c.access.sql()));
    }
    if c.deterministic {
        s.push_str("    DETERMINISTIC\n");
    }
    if c.invoker {
        s.push_str("    SQL SECURITY INVOKER\n");
    }
    if !c.comment.is_empty() {
        s.push_str(&format!(
            "    COMMENT '{}'\n",
            c.comment.replace('\'', "''")
        ));
    }
    s.push_str(&def.body);
    s
}

/// The DDL of a stored-program statement and the text to log (None: not DDL). `definer`
/// is the account that runs it (the default DEFINER), `sql_mode` its mode.
pub(crate) fn ddl_of(
    stmt: &RoutineStmt,
    current_db: Option<&str>,
    definer: (String, String),
    sql_mode: &str,
    catalog: &onelog_engine::Catalog,
) -> Result<Option<(Ddl, String)>, SqlError> {
    let no_db = || sql_err(1046, "No database selected");
    let now = crate::database::now();
    let created = format!("{now:.0}");
    Ok(Some(match stmt {
        RoutineStmt::Create(c) => {
            let db =
                c.db.clone()
                    .or(current_db.map(str::to_string))
                    .ok_or_else(no_db)?;
            let definer = match &c.definer {
                Some((u, _)) if u.is_empty() => definer,
                Some(d) => d.clone(),
                None => definer,
            };
            let def = RoutineDef {
                params_text: c.params_text.clone(),
                params: c.params.clone(),
                returns: c.returns.clone(),
                chars: c.chars.clone(),
                definer,
                sql_mode: sql_mode.to_string(),
                created,
                body: c.body.clone(),
            };
            // The body must compile (syntax errors, undeclared variables, ...).
            for p in &def.params {
                compile::type_of_text(&p.ty)?;
            }
            if let Some(r) = &def.returns {
                compile::type_of_text(r)?;
            }
            program(c.kind, &def)?;
            let head = if c.or_replace { "OR REPLACE " } else { "" };
            let text = create_text(
                c.kind,
                c.db.as_deref(),
                &c.name,
                &def,
                head,
                c.if_not_exists,
            );
            let obj = StoredObject {
                kind: c.kind,
                db,
                name: c.name.clone(),
                table: None,
                definition: serde_json::to_string(&def).expect("routine definition"),
            };
            (
                Ddl::CreateObject {
                    obj,
                    or_replace: c.or_replace,
                    if_not_exists: c.if_not_exists,
                },
                text,
            )
        }
        RoutineStmt::CreateTrigger(t) => {
            return trigger::ddl_of(t, current_db, definer, sql_mode, catalog).map(Some)
        }
        RoutineStmt::Drop {
            kind,
            if_exists,
            db,
            name,
        } => {
            let db = db
                .clone()
                .or(current_db.map(str::to_string))
                .ok_or_else(no_db)?;
            let text = format!(
                "DROP {} {}{}",
                kind.keyword(),
                if *if_exists { "IF EXISTS " } else { "" },
                quote(name)
            );
            (
                Ddl::DropObjects {
                    kind: *kind,
                    names: vec![(db, name.clone())],
                    if_exists: *if_exists,
                },
                text,
            )
        }
        _ => return Ok(None),
    }))
}

/// A statement of this module run by a session: DDL, CALL or SHOW.
pub(crate) fn run(
    s: &mut crate::Session,
    stmt: &RoutineStmt,
    text: &str,
    client: Option<&mut dyn crate::Client>,
) -> Result<crate::QueryResult, SqlError> {
    match stmt {
        RoutineStmt::Create(_) | RoutineStmt::CreateTrigger(_) | RoutineStmt::Drop { .. } => {
            if s.sp.in_stmt > 0 {
                return Err(sql_err(
                    1422,
                    "Explicit or implicit commit is not allowed in stored function or trigger",
                ));
            }
            if let RoutineStmt::Create(c) = stmt {
                if c.kind == ObjectKind::Function {
                    check_trust(s, &c.chars)?;
                }
            }
            let definer = (s.user.clone(), s.account_host.clone());
            let mode = s.sql_mode();
            let cat = s.db.engine.catalog();
            let (ddl, logged) = ddl_of(stmt, s.current_db.as_deref(), definer, &mode, &cat)?
                .expect("a DDL statement");
            let _ = text;
            s.run_ddl(&logged, ddl, vec![])
        }
        RoutineStmt::Call { db, name, args } => {
            call_statement(s, db.as_deref(), name, args, client)
        }
        RoutineStmt::ShowCreate { kind, db, name } => {
            show::show_create(s, *kind, db.as_deref(), name)
        }
        RoutineStmt::ShowStatus { kind, filter } => show::show_status(s, *kind, filter.as_ref()),
        RoutineStmt::ShowTriggers { db, filter } => {
            show::show_triggers(s, db.as_deref(), filter.as_ref())
        }
    }
}

/// Error 1418: a function that may change data, created while the binlog is on and
/// `log_bin_trust_function_creators` is off (MariaDB asks this of every account).
fn check_trust(s: &crate::Session, c: &Chars) -> Result<(), SqlError> {
    let binlog = s
        .get_var(Some(crate::parser::Scope::Global), "log_bin")
        .map(|v| crate::expr::to_i64(&v) != 0)
        .unwrap_or(false);
    let trust = s
        .get_var(
            Some(crate::parser::Scope::Global),
            "log_bin_trust_function_creators",
        )
        .map(|v| crate::expr::to_i64(&v) != 0)
        .unwrap_or(false);
    let safe =
        c.deterministic || matches!(c.access, parse::Access::NoSql | parse::Access::ReadsSqlData);
    if binlog && !trust && !safe {
        return Err(sql_err(
            1418,
            "This function has none of DETERMINISTIC, NO SQL, or READS SQL DATA in its declaration and binary logging is enabled (you *might* want to use the less safe log_bin_trust_function_creators variable)",
        ));
    }
    Ok(())
}

/// Recovery: the DDL of a logged stored-program statement.
pub(crate) fn replay_ddl(
    stmt: &RoutineStmt,
    db: &str,
    catalog: &onelog_engine::Catalog,
) -> Result<Ddl, SqlError> {
    // The logged statement names its definer; the mode is not logged with it.
    let current = (!db.is_empty()).then_some(db);
    match ddl_of(
        stmt,
        current,
        ("root".into(), "localhost".into()),
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
        catalog,
    )? {
        Some((ddl, _)) => Ok(ddl),
        None => Err(sql_err(1064, "not a DDL statement")),
    }
}

/// Binds a call of stored function `db.name` (db: the current one when None); None if
/// there is no such function and `must` is false.
pub(crate) fn bind_function(
    catalog: &onelog_engine::Catalog,
    db: Option<&str>,
    name: &str,
    nargs: usize,
) -> Result<Option<Arc<FnRef>>, SqlError> {
    let Some(db) = db else {
        return Ok(None);
    };
    let Some(obj) = catalog.object(ObjectKind::Function, db, name) else {
        return Ok(None);
    };
    let def = decode(obj)?;
    if def.params.len() != nargs {
        return Err(sql_err(
            1318,
            format!(
                "Incorrect number of arguments for FUNCTION {db}.{}; expected {}, got {nargs}",
                obj.name,
                def.params.len()
            ),
        ));
    }
    let ret = compile::type_of_text(def.returns.as_deref().unwrap_or("int"))?;
    let prog = program(ObjectKind::Function, &def)?;
    Ok(Some(Arc::new(FnRef {
        db: db.to_string(),
        name: obj.name.clone(),
        def,
        ret,
        prog,
    })))
}

/// MariaDB's 1305 for a function call of `db.name` that names no function.
pub(crate) fn no_function(db: &str, name: &str) -> SqlError {
    not_exist(ObjectKind::Function, db, name)
}

/// Converts a value to a declared type (a variable, parameter or return value): MariaDB
/// stores it as into a column of that type.
pub(crate) fn convert(v: Value, ty: &ColumnType) -> Value {
    if v.is_null() {
        return v;
    }
    match crate::expr::convert_for_column(&v, ty) {
        Ok(x) => x,
        Err((_, x)) => x,
    }
}

/// Whether `mode` names an OUT or INOUT parameter.
pub(crate) fn is_out(m: Mode) -> bool {
    m != Mode::In
}

/// Whether a bound query calls a stored function or a user-level lock function (it then
/// needs a transaction and the session to run it, even without tables).
pub(crate) fn calls_functions(sel: &crate::binder::Select) -> bool {
    let mut found = false;
    crate::binder::visit_exprs(sel, 0, &mut |e, _| {
        e.walk(&mut |x| {
            // Stored functions and user-level locks run through the session.
            if matches!(x, crate::expr::Expr::Routine(..))
                || matches!(x, crate::expr::Expr::Func(f, _) if f.needs_host())
            {
                found = true;
            }
        })
    });
    found
}

/// Error 1442: a function or trigger writes a table the statement that called it uses.
pub(crate) fn check_in_use(
    s: &crate::Session,
    written: &[(String, String)],
) -> Result<(), SqlError> {
    if s.sp.in_stmt == 0 {
        return Ok(());
    }
    for (d, t) in written {
        if s.sp.in_use.iter().any(|(a, b)| a == d && b == t) {
            return Err(sql_err(
                1442,
                format!(
                    "Can't update table '{t}' in stored function/trigger because it is already used by statement which invoked this stored function/trigger"
                ),
            ));
        }
    }
    Ok(())
}
