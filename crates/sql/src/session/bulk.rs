//! COM_STMT_BULK_EXECUTE: a prepared INSERT, REPLACE, UPDATE or DELETE run once per
//! parameter row, as one statement: outside a transaction in autocommit mode every row
//! commits together (one group, one binlog transaction) or, on an error, none does;
//! inside a transaction the rows join it. The answer is one OK: the affected rows of all
//! rows, the first generated AUTO_INCREMENT value, the warnings of all rows.

use sqlparser::ast::Statement;

use super::Session;
use crate::parser::Stmt;
use crate::{sql_err, QueryResult};
use onelog_types::{code, SqlError, Value};

impl Session {
    /// Runs prepared statement `stmt_id` for each row of parameter values.
    pub fn execute_prepared_bulk(
        &mut self,
        stmt_id: u32,
        rows: &[Vec<Value>],
    ) -> Result<QueryResult, SqlError> {
        let Some(p) = self.prepared.get(&stmt_id) else {
            return Err(sql_err(
                code::ER_UNKNOWN_STMT_HANDLER,
                format!(
                    "Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_bulk_execute"
                ),
            ));
        };
        // MariaDB's array binding takes the data-changing statements only.
        let array_safe = matches!(
            &p.parsed.stmt,
            Stmt::Sql(s) if matches!(
                **s,
                Statement::Insert(_) | Statement::Update { .. } | Statement::Delete(_)
            )
        );
        if !array_safe {
            return Err(sql_err(
                code::ER_UNSUPPORTED_PS,
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let own_txn = !self.in_explicit && self.autocommit() && self.txn.is_none();
        if own_txn {
            self.begin_internal_txn();
        }
        let mut affected = 0u64;
        let mut first_id = 0u64;
        let mut warnings = 0u16;
        for row in rows {
            match self.execute_prepared(stmt_id, row) {
                Ok(QueryResult::Ok {
                    affected_rows,
                    last_insert_id,
                    ..
                }) => {
                    affected += affected_rows;
                    if first_id == 0 {
                        first_id = last_insert_id;
                    }
                    warnings = warnings.saturating_add(self.warning_count());
                }
                Ok(QueryResult::Rows { .. }) => {}
                Err(e) => {
                    if own_txn {
                        self.in_explicit = false;
                        self.rollback_internal_txn();
                    }
                    return Err(e);
                }
            }
        }
        if own_txn {
            self.in_explicit = false;
            self.commit_txn()?;
        }
        Ok(QueryResult::Ok {
            affected_rows: affected,
            last_insert_id: first_id,
            warnings,
            info: String::new(),
        })
    }
}
