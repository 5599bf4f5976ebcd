//! Temporary tables: `CREATE TEMPORARY TABLE [IF NOT EXISTS] ... [LIKE | SELECT]`,
//! `DROP [TEMPORARY] TABLE`, and ALTER, TRUNCATE and RENAME of them.
//!
//! A session keeps its temporary tables' definitions here (never in the catalog); their
//! rows live in the engine under ids reserved for temporary tables (see the engine's
//! `ddl/temp.rs`), go through the session's transactions like any row (so ROLLBACK undoes
//! them, as with InnoDB temporary tables), and are never logged. The binder sees the
//! catalog with the session's temporary tables laid over it ([`Session::bind_catalog`]),
//! so a temporary table shadows a table of the same name for this session only. Other
//! sessions, SHOW TABLES and information_schema.TABLES do not see them (MariaDB 10.11).
//! They are dropped when the session ends; none survives a restart (the engine clears
//! what a crash left at open).
//!
//! As in MariaDB, CREATE and DROP TEMPORARY TABLE neither commit the transaction nor
//! reach the binlog; ALTER and TRUNCATE of a temporary table commit first, as they do for
//! any table, and are not logged either.

use std::collections::BTreeMap;
use std::sync::Arc;

use onelog_engine::{Catalog, Ddl, Engine, TableDef};
use onelog_types::{code, SqlError};
use parking_lot::Mutex;
use sqlparser::ast as sq;

use crate::executor::engine_err;
use crate::parser::Parsed;
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};

type Name = (String, String);

/// A session's temporary tables.
#[derive(Default)]
pub(crate) struct TempTables {
    engine: Option<Arc<Engine>>,
    tables: BTreeMap<Name, Arc<TableDef>>,
    /// Tables dropped while a transaction was open: its commit may still write rows under
    /// their ids, cleared again when the session ends.
    dropped: Vec<Arc<TableDef>>,
    /// The catalog the binder saw last: (the engine's catalog, with these tables over it).
    overlay: Mutex<Option<(Arc<Catalog>, Arc<Catalog>)>>,
}

impl TempTables {
    pub(crate) fn get(&self, db: &str, name: &str) -> Option<&Arc<TableDef>> {
        if self.tables.is_empty() {
            return None;
        }
        self.tables.get(&(db.to_string(), name.to_string()))
    }

    pub(crate) fn contains(&self, db: &str, name: &str) -> bool {
        self.get(db, name).is_some()
    }

    /// `base` with these tables in it, replacing tables of the same names.
    fn catalog(&self, base: Arc<Catalog>) -> Arc<Catalog> {
        if self.tables.is_empty() {
            return base;
        }
        let mut cached = self.overlay.lock();
        if let Some((b, o)) = &*cached {
            if Arc::ptr_eq(b, &base) {
                return o.clone();
            }
        }
        let mut cat = (*base).clone();
        for (k, t) in &self.tables {
            cat.tables.insert(k.clone(), t.clone());
        }
        let cat = Arc::new(cat);
        *cached = Some((base, cat.clone()));
        cat
    }

    fn insert(&mut self, engine: &Arc<Engine>, t: Arc<TableDef>) {
        self.engine.get_or_insert_with(|| engine.clone());
        self.tables.insert((t.db.clone(), t.name.clone()), t);
        *self.overlay.lock() = None;
    }

    fn remove(&mut self, db: &str, name: &str) -> Option<Arc<TableDef>> {
        let t = self.tables.remove(&(db.to_string(), name.to_string()));
        *self.overlay.lock() = None;
        t
    }
}

impl Drop for TempTables {
    fn drop(&mut self) {
        let Some(engine) = &self.engine else {
            return;
        };
        for t in self.tables.values().chain(&self.dropped) {
            if let Err(e) = engine.clear_temp_table(t) {
                onelog_types::note!("could not clear temporary table {}.{}: {e}", t.db, t.name);
            }
        }
    }
}

fn table_exists(name: &str) -> SqlError {
    sql_err(
        code::ER_TABLE_EXISTS_ERROR,
        format!("Table '{name}' already exists"),
    )
}

