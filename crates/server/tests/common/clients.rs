//! Client programs read a server's data back: its binlog through `mariadb-binlog`, a
//! database through `mariadb-dump`.

use std::path::Path;
use std::time::Duration;

use mysql::prelude::Queryable;

use super::{run, Server};

/// The whole binlog of `srv` as `mariadb-binlog --read-from-remote-server --to-last-log`
/// prints it (`verbose`: with the `###` lines of row events); fails the test when the
/// program fails or complains.
pub fn binlog_text(srv: &Server, verbose: bool) -> String {
    let mut c = srv.conn(None);
    let files: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    drop(c);
    let mut args: Vec<String> = vec![
        "--read-from-remote-server".into(),
        "--host=127.0.0.1".into(),
        format!("--port={}", srv.port),
        "--user=root".into(),
        "--to-last-log".into(),
        files[0].0.clone(),
    ];
    if verbose {
        args.insert(4, "--verbose".into());
    }
    let (ok, out, err) = run("mariadb-binlog", &args, Duration::from_secs(30));
    assert!(
        ok && err.trim().is_empty(),
        "mariadb-binlog failed: {err}\n{out}"
    );
    out
}

/// `mariadb-dump --databases db` of the server listening on `socket`.
pub fn dump_database(socket: &Path, db: &str) -> String {
    let out = std::process::Command::new("/usr/bin/mariadb-dump")
        .args([
            "--no-defaults",
            &format!("--socket={}", socket.display()),
            "-uroot",
            "--databases",
            db,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mariadb-dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `name: (v,v) (v,v)` for each `(name, query)`: a table's rows as text, to compare.
pub fn rows_text(c: &mut mysql::Conn, queries: &[(String, String)]) -> String {
    let mut out = String::new();
    for (name, q) in queries {
        let rows: Vec<mysql::Row> = c.query(q).unwrap();
        out.push_str(&format!("{name}:"));
        for r in rows {
            let vals: Vec<String> = r.unwrap().into_iter().map(|v| v.as_sql(true)).collect();
            out.push_str(&format!(" ({})", vals.join(",")));
        }
        out.push('\n');
    }
    out
}
