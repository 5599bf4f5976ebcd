//! The replica's statements: CHANGE MASTER TO, START | STOP SLAVE, RESET SLAVE,
//! SHOW SLAVE STATUS (REPLICA is a synonym of SLAVE, as in MariaDB 10.5+).

use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{expect_word, peek_word, word, Admin};

/// A replica statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplicaStmt {
    /// `CHANGE MASTER TO name = value, ...`: names upper-cased, values as written
    /// (strings unquoted).
    ChangeMaster(Vec<(String, String)>),
    Start,
    Stop,
    Reset {
        all: bool,
    },
    ShowStatus,
}

fn slave_word(p: &mut Parser) -> bool {
    word(p, "SLAVE") || word(p, "REPLICA")
}

/// `[IO_THREAD | SQL_THREAD]` after START/STOP SLAVE: onelog's replica is one thread that
/// fetches and applies, so both forms act on it as a whole.
fn thread_option(p: &mut Parser) {
    let _ = word(p, "IO_THREAD") || word(p, "SQL_THREAD");
    while p.consume_token(&Token::Comma) {
        let _ = word(p, "IO_THREAD") || word(p, "SQL_THREAD");
    }
}

fn option_value(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    Ok(match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
        Token::Number(n, _) => n,
        Token::Word(w) => w.value,
        other => {
            return Err(ParserError::ParserError(format!(
                "Expected a value, found: {other}"
            )))
        }
    })
}

/// Parses a replica statement after its first word was peeked as `first`; None when the
/// words are not one.
pub(super) fn parse(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    let second = peek_word(p, 1);
    let is_slave = matches!(second.as_deref(), Some("SLAVE") | Some("REPLICA"));
    let stmt = match first {
        "CHANGE" if matches!(second.as_deref(), Some("MASTER")) => {
            p.next_token();
            p.next_token();
            expect_word(p, "TO")?;
            let mut opts = Vec::new();
            loop {
                let name = match p.next_token().token {
                    Token::Word(w) => w.value.to_uppercase(),
                    other => {
                        return Err(ParserError::ParserError(format!(
                            "Expected an option name, found: {other}"
                        )))
                    }
                };
                if !p.consume_token(&Token::Eq) {
                    return Err(ParserError::ParserError(format!("Expected = after {name}")));
                }
                opts.push((name, option_value(p)?));
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            ReplicaStmt::ChangeMaster(opts)
        }
        "START" if is_slave => {
            p.next_token();
            slave_word(p);
            thread_option(p);
            ReplicaStmt::Start
        }
        "STOP" if is_slave => {
            p.next_token();
            slave_word(p);
            thread_option(p);
            ReplicaStmt::Stop
        }
        "RESET" if is_slave => {
            p.next_token();
            slave_word(p);
            ReplicaStmt::Reset {
                all: word(p, "ALL"),
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(Admin::Replica(stmt)))
}

/// `SHOW SLAVE STATUS` / `SHOW REPLICA STATUS` (after SHOW).
pub(super) fn parse_show(p: &mut Parser) -> bool {
    let is = matches!(peek_word(p, 0).as_deref(), Some("SLAVE") | Some("REPLICA"))
        && matches!(peek_word(p, 1).as_deref(), Some("STATUS"));
    if is {
        p.next_token();
        p.next_token();
    }
    is
}
