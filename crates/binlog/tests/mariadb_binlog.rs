//! The real `mariadb-binlog` (MariaDB 10.11) must read what onelog writes: proof that the
//! events are byte-correct.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use onelog_binlog::event::{Query, QueryStatus};
use onelog_binlog::export::export_dir;
use onelog_binlog::{
    Binlog, BinlogOptions, ColumnDef, EventGroup, LogPos, Naming, Preallocate, RealFs, TableDef,
};
use onelog_types::{ColumnType, Date, DateTime, Decimal, Time, Value};

const TOOL: &str = "/usr/bin/mariadb-binlog";

fn tool_available() -> bool {
    if Path::new(TOOL).exists() {
        return true;
    }
    eprintln!("NOTICE: {TOOL} is missing (apt-get install mariadb-client); test skipped");
    false
}

fn all_types_table() -> TableDef {
    let col = |name: &str, ty| ColumnDef {
        name: name.into(),
        ty,
        nullable: name != "id",
    };
    TableDef {
        db: "shop".into(),
        name: "every_type".into(),
        columns: vec![
            col(
                "id",
                ColumnType::Int {
                    bytes: 4,
                    unsigned: false,
                },
            ),
            col(
                "ti",
                ColumnType::Int {
                    bytes: 1,
                    unsigned: false,
                },
            ),
            col(
                "su",
                ColumnType::Int {
                    bytes: 2,
                    unsigned: true,
                },
            ),
            col(
                "mi",
                ColumnType::Int {
                    bytes: 3,
                    unsigned: false,
                },
            ),
            col(
                "bu",
                ColumnType::Int {
                    bytes: 8,
                    unsigned: true,
                },
            ),
            col(
                "bs",
                ColumnType::Int {
                    bytes: 8,
                    unsigned: false,
                },
            ),
            col("f", ColumnType::Float),
            col("d", ColumnType::Double),
            col(
                "de",
                ColumnType::Decimal {
                    precision: 20,
                    scale: 6,
                },
            ),
            col(
                "c",
                ColumnType::Char {
                    len: 10,
                    binary: false,
                    collation: onelog_types::Collation::Utf8mb4GeneralCi,
                },
            ),
            col(
                "c255",
                ColumnType::Char {
                    len: 255,
                    binary: false,
                    collation: onelog_types::Collation::Utf8mb4GeneralCi,
                },
            ),
            col(
                "vc",
                ColumnType::Varchar {
                    len: 100,
                    binary: false,
                    collation: onelog_types::Collation::Utf8mb4GeneralCi,
                },
            ),
            col(
                "vb",
                ColumnType::Varchar {
                    len: 300,
                    binary: true,
                    collation: onelog_types::Collation::Binary,
                },
            ),
            col(
                "tx",
                ColumnType::Blob {
                    len_bytes: 2,
                    binary: false,
                    collation: onelog_types::Collation::Utf8mb4GeneralCi,
                },
            ),
            col(
                "bl",
                ColumnType::Blob {
                    len_bytes: 3,
                    binary: true,
                    collation: onelog_types::Collation::Binary,
                },
            ),
            col("dt", ColumnType::Date),
            col("tm", ColumnType::Time { fsp: 3 }),
            col("dtm", ColumnType::DateTime { fsp: 6 }),
            col("ts", ColumnType::Timestamp { fsp: 2 }),
            col("dtm0", ColumnType::DateTime { fsp: 0 }),
        ],
        primary_key: vec![0],
    }
}

fn row(id: i32, text: &str) -> Vec<Value> {
    vec![
        Value::Int(id as i64),
        Value::Int(-5),
        Value::UInt(65535),
        Value::Int(-8_388_608),
        Value::UInt(u64::MAX),
        Value::Int(i64::MIN),
        Value::Double(1.5),
        Value::Double(-2.25),
        Value::Decimal("-1234.567891".parse::<Decimal>().unwrap()),
        Value::str("abc"),
        Value::str("wide"),
        Value::str(text),
        Value::Bytes(vec![0, 0xff]),
        Value::str("some text"),
        Value::Bytes(vec![1, 2]),
        Value::Date(Date {
            year: 2024,
            month: 2,
            day: 29,
        }),
        Value::Time(Time {
            negative: true,
            hours: 838,
            minute: 59,
            second: 59,
            micro: 999_000,
        }),
        Value::DateTime(DateTime {
            date: Date {
                year: 2024,
                month: 1,
                day: 2,
            },
            hour: 3,
            minute: 4,
            second: 5,
            micro: 123_456,
        }),
        Value::DateTime(DateTime::from_unix(1_704_164_645, 120_000)),
        Value::DateTime(DateTime {
            date: Date {
                year: 1999,
                month: 12,
                day: 31,
            },
            hour: 23,
            minute: 59,
            second: 58,
            micro: 0,
        }),
    ]
}

