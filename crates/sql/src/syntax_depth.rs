//! How deep a statement's syntax tree may nest, and long AND / OR / XOR chains made
//! shallow.
//!
//! sqlparser builds a chain such as `a OR b OR c ...` or `1+1+1...` with a loop, as a tree
//! as deep as the chain is long; its recursion limit does not bound that depth. Code that
//! walks the tree without a stack check (dropping and cloning it, computing an
//! expression's source span) then recurses once per level. Two checks keep every such walk
//! within the connection thread's stack (`thread_stack`), refusing deeper statements with
//! MariaDB's 1436:
//!
//! 1. Before parsing, [`room`] bounds the depth from the tokens alone (sqlparser drops a
//!    half-built tree when it fails further on) at the stack a level takes when dropped;
//!    a statement whose bound this thread's stack cannot take is parsed on a stack of its
//!    own, sized for it, up to a bound of a million levels.
//! 2. After parsing (on that stack), [`shape`] rebuilds every chain of one of the associative operators
//!    AND, OR, XOR and `||` as a balanced tree (same operands in the same order, so the
//!    same meaning and the same source span), measures the depth that is left, and refuses
//!    a tree deeper than the stack takes at the cost of the deepest unchecked walk.
//!
//! A 100,000-term OR of an ORM thus parses and binds as it does in MariaDB (which keeps
//! such chains as flat lists), while `1+1+...` past the stack gets 1436, as in MariaDB.

use std::ops::ControlFlow;

use onelog_types::{stack, SqlError};
use sqlparser::ast::{
    BinaryOperator, Expr, Query, SetExpr, SetOperator, SetQuantifier, Value, VisitMut, VisitorMut,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// Stack a level of sqlparser's tree takes when dropped (measured: 60-85 bytes).
const DROP_BYTES_PER_LEVEL: usize = 128;

/// Stack a level takes in the deepest unchecked walk over a parsed tree (measured: a
/// clone about 990 bytes, a span about 830).
const WALK_BYTES_PER_LEVEL: usize = 1536;

/// Levels a nested query counts for (its query, body and select are levels too).
const QUERY_LEVELS: usize = 4;

/// Levels a set operation counts for (the operation and its operand's body).
const SET_OPERATION_LEVELS: usize = 2;

/// Stack a statement's walks may use on this thread.
fn usable() -> usize {
    let size = match stack::size() {
        0 => 8 << 20,
        n => n,
    };
    size.saturating_sub(stack::RESERVE)
}

/// Whether a token can make the syntax tree one level deeper within its parentheses: an
/// operator symbol or keyword. Names, literals, commas and parentheses cannot (lists are
/// flat; parentheses are counted by [`nesting_bound`]).
fn deepens(t: &Token) -> bool {
    match t {
        Token::Word(w) => matches!(
            w.keyword,
            Keyword::AND
                | Keyword::OR
                | Keyword::XOR
                | Keyword::NOT
                | Keyword::IS
                | Keyword::IN
                | Keyword::LIKE
                | Keyword::ILIKE
                | Keyword::BETWEEN
                | Keyword::REGEXP
                | Keyword::RLIKE
                | Keyword::DIV
                | Keyword::MOD
                | Keyword::COLLATE
                | Keyword::UNION
                | Keyword::EXCEPT
                | Keyword::INTERSECT
                | Keyword::MINUS
                | Keyword::ESCAPE
                | Keyword::MEMBER
                | Keyword::AT
                | Keyword::SIMILAR
                | Keyword::BINARY
                | Keyword::CASE
        ),
        Token::EOF
        | Token::Whitespace(_)
        | Token::Comma
        | Token::Period
        | Token::LParen
        | Token::RParen
        | Token::SemiColon
        | Token::Number(..)
        | Token::Placeholder(_)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_) => false,
        _ => true,
    }
}

/// An upper bound on how deep a statement's syntax tree can nest: within one pair of
/// parentheses each operator can add a level (`a OR b OR c` is a chain two deep), and a
/// parenthesised group sits below all the operators of the group around it.
fn nesting_bound(toks: &[TokenWithSpan]) -> usize {
    // Per open group: operators in it, deepest group inside it.
    let mut groups: Vec<(usize, usize)> = vec![(0, 0)];
    let close = |groups: &mut Vec<(usize, usize)>| {
        let (ops, inner) = groups.pop().unwrap_or_default();
        if let Some(top) = groups.last_mut() {
            top.1 = top.1.max(ops + inner + 1);
        }
    };
    for t in toks {
        match &t.token {
            Token::LParen => groups.push((0, 0)),
            Token::RParen if groups.len() > 1 => close(&mut groups),
            t if deepens(t) => groups.last_mut().expect("the outermost group").0 += 1,
            _ => {}
        }
    }
    while groups.len() > 1 {
        close(&mut groups);
    }
    groups[0].0 + groups[0].1 + 1
}

/// Deepest tree bound parsed at all: parsing a deeper one gets 1436 at once (the stack
/// it could need, 128 MiB, is reserved as address space and used only by a failing
/// parse's drop).
const MAX_LEVELS: usize = 1 << 20;

