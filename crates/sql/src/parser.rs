//! Parser: splits a multi-statement string, parses each statement with `sqlparser` (MySQL
//! dialect) or, for the MariaDB administration statements sqlparser does not know (SHOW,
//! SET, KILL, binlog and account statements, transaction control), with a small parser of
//! its own built on sqlparser's token cursor; maps failures to MariaDB's 1064 message.
//!
//! Executable comments `/*! ... */` and `/*!40101 ... */` are expanded by sqlparser's
//! tokenizer; `LOCK IN SHARE MODE` is rewritten to `FOR SHARE`, the commas of
//! `UPDATE t1, t2 SET` to JOIN and the `.*` of `DELETE t1.*, t2.* FROM` away. Placeholders `?` are
//! numbered (`?1`, `?2`, ...) in text order so the binder can bind them by position.

use onelog_types::{code, SqlError};
use sqlparser::ast::{Expr, ObjectName, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Location, Token, TokenWithSpan, Tokenizer};

use crate::syntax_depth;

mod accounts;
mod alter_table;
mod load;
mod locks;
mod mode;
mod replica;
pub(crate) mod rewrite;
pub mod sequence;
mod transaction;
mod views;
pub mod xa;
pub(crate) mod zerofill;
use accounts::user_name;
pub use accounts::{AccountStmt, PrivLevel, UserName, UserSpec};
pub use load::{FileFormat, IntoTarget, LoadData, LoadDup, LoadTarget, MaintOp, TableMaint};
pub use locks::{FlushWhat, LockItem, LockKind};
pub use replica::ReplicaStmt;
use rewrite::{
    rewrite_interval_units, rewrite_lock_in_share_mode, rewrite_mod_operator, rewrite_multi_table,
};
pub use views::ViewStmt;

/// Deepest nesting sqlparser's recursive descent accepts (deeper input is a syntax error,
/// as MariaDB's parser reports it). Its recursion grows its stack on the heap as needed;
/// what the tree may cost the rest is checked by `syntax_depth`.
const RECURSION_LIMIT: usize = 1024;

/// One parsed statement with its text (for the binlog and the process list).
#[derive(Debug, Clone)]
pub struct Parsed {
    pub text: String,
    pub stmt: Stmt,
    /// Number of `?` placeholders.
    pub params: usize,
}

#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum Stmt {
    Sql(Box<Statement>),
    Admin(Admin),
}

/// `LIKE 'pattern'` or `WHERE expr` after a SHOW statement.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum ShowFilter {
    Like(String),
    Where(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Session,
    Global,
}

#[derive(Debug, Clone)]
pub enum SetTarget {
    /// `@name`
    User(String),
    /// `[GLOBAL|SESSION] name`, `@@[global.|session.]name`
    System(Scope, String),
    /// `NAMES charset [COLLATE collation]` (the value is the charset name, or `DEFAULT`).
    Names(Option<String>),
    /// `CHARACTER SET charset` / `CHARSET charset` (the value is the charset name, or
    /// `DEFAULT`).
    CharacterSet,
}

