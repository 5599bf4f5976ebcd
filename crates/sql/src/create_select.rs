//! `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [(declared columns and keys)] [table
//! options] [IGNORE | REPLACE] [AS] SELECT ...` for tables of the catalog (temporary tables:
//! `temp_tables.rs`, which shares the column derivation here).
//!
//! As in MariaDB 10.11: the table's columns are the declared ones, then the query's (a
//! query column of a declared column's name fills that column); a query column that is a
//! table's column keeps its NOT NULL, default, ON UPDATE and comment (not AUTO_INCREMENT: a
//! NOT NULL auto-increment column gets the type's zero as default), other query columns
//! are plain columns of the result's type. The statement commits the transaction before
//! it, then runs as one transaction of its own: the engine creates the table in it
//! (`Txn::create_table`), the INSERT ... SELECT fills it, and the commit logs MariaDB's
//! group `GTID(DDL) QUERY("CREATE TABLE ..." with the full column list) rows XID` and
//! makes the table and its rows durable in one write. On any error nothing is left: no
//! table, no rows, nothing logged. A replica (`Session::create_table_in_group`) and
//! recovery (`DdlReplayer`, `engine/recovery.rs`) apply such a group the same way.

use std::sync::Arc;

use onelog_engine::{Catalog, ColumnDef, Ddl, TableDef};
use onelog_types::{code, SqlError};
use sqlparser::ast as sq;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Whitespace};

use crate::executor::engine_err;
use crate::parser::Parsed;
use crate::session::Session;
use crate::{sql_err, QueryResult, ResultColumn};

/// What CREATE ... SELECT does with a row whose key is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Duplicates {
    Error,
    Ignore,
    Replace,
}

fn is_word(t: &TokenWithSpan, k: &str) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
}

