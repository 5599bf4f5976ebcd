//! CHECK, ANALYZE, OPTIMIZE, REPAIR and CHECKSUM TABLE, with MariaDB's result sets
//! (`Table | Op | Msg_type | Msg_text`; CHECKSUM: `Table | Checksum`), one table at a time:
//! a table that does not exist gets `Error` and `status | Operation failed` rows (CHECKSUM:
//! NULL and an error-level note) and the statement goes on.
//!
//! - CHECK reads the table's indexes from one consistent state and checks that they agree
//!   (`Engine::check_table`): `status | OK`, or a `Warning` per problem and `error |
//!   Corrupt`. QUICK only counts the secondary entries.
//! - ANALYZE has no statistics to collect (the planner keeps none): `status | OK`.
//! - OPTIMIZE compacts the table's key ranges in RocksDB (`Engine::optimize_table`).
//! - REPAIR answers as InnoDB does: the engine does not support it.
//! - CHECKSUM computes MariaDB's value (`checksum.rs`); QUICK gives NULL, as for InnoDB,
//!   which keeps no live checksum.
//!
//! ANALYZE, OPTIMIZE and REPAIR are logged as MariaDB logs them, a QUERY event of the
//! statement (`Ddl::LogOnly`), unless `NO_WRITE_TO_BINLOG` / `LOCAL`; CHECK and CHECKSUM
//! are not logged. All but CHECKSUM commit the open transaction first.

use onelog_engine::{Ddl, KeyRange, LockMode, ScanOptions};
use onelog_types::{code, SqlError, Value};

use crate::checksum::RowChecksum;
use crate::executor::engine_err;
use crate::parser::{MaintOp, Parsed, TableMaint};
use crate::session::Session;
use crate::show::{result, s};
use crate::sql_err;
use crate::users::Priv;
use crate::QueryResult;

fn row(table: &str, op: MaintOp, kind: &str, text: &str) -> Vec<Value> {
    vec![s(table), s(op.name()), s(kind), s(text)]
}

impl Session {
    pub(crate) fn run_table_maint(
        &mut self,
        m: &TableMaint,
        p: &Parsed,
    ) -> Result<QueryResult, SqlError> {
        let mut tables = Vec::with_capacity(m.tables.len());
        for (d, t) in &m.tables {
            let d = match d.clone().or_else(|| self.current_db.clone()) {
                Some(d) => d,
                None => return Err(sql_err(code::ER_NO_DB_ERROR, "No database selected")),
            };
            tables.push((d, t.clone()));
        }
        let privs = match m.op {
            MaintOp::Check | MaintOp::Checksum => Priv::SELECT.0,
            _ => Priv::SELECT.0 | Priv::INSERT.0,
        };
        self.check_table_privs(&tables, privs)?;
        if m.op == MaintOp::Checksum {
            return self.checksum_tables(m, &tables, &p.text);
        }
        self.implicit_commit()?;
        let mut rows = Vec::new();
        let cat = self.db.engine.catalog();
        for (d, t) in &tables {
            let name = format!("{d}.{t}");
            let Some(def) = cat.table(d, t).cloned() else {
                rows.push(row(
                    &name,
                    m.op,
                    "Error",
                    &format!("Table '{d}.{t}' doesn't exist"),
                ));
                rows.push(row(&name, m.op, "status", "Operation failed"));
                continue;
            };
            match m.op {
                MaintOp::Check => self.check_one(&def, m.quick, &name, &mut rows)?,
                MaintOp::Analyze => {
                    self.db.engine.forget_stats(def.id);
                    rows.push(row(&name, m.op, "status", "OK"))
                }
                MaintOp::Optimize => {
                    let refs = vec![crate::locks::plain_ref(d, t)];
                    let locked = self.has_locked_tables();
                    if locked {
                        self.check_locked_tables(&refs, &refs)?;
                    }
                    let timeout = std::time::Duration::from_secs(
                        self.get_var(None, "lock_wait_timeout")
                            .map(|v| crate::expr::to_i64(&v).max(0) as u64)
                            .unwrap_or(86400),
                    );
                    let engine = self.db.engine.clone();
                    let interrupt = self.control.interrupt.clone();
                    let r = engine.optimize_table(&def, locked, timeout, Some(&interrupt));
                    if let Err(e) = r {
                        return Err(engine_err(e));
                    }
                    rows.push(row(&name, m.op, "status", "OK"));
                }
                MaintOp::Repair => rows.push(row(
                    &name,
                    m.op,
                    "note",
                    "The storage engine for the table doesn't support repair",
                )),
                MaintOp::Checksum => unreachable!(),
            }
        }
        if m.op != MaintOp::Check && !m.no_log {
            let db = self.current_db.clone().unwrap_or_default();
            let gtid = self.next_gtid.take().or_else(|| self.take_seq_no_gtid());
            let text = p.text.clone();
            self.as_write_statement(|s| {
                s.db.engine
                    .ddl_as(
                        &db,
                        &text,
                        Ddl::LogOnly,
                        onelog_engine::DdlLog {
                            gtid,
                            ..Default::default()
                        },
                    )
                    .map_err(engine_err)
            })?;
        }
        result(
            self,
            &["Table", "Op", "Msg_type", "Msg_text"],
            &[],
            rows,
            &None,
        )
    }

