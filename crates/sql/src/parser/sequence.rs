//! The sequence statements, MariaDB's grammar: `CREATE [OR REPLACE] [TEMPORARY] SEQUENCE
//! [IF NOT EXISTS] name [options] [table options]`, `ALTER SEQUENCE [IF EXISTS] name
//! options`, `DROP [TEMPORARY] SEQUENCE [IF EXISTS] name, ...` and `SHOW CREATE SEQUENCE
//! name`, where an option is `MINVALUE [=] n | NO MINVALUE | NOMINVALUE | MAXVALUE [=] n |
//! NO MAXVALUE | NOMAXVALUE | START [WITH|=] n | INCREMENT [BY|=] n | CACHE [=] n |
//! NOCACHE | CYCLE | NOCYCLE | NO CYCLE | RESTART [[WITH|=] n]` (RESTART in ALTER only).
//! Also the expression forms `NEXT VALUE FOR s` and `PREVIOUS VALUE FOR s`, rewritten to
//! `nextval(s)` and `lastval(s)` before sqlparser reads the statement.

use onelog_engine::{seq_used as used, SeqDef};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Whitespace};

use super::{peek_word, qualified, string_or_ident, word, words, Admin};

/// Options as written: the values in a [`SeqDef`], which of them were given
/// ([`onelog_engine::seq_used`] bits) and the RESTART value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeqOptions {
    pub def: SeqDef,
    pub used: u32,
    pub restart: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeqStmt {
    Create {
        or_replace: bool,
        temporary: bool,
        if_not_exists: bool,
        name: (Option<String>, String),
        options: SeqOptions,
        /// `ENGINE=` as given.
        engine: Option<String>,
        comment: Option<String>,
    },
    Alter {
        if_exists: bool,
        name: (Option<String>, String),
        options: SeqOptions,
    },
    Drop {
        temporary: bool,
        if_exists: bool,
        names: Vec<(Option<String>, String)>,
    },
    ShowCreate((Option<String>, String)),
}

/// Parses a sequence statement (`first` is the statement's first word, not yet consumed).
pub(super) fn parse(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    let at = |p: &Parser, words: &[&str]| {
        words
            .iter()
            .enumerate()
            .all(|(i, w)| peek_word(p, i).as_deref() == Some(*w))
    };
    let stmt = match first {
        "CREATE" => {
            let (or_replace, temporary, skip) = if at(p, &["CREATE", "SEQUENCE"]) {
                (false, false, 2)
            } else if at(p, &["CREATE", "TEMPORARY", "SEQUENCE"]) {
                (false, true, 3)
            } else if at(p, &["CREATE", "OR", "REPLACE", "SEQUENCE"]) {
                (true, false, 4)
            } else if at(p, &["CREATE", "OR", "REPLACE", "TEMPORARY", "SEQUENCE"]) {
                (true, true, 5)
            } else {
                return Ok(None);
            };
            for _ in 0..skip {
                p.next_token();
            }
            let if_not_exists = words(p, &["IF", "NOT", "EXISTS"]);
            let name = qualified(p)?;
            let mut options = SeqOptions::default();
            let (mut engine, mut comment) = (None, None);
            loop {
                if option(p, &mut options, false)? {
                    continue;
                }
                if word(p, "ENGINE") {
                    let _ = p.consume_token(&Token::Eq);
                    engine = Some(string_or_ident(p)?);
                } else if word(p, "COMMENT") {
                    let _ = p.consume_token(&Token::Eq);
                    comment = Some(string(p)?);
                } else {
                    break;
                }
            }
            SeqStmt::Create {
                or_replace,
                temporary,
                if_not_exists,
                name,
                options,
                engine,
                comment,
            }
        }
        "ALTER" if at(p, &["ALTER", "SEQUENCE"]) => {
            p.next_token();
            p.next_token();
            let if_exists = words(p, &["IF", "EXISTS"]);
            let name = qualified(p)?;
            let mut options = SeqOptions::default();
            while option(p, &mut options, true)? {}
            SeqStmt::Alter {
                if_exists,
                name,
                options,
            }
        }
        "DROP" => {
            let temporary = if at(p, &["DROP", "SEQUENCE"]) {
                false
            } else if at(p, &["DROP", "TEMPORARY", "SEQUENCE"]) {
                true
            } else {
                return Ok(None);
            };
            for _ in 0..(2 + temporary as usize) {
                p.next_token();
            }
            let if_exists = words(p, &["IF", "EXISTS"]);
            let mut names = vec![qualified(p)?];
            while p.consume_token(&Token::Comma) {
                names.push(qualified(p)?);
            }
            SeqStmt::Drop {
                temporary,
                if_exists,
                names,
            }
        }
        "SHOW" if at(p, &["SHOW", "CREATE", "SEQUENCE"]) => {
            for _ in 0..3 {
                p.next_token();
            }
            SeqStmt::ShowCreate(qualified(p)?)
        }
        _ => return Ok(None),
    };
    Ok(Some(Admin::Sequence(stmt)))
}

