//! Events on the real onelogd, driven by the `mariadb` client: the scheduler runs a
//! recurring event and a one-time event (which it then drops), shows in SHOW PROCESSLIST,
//! survives an error in an event's body, keeps its events across SIGKILL, and refuses SET
//! GLOBAL under `--event-scheduler=DISABLED`; `mariadb-dump --events` output restores onto
//! a second onelogd, whose scheduler runs the restored events.

mod common;

use std::time::{Duration, Instant};

use common::{have, Server};

/// Polls `sql` until its output satisfies `ok`, for up to 20 s; returns the last output.
fn wait_for(srv: &Server, sql: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = srv.sql(sql);
        if ok(&out) || Instant::now() > deadline {
            return out;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn count(out: &str) -> u64 {
    out.trim().parse().unwrap_or(0)
}

fn feed(srv: &Server, sql: &str) {
    let out = srv.mariadb(&[], sql);
    assert!(
        out.status.success(),
        "{}\nserver log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        srv.log_text()
    );
}

const SETUP: &str = "
CREATE DATABASE ev;
USE ev;
CREATE TABLE ticks (id INT AUTO_INCREMENT PRIMARY KEY, src VARCHAR(10));
CREATE EVENT every_second ON SCHEDULE EVERY 1 SECOND DO INSERT INTO ticks (src) VALUES ('every');
DELIMITER //
CREATE EVENT once ON SCHEDULE AT NOW() + INTERVAL 1 SECOND DO
BEGIN
  INSERT INTO ticks (src) VALUES ('once');
  INSERT INTO ticks (src) VALUES ('once');
END//
DELIMITER ;
CREATE EVENT kept ON SCHEDULE AT NOW() + INTERVAL 1 SECOND ON COMPLETION PRESERVE
  DO INSERT INTO ticks (src) VALUES ('kept');
CREATE EVENT broken ON SCHEDULE EVERY 1 SECOND DO INSERT INTO no_such_table VALUES (1);
CREATE EVENT later ON SCHEDULE EVERY 1 DAY STARTS '2035-01-01 00:00:00' COMMENT 'not yet'
  DO DELETE FROM ticks;
";

#[test]
fn scheduler_runs_events_and_they_survive_sigkill_and_dump() {
    if !have("mariadb-dump", "events") {
        return;
    }
    let mut srv = Server::start(&["--server-id=1"]);
    assert_eq!(srv.sql("SELECT @@event_scheduler").trim(), "OFF");
    feed(&srv, SETUP);
    // Nothing runs while the scheduler is off.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(count(&srv.sql("SELECT COUNT(*) FROM ev.ticks")), 0);

    srv.sql("SET GLOBAL event_scheduler = ON");
    let pl = srv.sql("SHOW PROCESSLIST");
    assert!(
        pl.lines()
            .any(|l| l.contains("event_scheduler\tlocalhost") && l.contains("Daemon")),
        "{pl}"
    );
    let out = wait_for(
        &srv,
        "SELECT COUNT(*) FROM ev.ticks WHERE src = 'every'",
        |o| count(o) >= 3,
    );
    assert!(count(&out) >= 3, "recurring event did not run: {out}");
    // The one-time event ran once (both statements of its body) and was dropped; the
    // PRESERVE one became DISABLED; the failing one did not stop the others.
    let out = wait_for(
        &srv,
        "SELECT COUNT(*) FROM information_schema.EVENTS WHERE EVENT_NAME = 'once'",
        |o| count(o) == 0,
    );
    assert_eq!(count(&out), 0, "one-time event not dropped");
    assert_eq!(
        count(&srv.sql("SELECT COUNT(*) FROM ev.ticks WHERE src = 'once'")),
        2
    );
    let out = wait_for(
        &srv,
        "SELECT STATUS FROM information_schema.EVENTS WHERE EVENT_NAME = 'kept'",
        |o| o.trim() == "DISABLED",
    );
    assert_eq!(out.trim(), "DISABLED");
    assert_eq!(
        count(&srv.sql("SELECT COUNT(*) FROM ev.ticks WHERE src = 'kept'")),
        1
    );
    let last = srv.sql(
        "SELECT LAST_EXECUTED IS NOT NULL FROM information_schema.EVENTS \
         WHERE EVENT_NAME = 'every_second'",
    );
    assert_eq!(last.trim(), "1");
    assert!(
        srv.log_text()
            .contains("Event Scheduler: [root@localhost][ev.broken]"),
        "{}",
        srv.log_text()
    );
    // The scheduler's DROP of the finished event is logged, as MariaDB logs it.
    let binlog = srv.sql("SHOW BINLOG EVENTS");
    assert!(
        binlog.contains("DROP EVENT IF EXISTS `ev`.`once`"),
        "{binlog}"
    );

    srv.sql("SET GLOBAL event_scheduler = OFF");
    assert!(!srv.sql("SHOW PROCESSLIST").contains("event_scheduler"));
    let before = count(&srv.sql("SELECT COUNT(*) FROM ev.ticks"));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(count(&srv.sql("SELECT COUNT(*) FROM ev.ticks")), before);

    // Events are catalog objects: SIGKILL and restart keeps them (the scheduler comes
    // back OFF, its default).
    let events = "SELECT EVENT_NAME, STATUS, EVENT_COMMENT FROM information_schema.EVENTS \
                  ORDER BY EVENT_NAME";
    let listed = srv.sql(events);
    assert_eq!(
        listed,
        "broken\tENABLED\t\nevery_second\tENABLED\t\nkept\tDISABLED\t\nlater\tENABLED\tnot yet\n"
    );
    srv.kill9();
    srv.restart();
    assert_eq!(srv.sql(events), listed);
    assert_eq!(srv.sql("SELECT @@event_scheduler").trim(), "OFF");

    // mariadb-dump --events, restored onto a second onelogd.
    let dump = std::process::Command::new("/usr/bin/mariadb-dump")
        .args([
            "--no-defaults",
            &format!("--socket={}", srv.socket.display()),
            "-uroot",
            "--events",
            "--databases",
            "ev",
        ])
        .output()
        .unwrap();
    assert!(
        dump.status.success(),
        "{}",
        String::from_utf8_lossy(&dump.stderr)
    );
    let dump = String::from_utf8(dump.stdout).unwrap();
    assert!(dump.contains("/*!50106 CREATE*/"), "{dump}");
    let other = Server::start(&["--server-id=2"]);
    feed(&other, &dump);
    let every = "SELECT COUNT(*) FROM ev.ticks WHERE src = 'every'";
    let restored = count(&other.sql(every));
    assert!(restored >= 3);
    assert_eq!(other.sql(events), listed);
    let create = "SHOW CREATE EVENT ev.later";
    assert_eq!(other.sql(create), srv.sql(create));
    // The second server runs the restored events once its scheduler is on.
    other.sql("SET GLOBAL event_scheduler = 1");
    let out = wait_for(&other, every, |o| count(o) > restored);
    assert!(count(&out) > restored, "{out}");
    other.assert_no_panic();
    srv.assert_no_panic();
}

#[test]
fn disabled_scheduler_refuses_set_global() {
    let srv = Server::start(&["--event-scheduler=DISABLED"]);
    assert_eq!(srv.sql("SELECT @@event_scheduler").trim(), "DISABLED");
    let out = srv.mariadb(&["-e", "SET GLOBAL event_scheduler = ON"], "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ERROR 1290"), "{err}");
    // Events can still be created and shown.
    feed(
        &srv,
        "CREATE DATABASE d; CREATE EVENT d.e ON SCHEDULE EVERY 1 HOUR DO SELECT 1;",
    );
    assert_eq!(srv.sql("SHOW EVENTS FROM d").lines().count(), 1);
}
