//! The stored-program interpreter: runs compiled instructions on a session. Statements of
//! a body run through the session's ordinary path with the variables as placeholder values;
//! a procedure's statements are statements of their own (committed one by one under
//! autocommit, result sets sent to the client as they come), a function's (and a
//! trigger's) run inside the statement that called it, in its transaction.

use std::collections::VecDeque;

use onelog_engine::{Isolation, ObjectKind, Txn};
use onelog_types::{code, SqlError, Value};

use super::compile::{Block, Cond, Instr, Program, Signal, Sql, Target, VarRef};
use super::prepared_call::{is_placeholder, out_params_result};
use super::trigger::RowCtx;
use super::{convert, decode, is_out, program, FnRef, Mode, RoutineDef};
use crate::parser::{Admin, Stmt};
use crate::users::Priv;
use crate::{sql_err, QueryResult, Session};

enum Flow {
    Next,
    Leave(String),
    Iterate(String),
    Return(Value),
    /// An EXIT handler of the block with this serial ran.
    Exit(usize),
}

struct Active<'p> {
    serial: usize,
    handlers: &'p [super::compile::Handler],
    enabled: bool,
}

pub(crate) struct Interp<'s, 'p, 'c> {
    s: &'s mut Session,
    prog: &'p Program,
    vals: Vec<Value>,
    cursors: Vec<Option<VecDeque<Vec<Value>>>>,
    handlers: Vec<Active<'p>>,
    /// Conditions being handled (RESIGNAL takes the last).
    conds: Vec<SqlError>,
    next_block: usize,
    /// The error has been offered to every handler in scope.
    propagating: bool,
    client: Option<&'c mut dyn crate::Client>,
    /// `PROCEDURE db.name` for messages; None for functions and triggers.
    proc_name: Option<String>,
    pub row: Option<RowCtx>,
}

fn truth(v: &Value) -> bool {
    crate::expr::truth(v) == Some(true)
}

fn class(state: &str) -> &str {
    state.get(..2).unwrap_or("HY")
}

fn no_data() -> SqlError {
    sql_err(1329, "No data - zero rows fetched, selected, or processed").with_state("02000")
}

trait WithState {
    fn with_state(self, s: &str) -> SqlError;
}

impl WithState for SqlError {
    fn with_state(mut self, s: &str) -> SqlError {
        self.state = static_state(s);
        self
    }
}

/// A SQLSTATE as the `&'static str` errors carry (each distinct one is kept once).
fn static_state(s: &str) -> &'static str {
    use std::collections::HashSet;
    use std::sync::OnceLock;
    static STATES: OnceLock<parking_lot::Mutex<HashSet<&'static str>>> = OnceLock::new();
    let m = STATES.get_or_init(|| parking_lot::Mutex::new(HashSet::new()));
    let mut m = m.lock();
    if let Some(x) = m.get(s) {
        return x;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    m.insert(leaked);
    leaked
}

fn matches(c: &Cond, e: &SqlError) -> Option<u8> {
    let cl = class(e.state);
    match c {
        Cond::Code(n) if *n == e.code => Some(3),
        Cond::State(s) if s == e.state => Some(2),
        Cond::SqlException if cl != "00" && cl != "01" && cl != "02" => Some(1),
        Cond::SqlWarning if cl == "01" => Some(1),
        Cond::NotFound if cl == "02" => Some(1),
        _ => None,
    }
}

impl<'s, 'p, 'c> Interp<'s, 'p, 'c> {
    pub fn new(
        s: &'s mut Session,
        prog: &'p Program,
        args: Vec<Value>,
        client: Option<&'c mut dyn crate::Client>,
        proc_name: Option<String>,
    ) -> Self {
        let mut vals = vec![Value::Null; prog.slots.len()];
        for (i, v) in args.into_iter().enumerate() {
            if let Some((_, ty)) = prog.slots.get(i) {
                vals[i] = convert(v, ty);
            }
        }
        Interp {
            s,
            prog,
            vals,
            cursors: vec![None; prog.cursors],
            handlers: vec![],
            conds: vec![],
            next_block: 0,
            propagating: false,
            client,
            proc_name,
            row: None,
        }
    }

