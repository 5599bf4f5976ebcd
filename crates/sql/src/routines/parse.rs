//! Parsing of the stored-program statements (CREATE FUNCTION / PROCEDURE / TRIGGER, DROP,
//! CALL, SHOW CREATE / STATUS / TRIGGERS) on the tokens of `lex`. Bodies are kept as
//! text and compiled by `compile` when they run.

use onelog_engine::ObjectKind;
use onelog_types::SqlError;
use sqlparser::tokenizer::Token;

use super::lex::{tokenize, Tok};
use crate::parser::{syntax_error, ShowFilter};

/// A stored-program statement.
#[derive(Debug, Clone)]
pub enum RoutineStmt {
    Create(Box<CreateRoutine>),
    CreateTrigger(Box<CreateTrigger>),
    Drop {
        kind: ObjectKind,
        if_exists: bool,
        db: Option<String>,
        name: String,
    },
    Call {
        db: Option<String>,
        name: String,
        /// Each argument's text.
        args: Vec<String>,
    },
    ShowCreate {
        kind: ObjectKind,
        db: Option<String>,
        name: String,
    },
    ShowStatus {
        kind: ObjectKind,
        filter: Option<ShowFilter>,
    },
    ShowTriggers {
        db: Option<String>,
        filter: Option<ShowFilter>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Mode {
    In,
    Out,
    InOut,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Param {
    pub mode: Mode,
    pub name: String,
    /// The type as written.
    pub ty: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Access {
    #[default]
    ContainsSql,
    NoSql,
    ReadsSqlData,
    ModifiesSqlData,
}

impl Access {
    pub fn sql(self) -> &'static str {
        match self {
            Access::ContainsSql => "CONTAINS SQL",
            Access::NoSql => "NO SQL",
            Access::ReadsSqlData => "READS SQL DATA",
            Access::ModifiesSqlData => "MODIFIES SQL DATA",
        }
    }
}

/// A routine's characteristics.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Chars {
    pub deterministic: bool,
    pub access: Access,
    pub invoker: bool,
    pub comment: String,
}

#[derive(Debug, Clone)]
pub struct CreateRoutine {
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub definer: Option<(String, String)>,
    pub kind: ObjectKind,
    pub db: Option<String>,
    pub name: String,
    pub params: Vec<Param>,
    /// The parameter list as written (between the parentheses).
    pub params_text: String,
    /// A function's return type as written.
    pub returns: Option<String>,
    pub chars: Chars,
    pub body: String,
}

#[derive(Debug, Clone)]
pub struct CreateTrigger {
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub definer: Option<(String, String)>,
    pub db: Option<String>,
    pub name: String,
    /// BEFORE / AFTER
    pub timing: String,
    /// INSERT / UPDATE / DELETE
    pub event: String,
    pub table: String,
    /// FOLLOWS / PRECEDES other
    pub order: Option<(String, String)>,
    pub body: String,
    /// The statement from the word TRIGGER on, as written.
    pub tail: String,
}

/// A cursor over the tokens of one statement.
pub(crate) struct Cur<'a> {
    pub text: &'a str,
    pub toks: &'a [Tok],
    pub i: usize,
}

impl<'a> Cur<'a> {
    pub fn new(text: &'a str, toks: &'a [Tok]) -> Self {
        Cur { text, toks, i: 0 }
    }

    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.i)
    }

    pub fn peek_at(&self, n: usize) -> Option<&'a Tok> {
        self.toks.get(self.i + n)
    }

    pub fn peek_word(&self) -> Option<String> {
        self.peek().and_then(Tok::word)
    }

    pub fn word_at(&self, n: usize) -> Option<String> {
        self.peek_at(n).and_then(Tok::word)
    }

    pub fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    /// Byte offset of the current token (the text's end at the end).
    pub fn pos(&self) -> usize {
        self.peek().map_or(self.text.len(), |t| t.start)
    }

    pub fn err(&self) -> SqlError {
        syntax_error(self.text, self.pos())
    }

    pub fn word(&mut self, w: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_word(w)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn words(&mut self, ws: &[&str]) -> bool {
        for (k, w) in ws.iter().enumerate() {
            if !self.peek_at(k).is_some_and(|t| t.is_word(w)) {
                return false;
            }
        }
        self.i += ws.len();
        true
    }

    pub fn expect_word(&mut self, w: &str) -> Result<(), SqlError> {
        if self.word(w) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    pub fn tok(&mut self, t: &Token) -> bool {
        if self.peek().is_some_and(|x| &x.token == t) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    pub fn expect_tok(&mut self, t: &Token) -> Result<(), SqlError> {
        if self.tok(t) {
            Ok(())
        } else {
            Err(self.err())
        }
    }

    pub fn ident(&mut self) -> Result<String, SqlError> {
        match self.peek().and_then(|t| t.ident().map(str::to_string)) {
            Some(s) => {
                self.i += 1;
                Ok(s)
            }
            None => Err(self.err()),
        }
    }

    /// `name` or `db.name`
    pub fn qualified(&mut self) -> Result<(Option<String>, String), SqlError> {
        let a = self.ident()?;
        if self.tok(&Token::Period) {
            Ok((Some(a), self.ident()?))
        } else {
            Ok((None, a))
        }
    }

    pub fn string(&mut self) -> Result<String, SqlError> {
        match self.peek().map(|t| &t.token) {
            Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err()),
        }
    }

    /// `user@host` as DEFINER takes it (names, strings or CURRENT_USER).
    pub fn user(&mut self) -> Result<Option<(String, String)>, SqlError> {
        if self.word("CURRENT_USER") {
            if self.tok(&Token::LParen) {
                self.expect_tok(&Token::RParen)?;
            }
            return Ok(None);
        }
        let name = |c: &mut Cur| -> Result<String, SqlError> {
            match c.peek().map(|t| &t.token) {
                Some(Token::SingleQuotedString(s)) | Some(Token::DoubleQuotedString(s)) => {
                    let s = s.clone();
                    c.i += 1;
                    Ok(s)
                }
                _ => c.ident(),
            }
        };
        let t = self.peek().ok_or_else(|| self.err())?;
        // `root@localhost` unquoted tokenizes as one word with `@` inside, or as
        // `root` followed by the word `@localhost`.
        if let Token::Word(w) = &t.token {
            if w.quote_style.is_none() {
                if let Some((u, h)) = w.value.split_once('@') {
                    if !u.is_empty() {
                        self.i += 1;
                        return Ok(Some((u.to_string(), h.to_string())));
                    }
                }
            }
        }
        let user = name(self)?;
        let host = match self.peek().map(|t| &t.token) {
            Some(Token::Word(w)) if w.quote_style.is_none() && w.value.starts_with('@') => {
                let h = w.value[1..].to_string();
                self.i += 1;
                if h.is_empty() {
                    name(self)?
                } else {
                    h
                }
            }
            Some(Token::AtSign) => {
                self.i += 1;
                name(self)?
            }
            _ => "%".to_string(),
        };
        Ok(Some((user, host)))
    }

    /// The text from token `a` to the end of token `b - 1`.
    pub fn slice(&self, a: usize, b: usize) -> &'a str {
        if a >= b || a >= self.toks.len() {
            return "";
        }
        &self.text[self.toks[a].start..self.toks[b - 1].end]
    }
}

