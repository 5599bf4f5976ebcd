//! SHOW statements about sessions: SHOW [FULL] PROCESSLIST and SHOW WARNINGS / ERRORS.

use onelog_types::SqlError;

use super::*;
use crate::session::Session;
use crate::users::Priv;
use crate::{QueryResult, ResultColumn};

/// SHOW [FULL] PROCESSLIST.
pub(super) fn show_process_list(sess: &mut Session, full: &bool) -> Result<QueryResult, SqlError> {
    let acc = sess.account();
    let all = acc.has_global(Priv::PROCESS);
    let rows = sess
        .db
        .process_list()
        .into_iter()
        .filter(|p| all || p.user == sess.user)
        .map(|p| {
            let info = p.info.map(|i| {
                if *full {
                    i
                } else {
                    i.chars().take(100).collect()
                }
            });
            vec![
                u(p.id as u64),
                s(&p.user),
                s(&p.host),
                opt_s(p.db.as_deref()),
                s(&p.command),
                u(p.time),
                s(&p.state),
                opt_s(info.as_deref()),
                s("0.000"),
            ]
        })
        .collect();
    result(
        sess,
        &[
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress",
        ],
        &["Id", "Time"],
        rows,
        &None,
    )
}

/// SHOW WARNINGS / ERRORS, and SHOW COUNT(*) WARNINGS / ERRORS.
pub(super) fn show_warnings(
    sess: &mut Session,
    errors: &bool,
    count: &bool,
) -> Result<QueryResult, SqlError> {
    let list: Vec<&SqlError> = sess
        .warnings
        .iter()
        .filter(|w| !*errors || level_of(w) == "Error")
        .collect();
    if *count {
        let name = if *errors {
            "@@session.error_count"
        } else {
            "@@session.warning_count"
        };
        return Ok(QueryResult::Rows {
            columns: vec![ResultColumn::uint(name)],
            rows: vec![vec![u(list.len() as u64)]],
        });
    }
    let rows = list
        .iter()
        .map(|w| vec![s(level_of(w)), u(w.code as u64), s(&w.message)])
        .collect();
    result(sess, &["Level", "Code", "Message"], &["Code"], rows, &None)
}
