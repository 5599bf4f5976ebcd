//! The statements that move rows between tables and files: `LOAD DATA [LOCAL] INFILE`,
//! `SELECT ... INTO OUTFILE | DUMPFILE | @var, ...`, and the table maintenance statements
//! (`CHECK`, `ANALYZE`, `OPTIMIZE`, `REPAIR`, `CHECKSUM TABLE`).
//!
//! sqlparser knows none of them in MariaDB's form. LOAD DATA and the maintenance
//! statements are parsed here from the start; a SELECT's INTO clause is cut out of the
//! token stream (wherever MariaDB allows it: after the select list, after FROM ... or at
//! the end) and the rest is parsed by sqlparser as an ordinary query.

use sqlparser::ast::Expr;
use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::{expect_word, ident, peek_word, qualified, string_or_ident, word, words, Admin};

/// How the fields and lines of a text file are written (FIELDS ... LINES ...), with
/// MariaDB's defaults: tab-separated, no enclosure, backslash escapes, newline-terminated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFormat {
    pub field_term: Vec<u8>,
    pub enclosed: Vec<u8>,
    /// `OPTIONALLY ENCLOSED BY`: only strings are enclosed (INTO OUTFILE).
    pub opt_enclosed: bool,
    pub escaped: Vec<u8>,
    /// `ESCAPED BY` was written (without it, NO_BACKSLASH_ESCAPES turns escaping off).
    pub escaped_given: bool,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for FileFormat {
    fn default() -> Self {
        FileFormat {
            field_term: b"\t".to_vec(),
            enclosed: Vec::new(),
            opt_enclosed: false,
            escaped: b"\\".to_vec(),
            escaped_given: false,
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// What LOAD DATA does with a row whose unique key is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadDup {
    /// Error 1062 (LOCAL: a warning, as MariaDB cannot stop a client mid-file).
    Error,
    Replace,
    Ignore,
}

/// A field of the file goes into a column or a user variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadTarget {
    Column(String),
    /// `@name` (lower-cased, as user variables are).
    Var(String),
}

/// `LOAD DATA [LOW_PRIORITY|CONCURRENT] [LOCAL] INFILE 'file' [REPLACE|IGNORE] INTO TABLE t
/// [CHARACTER SET cs] [FIELDS ...] [LINES ...] [IGNORE n LINES|ROWS] [(col|@var, ...)]
/// [SET col = expr, ...]`
#[derive(Debug, Clone)]
pub struct LoadData {
    pub local: bool,
    pub file: String,
    pub dup: LoadDup,
    pub db: Option<String>,
    pub table: String,
    pub charset: Option<String>,
    pub format: FileFormat,
    pub ignore_lines: u64,
    /// Empty: every column of the table, in order.
    pub targets: Vec<LoadTarget>,
    /// `SET col = expr` (None: `DEFAULT`).
    pub set: Vec<(String, Option<Expr>)>,
}

/// Where `SELECT ... INTO` puts its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntoTarget {
    Outfile {
        file: String,
        charset: Option<String>,
        format: FileFormat,
    },
    Dumpfile(String),
    /// User variables (lower-case names, without `@`).
    Vars(Vec<String>),
}

/// CHECK / ANALYZE / OPTIMIZE / REPAIR / CHECKSUM TABLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaintOp {
    Check,
    Analyze,
    Optimize,
    Repair,
    Checksum,
}

impl MaintOp {
    /// The `Op` column of the result (and the statement's verb).
    pub fn name(self) -> &'static str {
        match self {
            MaintOp::Check => "check",
            MaintOp::Analyze => "analyze",
            MaintOp::Optimize => "optimize",
            MaintOp::Repair => "repair",
            MaintOp::Checksum => "checksum",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMaint {
    pub op: MaintOp,
    pub tables: Vec<(Option<String>, String)>,
    /// `NO_WRITE_TO_BINLOG` / `LOCAL`: not logged.
    pub no_log: bool,
    /// `QUICK` (CHECKSUM: the live checksum only; CHECK: skip the index checks).
    pub quick: bool,
    /// `EXTENDED`
    pub extended: bool,
}

/// A string of the statement (`'...'`, `"..."`, `X'..'`, `0x..`) as bytes.
fn text_string(p: &mut Parser) -> Result<Vec<u8>, ParserError> {
    let t = p.next_token();
    match &t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s.clone().into_bytes()),
        Token::HexStringLiteral(h) => hex_bytes(h).map_or_else(|| p.expected("a string", t), Ok),
        Token::Number(n, _) if n.len() > 2 && n[..2].eq_ignore_ascii_case("0x") => {
            hex_bytes(&n[2..]).map_or_else(|| p.expected("a string", t), Ok)
        }
        _ => p.expected("a string", t),
    }
}