#[derive(Debug, Clone)]
pub enum Admin {
    ShowVariables {
        scope: Scope,
        filter: Option<ShowFilter>,
    },
    ShowStatus {
        scope: Scope,
        filter: Option<ShowFilter>,
    },
    ShowDatabases {
        filter: Option<ShowFilter>,
    },
    ShowTables {
        db: Option<String>,
        full: bool,
        filter: Option<ShowFilter>,
    },
    ShowColumns {
        db: Option<String>,
        table: String,
        full: bool,
        filter: Option<ShowFilter>,
    },
    ShowIndex {
        db: Option<String>,
        table: String,
    },
    ShowCreateTable {
        db: Option<String>,
        table: String,
    },
    ShowCreateDatabase {
        name: String,
    },
    ShowTableStatus {
        db: Option<String>,
        filter: Option<ShowFilter>,
    },
    ShowProcessList {
        full: bool,
    },
    ShowWarnings {
        errors: bool,
        count: bool,
    },
    ShowEngines,
    /// SHOW ENGINE name STATUS | MUTEX (`engine_status.rs`).
    ShowEngine {
        engine: String,
        mutex: bool,
    },
    ShowPlugins,
    ShowCollation {
        filter: Option<ShowFilter>,
    },
    ShowCharset {
        filter: Option<ShowFilter>,
    },
    ShowGrants {
        user: Option<(String, String)>,
    },
    /// `SHOW CREATE USER [user]` (None: the current account).
    ShowCreateUser {
        user: Option<(String, String)>,
    },
    ShowBinaryLogs,
    ShowMasterStatus,
    ShowSlaveHosts,
    Replica(ReplicaStmt),
    ShowBinlogEvents {
        file: Option<String>,
        from: u64,
        offset: u64,
        limit: Option<u64>,
    },
    ShowPrivileges,
    Set(Vec<(SetTarget, Expr)>),
    SetTransaction {
        scope: Option<Scope>,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    Use(String),
    Begin {
        read_only: bool,
        /// `WITH CONSISTENT SNAPSHOT`: the read view is taken now, not at the first read.
        snapshot: bool,
    },
    Commit,
    Rollback,
    /// `SAVEPOINT name`
    Savepoint(String),
    /// `ROLLBACK [WORK] TO [SAVEPOINT] name`
    RollbackTo(String),
    /// `RELEASE SAVEPOINT name`
    ReleaseSavepoint(String),
    /// `PREPARE name FROM 'text' | @var | expr`
    Prepare {
        name: String,
        source: Expr,
    },
    /// `EXECUTE name [USING expr, ...]`
    Execute {
        name: String,
        args: Vec<Expr>,
    },
    /// `DEALLOCATE PREPARE name` / `DROP PREPARE name`
    Deallocate(String),
    Kill {
        query: bool,
        id: u64,
    },
    Flush(Vec<FlushWhat>),
    /// `LOCK TABLES t READ, u WRITE, ...`
    LockTables(Vec<LockItem>),
    /// `SHUTDOWN`
    Shutdown,
    /// `ALTER TABLE t DISABLE KEYS | ENABLE KEYS`
    AlterKeys {
        db: Option<String>,
        table: String,
        enable: bool,
    },
    PurgeTo(String),
    PurgeBefore(Expr),
    ResetMaster,
    /// `BACKUP SERVER TO 'dir'`
    BackupServer(String),
    /// `BINLOG 'base64'` / `BINLOG @fragment_0, @fragment_1`: events as `mariadb-binlog`
    /// prints them (the parts are concatenated).
    Binlog(Vec<Expr>),
    /// A statement of comments only (`/*!*/`, what `mariadb-binlog` output sends after a
    /// client command): MariaDB's empty query, answered OK.
    Empty,
    /// CREATE/DROP/RENAME/ALTER USER, GRANT, REVOKE, SET PASSWORD.
    Account(AccountStmt),
    Describe {
        db: Option<String>,
        table: String,
    },
    /// `UNLOCK TABLES`: ends LOCK TABLES and FLUSH TABLES WITH READ LOCK.
    UnlockTables,
    Do(Vec<Expr>),
    LoadData(Box<LoadData>),
    /// `SELECT ... INTO OUTFILE | DUMPFILE | @var, ...` (the query without its INTO).
    SelectInto {
        query: Box<Statement>,
        into: IntoTarget,
        /// INTO came after FROM (deprecated: warning 1287).
        after_from: bool,
    },
    /// CHECK / ANALYZE / OPTIMIZE / REPAIR / CHECKSUM TABLE.
    TableMaint(TableMaint),
    /// `CREATE VIEW` / `ALTER VIEW`.
    CreateView(Box<ViewStmt>),
    /// `DROP VIEW [IF EXISTS] v, ...`
    DropView {
        names: Vec<(Option<String>, String)>,
        if_exists: bool,
    },
    /// `SHOW CREATE VIEW v`
    ShowCreateView {
        db: Option<String>,
        name: String,
    },
    /// Stored functions, procedures and triggers (`crate::routines`).
    Routine(Box<crate::routines::RoutineStmt>),
    /// CREATE / ALTER / DROP EVENT, SHOW EVENTS, SHOW CREATE EVENT (`crate::events`).
    Event(Box<crate::events::EventStmt>),
    /// `XA ...` (`crate::xa`).
    Xa(xa::XaStmt),
    /// CREATE / ALTER / DROP SEQUENCE, SHOW CREATE SEQUENCE (`crate::sequences`).
    Sequence(sequence::SeqStmt),
}

impl Admin {
    /// The expressions the statement holds (for [`syntax_depth::shape`]).
    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Admin::ShowVariables { filter, .. }
            | Admin::ShowStatus { filter, .. }
            | Admin::ShowDatabases { filter, .. }
            | Admin::ShowTables { filter, .. }
            | Admin::ShowColumns { filter, .. }
            | Admin::ShowTableStatus { filter, .. }
            | Admin::ShowCollation { filter, .. }
            | Admin::ShowCharset { filter, .. } => match filter {
                Some(ShowFilter::Where(e)) => vec![e],
                _ => vec![],
            },
            Admin::Set(items) => items.iter_mut().map(|(_, e)| e).collect(),
            Admin::Prepare { source, .. } => vec![source],
            Admin::Execute { args, .. } | Admin::Do(args) => args.iter_mut().collect(),
            Admin::PurgeBefore(e) => vec![e],
            Admin::Binlog(parts) => parts.iter_mut().collect(),
            Admin::LoadData(l) => l.set.iter_mut().filter_map(|(_, e)| e.as_mut()).collect(),
            _ => vec![],
        }
    }
}

pub use mode::{with_options, ParseOptions};

fn dialect() -> Box<dyn sqlparser::dialect::Dialect> {
    mode::dialect()
}

/// MariaDB's syntax error for the statement `text` at byte offset `at`.
pub fn syntax_error(text: &str, at: usize) -> SqlError {
    let at = at.min(text.len());
    let mut at = at;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let rest: String = text[at..].chars().take(80).collect();
    let line = text[..at].matches('\n').count() + 1;
    SqlError::from_code(
        code::ER_PARSE_ERROR,
        format!(
            "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '{rest}' at line {line}"
        ),
    )
}

/// Byte offsets of line starts, for mapping sqlparser locations (line, char column).
struct LineMap<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineMap<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i + 1);
            }
        }
        LineMap { text, starts }
    }

    fn offset(&self, loc: Location) -> Option<usize> {
        if loc.line == 0 {
            return None;
        }
        let start = *self.starts.get(loc.line as usize - 1)?;
        let line = &self.text[start..];
        let col = loc.column.saturating_sub(1) as usize;
        Some(
            start
                + line
                    .char_indices()
                    .nth(col)
                    .map(|(i, _)| i)
                    .unwrap_or(line.len()),
        )
    }
}

/// Parses the location suffix sqlparser appends to its messages.
fn error_location(msg: &str) -> Option<Location> {
    let i = msg.rfind(" at Line: ")?;
    let rest = &msg[i + " at Line: ".len()..];
    let (l, c) = rest.split_once(", Column: ")?;
    let line = l.trim().parse().ok()?;
    let column = c.trim().parse().ok()?;
    Some(Location { line, column })
}

