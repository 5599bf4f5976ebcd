//! Compiles a stored program's body (SQL/PSM) into instructions. Every expression becomes
//! a `SELECT expr` and every SQL statement is parsed by the ordinary parser, with the
//! references to local variables and parameters (and a trigger's `NEW.col` / `OLD.col`)
//! replaced by placeholders, so they run as prepared statements whose parameter values are
//! the variables' values at that moment.

use onelog_engine::ObjectKind;
use onelog_types::{ColumnType, SqlError};
use sqlparser::tokenizer::Token;

use super::lex::{tokenize, Tok};
use super::parse::{expr_end, type_end, Cur};
use crate::parser::{self, Parsed};
use crate::sql_err;

/// What a placeholder of a compiled statement stands for.
#[derive(Debug, Clone)]
pub enum VarRef {
    Local(usize),
    /// A trigger's `NEW.col` (true) or `OLD.col`.
    Row(bool, String),
}

/// A statement or expression (as `SELECT expr`) with the variables its placeholders read.
#[derive(Debug, Clone)]
pub struct Sql {
    pub parsed: Parsed,
    pub vars: Vec<VarRef>,
}

/// Where a value is assigned.
#[derive(Debug, Clone)]
pub enum Target {
    Local(usize),
    User(String),
    /// `NEW.col` in a BEFORE trigger.
    NewCol(String),
    /// A `?` placeholder argument of a CALL run by COM_STMT_EXECUTE: the value goes to the
    /// client (`prepared_call`).
    Param,
}

/// A condition a handler catches.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    SqlException,
    SqlWarning,
    NotFound,
    State(String),
    Code(u16),
}

#[derive(Debug, Clone)]
pub struct Handler {
    pub exit: bool,
    pub conds: Vec<Cond>,
    pub body: Box<Instr>,
}

/// `SIGNAL` / `RESIGNAL`: the condition (None: RESIGNAL's current one) and the items set.
#[derive(Debug, Clone)]
pub struct Signal {
    pub cond: Option<Cond>,
    pub items: Vec<(String, Sql)>,
    pub resignal: bool,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub label: Option<String>,
    /// Variables with their default values.
    pub vars: Vec<(usize, Option<Sql>)>,
    /// Cursors: (cursor index, query).
    pub cursors: Vec<(usize, Sql)>,
    pub handlers: Vec<Handler>,
    pub body: Vec<Instr>,
}

#[derive(Debug, Clone)]
pub enum Instr {
    /// A statement run as it is; a SELECT with INTO assigns its row to `into`.
    Sql {
        sql: Sql,
        into: Option<Vec<Target>>,
    },
    Set(Target, Sql),
    If(Vec<(Sql, Vec<Instr>)>, Option<Vec<Instr>>),
    /// A CASE statement (a simple CASE's WHENs compiled as `operand = value`).
    Case(Vec<(Sql, Vec<Instr>)>, Option<Vec<Instr>>),
    Loop(Option<String>, Vec<Instr>),
    While(Option<String>, Sql, Vec<Instr>),
    Repeat(Option<String>, Vec<Instr>, Sql),
    Leave(String),
    Iterate(String),
    Return(Sql),
    Block(Box<Block>),
    Open(usize),
    Fetch(usize, Vec<Target>),
    Close(usize),
    Signal(Box<Signal>),
    /// `CALL p(args)`: each argument, and what an OUT/INOUT argument assigns.
    Call {
        db: Option<String>,
        name: String,
        args: Vec<(Sql, Option<Target>)>,
    },
}

/// A compiled body.
#[derive(Debug, Clone)]
pub struct Program {
    pub body: Instr,
    /// Each slot's type and name (parameters first).
    pub slots: Vec<(String, ColumnType)>,
    pub cursors: usize,
}

struct Scope {
    vars: Vec<(String, usize)>,
    cursors: Vec<(String, usize)>,
    conds: Vec<(String, Cond)>,
}

