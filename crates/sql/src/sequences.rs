//! Sequences as MariaDB 10.11 has them: CREATE / ALTER / DROP SEQUENCE, SHOW CREATE
//! SEQUENCE, and NEXTVAL (`NEXT VALUE FOR`), LASTVAL (`PREVIOUS VALUE FOR`) and SETVAL.
//!
//! A sequence is a table of MariaDB's eight sequence columns with one row (see the engine's
//! `sequence.rs` for how values are reserved and the row is written and logged). CREATE and
//! ALTER SEQUENCE are DDL logged as their statement; NEXTVAL and SETVAL write the row in a
//! transaction of their own when they reserve values, outside the caller's transaction
//! (a ROLLBACK does not give values back, as in MariaDB).

use std::collections::HashMap;

use onelog_engine::{seq_used as used, AutoInc, Ddl, NextValue, SeqDef, SetValue, TableDef};
use onelog_types::{code, SqlError, Value};

use crate::parser::sequence::{SeqOptions, SeqStmt};
use crate::parser::{Parsed, Stmt};
use crate::users::Priv;
use crate::{sql_err, QueryResult, Session};

/// The sequence functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeqFn {
    Next,
    Last,
    Set,
}

/// The last value NEXTVAL gave this session, per sequence (`db`, `name`) -> (table id,
/// value); LASTVAL of a sequence dropped and created again since is NULL.
pub(crate) type LastValues = HashMap<(String, String), (u32, i64)>;

/// MariaDB's sequence table, as SHOW CREATE TABLE shows it.
const COLUMNS: &str = "`next_not_cached_value` bigint(21) NOT NULL, \
    `minimum_value` bigint(21) NOT NULL, \
    `maximum_value` bigint(21) NOT NULL, \
    `start_value` bigint(21) NOT NULL COMMENT 'start value when sequences is created or value if RESTART is used', \
    `increment` bigint(21) NOT NULL COMMENT 'increment value', \
    `cache_size` bigint(21) unsigned NOT NULL, \
    `cycle_option` tinyint(1) unsigned NOT NULL COMMENT '0 if no cycles are allowed, 1 if the sequence should begin a new cycle when maximum_value is passed', \
    `cycle_count` bigint(21) NOT NULL COMMENT 'How many cycles have been done'";

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

fn out_of_range(db: &str, name: &str) -> SqlError {
    sql_err(
        4085,
        format!("Sequence '{db}.{name}' has out of range value for options"),
    )
}

fn run_out(db: &str, name: &str) -> SqlError {
    sql_err(4084, format!("Sequence '{db}.{name}' has run out"))
}

fn not_a_sequence(db: &str, name: &str, drop: bool) -> SqlError {
    sql_err(
        if drop { 4090 } else { 4089 },
        format!("'{db}.{name}' is not a SEQUENCE"),
    )
}

/// 1031: what MariaDB's SEQUENCE engine refuses (UPDATE, DELETE, TRUNCATE).
pub(crate) fn no_such_option(db: &str, name: &str) -> SqlError {
    sql_err(
        1031,
        format!("Storage engine SEQUENCE of the table `{db}`.`{name}` doesn't have this option"),
    )
}

/// 4086: ALTER TABLE of a sequence (its columns are fixed).
pub(crate) fn invalid_structure(db: &str, name: &str) -> SqlError {
    sql_err(
        4086,
        format!("Sequence '{db}.{name}' table structure is invalid (Wrong number of columns)"),
    )
}

/// An INSERT into a sequence replaces its row: the row must hold consistent options
/// (4085), as MariaDB's SEQUENCE engine checks.
pub(crate) fn check_row(t: &TableDef, row: &[Value]) -> Result<(), SqlError> {
    let ok = SeqDef::from_row(row)
        .map(|mut d| d.check_and_adjust(!0, false, AutoInc::default()))
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(out_of_range(&t.db, &t.name))
    }
}

