//! onelog's own information_schema tables, on the binlog and the commit path (PROCESS
//! privilege, as InnoDB's tables; without it they are empty):
//!
//! - ONELOG_BINLOG_FILES: each binlog file, its used size, the GTID state at its start
//!   (its GTID_LIST) and how many of its bytes are in the page cache (a replica or a
//!   `mariadb-binlog` reading a cached file reads memory);
//! - ONELOG_SYNC_HISTOGRAM: how long the log syncs took, in power-of-two buckets of
//!   microseconds;
//! - ONELOG_GROUP_COMMIT_HISTOGRAM: how many commits each group made durable together.

use onelog_engine::HistogramSnapshot;
use onelog_types::Value;

use crate::binder::VirtualColumn;
use crate::session::Session;
use crate::show::{s, u};
use crate::users::Priv;

type Rows = (Vec<VirtualColumn>, Vec<Vec<Value>>);
type RowsOf = fn(&Session) -> Vec<Vec<Value>>;

pub(super) fn rows(sess: &Session, table: &str) -> Option<Rows> {
    let (cols, rows): (Vec<VirtualColumn>, RowsOf) = match table {
        "ONELOG_BINLOG_FILES" => (
            vec![
                VirtualColumn::text("LOG_NAME"),
                VirtualColumn::int("FILE_SIZE"),
                VirtualColumn::text("START_GTID_LIST"),
                VirtualColumn::int("CACHED_BYTES"),
            ],
            file_rows,
        ),
        "ONELOG_SYNC_HISTOGRAM" => (
            vec![
                VirtualColumn::int("LOW_MICROSECONDS"),
                VirtualColumn::int("HIGH_MICROSECONDS"),
                VirtualColumn::int("SYNCS"),
            ],
            |sess| buckets(&sess.db.engine.commit_histograms().sync_micros),
        ),
        "ONELOG_GROUP_COMMIT_HISTOGRAM" => (
            vec![
                VirtualColumn::int("LOW_COMMITS"),
                VirtualColumn::int("HIGH_COMMITS"),
                VirtualColumn::int("GROUPS"),
            ],
            |sess| buckets(&sess.db.engine.commit_histograms().group_sizes),
        ),
        _ => return None,
    };
    let rows = if sess.account().has_global(Priv::PROCESS) {
        rows(sess)
    } else {
        Vec::new()
    };
    Some((cols, rows))
}

fn file_rows(sess: &Session) -> Vec<Vec<Value>> {
    sess.db
        .engine
        .binlog_file_details()
        .into_iter()
        .map(|f| {
            vec![
                s(&f.name),
                u(f.size),
                s(&onelog_binlog::format_gtid_list(&f.start_state)),
                f.cached.map_or(Value::Null, u),
            ]
        })
        .collect()
}

/// The buckets that have samples; the last one's upper bound is NULL when it is open.
fn buckets(h: &HistogramSnapshot) -> Vec<Vec<Value>> {
    h.buckets()
        .into_iter()
        .map(|b| {
            let high = if b.high == u64::MAX {
                Value::Null
            } else {
                u(b.high)
            };
            vec![u(b.low), high, u(b.count)]
        })
        .collect()
}