/// Where a statement's text can be parsed: the tree sqlparser builds, and may drop when
/// it fails further on, must fit the stack the parse runs on.
pub enum Room {
    /// This thread's stack takes any tree the tokens allow.
    Here,
    /// A stack of this many bytes, for the parse only ([`shape`] leaves a tree this
    /// thread's stack takes, or refuses it within the same stack).
    Grown(usize),
}

/// Memory a query block (`SELECT ...`) takes from parse to execution (measured: about
/// 19 KB for each `SELECT 1` of a 1,000,000-branch UNION ALL).
const BYTES_PER_SELECT: usize = 20 << 10;

/// Memory the query blocks of one statement may take: 1 GiB (52,428 blocks). A statement
/// with more is refused before it is parsed (with MariaDB's out-of-memory error) instead of
/// taking the server's memory from every other session.
const SELECT_BUDGET: usize = 1 << 30;

/// Refuses (1436) a statement whose tree could be deeper than [`MAX_LEVELS`], and (1037)
/// one with more query blocks than [`SELECT_BUDGET`] allows; says where to parse it
/// otherwise.
pub fn room(toks: &[TokenWithSpan]) -> Result<Room, SqlError> {
    let selects = toks
        .iter()
        .filter(|t| matches!(&t.token, Token::Word(w) if w.keyword == Keyword::SELECT))
        .count();
    let needed = selects.saturating_mul(BYTES_PER_SELECT);
    if needed > SELECT_BUDGET {
        return Err(SqlError::from_code(
            onelog_types::code::ER_OUTOFMEMORY,
            format!("Out of memory; restart server and try again (needed {needed} bytes)"),
        ));
    }
    let depth = nesting_bound(toks);
    let needed = depth.saturating_mul(DROP_BYTES_PER_LEVEL);
    if needed <= usable() {
        Ok(Room::Here)
    } else if depth <= MAX_LEVELS {
        Ok(Room::Grown(needed + stack::RESERVE))
    } else {
        Err(stack::overrun(needed))
    }
}

impl Room {
    /// Runs the parse `f` (which must not return a tree deeper than [`shape`] allows).
    pub fn run<R>(self, f: impl FnOnce() -> R) -> R {
        match self {
            Room::Here => f(),
            Room::Grown(bytes) => stacker::grow(bytes, f),
        }
    }
}

/// Balances the AND / OR / XOR / `||` chains of a parsed statement (or expression) and
/// refuses (1436) what is still too deep for this thread's stack.
pub fn shape<T: VisitMut>(tree: &mut T) -> Result<(), SqlError> {
    let mut s = Shaper { depth: 0, max: 0 };
    let _ = tree.visit(&mut s);
    let needed = s.max.saturating_mul(WALK_BYTES_PER_LEVEL);
    if needed > usable() {
        return Err(stack::overrun(needed));
    }
    Ok(())
}

struct Shaper {
    depth: usize,
    max: usize,
}

impl VisitorMut for Shaper {
    type Break = ();

    // A query's body may be a chain of set operations (which have no visitor hook of
    // their own): a long UNION [ALL] chain is balanced, and what is left of the chain
    // counts towards the depth.
    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        balance_union(&mut q.body);
        self.depth += QUERY_LEVELS;
        let mut spine = 0;
        let mut at = q.body.as_ref();
        while let SetExpr::SetOperation { left, .. } = at {
            spine += 1;
            at = left;
        }
        self.max = self.max.max(self.depth + spine * SET_OPERATION_LEVELS);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &mut Query) -> ControlFlow<()> {
        self.depth -= QUERY_LEVELS;
        ControlFlow::Continue(())
    }

    // Before the visitor goes into an expression: a chain is balanced first, so its long
    // left spine is never walked by recursion.
    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        balance(e);
        self.depth += 1;
        self.max = self.max.max(self.depth);
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

fn chain_operator(e: &Expr) -> Option<&BinaryOperator> {
    match e {
        Expr::BinaryOp {
            op:
                op @ (BinaryOperator::And
                | BinaryOperator::Or
                | BinaryOperator::Xor
                | BinaryOperator::StringConcat),
            ..
        } => Some(op),
        _ => None,
    }
}

/// Chains this long or longer are balanced. A balanced tree's left spines are shorter
/// (the logarithm of its size), so a tree once balanced is left as it is when the visitor
/// reaches its inner nodes.
const LONG_CHAIN: usize = 64;

/// Rebuilds the chain of one operator rooted at `e` (its left spine, as the parser builds
/// it) as a balanced tree, with a loop.
fn balance(e: &mut Expr) {
    let Some(op) = chain_operator(e).cloned() else {
        return;
    };
    let mut len = 0;
    let mut at = &*e;
    while let Expr::BinaryOp { left, op: o, .. } = at {
        if *o != op {
            break;
        }
        len += 1;
        at = left;
    }
    if len < LONG_CHAIN {
        return;
    }
    let mut operands = Vec::new();
    let mut cur = std::mem::replace(e, Expr::Value(Value::Null.into()));
    loop {
        match cur {
            Expr::BinaryOp { left, op: o, right } if o == op => {
                operands.push(*right);
                cur = *left;
            }
            other => {
                operands.push(other);
                break;
            }
        }
    }
    operands.reverse();
    *e = balanced(operands, &op);
}