/// Splits and parses a (multi-)statement string. A tokenizer failure fails the whole string;
/// a statement that fails to parse yields an error in its place (execution stops there).
pub fn parse_multi(sql: &str) -> Result<Vec<Result<Parsed, SqlError>>, SqlError> {
    let sql = &*rewrite::mariadb_comments(sql);
    // The common case, one statement and no `;` at all: tokenize once, not once to split
    // and again to parse. Errors take the general path below, which words them.
    if !sql.contains(';') {
        let text = sql.trim();
        if !text.is_empty() {
            if let Ok(p) = parse_text(text) {
                return Ok(vec![Ok(p)]);
            }
        }
    }
    let d = dialect();
    let map = LineMap::new(sql);
    let tokens = Tokenizer::new(&*d, sql)
        .with_unescape(false)
        .tokenize_with_location()
        .map_err(|e| syntax_error(sql, map.offset(e.location).unwrap_or(sql.len())))?;
    let mut out = Vec::new();
    // A statement runs from just after the previous `;` to the next one; it exists if it
    // has any token besides whitespace and comments.
    let mut seg_start = 0usize;
    let mut has_tokens = false;
    // A stored program's `BEGIN ... END` body keeps its `;`s.
    let mut program = crate::routines::Splitter::default();
    let mut flush = |seg_start: usize, end: usize, has_tokens: bool| {
        if has_tokens {
            let text = sql[seg_start..end].trim().to_string();
            out.push(parse_text(&text));
        }
    };
    for t in tokens {
        match &t.token {
            Token::SemiColon if program.inside() => program.feed(&t.token),
            Token::SemiColon => {
                program = crate::routines::Splitter::default();
                let end = map.offset(t.span.start).unwrap_or(sql.len());
                flush(seg_start, end, has_tokens);
                seg_start = (end + 1).min(sql.len());
                has_tokens = false;
            }
            Token::Whitespace(_) => {}
            _ => {
                program.feed(&t.token);
                has_tokens = true
            }
        }
    }
    flush(seg_start, sql.len(), has_tokens);
    if out.is_empty() {
        // Only comments: MariaDB's parser answers OK when it found one.
        let comment = sql.contains("/*") || sql.contains("--") || sql.contains('#');
        if !comment {
            return Err(SqlError::from_code(code::ER_EMPTY_QUERY, "Query was empty"));
        }
        out.push(Ok(Parsed {
            text: sql.trim().to_string(),
            stmt: Stmt::Admin(Admin::Empty),
            params: 0,
        }));
    }
    Ok(out)
}

/// Parses exactly one statement (COM_STMT_PREPARE).
pub fn parse_one(sql: &str) -> Result<Parsed, SqlError> {
    let mut v = parse_multi(sql)?;
    if v.len() != 1 {
        // MariaDB refuses multi-statements in prepare with a syntax error at the second one.
        let second = v.swap_remove(1);
        let text = match second {
            Ok(p) => p.text,
            Err(_) => String::new(),
        };
        let at = sql.find(&text).unwrap_or(sql.len());
        return Err(syntax_error(sql, at));
    }
    v.pop().unwrap()
}

/// Tokenizes and parses one statement's text (locations are relative to `text`).
fn parse_text(text: &str) -> Result<Parsed, SqlError> {
    let d = dialect();
    let map = LineMap::new(text);
    let mut toks = Tokenizer::new(&*d, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| syntax_error(text, map.offset(e.location).unwrap_or(text.len())))?;
    // Trailing whitespace/comments.
    while matches!(toks.last().map(|t| &t.token), Some(Token::Whitespace(_))) {
        toks.pop();
    }
    // Number placeholders in text order.
    let mut params = 0;
    for t in toks.iter_mut() {
        if let Token::Placeholder(p) = &mut t.token {
            if p == "?" {
                params += 1;
                *p = format!("?{params}");
            }
        }
    }
    mode::rewrite_ansi_quotes(&mut toks);
    rewrite_lock_in_share_mode(&mut toks);
    rewrite_multi_table(&mut toks);
    rewrite_interval_units(&mut toks);
    rewrite_mod_operator(&mut toks);
    zerofill::rewrite(&mut toks);
    sequence::rewrite_value_for(&mut toks);
    crate::create_select::rewrite_duplicates(&mut toks);
    syntax_depth::room(&toks)?.run(|| parse_tokens(text, &map, toks, params))
}