/// The table a DDL statement works on, when it is one table.
fn ddl_table(ddl: &Ddl) -> Option<(&str, &str)> {
    match ddl {
        Ddl::AlterTable { db, table, .. } | Ddl::TruncateTable { db, table } => {
            Some((db.as_str(), table.as_str()))
        }
        _ => None,
    }
}

impl Session {
    /// The catalog as this session's statements see it: with its temporary tables.
    /// (And with the table the open transaction creates, CREATE ... SELECT.)
    pub(crate) fn bind_catalog(&self) -> Arc<Catalog> {
        self.with_created_table(self.temp.catalog(self.db.engine.catalog()))
    }

    /// `read_only` and READ ONLY transactions refuse a write statement, unless every
    /// table it writes is a temporary table (as MariaDB).
    pub(crate) fn check_writes_allowed(&self, written: &[Name]) -> Result<(), SqlError> {
        if !written.is_empty() && written.iter().all(|(d, t)| self.temp.contains(d, t)) {
            return Ok(());
        }
        self.check_read_only()
    }

    /// Whether `db`.`name` is one of this session's temporary tables.
    pub(crate) fn is_temp_table(&self, db: &str, name: &str) -> bool {
        self.temp.contains(db, name)
    }

    /// Runs CREATE TEMPORARY TABLE, and DROP TABLE when it names a temporary table; None
    /// for any other statement.
    pub(crate) fn run_temp_statement(
        &mut self,
        s: &sq::Statement,
        p: &Parsed,
    ) -> Result<Option<QueryResult>, SqlError> {
        match s {
            sq::Statement::CreateTable(ct) if ct.temporary => self.create_temp(ct, p).map(Some),
            sq::Statement::CreateTable(ct) if ct.query.is_some() => {
                self.create_select(ct, p).map(Some)
            }
            sq::Statement::CreateTable(ct) if ct.like.is_some() => self.create_like_temp(ct, p),
            sq::Statement::Drop {
                object_type: sq::ObjectType::Table,
                if_exists,
                names,
                temporary,
                ..
            } => self.drop_temp(&p.text, names, *if_exists, *temporary),
            _ => Ok(None),
        }
    }

    fn create_temp(&mut self, ct: &sq::CreateTable, p: &Parsed) -> Result<QueryResult, SqlError> {
        let text = p.text.as_str();
        self.db.count_com("Com_create_table");
        let (db, name) = self.bind(text, |b| b.table_name(&ct.name))?;
        self.check_db(&db, Priv::CREATE_TMP)?;
        if !self.db.engine.catalog().has_database(&db) {
            return Err(sql_err(
                code::ER_BAD_DB_ERROR,
                format!("Unknown database '{db}'"),
            ));
        }
        if self.temp.contains(&db, &name) {
            if ct.or_replace {
                self.drop_one(&db, &name)?;
            } else if ct.if_not_exists {
                self.warnings.push(SqlError::note(
                    code::ER_TABLE_EXISTS_ERROR,
                    format!("Table '{name}' already exists"),
                ));
                return Ok(crate::session::ok(0, 0, self.warnings.len(), String::new()));
            } else {
                return Err(table_exists(&name));
            }
        }
        let Some(q) = &ct.query else {
            let mut plain = ct.clone();
            plain.temporary = false;
            plain.or_replace = false;
            let (ddl, warnings) =
                self.bind(text, |b| crate::binder::bind_create_table(&b, &plain))?;
            let Ddl::CreateTable { def, .. } = ddl else {
                return Err(crate::binder::unsupported("this CREATE TEMPORARY TABLE"));
            };
            let t = self.db.engine.create_temp_table(def).map_err(engine_err)?;
            let engine = self.db.engine.clone();
            self.temp.insert(&engine, t);
            self.warnings.extend(warnings);
            return Ok(crate::session::ok(0, 0, self.warnings.len(), String::new()));
        };
        // CREATE ... SELECT: the declared columns and the query's (one of the same name
        // fills the declared one), then INSERT ... SELECT into the new table.
        let (def, warnings, insert_cols) = self.create_select_table(ct, q, text)?;
        let t = self.db.engine.create_temp_table(def).map_err(engine_err)?;
        let engine = self.db.engine.clone();
        self.temp.insert(&engine, t);
        self.warnings.extend(warnings);
        let dup = crate::create_select::duplicates_of(text);
        let ins = Self::filling_insert(&db, &name, insert_cols, q, dup)?;
        match self.run_built(&ins, p) {
            Ok(QueryResult::Ok {
                affected_rows,
                info,
                ..
            }) => Ok(crate::session::ok(
                affected_rows,
                0,
                self.warnings.len(),
                info,
            )),
            Ok(other) => Ok(other),
            Err(e) => {
                // As MariaDB: a CREATE ... SELECT that fails leaves no table.
                self.drop_one(&db, &name)?;
                Err(e)
            }
        }
    }

