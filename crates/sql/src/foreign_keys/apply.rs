//! Row changes read from a binlog (a replica's applier, BINLOG statements) applied with
//! their foreign keys enforced, as InnoDB enforces them on a MariaDB replica: a rows event
//! carries only the rows its statement named, so the replica makes the cascades itself
//! (the primary logged the rows they changed in row-redo events, which replicas never
//! apply), checks a child row's parent and refuses to remove a referenced parent. A rows
//! event flagged NO_FOREIGN_KEY_CHECKS_F (its statement ran with `foreign_key_checks=0`)
//! is applied without any of it.

use std::sync::Arc;

use onelog_engine::{LoggedChange, TableDef};
use onelog_types::SqlError;

use super::enforce::{check_child, delete_parent, update_parent};
use crate::executor::{engine_err, ExecCtx};
use crate::Session;

impl Session {
    /// Applies the changes of one rows event to `t` in the session's transaction with
    /// the foreign keys enforced: each before image's stored row is found and locked,
    /// then changed through the same steps as a DML statement's rows.
    pub(crate) fn apply_with_foreign_keys(
        &mut self,
        t: &Arc<TableDef>,
        changes: Vec<LoggedChange>,
    ) -> Result<(), SqlError> {
        self.ensure_txn();
        let Some(mut txn) = self.txn.take() else {
            return Ok(());
        };
        let control = self.control.clone();
        let mut warnings = Vec::new();
        let mut cx = ExecCtx {
            txn: &mut txn,
            interrupt: &control.interrupt,
            warnings: &mut warnings,
            strict: false,
            no_auto_value_on_zero: true,
            check_constraints: false,
            foreign_key_checks: true,
            view_checks: &[],
            now: self.statement_time(),
            host: None,
        };
        let r = changes
            .into_iter()
            .try_for_each(|(before, after)| apply_one(&mut cx, t, before, after));
        self.txn = Some(txn);
        r
    }
}

fn apply_one(
    cx: &mut ExecCtx,
    t: &Arc<TableDef>,
    before: Option<onelog_engine::Row>,
    after: Option<onelog_engine::Row>,
) -> Result<(), SqlError> {
    let resolved = cx
        .txn
        .resolve_logged_change(t, before, after)
        .map_err(engine_err)?;
    match resolved {
        (None, Some(new)) => {
            check_child(cx, t, None, &new)?;
            cx.txn.insert(t, new).map_err(engine_err)
        }
        (Some(old), Some(new)) => update_parent(cx, t, &old, new),
        (Some(old), None) => delete_parent(cx, t, &old),
        (None, None) => Ok(()),
    }
}