/// Parses one statement's tokens; balances and checks the tree's depth.
fn parse_tokens(
    text: &str,
    map: &LineMap,
    toks: Vec<TokenWithSpan>,
    params: usize,
) -> Result<Parsed, SqlError> {
    let d = dialect();
    let err_at = |e: ParserError| -> SqlError {
        let msg = e.to_string();
        if let Some(what) = msg.split(sequence::DUP_PREFIX).nth(1) {
            return SqlError::from_code(1225, format!("Option '{what}' used twice in statement"));
        }
        let off = error_location(&msg)
            .and_then(|l| map.offset(l))
            .unwrap_or(text.len());
        syntax_error(text, off)
    };
    let mut toks = toks;
    let head: Vec<String> = toks
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .take(10)
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_uppercase(),
            _ => String::new(),
        })
        .collect();
    if crate::events::detect(&head) {
        let e = crate::events::parse(text)?;
        return Ok(Parsed {
            text: text.to_string(),
            stmt: Stmt::Admin(Admin::Event(Box::new(e))),
            params,
        });
    }
    if crate::routines::parse::detect(&head) {
        if let Some(r) = crate::routines::parse::parse(text)? {
            return Ok(Parsed {
                text: text.to_string(),
                stmt: Stmt::Admin(Admin::Routine(Box::new(r))),
                params,
            });
        }
    }
    let into = load::split_into(&mut toks).map_err(err_at)?;
    let mut p = Parser::new(&*d)
        .with_recursion_limit(RECURSION_LIMIT)
        .with_tokens_with_locations(toks);
    let mut stmt = match parse_admin(&mut p) {
        Ok(Some(a)) => Stmt::Admin(a),
        Ok(None) => match alter_table::parse(&mut p).map_err(err_at)? {
            Some(s) => Stmt::Sql(Box::new(s)),
            None => Stmt::Sql(Box::new(p.parse_statement().map_err(err_at)?)),
        },
        Err(e) => return Err(err_at(e)),
    };
    if let Some((into, after_from)) = into {
        stmt = match stmt {
            Stmt::Sql(q) if matches!(*q, Statement::Query(_)) => Stmt::Admin(Admin::SelectInto {
                query: q,
                into,
                after_from,
            }),
            _ => return Err(syntax_error(text, 0)),
        };
    }
    let next = p.peek_token();
    if next.token != Token::EOF {
        let off = map.offset(next.span.start).unwrap_or(text.len());
        return Err(syntax_error(text, off));
    }
    if let Stmt::Admin(Admin::CreateView(v)) = &mut stmt {
        if text.contains("/*!") {
            // Locations inside executable comments are shifted: cut the query from the
            // same statement with its comments opened in place.
            let opened = rewrite::open_executable_comments(text);
            if let Ok(Parsed {
                stmt: Stmt::Admin(Admin::CreateView(o)),
                ..
            }) = parse_text(&opened)
            {
                v.query_text = o.query_text;
            }
        } else {
            views::fill_query_text(v, text, |l| map.offset(l));
        }
        syntax_depth::shape(v.query.as_mut())?;
    }
    match &mut stmt {
        Stmt::Sql(s) | Stmt::Admin(Admin::SelectInto { query: s, .. }) => {
            syntax_depth::shape(s.as_mut())?
        }
        Stmt::Admin(a) => {
            for e in a.exprs_mut() {
                syntax_depth::shape(e)?;
            }
        }
    }
    Ok(Parsed {
        text: text.to_string(),
        stmt,
        params,
    })
}

// ---- the administration statement parser ----

fn peek_word(p: &Parser, n: usize) -> Option<String> {
    // n-th non-whitespace token from the cursor (0-based).
    match &p.peek_nth_token_ref(n).token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_uppercase()),
        _ => None,
    }
}

/// Consumes the next token if it is the (unquoted) word `w`.
fn word(p: &mut Parser, w: &str) -> bool {
    if peek_word(p, 0).as_deref() == Some(w) {
        p.next_token();
        true
    } else {
        false
    }
}

fn words(p: &mut Parser, ws: &[&str]) -> bool {
    for (i, w) in ws.iter().enumerate() {
        if peek_word(p, i).as_deref() != Some(*w) {
            return false;
        }
    }
    for _ in ws {
        p.next_token();
    }
    true
}

fn expect_word(p: &mut Parser, w: &str) -> Result<(), ParserError> {
    if word(p, w) {
        Ok(())
    } else {
        let t = p.peek_token();
        p.expected(w, t)
    }
}

fn ident(p: &mut Parser) -> Result<String, ParserError> {
    Ok(p.parse_identifier()?.value)
}

/// `name` or `db.name`
fn qualified(p: &mut Parser) -> Result<(Option<String>, String), ParserError> {
    let a = ident(p)?;
    if p.consume_token(&Token::Period) {
        let b = ident(p)?;
        Ok((Some(a), b))
    } else {
        Ok((None, a))
    }
}

fn string_or_ident(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        Token::Word(w) => Ok(w.value),
        _ => p.expected("a name or string", t),
    }
}

fn filter(p: &mut Parser) -> Result<Option<ShowFilter>, ParserError> {
    if p.parse_keyword(Keyword::LIKE) {
        Ok(Some(ShowFilter::Like(p.parse_literal_string()?)))
    } else if p.parse_keyword(Keyword::WHERE) {
        Ok(Some(ShowFilter::Where(p.parse_expr()?)))
    } else {
        Ok(None)
    }
}

fn from_db(p: &mut Parser) -> Result<Option<String>, ParserError> {
    if p.parse_one_of_keywords(&[Keyword::FROM, Keyword::IN])
        .is_some()
    {
        Ok(Some(ident(p)?))
    } else {
        Ok(None)
    }
}

fn set_target(p: &mut Parser, default: Scope) -> Result<SetTarget, ParserError> {
    let t = p.next_token();
    let Token::Word(w) = t.token.clone() else {
        return p.expected("a variable name", t);
    };
    let v = w.value;
    if w.quote_style.is_none() {
        if let Some(rest) = v.strip_prefix("@@") {
            let (scope, name) = match rest.to_lowercase().as_str() {
                "global" | "session" | "local" if p.consume_token(&Token::Period) => {
                    let s = if rest.eq_ignore_ascii_case("global") {
                        Scope::Global
                    } else {
                        Scope::Session
                    };
                    (s, ident(p)?)
                }
                _ => (default, rest.to_string()),
            };
            return Ok(SetTarget::System(scope, name.to_lowercase()));
        }
        if let Some(rest) = v.strip_prefix('@') {
            let name = if rest.is_empty() {
                string_or_ident(p)?
            } else {
                rest.to_string()
            };
            return Ok(SetTarget::User(name.to_lowercase()));
        }
        match v.to_uppercase().as_str() {
            "GLOBAL" => return Ok(SetTarget::System(Scope::Global, ident(p)?.to_lowercase())),
            "SESSION" | "LOCAL" => {
                return Ok(SetTarget::System(Scope::Session, ident(p)?.to_lowercase()))
            }
            _ => {}
        }
    }
    // `SET x.y = ...` is not a thing in MariaDB except @@scope.name handled above.
    Ok(SetTarget::System(default, v.to_lowercase()))
}

