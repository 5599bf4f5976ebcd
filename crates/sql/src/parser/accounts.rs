//! The account statements' parts: user names, `IDENTIFIED BY`, privilege lists and
//! levels, and the `REQUIRE` clause of CREATE USER, ALTER USER and GRANT.

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{ident, string_or_ident, word, PrivLevel, UserSpec};
use crate::ssl_require::{RequireClause, RequireItem};

/// `'user'@'host'` (host defaults to `%`), or CURRENT_USER[()] (returned as None).
pub(super) fn user_name(p: &mut Parser) -> Result<Option<(String, String)>, ParserError> {
    if word(p, "CURRENT_USER") {
        if p.consume_token(&Token::LParen) {
            p.expect_token(&Token::RParen)?;
        }
        return Ok(None);
    }
    let t = p.next_token();
    let (user, host_inline) = match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => (s, None),
        // The MySQL tokenizer reads `root@localhost` / `root@'%'` as one word or a word
        // followed by a string.
        Token::Word(w) => match w.value.split_once('@') {
            Some((u, h)) if w.quote_style.is_none() => (u.to_string(), Some(h.to_string())),
            _ => (w.value, None),
        },
        _ => return p.expected("a user name", t),
    };
    let host = if let Some(h) = host_inline {
        if h.is_empty() {
            string_or_ident(p)?
        } else {
            h
        }
    } else if p.peek_token().token == Token::AtSign {
        p.next_token();
        string_or_ident(p)?
    } else {
        // `'u'@'h'`: the tokenizer may produce a word starting with '@'.
        match p.peek_token().token {
            Token::Word(w) if w.value.starts_with('@') && w.quote_style.is_none() => {
                p.next_token();
                let h = w.value[1..].to_string();
                if h.is_empty() {
                    string_or_ident(p)?
                } else {
                    h
                }
            }
            _ => "%".to_string(),
        }
    };
    Ok(Some((user, host)))
}

pub(super) fn user_spec(p: &mut Parser) -> Result<UserSpec, ParserError> {
    let (user, host) = user_name(p)?.unwrap_or_else(|| ("".into(), "".into()));
    let mut spec = UserSpec {
        user,
        host,
        password: None,
        password_is_hash: false,
    };
    if word(p, "IDENTIFIED") {
        if word(p, "VIA") || p.parse_keyword(Keyword::WITH) {
            // IDENTIFIED VIA/WITH mysql_native_password [USING|BY|AS 'x']
            let plugin = string_or_ident(p)?;
            if !plugin.eq_ignore_ascii_case("mysql_native_password") {
                return Err(ParserError::ParserError(format!(
                    "authentication plugin {plugin} is not supported"
                )));
            }
            if word(p, "USING") || word(p, "AS") {
                spec.password = Some(p.parse_literal_string()?);
                spec.password_is_hash = true;
            } else if p.parse_keyword(Keyword::BY) {
                spec.password = Some(p.parse_literal_string()?);
            }
        } else {
            p.expect_keyword(Keyword::BY)?;
            if word(p, "PASSWORD") {
                spec.password_is_hash = true;
            }
            spec.password = Some(p.parse_literal_string()?);
        }
    }
    Ok(spec)
}

pub(super) fn priv_list(p: &mut Parser) -> Result<Vec<String>, ParserError> {
    let mut out = Vec::new();
    loop {
        let mut name = Vec::new();
        loop {
            let t = p.peek_token();
            match &t.token {
                Token::Word(w) if w.keyword != Keyword::ON && w.keyword != Keyword::TO => {
                    name.push(w.value.to_uppercase());
                    p.next_token();
                }
                _ => break,
            }
        }
        if name.is_empty() {
            let t = p.peek_token();
            return p.expected("a privilege", t);
        }
        if p.consume_token(&Token::LParen) {
            // column lists are not supported
            return Err(ParserError::ParserError("column privileges".into()));
        }
        out.push(name.join(" "));
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(out)
}

pub(super) fn priv_level(p: &mut Parser) -> Result<PrivLevel, ParserError> {
    let _ = p.parse_keyword(Keyword::TABLE);
    let first = if p.consume_token(&Token::Mul) {
        None
    } else {
        Some(ident(p)?)
    };
    if p.consume_token(&Token::Period) {
        let second = if p.consume_token(&Token::Mul) {
            None
        } else {
            Some(ident(p)?)
        };
        Ok(match (first, second) {
            (None, None) => PrivLevel::Global,
            (Some(d), None) => PrivLevel::Db(Some(d)),
            (d, Some(t)) => PrivLevel::Table(d, t),
        })
    } else {
        Ok(match first {
            None => PrivLevel::Db(None),
            Some(t) => PrivLevel::Table(None, t),
        })
    }
}

/// `[REQUIRE {NONE | SSL | X509 | item [[AND] item ...]}]` where item is
/// `ISSUER 'x' | SUBJECT 'x' | CIPHER 'x'` (MariaDB's grammar: SSL and X509 stand alone).
pub(super) fn require_clause(p: &mut Parser) -> Result<Option<RequireClause>, ParserError> {
    if !word(p, "REQUIRE") {
        return Ok(None);
    }
    if word(p, "NONE") {
        return Ok(Some(RequireClause::None));
    }
    if word(p, "SSL") {
        return Ok(Some(RequireClause::Ssl));
    }
    if word(p, "X509") {
        return Ok(Some(RequireClause::X509));
    }
    let mut items = Vec::new();
    loop {
        let item = if word(p, "ISSUER") {
            RequireItem::Issuer
        } else if word(p, "SUBJECT") {
            RequireItem::Subject
        } else if word(p, "CIPHER") {
            RequireItem::Cipher
        } else if items.is_empty() {
            let t = p.peek_token();
            return p.expected("SSL, X509, NONE, ISSUER, SUBJECT or CIPHER", t);
        } else {
            break;
        };
        items.push((item, p.parse_literal_string()?));
        let and = matches!(&p.peek_token().token, Token::Word(w) if w.keyword == Keyword::AND);
        if and {
            p.next_token();
            if !matches!(
                super::peek_word(p, 0).as_deref(),
                Some("ISSUER" | "SUBJECT" | "CIPHER")
            ) {
                let t = p.peek_token();
                return p.expected("ISSUER, SUBJECT or CIPHER", t);
            }
        }
    }
    Ok(Some(RequireClause::Specified(items)))
}
