//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use onelog_engine::*;
use onelog_types::{Collation, ColumnType, SqlError, Value};

/// The DDL statements the tests issue, re-created from their text during recovery.
pub struct TestReplayer;

pub fn accounts_table() -> TableDef {
    let int = ColumnType::Int {
        bytes: 8,
        unsigned: false,
    };
    TableDef {
        id: 0,
        db: "test".into(),
        name: "accounts".into(),
        columns: vec![
            col("id", int, false),
            col(
                "owner",
                ColumnType::Varchar {
                    len: 40,
                    binary: false,
                    collation: onelog_types::Collation::Utf8mb4GeneralCi,
                },
                true,
            ),
            col("balance", int, false),
        ],
        indexes: vec![
            IndexDef {
                id: 0,
                name: "PRIMARY".into(),
                columns: vec![0],
                prefix_lens: vec![],
                unique: true,
                primary: true,
            },
            IndexDef {
                id: 0,
                name: "owner".into(),
                columns: vec![1],
                prefix_lens: vec![],
                unique: false,
                primary: false,
            },
        ],
        hidden_pk: false,
        comment: String::new(),
        engine_name: "InnoDB".into(),
        auto_increment_start: None,
        collation: onelog_types::Collation::Utf8mb4GeneralCi,
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        sequence: false,
        create_options: Vec::new(),
        create_time: None,
    }
}

/// `names`: a utf8mb4_general_ci VARCHAR primary key `code` and a unique general_ci
/// `nick` (index 1, "nick").
pub fn names_table() -> TableDef {
    let ci = ColumnType::varchar(10, Collation::Utf8mb4GeneralCi);
    let mut t = accounts_table();
    t.name = "names".into();
    t.columns = vec![col("code", ci, false), col("nick", ci, true)];
    t.indexes[1].name = "nick".into();
    t.indexes[1].unique = true;
    t
}

pub fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable,
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

pub fn ddl_for(sql: &str) -> Ddl {
    match sql {
        "CREATE DATABASE test" => Ddl::CreateDatabase {
            name: "test".into(),
            if_not_exists: false,
        },
        "CREATE TABLE accounts" => Ddl::CreateTable {
            def: accounts_table(),
            if_not_exists: false,
            or_replace: false,
        },
        "CREATE TABLE names" => Ddl::CreateTable {
            def: names_table(),
            if_not_exists: false,
            or_replace: false,
        },
        "CREATE INDEX bal ON accounts (balance)" => Ddl::AlterTable {
            db: "test".into(),
            table: "accounts".into(),
            ops: vec![AlterOp::AddIndex(IndexDef {
                id: 0,
                name: "bal".into(),
                columns: vec![2],
                prefix_lens: vec![],
                unique: false,
                primary: false,
            })],
            convert: None,
        },
        "ALTER TABLE accounts MODIFY balance VARCHAR(20)" => Ddl::AlterTable {
            db: "test".into(),
            table: "accounts".into(),
            ops: vec![AlterOp::ChangeColumn {
                name: "balance".into(),
                def: col(
                    "balance",
                    ColumnType::Varchar {
                        len: 20,
                        binary: false,
                        collation: Collation::Utf8mb4GeneralCi,
                    },
                    false,
                ),
                position: None,
            }],
            convert: Some(Converter(std::sync::Arc::new(ToText))),
        },
        other => panic!("test replayer does not know `{other}`"),
    }
}

/// Converts values to their text (a test stand-in for the SQL layer's conversions).
pub struct ToText;

impl ColumnConverter for ToText {
    fn convert(
        &self,
        _from: &ColumnDef,
        _to: &ColumnDef,
        value: Value,
        _row: u64,
    ) -> std::result::Result<Value, SqlError> {
        Ok(match value {
            Value::Null => Value::Null,
            v => Value::str(&v.to_string()),
        })
    }
}

impl DdlReplayer for TestReplayer {
    fn replay(&self, engine: &Engine, _db: &str, sql: &str) -> Result<()> {
        engine.ddl_replay("test", sql, ddl_for(sql))
    }
}

pub fn open(dir: &Path, mode: LogMode) -> Arc<Engine> {
    let opts = EngineOptions {
        datadir: dir.to_path_buf(),
        mode,
        max_binlog_size: 1 << 20,
        lock_wait_timeout: std::time::Duration::from_secs(2),
        ..Default::default()
    };
    Engine::open(opts, &TestReplayer).expect("open engine")
}

pub fn run_ddl(e: &Engine, sql: &str) {
    e.ddl("test", sql, ddl_for(sql)).expect(sql);
}

pub fn setup(e: &Engine) {
    run_ddl(e, "CREATE DATABASE test");
    run_ddl(e, "CREATE TABLE accounts");
}

pub fn row(id: i64, owner: &str, balance: i64) -> Vec<Value> {
    vec![Value::Int(id), Value::str(owner), Value::Int(balance)]
}

/// Every row of accounts, in primary key order.
pub fn all_rows(e: &Arc<Engine>) -> Vec<Vec<Value>> {
    let mut t = e.begin(Isolation::RepeatableRead);
    let def = t.open_table("test", "accounts").unwrap();
    let rows = t
        .scan(&def, 0, KeyRange::all(), ScanOptions::default())
        .unwrap()
        .collect::<Result<Vec<_>>>()
        .unwrap();
    t.commit().unwrap();
    rows
}