    fn check_one(
        &mut self,
        def: &std::sync::Arc<onelog_engine::TableDef>,
        quick: bool,
        name: &str,
        rows: &mut Vec<Vec<Value>>,
    ) -> Result<(), SqlError> {
        let engine = self.db.engine.clone();
        let pair = [(def.db.clone(), def.name.clone())];
        // Under the table's shared metadata lock, so that it is not dropped meanwhile.
        let report = self.in_statement("", &pair, &[], |cx| {
            let interrupt = cx.interrupt;
            engine
                .check_table(def, quick, Some(interrupt))
                .map_err(engine_err)
        })?;
        if report.problems.is_empty() {
            rows.push(row(name, MaintOp::Check, "status", "OK"));
        } else {
            for p in &report.problems {
                rows.push(row(name, MaintOp::Check, "Warning", p));
            }
            rows.push(row(name, MaintOp::Check, "error", "Corrupt"));
        }
        Ok(())
    }

    fn checksum_tables(
        &mut self,
        m: &TableMaint,
        tables: &[(String, String)],
        text: &str,
    ) -> Result<QueryResult, SqlError> {
        self.db.count_com("Com_checksum");
        let mut rows = Vec::new();
        let cat = self.db.engine.catalog();
        for (d, t) in tables {
            let name = format!("{d}.{t}");
            let Some(def) = cat.table(d, t).cloned() else {
                self.warnings.push(sql_err(
                    code::ER_NO_SUCH_TABLE,
                    format!("Table '{d}.{t}' doesn't exist"),
                ));
                rows.push(vec![s(&name), Value::Null]);
                continue;
            };
            if m.quick {
                rows.push(vec![s(&name), Value::Null]);
                continue;
            }
            let pair = [(d.clone(), t.clone())];
            let sum = self.in_statement(text, &pair, &[], |cx| {
                let c = RowChecksum::new(&def);
                let mut buf = Vec::new();
                let mut total = 0u32;
                let opts = ScanOptions {
                    lock: LockMode::None,
                    ..Default::default()
                };
                let cur = cx
                    .txn
                    .scan(&def, 0, KeyRange::all(), opts)
                    .map_err(engine_err)?;
                for (n, r) in cur.enumerate() {
                    if n % 1024 == 0 {
                        cx.check_interrupt()?;
                    }
                    let r = r.map_err(engine_err)?;
                    total = total.wrapping_add(c.row(&r, &mut buf));
                }
                Ok(total)
            })?;
            rows.push(vec![s(&name), Value::UInt(sum as u64)]);
        }
        result(self, &["Table", "Checksum"], &["Checksum"], rows, &None)
    }
}