    /// Runs the body; a function's RETURN value.
    pub fn run(&mut self) -> Result<Option<Value>, SqlError> {
        let body = &self.prog.body;
        match self.exec_handled(body)? {
            Flow::Return(v) => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    pub fn param_values(&self, n: usize) -> Vec<Value> {
        self.vals[..n].to_vec()
    }

    fn value(&self, v: &VarRef) -> Result<Value, SqlError> {
        match v {
            VarRef::Local(i) => Ok(self.vals[*i].clone()),
            VarRef::Row(new, col) => match &self.row {
                Some(r) => r.get(*new, col),
                None => Err(sql_err(
                    1054,
                    format!("Unknown column '{col}' in 'field list'"),
                )),
            },
        }
    }

    /// Runs a statement with the variables' values as its parameters.
    fn sql(&mut self, sql: &Sql) -> Result<QueryResult, SqlError> {
        if self.s.sp.in_stmt > 0 {
            refuse_in_function(&sql.parsed.stmt)?;
        }
        let params = sql
            .vars
            .iter()
            .map(|v| self.value(v))
            .collect::<Result<Vec<_>, _>>()?;
        let saved = std::mem::replace(&mut self.s.params, params);
        let r = self.s.run_parsed(&sql.parsed);
        self.s.params = saved;
        r
    }

    /// The value of an expression (compiled as `SELECT expr`).
    fn eval(&mut self, sql: &Sql) -> Result<Value, SqlError> {
        let row_count = self.s.row_count;
        let r = self.sql(sql);
        self.s.row_count = row_count;
        match r? {
            QueryResult::Rows { mut rows, columns } => {
                if columns.len() != 1 {
                    return Err(sql_err(1241, "Operand should contain 1 column(s)"));
                }
                if rows.len() > 1 {
                    return Err(sql_err(1242, "Subquery returns more than 1 row"));
                }
                Ok(rows
                    .pop()
                    .and_then(|r| r.into_iter().next())
                    .unwrap_or(Value::Null))
            }
            QueryResult::Ok { .. } => Ok(Value::Null),
        }
    }

    fn assign(&mut self, t: &Target, v: Value) -> Result<(), SqlError> {
        match t {
            Target::Local(i) => {
                self.vals[*i] = convert(v, &self.prog.slots[*i].1);
                Ok(())
            }
            Target::User(n) => {
                self.s.user_vars.insert(n.clone(), v);
                Ok(())
            }
            Target::NewCol(c) => match &mut self.row {
                Some(r) => r.set_new(c, v),
                None => Err(sql_err(1054, format!("Unknown column '{c}' in 'NEW'"))),
            },
            // Only a prepared CALL's arguments are placeholders; their values are read
            // from the parameters once the procedure returns.
            Target::Param => Ok(()),
        }
    }

    fn exec_list(&mut self, list: &'p [Instr]) -> Result<Flow, SqlError> {
        for i in list {
            match self.exec_handled(i)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn exec_handled(&mut self, i: &'p Instr) -> Result<Flow, SqlError> {
        match self.exec(i) {
            Err(e) if !self.propagating => self.handle(e),
            r => r,
        }
    }

    /// Offers a condition to the handlers in scope, innermost block first (within a block
    /// the most specific handler).
    fn handle(&mut self, e: SqlError) -> Result<Flow, SqlError> {
        if matches!(e.code, code::ER_QUERY_INTERRUPTED | 1969 | 1436) {
            self.propagating = true;
            return Err(e);
        }
        for idx in (0..self.handlers.len()).rev() {
            if !self.handlers[idx].enabled {
                continue;
            }
            let hs = self.handlers[idx].handlers;
            let best = hs
                .iter()
                .filter_map(|h| {
                    h.conds
                        .iter()
                        .filter_map(|c| matches(c, &e))
                        .max()
                        .map(|s| (s, h))
                })
                .max_by_key(|(s, _)| *s);
            let Some((_, h)) = best else { continue };
            let serial = self.handlers[idx].serial;
            // The handler's body does not see its own block's handlers (nor inner ones).
            let saved: Vec<bool> = self.handlers[idx..].iter().map(|a| a.enabled).collect();
            for a in &mut self.handlers[idx..] {
                a.enabled = false;
            }
            self.conds.push(e);
            let r = self.exec_handled(&h.body);
            self.conds.pop();
            for (a, en) in self.handlers[idx..].iter_mut().zip(saved) {
                a.enabled = en;
            }
            return match r? {
                Flow::Next if h.exit => Ok(Flow::Exit(serial)),
                Flow::Next => Ok(Flow::Next),
                other => Ok(other),
            };
        }
        self.propagating = true;
        Err(e)
    }

    /// A warning-class condition (no rows for SELECT ... INTO): a handler's, else a
    /// warning of the statement.
    fn condition(&mut self, e: SqlError) -> Result<Flow, SqlError> {
        let handled = self.handlers.iter().any(|a| {
            a.enabled
                && a.handlers
                    .iter()
                    .any(|h| h.conds.iter().any(|c| matches(c, &e).is_some()))
        });
        if handled {
            return self.handle(e);
        }
        self.s.warnings.push(e);
        Ok(Flow::Next)
    }

    fn check_killed(&self) -> Result<(), SqlError> {
        if self
            .s
            .control
            .interrupt
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(sql_err(
                code::ER_QUERY_INTERRUPTED,
                "Query execution was interrupted",
            ));
        }
        Ok(())
    }

    fn looped(&mut self, label: &Option<String>, f: Flow) -> Option<Result<Flow, SqlError>> {
        let mine = |l: &String| label.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(l));
        match f {
            Flow::Next => None,
            Flow::Iterate(l) if mine(&l) => None,
            Flow::Leave(l) if mine(&l) => Some(Ok(Flow::Next)),
            other => Some(Ok(other)),
        }
    }

    fn exec(&mut self, i: &'p Instr) -> Result<Flow, SqlError> {
        match i {
            Instr::Sql { sql, into: None } => {
                let r = self.sql(sql)?;
                if let QueryResult::Rows { .. } = r {
                    let name = self.proc_name.clone().unwrap_or_default();
                    match self.client.as_mut() {
                        Some(c) => {
                            if !c.result(self.s, Ok(r), true) {
                                return Err(sql_err(
                                    1160,
                                    "Got an error writing communication packets",
                                ));
                            }
                        }
                        None => {
                            return Err(sql_err(
                                1312,
                                format!(
                                "PROCEDURE {name} can't return a result set in the given context"
                            ),
                            ))
                        }
                    }
                }
                Ok(Flow::Next)
            }
            Instr::Sql {
                sql,
                into: Some(targets),
            } => match self.sql(sql)? {
                QueryResult::Rows { mut rows, columns } => {
                    if columns.len() != targets.len() {
                        return Err(sql_err(
                            1222,
                            "The used SELECT statements have a different number of columns",
                        ));
                    }
                    if rows.len() > 1 {
                        return Err(sql_err(1172, "Result consisted of more than one row"));
                    }
                    match rows.pop() {
                        None => self.condition(no_data()),
                        Some(row) => {
                            for (t, v) in targets.iter().zip(row) {
                                self.assign(t, v)?;
                            }
                            Ok(Flow::Next)
                        }
                    }
                }
                QueryResult::Ok { .. } => Ok(Flow::Next),
            },
            Instr::Set(t, e) => {
                let v = self.eval(e)?;
                self.assign(t, v)?;
                Ok(Flow::Next)
            }
            Instr::If(branches, els) | Instr::Case(branches, els) => {
                for (c, body) in branches {
                    if truth(&self.eval(c)?) {
                        return self.exec_list(body);
                    }
                }
                match els {
                    Some(b) => self.exec_list(b),
                    None if matches!(i, Instr::Case(..)) => {
                        Err(sql_err(1339, "Case not found for CASE statement").with_state("20000"))
                    }
                    None => Ok(Flow::Next),
                }
            }
            Instr::Loop(label, body) => loop {
                self.check_killed()?;
                let f = self.exec_list(body)?;
                if let Some(r) = self.looped(label, f) {
                    return r;
                }
            },
            Instr::While(label, cond, body) => loop {
                self.check_killed()?;
                if !truth(&self.eval(cond)?) {
                    return Ok(Flow::Next);
                }
                let f = self.exec_list(body)?;
                if let Some(r) = self.looped(label, f) {
                    return r;
                }
            },
            Instr::Repeat(label, body, until) => loop {
                self.check_killed()?;
                let f = self.exec_list(body)?;
                if let Some(r) = self.looped(label, f) {
                    return r;
                }
                if truth(&self.eval(until)?) {
                    return Ok(Flow::Next);
                }
            },
            Instr::Leave(l) => Ok(Flow::Leave(l.clone())),
            Instr::Iterate(l) => Ok(Flow::Iterate(l.clone())),
            Instr::Return(e) => Ok(Flow::Return(self.eval(e)?)),
            Instr::Block(b) => self.block(b),
            Instr::Open(c) => {
                if self.cursors[*c].is_some() {
                    return Err(sql_err(1325, "Cursor is already open").with_state("24000"));
                }
                let q = self
                    .cursor_query(*c)
                    .ok_or_else(|| sql_err(1324, "Undefined CURSOR"))?;
                let rows = match self.sql(q)? {
                    QueryResult::Rows { rows, .. } => rows,
                    _ => vec![],
                };
                self.cursors[*c] = Some(rows.into());
                Ok(Flow::Next)
            }
            Instr::Fetch(c, targets) => {
                let Some(rows) = self.cursors[*c].as_mut() else {
                    return Err(sql_err(1326, "Cursor is not open").with_state("24000"));
                };
                match rows.pop_front() {
                    None => Err(no_data()),
                    Some(row) => {
                        if row.len() != targets.len() {
                            return Err(sql_err(1328, "Incorrect number of FETCH variables"));
                        }
                        for (t, v) in targets.iter().zip(row) {
                            self.assign(t, v)?;
                        }
                        Ok(Flow::Next)
                    }
                }
            }
            Instr::Close(c) => {
                if self.cursors[*c].take().is_none() {
                    return Err(sql_err(1326, "Cursor is not open").with_state("24000"));
                }
                Ok(Flow::Next)
            }
            Instr::Signal(sig) => self.signal(sig),
            Instr::Call { db, name, args } => {
                let mut values = Vec::with_capacity(args.len());
                for (a, _) in args {
                    values.push(self.eval(a)?);
                }
                let targets: Vec<Option<Target>> = args.iter().map(|(_, t)| t.clone()).collect();
                let db = match db.clone().or_else(|| self.s.current_db.clone()) {
                    Some(d) => d,
                    None => return Err(sql_err(1046, "No database selected")),
                };
                let client = self
                    .client
                    .as_mut()
                    .map(|c| &mut **c as &mut dyn crate::Client);
                let (outs, def) = call_procedure(self.s, &db, name, values, &targets, client)?;
                for ((p, t), v) in def.params.iter().zip(&targets).zip(outs) {
                    if is_out(p.mode) {
                        if let Some(t) = t {
                            self.assign(t, v)?;
                        }
                    }
                }
                Ok(Flow::Next)
            }
        }
    }

    fn cursor_query(&self, c: usize) -> Option<&'p Sql> {
        fn find(i: &Instr, c: usize) -> Option<&Sql> {
            let list: &[Instr] = match i {
                Instr::Block(b) => {
                    if let Some((_, q)) = b.cursors.iter().find(|(k, _)| *k == c) {
                        return Some(q);
                    }
                    for h in &b.handlers {
                        if let Some(q) = find(&h.body, c) {
                            return Some(q);
                        }
                    }
                    &b.body
                }
                Instr::If(br, els) | Instr::Case(br, els) => {
                    for (_, l) in br {
                        if let Some(q) = l.iter().find_map(|x| find(x, c)) {
                            return Some(q);
                        }
                    }
                    return els.as_ref().and_then(|l| l.iter().find_map(|x| find(x, c)));
                }
                Instr::Loop(_, l) | Instr::While(_, _, l) | Instr::Repeat(_, l, _) => l,
                _ => return None,
            };
            list.iter().find_map(|x| find(x, c))
        }
        find(&self.prog.body, c)
    }

    fn block(&mut self, b: &'p Block) -> Result<Flow, SqlError> {
        let serial = self.next_block;
        self.next_block += 1;
        for (slot, default) in &b.vars {
            let v = match default {
                Some(d) => self.eval(d)?,
                None => Value::Null,
            };
            self.vals[*slot] = convert(v, &self.prog.slots[*slot].1);
        }
        self.handlers.push(Active {
            serial,
            handlers: &b.handlers,
            enabled: true,
        });
        let r = self.exec_list(&b.body);
        self.handlers.pop();
        for (c, _) in &b.cursors {
            self.cursors[*c] = None;
        }
        let mine = |l: &String| b.label.as_ref().is_some_and(|x| x.eq_ignore_ascii_case(l));
        match r? {
            Flow::Leave(l) if mine(&l) => Ok(Flow::Next),
            Flow::Exit(s) if s == serial => Ok(Flow::Next),
            other => Ok(other),
        }
    }

    fn signal(&mut self, sig: &Signal) -> Result<Flow, SqlError> {
        let mut e = if sig.resignal && sig.cond.is_none() {
            match self.conds.last() {
                Some(c) => c.clone(),
                None => {
                    return Err(
                        sql_err(1645, "RESIGNAL when handler not active").with_state("0K000")
                    )
                }
            }
        } else {
            match sig.cond.as_ref() {
                Some(Cond::State(s)) => {
                    let (code, msg) = match class(s) {
                        "01" => (1642, "Unhandled user-defined warning condition"),
                        "02" => (1643, "Unhandled user-defined not found condition"),
                        _ => (1644, "Unhandled user-defined exception condition"),
                    };
                    sql_err(code, msg).with_state(s)
                }
                Some(Cond::Code(n)) => {
                    sql_err(*n, "Unhandled user-defined exception condition").with_state("HY000")
                }
                _ => {
                    sql_err(1644, "Unhandled user-defined exception condition").with_state("45000")
                }
            }
        };
        for (item, v) in &sig.items {
            let v = self.eval(v)?;
            match item.as_str() {
                "MESSAGE_TEXT" => e.message = crate::expr::to_string(&v),
                "MYSQL_ERRNO" => {
                    let n = crate::expr::to_i64(&v);
                    if !(1..=65535).contains(&n) {
                        return Err(sql_err(
                            1231,
                            format!(
                                "Variable 'MYSQL_ERRNO' can't be set to the value of '{}'",
                                crate::expr::to_string(&v)
                            ),
                        ));
                    }
                    e.code = n as u16;
                }
                _ => {}
            }
        }
        if class(e.state) == "01" {
            return self.condition(e);
        }
        Err(e)
    }
}

/// Statements a function or trigger may not run (error 1422).
fn refuse_in_function(stmt: &Stmt) -> Result<(), SqlError> {
    use sqlparser::ast::Statement as S;
    let commits = match stmt {
        Stmt::Admin(Admin::Begin { .. } | Admin::Commit | Admin::Rollback) => true,
        Stmt::Sql(s) => matches!(
            s.as_ref(),
            S::StartTransaction { .. } | S::Commit { .. } | S::Rollback { .. }
        ),
        _ => false,
    };
    if commits {
        return Err(sql_err(
            1422,
            "Explicit or implicit commit is not allowed in stored function or trigger",
        ));
    }
    Ok(())
}

/// The EXECUTE privilege on a routine (1370).
fn check_execute(s: &Session, kind: ObjectKind, db: &str, name: &str) -> Result<(), SqlError> {
    if s.internal || s.account().has(Priv::EXECUTE, db) {
        return Ok(());
    }
    let _ = kind;
    Err(sql_err(
        1370,
        format!(
            "execute command denied to user '{}'@'{}' for routine '{db}.{name}'",
            s.user, s.account_host
        ),
    ))
}

/// Runs `f` in the program's database (its current database while it runs), as the
/// definer of a SQL SECURITY DEFINER program.
fn as_definer<T>(
    s: &mut Session,
    db: &str,
    def: &RoutineDef,
    f: impl FnOnce(&mut Session) -> T,
) -> T {
    let saved_db = s.current_db.replace(db.to_string());
    let r = as_definer_in(s, def, f);
    s.current_db = saved_db;
    r
}

fn as_definer_in<T>(s: &mut Session, def: &RoutineDef, f: impl FnOnce(&mut Session) -> T) -> T {
    if def.chars.invoker || (s.user == def.definer.0 && s.account_host == def.definer.1) {
        return f(s);
    }
    let user = std::mem::replace(&mut s.user, def.definer.0.clone());
    let host = std::mem::replace(&mut s.account_host, def.definer.1.clone());
    let r = f(s);
    s.user = user;
    s.account_host = host;
    r
}

/// Runs procedure `db.name` with argument values; returns the parameters' final values
/// (what OUT / INOUT arguments receive) and the definition.
pub(crate) fn call_procedure(
    s: &mut Session,
    db: &str,
    name: &str,
    args: Vec<Value>,
    targets: &[Option<Target>],
    client: Option<&mut dyn crate::Client>,
) -> Result<(Vec<Value>, RoutineDef), SqlError> {
    let cat = s.db.engine.catalog();
    let Some(obj) = cat.object(ObjectKind::Procedure, db, name) else {
        return Err(super::not_exist(ObjectKind::Procedure, db, name));
    };
    let def = decode(obj)?;
    let name = obj.name.clone();
    if args.len() != def.params.len() {
        return Err(sql_err(
            1318,
            format!(
                "Incorrect number of arguments for PROCEDURE {db}.{name}; expected {}, got {}",
                def.params.len(),
                args.len()
            ),
        ));
    }
    for (i, p) in def.params.iter().enumerate() {
        if is_out(p.mode) && targets.get(i).is_none_or(|t| t.is_none()) {
            return Err(sql_err(
                code::ER_SP_NOT_VAR_ARG,
                format!(
                    "OUT or INOUT argument {} for routine {db}.{name} is not a variable or NEW pseudo-variable in BEFORE trigger",
                    i + 1
                ),
            ));
        }
    }
    check_execute(s, ObjectKind::Procedure, db, &name)?;
    let key = format!("{db}.{}", name.to_lowercase());
    let depth = s.sp.procs.iter().filter(|k| **k == key).count() as i64;
    let max = s
        .get_var(None, "max_sp_recursion_depth")
        .map(|v| crate::expr::to_i64(&v))
        .unwrap_or(0);
    if depth > max {
        return Err(sql_err(
            1456,
            format!(
                "Recursive limit {max} (as set by the max_sp_recursion_depth variable) was exceeded for routine {name}"
            ),
        ));
    }
    let prog = program(ObjectKind::Procedure, &def)?;
    let args: Vec<Value> = def
        .params
        .iter()
        .zip(args)
        .map(|(p, v)| if p.mode == Mode::Out { Value::Null } else { v })
        .collect();
    s.sp.procs.push(key);
    s.sp.depth += 1;
    let n = def.params.len();
    let r = as_definer(s, db, &def, |s| {
        let mut it = Interp::new(s, &prog, args, client, Some(format!("{db}.{name}")));
        it.run().map(|_| it.param_values(n))
    });
    s.sp.depth -= 1;
    s.sp.procs.pop();
    Ok((r?, def))
}

/// Runs an event's body (`events::scheduler`) in `s`, a session of the event's definer in
/// the event's database, as a procedure without parameters whose result sets go nowhere.
pub(crate) fn run_event(s: &mut Session, prog: &Program) -> Result<(), SqlError> {
    s.sp.depth += 1;
    let r = Interp::new(s, prog, vec![], None, None).run().map(|_| ());
    s.sp.depth -= 1;
    r
}

/// `CALL name(args)` as a statement.
pub(crate) fn call_statement(
    s: &mut Session,
    db: Option<&str>,
    name: &str,
    args: &[String],
    client: Option<&mut dyn crate::Client>,
) -> Result<QueryResult, SqlError> {
    let db = match db.map(str::to_string).or_else(|| s.current_db.clone()) {
        Some(d) => d,
        None => return Err(sql_err(1046, "No database selected")),
    };
    let mut values = Vec::with_capacity(args.len());
    let mut targets = Vec::with_capacity(args.len());
    // A prepared CALL's placeholders are numbered across all its arguments: each argument
    // is evaluated with the parameter values of its own placeholders.
    let params = std::mem::take(&mut s.params);
    let mut next_param = 0;
    let out = s.call_out.take();
    for a in args {
        let t = a.trim();
        let var = t
            .strip_prefix('@')
            .filter(|v| !v.starts_with('@') && !v.is_empty())
            .map(|v| v.trim_matches('`').to_lowercase());
        let p = crate::parser::parse_one(&format!("SELECT {a}"))?;
        let target = match (&out, is_placeholder(t)) {
            (Some(o), true) => o.target(next_param),
            _ => var.map(Target::User),
        };
        targets.push(target);
        s.params = params
            .iter()
            .skip(next_param)
            .take(p.params)
            .cloned()
            .collect();
        next_param += p.params;
        let r = s.run_parsed(&p);
        s.params.clear();
        let v = match r? {
            QueryResult::Rows { rows, .. } => rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .unwrap_or(Value::Null),
            _ => Value::Null,
        };
        values.push(v);
    }
    s.warnings.clear();
    s.row_count = 0;
    let mut client = client;
    let (outs, def) = match &mut client {
        Some(c) => call_procedure(s, &db, name, values, &targets, Some(&mut **c))?,
        None => call_procedure(s, &db, name, values, &targets, None)?,
    };
    if let Some(r) = out_params_result(&def.params, &targets, &outs)? {
        if let Some(c) = client {
            if !c.out_params(s, r) {
                return Err(sql_err(1160, "Got an error writing communication packets"));
            }
        }
    }
    for ((p, t), v) in def.params.iter().zip(&targets).zip(outs) {
        if let (true, Some(Target::User(n))) = (is_out(p.mode), t) {
            s.user_vars.insert(n.clone(), v);
        }
    }
    let affected = s.row_count.max(0) as u64;
    Ok(QueryResult::Ok {
        affected_rows: affected,
        last_insert_id: 0,
        warnings: s.warnings.len() as u16,
        info: String::new(),
    })
}

/// Runs a stored function inside the statement that calls it: its transaction (`txn`) and
/// warnings are the statement's.
pub(crate) fn call_function(
    s: &mut Session,
    f: &FnRef,
    args: Vec<Value>,
    txn: &mut Txn,
    warnings: &mut Vec<SqlError>,
) -> Result<Value, SqlError> {
    let key = format!("{}.{}", f.db, f.name.to_lowercase());
    if s.sp.running.contains(&key) {
        return Err(sql_err(
            1424,
            "Recursive stored functions and triggers are not allowed",
        ));
    }
    check_execute(s, ObjectKind::Function, &f.db, &f.name)?;
    with_statement(s, txn, warnings, key, |s| {
        as_definer(s, &f.db, &f.def, |s| {
            let mut it = Interp::new(s, &f.prog, args, None, None);
            match it.run()? {
                Some(v) => Ok(convert(v, &f.ret)),
                None => Err(sql_err(
                    1321,
                    format!("FUNCTION {} ended without RETURN", f.name),
                )),
            }
        })
    })
}

/// Runs `f` on the session inside the enclosing statement: its transaction and warnings
/// are lent to the session meanwhile; `key` names the running function or trigger.
pub(crate) fn with_statement<T>(
    s: &mut Session,
    txn: &mut Txn,
    warnings: &mut Vec<SqlError>,
    key: String,
    f: impl FnOnce(&mut Session) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    let placeholder = s.db.engine.begin(Isolation::ReadCommitted);
    let outer = std::mem::replace(txn, placeholder);
    let saved_txn = s.txn.replace(outer);
    std::mem::swap(&mut s.warnings, warnings);
    let saved_params = std::mem::take(&mut s.params);
    let saved_rows = s.row_count;
    s.sp.in_stmt += 1;
    s.sp.depth += 1;
    s.sp.running.push(key);
    let r = f(s);
    s.sp.running.pop();
    s.sp.depth -= 1;
    s.sp.in_stmt -= 1;
    s.params = saved_params;
    s.row_count = saved_rows;
    std::mem::swap(&mut s.warnings, warnings);
    match std::mem::replace(&mut s.txn, saved_txn) {
        Some(t) => {
            let placeholder = std::mem::replace(txn, t);
            placeholder.rollback();
        }
        None => {
            return Err(sql_err(
                1422,
                "Explicit or implicit commit is not allowed in stored function or trigger",
            ))
        }
    }
    r
}

impl super::RoutineHost for Session {
    fn sequence(&mut self, f: crate::sequences::SeqFn, args: &[Value]) -> Result<Value, SqlError> {
        crate::sequences::call(self, f, args)
    }

