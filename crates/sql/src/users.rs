//! Users: accounts (`user`@`host`), mysql_native_password hashes, global and per-database
//! privileges (the statements that change them are in `account_stmt.rs`).
//!
//! Accounts are rows of two ordinary tables, created on first open:
//! - `mysql.onelog_user (Host, User, Password, Privileges, Grant_option, Ssl_type,
//!   Ssl_cipher, X509_issuer, X509_subject)` (the TLS columns as in MariaDB's `mysql.user`,
//!   see `ssl_require.rs`; a table made before they existed gets them at open)
//! - `mysql.onelog_db (Host, Db, User, Privileges)`
//!
//! `Privileges` is a comma-separated list of privilege names. Their row changes are
//! recovered like any data; the account statements log them as onelog's private row redo
//! beside the statement MariaDB logs (see `account_stmt.rs`). The tables are cached in
//! memory and reloaded after every account statement (and on FLUSH PRIVILEGES).

use std::sync::Arc;

use onelog_types::{Collation, SqlError, Value};
use sha1::{Digest, Sha1};

use crate::database::Database;
use crate::session::Session;
use crate::ssl_require::SslRequire;
use crate::QueryResult;

/// One privilege (a bit in a mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Priv(pub u64);

macro_rules! privs {
    ($($name:ident = $bit:expr, $text:expr;)*) => {
        impl Priv {
            $(pub const $name: Priv = Priv(1 << $bit);)*
            const ALL_LIST: &'static [(Priv, &'static str)] = &[$((Priv::$name, $text)),*];
        }
    };
}

privs! {
    SELECT = 0, "SELECT";
    INSERT = 1, "INSERT";
    UPDATE = 2, "UPDATE";
    DELETE = 3, "DELETE";
    CREATE = 4, "CREATE";
    DROP = 5, "DROP";
    RELOAD = 6, "RELOAD";
    SHUTDOWN = 7, "SHUTDOWN";
    PROCESS = 8, "PROCESS";
    FILE = 9, "FILE";
    REFERENCES = 11, "REFERENCES";
    INDEX = 12, "INDEX";
    ALTER = 13, "ALTER";
    SHOW_DB = 14, "SHOW DATABASES";
    SUPER = 15, "SUPER";
    CREATE_TMP = 16, "CREATE TEMPORARY TABLES";
    LOCK_TABLES = 17, "LOCK TABLES";
    EXECUTE = 18, "EXECUTE";
    REPL_SLAVE = 19, "REPLICATION SLAVE";
    REPL_CLIENT = 20, "BINLOG MONITOR";
    CREATE_VIEW = 21, "CREATE VIEW";
    SHOW_VIEW = 22, "SHOW VIEW";
    CREATE_ROUTINE = 23, "CREATE ROUTINE";
    ALTER_ROUTINE = 24, "ALTER ROUTINE";
    CREATE_USER = 25, "CREATE USER";
    EVENT = 26, "EVENT";
    TRIGGER = 27, "TRIGGER";
    CREATE_TABLESPACE = 28, "CREATE TABLESPACE";
    DELETE_HISTORY = 29, "DELETE HISTORY";
}

/// Privileges that only exist globally.
pub(crate) const GLOBAL_ONLY: u64 = Priv::RELOAD.0
    | Priv::SHUTDOWN.0
    | Priv::PROCESS.0
    | Priv::FILE.0
    | Priv::SHOW_DB.0
    | Priv::SUPER.0
    | Priv::REPL_SLAVE.0
    | Priv::REPL_CLIENT.0
    | Priv::CREATE_USER.0
    | Priv::CREATE_TABLESPACE.0;

pub(crate) const ALL_GLOBAL: u64 = {
    let mut m = 0;
    let mut i = 0;
    while i < Priv::ALL_LIST.len() {
        m |= Priv::ALL_LIST[i].0 .0;
        i += 1;
    }
    m
};

pub(crate) const ALL_DB: u64 = ALL_GLOBAL & !GLOBAL_ONLY;

