//! The catalog: databases, tables, columns and indexes.
//!
//! A [`Catalog`] is an immutable snapshot; every DDL statement builds a new one and swaps it
//! in atomically with the RocksDB batch that persists it. Catalog records are stored as JSON
//! under the `C` key prefix (see `keys.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use onelog_types::{Collation, ColumnType, Value};
use serde::{Deserialize, Serialize};

/// Identifies a table for the lifetime of the table (stable across renames).
pub type TableId = u32;
/// Identifies one index (primary or secondary) globally; it is the index's key prefix.
pub type IndexId = u32;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// Constant default (None: no DEFAULT clause; a nullable column then defaults to NULL).
    pub default: Option<Value>,
    pub auto_increment: bool,
    /// `DEFAULT CURRENT_TIMESTAMP` (and `ON UPDATE CURRENT_TIMESTAMP` if `on_update_now`).
    #[serde(default)]
    pub default_now: bool,
    #[serde(default)]
    pub on_update_now: bool,
    #[serde(default)]
    pub comment: String,
    /// An integer column's display width as declared (`INT(5)`; BOOLEAN is
    /// `tinyint(1)`): SHOW CREATE TABLE, COLUMN_TYPE and the result column length show it.
    /// None: the type's default width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_width: Option<u16>,
    /// An expression DEFAULT (`DEFAULT (a * 2)`, `DEFAULT uuid()`), as MariaDB prints it in
    /// SHOW CREATE TABLE (with the parentheses it shows, e.g. `(`a` * 2)`); it is parsed
    /// and evaluated for each row written without a value for the column. `default` is
    /// then None. Absent from catalogs written before expression defaults existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_expr: Option<String>,
    /// Numeric attributes beyond the type: ZEROFILL, and UNSIGNED on DECIMAL, FLOAT and
    /// DOUBLE (integer types carry UNSIGNED in their [`ColumnType`]).
    #[serde(default, skip_serializing_if = "NumAttrs::is_plain")]
    pub num: NumAttrs,
}

/// A numeric column's ZEROFILL and (for DECIMAL, FLOAT and DOUBLE) UNSIGNED attributes.
/// ZEROFILL implies UNSIGNED: values are shown padded with zeros to the display width, and
/// negative values are out of range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumAttrs {
    #[serde(default)]
    pub zerofill: bool,
    /// DECIMAL/FLOAT/DOUBLE UNSIGNED (also set by ZEROFILL).
    #[serde(default)]
    pub unsigned: bool,
    /// FLOAT(M,D) / DOUBLE(M,D): M digits in all, D of them after the point. Values are
    /// rounded to D decimals when stored and shown with D decimals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digits: Option<(u8, u8)>,
}

impl NumAttrs {
    pub fn is_plain(&self) -> bool {
        *self == NumAttrs::default()
    }
}

/// The value a new column takes in existing rows: its DEFAULT, else NULL for a nullable
/// column, else the type's zero value (MariaDB's implicit default).
pub fn implicit_default(c: &ColumnDef) -> Value {
    if let Some(d) = &c.default {
        return d.clone();
    }
    if c.nullable {
        return Value::Null;
    }
    use onelog_types::{Date, DateTime, Decimal, Time};
    let zero_date = Date {
        year: 0,
        month: 0,
        day: 0,
    };
    match c.ty {
        ColumnType::Int { unsigned: true, .. } => Value::UInt(0),
        ColumnType::Int { .. } => Value::Int(0),
        ColumnType::Float | ColumnType::Double => Value::Double(0.0),
        ColumnType::Decimal { scale, .. } => Value::Decimal(Decimal::new(0, scale)),
        ColumnType::Char { .. } | ColumnType::Varchar { .. } | ColumnType::Blob { .. } => {
            Value::Bytes(Vec::new())
        }
        ColumnType::Date => Value::Date(zero_date),
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => Value::DateTime(DateTime {
            date: zero_date,
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
        }),
        ColumnType::Time { .. } => Value::Time(Time::from_micros(0)),
        // An ENUM's first value, a SET's empty set.
        ColumnType::Enum { elems, .. } => Value::Bytes(elems.enum_text(1)),
        ColumnType::Set { .. } => Value::Bytes(Vec::new()),
        ColumnType::Bit { .. } | ColumnType::Year => Value::UInt(0),
        ColumnType::Uuid | ColumnType::Inet6 => {
            let f = c.ty.fixed_bin().expect("matched");
            Value::Bytes(f.format(&[0; 16]).into_bytes())
        }
    }
}