fn write_workload(b: &Binlog) {
    let t = all_types_table();
    let mut ddl = vec![
        EventGroup::ddl(1, 1_700_000_000, 4, "", "CREATE DATABASE shop"),
        EventGroup::ddl(
            1,
            1_700_000_000,
            4,
            "shop",
            "CREATE TABLE every_type (id INT PRIMARY KEY, ...)",
        ),
    ];
    b.append(&mut ddl).unwrap();

    let mut g = EventGroup::transaction(1, 1_700_000_001);
    g.annotate("INSERT INTO every_type VALUES (...)").unwrap();
    g.map_table(42, &t).unwrap();
    g.insert(42, &row(1, "héllo")).unwrap();
    let mut nulls = vec![Value::Null; t.columns.len()];
    nulls[0] = Value::Int(2);
    g.insert(42, &nulls).unwrap();
    let mut big = row(3, "big");
    big[14] = Value::Bytes(vec![b'z'; 70_000]);
    g.insert(42, &big).unwrap();
    g.commit(100).unwrap();

    let mut u = EventGroup::transaction(1, 1_700_000_002);
    u.annotate("UPDATE every_type SET ti = 7 WHERE id = 1")
        .unwrap();
    u.map_table(42, &t).unwrap();
    let mut after = row(1, "héllo");
    after[1] = Value::Int(7);
    u.update(42, &row(1, "héllo"), &after).unwrap();
    u.end_statement().unwrap();
    u.annotate("DELETE FROM every_type WHERE id = 2").unwrap();
    u.map_table(42, &t).unwrap();
    u.delete(42, &nulls).unwrap();
    u.commit(101).unwrap();
    b.append(&mut [g, u]).unwrap();
    b.rotate().unwrap();
    let mut many = Vec::new();
    for i in 10..40 {
        let mut g = EventGroup::transaction(1, 1_700_000_003);
        g.map_table(42, &t).unwrap();
        g.insert(42, &row(i, "bulk")).unwrap();
        g.commit(200 + i as u64).unwrap();
        many.push(g);
    }
    b.append(&mut many).unwrap();
    b.append(&mut [EventGroup::ddl(
        1,
        1_700_000_004,
        4,
        "shop",
        "DROP TABLE every_type",
    )])
    .unwrap();
    // A statement logged for replicas, its rows as onelog's private row redo (an
    // ignorable event) before its GTID event.
    let mut acct = EventGroup::transaction(1, 1_700_000_005);
    acct.map_table(43, &t).unwrap();
    acct.insert(43, &row(50, "redo")).unwrap();
    acct.update(43, &row(50, "redo"), &row(50, "again"))
        .unwrap();
    let status = QueryStatus {
        invoker: Some(("root".into(), "localhost".into())),
        ..QueryStatus::default()
    };
    let q = Query::with_status("shop", "GRANT SELECT ON shop.* TO 'u'@'%'", 4, &status, 0);
    acct.commit_statement(300, q).unwrap();
    let failed = Query::with_status("", "CREATE USER 'a'@'%', 'b'@'%'", 4, &status, 1396);
    let mut partial = EventGroup::transaction(1, 1_700_000_006);
    partial.commit_statement(301, failed).unwrap();
    b.append(&mut [acct, partial]).unwrap();
    b.sync().unwrap();
}

fn run_tool(files: &[PathBuf]) -> String {
    let out = Command::new(TOOL)
        .arg("-v")
        .arg("--base64-output=decode-rows")
        .args(files)
        .output()
        .expect("run mariadb-binlog");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "mariadb-binlog failed: {}\nstderr: {stderr}\nstdout tail: {}",
        out.status,
        &stdout[stdout.len().saturating_sub(3000)..]
    );
    assert!(
        stderr.trim().is_empty(),
        "mariadb-binlog complained: {stderr}"
    );
    assert!(!stdout.contains("ERROR"), "{stdout}");
    assert!(!stdout.contains("Warning"), "{stdout}");
    stdout
}