    /// CREATE TABLE ... LIKE a temporary table: logged as the CREATE TABLE it amounts to
    /// (as MariaDB does), since replicas and recovery do not have the temporary table.
    fn create_like_temp(
        &mut self,
        ct: &sq::CreateTable,
        p: &Parsed,
    ) -> Result<Option<QueryResult>, SqlError> {
        let Some(
            sq::CreateTableLikeKind::Parenthesized(like) | sq::CreateTableLikeKind::Plain(like),
        ) = &ct.like
        else {
            return Ok(None);
        };
        let (sdb, sname) = self.bind(&p.text, |b| b.table_name(&like.name))?;
        if !self.temp.contains(&sdb, &sname) {
            return Ok(None);
        }
        let (ddl, warnings) = self.bind(&p.text, |b| crate::binder::bind_create_table(&b, ct))?;
        let Ddl::CreateTable {
            def, if_not_exists, ..
        } = &ddl
        else {
            return Ok(None);
        };
        let mut sql = crate::show::create_table_sql(def, def.auto_increment_start);
        if *if_not_exists {
            sql.replace_range(.."CREATE TABLE".len(), "CREATE TABLE IF NOT EXISTS");
        }
        if def.db != self.current_db.clone().unwrap_or_default() {
            let qualified = format!("`{}`.`{}`", def.db.replace('`', "``"), def.name);
            sql = sql.replacen(&format!("`{}`", def.name), &qualified, 1);
        }
        self.run_ddl(&sql, ddl, warnings).map(Some)
    }

    /// Drops one temporary table and its rows.
    fn drop_one(&mut self, db: &str, name: &str) -> Result<(), SqlError> {
        let Some(t) = self.temp.remove(db, name) else {
            return Ok(());
        };
        if self.txn.is_some() {
            self.temp.dropped.push(t.clone());
        }
        self.db.engine.clear_temp_table(&t).map_err(engine_err)
    }

    /// DROP [TEMPORARY] TABLE. DROP TEMPORARY TABLE drops temporary tables only; DROP
    /// TABLE drops the temporary tables it names and leaves the rest (None when there is
    /// none) to the catalog's DROP TABLE, logged as MariaDB logs it.
    fn drop_temp(
        &mut self,
        text: &str,
        names: &[sq::ObjectName],
        if_exists: bool,
        temporary: bool,
    ) -> Result<Option<QueryResult>, SqlError> {
        let mut tables = Vec::new();
        for n in names {
            tables.push(self.bind(text, |b| b.table_name(n))?);
        }
        let (temp, rest): (Vec<Name>, Vec<Name>) = tables
            .into_iter()
            .partition(|(d, t)| self.temp.contains(d, t));
        if temp.is_empty() && !temporary {
            return Ok(None);
        }
        self.db.count_com("Com_drop_table");
        if temporary && !rest.is_empty() {
            let missing: Vec<String> = rest.iter().map(|(d, t)| format!("{d}.{t}")).collect();
            if !if_exists {
                return Err(sql_err(
                    code::ER_BAD_TABLE_ERROR,
                    format!("Unknown table '{}'", missing.join(",")),
                ));
            }
            for m in missing {
                self.warnings.push(SqlError::note(
                    code::ER_BAD_TABLE_ERROR,
                    format!("Unknown table '{m}'"),
                ));
            }
        }
        if !temporary && !rest.is_empty() {
            // The catalog's tables first, as a statement of their own (what replicas get).
            let list: Vec<String> = rest
                .iter()
                .map(|(d, t)| format!("`{}`.`{}`", d.replace('`', "``"), t.replace('`', "``")))
                .collect();
            let sql = format!(
                "DROP TABLE {}{} /* generated by server */",
                if if_exists { "IF EXISTS " } else { "" },
                list.join(",")
            );
            let ddl = Ddl::DropTables {
                tables: rest,
                if_exists,
            };
            self.run_ddl(&sql, ddl, vec![])?;
        }
        for (d, t) in &temp {
            self.drop_one(d, t)?;
        }
        Ok(Some(crate::session::ok(
            0,
            0,
            self.warnings.len(),
            String::new(),
        )))
    }

