//! Privilege checks of statements, with MariaDB's errors:
//! - 1142 `<PRIVS> command denied to user 'u'@'client host' for table `db`.`t``, naming the
//!   privileges missing of those the statement needs on the table (in privilege order, as
//!   MariaDB lists them: `INSERT, DELETE` for a REPLACE by a user who has neither);
//! - 1044 `Access denied for user 'u'@'account host' to database 'db'`;
//! - 1227 `Access denied; you need (at least one of) the X privilege(s) for this operation`;
//! - 1095 `You are not owner of thread N` (KILL of another user's connection).
//!
//! The DML checks also give the tables a statement uses (its metadata locks). PREPARE
//! runs the checks of the statement it prepares, so a statement the user may not run is
//! refused there (MariaDB does this for SELECT, INSERT, REPLACE, UPDATE, DELETE and CREATE
//! TABLE; other statements are checked when they run, there as here).

use onelog_types::{code, SqlError};
use sqlparser::ast as sq;

use crate::binder::{self, Select};
use crate::parser::{Parsed, Stmt};
use crate::session::Session;
use crate::sql_err;
use crate::users::{self, Priv};
use crate::ResultColumn;

type Tables = Vec<(String, String)>;

/// The tables of the given sources (targets of UPDATE/DELETE).
fn target_tables(sel: &Select, targets: &[usize]) -> Tables {
    targets
        .iter()
        .filter_map(|&i| sel.sources.get(i).and_then(|s| s.table()))
        .map(|t| (t.db.clone(), t.name.clone()))
        .collect()
}

/// The tables of `tables` not in `written` (read by an UPDATE/DELETE).
fn read_only(tables: &[(String, String)], written: &[(String, String)]) -> Tables {
    tables
        .iter()
        .filter(|t| !written.contains(t))
        .cloned()
        .collect()
}

impl Session {
    /// Requires `p` on every table of `tables`.
    pub(crate) fn check_tables(
        &self,
        tables: &[(String, String)],
        p: Priv,
    ) -> Result<(), SqlError> {
        self.check_table_privs(tables, p.0)
    }

    /// Requires every privilege of `mask` on every table of `tables` (1142 names those
    /// missing on the first table that lacks any).
    pub(crate) fn check_table_privs(
        &self,
        tables: &[(String, String)],
        mask: u64,
    ) -> Result<(), SqlError> {
        if self.internal {
            return Ok(());
        }
        let acc = self.account();
        for (d, t) in tables {
            if d.eq_ignore_ascii_case("information_schema")
                || self.view_base_ok.iter().any(|(vd, vt)| vd == d && vt == t)
                || self.is_temp_table(d, t)
            {
                continue;
            }
            let missing = mask & !acc.privileges_on(d);
            if missing != 0 {
                return Err(sql_err(
                    code::ER_TABLEACCESS_DENIED_ERROR,
                    format!(
                        "{} command denied to user '{}'@'{}' for table `{d}`.`{t}`",
                        users::priv_names(missing),
                        self.user,
                        self.host
                    ),
                ));
            }
        }
        Ok(())
    }

    /// SELECT on what a query reads (a `SQL SECURITY DEFINER` view stands for its tables).
    pub(crate) fn check_read(&self, sel: &binder::Select) -> Result<(), SqlError> {
        let mut checked = Vec::new();
        binder::tables_checked(sel, &mut checked);
        self.check_tables(&checked, Priv::SELECT)
    }

    pub(crate) fn require_global(&self, p: Priv) -> Result<(), SqlError> {
        if self.internal || self.account().has_global(p) {
            return Ok(());
        }
        Err(sql_err(
            code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
            format!(
                "Access denied; you need (at least one of) the {} privilege(s) for this operation",
                p.name()
            ),
        ))
    }

    pub(crate) fn check_db(&self, db: &str, p: Priv) -> Result<(), SqlError> {
        if self.internal || self.account().has(p, db) {
            return Ok(());
        }
        Err(sql_err(
            code::ER_DBACCESS_DENIED_ERROR,
            format!(
                "Access denied for user '{}'@'{}' to database '{db}'",
                self.user, self.account_host
            ),
        ))
    }

    /// SET sql_log_bin (either scope) needs SUPER or BINLOG ADMIN, checked before anything
    /// else about the assignment (MariaDB).
    pub(crate) fn check_set_sql_log_bin(&self) -> Result<(), SqlError> {
        if self.internal || self.account().has_global(Priv::SUPER) {
            return Ok(());
        }
        Err(sql_err(
            code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
            "Access denied; you need (at least one of) the SUPER, BINLOG ADMIN privilege(s) for this operation",
        ))
    }

