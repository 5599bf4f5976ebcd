//! The account statements (CREATE/DROP/RENAME/ALTER USER, GRANT, REVOKE; SET PASSWORD is
//! parsed with SET) and their parts: user names, `IDENTIFIED BY`, privilege lists and
//! levels, and the `REQUIRE` clause of CREATE USER, ALTER USER and GRANT.

use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::{ident, string_or_ident, word, words};
use crate::ssl_require::{RequireClause, RequireItem};

/// A user name, `'user'@'host'`, or (None) CURRENT_USER.
pub type UserName = Option<(String, String)>;

#[derive(Debug, Clone)]
pub struct UserSpec {
    /// None: CURRENT_USER.
    pub name: UserName,
    /// `IDENTIFIED BY 'pw'` (clear text) or `IDENTIFIED BY PASSWORD '*HEX'` (hash).
    pub password: Option<String>,
    pub password_is_hash: bool,
}

#[derive(Debug, Clone)]
pub enum PrivLevel {
    /// `*.*`
    Global,
    /// `db.*` (or `*` with a current database)
    Db(Option<String>),
    /// `db.table`
    Table(Option<String>, String),
}

#[derive(Debug, Clone)]
pub enum AccountStmt {
    CreateUser {
        if_not_exists: bool,
        users: Vec<UserSpec>,
        require: Option<RequireClause>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<(String, String)>,
    },
    /// `RENAME USER from TO to [, from TO to ...]`
    RenameUser {
        pairs: Vec<((String, String), (String, String))>,
    },
    AlterUser {
        if_exists: bool,
        users: Vec<UserSpec>,
        require: Option<RequireClause>,
    },
    Grant {
        privs: Vec<String>,
        level: PrivLevel,
        users: Vec<UserSpec>,
        require: Option<RequireClause>,
        grant_option: bool,
    },
    Revoke {
        privs: Vec<String>,
        level: PrivLevel,
        users: Vec<(String, String)>,
    },
    /// `REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, user ...]`
    RevokeAll { users: Vec<(String, String)> },
    /// `SET PASSWORD [FOR user] = PASSWORD('pw') | 'hash'` (user None: the current one).
    SetPassword {
        user: UserName,
        password: String,
        is_hash: bool,
    },
}