    fn user_lock(
        &mut self,
        f: crate::user_locks::UserLockFn,
        name: Option<&str>,
        timeout: f64,
        interrupt: &std::sync::atomic::AtomicBool,
    ) -> Result<Value, SqlError> {
        self.db
            .user_locks
            .call(f, self.conn_id, name, timeout, interrupt)
    }

    fn fire_triggers(
        &mut self,
        _t: &onelog_engine::TableDef,
        trg: &[super::trigger::Trigger],
        row: RowCtx,
        txn: &mut Txn,
        warnings: &mut Vec<SqlError>,
    ) -> Result<Option<Vec<Value>>, SqlError> {
        let mut row = row;
        for t in trg {
            let key = format!("{}.{}", t.db, t.name);
            let r = with_statement(self, txn, warnings, key, |s| {
                let saved_db = s.current_db.replace(t.db.clone());
                let mut it = Interp::new(s, &t.prog, vec![], None, None);
                it.row = Some(row.clone());
                let r = it.run().map(|_| it.row.take());
                s.current_db = saved_db;
                r
            })?;
            if let Some(r) = r {
                row = r;
            }
        }
        Ok(row.new)
    }

    fn call_function(
        &mut self,
        f: &FnRef,
        args: Vec<Value>,
        txn: &mut Txn,
        warnings: &mut Vec<SqlError>,
    ) -> Result<Value, SqlError> {
        call_function(self, f, args, txn, warnings)
    }
}
