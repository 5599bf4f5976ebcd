//! CHECK constraint conditions as MariaDB prints them (SHOW CREATE TABLE,
//! information_schema.CHECK_CONSTRAINTS): columns quoted with backticks, operators spaced,
//! keywords and function names in lower case (MariaDB's names: `ucase`, `octet_length`,
//! `MOD`, `DIV`), strings in single quotes with `\'`, and parentheses only where
//! MariaDB's operator precedences need them. The text is also what is parsed again to
//! evaluate the condition.

use sqlparser::ast as sq;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use onelog_types::SqlError;

/// MariaDB's operator precedences (`enum precedence` in item.h), lowest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Or = 2,
    Xor,
    And,
    Not,
    Cmp,
    Between,
    In,
    BitOr,
    BitAnd,
    Shift,
    Add = 13,
    Mul,
    BitXor,
    Neg = 17,
    Highest = 20,
}

/// Parses a stored condition (the whole text; `MOD` as an operator, as MariaDB prints it).
pub fn parse(sql: &str) -> Result<sq::Expr, SqlError> {
    let bad = || crate::parser::syntax_error(sql, 0);
    let tokens = Tokenizer::new(&MySqlDialect {}, sql)
        .tokenize()
        .map_err(|_| bad())?
        .into_iter()
        .map(|t| match t {
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("mod") => {
                Token::Mod
            }
            t => t,
        })
        .collect();
    let mut p = Parser::new(&MySqlDialect {}).with_tokens(tokens);
    let e = p.parse_expr().map_err(|_| bad())?;
    if p.peek_token().token != Token::EOF {
        return Err(bad());
    }
    Ok(e)
}

/// The condition as MariaDB prints it.
pub fn print(e: &sq::Expr) -> String {
    let mut out = String::new();
    put(&mut out, e);
    out
}

fn prec(e: &sq::Expr) -> Prec {
    use sq::BinaryOperator as O;
    use sq::Expr as E;
    match e {
        E::BinaryOp { op, .. } => match op {
            O::Or => Prec::Or,
            O::Xor => Prec::Xor,
            O::And => Prec::And,
            O::Eq | O::NotEq | O::Lt | O::LtEq | O::Gt | O::GtEq | O::Spaceship => Prec::Cmp,
            O::Regexp => Prec::In,
            O::BitwiseOr => Prec::BitOr,
            O::BitwiseAnd => Prec::BitAnd,
            O::PGBitwiseShiftLeft | O::PGBitwiseShiftRight => Prec::Shift,
            O::Plus | O::Minus => Prec::Add,
            O::Multiply | O::Divide | O::Modulo | O::MyIntegerDivide | O::DuckIntegerDivide => {
                Prec::Mul
            }
            O::BitwiseXor => Prec::BitXor,
            _ => Prec::Cmp,
        },
        E::UnaryOp {
            op: sq::UnaryOperator::Not,
            ..
        } => Prec::Not,
        E::UnaryOp { .. } => Prec::Neg,
        E::IsNull(_)
        | E::IsNotNull(_)
        | E::IsTrue(_)
        | E::IsNotTrue(_)
        | E::IsFalse(_)
        | E::IsNotFalse(_)
        | E::IsUnknown(_)
        | E::IsNotUnknown(_) => Prec::Cmp,
        E::Between { .. } => Prec::Between,
        E::InList { .. } | E::Like { .. } | E::RLike { .. } => Prec::In,
        E::Nested(inner) => prec(inner),
        _ => Prec::Highest,
    }
}

/// Prints `e` as an operand of an operator of precedence `parent`, in parentheses when it
/// binds less tightly (`strict`: also when it binds equally, for right operands).
fn operand(out: &mut String, e: &sq::Expr, parent: Prec, strict: bool) {
    let p = prec(e);
    if p < parent || (strict && p == parent) {
        out.push('(');
        put(out, e);
        out.push(')');
    } else {
        put(out, e);
    }
}

fn bin_name(op: &sq::BinaryOperator) -> Option<&'static str> {
    use sq::BinaryOperator as O;
    Some(match op {
        O::Or => "or",
        O::Xor => "xor",
        O::And => "and",
        O::Eq => "=",
        O::NotEq => "<>",
        O::Lt => "<",
        O::LtEq => "<=",
        O::Gt => ">",
        O::GtEq => ">=",
        O::Spaceship => "<=>",
        O::Regexp => "regexp",
        O::BitwiseOr => "|",
        O::BitwiseAnd => "&",
        O::PGBitwiseShiftLeft => "<<",
        O::PGBitwiseShiftRight => ">>",
        O::Plus => "+",
        O::Minus => "-",
        O::Multiply => "*",
        O::Divide => "/",
        O::Modulo => "MOD",
        O::MyIntegerDivide | O::DuckIntegerDivide => "DIV",
        O::BitwiseXor => "^",
        _ => return None,
    })
}