/// Rebuilds a long chain of one UNION kind (ALL, or DISTINCT) as a balanced tree: the
/// same parts in the same order, so the same rows in the same order (UNION DISTINCT
/// keeps each row's first occurrence either way). INTERSECT and EXCEPT chains are left
/// as written.
fn balance_union(body: &mut Box<SetExpr>) {
    let SetExpr::SetOperation {
        op: SetOperator::Union,
        set_quantifier: q,
        ..
    } = body.as_ref()
    else {
        return;
    };
    let q = *q;
    let same = |e: &SetExpr| {
        matches!(e, SetExpr::SetOperation { op: SetOperator::Union, set_quantifier, .. }
            if *set_quantifier == q)
    };
    let mut len = 0;
    let mut at = body.as_ref();
    while same(at) {
        let SetExpr::SetOperation { left, .. } = at else {
            unreachable!("checked by same")
        };
        len += 1;
        at = left;
    }
    if len < LONG_CHAIN {
        return;
    }
    let mut parts = Vec::with_capacity(len + 1);
    let placeholder = SetExpr::Values(sqlparser::ast::Values {
        explicit_row: false,
        value_keyword: false,
        rows: Vec::new(),
    });
    let mut cur = std::mem::replace(body, Box::new(placeholder));
    loop {
        if !same(&cur) {
            parts.push(*cur);
            break;
        }
        let SetExpr::SetOperation { left, right, .. } = *cur else {
            unreachable!("checked by same")
        };
        parts.push(*right);
        cur = left;
    }
    parts.reverse();
    **body = balanced_union(parts, q);
}

fn balanced_union(mut parts: Vec<SetExpr>, q: SetQuantifier) -> SetExpr {
    if parts.len() == 1 {
        return parts.pop().expect("one part");
    }
    let right = parts.split_off(parts.len() / 2);
    SetExpr::SetOperation {
        left: Box::new(balanced_union(parts, q)),
        op: SetOperator::Union,
        set_quantifier: q,
        right: Box::new(balanced_union(right, q)),
    }
}

fn balanced(mut operands: Vec<Expr>, op: &BinaryOperator) -> Expr {
    if operands.len() == 1 {
        return operands.pop().expect("one operand");
    }
    let right = operands.split_off(operands.len() / 2);
    Expr::BinaryOp {
        left: Box::new(balanced(operands, op)),
        op: op.clone(),
        right: Box::new(balanced(right, op)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::parser::Parser;

    fn parse(sql: &str) -> sqlparser::ast::Statement {
        Parser::new(&MySqlDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_statement()
            .unwrap()
    }

    fn depth(e: &Expr) -> usize {
        match e {
            Expr::BinaryOp { left, right, .. } => 1 + depth(left).max(depth(right)),
            Expr::Nested(e) => 1 + depth(e),
            _ => 0,
        }
    }

    fn where_of(s: &sqlparser::ast::Statement) -> &Expr {
        let sqlparser::ast::Statement::Query(q) = s else {
            panic!("a query")
        };
        let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() else {
            panic!("a select")
        };
        sel.selection.as_ref().unwrap()
    }

    #[test]
    fn chains_become_balanced_with_the_same_text() {
        let terms: Vec<String> = (0..1000).map(|i| format!("a = {i}")).collect();
        let sql = format!("SELECT * FROM t WHERE {}", terms.join(" OR "));
        let mut s = parse(&sql);
        assert_eq!(depth(where_of(&s)), 1000);
        shape(&mut s).unwrap();
        assert_eq!(depth(where_of(&s)), 11);
        assert_eq!(s.to_string(), sql);
        // Mixed operators: each chain is balanced on its own, precedence kept.
        let sql = "SELECT * FROM t WHERE a AND b OR c AND d AND e OR f XOR g XOR h";
        let mut s = parse(sql);
        let before = where_of(&s).to_string();
        shape(&mut s).unwrap();
        assert_eq!(where_of(&s).to_string(), before);
    }

    #[test]
    fn token_bound_counts_operators_per_parenthesis() {
        let toks = |sql: &str| {
            sqlparser::tokenizer::Tokenizer::new(&MySqlDialect {}, sql)
                .tokenize_with_location()
                .unwrap()
        };
        assert_eq!(nesting_bound(&toks("SELECT a, b, c FROM t")), 1);
        assert_eq!(nesting_bound(&toks("SELECT 1 + 2 + 3")), 3);
        assert_eq!(nesting_bound(&toks("SELECT (1 + (2 * 3)) - 4")), 6);
        let list: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let sql = format!("SELECT * FROM t WHERE a IN ({})", list.join(","));
        // `*` and IN, and the list's group.
        assert_eq!(nesting_bound(&toks(&sql)), 4);
    }
}