    /// Whether this session may kill connection `id` of `owner`: its own user's, or any
    /// with SUPER / CONNECTION ADMIN; otherwise 1095.
    pub(crate) fn check_kill(&self, owner: &str, id: u64) -> Result<(), SqlError> {
        if self.internal || owner == self.user || self.account().has_global(Priv::SUPER) {
            return Ok(());
        }
        Err(sql_err(
            code::ER_KILL_DENIED_ERROR,
            format!("You are not owner of thread {id}"),
        ))
    }

    /// KILL [QUERY] `id` (the statement and COM_PROCESS_KILL): 1094 for an unknown
    /// connection, 1095 for another user's without the privilege.
    pub fn kill_connection(&self, id: u64, query_only: bool) -> Result<(), SqlError> {
        let target = u32::try_from(id)
            .ok()
            .and_then(|i| self.db.procs.lock().get(&i).cloned());
        let Some(t) = target else {
            return Err(sql_err(
                code::ER_NO_SUCH_THREAD,
                format!("Unknown thread id: {id}"),
            ));
        };
        self.check_kill(&t.user, id)?;
        self.db.kill(t.id, query_only);
        Ok(())
    }

    /// INSERT on the table (with DELETE for REPLACE, UPDATE for ON DUPLICATE KEY UPDATE),
    /// SELECT on the tables of INSERT ... SELECT; returns the tables the statement uses.
    pub(crate) fn check_insert(&self, plan: &binder::Insert) -> Result<Tables, SqlError> {
        let t = (plan.table.db.clone(), plan.table.name.clone());
        let mut mask = Priv::INSERT.0;
        if plan.replace {
            mask |= Priv::DELETE.0;
        }
        if !plan.on_dup.is_empty() {
            mask |= Priv::UPDATE.0;
        }
        self.check_table_privs(std::slice::from_ref(&t), mask)?;
        let mut tables = vec![t];
        if let binder::InsertSource::Select(sel) = &plan.source {
            let mut read = Vec::new();
            binder::tables_read(sel, &mut read);
            self.check_read(sel)?;
            tables.extend(read);
        }
        Ok(tables)
    }

    /// UPDATE on the tables written, SELECT on the others; returns all of them.
    pub(crate) fn check_update(&self, plan: &binder::Update) -> Result<Tables, SqlError> {
        let mut tables = Vec::new();
        binder::tables_read(&plan.select, &mut tables);
        let targets: Vec<usize> = plan
            .sets
            .iter()
            .filter_map(|(p, _)| {
                plan.select
                    .sources
                    .iter()
                    .position(|s| *p >= s.offset && *p < s.offset + s.ncols)
            })
            .collect();
        let written = target_tables(&plan.select, &targets);
        crate::sequences::refuse_change(self, &written)?;
        self.check_tables(&written, Priv::UPDATE)?;
        let mut checked = Vec::new();
        binder::tables_checked(&plan.select, &mut checked);
        self.check_tables(&read_only(&checked, &written), Priv::SELECT)?;
        Ok(tables)
    }

    /// DELETE on the tables deleted from, SELECT on the others; returns all of them.
    pub(crate) fn check_delete(&self, plan: &binder::Delete) -> Result<Tables, SqlError> {
        let mut tables = Vec::new();
        binder::tables_read(&plan.select, &mut tables);
        let targets = if plan.targets.is_empty() {
            vec![0]
        } else {
            plan.targets.clone()
        };
        let written = target_tables(&plan.select, &targets);
        crate::sequences::refuse_change(self, &written)?;
        self.check_tables(&written, Priv::DELETE)?;
        let mut checked = Vec::new();
        binder::tables_checked(&plan.select, &mut checked);
        self.check_tables(&read_only(&checked, &written), Priv::SELECT)?;
        Ok(tables)
    }