/// UPDATE and DELETE may not change a sequence's row (1031).
pub(crate) fn refuse_change(s: &Session, tables: &[(String, String)]) -> Result<(), SqlError> {
    let cat = s.db.engine.catalog();
    for (d, t) in tables {
        if cat.table(d, t).is_some_and(|t| t.sequence) {
            return Err(no_such_option(d, t));
        }
    }
    Ok(())
}

fn auto_inc(s: &Session) -> AutoInc {
    let get = |name: &str| {
        s.get_var(Some(crate::parser::Scope::Global), name)
            .map(|v| crate::expr::to_i64(&v))
            .unwrap_or(1)
    };
    AutoInc {
        increment: get("auto_increment_increment"),
        offset: get("auto_increment_offset"),
    }
}

fn engine_err(e: onelog_engine::EngineError) -> SqlError {
    crate::executor::engine_err(e)
}

/// Runs NEXTVAL / LASTVAL / SETVAL for session `s`: `args` are the sequence's database
/// and name, then SETVAL's value, is_used and round.
pub(crate) fn call(s: &mut Session, f: SeqFn, args: &[Value]) -> Result<Value, SqlError> {
    let text = |i: usize| args.get(i).map(crate::expr::to_string).unwrap_or_default();
    let (db, name) = (text(0), text(1));
    let Some(t) = s.db.engine.catalog().table(&db, &name).cloned() else {
        return Err(sql_err(4091, format!("Unknown SEQUENCE: '{name}'")));
    };
    if !t.sequence {
        return Err(not_a_sequence(&db, &name, false));
    }
    let key = (db.clone(), name.clone());
    match f {
        SeqFn::Last => {
            s.check_tables(std::slice::from_ref(&key), Priv::SELECT)?;
            Ok(match s.seq_last.get(&key) {
                Some((id, v)) if *id == t.id => Value::Int(*v),
                _ => Value::Null,
            })
        }
        SeqFn::Next => {
            s.check_tables(std::slice::from_ref(&key), Priv::INSERT)?;
            s.check_read_only()?;
            match s
                .db
                .engine
                .sequence_next(&t, auto_inc(s))
                .map_err(engine_err)?
            {
                NextValue::Value(v) => {
                    s.seq_last.insert(key, (t.id, v));
                    Ok(Value::Int(v))
                }
                NextValue::RunOut => Err(run_out(&db, &name)),
            }
        }
        SeqFn::Set => {
            s.check_tables(std::slice::from_ref(&key), Priv::INSERT)?;
            s.check_read_only()?;
            let num = |i: usize, default: i64| args.get(i).map_or(default, crate::expr::to_i64);
            let (value, is_used, round) = (num(2, 0), num(3, 1) != 0, num(4, 0));
            let r =
                s.db.engine
                    .sequence_set(&t, value, round, is_used, auto_inc(s))
                    .map_err(engine_err)?;
            match r {
                SetValue::Set => Ok(Value::Int(value)),
                SetValue::Below => Ok(Value::Null),
                SetValue::RunOut => Err(run_out(&db, &name)),
            }
        }
    }
}

/// The sequence's table: MariaDB's columns, `ENGINE` and `COMMENT` as given, bound in
/// `env` (a session's, or recovery's).
fn table_def(
    env: &dyn crate::binder::BindEnv,
    db: &str,
    name: &str,
    engine: Option<&str>,
    comment: Option<&str>,
) -> Result<TableDef, SqlError> {
    let mut sql = format!("CREATE TABLE {}.{} ({COLUMNS})", quote(db), quote(name));
    sql.push_str(&format!(" ENGINE={}", engine.unwrap_or("InnoDB")));
    if let Some(c) = comment {
        sql.push_str(&format!(" COMMENT='{}'", c.replace('\'', "''")));
    }
    let bad = || sql_err(code::ER_UNKNOWN_ERROR, "sequence table definition");
    let Parsed {
        stmt: Stmt::Sql(stmt),
        ..
    } = crate::parser::parse_one(&sql)?
    else {
        return Err(bad());
    };
    let sqlparser::ast::Statement::CreateTable(ct) = *stmt else {
        return Err(bad());
    };
    let b = crate::binder::Binder::new(env, &sql);
    match crate::binder::bind_create_table(&b, &ct)? {
        (Ddl::CreateTable { mut def, .. }, _) => {
            def.sequence = true;
            Ok(def)
        }
        _ => Err(bad()),
    }
}

