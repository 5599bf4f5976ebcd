//! `CREATE [OR REPLACE] [ALGORITHM=..] [DEFINER=..] [SQL SECURITY ..] VIEW`, `ALTER ... VIEW`
//! and `DROP VIEW`. The view's query is kept as its source text (what the view is stored,
//! logged and shown with) beside its parsed form; [`fill_query_text`] cuts the text out
//! once the statement's locations can be mapped to offsets.

use sqlparser::ast::Query;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token};

use super::{ident, peek_word, qualified, user_name, word, words, Admin};

/// A parsed `CREATE VIEW` / `ALTER VIEW`.
#[derive(Debug, Clone)]
pub struct ViewStmt {
    /// `ALTER VIEW`: the view must exist, and is replaced.
    pub alter: bool,
    pub or_replace: bool,
    pub if_not_exists: bool,
    /// UNDEFINED, MERGE or TEMPTABLE (None: not given).
    pub algorithm: Option<String>,
    /// `DEFINER = user@host`; `Some(None)` for `DEFINER = CURRENT_USER`.
    pub definer: Option<Option<(String, String)>>,
    /// DEFINER or INVOKER (None: not given).
    pub security: Option<String>,
    pub db: Option<String>,
    pub name: String,
    /// The explicit column list, if any.
    pub columns: Vec<String>,
    pub query: Box<Query>,
    /// The query's source text.
    pub query_text: String,
    /// `WITH [CASCADED | LOCAL] CHECK OPTION`: CASCADED or LOCAL.
    pub check_option: Option<String>,
    /// Where the query starts and where it ends (the next token), in the statement.
    pub(super) span: (Location, Location),
}

/// Parses the view statements (`first` is the statement's first word, not yet consumed).
pub(super) fn parse(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    match first {
        "CREATE" | "ALTER" if is_view_statement(p) => {
            p.next_token();
            Ok(Some(Admin::CreateView(Box::new(create(
                p,
                first == "ALTER",
            )?))))
        }
        "DROP" if peek_word(p, 1).as_deref() == Some("VIEW") => {
            p.next_token();
            p.next_token();
            let if_exists = words(p, &["IF", "EXISTS"]);
            let mut names = vec![qualified(p)?];
            while p.consume_token(&Token::Comma) {
                names.push(qualified(p)?);
            }
            let _ = word(p, "RESTRICT") || word(p, "CASCADE");
            Ok(Some(Admin::DropView { names, if_exists }))
        }
        _ => Ok(None),
    }
}

/// Whether the (unquoted) word VIEW comes after CREATE/ALTER and the view's options,
/// before anything that names another kind of object or opens a parenthesis.
fn is_view_statement(p: &Parser) -> bool {
    for i in 1..24 {
        match &p.peek_nth_token_ref(i).token {
            Token::EOF | Token::SemiColon | Token::LParen => return false,
            Token::Word(w) if w.quote_style.is_none() => match w.value.to_uppercase().as_str() {
                "VIEW" => return true,
                "TABLE" | "FUNCTION" | "PROCEDURE" | "TRIGGER" | "EVENT" | "DATABASE"
                | "SCHEMA" | "INDEX" | "UNIQUE" | "USER" | "ROLE" | "SEQUENCE" | "TEMPORARY"
                | "SERVER" | "AS" | "AGGREGATE" | "PACKAGE" => return false,
                _ => {}
            },
            _ => {}
        }
    }
    false
}

fn create(p: &mut Parser, alter: bool) -> Result<ViewStmt, ParserError> {
    let or_replace = !alter && words(p, &["OR", "REPLACE"]);
    let mut algorithm = None;
    let mut definer = None;
    let mut security = None;
    loop {
        if word(p, "ALGORITHM") {
            p.expect_token(&Token::Eq)?;
            let a = ident(p)?.to_uppercase();
            if !matches!(a.as_str(), "UNDEFINED" | "MERGE" | "TEMPTABLE") {
                let t = p.peek_token();
                return p.expected("UNDEFINED, MERGE or TEMPTABLE", t);
            }
            algorithm = Some(a);
        } else if word(p, "DEFINER") {
            p.expect_token(&Token::Eq)?;
            definer = Some(user_name(p)?);
        } else if words(p, &["SQL", "SECURITY"]) {
            let s = ident(p)?.to_uppercase();
            if !matches!(s.as_str(), "DEFINER" | "INVOKER") {
                let t = p.peek_token();
                return p.expected("DEFINER or INVOKER", t);
            }
            security = Some(s);
        } else {
            break;
        }
    }
    if !word(p, "VIEW") {
        let t = p.peek_token();
        return p.expected("VIEW", t);
    }
    let if_not_exists = !alter && words(p, &["IF", "NOT", "EXISTS"]);
    let (db, name) = qualified(p)?;
    let mut columns = Vec::new();
    if p.consume_token(&Token::LParen) {
        loop {
            columns.push(ident(p)?);
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen)?;
    }
    p.expect_keyword(Keyword::AS)?;
    let start = p.peek_token().span.start;
    let query = p.parse_query()?;
    let end = p.peek_token().span.start;
    let check_option = if word(p, "WITH") {
        let kind = if word(p, "LOCAL") {
            "LOCAL"
        } else {
            let _ = word(p, "CASCADED");
            "CASCADED"
        };
        if !words(p, &["CHECK", "OPTION"]) {
            let t = p.peek_token();
            return p.expected("CHECK OPTION", t);
        }
        Some(kind.to_string())
    } else {
        None
    };
    Ok(ViewStmt {
        alter,
        or_replace,
        if_not_exists,
        algorithm,
        definer,
        security,
        db,
        name,
        columns,
        query,
        query_text: String::new(),
        check_option,
        span: (start, end),
    })
}

/// Sets the view's query text from the statement text (`offset` maps a location to a byte
/// offset in `text`; a location it cannot map is the end of the text).
pub(super) fn fill_query_text(
    v: &mut ViewStmt,
    text: &str,
    offset: impl Fn(Location) -> Option<usize>,
) {
    let start = offset(v.span.0).unwrap_or(0);
    let end = offset(v.span.1).unwrap_or(text.len()).max(start);
    v.query_text = text[start..end].trim().to_string();
}
