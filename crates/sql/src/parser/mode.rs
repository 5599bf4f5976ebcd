//! The sql_mode flags that change how statement text is read: PIPES_AS_CONCAT (`||` is
//! CONCAT), ANSI_QUOTES (`"x"` is a quoted identifier) and NO_BACKSLASH_ESCAPES (`\` is an
//! ordinary character in string literals).
//!
//! The options are in effect for the parses run inside [`with_options`]; outside it (stored
//! definitions re-read at use time, internal statements) the default reading applies.

use std::cell::Cell;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArgumentList, FunctionArguments, Ident,
    ObjectName, Statement,
};
use sqlparser::dialect::{Dialect, MySqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// How statement text is read, from the session's sql_mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseOptions {
    pub pipes_as_concat: bool,
    pub ansi_quotes: bool,
    pub no_backslash_escapes: bool,
}

impl ParseOptions {
    /// The options a sql_mode value (comma-separated, as stored) turns on.
    pub fn from_sql_mode(mode: &str) -> Self {
        let mut o = ParseOptions::default();
        for flag in mode.split(',') {
            match flag.trim().to_ascii_uppercase().as_str() {
                "PIPES_AS_CONCAT" => o.pipes_as_concat = true,
                "ANSI_QUOTES" => o.ansi_quotes = true,
                "NO_BACKSLASH_ESCAPES" => o.no_backslash_escapes = true,
                _ => {}
            }
        }
        o
    }

    fn is_default(&self) -> bool {
        *self == ParseOptions::default()
    }
}

thread_local! {
    static CURRENT: Cell<ParseOptions> = const { Cell::new(ParseOptions {
        pipes_as_concat: false,
        ansi_quotes: false,
        no_backslash_escapes: false,
    }) };
}

/// Runs `f` with `opts` in effect for every parse it makes on this thread.
pub fn with_options<R>(opts: ParseOptions, f: impl FnOnce() -> R) -> R {
    struct Restore(ParseOptions);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(opts)));
    f()
}

/// The options in effect.
pub(super) fn current() -> ParseOptions {
    CURRENT.with(|c| c.get())
}

/// The dialect for the options in effect: MySQL's, adjusted for the sql_mode flags.
pub(super) fn dialect() -> Box<dyn Dialect> {
    let opts = current();
    if opts.is_default() {
        Box::new(MySqlDialect {})
    } else {
        Box::new(ModeDialect {
            base: MySqlDialect {},
            opts,
        })
    }
}

/// ANSI_QUOTES: `"x"` identifiers read exactly as backquoted ones.
pub(super) fn rewrite_ansi_quotes(toks: &mut [TokenWithSpan]) {
    if !current().ansi_quotes {
        return;
    }
    for t in toks.iter_mut() {
        if let Token::Word(w) = &mut t.token {
            if w.quote_style == Some('"') {
                w.quote_style = Some('`');
            }
        }
    }
}

/// Binding strength of `||` under PIPES_AS_CONCAT: above `^`, `*` and `+` (MariaDB's
/// MYSQL_CONCAT_SYM binds tightest of the binary operators).
const CONCAT_PRECEDENCE: u8 = 45;

/// MySQL's dialect with the sql_mode flags applied; it answers as MySQL's dialect to the
/// parser's dialect checks.
#[derive(Debug)]
struct ModeDialect {
    base: MySqlDialect,
    opts: ParseOptions,
}

impl ModeDialect {
    /// `left || right` as `CONCAT(left, right)`.
    fn parse_concat(
        &self,
        parser: &mut Parser,
        left: &Expr,
        precedence: u8,
    ) -> Result<Expr, ParserError> {
        let op = parser.next_token();
        let right = parser.parse_subexpr(precedence)?;
        let arg = |e: Expr| FunctionArg::Unnamed(FunctionArgExpr::Expr(e));
        Ok(Expr::Function(Function {
            name: ObjectName::from(vec![Ident::with_span(op.span, "CONCAT")]),
            uses_odbc_syntax: false,
            parameters: FunctionArguments::None,
            args: FunctionArguments::List(FunctionArgumentList {
                duplicate_treatment: None,
                args: vec![arg(left.clone()), arg(right)],
                clauses: vec![],
            }),
            filter: None,
            null_treatment: None,
            over: None,
            within_group: vec![],
        }))
    }
}

impl Dialect for ModeDialect {
    fn dialect(&self) -> std::any::TypeId {
        self.base.dialect()
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.base.is_delimited_identifier_start(ch) || (self.opts.ansi_quotes && ch == '"')
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        !self.opts.no_backslash_escapes
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        if self.opts.pipes_as_concat && parser.peek_token_ref().token == Token::StringConcat {
            return Some(Ok(CONCAT_PRECEDENCE));
        }
        None
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if self.opts.pipes_as_concat && parser.peek_token_ref().token == Token::StringConcat {
            return Some(self.parse_concat(parser, expr, precedence));
        }
        self.base.parse_infix(parser, expr, precedence)
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        self.base.parse_statement(parser)
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.base.is_table_factor_alias(explicit, kw, parser)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.base.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.base.is_identifier_part(ch)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.base.identifier_quote_style(identifier)
    }

    fn supports_string_literal_concatenation(&self) -> bool {
        self.base.supports_string_literal_concatenation()
    }

    fn ignores_wildcard_escapes(&self) -> bool {
        self.base.ignores_wildcard_escapes()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.base.supports_numeric_prefix()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        self.base.supports_bitwise_shift_operators()
    }

    fn supports_multiline_comment_hints(&self) -> bool {
        self.base.supports_multiline_comment_hints()
    }

    fn require_interval_qualifier(&self) -> bool {
        self.base.require_interval_qualifier()
    }

    fn supports_limit_comma(&self) -> bool {
        self.base.supports_limit_comma()
    }

    fn supports_create_table_select(&self) -> bool {
        self.base.supports_create_table_select()
    }

    fn supports_insert_set(&self) -> bool {
        self.base.supports_insert_set()
    }

    fn supports_user_host_grantee(&self) -> bool {
        self.base.supports_user_host_grantee()
    }

    fn supports_table_hints(&self) -> bool {
        self.base.supports_table_hints()
    }

    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.base.requires_single_line_comment_whitespace()
    }

    fn supports_match_against(&self) -> bool {
        self.base.supports_match_against()
    }

    fn supports_select_modifiers(&self) -> bool {
        self.base.supports_select_modifiers()
    }

    fn supports_set_names(&self) -> bool {
        self.base.supports_set_names()
    }

    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.base.supports_comma_separated_set_assignments()
    }

    fn supports_update_order_by(&self) -> bool {
        self.base.supports_update_order_by()
    }

    fn supports_data_type_signed_suffix(&self) -> bool {
        self.base.supports_data_type_signed_suffix()
    }

    fn supports_cross_join_constraint(&self) -> bool {
        self.base.supports_cross_join_constraint()
    }

    fn supports_double_ampersand_operator(&self) -> bool {
        self.base.supports_double_ampersand_operator()
    }

    fn supports_binary_kw_as_cast(&self) -> bool {
        self.base.supports_binary_kw_as_cast()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        self.base.supports_comment_optimizer_hint()
    }

    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.base.supports_constraint_keyword_without_name()
    }

    fn supports_key_column_option(&self) -> bool {
        self.base.supports_key_column_option()
    }

    fn supports_group_by_with_modifier(&self) -> bool {
        self.base.supports_group_by_with_modifier()
    }

    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.base.supports_left_associative_joins_without_parens()
    }
}
