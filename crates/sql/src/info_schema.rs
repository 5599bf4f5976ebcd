//! The read-only `information_schema`: SCHEMATA, TABLES, COLUMNS, STATISTICS, PARTITIONS,
//! PROCESSLIST, SESSION_VARIABLES, GLOBAL_VARIABLES, ENGINES, CHECK_CONSTRAINTS, PLUGINS,
//! USER_PRIVILEGES, SCHEMA_PRIVILEGES, TRIGGERS, VIEWS, ROUTINES, PARAMETERS, EVENTS and the
//! empty FILES (onelog has no tablespaces), and onelog's ONELOG_BINLOG_FILES,
//! ONELOG_SYNC_HISTOGRAM and ONELOG_GROUP_COMMIT_HISTOGRAM (`onelog.rs`), built from the
//! catalog and the server state when a statement reads them.

mod catalog;
mod innodb_trx;
mod keys;
mod onelog;
mod plugins;
mod privileges;
mod programs;
mod server;

pub(crate) use plugins::show_rows as plugin_rows;

use std::sync::Arc;

use onelog_engine::Catalog;
use onelog_types::Value;

use crate::binder::VirtualColumn;
use crate::session::Session;
use crate::users::{self, Priv};

pub(crate) fn visible_dbs(sess: &Session, cat: &Catalog) -> Vec<String> {
    let acc = sess.account();
    let mut v: Vec<String> = cat
        .databases
        .keys()
        .filter(|d| acc.has_global(Priv::SHOW_DB) || users::any_db_privilege(&acc, d))
        .cloned()
        .collect();
    v.push("information_schema".into());
    v.sort();
    v
}

/// Rows of an information_schema table.
pub fn info_schema(
    sess: &Session,
    cat: &Catalog,
    table: &str,
) -> Option<(Vec<VirtualColumn>, Vec<Vec<Value>>)> {
    let dbs = visible_dbs(sess, cat);
    let cx = Ctx {
        sess,
        cat,
        dbs: &dbs,
    };
    Some(match table {
        "SCHEMATA" => catalog::schemata(&cx),
        "TABLES" => catalog::tables(&cx),
        "COLUMNS" => catalog::columns(&cx),
        "STATISTICS" => catalog::statistics(&cx),
        "PROCESSLIST" => server::processlist(&cx),
        "SESSION_VARIABLES" => server::variables(&cx, false),
        "GLOBAL_VARIABLES" => server::variables(&cx, true),
        "ENGINES" => server::engines(&cx),
        "PARTITIONS" => catalog::partitions(&cx),
        "CHECK_CONSTRAINTS" => catalog::check_constraints(&cx),
        "FILES" => catalog::files(&cx),
        "TRIGGERS" => programs::triggers(&cx),
        "VIEWS" => programs::views(&cx),
        "ROUTINES" => programs::routines(&cx),
        "PARAMETERS" => programs::parameters(&cx),
        "EVENTS" => crate::events::info_schema(sess, cat, &dbs),
        "PLUGINS" => plugins::info_rows(sess),
        "INNODB_TRX" => innodb_trx::info_rows(sess),
        other => {
            return keys::rows(other, &visible_tables(cat, &dbs))
                .or_else(|| privileges::rows(sess, other))
                .or_else(|| onelog::rows(sess, other));
        }
    })
}

/// What every information_schema table is built from.
#[derive(Clone, Copy)]
pub(super) struct Ctx<'a> {
    pub sess: &'a Session,
    pub cat: &'a Catalog,
    /// The databases the session may see.
    pub dbs: &'a [String],
}

type Rows = (Vec<VirtualColumn>, Vec<Vec<Value>>);

/// Text columns named `names`.
fn text(names: &[&str]) -> Vec<VirtualColumn> {
    names.iter().map(|n| VirtualColumn::text(n)).collect()
}

/// The tables of the databases in `dbs`.
fn visible_tables(cat: &Catalog, dbs: &[String]) -> Vec<Arc<onelog_engine::TableDef>> {
    cat.tables
        .values()
        .filter(|t| dbs.contains(&t.db))
        .cloned()
        .collect()
}

/// The views of the databases in `dbs`.
fn visible_views(cat: &Catalog, dbs: &[String]) -> Vec<Arc<onelog_engine::StoredObject>> {
    cat.objects_of(onelog_engine::ObjectKind::View)
        .filter(|v| dbs.contains(&v.db))
        .cloned()
        .collect()
}

/// Text columns `names`, except `ints`, which are unsigned integers.
fn with_ints(names: &[&str], ints: &[&str]) -> Vec<VirtualColumn> {
    names
        .iter()
        .map(|n| {
            if ints.contains(n) {
                VirtualColumn::int(n)
            } else {
                VirtualColumn::text(n)
            }
        })
        .collect()
}

/// TABLE_TYPE of a table: BASE TABLE, or SEQUENCE.
pub(crate) fn table_type(t: &onelog_engine::TableDef) -> &'static str {
    if t.sequence {
        "SEQUENCE"
    } else {
        "BASE TABLE"
    }
}
