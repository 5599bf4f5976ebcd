//! COM_STMT_BULK_EXECUTE on a connection: decodes the parameter rows
//! (`onelog_protocol::decode_bulk`) and runs them through
//! `Session::execute_prepared_bulk`, answering with one OK or ERR.

use onelog_protocol::{capability, decode_bulk, BulkParam, LAST_PREPARED};
use onelog_types::{code, SqlError};

use super::{Conn, Result};

impl Conn<'_> {
    /// A statement id as sent: 0xFFFFFFFF names the statement prepared last (ids grow per
    /// connection), which clients announcing the bulk capability use to send a PREPARE
    /// and its EXECUTE without waiting for the id.
    pub(super) fn resolve_stmt(&self, stmt_id: u32) -> u32 {
        if stmt_id == LAST_PREPARED {
            self.prepared.keys().max().copied().unwrap_or(stmt_id)
        } else {
            stmt_id
        }
    }

    pub(super) fn bulk_execute(&mut self, stmt_id: u32, payload: &[u8]) -> Result<()> {
        // Only for clients that announced the capability (MariaDB's check).
        if self.caps & capability::MARIADB_CLIENT_STMT_BULK_OPERATIONS == 0 {
            return self.ps.write_err(&SqlError::from_code(
                code::ER_UNSUPPORTED_PS,
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let id = self.resolve_stmt(stmt_id);
        let Some(p) = self.prepared.get_mut(&id) else {
            return self.ps.write_err(&SqlError::from_code(
                code::ER_UNKNOWN_STMT_HANDLER,
                format!(
                    "Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_bulk_execute"
                ),
            ));
        };
        p.long_data.clear();
        let bulk = match decode_bulk(payload, p.params, &mut p.types) {
            Ok(b) => b,
            Err(e) => return self.ps.write_err(&e.to_sql_error()),
        };
        let mut rows = Vec::with_capacity(bulk.rows.len());
        for row in bulk.rows {
            let mut values = Vec::with_capacity(row.len());
            for param in row {
                match param {
                    BulkParam::Value(v) => values.push(v),
                    BulkParam::Default | BulkParam::Ignore => {
                        return self.ps.write_err(&SqlError::from_code(
                            code::ER_NOT_SUPPORTED_YET,
                            "This version of MariaDB doesn't yet support 'DEFAULT and IGNORE \
                             parameter indicators'",
                        ))
                    }
                }
            }
            rows.push(values);
        }
        match self.session.execute_prepared_bulk(id, &rows) {
            Ok(r) => self.write_result(r, false, None),
            Err(e) => self.ps.write_err(&e),
        }
    }
}
