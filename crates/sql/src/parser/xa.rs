//! The XA statements: `XA {START|BEGIN} xid [JOIN|RESUME]`, `XA END xid [SUSPEND [FOR
//! MIGRATE]]`, `XA PREPARE xid`, `XA COMMIT xid [ONE PHASE]`, `XA ROLLBACK xid` and
//! `XA RECOVER [FORMAT = 'RAW' | 'SQL']`, where `xid` is `gtrid [, bqual [, formatID]]`
//! (strings, `X'hex'` or `0xhex` literals; formatID an integer, 1 by default).

use onelog_binlog::XaXid;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{peek_word, word, words, Admin};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XaStmt {
    /// `XA START`; `join_resume`: JOIN or RESUME was given (not supported: 1398).
    Start {
        xid: XaXid,
        join_resume: bool,
    },
    /// `XA END`; `suspend`: SUSPEND was given (not supported: 1398).
    End {
        xid: XaXid,
        suspend: bool,
    },
    Prepare(XaXid),
    Commit {
        xid: XaXid,
        one_phase: bool,
    },
    Rollback(XaXid),
    /// `XA RECOVER [FORMAT = '...']`: the format name as given (None: RAW).
    Recover(Option<String>),
}

/// Parses an XA statement (`first` is the statement's first word, not yet consumed).
pub(super) fn parse(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    if first != "XA" {
        return Ok(None);
    }
    let Some(verb) = peek_word(p, 1) else {
        return Ok(None);
    };
    const VERBS: [&str; 7] = [
        "START", "BEGIN", "END", "PREPARE", "COMMIT", "ROLLBACK", "RECOVER",
    ];
    if !VERBS.contains(&verb.as_str()) {
        // A syntax error at the word after XA.
        return Ok(None);
    }
    p.next_token();
    p.next_token();
    let stmt = match verb.as_str() {
        "START" | "BEGIN" => {
            let xid = xid(p)?;
            let join_resume = word(p, "JOIN") || word(p, "RESUME");
            XaStmt::Start { xid, join_resume }
        }
        "END" => {
            let xid = xid(p)?;
            let suspend = word(p, "SUSPEND");
            if suspend {
                let _ = words(p, &["FOR", "MIGRATE"]);
            }
            XaStmt::End { xid, suspend }
        }
        "PREPARE" => XaStmt::Prepare(xid(p)?),
        "COMMIT" => {
            let xid = xid(p)?;
            let one_phase = words(p, &["ONE", "PHASE"]);
            XaStmt::Commit { xid, one_phase }
        }
        "ROLLBACK" => XaStmt::Rollback(xid(p)?),
        "RECOVER" => {
            let format = if word(p, "FORMAT") {
                p.expect_token(&Token::Eq)?;
                Some(string(p)?)
            } else {
                None
            };
            XaStmt::Recover(format.map(|f| String::from_utf8_lossy(&f).into_owned()))
        }
        _ => unreachable!("checked above"),
    };
    Ok(Some(Admin::Xa(stmt)))
}

/// `gtrid [, bqual [, formatID]]`.
fn xid(p: &mut Parser) -> Result<XaXid, ParserError> {
    let gtrid = string(p)?;
    let mut bqual = Vec::new();
    let mut format_id = 1u32;
    if p.consume_token(&Token::Comma) {
        bqual = string(p)?;
        if p.consume_token(&Token::Comma) {
            format_id = match p.next_token().token {
                Token::Number(n, _) => n
                    .parse::<u64>()
                    .ok()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| ParserError::ParserError(format!("formatID {n}")))?,
                t => return Err(ParserError::ParserError(format!("formatID {t}"))),
            };
        }
    }
    XaXid::new(format_id, &gtrid, &bqual)
        .ok_or_else(|| ParserError::ParserError("XID part empty or too long".into()))
}

/// A string, `X'hex'` or `0xhex` literal as bytes.
fn string(p: &mut Parser) -> Result<Vec<u8>, ParserError> {
    let bad = |t: &Token| ParserError::ParserError(format!("Expected: a string, found: {t}"));
    let t = p.next_token().token;
    match &t {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s.as_bytes().to_vec()),
        Token::HexStringLiteral(h) => super::load::hex_bytes(h).ok_or_else(|| bad(&t)),
        Token::Number(n, _) if n.starts_with("0x") || n.starts_with("0X") => {
            super::load::hex_bytes(&n[2..]).ok_or_else(|| bad(&t))
        }
        _ => Err(bad(&t)),
    }
}