/// Parses an account statement (SET PASSWORD aside); Ok(None) when the statement is
/// another one (the cursor is then untouched).
pub(super) fn parse_account(
    p: &mut Parser,
    first: &str,
    second: Option<&str>,
) -> Result<Option<AccountStmt>, ParserError> {
    let list = |p: &mut Parser, f: fn(&mut Parser) -> Result<UserSpec, ParserError>| {
        let mut v = vec![f(p)?];
        while p.consume_token(&Token::Comma) {
            v.push(f(p)?);
        }
        Ok::<_, ParserError>(v)
    };
    let names = |p: &mut Parser, what: &str| {
        let mut v = Vec::new();
        loop {
            let u = user_name(p)?
                .ok_or_else(|| ParserError::ParserError(format!("CURRENT_USER in {what}")))?;
            v.push(u);
            if !p.consume_token(&Token::Comma) {
                return Ok::<_, ParserError>(v);
            }
        }
    };
    let a = match (first, second) {
        ("CREATE", Some("USER")) => {
            p.next_token();
            p.next_token();
            let if_not_exists = words(p, &["IF", "NOT", "EXISTS"]);
            AccountStmt::CreateUser {
                if_not_exists,
                users: list(p, user_spec)?,
                require: require_clause(p)?,
            }
        }
        ("ALTER", Some("USER")) => {
            p.next_token();
            p.next_token();
            let if_exists = words(p, &["IF", "EXISTS"]);
            AccountStmt::AlterUser {
                if_exists,
                users: list(p, user_spec)?,
                require: require_clause(p)?,
            }
        }
        ("DROP", Some("USER")) => {
            p.next_token();
            p.next_token();
            let if_exists = words(p, &["IF", "EXISTS"]);
            AccountStmt::DropUser {
                if_exists,
                users: names(p, "DROP USER")?,
            }
        }
        ("RENAME", Some("USER")) => {
            p.next_token();
            p.next_token();
            let mut pairs = Vec::new();
            loop {
                let from = user_name(p)?.ok_or_else(|| {
                    ParserError::ParserError("CURRENT_USER in RENAME USER".into())
                })?;
                p.expect_keyword(Keyword::TO)?;
                let to = user_name(p)?.ok_or_else(|| {
                    ParserError::ParserError("CURRENT_USER in RENAME USER".into())
                })?;
                pairs.push((from, to));
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            AccountStmt::RenameUser { pairs }
        }
        ("GRANT", _) => {
            p.next_token();
            let privs = priv_list(p)?;
            p.expect_keyword(Keyword::ON)?;
            let level = priv_level(p)?;
            p.expect_keyword(Keyword::TO)?;
            let users = list(p, user_spec)?;
            let require = require_clause(p)?;
            let grant_option = words(p, &["WITH", "GRANT", "OPTION"]);
            AccountStmt::Grant {
                privs,
                level,
                users,
                require,
                grant_option,
            }
        }
        ("REVOKE", _) => {
            p.next_token();
            let privs = priv_list(p)?;
            let all = |x: &String| x == "ALL" || x == "ALL PRIVILEGES";
            if privs.len() == 2
                && all(&privs[0])
                && privs[1] == "GRANT OPTION"
                && p.parse_keyword(Keyword::FROM)
            {
                return Ok(Some(AccountStmt::RevokeAll {
                    users: names(p, "REVOKE")?,
                }));
            }
            p.expect_keyword(Keyword::ON)?;
            let level = priv_level(p)?;
            p.expect_keyword(Keyword::FROM)?;
            AccountStmt::Revoke {
                privs,
                level,
                users: names(p, "REVOKE")?,
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(a))
}

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

fn user_spec(p: &mut Parser) -> Result<UserSpec, ParserError> {
    let mut spec = UserSpec {
        name: user_name(p)?,
        password: None,
        password_is_hash: false,
    };
    if word(p, "IDENTIFIED") {
        if word(p, "VIA") || p.parse_keyword(Keyword::WITH) {
            // IDENTIFIED VIA/WITH mysql_native_password [USING|AS {'hash' | PASSWORD('pw')}]
            // (MariaDB's grammar: no BY after the plugin; a replica must parse what is
            // logged)
            let plugin = string_or_ident(p)?;
            if !plugin.eq_ignore_ascii_case("mysql_native_password") {
                return Err(ParserError::ParserError(format!(
                    "authentication plugin {plugin} is not supported"
                )));
            }
            if word(p, "USING") || word(p, "AS") {
                if word(p, "PASSWORD") {
                    p.expect_token(&Token::LParen)?;
                    spec.password = Some(p.parse_literal_string()?);
                    p.expect_token(&Token::RParen)?;
                } else {
                    spec.password = Some(p.parse_literal_string()?);
                    spec.password_is_hash = true;
                }
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

fn priv_list(p: &mut Parser) -> Result<Vec<String>, ParserError> {
    let mut out = Vec::new();
    loop {
        let mut name = Vec::new();
        loop {
            let t = p.peek_token();
            match &t.token {
                Token::Word(w)
                    if !matches!(w.keyword, Keyword::ON | Keyword::TO | Keyword::FROM) =>
                {
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

fn priv_level(p: &mut Parser) -> Result<PrivLevel, ParserError> {
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
fn require_clause(p: &mut Parser) -> Result<Option<RequireClause>, ParserError> {
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

#[cfg(test)]
mod tests {
    use super::super::{parse_one, Admin, Stmt};
    use super::*;

    fn account(sql: &str) -> AccountStmt {
        match parse_one(sql).map(|p| p.stmt) {
            Ok(Stmt::Admin(Admin::Account(a))) => a,
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn name(u: &str, h: &str) -> (String, String) {
        (u.into(), h.into())
    }

    #[test]
    fn rename_revoke_all_and_alter_if_exists() {
        let AccountStmt::RenameUser { pairs } =
            account("RENAME USER 'a'@'%' TO b@localhost, c TO 'd'@'h'")
        else {
            panic!()
        };
        assert_eq!(
            pairs,
            vec![
                (name("a", "%"), name("b", "localhost")),
                (name("c", "%"), name("d", "h"))
            ]
        );
        let AccountStmt::RevokeAll { users } =
            account("REVOKE ALL PRIVILEGES, GRANT OPTION FROM 'a'@'%', b")
        else {
            panic!()
        };
        assert_eq!(users, vec![name("a", "%"), name("b", "%")]);
        assert!(matches!(
            account("REVOKE ALL, GRANT OPTION ON *.* FROM a"),
            AccountStmt::Revoke { privs, .. } if privs == ["ALL", "GRANT OPTION"]
        ));
        assert!(matches!(
            account("ALTER USER IF EXISTS a IDENTIFIED BY 'x'"),
            AccountStmt::AlterUser {
                if_exists: true,
                ..
            }
        ));
        let AccountStmt::AlterUser { users, .. } = account("ALTER USER CURRENT_USER() REQUIRE SSL")
        else {
            panic!()
        };
        assert!(users[0].name.is_none());
        assert_eq!(parse_one("RENAME USER a").unwrap_err().code, 1064);
    }

    /// MariaDB's `IDENTIFIED VIA|WITH plugin [USING|AS ...]`: what onelog accepts, MariaDB
    /// replicas parse too.
    #[test]
    fn identified_via_plugin() {
        let spec = |sql: &str| match account(sql) {
            AccountStmt::CreateUser { users, .. } => {
                (users[0].password.clone(), users[0].password_is_hash)
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(
            spec("CREATE USER a IDENTIFIED VIA mysql_native_password USING PASSWORD('pw')"),
            (Some("pw".into()), false)
        );
        assert_eq!(
            spec("CREATE USER a IDENTIFIED WITH mysql_native_password AS '*AB'"),
            (Some("*AB".into()), true)
        );
        for bad in [
            "CREATE USER a IDENTIFIED WITH mysql_native_password BY 'pw'",
            "CREATE USER a IDENTIFIED VIA ed25519 USING PASSWORD('pw')",
        ] {
            assert!(parse_one(bad).is_err(), "{bad}");
        }
    }
}