struct Compiler<'a> {
    c: Cur<'a>,
    kind: ObjectKind,
    scopes: Vec<Scope>,
    slots: Vec<(String, ColumnType)>,
    cursors: usize,
    /// Enclosing labels: (name, is a loop).
    labels: Vec<(String, bool)>,
    /// Inside a handler's body (RESIGNAL is allowed).
    in_handler: usize,
    /// An AFTER trigger (NEW is read-only).
    after: bool,
}

/// The type of a declared variable or parameter from its text.
pub fn type_of_text(ty: &str) -> Result<ColumnType, SqlError> {
    // CHARSET / COLLATE are left to the column type's defaults.
    let upper = ty.to_uppercase();
    let cut = ["CHARSET", "CHARACTER SET", "COLLATE"]
        .iter()
        .filter_map(|k| upper.find(k))
        .min()
        .unwrap_or(ty.len());
    let text = format!("CREATE TABLE t (c {})", &ty[..cut]);
    let p = parser::parse_one(&text)?;
    if let parser::Stmt::Sql(s) = &p.stmt {
        if let sqlparser::ast::Statement::CreateTable(ct) = s.as_ref() {
            if let Some(col) = ct.columns.first() {
                return crate::binder::column_type(&col.data_type, "c");
            }
        }
    }
    Err(crate::parser::syntax_error(ty, 0))
}

/// Compiles `body`; `params` are the parameters (name, type) in slot order.
pub fn compile(
    body: &str,
    kind: ObjectKind,
    params: &[(String, ColumnType)],
) -> Result<Program, SqlError> {
    compile_as(body, kind, params, false)
}

/// [`compile`] for a trigger; `after`: an AFTER trigger.
pub fn compile_trigger(body: &str, after: bool) -> Result<Program, SqlError> {
    compile_as(body, ObjectKind::Trigger, &[], after)
}

fn compile_as(
    body: &str,
    kind: ObjectKind,
    params: &[(String, ColumnType)],
    after: bool,
) -> Result<Program, SqlError> {
    let toks = tokenize(body)?;
    let mut cp = Compiler {
        c: Cur::new(body, &toks),
        kind,
        scopes: vec![Scope {
            vars: params
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.clone(), i))
                .collect(),
            cursors: vec![],
            conds: vec![],
        }],
        slots: params.to_vec(),
        cursors: 0,
        labels: vec![],
        in_handler: 0,
        after,
    };
    let body = cp.statement()?;
    cp.c.tok(&Token::SemiColon);
    if !cp.c.at_end() {
        return Err(cp.c.err());
    }
    Ok(Program {
        body,
        slots: cp.slots,
        cursors: cp.cursors,
    })
}

fn undeclared(name: &str) -> SqlError {
    sql_err(1327, format!("Undeclared variable: {name}"))
}

