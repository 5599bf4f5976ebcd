//! Binding the expressions SQL writes with keywords rather than a plain call: CAST, CONVERT,
//! COLLATE, charset-prefixed literals, EXTRACT, typed literals (DATE '...'), SUBSTRING ...
//! FROM ... FOR, TRIM, CEIL/FLOOR and POSITION ... IN.

use super::*;

impl<'a> Binder<'a> {
    /// CAST, CONVERT, COLLATE, _charset literals, EXTRACT, typed literals, SUBSTRING, TRIM,
    /// CEIL, FLOOR, POSITION.
    pub(super) fn bind_special_form(
        &mut self,
        e: &sq::Expr,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        use sq::Expr as E;
        Ok(match e {
            E::Cast {
                expr, data_type, ..
            } => {
                // `BINARY a = b` is `(BINARY a) = b` in MariaDB, not `BINARY (a = b)`.
                if matches!(data_type, sq::DataType::Binary(None))
                    && self.after_binary_keyword(expr)
                {
                    let mut fixed = (**expr).clone();
                    if binary_onto_leftmost(&mut fixed) {
                        return self.bind_expr(&fixed, clause);
                    }
                }
                let t = cast_type(data_type, expr)?;
                let x = self.cast_operand(expr, t, clause)?;
                Expr::Cast(self.fixed_bin_memory_for(x, t), t)
            }
            E::Convert {
                expr, data_type, ..
            } => match data_type {
                Some(t) => {
                    let t = cast_type(t, expr)?;
                    Expr::Cast(self.cast_operand(expr, t, clause)?, t)
                }
                None => self.bind_expr(expr, clause)?,
            },
            E::Collate { expr, collation } => {
                let name = name_parts(collation).join(".");
                let Some(c) = Collation::from_name(&name) else {
                    return Err(err(
                        crate::codes::ER_UNKNOWN_COLLATION,
                        format!("Unknown collation: '{name}'"),
                    ));
                };
                Expr::Collate(self.sub(expr, clause)?, c, Derivation::Explicit)
            }
            E::Prefixed { prefix, value } => {
                let v = self.sub(value, clause)?;
                // `_binary 'x'`: a binary string literal; other introducers name text
                // charsets stored as utf8mb4.
                if prefix.value.eq_ignore_ascii_case("_binary") {
                    Expr::Collate(v, Collation::Binary, Derivation::Coercible)
                } else {
                    *v
                }
            }
            E::Extract { field, expr, .. } => {
                let unit = single_unit(field).ok_or_else(|| {
                    crate::parser::syntax_error(&format!("{field} FROM {expr})"), 0)
                })?;
                let f = Func::Cal(dates::CalFn::Extract(unit));
                Expr::Func(f, vec![self.bind_expr(expr, clause)?])
            }
            E::TypedString(ts) => {
                let v = self.bind_value(&ts.value.value)?;
                // TIME '...' and TIMESTAMP '...' have the precision their text shows.
                let digits = match &v {
                    Value::Bytes(b) => {
                        let s = String::from_utf8_lossy(b);
                        // The fraction follows the seconds (dots may separate date parts).
                        let s = &s[s.rfind(':').unwrap_or(0)..];
                        s.find('.').map_or(0, |dot| {
                            s[dot + 1..]
                                .bytes()
                                .take_while(u8::is_ascii_digit)
                                .count()
                                .min(6)
                        }) as u8
                    }
                    _ => 0,
                };
                let ty = match cast_type(&ts.data_type, e)? {
                    CastType::DateTime(_) => CastType::DateTime(digits),
                    CastType::Time(_) => CastType::Time(digits),
                    other => other,
                };
                Expr::Cast(Box::new(Expr::Lit(v)), ty)
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind_expr(expr, clause)?];
                args.push(match substring_from {
                    Some(f) => self.bind_expr(f, clause)?,
                    None => Expr::Lit(Value::Int(1)),
                });
                if let Some(f) = substring_for {
                    args.push(self.bind_expr(f, clause)?);
                }
                Expr::Func(Func::Substring, self.zerofill_args(Func::Substring, args))
            }
            E::Trim {
                expr,
                trim_where,
                trim_what,
                ..
            } => {
                if trim_what.is_some() {
                    return Err(unsupported("TRIM(... FROM ...)"));
                }
                let f = match trim_where {
                    Some(sq::TrimWhereField::Leading) => Func::LTrim,
                    Some(sq::TrimWhereField::Trailing) => Func::RTrim,
                    _ => Func::Trim,
                };
                let args = vec![self.bind_expr(expr, clause)?];
                Expr::Func(f, self.zerofill_args(f, args))
            }
            E::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.bind_expr(expr, clause)?]),
            E::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.bind_expr(expr, clause)?]),
            E::Position { expr, r#in } => {
                let args = vec![self.bind_expr(r#in, clause)?, self.bind_expr(expr, clause)?];
                Expr::Func(Func::Instr, self.zerofill_args(Func::Instr, args))
            }
            _ => unreachable!("not a special form"),
        })
    }
}
