//! `sync-binlog`, second part: the published sync_binlog test case, verbatim. Its setup
//! script (a table and a stored function that inserts one row, created through the
//! `mariadb` client with `delimiter //`) and then
//! `mysqlslap --create-schema=test_case_9 --query="select test_case_9.insert_data();"
//! --concurrency=4`, once per `sync_binlog` value. Every call is one autocommit
//! transaction (the function's INSERT), so calls/s is commits/s.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use super::report::{fmt_num, fmt_ratio, table};
use super::systems::{Server, SystemKind};

/// The test case's setup script, as published.
pub const SETUP: &str =
    "DROP DATABASE IF EXISTS test_case_9; CREATE DATABASE test_case_9; USE test_case_9;
CREATE TABLE t1 (id int NOT NULL AUTO_INCREMENT, name varchar(100) DEFAULT NULL, PRIMARY KEY (id));
DROP FUNCTION IF EXISTS insert_data;
delimiter //
CREATE FUNCTION insert_data() RETURNS int DETERMINISTIC
BEGIN
  INSERT INTO t1 (name) VALUES ('test');
  RETURN ROW_COUNT();
END//
delimiter ;
";

/// The clients mysqlslap runs, as published.
pub const CONCURRENCY: u32 = 4;

#[derive(Clone, Debug)]
pub struct Case9Point {
    pub system: SystemKind,
    pub delay_us: u64,
    pub sync_binlog: u32,
    /// Calls of all clients in one iteration.
    pub calls: u64,
    pub iterations: u32,
    /// mysqlslap's "Average number of seconds to run all queries".
    pub avg_secs: f64,
}

impl Case9Point {
    pub fn calls_per_sec(&self) -> f64 {
        self.calls as f64 / self.avg_secs.max(1e-9)
    }
}

fn client(prog: &str, server: &Server, args: &[String], stdin: &str) -> Result<String, String> {
    let mut child = Command::new(prog)
        .arg("--no-defaults")
        .arg(format!("--socket={}", server.socket.display()))
        .arg("--user=root")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{prog}: {e}"))?;
    {
        use std::io::Write;
        let mut i = child.stdin.take().expect("stdin");
        i.write_all(stdin.as_bytes())
            .map_err(|e| format!("{prog}: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{prog}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{prog} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// mysqlslap's average seconds per iteration.
pub fn parse_average(out: &str) -> Option<f64> {
    let line = out
        .lines()
        .find(|l| l.contains("Average number of seconds to run all queries"))?;
    line.split(':')
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Runs the test case at each `sync_binlog` value: `queries` calls (all clients together)
/// per iteration, `iterations` iterations (mysqlslap reports their average).
pub fn run(
    server: &mut Server,
    values: &[u32],
    queries: u64,
    iterations: u32,
) -> Result<Vec<Case9Point>, String> {
    let mut out = Vec::new();
    for &n in values {
        client("mariadb", server, &[], SETUP)?;
        server.exec(&format!("SET GLOBAL sync_binlog={n}"))?;
        let report = client(
            "mysqlslap",
            server,
            &[
                "--create-schema=test_case_9".into(),
                "--query=select test_case_9.insert_data();".into(),
                format!("--concurrency={CONCURRENCY}"),
                format!("--iterations={iterations}"),
                format!("--number-of-queries={queries}"),
            ],
            "",
        )?;
        let avg_secs = parse_average(&report)
            .ok_or_else(|| format!("no average in mysqlslap's report:\n{report}"))?;
        let p = Case9Point {
            system: server.kind,
            delay_us: server.delay_us,
            sync_binlog: n,
            calls: queries,
            iterations,
            avg_secs,
        };
        eprintln!(
            "  test case 9  {:<16} delay={}us sync_binlog={} {:>7.0} calls/s",
            p.system.name(),
            p.delay_us,
            n,
            p.calls_per_sec()
        );
        out.push(p);
    }
    server.exec("SET GLOBAL sync_binlog=1")?;
    Ok(out)
}

/// The report's section: calls/s per system and `sync_binlog`, and each against
/// mariadb-binlog at the same value.
pub fn render(
    s: &mut String,
    delays: &[u64],
    points: &[Case9Point],
    label: impl Fn(u64) -> String,
) {
    if points.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## sync_binlog test case 9\n\nThe published test case verbatim: a stored function \
         that inserts one row, created by its setup script through the `mariadb` client, \
         called by `mysqlslap --create-schema=test_case_9 --query=\"select \
         test_case_9.insert_data();\" --concurrency={CONCURRENCY}`; {} calls per iteration, \
         {} iteration(s), mysqlslap's average. Each call is one commit.\n",
        points[0].calls, points[0].iterations
    );
    for &d in delays {
        let pts: Vec<&Case9Point> = points.iter().filter(|p| p.delay_us == d).collect();
        if pts.is_empty() {
            continue;
        }
        let _ = writeln!(s, "### {}\n", label(d));
        let base = |n: u32| {
            pts.iter()
                .find(|p| p.system == SystemKind::MariadbBinlog && p.sync_binlog == n)
                .map(|p| p.calls_per_sec())
        };
        let rows: Vec<Vec<String>> = pts
            .iter()
            .map(|p| {
                vec![
                    p.system.name().to_string(),
                    p.sync_binlog.to_string(),
                    fmt_num(p.calls_per_sec()),
                    base(p.sync_binlog)
                        .map_or_else(|| "-".into(), |b| fmt_ratio(p.calls_per_sec(), b)),
                ]
            })
            .collect();
        s.push_str(&table(
            &["system", "sync_binlog", "calls/s", "x mariadb-binlog"],
            &rows,
        ));
        s.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mysqlslaps_average() {
        let out = "Benchmark\n\tAverage number of seconds to run all queries: 0.412 seconds\n\t\
                   Minimum number of seconds to run all queries: 0.398 seconds\n";
        assert_eq!(parse_average(out), Some(0.412));
        assert_eq!(parse_average("nothing"), None);
    }
}
