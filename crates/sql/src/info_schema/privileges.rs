//! information_schema.USER_PRIVILEGES and SCHEMA_PRIVILEGES, from the account tables
//! (`users.rs`): one row per privilege an account holds globally (`USAGE` when it holds
//! none) or on a database pattern. As in MariaDB, an account sees every account's rows
//! with SELECT on `mysql`, otherwise only its own.

use onelog_types::Value;

use super::with_ints;
use crate::binder::VirtualColumn;
use crate::session::Session;
use crate::show::s;
use crate::users::{Account, Priv, ALL_GLOBAL};

fn grantee(a: &Account) -> String {
    format!(
        "'{}'@'{}'",
        a.user.replace('\'', "\\'"),
        a.host.replace('\'', "\\'")
    )
}

/// The privilege names of `mask`, in MariaDB's order (their bit order).
fn names(mask: u64) -> Vec<&'static str> {
    (0..64)
        .map(|b| 1u64 << b)
        .filter(|bit| mask & bit & ALL_GLOBAL != 0)
        .map(|bit| Priv(bit).name())
        .collect()
}

/// The accounts whose rows `sess` sees.
fn visible(sess: &Session) -> Vec<Account> {
    let me = sess.account();
    let all = me.has(Priv::SELECT, "mysql");
    sess.db
        .accounts
        .read()
        .all()
        .iter()
        .filter(|a| all || (a.user == me.user && a.host == me.host))
        .cloned()
        .collect()
}

/// Rows of one of these tables (None: not one of them).
pub(super) fn rows(sess: &Session, table: &str) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
    let yes_no = |a: &Account| s(if a.grant_option { "YES" } else { "NO" });
    Some(match table {
        "USER_PRIVILEGES" => {
            let mut rows = Vec::new();
            for a in visible(sess) {
                let mut privs = names(a.global);
                if privs.is_empty() {
                    privs.push("USAGE");
                }
                for p in privs {
                    rows.push(vec![s(&grantee(&a)), s("def"), s(p), yes_no(&a)]);
                }
            }
            (
                with_ints(
                    &["GRANTEE", "TABLE_CATALOG", "PRIVILEGE_TYPE", "IS_GRANTABLE"],
                    &[],
                ),
                rows,
            )
        }
        "SCHEMA_PRIVILEGES" => {
            let mut rows = Vec::new();
            for a in visible(sess) {
                for (db, mask) in &a.dbs {
                    for p in names(*mask) {
                        // Database grants carry no GRANT OPTION of their own in onelog.
                        rows.push(vec![s(&grantee(&a)), s("def"), s(db), s(p), s("NO")]);
                    }
                }
            }
            (
                with_ints(
                    &[
                        "GRANTEE",
                        "TABLE_CATALOG",
                        "TABLE_SCHEMA",
                        "PRIVILEGE_TYPE",
                        "IS_GRANTABLE",
                    ],
                    &[],
                ),
                rows,
            )
        }
        _ => return None,
    })
}