    /// The privileges a DDL statement needs.
    pub(crate) fn check_ddl(&self, ddl: &onelog_engine::Ddl) -> Result<(), SqlError> {
        use onelog_engine::Ddl as D;
        match ddl {
            D::CreateDatabase { name, .. } => self.check_db(name, Priv::CREATE),
            D::DropDatabase { name, .. } => self.check_db(name, Priv::DROP),
            D::CreateTable {
                def, or_replace, ..
            } => {
                let t = [(def.db.clone(), def.name.clone())];
                self.check_tables(&t, Priv::CREATE)?;
                if *or_replace {
                    self.check_tables(&t, Priv::DROP)?;
                }
                Ok(())
            }
            D::CreateSequence {
                def, or_replace, ..
            } => {
                let t = [(def.db.clone(), def.name.clone())];
                if *or_replace {
                    self.check_tables(&t, Priv::DROP)?;
                }
                self.check_tables(&t, Priv::CREATE)
            }
            D::SetSequenceRow { db, table, .. } => {
                self.check_tables(&[(db.clone(), table.clone())], Priv::ALTER)
            }
            D::DropTables { tables, .. } => self.check_tables(tables, Priv::DROP),
            D::TruncateTable { db, table } => {
                self.check_tables(&[(db.clone(), table.clone())], Priv::DROP)
            }
            D::RenameTables { renames } => {
                for (a, b) in renames {
                    self.check_table_privs(std::slice::from_ref(a), Priv::DROP.0 | Priv::ALTER.0)?;
                    self.check_table_privs(
                        std::slice::from_ref(b),
                        Priv::CREATE.0 | Priv::INSERT.0,
                    )?;
                }
                Ok(())
            }
            D::AlterTable { db, table, ops, .. } => {
                let t = [(db.clone(), table.clone())];
                let index_only = ops.iter().all(|o| {
                    matches!(
                        o,
                        onelog_engine::AlterOp::AddIndex(_) | onelog_engine::AlterOp::DropIndex(_)
                    )
                });
                if index_only && self.check_tables(&t, Priv::ALTER).is_ok() {
                    return Ok(());
                }
                self.check_tables(&t, if index_only { Priv::INDEX } else { Priv::ALTER })
            }
            D::CreateObject { obj, .. } => {
                use onelog_engine::ObjectKind as K;
                match (obj.kind, &obj.table) {
                    (K::View, _) => {
                        self.check_tables(&[(obj.db.clone(), obj.name.clone())], Priv::CREATE_VIEW)
                    }
                    (K::Trigger, Some(t)) => {
                        self.check_tables(&[(obj.db.clone(), t.clone())], Priv::TRIGGER)
                    }
                    (K::Event, _) => self.check_db(&obj.db, Priv::EVENT),
                    _ => self.check_db(&obj.db, Priv::CREATE_ROUTINE),
                }
            }
            // ALTER EVENT (RENAME TO another database needs the privilege there too).
            D::AlterObject { from, obj } => {
                self.check_db(&from.0, Priv::EVENT)?;
                self.check_db(&obj.db, Priv::EVENT)
            }
            D::DropObjects { kind, names, .. } => {
                use onelog_engine::ObjectKind as K;
                match kind {
                    K::View => self.check_tables(names, Priv::DROP),
                    K::Trigger => {
                        let cat = self.db.engine.catalog();
                        let tables: Vec<(String, String)> = names
                            .iter()
                            .filter_map(|(d, n)| cat.object(*kind, d, n))
                            .filter_map(|o| Some((o.db.clone(), o.table.clone()?)))
                            .collect();
                        self.check_tables(&tables, Priv::TRIGGER)
                    }
                    K::Event => names
                        .iter()
                        .try_for_each(|(d, _)| self.check_db(d, Priv::EVENT)),
                    K::Function | K::Procedure => names
                        .iter()
                        .try_for_each(|(d, _)| self.check_db(d, Priv::ALTER_ROUTINE)),
                }
            }
            // Checked by the statement itself (SELECT and INSERT on each table).
            D::LogOnly => Ok(()),
        }
    }

    /// The checks of the statement a PREPARE prepares (see the module comment); binds it
    /// to find its tables, so unknown tables and columns fail here too.
    pub(crate) fn check_prepared(&self, parsed: &Parsed) -> Result<Vec<ResultColumn>, SqlError> {
        let Stmt::Sql(s) = &parsed.stmt else {
            return Ok(vec![]);
        };
        let text = parsed.text.as_str();
        let returning =
            |r: Option<crate::binder::Returning>| r.map(|r| r.columns).unwrap_or_default();
        match s.as_ref() {
            sq::Statement::Insert(ins) => {
                let plan = self.bind(text, |b| b.bind_insert(ins))?;
                if !self.internal {
                    self.check_insert(&plan)?;
                }
                Ok(returning(plan.returning))
            }
            sq::Statement::Delete(d) => {
                let plan = self.bind(text, |b| b.bind_delete(d))?;
                if !self.internal {
                    self.check_delete(&plan)?;
                }
                Ok(returning(plan.returning))
            }
            _ if self.internal => Ok(vec![]),
            sq::Statement::Update(u) => {
                let plan = self.bind(text, |b| b.bind_update(u))?;
                self.check_update(&plan).map(|_| vec![])
            }
            sq::Statement::CreateTable(ct) => {
                let mut parts = crate::parser::name_parts(&ct.name);
                let table = parts.pop().unwrap_or_default();
                let db = match parts.pop() {
                    Some(d) => d,
                    None => self
                        .current_db()
                        .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected"))?
                        .to_string(),
                };
                self.check_tables(&[(db, table)], Priv::CREATE)
                    .map(|_| vec![])
            }
            _ => Ok(vec![]),
        }
    }
}
