//! information_schema tables of stored objects: TRIGGERS, VIEWS, ROUTINES and PARAMETERS.

use super::{text, visible_views, with_ints, Ctx, Rows};
use crate::show::s;

pub(super) fn triggers(cx: &Ctx) -> Rows {
    let Ctx { cat, dbs, .. } = *cx;
    (
        with_ints(
            &[
                "TRIGGER_CATALOG",
                "TRIGGER_SCHEMA",
                "TRIGGER_NAME",
                "EVENT_MANIPULATION",
                "EVENT_OBJECT_CATALOG",
                "EVENT_OBJECT_SCHEMA",
                "EVENT_OBJECT_TABLE",
                "ACTION_ORDER",
                "ACTION_CONDITION",
                "ACTION_STATEMENT",
                "ACTION_ORIENTATION",
                "ACTION_TIMING",
                "ACTION_REFERENCE_OLD_TABLE",
                "ACTION_REFERENCE_NEW_TABLE",
                "ACTION_REFERENCE_OLD_ROW",
                "ACTION_REFERENCE_NEW_ROW",
                "CREATED",
                "SQL_MODE",
                "DEFINER",
                "CHARACTER_SET_CLIENT",
                "COLLATION_CONNECTION",
                "DATABASE_COLLATION",
            ],
            &["ACTION_ORDER"],
        ),
        crate::routines::info_rows(cat, "TRIGGERS", dbs).unwrap_or_default(),
    )
}

pub(super) fn views(cx: &Ctx) -> Rows {
    let Ctx { sess, cat, dbs } = *cx;
    (
        text(&[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "VIEW_DEFINITION",
            "CHECK_OPTION",
            "IS_UPDATABLE",
            "DEFINER",
            "SECURITY_TYPE",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "ALGORITHM",
        ]),
        visible_views(cat, dbs)
            .iter()
            .filter_map(|v| {
                let def = crate::views::ViewDef::decode(v).ok()?;
                let updatable = !crate::binder::binding_view()
                    && sess
                        .bind("", |b| {
                            crate::binder::bind_view_query(b.env(), &v.db, &def.query, &def.columns)
                        })
                        .is_ok_and(|(sel, _)| crate::views::ViewDef::updatable(&sel));
                Some(vec![
                    s("def"),
                    s(&v.db),
                    s(&v.name),
                    s(&def.query),
                    s(&def.check_option),
                    s(if updatable { "YES" } else { "NO" }),
                    s(&format!("{}@{}", def.definer_user, def.definer_host)),
                    s(&def.security),
                    s(&def.charset_client),
                    s(&def.collation_connection),
                    s(&def.algorithm),
                ])
            })
            .collect(),
    )
}

pub(super) fn routines(cx: &Ctx) -> Rows {
    let Ctx { cat, dbs, .. } = *cx;
    (
        with_ints(
            &[
                "SPECIFIC_NAME",
                "ROUTINE_CATALOG",
                "ROUTINE_SCHEMA",
                "ROUTINE_NAME",
                "ROUTINE_TYPE",
                "DATA_TYPE",
                "CHARACTER_MAXIMUM_LENGTH",
                "CHARACTER_OCTET_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "DATETIME_PRECISION",
                "CHARACTER_SET_NAME",
                "COLLATION_NAME",
                "DTD_IDENTIFIER",
                "ROUTINE_BODY",
                "ROUTINE_DEFINITION",
                "EXTERNAL_NAME",
                "EXTERNAL_LANGUAGE",
                "PARAMETER_STYLE",
                "IS_DETERMINISTIC",
                "SQL_DATA_ACCESS",
                "SQL_PATH",
                "SECURITY_TYPE",
                "CREATED",
                "LAST_ALTERED",
                "SQL_MODE",
                "ROUTINE_COMMENT",
                "DEFINER",
                "CHARACTER_SET_CLIENT",
                "COLLATION_CONNECTION",
                "DATABASE_COLLATION",
            ],
            &[
                "CHARACTER_MAXIMUM_LENGTH",
                "CHARACTER_OCTET_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "DATETIME_PRECISION",
            ],
        ),
        crate::routines::info_rows(cat, "ROUTINES", dbs).unwrap_or_default(),
    )
}

pub(super) fn parameters(cx: &Ctx) -> Rows {
    let Ctx { cat, dbs, .. } = *cx;
    (
        with_ints(
            &[
                "SPECIFIC_CATALOG",
                "SPECIFIC_SCHEMA",
                "SPECIFIC_NAME",
                "ORDINAL_POSITION",
                "PARAMETER_MODE",
                "PARAMETER_NAME",
                "DATA_TYPE",
                "CHARACTER_MAXIMUM_LENGTH",
                "CHARACTER_OCTET_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "DATETIME_PRECISION",
                "CHARACTER_SET_NAME",
                "COLLATION_NAME",
                "DTD_IDENTIFIER",
                "ROUTINE_TYPE",
            ],
            &[
                "ORDINAL_POSITION",
                "CHARACTER_MAXIMUM_LENGTH",
                "CHARACTER_OCTET_LENGTH",
                "NUMERIC_PRECISION",
                "NUMERIC_SCALE",
                "DATETIME_PRECISION",
            ],
        ),
        crate::routines::info_rows(cat, "PARAMETERS", dbs).unwrap_or_default(),
    )
}
