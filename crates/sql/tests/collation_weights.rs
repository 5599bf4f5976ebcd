//! onelog's utf8mb4_general_ci against a real MariaDB 10.11 (skipped without mariadbd):
//! the weight of every BMP character, and comparisons of tricky string pairs.

#[allow(dead_code)] // the shared client has more than this test reads
mod common;

use std::cmp::Ordering;

use common::mariadb::{Client, Reply, Server};
use onelog_types::collation::general_ci_weight;
use onelog_types::Collation;

fn rows(c: &mut Client, sql: &str) -> Vec<Vec<Option<String>>> {
    match c.query(sql) {
        Reply::Rows(r, _) => r,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn general_ci_matches_mariadb() {
    let Some(server) = Server::start() else {
        return;
    };
    let mut c = Client::connect(&server.socket).expect("connect to mariadb");
    let got = rows(
        &mut c,
        "SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) \
         COLLATE utf8mb4_general_ci)) FROM mysql.seq_0_to_65535 WHERE seq NOT BETWEEN 55296 AND 57343",
    );
    assert_eq!(got.len(), 0x10000 - 0x800);
    let mut bad = Vec::new();
    for r in &got {
        let cp: u32 = r[0].as_deref().unwrap().parse().unwrap();
        let want = u16::from_str_radix(r[1].as_deref().unwrap(), 16).unwrap();
        let have = general_ci_weight(char::from_u32(cp).unwrap());
        if have != want {
            bad.push(format!("U+{cp:04X}: MariaDB {want:04X}, onelog {have:04X}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} weights differ:\n{}",
        bad.len(),
        bad.join("\n")
    );

    let pairs = [
        ("a", "A"),
        ("a", "a "),
        ("a\t", "a"),
        ("a", "a\t"),
        ("ab", "a\tz"),
        ("", " "),
        ("", "\t"),
        ("Straße", "STRASSE"),
        ("Straße", "strase"),
        ("æ", "ae"),
        ("Ø", "o"),
        ("ǅ", "ǆ"),
        ("😀", "😁"),
        ("😀", "\u{fffd}"),
        ("z", "😀"),
        ("Ελλάδα", "ΕΛΛΑΔΑ"),
        ("Ёж", "ЕЖ"),
        ("ı", "I"),
        ("x y", "x  y"),
        ("x\u{a0}", "x"),
    ];
    for (a, b) in pairs {
        let sql = format!("SELECT STRCMP(_utf8mb4'{a}', _utf8mb4'{b}')");
        let want = match rows(&mut c, &sql)[0][0].as_deref() {
            Some("-1") => Ordering::Less,
            Some("0") => Ordering::Equal,
            Some("1") => Ordering::Greater,
            other => panic!("{sql}: {other:?}"),
        };
        let have = Collation::Utf8mb4GeneralCi.compare(a.as_bytes(), b.as_bytes());
        assert_eq!(have, want, "{a:?} vs {b:?}");
    }
}