/// The index of `IGNORE` or `REPLACE` right before the query of `CREATE ... TABLE ...
/// SELECT` (at parenthesis depth 0, after the TABLE keyword), if there is one.
fn duplicates_token(toks: &[TokenWithSpan]) -> Option<(usize, Duplicates)> {
    let words: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect();
    if !words.first().is_some_and(|&i| is_word(&toks[i], "CREATE")) {
        return None;
    }
    let table = words.iter().position(|&i| is_word(&toks[i], "TABLE"))?;
    let mut depth = 0i32;
    for (n, &i) in words.iter().enumerate().skip(table + 1) {
        match toks[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        if depth != 0 {
            continue;
        }
        let mode = if is_word(&toks[i], "IGNORE") {
            Duplicates::Ignore
        } else if is_word(&toks[i], "REPLACE") {
            Duplicates::Replace
        } else {
            continue;
        };
        let next = words.get(n + 1).map(|&j| &toks[j]);
        if next.is_some_and(|t| {
            is_word(t, "SELECT")
                || is_word(t, "AS")
                || is_word(t, "WITH")
                || t.token == Token::LParen
        }) {
            return Some((i, mode));
        }
    }
    None
}

/// Blanks the `IGNORE` / `REPLACE` of CREATE ... SELECT, which sqlparser does not know
/// (the statement's text keeps it: see [`duplicates_of`]).
pub(crate) fn rewrite_duplicates(toks: &mut [TokenWithSpan]) {
    if let Some((i, _)) = duplicates_token(toks) {
        toks[i] = TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
    }
}

/// The duplicate handling a CREATE ... SELECT statement's text asks for.
pub(crate) fn duplicates_of(text: &str) -> Duplicates {
    let d = sqlparser::dialect::MySqlDialect {};
    match sqlparser::tokenizer::Tokenizer::new(&d, text).tokenize_with_location() {
        Ok(toks) => duplicates_token(&toks).map_or(Duplicates::Error, |(_, m)| m),
        Err(_) => Duplicates::Error,
    }
}

/// The column CREATE ... SELECT makes of result column `c` (see the module documentation).
pub(crate) fn column_of(cat: &Catalog, c: &ResultColumn) -> ColumnDef {
    let mut col = crate::views::column_of_result(c.name.clone(), c);
    if c.org_name.is_empty() || c.org_table.is_empty() || c.null_type {
        return col;
    }
    let Some(src) = cat
        .table(&c.db, &c.org_table)
        .and_then(|t| t.columns.iter().find(|x| x.name == c.org_name))
    else {
        return col;
    };
    if src.ty != c.ty {
        return col;
    }
    col.default = src.default.clone();
    col.display_width = src.display_width;
    col.num = src.num;
    col.default_now = src.default_now;
    col.default_expr = src.default_expr.clone();
    col.on_update_now = src.on_update_now;
    col.comment = src.comment.clone();
    if src.auto_increment && !col.nullable && col.default.is_none() {
        col.default = Some(onelog_engine::catalog::implicit_default(&col));
    }
    col
}

impl Session {
    /// The table of CREATE ... SELECT: the declared columns, then the query's (see the
    /// module documentation), with the declared keys, which may name either. Also returns
    /// the warnings of binding it and the filling INSERT's column list.
    pub(crate) fn create_select_table(
        &mut self,
        ct: &sq::CreateTable,
        q: &sq::Query,
        text: &str,
    ) -> Result<(TableDef, Vec<SqlError>, Vec<sq::ObjectName>), SqlError> {
        let sel = self.bind(text, |b| b.bind_query(q))?;
        let cat = self.bind_catalog();
        let mut extra = Vec::new();
        let mut insert_cols = Vec::new();
        for (i, c) in sel.columns.iter().enumerate() {
            if sel.columns[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(sql_err(
                    code::ER_DUP_FIELDNAME,
                    format!("Duplicate column name '{}'", c.name),
                ));
            }
            extra.push(column_of(&cat, c));
            insert_cols.push(sq::ObjectName::from(vec![sq::Ident::with_quote(
                '`',
                c.name.clone(),
            )]));
        }
        let mut plain = ct.clone();
        plain.temporary = false;
        plain.or_replace = false;
        plain.if_not_exists = false;
        plain.query = None;
        let (ddl, warnings) = self.bind(text, |b| {
            crate::binder::bind_create_table_with(&b, &plain, extra)
        })?;
        let Ddl::CreateTable { def, .. } = ddl else {
            return Err(crate::binder::unsupported("this CREATE TABLE ... SELECT"));
        };
        Ok((def, warnings, insert_cols))
    }

    /// The INSERT ... SELECT that fills table `db`.`name`.
    pub(crate) fn filling_insert(
        db: &str,
        name: &str,
        columns: Vec<sq::ObjectName>,
        q: &sq::Query,
        dup: Duplicates,
    ) -> Result<sq::Statement, SqlError> {
        let parsed = crate::parser::parse_one(&format!(
            "INSERT INTO `{}`.`{}` () SELECT 1",
            db.replace('`', "``"),
            name.replace('`', "``")
        ))?;
        let crate::parser::Stmt::Sql(ins) = parsed.stmt else {
            return Err(crate::binder::unsupported("this CREATE TABLE ... SELECT"));
        };
        let sq::Statement::Insert(mut ins) = *ins else {
            return Err(crate::binder::unsupported("this CREATE TABLE ... SELECT"));
        };
        ins.columns = columns;
        ins.source = Some(Box::new(q.clone()));
        ins.ignore = dup == Duplicates::Ignore;
        ins.replace_into = dup == Duplicates::Replace;
        Ok(sq::Statement::Insert(ins))
    }

    /// CREATE TABLE ... SELECT of a table of the catalog (see the module documentation).
    pub(crate) fn create_select(
        &mut self,
        ct: &sq::CreateTable,
        p: &Parsed,
    ) -> Result<QueryResult, SqlError> {
        let text = p.text.as_str();
        let q = ct.query.as_deref().expect("CREATE ... SELECT");
        self.db.count_com("Com_create_table");
        let (tdb, tname) = self.bind(text, |b| b.table_name(&ct.name))?;
        let target = [(tdb.clone(), tname.clone())];
        self.check_tables(&target, crate::users::Priv::CREATE)?;
        if ct.or_replace {
            self.check_tables(&target, crate::users::Priv::DROP)?;
        }
        self.check_server_read_only()?;
        self.implicit_commit()?;
        let cat = self.db.engine.catalog();
        let exists = cat.table(&tdb, &tname).is_some()
            || cat
                .object(onelog_engine::ObjectKind::View, &tdb, &tname)
                .is_some();
        if exists && !ct.or_replace {
            let msg = format!("Table '{tname}' already exists");
            if ct.if_not_exists {
                // As MariaDB: a note, nothing inserted, nothing logged.
                self.warnings
                    .push(SqlError::note(code::ER_TABLE_EXISTS_ERROR, msg));
                return Ok(crate::session::ok(0, 0, self.warnings.len(), String::new()));
            }
            return Err(sql_err(code::ER_TABLE_EXISTS_ERROR, msg));
        }
        let (def, warnings, insert_cols) = self.create_select_table(ct, q, text)?;
        let check = Ddl::CreateTable {
            def: def.clone(),
            if_not_exists: ct.if_not_exists,
            or_replace: ct.or_replace,
        };
        self.check_ddl_locked_tables(&check)?;
        if ct.or_replace {
            let sel = self.bind(text, |b| b.bind_query(q))?;
            let mut read = Vec::new();
            crate::binder::tables_read(&sel, &mut read);
            if read.contains(&(def.db.clone(), def.name.clone())) {
                return Err(sql_err(
                    crate::codes::ER_UPDATE_TABLE_USED,
                    format!(
                        "Table '{}' is specified twice, both as a target for 'CREATE' and as a separate source for data",
                        def.name
                    ),
                ));
            }
        }
        let sql = self.logged_create(ct, &def);
        let current = self.current_db.clone().unwrap_or_default();
        let (db, name) = (def.db.clone(), def.name.clone());
        self.ensure_txn();
        let created = self
            .txn
            .as_mut()
            .expect("a transaction")
            .create_table(def, ct.or_replace, &current, &sql)
            .map_err(engine_err);
        if let Err(e) = created {
            self.rollback_txn_for_ddl();
            return Err(e);
        }
        self.warnings.extend(warnings);
        let ins = Self::filling_insert(&db, &name, insert_cols, q, duplicates_of(text))?;
        let r = self.run_built(&ins, p);
        let r = match r {
            // Not committed by the statement (autocommit off): committed now, as DDL is.
            Ok(r) if self.txn.is_some() => self.commit_txn().map(|_| r),
            r => r,
        };
        match r {
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
                self.rollback_txn_for_ddl();
                Err(e)
            }
        }
    }

    /// The CREATE TABLE statement MariaDB logs for CREATE ... SELECT: the table's full
    /// column and key list; table options only when the statement gave some.
    fn logged_create(&self, ct: &sq::CreateTable, def: &TableDef) -> String {
        let full = crate::show::create_table_sql(def, def.auto_increment_start);
        let mut sql = match full.rfind("\n) ENGINE=") {
            Some(i) if ct.table_options == sq::CreateTableOptions::None => {
                full[..i + 2].to_string()
            }
            _ => full,
        };
        let head = match (ct.or_replace, ct.if_not_exists) {
            (true, _) => "CREATE OR REPLACE TABLE",
            (false, true) => "CREATE TABLE IF NOT EXISTS",
            _ => "CREATE TABLE",
        };
        sql.replace_range(.."CREATE TABLE".len(), head);
        if Some(&def.db) != self.current_db.as_ref() {
            let qualified = format!(
                "`{}`.`{}`",
                def.db.replace('`', "``"),
                def.name.replace('`', "``")
            );
            sql = sql.replacen(&format!("`{}`", def.name), &qualified, 1);
        }
        sql
    }

    fn rollback_txn_for_ddl(&mut self) {
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
    }

    /// Whether `db`.`name` is the table the open transaction creates.
    pub(crate) fn is_created_table(&self, db: &str, name: &str) -> bool {
        self.txn
            .as_ref()
            .and_then(|t| t.created_table())
            .is_some_and(|t| t.db == db && t.name == name)
    }

    /// `catalog` with the table the open transaction creates in it.
    pub(crate) fn with_created_table(&self, catalog: Arc<Catalog>) -> Arc<Catalog> {
        match self.txn.as_ref().and_then(|t| t.created_table()) {
            Some(t) => {
                let mut cat = (*catalog).clone();
                cat.tables.insert((t.db.clone(), t.name.clone()), t);
                Arc::new(cat)
            }
            None => catalog,
        }
    }

    /// Replication: a CREATE TABLE inside a transactional group (MariaDB's CREATE ...
    /// SELECT, `GTID(DDL) QUERY rows XID`) creates the table in the group's transaction,
    /// so that its rows events find it and the commit logs the group as it came. False
    /// (nothing done) when `sql` is not a CREATE TABLE.
    pub fn create_table_in_group(&mut self, sql: &str) -> Result<bool, SqlError> {
        let parsed = crate::parser::parse_one(sql)?;
        let crate::parser::Stmt::Sql(stmt) = &parsed.stmt else {
            return Ok(false);
        };
        let sq::Statement::CreateTable(ct) = stmt.as_ref() else {
            return Ok(false);
        };
        if ct.temporary || ct.query.is_some() || ct.like.is_some() {
            return Ok(false);
        }
        let (ddl, _) = self.bind(sql, |b| crate::binder::bind_create_table(&b, ct))?;
        let Ddl::CreateTable { def, .. } = ddl else {
            return Ok(false);
        };
        let current = self.current_db.clone().unwrap_or_default();
        self.ensure_txn()
            .create_table(def, ct.or_replace, &current, sql)
            .map_err(engine_err)?;
        Ok(true)
    }
}
