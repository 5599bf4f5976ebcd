//! Views: `CREATE`/`ALTER`/`DROP VIEW` and `SHOW CREATE VIEW`.
//!
//! A view is a [`StoredObject`] of kind `View` in the engine's catalog; its definition is
//! a [`ViewDef`] as JSON:
//!
//! | field                  | meaning                                                    |
//! |------------------------|------------------------------------------------------------|
//! | `columns`              | the explicit column list (empty: the query's column names) |
//! | `query`                | the query's source text, bound in the view's database      |
//! | `algorithm`            | UNDEFINED, MERGE or TEMPTABLE                              |
//! | `definer_user`, `definer_host` | the definer account                                |
//! | `security`             | DEFINER or INVOKER                                         |
//! | `check_option`         | NONE, CASCADED or LOCAL                                    |
//! | `charset_client`, `collation_connection` | the creating session's                   |
//!
//! The statement is logged as MariaDB logs it, with every option spelled out
//! (`CREATE ALGORITHM=UNDEFINED DEFINER=`u`@`h` SQL SECURITY DEFINER VIEW ...`), so a
//! replica and crash recovery rebuild the same definition from the text.

use onelog_engine::{Ddl, ObjectKind, StoredObject};
use onelog_types::{code, SqlError, Value};
use serde::{Deserialize, Serialize};

use crate::parser::{Parsed, ViewStmt};
use crate::session::Session;
use crate::users::Priv;
use crate::{sql_err, QueryResult};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    #[serde(default)]
    pub columns: Vec<String>,
    pub query: String,
    pub algorithm: String,
    pub definer_user: String,
    pub definer_host: String,
    pub security: String,
    pub check_option: String,
    pub charset_client: String,
    pub collation_connection: String,
}

/// Quotes an identifier with backticks (doubling those inside).
pub(crate) fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

impl ViewDef {
    pub fn decode(obj: &StoredObject) -> Result<ViewDef, SqlError> {
        serde_json::from_str(&obj.definition).map_err(|e| {
            sql_err(
                code::ER_UNKNOWN_ERROR,
                format!("Corrupt definition of view {}.{}: {e}", obj.db, obj.name),
            )
        })
    }

    /// `DEFINER` as `SHOW CREATE VIEW` prints it.
    pub fn definer_sql(&self) -> String {
        format!(
            "{}@{}",
            quote(&self.definer_user),
            quote(&self.definer_host)
        )
    }

    /// The statement after `CREATE` / `ALTER`: options, name, columns, query, check option.
    pub fn statement_body(&self, name_sql: &str) -> String {
        let mut s = format!(
            "ALGORITHM={} DEFINER={} SQL SECURITY {} VIEW {name_sql}",
            self.algorithm,
            self.definer_sql(),
            self.security
        );
        if !self.columns.is_empty() {
            let cols: Vec<String> = self.columns.iter().map(|c| quote(c)).collect();
            s.push_str(&format!(" ({})", cols.join(",")));
        }
        s.push_str(" AS ");
        s.push_str(&self.query);
        if self.check_option != "NONE" {
            s.push_str(&format!(" WITH {} CHECK OPTION", self.check_option));
        }
        s
    }

    /// What `SHOW CREATE VIEW` shows.
    pub fn create_sql(&self, name: &str) -> String {
        format!("CREATE {}", self.statement_body(&quote(name)))
    }

    /// Whether rows can be changed through the view (information_schema.VIEWS): one
    /// table, no grouping, DISTINCT, LIMIT, set operation or window function, and at least
    /// one column that is a column of the table.
    pub fn updatable(sel: &crate::binder::Select) -> bool {
        crate::view_dml::updatable_target(sel).is_some()
    }
}

/// The definition a `CREATE VIEW` statement gives, for the definer `definer`.
pub(crate) fn view_def(
    v: &ViewStmt,
    definer: (String, String),
    charset: (String, String),
) -> ViewDef {
    ViewDef {
        columns: v.columns.clone(),
        query: v.query_text.clone(),
        algorithm: v.algorithm.clone().unwrap_or_else(|| "UNDEFINED".into()),
        definer_user: definer.0,
        definer_host: definer.1,
        security: v.security.clone().unwrap_or_else(|| "DEFINER".into()),
        check_option: v.check_option.clone().unwrap_or_else(|| "NONE".into()),
        charset_client: charset.0,
        collation_connection: charset.1,
    }
}