impl Compiler<'_> {
    fn local(&self, name: &str) -> Option<usize> {
        for s in self.scopes.iter().rev() {
            if let Some((_, i)) = s
                .vars
                .iter()
                .rev()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                return Some(*i);
            }
        }
        None
    }

    fn cursor(&self, name: &str) -> Result<usize, SqlError> {
        for s in self.scopes.iter().rev() {
            if let Some((_, i)) = s.cursors.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Ok(*i);
            }
        }
        Err(sql_err(1324, format!("Undefined CURSOR: {name}")))
    }

    fn condition(&self, name: &str) -> Option<Cond> {
        for s in self.scopes.iter().rev() {
            if let Some((_, c)) = s.conds.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Some(c.clone());
            }
        }
        None
    }

    fn is_trigger(&self) -> bool {
        self.kind == ObjectKind::Trigger
    }

    /// The text of tokens `a..b` with variable references replaced by `?`, prefixed.
    fn subst(&self, prefix: &str, a: usize, b: usize) -> (String, Vec<VarRef>) {
        let c = &self.c;
        let toks = c.toks;
        let mut out = String::from(prefix);
        let mut vars = Vec::new();
        if a >= b {
            return (out, vars);
        }
        let first_word = toks[a].word().unwrap_or_default();
        let sets_columns =
            first_word == "UPDATE" || toks[a..b].iter().any(|t| t.is_word("DUPLICATE"));
        let mut pos = toks[a].start;
        let mut k = a;
        // The column list of INSERT/REPLACE INTO t (...).
        let mut col_list_depth: Option<usize> = None;
        let mut depth = 0usize;
        while k < b {
            let t = &toks[k];
            let prev = (k > a).then(|| &toks[k - 1]);
            let next = toks.get(k + 1).filter(|_| k + 1 < b);
            match t.token {
                Token::LParen => {
                    depth += 1;
                    let after_into = k >= a + 2
                        && (toks[k - 2].is_word("INTO")
                            || (k >= a + 4
                                && toks[k - 4].is_word("INTO")
                                && toks[k - 2].token == Token::Period));
                    if after_into && col_list_depth.is_none() {
                        col_list_depth = Some(depth);
                    }
                }
                Token::RParen => {
                    if col_list_depth == Some(depth) {
                        col_list_depth = None;
                    }
                    depth = depth.saturating_sub(1);
                }
                _ => {}
            }
            // NEW.col / OLD.col
            if self.is_trigger()
                && (t.is_word("NEW") || t.is_word("OLD"))
                && next.is_some_and(|n| n.token == Token::Period)
                && prev.is_none_or(|p| p.token != Token::Period)
            {
                if let Some(col) = toks.get(k + 2).filter(|_| k + 2 < b).and_then(Tok::ident) {
                    out.push_str(&c.text[pos..t.start]);
                    out.push('?');
                    vars.push(VarRef::Row(t.is_word("NEW"), col.to_string()));
                    pos = toks[k + 2].end;
                    k += 3;
                    continue;
                }
            }
            if let Some(name) = t.ident() {
                let prev_word = prev.and_then(Tok::word).unwrap_or_default();
                let is_ref = self.local(name).is_some()
                    && !prev.is_some_and(|p| matches!(p.token, Token::Period | Token::AtSign))
                    && !next.is_some_and(|n| matches!(n.token, Token::Period | Token::LParen))
                    && !matches!(
                        prev_word.as_str(),
                        "FROM" | "JOIN" | "INTO" | "UPDATE" | "TABLE" | "AS"
                    )
                    && col_list_depth.is_none()
                    && !(next.is_some_and(|n| n.token == Token::Eq)
                        && (prev_word == "SET"
                            || (sets_columns && prev.is_some_and(|p| p.token == Token::Comma))));
                if is_ref {
                    out.push_str(&c.text[pos..t.start]);
                    out.push('?');
                    vars.push(VarRef::Local(self.local(name).unwrap()));
                    pos = t.end;
                }
            }
            k += 1;
        }
        out.push_str(&c.text[pos..toks[b - 1].end]);
        (out, vars)
    }

    fn sql(&self, prefix: &str, a: usize, b: usize) -> Result<Sql, SqlError> {
        if a >= b {
            return Err(self.c.err());
        }
        let (text, vars) = self.subst(prefix, a, b);
        let parsed = parser::parse_one(&text).map_err(|e| {
            if e.code == onelog_types::code::ER_PARSE_ERROR {
                // Point at the statement in the body.
                self.c_err_at(a)
            } else {
                e
            }
        })?;
        Ok(Sql { parsed, vars })
    }

    fn c_err_at(&self, k: usize) -> SqlError {
        let at = self.c.toks.get(k).map_or(self.c.text.len(), |t| t.start);
        crate::parser::syntax_error(self.c.text, at)
    }

    /// An expression up to one of `stops` (or `,`/`;`/`)`), as `SELECT expr`.
    fn expr(&mut self, stops: &[&str]) -> Result<Sql, SqlError> {
        let a = self.c.i;
        let end = expr_end(&self.c, stops)?;
        if end == a {
            return Err(self.c.err());
        }
        self.c.i = end;
        self.sql("SELECT ", a, end)
    }

    /// The end of a plain statement: the next `;` (or the end of the body).
    fn stmt_end(&self) -> usize {
        let mut i = self.c.i;
        while let Some(t) = self.c.toks.get(i) {
            if t.token == Token::SemiColon {
                break;
            }
            i += 1;
        }
        i
    }

    fn target(&mut self) -> Result<Target, SqlError> {
        let t = self.c.peek().ok_or_else(|| self.c.err())?;
        if let Token::Word(w) = &t.token {
            if w.quote_style.is_none() {
                if let Some(u) = w.value.strip_prefix('@') {
                    if !u.starts_with('@') && !u.is_empty() {
                        self.c.i += 1;
                        return Ok(Target::User(u.to_lowercase()));
                    }
                }
            }
        }
        if self.is_trigger()
            && t.is_word("NEW")
            && self.c.peek_at(1).is_some_and(|n| n.token == Token::Period)
        {
            if self.after {
                return Err(sql_err(
                    1362,
                    "Updating of NEW row is not allowed in after trigger",
                ));
            }
            self.c.i += 2;
            return Ok(Target::NewCol(self.c.ident()?));
        }
        let name = self.c.ident()?;
        match self.local(&name) {
            Some(i) => Ok(Target::Local(i)),
            None => Err(undeclared(&name)),
        }
    }

    fn targets(&mut self) -> Result<Vec<Target>, SqlError> {
        let mut v = vec![self.target()?];
        while self.c.tok(&Token::Comma) {
            v.push(self.target()?);
        }
        Ok(v)
    }

    /// Statements up to one of the words `ends` (each followed by `;`).
    fn list(&mut self, ends: &[&str]) -> Result<Vec<Instr>, SqlError> {
        let mut v = Vec::new();
        loop {
            match self.c.peek_word() {
                Some(w) if ends.contains(&w.as_str()) => return Ok(v),
                _ => {}
            }
            if self.c.at_end() {
                return Err(self.c.err());
            }
            v.push(self.statement()?);
            if !self.c.tok(&Token::SemiColon) {
                return Err(self.c.err());
            }
        }
    }

    fn end_label(&mut self, label: &Option<String>) -> Result<(), SqlError> {
        if let Some(t) = self.c.peek() {
            if t.token != Token::SemiColon {
                if let (Some(name), Some(l)) = (t.ident(), label) {
                    if !name.eq_ignore_ascii_case(l) {
                        return Err(sql_err(1310, format!("End-label {name} without match")));
                    }
                    self.c.i += 1;
                } else if let (Some(name), None) = (t.ident(), label) {
                    if !matches!(
                        t.word().as_deref(),
                        Some("END" | "ELSE" | "ELSEIF" | "WHEN" | "UNTIL")
                    ) {
                        return Err(sql_err(1310, format!("End-label {name} without match")));
                    }
                }
            }
        }
        Ok(())
    }

    fn statement(&mut self) -> Result<Instr, SqlError> {
        // `label:` before BEGIN / LOOP / WHILE / REPEAT.
        let mut label = None;
        if self.c.peek_at(1).is_some_and(|t| t.token == Token::Colon) {
            if let Some(l) = self.c.peek().and_then(Tok::ident) {
                label = Some(l.to_string());
                self.c.i += 2;
            }
        }
        let w = self.c.peek_word().unwrap_or_default();
        if label.is_some() && !matches!(w.as_str(), "BEGIN" | "LOOP" | "WHILE" | "REPEAT") {
            return Err(self.c.err());
        }
        match w.as_str() {
            "BEGIN" => {
                self.c.i += 1;
                self.c.words(&["NOT", "ATOMIC"]);
                self.block(label)
            }
            "IF" => self.if_statement(),
            "CASE" => self.case_statement(),
            "LOOP" => {
                self.c.i += 1;
                self.labels.push((label.clone().unwrap_or_default(), true));
                let body = self.list(&["END"]);
                self.labels.pop();
                let body = body?;
                self.c.expect_word("END")?;
                self.c.expect_word("LOOP")?;
                self.end_label(&label)?;
                Ok(Instr::Loop(label, body))
            }
            "WHILE" => {
                self.c.i += 1;
                let cond = self.expr(&["DO"])?;
                self.c.expect_word("DO")?;
                self.labels.push((label.clone().unwrap_or_default(), true));
                let body = self.list(&["END"]);
                self.labels.pop();
                let body = body?;
                self.c.expect_word("END")?;
                self.c.expect_word("WHILE")?;
                self.end_label(&label)?;
                Ok(Instr::While(label, cond, body))
            }
            "REPEAT" if self.c.peek_at(1).is_some_and(|t| t.token != Token::LParen) => {
                self.c.i += 1;
                self.labels.push((label.clone().unwrap_or_default(), true));
                let body = self.list(&["UNTIL"]);
                self.labels.pop();
                let body = body?;
                self.c.expect_word("UNTIL")?;
                let cond = self.expr(&["END"])?;
                self.c.expect_word("END")?;
                self.c.expect_word("REPEAT")?;
                self.end_label(&label)?;
                Ok(Instr::Repeat(label, body, cond))
            }
            "LEAVE" | "ITERATE" => {
                self.c.i += 1;
                let l = self.c.ident()?;
                let found = self
                    .labels
                    .iter()
                    .rev()
                    .find(|(n, _)| n.eq_ignore_ascii_case(&l));
                match found {
                    Some((_, is_loop)) if w == "LEAVE" || *is_loop => {}
                    _ => return Err(sql_err(1308, format!("{w} with no matching label: {l}"))),
                }
                Ok(if w == "LEAVE" {
                    Instr::Leave(l)
                } else {
                    Instr::Iterate(l)
                })
            }
            "RETURN" => {
                if self.kind != ObjectKind::Function {
                    return Err(sql_err(1313, "RETURN is only allowed in a FUNCTION"));
                }
                self.c.i += 1;
                Ok(Instr::Return(self.expr(&[])?))
            }
            "DECLARE" => Err(self.c.err()),
            "OPEN" | "CLOSE" => {
                self.c.i += 1;
                let name = self.c.ident()?;
                let cur = self.cursor(&name)?;
                Ok(if w == "OPEN" {
                    Instr::Open(cur)
                } else {
                    Instr::Close(cur)
                })
            }
            "FETCH" => {
                self.c.i += 1;
                if self.c.word("NEXT") {
                    self.c.expect_word("FROM")?;
                } else {
                    self.c.word("FROM");
                }
                let name = self.c.ident()?;
                let cur = self.cursor(&name)?;
                self.c.expect_word("INTO")?;
                Ok(Instr::Fetch(cur, self.targets()?))
            }
            "SIGNAL" | "RESIGNAL" => self.signal_statement(&w),
            "SET" if self.set_has_locals() => self.set_locals(),
            "CALL" => self.call_statement(),
            _ => self.plain(),
        }
    }

    /// `IF cond THEN ... [ELSEIF ...] [ELSE ...] END IF`.
    fn if_statement(&mut self) -> Result<Instr, SqlError> {
        self.c.i += 1;
        let mut branches = Vec::new();
        let mut els = None;
        loop {
            let cond = self.expr(&["THEN"])?;
            self.c.expect_word("THEN")?;
            let body = self.list(&["ELSEIF", "ELSE", "END"])?;
            branches.push((cond, body));
            if self.c.word("ELSEIF") {
                continue;
            }
            if self.c.word("ELSE") {
                els = Some(self.list(&["END"])?);
            }
            self.c.expect_word("END")?;
            self.c.expect_word("IF")?;
            break;
        }
        Ok(Instr::If(branches, els))
    }

    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END CASE`.
    fn case_statement(&mut self) -> Result<Instr, SqlError> {
        self.c.i += 1;
        let operand = if self.c.peek_word().as_deref() == Some("WHEN") {
            None
        } else {
            let a = self.c.i;
            let end = expr_end(&self.c, &["WHEN"])?;
            self.c.i = end;
            Some((a, end))
        };
        let mut whens = Vec::new();
        while self.c.word("WHEN") {
            let a = self.c.i;
            let end = expr_end(&self.c, &["THEN"])?;
            self.c.i = end;
            let cond = match operand {
                None => self.sql("SELECT ", a, end)?,
                Some((oa, ob)) => {
                    let (o, mut ov) = self.subst("SELECT (", oa, ob);
                    let (w, wv) = self.subst(") = (", a, end);
                    ov.extend(wv);
                    let text = format!("{o}{w})");
                    Sql {
                        parsed: parser::parse_one(&text)?,
                        vars: ov,
                    }
                }
            };
            self.c.expect_word("THEN")?;
            let body = self.list(&["WHEN", "ELSE", "END"])?;
            whens.push((cond, body));
        }
        if whens.is_empty() {
            return Err(self.c.err());
        }
        let els = if self.c.word("ELSE") {
            Some(self.list(&["END"])?)
        } else {
            None
        };
        self.c.expect_word("END")?;
        self.c.expect_word("CASE")?;
        Ok(Instr::Case(whens, els))
    }

    /// `SIGNAL` / `RESIGNAL` [condition] [SET item = value, ...].
    fn signal_statement(&mut self, w: &str) -> Result<Instr, SqlError> {
        self.c.i += 1;
        let resignal = w == "RESIGNAL";
        if resignal && self.in_handler == 0 {
            // MariaDB: RESIGNAL outside a handler fails when it runs (1645).
        }
        let cond = if self.c.word("SQLSTATE") {
            self.c.word("VALUE");
            let s = self.c.string()?;
            Some(sqlstate_cond(&s)?)
        } else if let Some(name) = self
            .c
            .peek()
            .filter(|t| !t.is_word("SET"))
            .and_then(Tok::ident)
        {
            let name = name.to_string();
            self.c.i += 1;
            match self.condition(&name) {
                Some(c) => Some(c),
                None => return Err(sql_err(1319, format!("Undefined CONDITION: {name}"))),
            }
        } else if resignal {
            None
        } else {
            return Err(self.c.err());
        };
        let mut items = Vec::new();
        if self.c.word("SET") {
            loop {
                let item = self.c.ident()?.to_uppercase();
                self.c.expect_tok(&Token::Eq)?;
                let e = self.expr(&[])?;
                items.push((item, e));
                if !self.c.tok(&Token::Comma) {
                    break;
                }
            }
        }
        Ok(Instr::Signal(Box::new(Signal {
            cond,
            items,
            resignal,
        })))
    }

    /// `SET` of local variables (and other variables beside them).
    fn set_locals(&mut self) -> Result<Instr, SqlError> {
        self.c.i += 1;
        let mut items = Vec::new();
        loop {
            let tgt = self.target()?;
            if !self.c.tok(&Token::Eq) && !self.c.tok(&Token::Assignment) {
                return Err(self.c.err());
            }
            let e = self.expr(&[])?;
            items.push(Instr::Set(tgt, e));
            if !self.c.tok(&Token::Comma) {
                break;
            }
        }
        if items.len() == 1 {
            Ok(items.pop().unwrap())
        } else {
            Ok(Instr::Block(Box::new(Block {
                label: None,
                vars: vec![],
                cursors: vec![],
                handlers: vec![],
                body: items,
            })))
        }
    }

    /// `CALL proc[(args)]`.
    fn call_statement(&mut self) -> Result<Instr, SqlError> {
        self.c.i += 1;
        let (db, name) = self.c.qualified()?;
        let mut args = Vec::new();
        if self.c.tok(&Token::LParen) && !self.c.tok(&Token::RParen) {
            loop {
                let a = self.c.i;
                let sql = self.expr(&[])?;
                let end = self.c.i;
                // A lone variable can take an OUT value.
                let target = if end == a + 1 || (end == a + 3 && self.is_trigger()) {
                    let save = self.c.i;
                    self.c.i = a;
                    let t = self.target().ok();
                    self.c.i = save;
                    t
                } else {
                    None
                };
                args.push((sql, target));
                if self.c.tok(&Token::Comma) {
                    continue;
                }
                self.c.expect_tok(&Token::RParen)?;
                break;
            }
        }
        Ok(Instr::Call { db, name, args })
    }

    /// Whether a SET statement assigns a local variable or `NEW.col` (else it is a plain
    /// SET statement of user and system variables).
    fn set_has_locals(&self) -> bool {
        let mut k = self.c.i + 1;
        let end = self.stmt_end();
        let mut expect_target = true;
        let mut depth = 0usize;
        while k < end {
            let t = &self.c.toks[k];
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => depth = depth.saturating_sub(1),
                Token::Comma if depth == 0 => {
                    expect_target = true;
                    k += 1;
                    continue;
                }
                _ => {}
            }
            if expect_target {
                if let Some(n) = t.ident() {
                    if self.local(n).is_some()
                        || (self.is_trigger()
                            && t.is_word("NEW")
                            && self
                                .c
                                .toks
                                .get(k + 1)
                                .is_some_and(|x| x.token == Token::Period))
                    {
                        return true;
                    }
                }
                expect_target = false;
            }
            k += 1;
        }
        false
    }

    /// A statement run by the ordinary path (SELECT ... INTO assigns its row).
    fn plain(&mut self) -> Result<Instr, SqlError> {
        let a = self.c.i;
        let end = self.stmt_end();
        if end == a {
            return Err(self.c.err());
        }
        self.c.i = end;
        let first = self.c.toks[a].word().unwrap_or_default();
        // SELECT ... INTO targets (at depth 0).
        if first == "SELECT" || first == "WITH" {
            let mut depth = 0usize;
            for k in a..end {
                match self.c.toks[k].token {
                    Token::LParen => depth += 1,
                    Token::RParen => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && self.c.toks[k].is_word("INTO") {
                    let next = self.c.toks.get(k + 1).and_then(Tok::word);
                    if matches!(next.as_deref(), Some("OUTFILE" | "DUMPFILE")) {
                        break;
                    }
                    let save = self.c.i;
                    self.c.i = k + 1;
                    let targets = self.targets()?;
                    let t_end = self.c.i;
                    self.c.i = save;
                    let (head, mut vars) = self.subst("", a, k);
                    let (tail, tv) = if t_end < end {
                        self.subst("", t_end, end)
                    } else {
                        (String::new(), vec![])
                    };
                    vars.extend(tv);
                    let text = format!("{head} {tail}");
                    let parsed = parser::parse_one(&text)?;
                    return Ok(Instr::Sql {
                        sql: Sql { parsed, vars },
                        into: Some(targets),
                    });
                }
            }
            if self.kind == ObjectKind::Function || self.kind == ObjectKind::Trigger {
                return Err(sql_err(
                    1415,
                    format!(
                        "Not allowed to return a result set from a {}",
                        if self.kind == ObjectKind::Function {
                            "function"
                        } else {
                            "trigger"
                        }
                    ),
                ));
            }
        }
        let sql = self.sql("", a, end)?;
        Ok(Instr::Sql { sql, into: None })
    }

    fn block(&mut self, label: Option<String>) -> Result<Instr, SqlError> {
        self.scopes.push(Scope {
            vars: vec![],
            cursors: vec![],
            conds: vec![],
        });
        self.labels.push((label.clone().unwrap_or_default(), false));
        let r = self.block_inner(label);
        self.labels.pop();
        self.scopes.pop();
        r
    }

    fn block_inner(&mut self, label: Option<String>) -> Result<Instr, SqlError> {
        let mut b = Block {
            label: label.clone(),
            vars: vec![],
            cursors: vec![],
            handlers: vec![],
            body: vec![],
        };
        // Declarations: variables and conditions, then cursors, then handlers.
        let mut stage = 0;
        while self.c.peek_word().as_deref() == Some("DECLARE") {
            self.c.i += 1;
            let w = self.c.peek_word().unwrap_or_default();
            let w1 = self.c.word_at(1).unwrap_or_default();
            if matches!(w.as_str(), "CONTINUE" | "EXIT" | "UNDO") && w1 == "HANDLER" {
                self.c.i += 2;
                stage = 2;
                let exit = w != "CONTINUE";
                self.c.expect_word("FOR")?;
                let mut conds = Vec::new();
                loop {
                    conds.push(self.handler_cond()?);
                    if !self.c.tok(&Token::Comma) {
                        break;
                    }
                }
                self.in_handler += 1;
                let body = self.statement();
                self.in_handler -= 1;
                b.handlers.push(Handler {
                    exit,
                    conds,
                    body: Box::new(body?),
                });
            } else if w1 == "CURSOR" {
                if stage > 1 {
                    return Err(sql_err(
                        1338,
                        "Cursor declaration after handler declaration",
                    ));
                }
                stage = 1;
                let name = self.c.ident()?;
                self.c.i += 1;
                self.c.expect_word("FOR")?;
                let a = self.c.i;
                let end = self.stmt_end();
                self.c.i = end;
                let q = self.sql("", a, end)?;
                let idx = self.cursors;
                self.cursors += 1;
                let scope = self.scopes.last_mut().unwrap();
                if scope
                    .cursors
                    .iter()
                    .any(|(n, _)| n.eq_ignore_ascii_case(&name))
                {
                    return Err(sql_err(1333, format!("Duplicate cursor: {name}")));
                }
                scope.cursors.push((name, idx));
                b.cursors.push((idx, q));
            } else if w1 == "CONDITION" {
                if stage > 0 {
                    return Err(sql_err(
                        1337,
                        "Variable or condition declaration after cursor or handler declaration",
                    ));
                }
                let name = self.c.ident()?;
                self.c.i += 1;
                self.c.expect_word("FOR")?;
                let cond = if self.c.word("SQLSTATE") {
                    self.c.word("VALUE");
                    sqlstate_cond(&self.c.string()?)?
                } else {
                    Cond::Code(self.number()?)
                };
                self.scopes.last_mut().unwrap().conds.push((name, cond));
            } else {
                if stage > 0 {
                    return Err(sql_err(
                        1337,
                        "Variable or condition declaration after cursor or handler declaration",
                    ));
                }
                let mut names = vec![self.c.ident()?];
                while self.c.tok(&Token::Comma) {
                    names.push(self.c.ident()?);
                }
                let a = self.c.i;
                let end = type_end(&self.c);
                if end == a {
                    return Err(self.c.err());
                }
                let ty = type_of_text(self.c.slice(a, end))?;
                self.c.i = end;
                let default = if self.c.word("DEFAULT") {
                    Some(self.expr(&[])?)
                } else {
                    None
                };
                for n in names {
                    let scope = self.scopes.last().unwrap();
                    if scope.vars.iter().any(|(x, _)| x.eq_ignore_ascii_case(&n))
                        && self.scopes.len() > 1
                    {
                        return Err(sql_err(1331, format!("Duplicate variable: {n}")));
                    }
                    let slot = self.slots.len();
                    self.slots.push((n.clone(), ty));
                    b.vars.push((slot, default.clone()));
                    self.scopes.last_mut().unwrap().vars.push((n, slot));
                }
            }
            if !self.c.tok(&Token::SemiColon) {
                return Err(self.c.err());
            }
        }
        b.body = self.list(&["END"])?;
        self.c.expect_word("END")?;
        self.end_label(&label)?;
        Ok(Instr::Block(Box::new(b)))
    }

    fn number(&mut self) -> Result<u16, SqlError> {
        match self.c.peek().map(|t| &t.token) {
            Some(Token::Number(n, _)) => {
                let v = n.parse().map_err(|_| self.c.err())?;
                self.c.i += 1;
                Ok(v)
            }
            _ => Err(self.c.err()),
        }
    }

    fn handler_cond(&mut self) -> Result<Cond, SqlError> {
        if self.c.word("SQLEXCEPTION") {
            return Ok(Cond::SqlException);
        }
        if self.c.word("SQLWARNING") {
            return Ok(Cond::SqlWarning);
        }
        if self.c.words(&["NOT", "FOUND"]) {
            return Ok(Cond::NotFound);
        }
        if self.c.word("SQLSTATE") {
            self.c.word("VALUE");
            return sqlstate_cond(&self.c.string()?);
        }
        if matches!(self.c.peek().map(|t| &t.token), Some(Token::Number(..))) {
            return Ok(Cond::Code(self.number()?));
        }
        let name = self.c.ident()?;
        self.condition(&name)
            .ok_or_else(|| sql_err(1319, format!("Undefined CONDITION: {name}")))
    }
}

fn sqlstate_cond(s: &str) -> Result<Cond, SqlError> {
    if s.len() != 5 || !s.bytes().all(|b| b.is_ascii_alphanumeric()) || s.starts_with("00") {
        return Err(sql_err(1407, format!("Bad SQLSTATE: '{s}'")));
    }
    Ok(Cond::State(s.to_uppercase()))
}