/// The catalog change a logged sequence statement makes, for recovery (`db`: the
/// statement's current database).
pub(crate) fn replay_ddl(
    stmt: &SeqStmt,
    db: &str,
    engine: &onelog_engine::Engine,
) -> Result<Ddl, SqlError> {
    let current = (!db.is_empty()).then(|| db.to_string());
    let name_db = |given: &Option<String>| {
        given
            .clone()
            .or(current.clone())
            .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected"))
    };
    let env = crate::database::PlainEnv {
        db: current.clone(),
        catalog: engine.catalog(),
    };
    let ai = AutoInc::default();
    match stmt {
        SeqStmt::Create {
            or_replace,
            if_not_exists,
            name,
            options,
            engine: e,
            comment,
            ..
        } => {
            let d = name_db(&name.0)?;
            Ok(Ddl::CreateSequence {
                row: first_row(options, &d, &name.1, ai)?,
                def: table_def(&env, &d, &name.1, e.as_deref(), comment.as_deref())?,
                or_replace: *or_replace,
                if_not_exists: *if_not_exists,
            })
        }
        SeqStmt::Alter { name, options, .. } => {
            let d = name_db(&name.0)?;
            let cat = engine.catalog();
            let t = cat
                .table(&d, &name.1)
                .ok_or_else(|| sql_err(4091, format!("Unknown SEQUENCE: '{}'", name.1)))?;
            let cur = engine.sequence_row(t).map_err(engine_err)?;
            let row = altered_row(&cur, options, ai).ok_or_else(|| out_of_range(&d, &name.1))?;
            Ok(Ddl::SetSequenceRow {
                db: d,
                table: name.1.clone(),
                row,
            })
        }
        SeqStmt::Drop {
            if_exists, names, ..
        } => {
            let tables = names
                .iter()
                .map(|n| Ok((name_db(&n.0)?, n.1.clone())))
                .collect::<Result<Vec<_>, SqlError>>()?;
            Ok(Ddl::DropTables {
                tables,
                if_exists: *if_exists,
            })
        }
        SeqStmt::ShowCreate(_) => Err(sql_err(code::ER_UNKNOWN_ERROR, "not a DDL statement")),
    }
}

/// The first row of a new sequence with `options` (4085 when they contradict each other).
fn first_row(o: &SeqOptions, db: &str, name: &str, ai: AutoInc) -> Result<SeqDef, SqlError> {
    let mut def = o.def.clone();
    def.round = 0;
    if !def.check_and_adjust(o.used, true, ai) {
        return Err(out_of_range(db, name));
    }
    Ok(def)
}

/// CREATE TABLE ... LIKE a sequence: a new sequence with default options (MariaDB).
pub(crate) fn like_ddl(def: TableDef, if_not_exists: bool) -> Ddl {
    let mut row = SeqDef::default();
    row.check_and_adjust(0, true, AutoInc::default());
    Ddl::CreateSequence {
        def,
        row,
        or_replace: false,
        if_not_exists,
    }
}

/// ALTER SEQUENCE's new row: the options given over the current row (MariaDB's
/// `Sql_cmd_alter_sequence::execute`).
fn altered_row(cur: &SeqDef, o: &SeqOptions, ai: AutoInc) -> Option<SeqDef> {
    // The cycle count starts again (MariaDB builds the new row from the statement's).
    let mut new = o.def.clone();
    new.reserved_until = cur.reserved_until;
    new.round = 0;
    if o.used & used::INCREMENT == 0 {
        new.increment = cur.increment;
    }
    if o.used & used::MIN == 0 {
        new.min_value = cur.min_value;
    }
    if o.used & used::MAX == 0 {
        new.max_value = cur.max_value;
    }
    if o.used & used::START == 0 {
        new.start = cur.start;
    }
    if o.used & used::CACHE == 0 {
        new.cache = cur.cache;
    }
    if o.used & used::CYCLE == 0 {
        new.cycle = cur.cycle;
    }
    if o.used & used::RESTART != 0 {
        new.reserved_until = if o.used & used::RESTART_VALUE != 0 {
            o.restart
        } else {
            new.start
        };
    }
    new.check_and_adjust(!0, false, ai).then_some(new)
}