impl Priv {
    pub fn name(self) -> &'static str {
        Priv::ALL_LIST
            .iter()
            .find(|(p, _)| *p == self)
            .map(|(_, n)| *n)
            .unwrap_or("USAGE")
    }

    pub(crate) fn parse(name: &str) -> Option<u64> {
        let n = name.trim().to_uppercase();
        let n = n.as_str();
        Some(match n {
            "ALL" | "ALL PRIVILEGES" => ALL_GLOBAL,
            "USAGE" => 0,
            "REPLICATION CLIENT" | "BINLOG MONITOR" => Priv::REPL_CLIENT.0,
            "SLAVE MONITOR"
            | "REPLICATION SLAVE ADMIN"
            | "BINLOG ADMIN"
            | "BINLOG REPLAY"
            | "CONNECTION ADMIN"
            | "READ_ONLY ADMIN"
            | "REPLICATION MASTER ADMIN"
            | "FEDERATED ADMIN"
            | "SET USER" => Priv::SUPER.0,
            _ => Priv::ALL_LIST.iter().find(|(_, t)| *t == n)?.0 .0,
        })
    }
}

fn mask_names(mask: u64, all: u64) -> String {
    if mask & all == all {
        return "ALL PRIVILEGES".into();
    }
    if mask == 0 {
        return "USAGE".into();
    }
    Priv::ALL_LIST
        .iter()
        .filter(|(p, _)| mask & p.0 != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The privileges of `mask` by name, in MariaDB's order, comma-separated (as error
/// messages list them).
pub(crate) fn priv_names(mask: u64) -> String {
    Priv::ALL_LIST
        .iter()
        .filter(|(p, _)| mask & p.0 != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_mask(s: &str) -> u64 {
    s.split(',').filter_map(Priv::parse).fold(0, |a, b| a | b)
}

pub(crate) fn store_mask(mask: u64) -> String {
    Priv::ALL_LIST
        .iter()
        .filter(|(p, _)| mask & p.0 != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

/// An account with its privileges.
#[derive(Clone, Debug)]
pub struct Account {
    pub user: String,
    pub host: String,
    /// `*` + 40 upper-case hex digits of SHA1(SHA1(password)), or empty for no password.
    pub password_hash: String,
    pub global: u64,
    pub grant_option: bool,
    /// (database, privileges)
    pub dbs: Vec<(String, u64)>,
    /// What the account's connections must show of TLS (`REQUIRE ...`).
    pub ssl: SslRequire,
}

impl Account {
    pub fn superuser() -> Account {
        Account {
            user: "root".into(),
            host: "localhost".into(),
            password_hash: String::new(),
            global: ALL_GLOBAL,
            grant_option: true,
            dbs: vec![],
            ssl: SslRequire::default(),
        }
    }

    pub fn nobody(user: &str, host: &str) -> Account {
        Account {
            user: user.into(),
            host: host.into(),
            password_hash: String::new(),
            global: 0,
            grant_option: false,
            dbs: vec![],
            ssl: SslRequire::default(),
        }
    }

    pub fn has_global(&self, p: Priv) -> bool {
        self.global & p.0 != 0
    }

    /// The privileges the account holds on database `db` (globally or for the database).
    pub fn privileges_on(&self, db: &str) -> u64 {
        self.dbs
            .iter()
            .filter(|(d, _)| db_matches(d, db))
            .fold(self.global, |a, (_, m)| a | m)
    }

    /// Whether the account holds `p` on database `db` (globally or for the database).
    pub fn has(&self, p: Priv, db: &str) -> bool {
        self.has_global(p)
            || self
                .dbs
                .iter()
                .any(|(d, m)| db_matches(d, db) && m & p.0 != 0)
    }
}

pub(crate) fn db_matches(pattern: &str, db: &str) -> bool {
    if pattern.contains(['%', '_']) {
        crate::expr::like(
            db.as_bytes(),
            pattern.as_bytes(),
            b'\\',
            Collation::Utf8mb4Bin,
        )
    } else {
        pattern == db
    }
}

pub fn any_db_privilege(a: &Account, db: &str) -> bool {
    a.global & ALL_DB != 0 || a.dbs.iter().any(|(d, m)| db_matches(d, db) && *m != 0)
}

fn host_matches(pattern: &str, host: &str) -> bool {
    if pattern == "%" {
        return true;
    }
    if pattern.eq_ignore_ascii_case(host) {
        return true;
    }
    if pattern.eq_ignore_ascii_case("localhost") && (host == "127.0.0.1" || host == "::1") {
        return true;
    }
    pattern.contains(['%', '_'])
        && crate::expr::like(
            host.as_bytes(),
            pattern.as_bytes(),
            b'\\',
            Collation::Utf8mb4Bin,
        )
}

/// The in-memory copy of the account tables.
#[derive(Default)]
pub struct Accounts {
    list: Vec<Account>,
}

impl Accounts {
    /// The account `user` connecting from `host` uses: the most specific host match.
    pub fn find(&self, user: &str, host: &str) -> Option<&Account> {
        let mut best: Option<&Account> = None;
        for a in &self.list {
            if a.user == user && host_matches(&a.host, host) {
                let spec = |h: &str| if h.contains(['%', '_']) { 0 } else { 1 };
                if best.is_none_or(|b| spec(&a.host) > spec(&b.host)) {
                    best = Some(a);
                }
            }
        }
        best
    }

    /// Every account, in the account table's order.
    pub(crate) fn all(&self) -> &[Account] {
        &self.list
    }

    /// The account named exactly so (host names compare case-insensitively).
    pub(crate) fn exact(&self, user: &str, host: &str) -> Option<&Account> {
        self.list
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
    }
}

/// `*HEX(SHA1(SHA1(password)))`, or empty for an empty password.
pub fn hash_password(pw: &str) -> String {
    if pw.is_empty() {
        return String::new();
    }
    let h1 = Sha1::digest(pw.as_bytes());
    let h2 = Sha1::digest(h1);
    format!("*{}", crate::functions::hex(&h2).to_uppercase())
}

/// Verifies a mysql_native_password response: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))).
pub fn check_scramble(stored: &str, scramble: &[u8], response: &[u8]) -> bool {
    if stored.is_empty() {
        return response.is_empty();
    }
    if response.len() != 20 || stored.len() != 41 {
        return false;
    }
    let mut h2 = [0u8; 20];
    for i in 0..20 {
        match u8::from_str_radix(&stored[1 + 2 * i..3 + 2 * i], 16) {
            Ok(b) => h2[i] = b,
            Err(_) => return false,
        }
    }
    let mut hasher = Sha1::new();
    hasher.update(scramble);
    hasher.update(h2);
    let x = hasher.finalize();
    let h1: Vec<u8> = response.iter().zip(x.iter()).map(|(a, b)| a ^ b).collect();
    Sha1::digest(&h1).as_slice() == h2
}

pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// The TLS columns of `mysql.onelog_user` (after `Grant_option`).
const SSL_COLUMNS: &str = "Ssl_type VARCHAR(9) NOT NULL DEFAULT '', Ssl_cipher VARCHAR(2048) NOT NULL DEFAULT '', X509_issuer VARCHAR(2048) NOT NULL DEFAULT '', X509_subject VARCHAR(2048) NOT NULL DEFAULT ''";

/// Creates the account tables and `root@localhost` on first open; adds the TLS columns
/// to an account table made without them.
pub fn bootstrap(db: &Arc<Database>) -> Result<(), SqlError> {
    let cat = db.engine.catalog();
    let mut s = db.system_session();
    if let Some(t) = cat.table("mysql", "onelog_user") {
        if !t
            .columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case("Ssl_type"))
        {
            let add = SSL_COLUMNS
                .split(", ")
                .map(|c| format!("ADD COLUMN {c}"))
                .collect::<Vec<_>>()
                .join(", ");
            s.run_internal(&format!("ALTER TABLE mysql.onelog_user {add}"))?;
        }
    }
    if cat.table("mysql", "onelog_user").is_some() && cat.table("mysql", "onelog_db").is_some() {
        return Ok(());
    }
    for sql in [
        "CREATE DATABASE IF NOT EXISTS mysql",
        &format!("CREATE TABLE IF NOT EXISTS mysql.onelog_user (Host VARCHAR(255) NOT NULL, User VARCHAR(128) NOT NULL, Password VARCHAR(64) NOT NULL DEFAULT '', Privileges VARCHAR(1024) NOT NULL DEFAULT '', Grant_option TINYINT NOT NULL DEFAULT 0, {SSL_COLUMNS}, PRIMARY KEY (Host, User)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"),
        "CREATE TABLE IF NOT EXISTS mysql.onelog_db (Host VARCHAR(255) NOT NULL, Db VARCHAR(64) NOT NULL, User VARCHAR(128) NOT NULL, Privileges VARCHAR(1024) NOT NULL DEFAULT '', PRIMARY KEY (Host, Db, User)) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
    ] {
        s.run_internal(sql)?;
    }
    if let QueryResult::Rows { rows, .. } =
        s.run_internal("SELECT COUNT(*) FROM mysql.onelog_user")?
    {
        if rows[0][0] == Value::Int(0) {
            s.run_internal(&format!(
                "INSERT INTO mysql.onelog_user (Host, User, Password, Privileges, Grant_option) VALUES ('localhost', 'root', '', {}, 1)",
                quote(&store_mask(ALL_GLOBAL))
            ))?;
        }
    }
    Ok(())
}

/// Reloads the account cache from the tables.
pub fn reload(db: &Arc<Database>) -> Result<(), SqlError> {
    let accounts = read_accounts(&mut db.system_session())?;
    *db.accounts.write() = accounts;
    Ok(())
}

/// The accounts as the session's transaction sees the tables.
pub(crate) fn read_accounts(s: &mut Session) -> Result<Accounts, SqlError> {
    let mut list = Vec::new();
    if let QueryResult::Rows { rows, .. } = s.run_internal(
        "SELECT Host, User, Password, Privileges, Grant_option, Ssl_type, Ssl_cipher, X509_issuer, X509_subject FROM mysql.onelog_user",
    )? {
        for r in rows {
            let text = |i: usize| crate::expr::to_string(&r[i]);
            list.push(Account {
                host: text(0),
                user: text(1),
                password_hash: text(2),
                global: parse_mask(&text(3)),
                grant_option: crate::expr::truth(&r[4]) == Some(true),
                dbs: vec![],
                ssl: SslRequire::from_stored(&text(5), text(6), text(7), text(8)),
            });
        }
    }
    if let QueryResult::Rows { rows, .. } =
        s.run_internal("SELECT Host, Db, User, Privileges FROM mysql.onelog_db")?
    {
        for r in rows {
            let host = crate::expr::to_string(&r[0]);
            let user = crate::expr::to_string(&r[2]);
            if let Some(a) = list.iter_mut().find(|a| a.user == user && a.host == host) {
                a.dbs.push((
                    crate::expr::to_string(&r[1]),
                    parse_mask(&crate::expr::to_string(&r[3])),
                ));
            }
        }
    }
    Ok(Accounts { list })
}

/// ` IDENTIFIED BY PASSWORD '*...'` (empty without a password).
fn identified(a: &Account) -> String {
    if a.password_hash.is_empty() {
        String::new()
    } else {
        format!(" IDENTIFIED BY PASSWORD '{}'", a.password_hash)
    }
}

/// SHOW CREATE USER's statement for an account.
pub fn create_user_of(a: &Account) -> String {
    format!(
        "CREATE USER `{}`@`{}`{}{}",
        a.user,
        a.host,
        identified(a),
        a.ssl.clause()
    )
}

/// SHOW GRANTS lines for an account.
pub fn grants_of(a: &Account) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "GRANT {} ON *.* TO `{}`@`{}`{}{}{}",
        mask_names(a.global, ALL_GLOBAL),
        a.user,
        a.host,
        identified(a),
        a.ssl.clause(),
        if a.grant_option {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    ));
    for (d, m) in &a.dbs {
        out.push(format!(
            "GRANT {} ON `{d}`.* TO `{}`@`{}`",
            mask_names(*m, ALL_DB),
            a.user,
            a.host
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_round_trip() {
        let stored = hash_password("secret");
        assert_eq!(stored.len(), 41);
        let scramble = b"12345678901234567890";
        // Client side: SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw)))
        let h1 = Sha1::digest(b"secret");
        let h2 = Sha1::digest(h1);
        let mut hasher = Sha1::new();
        hasher.update(scramble);
        hasher.update(h2);
        let x = hasher.finalize();
        let resp: Vec<u8> = h1.iter().zip(x.iter()).map(|(a, b)| a ^ b).collect();
        assert!(check_scramble(&stored, scramble, &resp));
        assert!(!check_scramble(&stored, scramble, &[0u8; 20]));
        assert!(check_scramble("", scramble, &[]));
    }

    #[test]
    fn known_hash() {
        // MariaDB: SELECT PASSWORD('password')
        assert_eq!(
            hash_password("password"),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
    }
}
