//! Binding NEXTVAL(s), LASTVAL(s) and SETVAL(s, n [, is_used [, round]]): the first
//! argument names a sequence, not a column; SETVAL's others are integer constants
//! (MariaDB's grammar), checked here.

use onelog_types::{code, SqlError, Value};
use sqlparser::ast as sq;

use super::{err, Binder, Clause};
use crate::expr::Expr;
use crate::functions::Func;
use crate::parser::syntax_error;
use crate::sequences::SeqFn;

impl Binder<'_> {
    /// Binds a call of `name` (nextval, lastval or setval) to
    /// `Func::Sequence(f)[db, name, values...]`.
    pub(super) fn bind_sequence_call(
        &mut self,
        f: &sq::Function,
        name: &str,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let which = match name {
            "nextval" => SeqFn::Next,
            "lastval" => SeqFn::Last,
            _ => SeqFn::Set,
        };
        let syntax = || syntax_error(&f.to_string(), 0);
        let sq::FunctionArguments::List(l) = &f.args else {
            return Err(syntax());
        };
        let mut args = l.args.iter().map(|a| match a {
            sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => Ok(e),
            _ => Err(syntax()),
        });
        let parts: Vec<String> = match args.next().transpose()? {
            Some(sq::Expr::Identifier(i)) => vec![i.value.clone()],
            Some(sq::Expr::CompoundIdentifier(ids)) if ids.len() == 2 => {
                ids.iter().map(|i| i.value.clone()).collect()
            }
            _ => return Err(syntax()),
        };
        let rest: Vec<&sq::Expr> = args.collect::<Result<_, _>>()?;
        let arity_ok = match which {
            SeqFn::Set => (1..=3).contains(&rest.len()),
            _ => rest.is_empty(),
        };
        if !arity_ok {
            return Err(syntax());
        }
        let (db, table) = match parts.as_slice() {
            [d, t] => (d.clone(), t.clone()),
            [t] => match self.env.current_db() {
                Some(d) => (d.to_string(), t.clone()),
                None => {
                    return Err(err(code::ER_NO_DB_ERROR, "No database selected"));
                }
            },
            _ => return Err(syntax()),
        };
        let cat = self.env.catalog();
        match cat.table(&db, &table) {
            Some(t) if t.sequence => {}
            Some(_) => {
                return Err(err(4089, format!("'{db}.{table}' is not a SEQUENCE")));
            }
            None => {
                return Err(err(4091, format!("Unknown SEQUENCE: '{table}'")));
            }
        }
        let mut out = vec![Expr::Lit(Value::str(&db)), Expr::Lit(Value::str(&table))];
        for e in rest {
            let v = match self.bind_expr(e, clause)? {
                Expr::Lit(v @ (Value::Int(_) | Value::UInt(_))) => v,
                _ => return Err(syntax()),
            };
            out.push(Expr::Lit(v));
        }
        Ok(Expr::Func(Func::Sequence(which), out))
    }
}