    /// ALTER TABLE, TRUNCATE TABLE and RENAME TABLE of temporary tables (None: the
    /// statement is not about a temporary table).
    pub(crate) fn run_temp_ddl(&mut self, ddl: &mut Ddl) -> Result<Option<QueryResult>, SqlError> {
        if self.temp.tables.is_empty() {
            return Ok(None);
        }
        if let Ddl::RenameTables { renames } = ddl {
            if !renames.iter().any(|((d, t), _)| self.temp.contains(d, t)) {
                return Ok(None);
            }
            return self.rename_temp(renames).map(Some);
        }
        let Some((db, table)) = ddl_table(ddl) else {
            return Ok(None);
        };
        let Some(t) = self.temp.get(db, table).cloned() else {
            return Ok(None);
        };
        self.check_server_read_only()?;
        self.implicit_commit()?;
        let ddl = std::mem::replace(ddl, Ddl::LogOnly);
        match ddl {
            Ddl::TruncateTable { .. } => {
                self.db.count_com("Com_truncate");
                self.db.engine.clear_temp_table(&t).map_err(engine_err)?;
                Ok(Some(crate::session::ok(
                    0,
                    0,
                    self.warnings.len(),
                    String::new(),
                )))
            }
            Ddl::AlterTable { ops, .. } => {
                self.db.count_com("Com_alter_table");
                let mode = self.sql_mode();
                let strict =
                    mode.contains("STRICT_TRANS_TABLES") || mode.contains("STRICT_ALL_TABLES");
                let c = Arc::new(crate::alter::AlterConverter::new(strict, &t.db, &t.name));
                let convert = Some(onelog_engine::Converter(c.clone()));
                let r = self.db.engine.alter_temp_table(&t, ops, convert);
                self.warnings.extend(c.take_warnings());
                let (new, affected) = r.map_err(engine_err)?;
                let engine = self.db.engine.clone();
                self.temp.insert(&engine, new);
                let n = affected.unwrap_or(0);
                let info = format!(
                    "Records: {n}  Duplicates: 0  Warnings: {}",
                    self.warnings.len()
                );
                Ok(Some(crate::session::ok(n, 0, self.warnings.len(), info)))
            }
            _ => unreachable!("ddl_table names ALTER and TRUNCATE only"),
        }
    }

    /// RENAME TABLE / ALTER TABLE ... RENAME of temporary tables (every table renamed must
    /// be one).
    fn rename_temp(&mut self, renames: &[(Name, Name)]) -> Result<QueryResult, SqlError> {
        if let Some(((d, t), _)) = renames
            .iter()
            .find(|(f, _)| !self.temp.contains(&f.0, &f.1))
        {
            return Err(crate::binder::unsupported(&format!(
                "RENAME TABLE of temporary and other tables together ({d}.{t})"
            )));
        }
        for ((fd, ft), (td, tt)) in renames {
            if self.temp.contains(td, tt) {
                return Err(table_exists(tt));
            }
            if !self.db.engine.catalog().has_database(td) {
                return Err(sql_err(
                    code::ER_BAD_DB_ERROR,
                    format!("Unknown database '{td}'"),
                ));
            }
            let t = self.temp.remove(fd, ft).expect("checked above");
            let mut nt = (*t).clone();
            nt.db = td.clone();
            nt.name = tt.clone();
            let engine = self.db.engine.clone();
            self.temp.insert(&engine, Arc::new(nt));
        }
        Ok(crate::session::ok(0, 0, self.warnings.len(), String::new()))
    }
}