fn set_value(p: &mut Parser) -> Result<Expr, ParserError> {
    // ON / OFF / DEFAULT etc. are parsed as identifiers by parse_expr; keywords such as ON
    // need help.
    if let Some(w) = peek_word(p, 0) {
        if matches!(w.as_str(), "ON" | "ALL" | "BINARY" | "DEFAULT")
            && matches!(p.peek_nth_token_ref(1).token, Token::Comma | Token::EOF)
        {
            p.next_token();
            if w == "DEFAULT" {
                // Kept a bare word: the session tells it from the string 'DEFAULT'.
                return Ok(Expr::Identifier(sqlparser::ast::Ident::new("DEFAULT")));
            }
            // `character_set_results = binary`: the charset's name as MariaDB shows it.
            let w = if w == "BINARY" { "binary".into() } else { w };
            return Ok(Expr::Value(
                sqlparser::ast::Value::SingleQuotedString(w).with_empty_span(),
            ));
        }
    }
    p.parse_expr()
}

/// `NAMES cs [COLLATE c]` or `CHARACTER SET cs` / `CHARSET cs` as one item of a SET (the
/// value a string: the charset's name, or `DEFAULT`).
fn set_charset_item(p: &mut Parser) -> Result<Option<(SetTarget, Expr)>, ParserError> {
    let names = word(p, "NAMES");
    if !names && !words(p, &["CHARACTER", "SET"]) && !word(p, "CHARSET") {
        return Ok(None);
    }
    let cs = string_or_ident(p)?;
    let target = if names {
        let coll = if p.parse_keyword(Keyword::COLLATE) {
            Some(string_or_ident(p)?)
        } else {
            None
        };
        SetTarget::Names(coll)
    } else {
        SetTarget::CharacterSet
    };
    let value = Expr::Value(sqlparser::ast::Value::SingleQuotedString(cs).with_empty_span());
    Ok(Some((target, value)))
}