/// The inverse of a comparison (MariaDB prints `NOT a > 5` as `a <= 5`).
fn inverted(op: &sq::BinaryOperator) -> Option<sq::BinaryOperator> {
    use sq::BinaryOperator as O;
    Some(match op {
        O::Eq => O::NotEq,
        O::NotEq => O::Eq,
        O::Lt => O::GtEq,
        O::LtEq => O::Gt,
        O::Gt => O::LtEq,
        O::GtEq => O::Lt,
        _ => return None,
    })
}

/// MariaDB's name for a function as it prints it.
fn function_name(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.as_str() {
        "length" => "octet_length",
        "upper" => "ucase",
        "lower" => "lcase",
        "substring" | "mid" => "substr",
        "character_length" => "char_length",
        "ifnull" => "ifnull",
        "now" | "localtime" | "localtimestamp" => "current_timestamp",
        "current_date" => "curdate",
        "current_time" => "curtime",
        _ => return n,
    }
    .into()
}

fn put_value(out: &mut String, v: &sq::Value) {
    match v {
        sq::Value::Number(n, _) => out.push_str(n),
        sq::Value::SingleQuotedString(s) | sq::Value::DoubleQuotedString(s) => {
            out.push('\'');
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\0' => out.push_str("\\0"),
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        sq::Value::Boolean(b) => out.push_str(if *b { "1" } else { "0" }),
        sq::Value::Null => out.push_str("NULL"),
        other => out.push_str(&other.to_string()),
    }
}

fn put_list(out: &mut String, items: &[sq::Expr]) {
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        put(out, a);
    }
}

