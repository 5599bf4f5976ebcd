//! Foreign keys in DDL that needs the session: dropping a referenced parent table or its
//! database (1451), and the rows ALTER TABLE ADD FOREIGN KEY constrains (1452). Both
//! only under `foreign_key_checks=1`.

use onelog_engine::{AlterOp, Ddl};
use onelog_types::SqlError;

use super::{no_parent, parent_dropped};

/// Whether the session's `foreign_key_checks` is on.
pub(crate) fn session_checks(sess: &crate::Session) -> bool {
    sess.get_var(None, "foreign_key_checks")
        .map_or(true, |v| crate::expr::truth(&v) != Some(false))
}

fn q(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// Refuses `ddl` where MariaDB's foreign key checks refuse it.
pub(crate) fn verify_ddl(sess: &mut crate::Session, ddl: &Ddl) -> Result<(), SqlError> {
    if !session_checks(sess) {
        return Ok(());
    }
    let cat = sess.db.engine.catalog();
    if !cat.has_foreign_keys() {
        return Ok(());
    }
    match ddl {
        // MariaDB drops the tables in the order given: a parent may go after its
        // children, not before them.
        Ddl::DropTables { tables, .. } => {
            for (i, (d, t)) in tables.iter().enumerate() {
                let gone = |c: &onelog_engine::TableDef| {
                    tables[..=i].iter().any(|(x, y)| c.db == *x && c.name == *y)
                };
                if cat.referencing(d, t).iter().any(|(c, _)| !gone(c)) {
                    return Err(parent_dropped());
                }
            }
        }
        Ddl::DropDatabase { name, .. } => {
            for t in cat.tables_in(name) {
                if cat
                    .referencing(&t.db, &t.name)
                    .iter()
                    .any(|(c, _)| c.db != *name)
                {
                    return Err(parent_dropped());
                }
            }
        }
        Ddl::AlterTable { db, table, ops, .. } => {
            let Some(t) = cat.table(db, table).cloned() else {
                return Ok(());
            };
            for op in ops {
                let AlterOp::AddForeignKey(fk) = op else {
                    continue;
                };
                let Some(parent) = cat.table(&fk.ref_db, &fk.ref_table) else {
                    continue;
                };
                let mut cond: Vec<String> = fk
                    .columns
                    .iter()
                    .map(|c| format!("c.{} IS NOT NULL", q(c)))
                    .collect();
                let eq: Vec<String> = fk
                    .columns
                    .iter()
                    .zip(&fk.ref_columns)
                    .map(|(c, r)| format!("p.{} = c.{}", q(r), q(c)))
                    .collect();
                cond.push(format!(
                    "NOT EXISTS (SELECT 1 FROM {}.{} p WHERE {})",
                    q(&parent.db),
                    q(&parent.name),
                    eq.join(" AND ")
                ));
                let sql = format!(
                    "SELECT 1 FROM {}.{} c WHERE {} LIMIT 1",
                    q(db),
                    q(table),
                    cond.join(" AND ")
                );
                if let crate::QueryResult::Rows { rows, .. } = sess.query(&sql)? {
                    if !rows.is_empty() {
                        return Err(no_parent(&t, fk));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}