/// A CHECK constraint. Column constraints (`a INT CHECK (a > 0)`, and JSON's implicit
/// `CHECK (json_valid(j))`) are named after their column and shown in its definition;
/// table constraints have a name (`CONSTRAINT_n` when none was given).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckDef {
    pub name: String,
    /// The condition as MariaDB prints it (`` `a` > 0 ``), parsed again to evaluate it.
    pub expr: String,
    /// Whether it is a column constraint (of the column `name`).
    #[serde(default)]
    pub column_level: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    pub id: IndexId,
    /// `PRIMARY` for the primary key.
    pub name: String,
    /// Positions into `TableDef::columns`.
    pub columns: Vec<usize>,
    /// Optional prefix length per column (`KEY (c(10))`), in characters.
    #[serde(default)]
    pub prefix_lens: Vec<Option<u32>>,
    pub unique: bool,
    pub primary: bool,
}

impl IndexDef {
    /// The primary index of a table without a declared primary key: over the hidden row
    /// id (no columns); the engine assigns its id.
    pub fn hidden_primary() -> IndexDef {
        IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![],
            prefix_lens: vec![],
            unique: true,
            primary: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub id: TableId,
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// `indexes[0]` is always the primary index. When the table has no declared primary key,
    /// it is a hidden one over an internal row id (`primary == true`, `columns` empty,
    /// `hidden_pk == true`).
    pub indexes: Vec<IndexDef>,
    pub hidden_pk: bool,
    #[serde(default)]
    pub comment: String,
    /// `ENGINE=` as given (informational: every table is stored in RocksDB).
    #[serde(default)]
    pub engine_name: String,
    /// AUTO_INCREMENT= table option (first value to hand out), if given.
    #[serde(default)]
    pub auto_increment_start: Option<u64>,
    /// The table's default collation (`DEFAULT CHARSET=... COLLATE=...`): that of columns
    /// added without one. Tables created before onelog recorded collations read as
    /// [`Collation::LEGACY`] (utf8mb4_bin), like their text columns.
    #[serde(default = "Collation::legacy")]
    pub collation: Collation,
    /// CHECK constraints: column constraints in column order, then table constraints.
    #[serde(default)]
    pub checks: Vec<CheckDef>,
    /// FOREIGN KEY constraints of this (child) table (see `foreign_keys.rs`).
    #[serde(default)]
    pub foreign_keys: Vec<crate::ForeignKeyDef>,
    /// A sequence (`CREATE SEQUENCE`): MariaDB's eight sequence columns and one row, see
    /// `sequence.rs`.
    #[serde(default)]
    pub sequence: bool,
    /// Create options other than ENGINE, AUTO_INCREMENT, the collation and COMMENT
    /// (`ROW_FORMAT`, `STATS_PERSISTENT`, ...: see `table_options.rs`), in the order SHOW
    /// CREATE TABLE prints them, with their values as it prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub create_options: Vec<(String, String)>,
    /// When CREATE TABLE or the last ALTER TABLE wrote the definition (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_time: Option<i64>,
}

impl TableDef {
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn primary(&self) -> &IndexDef {
        &self.indexes[0]
    }

    pub fn index_by_name(&self, name: &str) -> Option<(usize, &IndexDef)> {
        self.indexes
            .iter()
            .enumerate()
            .find(|(_, i)| i.name.eq_ignore_ascii_case(name))
    }

    /// The AUTO_INCREMENT column, if any.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }
}

/// The kinds of named schema objects the engine stores without interpreting them: the SQL
/// layer owns their definitions. Views share the table namespace of their database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ObjectKind {
    View,
    Function,
    Procedure,
    Trigger,
    Event,
}

impl ObjectKind {
    /// The byte naming the kind in the object's catalog key (`keys::object_key`).
    pub fn tag(self) -> u8 {
        match self {
            ObjectKind::View => b'v',
            ObjectKind::Function => b'f',
            ObjectKind::Procedure => b'p',
            ObjectKind::Trigger => b'g',
            ObjectKind::Event => b'e',
        }
    }

