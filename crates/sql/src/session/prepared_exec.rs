//! Running prepared statements: COM_STMT_EXECUTE and `EXECUTE name [USING ...]`, with
//! the parameter values bound and a CALL's OUT arguments routed (`routines::prepared_call`).

use std::sync::atomic::Ordering;

use onelog_types::{code, SqlError, Value};
use sqlparser::ast as sq;

use super::{Kept, Prepared, Session};
use crate::parser::Parsed;
use crate::{sql_err, QueryResult};

impl Session {
    /// `EXECUTE name [USING expr, ...]`; `client` takes the result sets of a CALL.
    pub(super) fn execute_named(
        &mut self,
        name: &str,
        args: &[sq::Expr],
        client: Option<&mut dyn crate::Client>,
    ) -> Result<QueryResult, SqlError> {
        let key = name.to_lowercase();
        // Taken out while it runs (PREPARE, EXECUTE and DEALLOCATE cannot be prepared).
        let Some(mut p) = self.named_prepared.remove(&key) else {
            return Err(sql_err(
                code::ER_UNKNOWN_STMT_HANDLER,
                format!("Unknown prepared statement handler ({name}) given to EXECUTE"),
            ));
        };
        let r = self.execute_kept(&mut p, args, client);
        self.named_prepared.insert(key, p);
        r
    }

    fn execute_kept(
        &mut self,
        p: &mut Prepared,
        args: &[sq::Expr],
        client: Option<&mut dyn crate::Client>,
    ) -> Result<QueryResult, SqlError> {
        if args.len() != p.parsed.params {
            return Err(sql_err(
                code::ER_WRONG_ARGUMENTS,
                "Incorrect arguments to EXECUTE",
            ));
        }
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval_const(a)?);
        }
        // A CALL's OUT arguments that are placeholders go to the user variables given.
        let vars = args
            .iter()
            .map(|a| match a {
                sq::Expr::Identifier(id)
                    if id.quote_style.is_none()
                        && id.value.starts_with('@')
                        && !id.value.starts_with("@@") =>
                {
                    Some(id.value[1..].to_lowercase())
                }
                _ => None,
            })
            .collect();
        self.call_out = Some(crate::routines::CallOut::UserVars(vars));
        let r = self.run_with_params(&p.parsed, values, Some(&mut p.kept), client);
        self.call_out = None;
        r
    }

    /// Runs a prepared statement with its parameter values.
    pub(super) fn run_with_params(
        &mut self,
        parsed: &Parsed,
        params: Vec<Value>,
        kept: Option<&mut Kept>,
        client: Option<&mut dyn crate::Client>,
    ) -> Result<QueryResult, SqlError> {
        self.params = params;
        let r = self.run_stmt(parsed, kept, client);
        self.params.clear();
        r
    }

    /// COM_STMT_EXECUTE with bound parameter values.
    pub fn execute_prepared(
        &mut self,
        stmt_id: u32,
        params: &[Value],
    ) -> Result<QueryResult, SqlError> {
        self.execute_prepared_to(stmt_id, params, None)
    }

    /// COM_STMT_EXECUTE whose intermediate results (a CALL's result sets and OUT
    /// parameters) go to `client` as they come; returns the final result.
    pub fn execute_prepared_to(
        &mut self,
        stmt_id: u32,
        params: &[Value],
        client: Option<&mut dyn crate::Client>,
    ) -> Result<QueryResult, SqlError> {
        // Taken out while it runs (a prepared statement cannot close itself).
        let Some(mut p) = self.prepared.remove(&stmt_id) else {
            return Err(sql_err(
                code::ER_UNKNOWN_STMT_HANDLER,
                format!(
                    "Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_execute"
                ),
            ));
        };
        let r = if params.len() != p.parsed.params {
            Err(sql_err(
                code::ER_WRONG_ARGUMENTS,
                "Incorrect arguments to mysqld_stmt_execute",
            ))
        } else {
            self.db.questions.fetch_add(1, Ordering::Relaxed);
            self.set_proc("Execute", Some(&p.parsed.text));
            self.begin_statement();
            self.call_out = client
                .is_some()
                .then_some(crate::routines::CallOut::Protocol);
            let r = self.run_with_params(&p.parsed, params.to_vec(), Some(&mut p.kept), client);
            self.call_out = None;
            self.set_proc("Sleep", None);
            self.control.finish(r)
        };
        self.prepared.insert(stmt_id, p);
        r
    }
}
