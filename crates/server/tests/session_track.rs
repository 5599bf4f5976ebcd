//! Session state tracking (CLIENT_SESSION_TRACK): the OK packets onelogd sends carry the
//! changes a statement made, byte for byte as MariaDB 10.11 sends them (the expected
//! payloads below are MariaDB 10.11's answers to the same requests). Clients that do not
//! set the capability get plain OK packets.

mod common;

use common::raw::Raw;
use common::*;

const CLIENT_SESSION_TRACK: u32 = 1 << 23;

/// An OK packet with SERVER_SESSION_STATE_CHANGED (plus `status`), no rows, no warnings,
/// an empty info and `state` as the tracker entries.
fn ok_with_state(status: u16, state: &[u8]) -> Vec<u8> {
    let mut p = vec![0, 0, 0];
    p.extend_from_slice(&(status | 0x4000).to_le_bytes());
    p.extend_from_slice(&[0, 0, 0, state.len() as u8]);
    p.extend_from_slice(state);
    p
}

/// A system variable entry: type 0, then `name` and `value` as length-encoded strings.
fn var(name: &str, value: &str) -> Vec<u8> {
    let mut d = vec![name.len() as u8];
    d.extend_from_slice(name.as_bytes());
    d.push(value.len() as u8);
    d.extend_from_slice(value.as_bytes());
    let mut e = vec![0, d.len() as u8];
    e.extend(d);
    e
}

fn schema(db: &str) -> Vec<u8> {
    let mut e = vec![1, db.len() as u8 + 1, db.len() as u8];
    e.extend_from_slice(db.as_bytes());
    e
}

fn query(r: &mut Raw, sql: &str) -> Vec<u8> {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    r.command(&p)
}

#[test]
fn ok_packets_report_session_state_changes_as_mariadb() {
    let srv = Server::start(&[]);
    srv.sql("CREATE DATABASE d; CREATE DATABASE test");
    let (mut r, login) = Raw::connect_with(srv.port, "root", CLIENT_SESSION_TRACK, Some("d"));
    // Logged in with a database: its schema entry. (Status: autocommit.)
    assert_eq!(login, ok_with_state(2, &schema("d")));
    assert_eq!(query(&mut r, "USE test"), ok_with_state(2, &schema("test")));
    // A tracked variable is reported whenever SET assigns it, also to the same value.
    for _ in 0..2 {
        assert_eq!(
            query(&mut r, "SET autocommit=0"),
            ok_with_state(0, &var("autocommit", "OFF"))
        );
    }
    assert_eq!(
        query(&mut r, "SET time_zone='+01:00'"),
        ok_with_state(0, &var("time_zone", "+01:00"))
    );
    // Untracked variables and user variables change nothing reported.
    assert_eq!(query(&mut r, "SET sql_mode=''"), vec![0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(query(&mut r, "SET @a=1"), vec![0, 0, 0, 0, 0, 0, 0]);
    let mut names = var("character_set_client", "latin1");
    names.extend(var("character_set_connection", "latin1"));
    names.extend(var("character_set_results", "latin1"));
    assert_eq!(query(&mut r, "SET NAMES latin1"), ok_with_state(0, &names));
    // With state change tracking, any change adds entry 2, "1" (after the others).
    assert_eq!(
        query(&mut r, "SET session_track_state_change=1"),
        ok_with_state(0, b"\x02\x011")
    );
    assert_eq!(query(&mut r, "SET @b=2"), ok_with_state(0, b"\x02\x011"));
    let mut both = schema("d");
    both.extend_from_slice(b"\x02\x011");
    assert_eq!(query(&mut r, "USE d"), ok_with_state(0, &both));
    let mut null = var("character_set_results", "");
    null.extend_from_slice(b"\x02\x011");
    assert_eq!(
        query(&mut r, "SET character_set_results=NULL"),
        ok_with_state(0, &null)
    );

    // Without the capability: plain OK packets.
    let (mut plain, login) = Raw::connect_with(srv.port, "root", 0, Some("d"));
    assert_eq!(login, vec![0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(query(&mut plain, "USE test"), vec![0, 0, 0, 2, 0, 0, 0]);
    assert_eq!(
        query(&mut plain, "SET autocommit=0"),
        vec![0, 0, 0, 0, 0, 0, 0]
    );
}