pub(super) fn hex_bytes(h: &str) -> Option<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).ok())
        .collect()
}

/// A file name: a quoted string.
fn file_name(p: &mut Parser) -> Result<String, ParserError> {
    let t = p.next_token();
    match t.token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        _ => p.expected("a file name", t),
    }
}

/// `CHARACTER SET cs` / `CHARSET cs` (None when absent).
fn charset(p: &mut Parser) -> Result<Option<String>, ParserError> {
    if words(p, &["CHARACTER", "SET"]) || word(p, "CHARSET") {
        return Ok(Some(string_or_ident(p)?.to_lowercase()));
    }
    Ok(None)
}

/// `[FIELDS|COLUMNS {TERMINATED BY s | [OPTIONALLY] ENCLOSED BY s | ESCAPED BY s}...]
/// [LINES {STARTING BY s | TERMINATED BY s}...]`
fn file_format(p: &mut Parser) -> Result<FileFormat, ParserError> {
    let mut f = FileFormat::default();
    if word(p, "FIELDS") || word(p, "COLUMNS") {
        let mut any = false;
        loop {
            if words(p, &["TERMINATED", "BY"]) {
                f.field_term = text_string(p)?;
            } else if words(p, &["OPTIONALLY", "ENCLOSED", "BY"]) {
                f.enclosed = text_string(p)?;
                f.opt_enclosed = true;
            } else if words(p, &["ENCLOSED", "BY"]) {
                f.enclosed = text_string(p)?;
            } else if words(p, &["ESCAPED", "BY"]) {
                f.escaped = text_string(p)?;
                f.escaped_given = true;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            let t = p.peek_token();
            return p.expected("TERMINATED, ENCLOSED or ESCAPED BY", t);
        }
    }
    if word(p, "LINES") {
        let mut any = false;
        loop {
            if words(p, &["TERMINATED", "BY"]) {
                f.line_term = text_string(p)?;
            } else if words(p, &["STARTING", "BY"]) {
                f.line_start = text_string(p)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            let t = p.peek_token();
            return p.expected("TERMINATED or STARTING BY", t);
        }
    }
    Ok(f)
}

/// A user variable token (`@name`, or `@` followed by a name or string).
fn user_var(p: &mut Parser) -> Result<Option<String>, ParserError> {
    let t = p.peek_token();
    if t.token == Token::AtSign {
        p.next_token();
        return Ok(Some(string_or_ident(p)?.to_lowercase()));
    }
    if let Token::Word(w) = &t.token {
        if w.quote_style.is_none() {
            if let Some(rest) = w.value.strip_prefix('@') {
                if rest.starts_with('@') {
                    return Ok(None);
                }
                p.next_token();
                let name = if rest.is_empty() {
                    string_or_ident(p)?
                } else {
                    rest.to_string()
                };
                return Ok(Some(name.to_lowercase()));
            }
        }
    }
    Ok(None)
}

/// LOAD DATA, after `LOAD`.
fn parse_load(p: &mut Parser) -> Result<Admin, ParserError> {
    if peek_word(p, 0).as_deref() == Some("XML") {
        let t = p.peek_token();
        return p.expected("DATA (LOAD XML is not supported)", t);
    }
    expect_word(p, "DATA")?;
    let _ = word(p, "LOW_PRIORITY") || word(p, "CONCURRENT");
    let local = word(p, "LOCAL");
    expect_word(p, "INFILE")?;
    let file = file_name(p)?;
    let dup = if word(p, "REPLACE") {
        LoadDup::Replace
    } else if word(p, "IGNORE") {
        LoadDup::Ignore
    } else {
        LoadDup::Error
    };
    expect_word(p, "INTO")?;
    expect_word(p, "TABLE")?;
    let (db, table) = qualified(p)?;
    if word(p, "PARTITION") {
        p.expect_token(&Token::LParen)?;
        loop {
            ident(p)?;
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen)?;
    }
    let charset = charset(p)?;
    let format = file_format(p)?;
    let mut ignore_lines = 0;
    if word(p, "IGNORE") {
        ignore_lines = p.parse_literal_uint()?;
        if !word(p, "LINES") {
            expect_word(p, "ROWS")?;
        }
    }
    let mut targets = Vec::new();
    if p.consume_token(&Token::LParen) && !p.consume_token(&Token::RParen) {
        loop {
            match user_var(p)? {
                Some(v) => targets.push(LoadTarget::Var(v)),
                None => {
                    let (_, c) = qualified(p)?;
                    // `db.t.col`: the column is the last part.
                    let c = if p.consume_token(&Token::Period) {
                        ident(p)?
                    } else {
                        c
                    };
                    targets.push(LoadTarget::Column(c));
                }
            }
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
        p.expect_token(&Token::RParen)?;
    }
    let mut set = Vec::new();
    if p.parse_keyword(Keyword::SET) {
        loop {
            let (_, mut c) = qualified(p)?;
            if p.consume_token(&Token::Period) {
                c = ident(p)?;
            }
            if !p.consume_token(&Token::Eq) && !p.consume_token(&Token::Assignment) {
                let t = p.peek_token();
                return p.expected("=", t);
            }
            let e = if peek_word(p, 0).as_deref() == Some("DEFAULT")
                && matches!(p.peek_nth_token_ref(1).token, Token::Comma | Token::EOF)
            {
                p.next_token();
                None
            } else {
                Some(p.parse_expr()?)
            };
            set.push((c, e));
            if !p.consume_token(&Token::Comma) {
                break;
            }
        }
    }
    Ok(Admin::LoadData(Box::new(LoadData {
        local,
        file,
        dup,
        db,
        table,
        charset,
        format,
        ignore_lines,
        targets,
        set,
    })))
}

/// The INTO clause after `INTO`.
fn into_target(p: &mut Parser) -> Result<IntoTarget, ParserError> {
    if word(p, "OUTFILE") {
        let file = file_name(p)?;
        let charset = charset(p)?;
        let format = file_format(p)?;
        return Ok(IntoTarget::Outfile {
            file,
            charset,
            format,
        });
    }
    if word(p, "DUMPFILE") {
        return Ok(IntoTarget::Dumpfile(file_name(p)?));
    }
    let mut vars = Vec::new();
    loop {
        match user_var(p)? {
            Some(v) => vars.push(v),
            None => {
                // A stored program's local variable: onelog has no stored programs.
                let t = p.peek_token();
                return p.expected("OUTFILE, DUMPFILE or a user variable", t);
            }
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(IntoTarget::Vars(vars))
}

/// Cuts a SELECT's top-level `INTO ...` clause out of `toks` and parses it. None: the
/// statement is not a query or has no such clause (an INTO inside parentheses is left to
/// sqlparser, which refuses it later as MariaDB does). The bool: the clause came after
/// FROM (MariaDB 10.11 deprecates that: warning 1287).
pub(super) fn split_into(
    toks: &mut Vec<TokenWithSpan>,
) -> Result<Option<(IntoTarget, bool)>, ParserError> {
    let first = toks
        .iter()
        .find(|t| !matches!(t.token, Token::Whitespace(_)));
    let query = match first.map(|t| &t.token) {
        Some(Token::Word(w)) => matches!(w.keyword, Keyword::SELECT | Keyword::WITH),
        Some(Token::LParen) => true,
        _ => false,
    };
    if !query {
        return Ok(None);
    }
    let mut depth = 0i32;
    let mut at = None;
    let mut after_from = false;
    for (i, t) in toks.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Word(w) if depth == 0 && w.keyword == Keyword::FROM => after_from = true,
            Token::Word(w) if depth == 0 && w.keyword == Keyword::INTO => {
                at = Some(i);
                break;
            }
            _ => {}
        }
    }
    let Some(at) = at else {
        return Ok(None);
    };
    let d = MySqlDialect {};
    let mut p = Parser::new(&d).with_tokens_with_locations(toks[at + 1..].to_vec());
    let target = into_target(&mut p)?;
    let used = p.index();
    toks.drain(at..at + 1 + used);
    Ok(Some((target, after_from)))
}

/// `CHECK | ANALYZE | OPTIMIZE | REPAIR | CHECKSUM TABLE ...`; Ok(None) for other
/// statements (ANALYZE SELECT, CHECKSUM of anything else), the cursor untouched.
fn parse_maint(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    let op = match first {
        "CHECK" => MaintOp::Check,
        "ANALYZE" => MaintOp::Analyze,
        "OPTIMIZE" => MaintOp::Optimize,
        "REPAIR" => MaintOp::Repair,
        "CHECKSUM" => MaintOp::Checksum,
        _ => return Ok(None),
    };
    let second = peek_word(p, 1);
    let may_skip_log = matches!(op, MaintOp::Analyze | MaintOp::Optimize | MaintOp::Repair);
    let ok = match second.as_deref() {
        Some("TABLE" | "TABLES") => true,
        Some("NO_WRITE_TO_BINLOG" | "LOCAL") => may_skip_log,
        _ => false,
    };
    if !ok {
        return Ok(None);
    }
    p.next_token();
    let no_log = may_skip_log && (word(p, "NO_WRITE_TO_BINLOG") || word(p, "LOCAL"));
    if !word(p, "TABLES") {
        expect_word(p, "TABLE")?;
    }
    let mut tables = Vec::new();
    loop {
        tables.push(qualified(p)?);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    let (mut quick, mut extended) = (false, false);
    loop {
        let ignored = (op == MaintOp::Check
            && (word(p, "FAST")
                || word(p, "MEDIUM")
                || word(p, "CHANGED")
                || words(p, &["FOR", "UPGRADE"])))
            || (op == MaintOp::Repair && word(p, "USE_FRM"));
        if ignored {
            continue;
        }
        if word(p, "QUICK") {
            quick = true;
        } else if word(p, "EXTENDED") {
            extended = true;
        } else if op == MaintOp::Analyze && word(p, "PERSISTENT") {
            // `PERSISTENT FOR ALL | COLUMNS (...) INDEXES (...)`: engine-independent
            // statistics onelog does not keep; the rest of the statement is accepted.
            while !matches!(p.peek_token().token, Token::EOF) {
                p.next_token();
            }
        } else {
            break;
        }
    }
    Ok(Some(Admin::TableMaint(TableMaint {
        op,
        tables,
        no_log,
        quick,
        extended,
    })))
}

/// The statements of this module, after their first word `first`; Ok(None) leaves the
/// cursor untouched.
pub(super) fn parse(p: &mut Parser, first: &str) -> Result<Option<Admin>, ParserError> {
    if first == "LOAD" {
        p.next_token();
        return parse_load(p).map(Some);
    }
    parse_maint(p, first)
}

#[cfg(test)]
mod tests {
    use super::super::{parse_one, Stmt};
    use super::*;

    fn load(s: &str) -> LoadData {
        match parse_one(s).unwrap().stmt {
            Stmt::Admin(Admin::LoadData(l)) => *l,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn load_data_clauses() {
        let l = load("LOAD DATA INFILE '/tmp/x' INTO TABLE t");
        assert_eq!(l.file, "/tmp/x");
        assert_eq!(l.format, FileFormat::default());
        assert_eq!(l.dup, LoadDup::Error);
        let l = load(
            "load data low_priority local infile 'f.csv' replace into table d.t character set \
             utf8mb4 fields terminated by ',' optionally enclosed by '\"' escaped by '' \
             lines starting by 'x' terminated by '\\r\\n' ignore 2 lines (a, @v, d.t.b) \
             set c = @v + 1, e = DEFAULT",
        );
        assert!(l.local);
        assert_eq!(l.dup, LoadDup::Replace);
        assert_eq!((l.db.as_deref(), l.table.as_str()), (Some("d"), "t"));
        assert_eq!(l.charset.as_deref(), Some("utf8mb4"));
        assert_eq!(l.format.field_term, b",");
        assert_eq!(l.format.enclosed, b"\"");
        assert!(l.format.opt_enclosed && l.format.escaped_given);
        assert_eq!(l.format.escaped, b"");
        assert_eq!(l.format.line_start, b"x");
        assert_eq!(l.format.line_term, b"\r\n");
        assert_eq!(l.ignore_lines, 2);
        assert_eq!(
            l.targets,
            vec![
                LoadTarget::Column("a".into()),
                LoadTarget::Var("v".into()),
                LoadTarget::Column("b".into())
            ]
        );
        assert_eq!(l.set.len(), 2);
        assert!(l.set[1].1.is_none());
        let l = load(
            "LOAD DATA INFILE 'f' IGNORE INTO TABLE t FIELDS TERMINATED BY X'2C' IGNORE 1 ROWS ()",
        );
        assert_eq!(l.dup, LoadDup::Ignore);
        assert_eq!(l.format.field_term, b",");
        assert!(l.targets.is_empty());
        for bad in [
            "LOAD DATA INFILE 'f' INTO TABLE t FIELDS",
            "LOAD DATA INFILE f INTO TABLE t",
            "LOAD DATA INFILE 'f' INTO t",
            "LOAD XML INFILE 'f' INTO TABLE t",
        ] {
            assert_eq!(parse_one(bad).unwrap_err().code, 1064, "{bad}");
        }
    }

    fn into(s: &str) -> (String, IntoTarget) {
        match parse_one(s).unwrap().stmt {
            Stmt::Admin(Admin::SelectInto { query, into, .. }) => (query.to_string(), into),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn select_into_anywhere() {
        let (q, t) = into("SELECT a, b INTO @x, @`y` FROM t WHERE a = 1");
        assert_eq!(q, "SELECT a, b FROM t WHERE a = 1");
        assert_eq!(t, IntoTarget::Vars(vec!["x".into(), "y".into()]));
        let (q, t) = into("SELECT a FROM t ORDER BY a LIMIT 1 INTO @x");
        assert_eq!(q, "SELECT a FROM t ORDER BY a LIMIT 1");
        assert_eq!(t, IntoTarget::Vars(vec!["x".into()]));
        let (q, t) = into(
            "select * from t into outfile '/tmp/o' fields terminated by ',' enclosed by '\"' \
             lines terminated by '\\n'",
        );
        assert_eq!(q, "SELECT * FROM t");
        match t {
            IntoTarget::Outfile { file, format, .. } => {
                assert_eq!(file, "/tmp/o");
                assert_eq!(format.enclosed, b"\"");
                assert!(!format.opt_enclosed);
            }
            other => panic!("{other:?}"),
        }
        let (q, t) = into("SELECT a INTO DUMPFILE '/tmp/d' FROM t");
        assert_eq!(q, "SELECT a FROM t");
        assert_eq!(t, IntoTarget::Dumpfile("/tmp/d".into()));
        // Not a query, or INTO nested: left alone.
        assert!(matches!(
            parse_one("INSERT INTO t SELECT 1").unwrap().stmt,
            Stmt::Sql(_)
        ));
        assert_eq!(parse_one("SELECT 1 INTO").unwrap_err().code, 1064);
    }

    #[test]
    fn maintenance() {
        let m = |s: &str| match parse_one(s).unwrap().stmt {
            Stmt::Admin(Admin::TableMaint(m)) => m,
            other => panic!("{s}: {other:?}"),
        };
        let c = m("CHECK TABLE a, d.b EXTENDED");
        assert_eq!(c.op, MaintOp::Check);
        assert_eq!(
            c.tables,
            vec![(None, "a".into()), (Some("d".into()), "b".into())]
        );
        assert!(c.extended && !c.no_log);
        assert!(m("ANALYZE NO_WRITE_TO_BINLOG TABLE t").no_log);
        assert!(m("OPTIMIZE LOCAL TABLE t").no_log);
        assert!(m("CHECKSUM TABLE t QUICK").quick);
        assert!(m("ANALYZE TABLE t PERSISTENT FOR ALL").op == MaintOp::Analyze);
        assert_eq!(m("REPAIR TABLE t QUICK USE_FRM").op, MaintOp::Repair);
        assert_eq!(parse_one("CHECKSUM TABLE").unwrap_err().code, 1064);
        assert_eq!(parse_one("CHECK TABLE t BOGUS").unwrap_err().code, 1064);
    }
}
