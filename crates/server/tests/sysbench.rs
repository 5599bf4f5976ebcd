//! sysbench 1.0.20 OLTP workloads (prepared and text protocol) against onelogd.

mod common;
use common::*;
use std::time::Duration;

fn sysbench(srv: &Server, test: &str, ps_mode: &str, cmd: &str, tcp: bool) -> String {
    let mut args = vec![
        test.to_string(),
        "--db-driver=mysql".into(),
        "--mysql-user=root".into(),
        "--mysql-db=sbtest".into(),
        "--tables=2".into(),
        "--table-size=2000".into(),
        "--threads=16".into(),
        "--time=5".into(),
        "--report-interval=0".into(),
        format!("--db-ps-mode={ps_mode}"),
    ];
    if tcp {
        args.push("--mysql-host=127.0.0.1".into());
        args.push(format!("--mysql-port={}", srv.port));
    } else {
        args.push(format!("--mysql-socket={}", srv.socket.display()));
    }
    args.push(cmd.into());
    let (ok, out, err) = run("sysbench", &args, Duration::from_secs(120));
    let all = format!("{out}\n{err}");
    assert!(
        ok && !all.contains("FATAL"),
        "sysbench {test} {cmd} --db-ps-mode={ps_mode} failed:\n{all}\nserver log:\n{}",
        srv.log_text()
    );
    if cmd == "run" {
        // "ignored errors" are retried deadlocks / lock wait timeouts; allowed.
        let line = |key: &str| -> u64 {
            let l = out
                .lines()
                .find(|l| l.trim_start().starts_with(key))
                .unwrap_or_else(|| panic!("no '{key}' in sysbench output:\n{out}"));
            l.split(':')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let tx = line("transactions:");
        let ign = line("ignored errors:");
        println!("sysbench {test} ps-mode={ps_mode}: {tx} transactions, {ign} ignored errors");
        assert!(tx > 0, "{out}");
    }
    all
}

fn workload(test: &str) {
    if !have("sysbench", test) {
        return;
    }
    let mut srv = Server::start(&[]);
    srv.sql("CREATE DATABASE sbtest");
    for (i, mode) in ["auto", "disable"].into_iter().enumerate() {
        let tcp = i == 1;
        sysbench(&srv, test, mode, "prepare", tcp);
        sysbench(&srv, test, mode, "run", tcp);
        // The secondary index agrees with the table.
        for t in ["sbtest1", "sbtest2"] {
            let a = srv.sql(&format!(
                "SELECT COUNT(*), SUM(k), SUM(LENGTH(c)) FROM sbtest.{t}"
            ));
            let b = srv.sql(&format!(
                "SELECT COUNT(*), SUM(k), SUM(LENGTH(c)) FROM sbtest.{t} WHERE k >= -2147483648"
            ));
            assert_eq!(a, b, "{t}: index scan differs from table scan");
        }
        sysbench(&srv, test, mode, "cleanup", tcp);
        assert_eq!(srv.sql("SHOW TABLES FROM sbtest"), "");
    }
    srv.stop();
}

#[test]
fn sysbench_oltp_read_write() {
    workload("oltp_read_write");
}

#[test]
fn sysbench_oltp_write_only() {
    workload("oltp_write_only");
}

#[test]
fn sysbench_oltp_insert() {
    workload("oltp_insert");
}

#[test]
fn sysbench_oltp_point_select() {
    workload("oltp_point_select");
}
