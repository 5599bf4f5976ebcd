//! `ALTER [ONLINE] TABLE [IF EXISTS] name [WAIT n | NOWAIT] spec [, spec] ...`, MariaDB's
//! grammar, where a spec is an operation sqlparser reads (ADD / DROP / MODIFY / CHANGE /
//! RENAME / ALTER COLUMN / ALGORITHM= / LOCK= ...), `FORCE`, `CONVERT TO CHARACTER SET cs
//! [COLLATE c]`, or a run of table options separated by spaces or commas (`ENGINE=InnoDB
//! COMMENT 'x', ROW_FORMAT=DYNAMIC`).
//!
//! sqlparser knows none of the table options in ALTER TABLE but AUTO_INCREMENT, so they are
//! read here: each becomes a `SqlOption::KeyValue` keyed by its canonical name (`ENGINE`,
//! `COMMENT`, `CHARSET`, `COLLATE`, `ROW_FORMAT`, ..., and `CONVERT CHARSET` / `CONVERT
//! COLLATE` for CONVERT TO), and a run of them one `AlterTableOperation::SetOptionsParens`
//! (`binder::table_options` gives them their meaning). `FORCE` is an empty run: the table
//! keeps its definition.

use sqlparser::ast::{
    AlterTable, AlterTableOperation, Expr, Ident, SqlOption, Statement, Value as SqlValue,
};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{peek_word, word, words};

/// Options whose value is a word or a number (`KEY [=] value`), by their first words.
const PLAIN: &[(&[&str], &str)] = &[
    (&["ENGINE"], "ENGINE"),
    (&["AUTO_INCREMENT"], "AUTO_INCREMENT"),
    (&["DEFAULT", "CHARACTER", "SET"], "CHARSET"),
    (&["DEFAULT", "CHARSET"], "CHARSET"),
    (&["DEFAULT", "COLLATE"], "COLLATE"),
    (&["CHARACTER", "SET"], "CHARSET"),
    (&["CHARSET"], "CHARSET"),
    (&["COLLATE"], "COLLATE"),
    (&["MIN_ROWS"], "MIN_ROWS"),
    (&["MAX_ROWS"], "MAX_ROWS"),
    (&["AVG_ROW_LENGTH"], "AVG_ROW_LENGTH"),
    (&["PACK_KEYS"], "PACK_KEYS"),
    (&["STATS_PERSISTENT"], "STATS_PERSISTENT"),
    (&["STATS_AUTO_RECALC"], "STATS_AUTO_RECALC"),
    (&["STATS_SAMPLE_PAGES"], "STATS_SAMPLE_PAGES"),
    (&["CHECKSUM"], "CHECKSUM"),
    (&["TABLE_CHECKSUM"], "CHECKSUM"),
    (&["PAGE_CHECKSUM"], "PAGE_CHECKSUM"),
    (&["DELAY_KEY_WRITE"], "DELAY_KEY_WRITE"),
    (&["ROW_FORMAT"], "ROW_FORMAT"),
    (&["TRANSACTIONAL"], "TRANSACTIONAL"),
    (&["KEY_BLOCK_SIZE"], "KEY_BLOCK_SIZE"),
    (&["INSERT_METHOD"], "INSERT_METHOD"),
];

/// Options whose value is a string (`KEY [=] 'text'`).
const STRING: &[(&[&str], &str)] = &[
    (&["COMMENT"], "COMMENT"),
    (&["CONNECTION"], "CONNECTION"),
    (&["PASSWORD"], "PASSWORD"),
    (&["DATA", "DIRECTORY"], "DATA DIRECTORY"),
    (&["INDEX", "DIRECTORY"], "INDEX DIRECTORY"),
];

/// Whether the statement from the cursor is an ALTER TABLE this module reads.
fn is_alter_table(p: &Parser) -> bool {
    let mut n = 1;
    if peek_word(p, 0).as_deref() != Some("ALTER") {
        return false;
    }
    if peek_word(p, n).as_deref() == Some("ONLINE") {
        n += 1;
    }
    peek_word(p, n).as_deref() == Some("TABLE")
}