fn check_output(out: &str) {
    for needle in [
        "GTID 0-1-1 ddl",
        "CREATE DATABASE shop",
        "use `shop`",
        "GTID 0-1-3 cid=3 trans",
        "#Q> INSERT INTO every_type VALUES (...)",
        "### INSERT INTO `shop`.`every_type`",
        "###   @1=1",
        "###   @2=-5",
        "###   @3=-1 (65535)",
        "###   @4=-8388608",
        "###   @5=-1 (18446744073709551615)",
        "###   @6=-9223372036854775808",
        "###   @7=1.5",
        "###   @8=-2.25",
        "###   @9=-1234.567891",
        "###   @10='abc'",
        "###   @11='wide'",
        "###   @12='héllo'",
        "###   @13='\\x00",
        "###   @15='\\x01\\x02'",
        "###   @14='some text'",
        "###   @16='2024:02:29'",
        "###   @17='-838:59:59.999'",
        "###   @18='2024-01-02 03:04:05.123456'",
        "###   @19=1704164645.12",
        "###   @20='1999-12-31 23:59:58'",
        "###   @2=NULL",
        "### UPDATE `shop`.`every_type`",
        "###   @2=7",
        "### DELETE FROM `shop`.`every_type`",
        "Xid = 100",
        "COMMIT/*!*/;",
        "Rotate to",
        "GTID 0-1-34 cid=5 trans",
        "GTID 0-1-35 ddl",
        "DROP TABLE every_type",
        "Ignorable\n# Ignorable event type 111 (Unknown)\n",
        "GTID 0-1-36 ddl",
        "GRANT SELECT ON shop.* TO 'u'@'%'",
        "GTID 0-1-37 ddl",
        "error_code=1396",
        "CREATE USER 'a'@'%', 'b'@'%'",
    ] {
        assert!(
            out.contains(needle),
            "mariadb-binlog output lacks {needle:?}:\n{}",
            &out[..out.len().min(8000)]
        );
    }
    // The 70 000-byte blob came through whole.
    assert!(out.contains(&"z".repeat(1000)));
}

#[test]
fn mariadb_binlog_reads_exported_engine_log() {
    if !tool_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = BinlogOptions::new(dir.path().join("engine"));
    o.max_binlog_size = 1 << 20;
    o.preallocate = Preallocate::Fallocate;
    let b = Binlog::open(o).unwrap();
    write_workload(&b);
    assert_eq!(b.list_files().len(), 2);
    drop(b);
    let out_dir = dir.path().join("classic");
    let files = export_dir(
        &RealFs,
        &dir.path().join("engine"),
        "binlog",
        Naming::Engine,
        &out_dir,
        "exported",
    )
    .unwrap();
    assert_eq!(files.len(), 2);
    let out = run_tool(&files);
    check_output(&out);
    assert!(out.contains("Rotate to exported.000002"));
}

#[test]
fn mariadb_binlog_reads_classic_files_directly() {
    if !tool_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut o = BinlogOptions::new(dir.path());
    o.naming = Naming::Classic;
    o.base_name = "mariadb-bin".into();
    let b = Binlog::open_with_fs(Arc::new(RealFs), o).unwrap();
    write_workload(&b);
    let files: Vec<PathBuf> = b
        .list_files()
        .iter()
        .map(|(n, _)| dir.path().join(n))
        .collect();
    assert_eq!(files.len(), 2);
    let out = run_tool(&files);
    check_output(&out);
    assert!(out.contains("Rotate to mariadb-bin.000002"));
    // Our own dump of the same files agrees on the essentials.
    let mut dump = Vec::new();
    for f in &files {
        onelog_binlog::dump::dump_file(&RealFs, f, &mut dump).unwrap();
    }
    let dump = String::from_utf8(dump).unwrap();
    for needle in [
        "GTID 0-1-3 trans cid=3",
        "### INSERT INTO `shop`.`every_type`",
        "###   @5=18446744073709551615",
        "###   @9=-1234.567891",
        "###   @12='héllo'",
        "###   @17='-838:59:59.999'",
        "###   @2=NULL",
        "### UPDATE `shop`.`every_type`",
        "Xid = 100",
        "Query\tthread_id=4",
        "Ignorable\n# Ignorable event type 111 (Unknown)\n# onelog row redo, xid 300\n\
         ### INSERT INTO `shop`.`every_type`\n### SET\n###   @1=50\n",
        "###   @12='again'",
        "GRANT SELECT ON shop.* TO 'u'@'%'",
        "# onelog row redo, xid 301\n# at ",
    ] {
        assert!(dump.contains(needle), "dump lacks {needle:?}:\n{dump}");
    }
    // Reading back the groups through the binlog API.
    let groups: Vec<_> = b
        .read_groups(LogPos::new(1, 0))
        .map(|g| g.unwrap())
        .collect();
    assert_eq!(groups.len(), 37);
}