fn string(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => p.expected("a string", t),
    }
}

/// A signed integer literal (MariaDB's `longlong_num`).
fn number(p: &mut Parser) -> Result<i64, ParserError> {
    let negative = p.consume_token(&Token::Minus);
    if !negative {
        let _ = p.consume_token(&Token::Plus);
    }
    let t = p.next_token();
    let Token::Number(n, _) = &t.token else {
        return p.expected("a number", t);
    };
    let v: i128 = match n.parse() {
        Ok(v) => v,
        Err(_) => return p.expected("an integer", t),
    };
    let v = if negative { -v } else { v };
    // Out of BIGINT: MariaDB's parser saturates; its range check then refuses it (4085).
    Ok(v.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
}

/// `Option 'X' used twice in statement` (1225), raised where the parse fails.
fn twice(what: &str) -> ParserError {
    ParserError::ParserError(format!("{DUP_PREFIX}{what}"))
}

/// Marks a parser error that is MariaDB's 1225, not a syntax error.
pub(crate) const DUP_PREFIX: &str = "onelog-dup-argument:";

/// Reads one option into `o`; false when the next words are not one.
fn option(p: &mut Parser, o: &mut SeqOptions, alter: bool) -> Result<bool, ParserError> {
    let Some(w) = peek_word(p, 0) else {
        return Ok(false);
    };
    let mark = |o: &mut SeqOptions, bit: u32, name: &str| -> Result<(), ParserError> {
        if o.used & bit != 0 {
            return Err(twice(name));
        }
        o.used |= bit;
        Ok(())
    };
    match w.as_str() {
        "MINVALUE" => {
            p.next_token();
            let _ = p.consume_token(&Token::Eq);
            // MariaDB does not check MINVALUE n for a repeat.
            o.def.min_value = number(p)?;
            o.used |= used::MIN;
        }
        "NOMINVALUE" => {
            p.next_token();
            mark(o, used::MIN, "MINVALUE")?;
        }
        "MAXVALUE" => {
            p.next_token();
            let _ = p.consume_token(&Token::Eq);
            mark(o, used::MAX, "MAXVALUE")?;
            o.def.max_value = number(p)?;
        }
        "NOMAXVALUE" => {
            p.next_token();
            mark(o, used::MAX, "MAXVALUE")?;
        }
        "NO" => match peek_word(p, 1).as_deref() {
            Some("MINVALUE") => {
                p.next_token();
                p.next_token();
                mark(o, used::MIN, "MINVALUE")?;
            }
            Some("MAXVALUE") => {
                p.next_token();
                p.next_token();
                mark(o, used::MAX, "MAXVALUE")?;
            }
            Some("CYCLE") => {
                p.next_token();
                p.next_token();
                mark(o, used::CYCLE, "CYCLE")?;
                o.def.cycle = false;
            }
            _ => return Ok(false),
        },
        "START" => {
            p.next_token();
            let _ = word(p, "WITH") || p.consume_token(&Token::Eq);
            mark(o, used::START, "START")?;
            o.def.start = number(p)?;
        }
        "INCREMENT" => {
            p.next_token();
            let _ = word(p, "BY") || p.consume_token(&Token::Eq);
            mark(o, used::INCREMENT, "INCREMENT")?;
            o.def.increment = number(p)?;
        }
        "CACHE" => {
            p.next_token();
            let _ = p.consume_token(&Token::Eq);
            mark(o, used::CACHE, "CACHE")?;
            o.def.cache = number(p)?;
        }
        "NOCACHE" => {
            p.next_token();
            mark(o, used::CACHE, "CACHE")?;
            o.def.cache = 0;
        }
        "CYCLE" | "NOCYCLE" => {
            p.next_token();
            mark(o, used::CYCLE, "CYCLE")?;
            o.def.cycle = w == "CYCLE";
        }
        "RESTART" if alter => {
            p.next_token();
            mark(o, used::RESTART, "RESTART")?;
            let with = word(p, "WITH") || p.consume_token(&Token::Eq);
            if with || matches!(p.peek_token().token, Token::Number(..) | Token::Minus) {
                o.restart = number(p)?;
                o.used |= used::RESTART_VALUE;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `NEXT VALUE FOR s` → `nextval(s)`, `PREVIOUS VALUE FOR s` → `lastval(s)` (`s` one
/// name or `db.name`).
pub(super) fn rewrite_value_for(toks: &mut Vec<TokenWithSpan>) {
    let is = |t: &TokenWithSpan, k: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let solid = |toks: &[TokenWithSpan], from: usize| {
        (from..toks.len()).find(|&i| !matches!(toks[i].token, Token::Whitespace(_)))
    };
    let mut i = 0;
    while i < toks.len() {
        let func = if is(&toks[i], "NEXT") {
            "nextval"
        } else if is(&toks[i], "PREVIOUS") {
            "lastval"
        } else {
            i += 1;
            continue;
        };
        let Some(v) = solid(toks, i + 1).filter(|&v| is(&toks[v], "VALUE")) else {
            i += 1;
            continue;
        };
        let Some(f) = solid(toks, v + 1).filter(|&f| is(&toks[f], "FOR")) else {
            i += 1;
            continue;
        };
        let Some(n) = solid(toks, f + 1).filter(|&n| matches!(toks[n].token, Token::Word(_)))
        else {
            i += 1;
            continue;
        };
        // The name's end: `db . name` when a period follows.
        let mut end = n;
        if let Some(dot) = solid(toks, n + 1).filter(|&d| toks[d].token == Token::Period) {
            if let Some(m) =
                solid(toks, dot + 1).filter(|&m| matches!(toks[m].token, Token::Word(_)))
            {
                end = m;
            }
        }
        let span = toks[i].span;
        let blank = || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
        toks.insert(end + 1, TokenWithSpan::new(Token::RParen, span));
        toks[i] = TokenWithSpan::new(Token::make_word(func, None), span);
        toks[v] = TokenWithSpan::new(Token::LParen, span);
        toks[f] = blank();
        i = end + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse_one, Stmt};

    fn seq(sql: &str) -> SeqStmt {
        match parse_one(sql).unwrap().stmt {
            Stmt::Admin(Admin::Sequence(s)) => s,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn options_as_mariadb_reads_them() {
        let SeqStmt::Create { options, .. } = seq(
            "create sequence s start with 10 increment by -5 minvalue=1 nomaxvalue cache 2 cycle",
        ) else {
            panic!()
        };
        assert_eq!(options.def.start, 10);
        assert_eq!(options.def.increment, -5);
        assert_eq!(options.def.cache, 2);
        assert!(options.def.cycle);
        assert_eq!(
            options.used,
            used::START | used::INCREMENT | used::MIN | used::MAX | used::CACHE | used::CYCLE
        );
        let e = parse_one("create sequence s start 1 start 2").unwrap_err();
        assert_eq!(e.code, 1225, "{}", e.message);
        assert_eq!(
            parse_one("create sequence s restart 5").unwrap_err().code,
            1064
        );
        let SeqStmt::Alter { options, .. } = seq("alter sequence s restart with 7") else {
            panic!()
        };
        assert_eq!(options.restart, 7);
        assert_eq!(options.used, used::RESTART | used::RESTART_VALUE);
    }

    #[test]
    fn next_value_for_is_nextval() {
        let p = parse_one("select next value for d.s, previous value for s").unwrap();
        let Stmt::Sql(s) = p.stmt else { panic!() };
        assert_eq!(s.to_string(), "SELECT nextval(d.s), lastval(s)");
    }
}
