//! `onelog binlog dump` and `onelog binlog export` on a data directory written through the
//! SQL layer, account statements included (their groups hold onelog's private row-redo
//! event, an ignorable event); the exported files are read by the real `mariadb-binlog`
//! without errors or warnings.

use std::path::Path;
use std::process::Command;

use onelog_engine::EngineOptions;
use onelog_sql::{Database, Session};

fn make_datadir(dir: &Path) {
    let db = Database::open(EngineOptions {
        datadir: dir.to_path_buf(),
        max_binlog_size: 64 << 10,
        ..Default::default()
    })
    .unwrap();
    let mut s = Session::new(db.clone(), "root".into(), "localhost".into(), 1);
    for sql in [
        "CREATE DATABASE shop",
        "USE shop",
        "CREATE TABLE items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(40), price DECIMAL(10,2), added DATETIME(3), note TEXT, KEY (name))",
        "INSERT INTO items (name, price, added, note) VALUES ('apple', 1.25, '2026-11-22 10:00:00.123', NULL), ('pear', 2.50, '2026-11-22 11:00:00', 'ripe')",
        "UPDATE items SET price = 9.99 WHERE name = 'pear'",
        "DELETE FROM items WHERE name = 'apple'",
        "CREATE USER 'shopper'@'%' IDENTIFIED BY 'pw'",
        "GRANT SELECT, INSERT ON shop.* TO 'shopper'@'%'",
        "CREATE USER 'shopper'@'%', 'clerk'@'localhost'",
        "SET PASSWORD FOR 'clerk'@'localhost' = PASSWORD('x')",
        "FLUSH BINARY LOGS",
        "INSERT INTO items (name, price) VALUES ('plum', 0.75)",
    ] {
        for r in s.execute(sql) {
            match r {
            // Logged with this error: the other user was created.
            Err(e) if sql.contains("'clerk'") && e.code == 1396 => {}
            r => {
                r.unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
        }
        }
    }
    drop(s);
    db.shutdown().unwrap();
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("run command");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn dump_and_export_read_by_mariadb_binlog() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    make_datadir(&data);
    let onelog = env!("CARGO_BIN_EXE_onelog");

    let (ok, text, err) = run(Command::new(onelog)
        .args(["binlog", "dump"])
        .arg(data.join("binlog-000000")));
    assert!(ok, "dump failed: {err}");
    assert!(text.contains("INSERT INTO `shop`.`items`"), "{text}");
    assert!(text.contains("'pear'"), "{text}");
    assert!(text.contains("GTID 0-1-"), "{text}");
    // The row redo as mariadb-binlog shows an ignorable event, with the rows it holds.
    assert!(
        text.contains("Ignorable\n# Ignorable event type 111 (Unknown)\n# onelog row redo"),
        "{text}"
    );
    assert!(
        text.contains("### INSERT INTO `mysql`.`onelog_user`"),
        "{text}"
    );
    assert!(
        text.contains("\nuse `shop`/*!*/;\nSET TIMESTAMP="),
        "{text}"
    );

    let out = dir.path().join("export");
    let (ok, files, err) = run(Command::new(onelog)
        .args(["binlog", "export", "--datadir"])
        .arg(&data)
        .arg("--out")
        .arg(&out));
    assert!(ok, "export failed: {err}");
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(files.len(), 2, "{files:?}");

    if !Path::new("/usr/bin/mariadb-binlog").exists() {
        eprintln!("skipped: /usr/bin/mariadb-binlog is not installed");
        return;
    }
    let (ok, text, err) = run(Command::new("/usr/bin/mariadb-binlog")
        .args(["-v", "--base64-output=decode-rows"])
        .args(&files));
    assert!(ok, "mariadb-binlog failed: {err}");
    assert!(err.trim().is_empty(), "mariadb-binlog complained: {err}");
    assert!(
        !text.contains("ERROR") && !text.contains("Warning"),
        "{text}"
    );
    for needle in [
        "Ignorable\n# Ignorable event type 111 (Unknown)\n",
        "CREATE USER 'shopper'@'%' IDENTIFIED BY 'pw'\n/*!*/;",
        "GRANT SELECT, INSERT ON shop.* TO 'shopper'@'%'\n/*!*/;",
        "error_code=1396",
        "SET PASSWORD FOR 'clerk'@'localhost'='*",
        "CREATE TABLE items",
        "### INSERT INTO `shop`.`items`",
        "### UPDATE `shop`.`items`",
        "### DELETE FROM `shop`.`items`",
        "'plum'",
        "9.99",
        "GTID 0-1-",
    ] {
        assert!(text.contains(needle), "missing {needle} in:\n{text}");
    }
}
