//! `LOCK TABLES`, `UNLOCK TABLES`, `FLUSH ...` (with `FLUSH TABLES WITH READ LOCK`),
//! `SHUTDOWN`, and `ALTER TABLE t DISABLE | ENABLE KEYS` (what dumps put around their
//! INSERTs).

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{expect_word, ident, peek_word, qualified, word, words, Admin};

/// How `LOCK TABLES` locks one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    /// `READ [LOCAL]`
    Read,
    /// `[LOW_PRIORITY] WRITE [CONCURRENT]`
    Write,
}

/// One table of `LOCK TABLES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockItem {
    pub db: Option<String>,
    pub table: String,
    /// `AS alias` (statements must then name the table by it).
    pub alias: Option<String>,
    pub kind: LockKind,
}

/// One option of `FLUSH opt, opt, ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlushWhat {
    /// `LOGS`: every log (the binary log rotates, the engine log is synced).
    Logs,
    BinaryLogs,
    /// `ENGINE LOGS`: the storage engine's log made durable.
    EngineLogs,
    /// `ERROR | GENERAL | SLOW | RELAY LOGS`: logs onelog does not write.
    UnusedLogs,
    Privileges,
    /// `TABLES [t, ...]`: onelog has no table cache to close.
    Tables,
    /// `TABLES WITH READ LOCK`: the global read lock.
    TablesWithReadLock,
    /// `TABLES t, ... WITH READ LOCK`: read locks on the tables, as LOCK TABLES READ.
    TablesListWithReadLock(Vec<(Option<String>, String)>),
    /// `STATUS`, `HOSTS`, `USER_RESOURCES`, `QUERY CACHE`: nothing onelog keeps.
    Nothing,
}