/// Whether tokens (of a statement, as the main parser has them) start a stored-program
/// statement.
pub(crate) fn detect(words: &[String]) -> bool {
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "CALL" => true,
        "CREATE" => words
            .iter()
            .take(10)
            .any(|x| matches!(x.as_str(), "FUNCTION" | "PROCEDURE" | "TRIGGER")),
        "DROP" => matches!(w(1), "FUNCTION" | "PROCEDURE" | "TRIGGER"),
        "SHOW" => {
            (w(1) == "CREATE" && matches!(w(2), "FUNCTION" | "PROCEDURE" | "TRIGGER"))
                || (matches!(w(1), "FUNCTION" | "PROCEDURE") && w(2) == "STATUS")
                || w(1) == "TRIGGERS"
        }
        _ => false,
    }
}

fn kind_of(w: &str) -> Option<ObjectKind> {
    match w {
        "FUNCTION" => Some(ObjectKind::Function),
        "PROCEDURE" => Some(ObjectKind::Procedure),
        "TRIGGER" => Some(ObjectKind::Trigger),
        _ => None,
    }
}

/// Parses a stored-program statement (None: not one; see [`detect`]).
pub(crate) fn parse(text: &str) -> Result<Option<RoutineStmt>, SqlError> {
    let toks = tokenize(text)?;
    let mut c = Cur::new(text, &toks);
    let first = c.peek_word().unwrap_or_default();
    let stmt = match first.as_str() {
        "CALL" => {
            c.i += 1;
            let (db, name) = c.qualified()?;
            let mut args = Vec::new();
            if c.tok(&Token::LParen) && !c.tok(&Token::RParen) {
                loop {
                    let a = c.i;
                    let end = expr_end(&c, &[])?;
                    if end == a {
                        return Err(c.err());
                    }
                    args.push(c.slice(a, end).to_string());
                    c.i = end;
                    if c.tok(&Token::Comma) {
                        continue;
                    }
                    c.expect_tok(&Token::RParen)?;
                    break;
                }
            }
            RoutineStmt::Call { db, name, args }
        }
        "DROP" => {
            c.i += 1;
            let kind = kind_of(&c.peek_word().unwrap_or_default()).ok_or_else(|| c.err())?;
            c.i += 1;
            let if_exists = c.words(&["IF", "EXISTS"]);
            let (db, name) = c.qualified()?;
            RoutineStmt::Drop {
                kind,
                if_exists,
                db,
                name,
            }
        }
        "SHOW" => {
            c.i += 1;
            if c.word("CREATE") {
                let kind = kind_of(&c.peek_word().unwrap_or_default()).ok_or_else(|| c.err())?;
                c.i += 1;
                let (db, name) = c.qualified()?;
                RoutineStmt::ShowCreate { kind, db, name }
            } else if c.word("TRIGGERS") {
                let db = if c.word("FROM") || c.word("IN") {
                    Some(c.ident()?)
                } else {
                    None
                };
                let filter = show_filter(&mut c)?;
                RoutineStmt::ShowTriggers { db, filter }
            } else {
                let kind = kind_of(&c.peek_word().unwrap_or_default()).ok_or_else(|| c.err())?;
                c.i += 1;
                c.expect_word("STATUS")?;
                let filter = show_filter(&mut c)?;
                RoutineStmt::ShowStatus { kind, filter }
            }
        }
        "CREATE" => {
            c.i += 1;
            let or_replace = c.words(&["OR", "REPLACE"]);
            let mut definer = None;
            if c.word("DEFINER") {
                c.expect_tok(&Token::Eq)?;
                definer = c.user()?.or(Some((String::new(), String::new())));
            }
            if c.word("SQL") {
                // `SQL SECURITY x` before TRIGGER/VIEW is not a routine statement.
                return Err(c.err());
            }
            c.word("AGGREGATE");
            let kind = kind_of(&c.peek_word().unwrap_or_default()).ok_or_else(|| c.err())?;
            let kind_at = c.pos();
            c.i += 1;
            let if_not_exists = c.words(&["IF", "NOT", "EXISTS"]);
            if or_replace && if_not_exists {
                return Err(crate::sql_err(
                    1221,
                    "Incorrect usage of OR REPLACE and IF NOT EXISTS",
                ));
            }
            let (db, name) = c.qualified()?;
            if kind == ObjectKind::Trigger {
                let mut t = create_trigger(&mut c, or_replace, if_not_exists, definer, db, name)?;
                t.tail = text[kind_at..].trim().to_string();
                RoutineStmt::CreateTrigger(Box::new(t))
            } else {
                RoutineStmt::Create(Box::new(create_routine(
                    &mut c,
                    kind,
                    or_replace,
                    if_not_exists,
                    definer,
                    db,
                    name,
                )?))
            }
        }
        _ => return Ok(None),
    };
    if !c.at_end() {
        return Err(c.err());
    }
    Ok(Some(stmt))
}

