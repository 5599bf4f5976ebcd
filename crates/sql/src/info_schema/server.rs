//! information_schema tables of the server's state: PROCESSLIST, SESSION_VARIABLES,
//! GLOBAL_VARIABLES and ENGINES.

use onelog_types::Value;

use super::{text, Ctx, Rows};
use crate::binder::VirtualColumn;
use crate::parser::Scope;
use crate::show::{engine_rows, opt_s, s, u, variable_rows};

pub(super) fn processlist(cx: &Ctx) -> Rows {
    let Ctx { sess, .. } = *cx;
    let mut cols = text(&[
        "ID", "USER", "HOST", "DB", "COMMAND", "TIME", "STATE", "INFO",
    ]);
    cols[0].ty = VirtualColumn::int("x").ty;
    cols[5].ty = VirtualColumn::int("x").ty;
    let rows = sess
        .db
        .process_list()
        .into_iter()
        .map(|p| {
            vec![
                u(p.id as u64),
                s(&p.user),
                s(&p.host),
                opt_s(p.db.as_deref()),
                s(&p.command),
                u(p.time),
                s(&p.state),
                opt_s(p.info.as_deref()),
            ]
        })
        .collect();
    (cols, rows)
}

/// SESSION_VARIABLES, or GLOBAL_VARIABLES (`global`).
pub(super) fn variables(cx: &Ctx, global: bool) -> Rows {
    let Ctx { sess, .. } = *cx;
    let scope = if global { Some(Scope::Global) } else { None };
    (
        text(&["VARIABLE_NAME", "VARIABLE_VALUE"]),
        variable_rows(sess, scope)
            .into_iter()
            .map(|(n, v)| {
                vec![
                    s(&n.to_uppercase()),
                    Value::Bytes(crate::expr::to_bytes(&v)),
                ]
            })
            .collect(),
    )
}

pub(super) fn engines(_cx: &Ctx) -> Rows {
    (
        text(&[
            "ENGINE",
            "SUPPORT",
            "COMMENT",
            "TRANSACTIONS",
            "XA",
            "SAVEPOINTS",
        ]),
        engine_rows(),
    )
}