    /// The keyword of the kind (`DROP VIEW`, `SHOW CREATE FUNCTION`).
    pub fn keyword(self) -> &'static str {
        match self {
            ObjectKind::View => "VIEW",
            ObjectKind::Function => "FUNCTION",
            ObjectKind::Procedure => "PROCEDURE",
            ObjectKind::Trigger => "TRIGGER",
            ObjectKind::Event => "EVENT",
        }
    }

    /// The name an object is found by: routine and event names compare case-insensitively,
    /// view and trigger names case-sensitively (as table names with lower_case_table_names=0).
    pub fn lookup_name(self, name: &str) -> String {
        match self {
            ObjectKind::Function | ObjectKind::Procedure | ObjectKind::Event => name.to_lowercase(),
            ObjectKind::View | ObjectKind::Trigger => name.to_string(),
        }
    }
}

/// A view, stored routine, trigger or event: its name and the SQL layer's definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredObject {
    pub kind: ObjectKind,
    pub db: String,
    /// As created (lookups go through [`ObjectKind::lookup_name`]).
    pub name: String,
    /// The table a trigger belongs to: dropped with the table and following its renames.
    #[serde(default)]
    pub table: Option<String>,
    /// The definition, encoded by the SQL layer.
    pub definition: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatabaseDef {
    pub name: String,
}

/// An immutable view of every database and table. Names compare case-sensitively for
/// databases and tables (as MariaDB on Linux with lower_case_table_names=0).
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    pub databases: BTreeMap<String, DatabaseDef>,
    /// (db, table) -> definition.
    pub tables: BTreeMap<(String, String), Arc<TableDef>>,
    pub next_table_id: TableId,
    pub next_index_id: IndexId,
    /// (kind, db, lookup name) -> object.
    pub objects: BTreeMap<(ObjectKind, String, String), Arc<StoredObject>>,
}

impl Catalog {
    pub fn table(&self, db: &str, name: &str) -> Option<&Arc<TableDef>> {
        self.tables.get(&(db.to_string(), name.to_string()))
    }

    pub fn table_by_id(&self, id: TableId) -> Option<&Arc<TableDef>> {
        self.tables.values().find(|t| t.id == id)
    }

    pub fn has_database(&self, db: &str) -> bool {
        self.databases.contains_key(db)
    }

    pub fn object(&self, kind: ObjectKind, db: &str, name: &str) -> Option<&Arc<StoredObject>> {
        self.objects
            .get(&(kind, db.to_string(), kind.lookup_name(name)))
    }

    /// Objects of one kind in one database, in name order.
    pub fn objects_in<'a>(
        &'a self,
        kind: ObjectKind,
        db: &'a str,
    ) -> impl Iterator<Item = &'a Arc<StoredObject>> + 'a {
        self.objects
            .range((kind, db.to_string(), String::new())..)
            .take_while(move |((k, d, _), _)| *k == kind && d == db)
            .map(|(_, o)| o)
    }

    /// Objects of one kind in every database.
    pub fn objects_of(&self, kind: ObjectKind) -> impl Iterator<Item = &Arc<StoredObject>> + '_ {
        self.objects
            .iter()
            .filter(move |((k, _, _), _)| *k == kind)
            .map(|(_, o)| o)
    }

    /// Tables of one database, in name order.
    pub fn tables_in<'a>(&'a self, db: &'a str) -> impl Iterator<Item = &'a Arc<TableDef>> + 'a {
        self.tables
            .range((db.to_string(), String::new())..)
            .take_while(move |((d, _), _)| d == db)
            .map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catalog records written before collations were recorded: text columns and the
    /// table read as utf8mb4_bin, the bytewise order their index keys were built in.
    #[test]
    fn records_without_collations_read_as_legacy() {
        let json = r#"{"id":1,"db":"d","name":"t","columns":[
            {"name":"a","ty":{"Varchar":{"len":10,"binary":false}},"nullable":false,
             "default":null,"auto_increment":false}],
            "indexes":[{"id":5,"name":"PRIMARY","columns":[0],"unique":true,"primary":true}],
            "hidden_pk":false}"#;
        let t: TableDef = serde_json::from_str(json).unwrap();
        assert_eq!(t.collation, Collation::LEGACY);
        assert_eq!(t.columns[0].ty.collation(), Some(Collation::Utf8mb4Bin));
        assert!(!t.columns[0].ty.is_ci());
    }
}