fn parse_set(p: &mut Parser) -> Result<Admin, ParserError> {
    let scope = if peek_word(p, 1).as_deref() == Some("TRANSACTION") {
        if word(p, "GLOBAL") {
            Some(Scope::Global)
        } else if word(p, "SESSION") || word(p, "LOCAL") {
            Some(Scope::Session)
        } else {
            None
        }
    } else {
        None
    };
    if word(p, "TRANSACTION") {
        let mut isolation = None;
        let mut read_only = None;
        loop {
            if words(p, &["ISOLATION", "LEVEL"]) {
                let lvl = if words(p, &["READ", "UNCOMMITTED"]) {
                    "READ-UNCOMMITTED"
                } else if words(p, &["READ", "COMMITTED"]) {
                    "READ-COMMITTED"
                } else if words(p, &["REPEATABLE", "READ"]) {
                    "REPEATABLE-READ"
                } else if word(p, "SERIALIZABLE") {
                    "SERIALIZABLE"
                } else {
                    let t = p.peek_token();
                    return p.expected("an isolation level", t);
                };
                isolation = Some(lvl.to_string());
            } else if words(p, &["READ", "ONLY"]) {
                read_only = Some(true);
            } else if words(p, &["READ", "WRITE"]) {
                read_only = Some(false);
            } else {
                let t = p.peek_token();
                return p.expected("ISOLATION LEVEL or READ ONLY/WRITE", t);
            }
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        return Ok(Admin::SetTransaction {
            scope,
            isolation,
            read_only,
        });
    }
    if word(p, "PASSWORD") {
        let user = if p.parse_keyword(Keyword::FOR) {
            user_name(p)?
        } else {
            None
        };
        p.expect_token(&Token::Eq)?;
        if word(p, "PASSWORD") {
            p.expect_token(&Token::LParen)?;
            let pw = p.parse_literal_string()?;
            p.expect_token(&Token::RParen)?;
            return Ok(Admin::Account(AccountStmt::SetPassword {
                user,
                password: pw,
                is_hash: false,
            }));
        }
        let pw = p.parse_literal_string()?;
        return Ok(Admin::Account(AccountStmt::SetPassword {
            user,
            password: pw,
            is_hash: true,
        }));
    }
    let mut items = Vec::new();
    let mut default = Scope::Session;
    loop {
        // `SET autocommit=1, NAMES utf8mb4` (Connector/J 3 sends that at connect).
        if let Some(item) = set_charset_item(p)? {
            items.push(item);
            if !p.consume_token(&Token::Comma) {
                break;
            }
            continue;
        }
        // `SET GLOBAL a=1, b=2`: the scope keyword carries to later items without one.
        let target = set_target(p, default)?;
        if let SetTarget::System(s, _) = &target {
            default = *s;
        }
        if !p.consume_token(&Token::Eq) && !p.consume_token(&Token::Assignment) {
            let t = p.peek_token();
            return p.expected("=", t);
        }
        let mut value = set_value(p)?;
        // A system variable's value may be a bare word, taken as a string
        // (`SET GLOBAL read_only=OFF`, `SET character_set_client=utf8mb4`, `time_zone=SYSTEM`).
        if let (SetTarget::System(..), Expr::Identifier(id)) = (&target, &value) {
            if id.quote_style.is_none()
                && !id.value.eq_ignore_ascii_case("DEFAULT")
                && !id.value.starts_with('@')
            {
                value = Expr::Value(
                    sqlparser::ast::Value::SingleQuotedString(id.value.clone()).with_empty_span(),
                );
            }
        }
        items.push((target, value));
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(Admin::Set(items))
}

fn parse_show(p: &mut Parser) -> Result<Admin, ParserError> {
    let full = word(p, "FULL");
    let scope = if word(p, "GLOBAL") {
        Scope::Global
    } else {
        let _ = word(p, "SESSION") || word(p, "LOCAL");
        Scope::Session
    };
    if word(p, "VARIABLES") {
        return Ok(Admin::ShowVariables {
            scope,
            filter: filter(p)?,
        });
    }
    if word(p, "STATUS") {
        return Ok(Admin::ShowStatus {
            scope,
            filter: filter(p)?,
        });
    }
    if word(p, "DATABASES") || word(p, "SCHEMAS") {
        return Ok(Admin::ShowDatabases { filter: filter(p)? });
    }
    if word(p, "TABLES") {
        let db = from_db(p)?;
        return Ok(Admin::ShowTables {
            db,
            full,
            filter: filter(p)?,
        });
    }
    if word(p, "COLUMNS") || word(p, "FIELDS") {
        p.expect_one_of_keywords(&[Keyword::FROM, Keyword::IN])?;
        let (mut db, table) = qualified(p)?;
        if let Some(d) = from_db(p)? {
            db = Some(d);
        }
        return Ok(Admin::ShowColumns {
            db,
            table,
            full,
            filter: filter(p)?,
        });
    }
    if word(p, "INDEX") || word(p, "INDEXES") || word(p, "KEYS") {
        p.expect_one_of_keywords(&[Keyword::FROM, Keyword::IN])?;
        let (mut db, table) = qualified(p)?;
        if let Some(d) = from_db(p)? {
            db = Some(d);
        }
        if p.parse_keyword(Keyword::WHERE) {
            let _ = p.parse_expr()?;
        }
        return Ok(Admin::ShowIndex { db, table });
    }
    if word(p, "CREATE") {
        if word(p, "TABLE") {
            let (db, table) = qualified(p)?;
            return Ok(Admin::ShowCreateTable { db, table });
        }
        if word(p, "DATABASE") || word(p, "SCHEMA") {
            return Ok(Admin::ShowCreateDatabase { name: ident(p)? });
        }
        if word(p, "VIEW") {
            let (db, name) = qualified(p)?;
            return Ok(Admin::ShowCreateView { db, name });
        }
        if word(p, "USER") {
            let user = if matches!(p.peek_token().token, Token::EOF) {
                None
            } else {
                user_name(p)?
            };
            return Ok(Admin::ShowCreateUser { user });
        }
        let t = p.peek_token();
        return p.expected("TABLE, DATABASE or USER", t);
    }
    if words(p, &["TABLE", "STATUS"]) {
        let db = from_db(p)?;
        return Ok(Admin::ShowTableStatus {
            db,
            filter: filter(p)?,
        });
    }
    if word(p, "PROCESSLIST") {
        return Ok(Admin::ShowProcessList { full });
    }
    if words(p, &["COUNT", "("]) {
        // not reached: '(' is not a word
    }
    if word(p, "WARNINGS") || word(p, "ERRORS") {
        let errors = p
            .peek_token()
            .token
            .to_string()
            .eq_ignore_ascii_case("errors");
        skip_limit(p)?;
        return Ok(Admin::ShowWarnings {
            errors,
            count: false,
        });
    }
    if word(p, "COUNT") {
        p.expect_token(&Token::LParen)?;
        p.expect_token(&Token::Mul)?;
        p.expect_token(&Token::RParen)?;
        let errors = if word(p, "WARNINGS") {
            false
        } else {
            expect_word(p, "ERRORS")?;
            true
        };
        return Ok(Admin::ShowWarnings {
            errors,
            count: true,
        });
    }
    if word(p, "ENGINE") {
        let engine = p.parse_identifier()?.value;
        let mutex = word(p, "MUTEX");
        if !mutex {
            expect_word(p, "STATUS")?;
        }
        return Ok(Admin::ShowEngine { engine, mutex });
    }
    if word(p, "ENGINES") || words(p, &["STORAGE", "ENGINES"]) {
        return Ok(Admin::ShowEngines);
    }
    if word(p, "PLUGINS") {
        return Ok(Admin::ShowPlugins);
    }
    if word(p, "COLLATION") {
        return Ok(Admin::ShowCollation { filter: filter(p)? });
    }
    if words(p, &["CHARACTER", "SET"]) || word(p, "CHARSET") {
        return Ok(Admin::ShowCharset { filter: filter(p)? });
    }
    if word(p, "GRANTS") {
        let user = if p.parse_keyword(Keyword::FOR) {
            user_name(p)?
        } else {
            None
        };
        return Ok(Admin::ShowGrants { user });
    }
    if words(p, &["BINARY", "LOGS"]) || words(p, &["MASTER", "LOGS"]) {
        return Ok(Admin::ShowBinaryLogs);
    }
    if words(p, &["MASTER", "STATUS"]) || words(p, &["BINLOG", "STATUS"]) {
        return Ok(Admin::ShowMasterStatus);
    }
    if words(p, &["SLAVE", "HOSTS"]) || words(p, &["REPLICA", "HOSTS"]) {
        return Ok(Admin::ShowSlaveHosts);
    }
    if replica::parse_show(p) {
        return Ok(Admin::Replica(ReplicaStmt::ShowStatus));
    }
    if words(p, &["BINLOG", "EVENTS"]) {
        let file = if p.parse_keyword(Keyword::IN) {
            Some(p.parse_literal_string()?)
        } else {
            None
        };
        let from = if p.parse_keyword(Keyword::FROM) {
            p.parse_literal_uint()?
        } else {
            4
        };
        let (offset, limit) = if p.parse_keyword(Keyword::LIMIT) {
            let a = p.parse_literal_uint()?;
            if p.consume_token(&Token::Comma) {
                (a, Some(p.parse_literal_uint()?))
            } else {
                (0, Some(a))
            }
        } else {
            (0, None)
        };
        return Ok(Admin::ShowBinlogEvents {
            file,
            from,
            offset,
            limit,
        });
    }
    if word(p, "PRIVILEGES") {
        return Ok(Admin::ShowPrivileges);
    }
    let t = p.peek_token();
    p.expected("a SHOW statement onelog supports", t)
}

fn skip_limit(p: &mut Parser) -> Result<(), ParserError> {
    if p.parse_keyword(Keyword::LIMIT) {
        p.parse_literal_uint()?;
        if p.consume_token(&Token::Comma) {
            p.parse_literal_uint()?;
        }
    }
    Ok(())
}

/// Parses the statements handled outside sqlparser; Ok(None) leaves the cursor untouched
/// for sqlparser.
fn parse_admin(p: &mut Parser) -> Result<Option<Admin>, ParserError> {
    let Some(first) = peek_word(p, 0) else {
        return Ok(None);
    };
    if let Some(a) = replica::parse(p, &first)? {
        return Ok(Some(a));
    }
    let second = peek_word(p, 1);
    if let Some(a) = accounts::parse_account(p, &first, second.as_deref())? {
        return Ok(Some(Admin::Account(a)));
    }
    if let Some(a) = locks::parse(p, &first, second.as_deref())? {
        return Ok(Some(a));
    }
    if let Some(a) = load::parse(p, &first)? {
        return Ok(Some(a));
    }
    if let Some(a) = views::parse(p, &first)? {
        return Ok(Some(a));
    }
    if let Some(a) = xa::parse(p, &first)? {
        return Ok(Some(a));
    }
    if let Some(a) = sequence::parse(p, &first)? {
        return Ok(Some(a));
    }
    if let Some(a) = transaction::parse(p, &first, second.as_deref())? {
        return Ok(Some(a));
    }
    let a = match first.as_str() {
        "SHOW" => {
            p.next_token();
            parse_show(p)?
        }
        "SET" => {
            p.next_token();
            parse_set(p)?
        }
        "USE" => {
            p.next_token();
            Admin::Use(ident(p)?)
        }
        "KILL" => {
            p.next_token();
            let query = word(p, "QUERY");
            if !query {
                let _ = word(p, "CONNECTION");
            }
            Admin::Kill {
                query,
                id: p.parse_literal_uint()?,
            }
        }
        "PURGE" => {
            p.next_token();
            if !word(p, "BINARY") {
                expect_word(p, "MASTER")?;
            }
            expect_word(p, "LOGS")?;
            if word(p, "TO") {
                Admin::PurgeTo(p.parse_literal_string()?)
            } else {
                expect_word(p, "BEFORE")?;
                Admin::PurgeBefore(p.parse_expr()?)
            }
        }
        "RESET" if second.as_deref() == Some("MASTER") => {
            p.next_token();
            p.next_token();
            Admin::ResetMaster
        }
        "BINLOG" => {
            p.next_token();
            let mut parts = vec![p.parse_expr()?];
            while p.consume_token(&Token::Comma) {
                parts.push(p.parse_expr()?);
            }
            Admin::Binlog(parts)
        }
        "BACKUP" if second.as_deref() == Some("SERVER") => {
            p.next_token();
            p.next_token();
            expect_word(p, "TO")?;
            Admin::BackupServer(p.parse_literal_string()?)
        }
        "DESCRIBE" | "DESC" => {
            p.next_token();
            let (db, table) = qualified(p)?;
            // DESCRIBE t col: a column filter
            if !matches!(p.peek_token().token, Token::EOF) {
                let _ = string_or_ident(p)?;
            }
            Admin::Describe { db, table }
        }
        "EXPLAIN" => {
            // EXPLAIN tbl == DESCRIBE tbl; EXPLAIN SELECT ... goes to sqlparser.
            let is_stmt = matches!(
                second.as_deref(),
                Some(
                    "SELECT"
                        | "UPDATE"
                        | "DELETE"
                        | "INSERT"
                        | "REPLACE"
                        | "EXTENDED"
                        | "PARTITIONS"
                        | "FORMAT"
                        | "ANALYZE"
                        | "WITH"
                )
            ) || matches!(p.peek_nth_token_ref(1).token, Token::LParen);
            if is_stmt {
                return Ok(None);
            }
            p.next_token();
            let (db, table) = qualified(p)?;
            Admin::Describe { db, table }
        }
        "DO" => {
            p.next_token();
            let mut v = vec![p.parse_expr()?];
            while p.consume_token(&Token::Comma) {
                v.push(p.parse_expr()?);
            }
            Admin::Do(v)
        }
        _ => return Ok(None),
    };
    Ok(Some(a))
}

/// The parts of an object name as strings.
pub fn name_parts(n: &ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            sqlparser::ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_numbers_placeholders() {
        let v = parse_multi("select 1; select ? + ?;").unwrap();
        assert_eq!(v.len(), 2);
        let p = v[1].as_ref().unwrap();
        assert_eq!(p.params, 2);
        assert_eq!(p.text, "select ? + ?");
    }

    #[test]
    fn comments_only_are_an_empty_statement() {
        // MariaDB's empty query: OK when the parser found a comment, else 1065.
        for text in ["/*!*/", "/* x */ ;", "-- x\n"] {
            let v = parse_multi(text).unwrap();
            assert!(matches!(
                v[0].as_ref().unwrap().stmt,
                Stmt::Admin(Admin::Empty)
            ));
        }
        for text in ["", " ; "] {
            assert_eq!(parse_multi(text).unwrap_err().code, code::ER_EMPTY_QUERY);
        }
    }

    #[test]
    fn syntax_error_message() {
        let v = parse_multi("select * frm t").unwrap();
        let e = v[0].as_ref().unwrap_err();
        assert_eq!(e.code, 1064);
        assert!(e.message.contains("near '"), "{}", e.message);
        assert!(e.message.ends_with("at line 1"), "{}", e.message);
    }

    #[test]
    fn savepoint_and_prepare_names() {
        let one = |s: &str| match parse_one(s).unwrap().stmt {
            Stmt::Admin(a) => a,
            other => panic!("{s}: {other:?}"),
        };
        assert!(matches!(one("ROLLBACK TO SAVEPOINT sp"), Admin::RollbackTo(n) if n == "sp"));
        assert!(matches!(one("ROLLBACK TO savepoint"), Admin::RollbackTo(n) if n == "savepoint"));
        assert!(matches!(one("rollback work to sp"), Admin::RollbackTo(n) if n == "sp"));
        assert!(matches!(one("RELEASE SAVEPOINT `x y`"), Admin::ReleaseSavepoint(n) if n == "x y"));
        assert!(matches!(one("EXECUTE s"), Admin::Execute { args, .. } if args.is_empty()));
        assert!(matches!(one("ROLLBACK"), Admin::Rollback));
        assert_eq!(parse_one("RELEASE SAVEPOINT").unwrap_err().code, 1064);
        assert_eq!(parse_one("PREPARE s").unwrap_err().code, 1064);
    }

    #[test]
    fn require_clauses() {
        use crate::ssl_require::{RequireClause, RequireItem as I};
        let req = |s: &str| match parse_one(s).map(|p| p.stmt) {
            Ok(Stmt::Admin(Admin::Account(AccountStmt::CreateUser { require, .. }))) => Ok(require),
            Ok(other) => panic!("{s}: {other:?}"),
            Err(e) => Err(e.code),
        };
        assert_eq!(
            req("CREATE USER u REQUIRE SSL"),
            Ok(Some(RequireClause::Ssl))
        );
        assert_eq!(req("CREATE USER u"), Ok(None));
        assert_eq!(
            req("CREATE USER u REQUIRE CIPHER 'a' AND ISSUER 'b' SUBJECT 'c'"),
            Ok(Some(RequireClause::Specified(vec![
                (I::Cipher, "a".into()),
                (I::Issuer, "b".into()),
                (I::Subject, "c".into())
            ])))
        );
        for bad in [
            "CREATE USER u REQUIRE",
            "CREATE USER u REQUIRE SSL AND X509",
            "CREATE USER u REQUIRE X509 AND SSL",
            "CREATE USER u REQUIRE CIPHER 'a' AND",
            "CREATE USER u REQUIRE SSL, v",
        ] {
            assert_eq!(req(bad), Err(1064), "{bad}");
        }
    }

    #[test]
    fn admin_statements() {
        for s in [
            "SHOW VARIABLES LIKE 'x%'",
            "show global status where variable_name = 'Uptime'",
            "SET autocommit=0",
            "SET autocommit=1, NAMES utf8mb4",
            "SET NAMES utf8mb4 COLLATE utf8mb4_bin, @a = 1, CHARACTER SET latin1",
            "SET x = DEFAULT",
            "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */",
            "SET @@session.autocommit = 1, @a := 5",
            "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            "SHOW BINLOG EVENTS IN 'b.000001' FROM 4 LIMIT 2, 5",
            "PURGE BINARY LOGS TO 'x'",
            "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
            "GRANT SELECT, INSERT ON db.* TO 'u'@'localhost'",
            "GRANT REPLICATION SLAVE ON *.* TO u@'%'",
            "CREATE USER a@'%', b REQUIRE SSL",
            "CREATE USER a@'%' IDENTIFIED BY 'x' REQUIRE ISSUER 'i' AND SUBJECT 's' CIPHER 'c'",
            "ALTER USER a@'%' REQUIRE NONE",
            "GRANT SELECT ON *.* TO a@'%' REQUIRE X509 WITH GRANT OPTION",
            "SHOW GRANTS FOR 'u'@'%'",
            "SHOW CREATE USER 'u'@'%'",
            "SHOW CREATE USER CURRENT_USER()",
            "/*!40101 SET NAMES utf8 */",
            "SELECT a FROM t WHERE a = 1 LOCK IN SHARE MODE",
            "PREPARE s FROM 'SELECT ?'",
            "PREPARE s FROM @q",
            "EXECUTE s USING @a, 1 + 2",
            "DEALLOCATE PREPARE s",
            "DROP PREPARE s",
            "SAVEPOINT a",
            "ROLLBACK TO SAVEPOINT a",
            "ROLLBACK WORK TO `a b`",
            "ROLLBACK TO savepoint",
            "RELEASE SAVEPOINT a",
        ] {
            let v = parse_multi(s).unwrap();
            assert!(v[0].is_ok(), "{s}: {:?}", v[0]);
        }
    }
}
