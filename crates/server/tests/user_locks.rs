//! User-level locks between connections of the real onelogd: a GET_LOCK waits for the
//! holder's RELEASE_LOCK or disconnect, times out with 0, returns NULL when killed, and a
//! cycle of waits is a deadlock (1213).

mod common;

use std::time::{Duration, Instant};

use common::Server;
use mysql::prelude::Queryable;

fn get_lock(c: &mut mysql::Conn, name: &str, timeout: f64) -> Option<i64> {
    c.query_first::<Option<i64>, _>(format!("SELECT GET_LOCK('{name}', {timeout})"))
        .unwrap()
        .unwrap()
}

/// Waits until connection `id` is in a GET_LOCK wait (its process list state).
fn wait_for_waiter(admin: &mut mysql::Conn, id: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info: Option<Option<String>> = admin
            .query_first(format!(
                "SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {id}"
            ))
            .unwrap();
        if info.flatten().is_some_and(|i| i.contains("GET_LOCK")) {
            return;
        }
        assert!(Instant::now() < deadline, "connection {id} never waited");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn user_locks_between_connections() {
    let server = Server::start(&[]);
    let mut a = server.conn(None);
    let mut b = server.conn(None);
    let mut admin = server.conn(None);
    let b_id: u32 = b.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();

    assert_eq!(get_lock(&mut a, "job", 0.0), Some(1));
    let t = Instant::now();
    assert_eq!(get_lock(&mut b, "job", 0.2), Some(0));
    assert!(t.elapsed() >= Duration::from_millis(190));
    let r: Option<i64> = b
        .query_first("SELECT RELEASE_LOCK('job')")
        .unwrap()
        .unwrap();
    assert_eq!(r, Some(0), "another connection's lock is not released");

    // A waiter gets the lock once the holder releases it.
    let waiter = std::thread::spawn(move || {
        let r = get_lock(&mut b, "job", 30.0);
        (b, r)
    });
    wait_for_waiter(&mut admin, b_id);
    let r: Option<i64> = a
        .query_first("SELECT RELEASE_LOCK('job')")
        .unwrap()
        .unwrap();
    assert_eq!(r, Some(1));
    let (mut b, got) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
    let owner: Option<u64> = a
        .query_first("SELECT IS_USED_LOCK('job')")
        .unwrap()
        .unwrap();
    assert_eq!(owner, Some(b_id as u64));

    // Disconnecting releases; a killed wait returns NULL.
    let mut c = server.conn(None);
    assert_eq!(get_lock(&mut c, "held", 0.0), Some(1));
    let killed = std::thread::spawn(move || {
        let r = get_lock(&mut b, "held", 30.0);
        (b, r)
    });
    wait_for_waiter(&mut admin, b_id);
    admin.query_drop(format!("KILL QUERY {b_id}")).unwrap();
    let (mut b, r) = killed.join().unwrap();
    assert_eq!(r, None);
    drop(c);
    let deadline = Instant::now() + Duration::from_secs(10);
    while get_lock(&mut b, "held", 0.0) != Some(1) {
        assert!(
            Instant::now() < deadline,
            "a closed connection kept its lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // A holds p, B holds q; A waits for q, then B asking for p closes the cycle.
    let a_id: u32 = a.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
    assert_eq!(get_lock(&mut a, "p", 0.0), Some(1));
    assert_eq!(get_lock(&mut b, "q", 0.0), Some(1));
    let cycle = std::thread::spawn(move || {
        let r = get_lock(&mut a, "q", 30.0);
        (a, r)
    });
    wait_for_waiter(&mut admin, a_id);
    let e = b.query_drop("SELECT GET_LOCK('p', 30)").unwrap_err();
    assert!(e.to_string().contains("1213"), "{e}");
    b.query_drop("DO RELEASE_ALL_LOCKS()").unwrap();
    let (_a, r) = cycle.join().unwrap();
    assert_eq!(r, Some(1));
    server.assert_no_panic();
}