/// `LOCK TABLE[S] t [[AS] a] {READ [LOCAL] | [LOW_PRIORITY] WRITE [CONCURRENT]}, ...
/// [WAIT n | NOWAIT]` after `LOCK`.
fn parse_lock(p: &mut Parser) -> Result<Admin, ParserError> {
    if !word(p, "TABLES") {
        expect_word(p, "TABLE")?;
    }
    let mut items = Vec::new();
    loop {
        let (db, table) = qualified(p)?;
        let alias = if p.parse_keyword(Keyword::AS) {
            Some(ident(p)?)
        } else if matches!(
            peek_word(p, 0).as_deref(),
            Some("READ" | "WRITE" | "LOW_PRIORITY")
        ) {
            None
        } else {
            Some(ident(p)?)
        };
        let kind = if word(p, "READ") {
            let _ = word(p, "LOCAL");
            LockKind::Read
        } else {
            let _ = word(p, "LOW_PRIORITY");
            expect_word(p, "WRITE")?;
            let _ = word(p, "CONCURRENT");
            LockKind::Write
        };
        items.push(LockItem {
            db,
            table,
            alias,
            kind,
        });
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    if word(p, "WAIT") {
        p.parse_literal_uint()?;
    } else {
        let _ = word(p, "NOWAIT");
    }
    Ok(Admin::LockTables(items))
}

/// `FLUSH [NO_WRITE_TO_BINLOG | LOCAL] option [, option] ...` after `FLUSH`.
fn parse_flush(p: &mut Parser) -> Result<Admin, ParserError> {
    let _ = word(p, "NO_WRITE_TO_BINLOG") || word(p, "LOCAL");
    if word(p, "TABLES") || word(p, "TABLE") {
        let mut tables = Vec::new();
        if !matches!(p.peek_token().token, Token::EOF) && peek_word(p, 0).as_deref() != Some("WITH")
        {
            loop {
                tables.push(qualified(p)?);
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
        }
        if words(p, &["WITH", "READ", "LOCK"]) {
            return Ok(Admin::Flush(vec![if tables.is_empty() {
                FlushWhat::TablesWithReadLock
            } else {
                FlushWhat::TablesListWithReadLock(tables)
            }]));
        }
        if words(p, &["FOR", "EXPORT"]) {
            let t = p.peek_token();
            return p.expected("end of FLUSH TABLES", t);
        }
        return Ok(Admin::Flush(vec![FlushWhat::Tables]));
    }
    let mut what = Vec::new();
    loop {
        let w = if word(p, "LOGS") {
            FlushWhat::Logs
        } else if words(p, &["BINARY", "LOGS"]) {
            FlushWhat::BinaryLogs
        } else if words(p, &["ENGINE", "LOGS"]) {
            FlushWhat::EngineLogs
        } else if words(p, &["ERROR", "LOGS"])
            || words(p, &["GENERAL", "LOGS"])
            || words(p, &["SLOW", "LOGS"])
            || words(p, &["RELAY", "LOGS"])
        {
            FlushWhat::UnusedLogs
        } else if word(p, "PRIVILEGES") {
            FlushWhat::Privileges
        } else if word(p, "STATUS")
            || word(p, "HOSTS")
            || word(p, "USER_RESOURCES")
            || words(p, &["QUERY", "CACHE"])
        {
            FlushWhat::Nothing
        } else {
            let t = p.peek_token();
            return p.expected("a FLUSH option", t);
        };
        what.push(w);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(Admin::Flush(what))
}

/// Whether the tokens from the cursor are `ALTER TABLE [db.]t DISABLE|ENABLE KEYS` and
/// nothing more.
fn is_alter_keys(p: &Parser) -> bool {
    let is_name = |n: usize| matches!(p.peek_nth_token_ref(n).token, Token::Word(_));
    if !is_name(2) {
        return false;
    }
    let mut n = 3;
    if p.peek_nth_token_ref(3).token == Token::Period {
        if !is_name(4) {
            return false;
        }
        n = 5;
    }
    matches!(peek_word(p, n).as_deref(), Some("DISABLE" | "ENABLE"))
        && peek_word(p, n + 1).as_deref() == Some("KEYS")
        && p.peek_nth_token_ref(n + 2).token == Token::EOF
}

/// Parses the statements of this module after their first word was peeked as `first`.
pub(super) fn parse(
    p: &mut Parser,
    first: &str,
    second: Option<&str>,
) -> Result<Option<Admin>, ParserError> {
    Ok(Some(match (first, second) {
        ("LOCK", Some("TABLES" | "TABLE")) => {
            p.next_token();
            parse_lock(p)?
        }
        ("UNLOCK", Some("TABLES" | "TABLE")) => {
            p.next_token();
            p.next_token();
            Admin::UnlockTables
        }
        ("FLUSH", _) => {
            p.next_token();
            parse_flush(p)?
        }
        ("ALTER", Some("TABLE")) if is_alter_keys(p) => {
            p.next_token();
            p.next_token();
            let (db, table) = qualified(p)?;
            let enable = word(p, "ENABLE");
            if !enable {
                expect_word(p, "DISABLE")?;
            }
            expect_word(p, "KEYS")?;
            Admin::AlterKeys { db, table, enable }
        }
        ("SHUTDOWN", _) => {
            p.next_token();
            if words(p, &["WAIT", "FOR", "ALL"]) && !word(p, "SLAVES") {
                expect_word(p, "REPLICAS")?;
            }
            Admin::Shutdown
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse_one, Stmt};

    fn admin(s: &str) -> Admin {
        match parse_one(s).unwrap().stmt {
            Stmt::Admin(a) => a,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn lock_tables() {
        let Admin::LockTables(v) =
            admin("LOCK TABLES `t` READ /*!32311 LOCAL */,`u` READ /*!32311 LOCAL */")
        else {
            panic!()
        };
        assert_eq!(v.len(), 2);
        assert!(v
            .iter()
            .all(|i| i.kind == LockKind::Read && i.alias.is_none()));
        let Admin::LockTables(v) = admin("lock table d.t as x low_priority write, t y read") else {
            panic!()
        };
        assert_eq!(v[0].db.as_deref(), Some("d"));
        assert_eq!(v[0].alias.as_deref(), Some("x"));
        assert_eq!(v[0].kind, LockKind::Write);
        assert_eq!(v[1].alias.as_deref(), Some("y"));
        assert!(matches!(admin("UNLOCK TABLES"), Admin::UnlockTables));
        assert!(matches!(
            admin("/*!40000 ALTER TABLE `d`.`t` DISABLE KEYS */"),
            Admin::AlterKeys { db: Some(d), table, enable: false } if d == "d" && table == "t"
        ));
        assert!(matches!(
            admin("alter table t enable keys"),
            Admin::AlterKeys {
                db: None,
                enable: true,
                ..
            }
        ));
        assert_eq!(parse_one("LOCK TABLES t").unwrap_err().code, 1064);
        assert_eq!(parse_one("LOCK TABLES t READ,").unwrap_err().code, 1064);
    }

    #[test]
    fn flush_forms() {
        let flush = |s: &str| match admin(s) {
            Admin::Flush(v) => v,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(
            flush("FLUSH TABLES WITH READ LOCK"),
            vec![FlushWhat::TablesWithReadLock]
        );
        assert_eq!(
            flush("FLUSH /*!40101 LOCAL */ TABLES"),
            vec![FlushWhat::Tables]
        );
        assert_eq!(
            flush("flush tables a, d.b with read lock"),
            vec![FlushWhat::TablesListWithReadLock(vec![
                (None, "a".into()),
                (Some("d".into()), "b".into())
            ])]
        );
        assert_eq!(
            flush("FLUSH ENGINE LOGS, PRIVILEGES, STATUS"),
            vec![
                FlushWhat::EngineLogs,
                FlushWhat::Privileges,
                FlushWhat::Nothing
            ]
        );
        assert!(matches!(admin("SHUTDOWN"), Admin::Shutdown));
        assert_eq!(parse_one("FLUSH NOTHING").unwrap_err().code, 1064);
    }
}