fn put(out: &mut String, e: &sq::Expr) {
    use sq::Expr as E;
    match e {
        E::Identifier(id) => out.push_str(&format!("`{}`", id.value.replace('`', "``"))),
        E::CompoundIdentifier(ids) => {
            let last = ids.last().map(|i| i.value.as_str()).unwrap_or("");
            out.push_str(&format!("`{}`", last.replace('`', "``")));
        }
        E::Value(v) => put_value(out, &v.value),
        E::Nested(inner) => put(out, inner),
        E::BinaryOp { left, op, right } => match bin_name(op) {
            Some(name) => {
                let p = prec(e);
                let assoc = matches!(
                    op,
                    sq::BinaryOperator::And | sq::BinaryOperator::Or | sq::BinaryOperator::Xor
                );
                operand(out, left, p, false);
                out.push(' ');
                out.push_str(name);
                out.push(' ');
                operand(out, right, p, !assoc);
            }
            None => out.push_str(&e.to_string()),
        },
        E::UnaryOp { op, expr } => match op {
            sq::UnaryOperator::Not | sq::UnaryOperator::BangNot => {
                let inner = match expr.as_ref() {
                    E::Nested(i) => i.as_ref(),
                    other => other,
                };
                if let E::BinaryOp { left, op, right } = inner {
                    if let Some(inv) = inverted(op) {
                        put(
                            out,
                            &E::BinaryOp {
                                left: left.clone(),
                                op: inv,
                                right: right.clone(),
                            },
                        );
                        return;
                    }
                }
                // MariaDB prints `NOT x` as `x = 0`.
                operand(out, inner, Prec::Cmp, false);
                out.push_str(" = 0");
            }
            sq::UnaryOperator::Minus => {
                out.push('-');
                operand(out, expr, Prec::Neg, false);
            }
            sq::UnaryOperator::Plus => put(out, expr),
            sq::UnaryOperator::BitwiseNot => {
                out.push('~');
                operand(out, expr, Prec::Neg, false);
            }
            _ => out.push_str(&e.to_string()),
        },
        E::IsNull(a)
        | E::IsNotNull(a)
        | E::IsTrue(a)
        | E::IsNotTrue(a)
        | E::IsFalse(a)
        | E::IsNotFalse(a)
        | E::IsUnknown(a)
        | E::IsNotUnknown(a) => {
            operand(out, a, Prec::Cmp, false);
            out.push_str(match e {
                E::IsNull(_) | E::IsUnknown(_) => " is null",
                E::IsNotNull(_) | E::IsNotUnknown(_) => " is not null",
                E::IsTrue(_) => " is true",
                E::IsNotTrue(_) => " is not true",
                E::IsFalse(_) => " is false",
                _ => " is not false",
            });
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            operand(out, expr, Prec::Between, false);
            out.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            operand(out, low, Prec::Between, true);
            out.push_str(" and ");
            operand(out, high, Prec::Between, true);
        }
        E::InList {
            expr,
            list,
            negated,
        } => {
            operand(out, expr, Prec::In, false);
            out.push_str(if *negated { " not in (" } else { " in (" });
            put_list(out, list);
            out.push(')');
        }
        E::Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            any: false,
        } => {
            operand(out, expr, Prec::In, false);
            out.push_str(if *negated { " not like " } else { " like " });
            operand(out, pattern, Prec::In, true);
        }
        E::RLike {
            negated,
            expr,
            pattern,
            ..
        } => {
            operand(out, expr, Prec::In, false);
            out.push_str(if *negated { " not regexp " } else { " regexp " });
            operand(out, pattern, Prec::In, true);
        }
        E::Function(f) => {
            let name = crate::parser::name_parts(&f.name).join(".");
            let args: Option<Vec<sq::Expr>> = match &f.args {
                sq::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => l
                    .args
                    .iter()
                    .map(|a| match a {
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(x)) => Some(x.clone()),
                        _ => None,
                    })
                    .collect(),
                sq::FunctionArguments::None => Some(vec![]),
                _ => None,
            };
            match args {
                Some(args) => {
                    out.push_str(&function_name(&name));
                    out.push('(');
                    put_list(out, &args);
                    out.push(')');
                }
                None => out.push_str(&e.to_string()),
            }
        }
        E::Case {
            operand: op,
            conditions,
            else_result,
            ..
        } => {
            out.push_str("case ");
            if let Some(o) = op {
                put(out, o);
                out.push(' ');
            }
            for w in conditions {
                out.push_str("when ");
                put(out, &w.condition);
                out.push_str(" then ");
                put(out, &w.result);
                out.push(' ');
            }
            if let Some(x) = else_result {
                out.push_str("else ");
                put(out, x);
                out.push(' ');
            }
            out.push_str("end");
        }
        E::Interval(iv) if iv.leading_precision.is_none() && iv.last_field.is_none() => {
            out.push_str("interval ");
            operand(out, &iv.value, Prec::Highest, false);
            if let Some(f) = &iv.leading_field {
                out.push(' ');
                out.push_str(&f.to_string().to_ascii_lowercase());
            }
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> String {
        print(&parse(s).unwrap())
    }

    #[test]
    fn prints_as_mariadb() {
        // Expected texts are what MariaDB 10.11 shows in CHECK_CONSTRAINTS.
        assert_eq!(p("a+b*2 > (a-1)*3"), "`a` + `b` * 2 > (`a` - 1) * 3");
        assert_eq!(p("not (a > 5)"), "`a` <= 5");
        assert_eq!(p("a in (1,2,3)"), "`a` in (1,2,3)");
        assert_eq!(p("a between 1 and 10"), "`a` between 1 and 10");
        assert_eq!(
            p("c is not null or a is null"),
            "`c` is not null or `a` is null"
        );
        assert_eq!(
            p("length(c) < 5 and upper(c) != 'X'"),
            "octet_length(`c`) < 5 and ucase(`c`) <> 'X'"
        );
        assert_eq!(
            p("concat(c, 'a', \"b\") like 'x%'"),
            "concat(`c`,'a','b') like 'x%'"
        );
        assert_eq!(
            p("a % 2 = 0 and a div 2 < 3 and a/2 < 4"),
            "`a` MOD 2 = 0 and `a` DIV 2 < 3 and `a` / 2 < 4"
        );
        assert_eq!(p("c = 'it''s'"), "`c` = 'it\\'s'");
        assert_eq!(
            p("case when a > 1 then b else 0 end = 0"),
            "case when `a` > 1 then `b` else 0 end = 0"
        );
        assert_eq!(p("json_valid(j)"), "json_valid(`j`)");
        assert_eq!(p("(a or b) and c"), "(`a` or `b`) and `c`");
        // The printed text parses back to the same condition.
        let t = p("a % 2 = 0 or a div 2 < 3");
        assert_eq!(t, "`a` MOD 2 = 0 or `a` DIV 2 < 3");
        assert_eq!(p(&t), t);
        assert!(parse("a > 0 b").is_err());
    }
}