/// Parses an ALTER TABLE statement; Ok(None) (cursor untouched) for other statements.
pub(super) fn parse(p: &mut Parser) -> Result<Option<Statement>, ParserError> {
    if !is_alter_table(p) {
        return Ok(None);
    }
    p.next_token();
    word(p, "ONLINE");
    p.next_token();
    let if_exists = words(p, &["IF", "EXISTS"]);
    let name = p.parse_object_name(false)?;
    if word(p, "WAIT") {
        p.parse_literal_uint()?;
    } else {
        word(p, "NOWAIT");
    }
    let mut operations = Vec::new();
    loop {
        if let Some((options, comma)) = parse_options(p)? {
            operations.push(AlterTableOperation::SetOptionsParens { options });
            if p.peek_token_ref().token == Token::EOF {
                break;
            }
            if !comma {
                let t = p.peek_token();
                return p.expected("',' or a table option", t);
            }
            continue;
        }
        if peek_word(p, 0).as_deref() == Some("SET") {
            // (sqlparser's PostgreSQL `SET (...)` is not MariaDB's.)
            let t = p.peek_token();
            return p.expected("an ALTER TABLE operation", t);
        }
        operations.push(p.parse_alter_table_operation()?);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    let end_token = p.get_current_token().clone();
    Ok(Some(Statement::AlterTable(AlterTable {
        name,
        if_exists,
        only: false,
        operations,
        location: None,
        on_cluster: None,
        table_type: None,
        end_token: sqlparser::ast::helpers::attached_token::AttachedToken(end_token),
    })))
}

/// A run of table options (or `FORCE`, or `CONVERT TO ...`) from the cursor, with the
/// commas between them and the one after the last (the bool: whether there was one); None
/// when the cursor is not at one.
fn parse_options(p: &mut Parser) -> Result<Option<(Vec<SqlOption>, bool)>, ParserError> {
    let mut out = Vec::new();
    let mut any = false;
    let mut comma = false;
    loop {
        if word(p, "FORCE") {
            any = true;
        } else if words(p, &["CONVERT", "TO"]) {
            if !words(p, &["CHARACTER", "SET"]) && !word(p, "CHARSET") {
                let t = p.peek_token();
                return p.expected("CHARACTER SET", t);
            }
            out.push(key_value("CONVERT CHARSET", value(p)?));
            if word(p, "COLLATE") {
                out.push(key_value("CONVERT COLLATE", value(p)?));
            }
            any = true;
        } else if let Some(o) = parse_option(p)? {
            out.push(o);
            any = true;
        } else {
            break;
        }
        // Options may be separated by commas or by nothing.
        comma = p.consume_token(&Token::Comma);
    }
    Ok(any.then_some((out, comma)))
}

/// One table option from the cursor, None when the cursor is not at one.
fn parse_option(p: &mut Parser) -> Result<Option<SqlOption>, ParserError> {
    for (lead, key) in PLAIN {
        if words(p, lead) {
            let _ = p.consume_token(&Token::Eq);
            return Ok(Some(key_value(key, value(p)?)));
        }
    }
    for (lead, key) in STRING {
        if words(p, lead) {
            let _ = p.consume_token(&Token::Eq);
            let t = p.next_token();
            let Token::SingleQuotedString(s) = t.token else {
                return p.expected("a string", t);
            };
            return Ok(Some(key_value(
                key,
                Expr::Value(SqlValue::SingleQuotedString(s).into()),
            )));
        }
    }
    Ok(None)
}

/// An option's value: an unsigned number, a quoted string, a word (DEFAULT, DYNAMIC,
/// utf8mb4, InnoDB, ...) or a quoted name.
fn value(p: &mut Parser) -> Result<Expr, ParserError> {
    let t = p.next_token();
    Ok(match t.token {
        Token::Number(n, _) => Expr::Value(SqlValue::Number(n, false).into()),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => {
            Expr::Value(SqlValue::SingleQuotedString(s).into())
        }
        Token::Word(w) => Expr::Identifier(Ident::new(w.value)),
        _ => return p.expected("a value", t),
    })
}

fn key_value(key: &str, value: Expr) -> SqlOption {
    SqlOption::KeyValue {
        key: Ident::new(key),
        value,
    }
}

#[cfg(test)]
mod tests {
    use crate::parser::{parse_one, Stmt};
    use sqlparser::ast::{AlterTableOperation as A, SqlOption, Statement};

    fn ops(sql: &str) -> Vec<A> {
        match parse_one(sql).unwrap().stmt {
            Stmt::Sql(s) => match *s {
                Statement::AlterTable(a) => a.operations,
                other => panic!("{sql}: {other:?}"),
            },
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn keys(op: &A) -> Vec<String> {
        let A::SetOptionsParens { options } = op else {
            panic!("{op:?}")
        };
        options
            .iter()
            .map(|o| match o {
                SqlOption::KeyValue { key, value } => format!("{}={value}", key.value),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn options_between_operations() {
        let v = ops("ALTER TABLE t ENGINE=InnoDB");
        assert_eq!(keys(&v[0]), ["ENGINE=InnoDB"]);
        let v =
            ops("alter table d.t add f int, engine=innodb, comment 'x' row_format=compact, drop g");
        // Options run on across commas: one run between the two operations.
        assert_eq!(v.len(), 3);
        assert!(matches!(v[0], A::AddColumn { .. }));
        assert_eq!(
            keys(&v[1]),
            ["ENGINE=innodb", "COMMENT='x'", "ROW_FORMAT=compact"]
        );
        assert!(matches!(v[2], A::DropColumn { .. }));
        let v = ops("ALTER TABLE t DEFAULT CHARACTER SET = latin1 COLLATE latin1_bin");
        assert_eq!(keys(&v[0]), ["CHARSET=latin1", "COLLATE=latin1_bin"]);
        let v = ops("ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        assert_eq!(
            keys(&v[0]),
            ["CONVERT CHARSET=utf8mb4", "CONVERT COLLATE=utf8mb4_bin"]
        );
        assert_eq!(
            keys(&ops("ALTER ONLINE TABLE t FORCE")[0]),
            Vec::<String>::new()
        );
        let v = ops("ALTER TABLE t AUTO_INCREMENT=100, ALGORITHM=COPY");
        assert_eq!(keys(&v[0]), ["AUTO_INCREMENT=100"]);
        assert!(matches!(v[1], A::Algorithm { .. }));
    }

    #[test]
    fn malformed_options() {
        for bad in [
            "ALTER TABLE t COMMENT=5",
            "ALTER TABLE t AUTO_INCREMENT=-1",
            "ALTER TABLE t ENGINE=InnoDB ADD c int",
            "ALTER TABLE t CONVERT TO utf8mb4",
            "ALTER TABLE t SET (a = 1)",
        ] {
            assert_eq!(parse_one(bad).unwrap_err().code, 1064, "{bad}");
        }
    }
}