fn database(s: &Session, given: &Option<String>) -> Result<String, SqlError> {
    match given {
        Some(d) => Ok(d.clone()),
        None => s
            .current_db
            .clone()
            .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected")),
    }
}

/// Runs a sequence statement.
pub(crate) fn run(s: &mut Session, stmt: &SeqStmt, text: &str) -> Result<QueryResult, SqlError> {
    match stmt {
        SeqStmt::Create {
            or_replace,
            temporary,
            if_not_exists,
            name,
            options,
            engine,
            comment,
        } => {
            if *temporary {
                return Err(sql_err(
                    code::ER_NOT_SUPPORTED_YET,
                    "This version of MariaDB doesn't yet support 'CREATE TEMPORARY SEQUENCE'",
                ));
            }
            if *or_replace && *if_not_exists {
                return Err(sql_err(
                    1221,
                    "Incorrect usage of OR REPLACE and IF NOT EXISTS",
                ));
            }
            let db = database(s, &name.0)?;
            s.db.count_com("Com_create_sequence");
            let row = first_row(options, &db, &name.1, auto_inc(s))?;
            let def = s.bind(text, |b| {
                table_def(b.env(), &db, &name.1, engine.as_deref(), comment.as_deref())
            })?;
            let ddl = Ddl::CreateSequence {
                def,
                row,
                or_replace: *or_replace,
                if_not_exists: *if_not_exists,
            };
            s.run_ddl(text, ddl, vec![])
        }
        SeqStmt::Alter {
            if_exists,
            name,
            options,
        } => {
            let db = database(s, &name.0)?;
            s.db.count_com("Com_alter_sequence");
            let Some(t) = s.db.engine.catalog().table(&db, &name.1).cloned() else {
                if *if_exists {
                    s.warnings.push(SqlError::note(
                        4091,
                        format!("Unknown SEQUENCE: '{db}.{}'", name.1),
                    ));
                    return Ok(crate::session::ok(0, 0, s.warnings.len(), String::new()));
                }
                return Err(sql_err(4091, format!("Unknown SEQUENCE: '{}'", name.1)));
            };
            if !t.sequence {
                return Err(not_a_sequence(&db, &name.1, false));
            }
            let engine = s.db.engine.clone();
            let ai = auto_inc(s);
            engine.sequence_exclusive(t.id, || {
                let cur = engine.sequence_row(&t).map_err(engine_err)?;
                let row =
                    altered_row(&cur, options, ai).ok_or_else(|| out_of_range(&db, &t.name))?;
                let ddl = Ddl::SetSequenceRow {
                    db: db.clone(),
                    table: t.name.clone(),
                    row,
                };
                s.run_ddl(text, ddl, vec![])
            })
        }
        SeqStmt::Drop {
            temporary,
            if_exists,
            names,
        } => {
            s.db.count_com("Com_drop_sequence");
            let cat = s.db.engine.catalog();
            let mut tables = Vec::new();
            let mut missing = Vec::new();
            for n in names {
                let db = database(s, &n.0)?;
                match cat.table(&db, &n.1) {
                    Some(t) if t.sequence => tables.push((db, n.1.clone())),
                    Some(_) => return Err(not_a_sequence(&db, &n.1, true)),
                    None => missing.push(format!("{db}.{}", n.1)),
                }
            }
            if *temporary {
                // No temporary sequences exist.
                missing.extend(tables.drain(..).map(|(d, t)| format!("{d}.{t}")));
            }
            if !missing.is_empty() {
                let e =
                    SqlError::from_code(4091, format!("Unknown SEQUENCE: '{}'", missing.join(",")));
                if !*if_exists {
                    return Err(e);
                }
                s.warnings.push(SqlError::note(e.code, e.message));
            }
            if tables.is_empty() {
                return Ok(crate::session::ok(0, 0, s.warnings.len(), String::new()));
            }
            let warnings = std::mem::take(&mut s.warnings);
            let ddl = Ddl::DropTables {
                tables,
                if_exists: *if_exists,
            };
            s.run_ddl(text, ddl, warnings)
        }
        SeqStmt::ShowCreate(name) => {
            let db = database(s, &name.0)?;
            let cat = s.db.engine.catalog();
            let Some(t) = cat.table(&db, &name.1) else {
                return Err(sql_err(
                    code::ER_NO_SUCH_TABLE,
                    format!("Table '{db}.{}' doesn't exist", name.1),
                ));
            };
            if !t.sequence {
                return Err(not_a_sequence(&db, &name.1, false));
            }
            s.check_table_privs(&[(db.clone(), t.name.clone())], Priv::SELECT.0)?;
            let row = s.db.engine.sequence_row(t).map_err(engine_err)?;
            let b = |x: &str| Value::Bytes(x.as_bytes().to_vec());
            crate::show::result(
                s,
                &["Table", "Create Table"],
                &[],
                vec![vec![b(&t.name), b(&create_sql(t, &row))]],
                &None,
            )
        }
    }
}