/// The DDL of a `CREATE VIEW` / `ALTER VIEW` (of view `db`.`name` defined as `def`) and
/// the text it is logged with.
pub(crate) fn create_ddl(v: &ViewStmt, db: &str, def: &ViewDef) -> (Ddl, String) {
    let name_sql = match &v.db {
        Some(d) => format!("{}.{}", quote(d), quote(&v.name)),
        None => quote(&v.name),
    };
    let verb = if v.alter {
        "ALTER"
    } else if v.or_replace {
        "CREATE OR REPLACE"
    } else {
        "CREATE"
    };
    let text = format!("{verb} {}", def.statement_body(&name_sql));
    let obj = StoredObject {
        kind: ObjectKind::View,
        db: db.to_string(),
        name: v.name.clone(),
        table: None,
        definition: serde_json::to_string(def).expect("serialise view"),
    };
    let ddl = Ddl::CreateObject {
        obj,
        or_replace: v.or_replace || v.alter,
        if_not_exists: v.if_not_exists,
    };
    (ddl, text)
}

/// The DDL of a `DROP VIEW`, names qualified with `current` when they are not.
pub(crate) fn drop_ddl(
    names: &[(Option<String>, String)],
    if_exists: bool,
    current: Option<&str>,
) -> Result<Ddl, SqlError> {
    let mut out = Vec::with_capacity(names.len());
    for (d, n) in names {
        let d = match d {
            Some(d) => d.clone(),
            None => current
                .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected"))?
                .to_string(),
        };
        out.push((d, n.clone()));
    }
    Ok(Ddl::DropObjects {
        kind: ObjectKind::View,
        names: out,
        if_exists,
    })
}

impl Session {
    fn view_db(&self, db: &Option<String>) -> Result<String, SqlError> {
        match db {
            Some(d) => Ok(d.clone()),
            None => self
                .current_db()
                .map(str::to_string)
                .ok_or_else(|| sql_err(code::ER_NO_DB_ERROR, "No database selected")),
        }
    }

    /// `CREATE [OR REPLACE] VIEW` / `ALTER VIEW`.
    pub(crate) fn create_view(&mut self, v: &ViewStmt) -> Result<QueryResult, SqlError> {
        self.check_server_read_only()?;
        let db = self.view_db(&v.db)?;
        let cat = self.db.engine.catalog();
        if !cat.has_database(&db) {
            return Err(sql_err(
                code::ER_BAD_DB_ERROR,
                format!("Unknown database '{db}'"),
            ));
        }
        if v.alter && cat.object(ObjectKind::View, &db, &v.name).is_none() {
            return Err(sql_err(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{}' doesn't exist", v.name),
            ));
        }
        let me = (self.user.clone(), self.account_host.clone());
        let definer = match &v.definer {
            Some(Some(d)) => d.clone(),
            _ => me.clone(),
        };
        if definer != me && !self.internal && !self.account().has_global(Priv::SUPER) {
            return Err(sql_err(
                code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                "Access denied; you need (at least one of) the SUPER, SET USER privilege(s) for this operation",
            ));
        }
        // The query must bind in the view's database, name its columns once, read only
        // what the creator may read, and not read the view itself.
        let (sel, names) = self.bind(&v.query_text, |b| {
            crate::binder::bind_view_query(b.env(), &db, &v.query_text, &v.columns)
        })?;
        for (i, n) in names.iter().enumerate() {
            if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
                return Err(sql_err(
                    code::ER_DUP_FIELDNAME,
                    format!("Duplicate column name '{n}'"),
                ));
            }
        }
        let mut views = Vec::new();
        crate::binder::views_read(&sel, &mut views);
        if views.iter().any(|(d, n)| *d == db && *n == v.name) {
            // MariaDB binds the new query with the view being replaced out of the way.
            return Err(sql_err(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{}' doesn't exist", v.name),
            ));
        }
        let mut read = Vec::new();
        crate::binder::tables_read(&sel, &mut read);
        if let Some((_, t)) = read.iter().find(|(d, t)| self.is_temp_table(d, t)) {
            return Err(sql_err(
                1352,
                format!("View's SELECT refers to a temporary table '{t}'"),
            ));
        }
        read.clear();
        crate::binder::tables_checked(&sel, &mut read);
        self.check_tables(&read, Priv::SELECT)?;
        if v.check_option.is_some() && !ViewDef::updatable(&sel) {
            return Err(sql_err(
                code::ER_VIEW_NONUPD_CHECK,
                format!("CHECK OPTION on non-updatable view `{db}`.`{}`", v.name),
            ));
        }
        let charset = (
            var_text(self, "character_set_client"),
            var_text(self, "collation_connection"),
        );
        let def = view_def(v, definer, charset);
        let (ddl, text) = create_ddl(v, &db, &def);
        self.run_ddl(&text, ddl, Vec::new())
    }

    /// `DROP VIEW [IF EXISTS] v, ...`: 4092 names the missing ones; a table is not a view.
    pub(crate) fn drop_view(
        &mut self,
        names: &[(Option<String>, String)],
        if_exists: bool,
        p: &Parsed,
    ) -> Result<QueryResult, SqlError> {
        let ddl = drop_ddl(names, if_exists, self.current_db())?;
        self.run_ddl(&p.text, ddl, Vec::new())
    }

    /// `SHOW CREATE VIEW` (and `SHOW CREATE TABLE` of a view).
    pub(crate) fn show_create_view(
        &mut self,
        db: &Option<String>,
        name: &str,
    ) -> Result<QueryResult, SqlError> {
        let d = self.view_db(db)?;
        let cat = self.db.engine.catalog();
        let Some(obj) = cat.object(ObjectKind::View, &d, name) else {
            if cat.table(&d, name).is_some() {
                return Err(sql_err(
                    code::ER_WRONG_OBJECT,
                    format!("'{d}.{name}' is not of type 'VIEW'"),
                ));
            }
            return Err(sql_err(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{d}.{name}' doesn't exist"),
            ));
        };
        self.check_table_privs(&[(d.clone(), name.to_string())], Priv::SHOW_VIEW.0)?;
        let def = ViewDef::decode(obj)?;
        let s = |x: &str| Value::Bytes(x.as_bytes().to_vec());
        let row = vec![
            s(&obj.name),
            s(&def.create_sql(&obj.name)),
            s(&def.charset_client),
            s(&def.collation_connection),
        ];
        crate::show::result(
            self,
            &[
                "View",
                "Create View",
                "character_set_client",
                "collation_connection",
            ],
            &[],
            vec![row],
            &None,
        )
    }
}