pub(crate) fn show_filter(c: &mut Cur) -> Result<Option<ShowFilter>, SqlError> {
    if c.word("LIKE") {
        return Ok(Some(ShowFilter::Like(c.string()?)));
    }
    if c.word("WHERE") {
        let text = format!("SELECT 1 WHERE {}", c.slice(c.i, c.toks.len()));
        c.i = c.toks.len();
        let p = crate::parser::parse_one(&text)?;
        if let crate::parser::Stmt::Sql(s) = p.stmt {
            if let sqlparser::ast::Statement::Query(q) = *s {
                if let sqlparser::ast::SetExpr::Select(sel) = *q.body {
                    if let Some(e) = sel.selection {
                        return Ok(Some(ShowFilter::Where(e)));
                    }
                }
            }
        }
        return Err(c.err());
    }
    Ok(None)
}

/// The index of the first token at or after the cursor that ends an expression: a `,`,
/// `)` or `;` outside parentheses, or one of the words `stops` outside parentheses and
/// CASE ... END, or the end.
pub(crate) fn expr_end(c: &Cur, stops: &[&str]) -> Result<usize, SqlError> {
    let mut depth = 0usize;
    let mut case = 0usize;
    let mut i = c.i;
    while let Some(t) = c.toks.get(i) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => {
                if depth == 0 {
                    return Ok(i);
                }
                depth -= 1;
            }
            Token::Comma | Token::SemiColon if depth == 0 => return Ok(i),
            Token::Word(_) if depth == 0 => {
                if let Some(w) = t.word() {
                    if w == "CASE" {
                        case += 1;
                    } else if w == "END" && case > 0 {
                        case -= 1;
                    } else if case == 0 && stops.contains(&w.as_str()) {
                        return Ok(i);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(i)
}

fn characteristics(c: &mut Cur, ch: &mut Chars) -> Result<(), SqlError> {
    loop {
        if c.words(&["NOT", "DETERMINISTIC"]) {
            ch.deterministic = false;
        } else if c.word("DETERMINISTIC") {
            ch.deterministic = true;
        } else if c.words(&["CONTAINS", "SQL"]) {
            ch.access = Access::ContainsSql;
        } else if c.words(&["NO", "SQL"]) {
            ch.access = Access::NoSql;
        } else if c.words(&["READS", "SQL", "DATA"]) {
            ch.access = Access::ReadsSqlData;
        } else if c.words(&["MODIFIES", "SQL", "DATA"]) {
            ch.access = Access::ModifiesSqlData;
        } else if c.words(&["SQL", "SECURITY"]) {
            if c.word("INVOKER") {
                ch.invoker = true;
            } else {
                c.expect_word("DEFINER")?;
                ch.invoker = false;
            }
        } else if c.word("COMMENT") {
            ch.comment = c.string()?;
        } else if c.words(&["LANGUAGE", "SQL"]) {
        } else {
            return Ok(());
        }
    }
}

/// A data type's tokens: a type name (one or two words), optional `(...)`, and its
/// attributes (UNSIGNED, ZEROFILL, CHARSET x, COLLATE x, ...).
pub(crate) fn type_end(c: &Cur) -> usize {
    let word = |i: usize| c.toks.get(i).and_then(Tok::word);
    let mut i = c.i;
    if c.toks.get(i).is_none() {
        return i;
    }
    i += 1;
    if matches!(
        word(i).as_deref(),
        Some("PRECISION" | "VARYING" | "VARCHAR" | "CHAR" | "VARBINARY")
    ) && matches!(
        word(i - 1).as_deref(),
        Some("DOUBLE" | "CHAR" | "CHARACTER" | "LONG" | "NATIONAL")
    ) {
        i += 1;
    }
    if matches!(c.toks.get(i).map(|t| &t.token), Some(Token::LParen)) {
        let mut depth = 0usize;
        while let Some(t) = c.toks.get(i) {
            i += 1;
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    loop {
        match word(i).as_deref() {
            Some("UNSIGNED" | "SIGNED" | "ZEROFILL" | "BINARY" | "ASCII" | "UNICODE") => i += 1,
            Some("CHARSET" | "COLLATE") => i += 2,
            Some("CHARACTER") if word(i + 1).as_deref() == Some("SET") => i += 3,
            _ => break,
        }
    }
    i.min(c.toks.len())
}

fn create_routine(
    c: &mut Cur,
    kind: ObjectKind,
    or_replace: bool,
    if_not_exists: bool,
    definer: Option<(String, String)>,
    db: Option<String>,
    name: String,
) -> Result<CreateRoutine, SqlError> {
    c.expect_tok(&Token::LParen)?;
    let open = c.i;
    let mut params = Vec::new();
    if !c.tok(&Token::RParen) {
        loop {
            let mode = if kind == ObjectKind::Procedure {
                if c.word("INOUT") {
                    Mode::InOut
                } else if c.word("OUT") {
                    Mode::Out
                } else {
                    c.word("IN");
                    Mode::In
                }
            } else {
                Mode::In
            };
            let pname = c.ident()?;
            let a = c.i;
            let end = type_end(c);
            if end == a {
                return Err(c.err());
            }
            let ty = c.slice(a, end).to_string();
            c.i = end;
            if params
                .iter()
                .any(|p: &Param| p.name.eq_ignore_ascii_case(&pname))
            {
                return Err(crate::sql_err(
                    1330,
                    format!("Duplicate parameter: {pname}"),
                ));
            }
            params.push(Param {
                mode,
                name: pname,
                ty,
            });
            if c.tok(&Token::Comma) {
                continue;
            }
            break;
        }
        c.expect_tok(&Token::RParen)?;
    }
    let params_text = c.slice(open, c.i - 1).to_string();
    let returns = if kind == ObjectKind::Function {
        c.expect_word("RETURNS")?;
        let a = c.i;
        let end = type_end(c);
        if end == a {
            return Err(c.err());
        }
        c.i = end;
        Some(c.slice(a, end).to_string())
    } else {
        None
    };
    let mut chars = Chars::default();
    characteristics(c, &mut chars)?;
    if c.at_end() {
        return Err(c.err());
    }
    let body = c.text[c.pos()..].trim().to_string();
    c.i = c.toks.len();
    Ok(CreateRoutine {
        or_replace,
        if_not_exists,
        definer,
        kind,
        db,
        name,
        params,
        params_text,
        returns,
        chars,
        body,
    })
}

fn create_trigger(
    c: &mut Cur,
    or_replace: bool,
    if_not_exists: bool,
    definer: Option<(String, String)>,
    db: Option<String>,
    name: String,
) -> Result<CreateTrigger, SqlError> {
    let timing = c.peek_word().unwrap_or_default();
    if timing != "BEFORE" && timing != "AFTER" {
        return Err(c.err());
    }
    c.i += 1;
    let event = c.peek_word().unwrap_or_default();
    if !matches!(event.as_str(), "INSERT" | "UPDATE" | "DELETE") {
        return Err(c.err());
    }
    c.i += 1;
    c.expect_word("ON")?;
    let (tdb, table) = c.qualified()?;
    if let (Some(a), Some(b)) = (&db, &tdb) {
        if a != b {
            return Err(crate::sql_err(1435, "Trigger in wrong schema"));
        }
    }
    c.expect_word("FOR")?;
    c.expect_word("EACH")?;
    c.expect_word("ROW")?;
    let order = if c.word("FOLLOWS") {
        Some(("FOLLOWS".to_string(), c.ident()?))
    } else if c.word("PRECEDES") {
        Some(("PRECEDES".to_string(), c.ident()?))
    } else {
        None
    };
    if c.at_end() {
        return Err(c.err());
    }
    let body = c.text[c.pos()..].trim().to_string();
    c.i = c.toks.len();
    Ok(CreateTrigger {
        or_replace,
        if_not_exists,
        definer,
        db: db.or(tdb),
        name,
        timing,
        event,
        table,
        order,
        body,
        tail: String::new(),
    })
}