/// SHOW CREATE TABLE of a sequence: its fixed columns, as MariaDB shows them.
pub(crate) fn create_table_sql(t: &TableDef) -> String {
    let columns = COLUMNS.replace(", `", ",\n  `");
    format!(
        "CREATE TABLE {} (\n  {columns}\n) ENGINE={} SEQUENCE=1{}",
        quote(&t.name),
        engine_name(t),
        comment_option(t)
    )
}

fn engine_name(t: &TableDef) -> &str {
    if t.engine_name.is_empty() {
        "InnoDB"
    } else {
        &t.engine_name
    }
}

/// ` COMMENT='...'` when the sequence has a comment.
fn comment_option(t: &TableDef) -> String {
    if t.comment.is_empty() {
        String::new()
    } else {
        format!(" COMMENT='{}'", t.comment.replace('\'', "''"))
    }
}

/// SHOW CREATE SEQUENCE's text.
pub(crate) fn create_sql(t: &TableDef, row: &SeqDef) -> String {
    format!(
        "CREATE SEQUENCE {} start with {} minvalue {} maxvalue {} increment by {} cache {} {} ENGINE={}{}",
        quote(&t.name),
        row.start,
        row.min_value,
        row.max_value,
        row.increment,
        row.cache,
        if row.cycle { "cycle" } else { "nocycle" },
        engine_name(t),
        comment_option(t)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alter_keeps_what_is_not_given_and_restarts() {
        let mut cur = SeqDef::default();
        assert!(cur.check_and_adjust(0, true, AutoInc::default()));
        cur.reserved_until = 1001;
        let o = SeqOptions {
            def: SeqDef {
                increment: 3,
                ..SeqDef::default()
            },
            used: used::INCREMENT,
            restart: 0,
        };
        let new = altered_row(&cur, &o, AutoInc::default()).unwrap();
        assert_eq!(
            (new.increment, new.reserved_until, new.cache),
            (3, 1001, 1000)
        );
        let o = SeqOptions {
            used: used::RESTART | used::RESTART_VALUE,
            restart: 50,
            ..SeqOptions::default()
        };
        let new = altered_row(&cur, &o, AutoInc::default()).unwrap();
        assert_eq!(new.reserved_until, 50);
        let o = SeqOptions {
            def: SeqDef {
                max_value: 0,
                ..SeqDef::default()
            },
            used: used::MAX,
            restart: 0,
        };
        assert!(altered_row(&cur, &o, AutoInc::default()).is_none());
    }
}