/// A table definition describing view `db`.`name`'s columns (SHOW COLUMNS, DESCRIBE,
/// information_schema.COLUMNS): names, types and nullability of its query's result, no
/// keys. None when there is no such view; 1356 when its query no longer binds.
pub(crate) fn view_table_def(
    env: &dyn crate::binder::BindEnv,
    cat: &onelog_engine::Catalog,
    db: &str,
    name: &str,
) -> Result<Option<onelog_engine::TableDef>, SqlError> {
    let Some(obj) = cat.object(ObjectKind::View, db, name) else {
        return Ok(None);
    };
    let def = ViewDef::decode(obj)?;
    let (sel, names) = crate::binder::bind_view_query(env, db, &def.query, &def.columns)
        .map_err(|_| crate::binder::invalid_view(db, name))?;
    let columns = sel
        .columns
        .iter()
        .zip(names)
        .map(|(c, n)| column_of_result(n, c))
        .collect();
    Ok(Some(onelog_engine::TableDef {
        id: 0,
        db: db.to_string(),
        name: obj.name.clone(),
        columns,
        indexes: vec![onelog_engine::IndexDef::hidden_primary()],
        hidden_pk: true,
        comment: "VIEW".into(),
        engine_name: String::new(),
        auto_increment_start: None,
        collation: onelog_types::Collation::Utf8mb4GeneralCi,
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        sequence: false,
        create_options: Vec::new(),
        create_time: None,
    }))
}

/// The plain column (no default, no key) that holds a query's result column `c`: what a
/// view shows and what `CREATE ... SELECT` creates. A NULL-typed result gets the type
/// NULLs are stored as.
pub(crate) fn column_of_result(name: String, c: &crate::ResultColumn) -> onelog_engine::ColumnDef {
    onelog_engine::ColumnDef {
        name,
        ty: if c.null_type {
            crate::binder::NULL_STORED
        } else {
            c.ty
        },
        nullable: c.nullable,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        default_expr: None,
        comment: String::new(),
        display_width: None,
        num: Default::default(),
    }
}

fn var_text(s: &Session, name: &str) -> String {
    match s.get_var(None, name) {
        Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => "utf8mb4".into(),
    }
}
