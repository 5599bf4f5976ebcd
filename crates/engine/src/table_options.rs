//! Table options (`ENGINE=`, `AUTO_INCREMENT=`, `DEFAULT CHARSET=`, `COMMENT=`, and the
//! create options such as `ROW_FORMAT=` or `STATS_PERSISTENT=`) as CREATE TABLE sets them
//! and ALTER TABLE changes them.
//!
//! Every table is stored in RocksDB whatever its options say: they are kept so that SHOW
//! CREATE TABLE, information_schema.TABLES and a dump give back what was declared, as
//! MariaDB does.

use onelog_types::Collation;
use serde::{Deserialize, Serialize};

use crate::catalog::TableDef;

/// The create options MariaDB shows after the default collation, in the order SHOW CREATE
/// TABLE prints them (COMMENT comes last, after these).
pub const CREATE_OPTION_ORDER: &[&str] = &[
    "MIN_ROWS",
    "MAX_ROWS",
    "AVG_ROW_LENGTH",
    "PACK_KEYS",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
    "CHECKSUM",
    "PAGE_CHECKSUM",
    "DELAY_KEY_WRITE",
    "ROW_FORMAT",
    "TRANSACTIONAL",
    "KEY_BLOCK_SIZE",
];

/// Table options set by one ALTER TABLE (None: unchanged).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableOptionSet {
    /// The storage engine's name as MariaDB spells it (`InnoDB`, `MyISAM`, ...).
    pub engine: Option<String>,
    pub comment: Option<String>,
    /// The default collation of columns added later.
    pub collation: Option<Collation>,
    /// `AUTO_INCREMENT=n`: the next value is at least n.
    pub auto_increment: Option<u64>,
    /// Create options by name (one of [`CREATE_OPTION_ORDER`]): Some(text) sets the value
    /// shown, None removes the option (`= DEFAULT`, or a value MariaDB does not show).
    pub create_options: Vec<(String, Option<String>)>,
}

impl TableOptionSet {
    /// Applies the options to a table's definition.
    pub fn apply(&self, t: &mut TableDef) {
        if let Some(e) = &self.engine {
            t.engine_name = e.clone();
        }
        if let Some(c) = &self.comment {
            t.comment = c.clone();
        }
        if let Some(c) = self.collation {
            t.collation = c;
        }
        if let Some(n) = self.auto_increment {
            t.auto_increment_start = Some(n);
        }
        for (name, value) in &self.create_options {
            t.create_options.retain(|(n, _)| n != name);
            if let Some(v) = value {
                t.create_options.push((name.clone(), v.clone()));
            }
        }
        t.create_options.sort_by_key(|(n, _)| {
            CREATE_OPTION_ORDER
                .iter()
                .position(|o| o == n)
                .unwrap_or(CREATE_OPTION_ORDER.len())
        });
    }
}

/// The time now in Unix seconds (create and update times, binlog expiry).
pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl TableDef {
    /// The create options as SHOW CREATE TABLE prints them (` ROW_FORMAT=DYNAMIC ...`, each
    /// with a leading space).
    pub fn create_options_sql(&self) -> String {
        self.create_options
            .iter()
            .map(|(n, v)| format!(" {n}={v}"))
            .collect()
    }

    /// The row format SHOW TABLE STATUS and information_schema.TABLES show (`Dynamic`
    /// unless `ROW_FORMAT=` says otherwise).
    pub fn row_format(&self) -> String {
        let f = self
            .create_options
            .iter()
            .find(|(n, _)| n == "ROW_FORMAT")
            .map_or("DYNAMIC", |(_, v)| v.as_str());
        let mut out = f[..1].to_string();
        out += &f[1..].to_ascii_lowercase();
        out
    }

    /// The create options as information_schema.TABLES.CREATE_OPTIONS shows them
    /// (`row_format=DYNAMIC stats_persistent=0`: lowercase names, space-separated).
    pub fn create_options_text(&self) -> String {
        self.create_options
            .iter()
            .map(|(n, v)| format!("{}={v}", n.to_ascii_lowercase()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}
