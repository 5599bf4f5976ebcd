//! Transaction control and prepared statements: `BEGIN [WORK]`, `START TRANSACTION [WITH
//! CONSISTENT SNAPSHOT | READ ONLY | READ WRITE, ...]`, `COMMIT`/`ROLLBACK [WORK] [AND [NO]
//! CHAIN] [[NO] RELEASE]`, `ROLLBACK TO [SAVEPOINT] sp`, `SAVEPOINT sp`, `RELEASE SAVEPOINT
//! sp`, `PREPARE stmt FROM expr`, `EXECUTE stmt [USING expr, ...]` and `{DEALLOCATE | DROP}
//! PREPARE stmt`.

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{expect_word, ident, peek_word, word, words, Admin};

/// Ok(None): not one of these statements (the cursor is untouched).
pub(super) fn parse(
    p: &mut Parser,
    first: &str,
    second: Option<&str>,
) -> Result<Option<Admin>, ParserError> {
    let a = match first {
        "BEGIN" => {
            p.next_token();
            let _ = word(p, "WORK");
            Admin::Begin {
                read_only: false,
                snapshot: false,
            }
        }
        "START" if second == Some("TRANSACTION") => {
            p.next_token();
            p.next_token();
            let mut read_only = false;
            let mut snapshot = false;
            loop {
                if words(p, &["WITH", "CONSISTENT", "SNAPSHOT"]) {
                    snapshot = true;
                } else if words(p, &["READ", "ONLY"]) {
                    read_only = true;
                } else if words(p, &["READ", "WRITE"]) {
                    read_only = false;
                } else {
                    break;
                }
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            Admin::Begin {
                read_only,
                snapshot,
            }
        }
        "COMMIT" | "ROLLBACK" => {
            p.next_token();
            let _ = word(p, "WORK");
            if first == "ROLLBACK" && word(p, "TO") {
                // `SAVEPOINT` is optional, and is itself a valid savepoint name.
                if peek_word(p, 0).as_deref() == Some("SAVEPOINT")
                    && !matches!(p.peek_nth_token_ref(1).token, Token::EOF)
                {
                    p.next_token();
                }
                return Ok(Some(Admin::RollbackTo(ident(p)?)));
            }
            if word(p, "AND") {
                let _ = word(p, "NO");
                expect_word(p, "CHAIN")?;
            }
            let _ = words(p, &["NO", "RELEASE"]);
            if first == "COMMIT" {
                Admin::Commit
            } else {
                Admin::Rollback
            }
        }
        "PREPARE" => {
            p.next_token();
            let name = ident(p)?;
            p.expect_keyword(Keyword::FROM)?;
            Admin::Prepare {
                name,
                source: p.parse_expr()?,
            }
        }
        "EXECUTE" => {
            p.next_token();
            let name = ident(p)?;
            let mut args = Vec::new();
            if p.parse_keyword(Keyword::USING) {
                args.push(p.parse_expr()?);
                while p.consume_token(&Token::Comma) {
                    args.push(p.parse_expr()?);
                }
            }
            Admin::Execute { name, args }
        }
        "DEALLOCATE" => {
            p.next_token();
            expect_word(p, "PREPARE")?;
            Admin::Deallocate(ident(p)?)
        }
        "DROP" if second == Some("PREPARE") => {
            p.next_token();
            p.next_token();
            Admin::Deallocate(ident(p)?)
        }
        "SAVEPOINT" => {
            p.next_token();
            Admin::Savepoint(ident(p)?)
        }
        "RELEASE" if second == Some("SAVEPOINT") => {
            p.next_token();
            p.next_token();
            Admin::ReleaseSavepoint(ident(p)?)
        }
        _ => return Ok(None),
    };
    Ok(Some(a))
}
