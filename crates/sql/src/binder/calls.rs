//! Binding calls that are not plain scalar functions: aggregates, and the calls whose
//! value is known when the statement is bound (NOW(), DATABASE(), USER(), ...).

use super::*;

impl<'a> Binder<'a> {
    /// An aggregate call (COUNT, SUM, GROUP_CONCAT, JSON_ARRAYAGG, ...): registered in
    /// `self.aggs`, referred to by its index.
    pub(super) fn bind_aggregate(
        &mut self,
        f: &sq::Function,
        mut kind: AggKind,
        name: &str,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        if !self.allow_agg || matches!(clause, Clause::Where | Clause::On | Clause::Group) {
            return Err(err(1111, "Invalid use of group function"));
        }
        // Aggregate arguments are evaluated per row: no nested aggregates.
        self.allow_agg = false;
        let r = self.fn_args(f, clause).and_then(|(args, star, distinct)| {
            let concat = matches!(kind, AggKind::GroupConcat | AggKind::JsonArrayAgg);
            let clauses = if concat && !star {
                self.group_concat_clauses(f, &args, clause)?
            } else {
                (Vec::new(), DEFAULT_SEPARATOR.to_vec())
            };
            Ok((args, star, distinct, clauses))
        });
        self.allow_agg = true;
        let (args, star, distinct, (order, separator)) = r?;
        let args = if kind == AggKind::GroupConcat {
            args.into_iter().map(|a| self.zerofill_text(a)).collect()
        } else {
            args
        };
        if star {
            if kind != AggKind::Count {
                return Err(crate::parser::syntax_error("*)", 0));
            }
            kind = AggKind::CountStar;
        } else if args.len() != 1 && kind != AggKind::GroupConcat {
            return Err(err(
                code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        let mut arg = if kind == AggKind::GroupConcat && args.len() > 1 {
            Expr::Func(Func::Concat, args)
        } else {
            args.into_iter().next().unwrap_or(Expr::Lit(Value::Int(1)))
        };
        let mut separator = separator;
        if kind == AggKind::JsonArrayAgg {
            // Each value as JSON text (NULL as `null`), joined by `,`.
            let json = matches!(&arg, Expr::Func(Func::Json(g), _) if g.gives_json());
            arg = Expr::Func(Func::Json(functions::JsonFn::Element(json)), vec![arg]);
            separator = b",".to_vec();
        }
        // MIN/MAX of UUID/INET6 compare the sort forms and give back the value.
        let fixed = self
            .fixed_bin_of(&arg)
            .filter(|_| matches!(kind, AggKind::Min | AggKind::Max));
        if let Some(f) = fixed {
            arg = Expr::Cast(Box::new(arg), CastType::FixedBinKey(f));
        }
        let arg_type = self.type_of(&arg).0;
        self.aggs.push(AggCall {
            kind,
            arg,
            distinct,
            arg_type,
            order,
            separator,
        });
        let agg = Expr::Agg(self.aggs.len() - 1);
        Ok(match fixed {
            Some(f) => Expr::Cast(Box::new(agg), CastType::FixedBinFromKey(f)),
            None => agg,
        })
    }

    /// A call whose value is fixed when the statement is bound: the time functions (at the
    /// statement's time), the session's database, user, connection id, last insert id,
    /// row count, MASTER_GTID_WAIT, PI(). None: not such a call.
    pub(super) fn fold_call(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> Result<Option<Expr>, SqlError> {
        let now = self.env.now();
        let nargs = args.len();
        let folded = match name {
            // NOW() has no fraction, NOW(p) p digits of it (MariaDB: DATETIME(p)); CURTIME
            // likewise (TIME(p)).
            "now" | "current_timestamp" | "localtime" | "localtimestamp" | "sysdate"
            | "utc_timestamp" | "curtime" | "current_time" | "utc_time" => {
                let p = match args.first() {
                    Some(Expr::Lit(v)) => expr::to_i64(v),
                    _ => 0,
                };
                if !(0..=6).contains(&p) {
                    // MariaDB names NOW and its synonyms by their SQL-standard name.
                    let what = match name {
                        "now" | "localtime" | "localtimestamp" => "current_timestamp",
                        "curtime" => "current_time",
                        other => other,
                    };
                    return Err(err(
                        code::ER_TOO_BIG_PRECISION,
                        format!("Too big precision specified for '{what}'. Maximum is 6"),
                    ));
                }
                let micro = now.micro - now.micro % 10u32.pow(6 - p as u32);
                let (v, ty) = if matches!(name, "curtime" | "current_time" | "utc_time") {
                    let t = onelog_types::Time {
                        negative: false,
                        hours: now.hour as u32,
                        minute: now.minute,
                        second: now.second,
                        micro,
                    };
                    (Value::Time(t), CastType::Time(p as u8))
                } else {
                    let dt = onelog_types::DateTime { micro, ..now };
                    (Value::DateTime(dt), CastType::DateTime(p as u8))
                };
                if p > 0 {
                    // Typed with p digits, so it shows them.
                    return Ok(Some(Expr::Cast(Box::new(Expr::Lit(v)), ty)));
                }
                Some(v)
            }
            "curdate" | "current_date" | "utc_date" => Some(Value::Date(now.date)),
            "unix_timestamp" if nargs == 0 => Some(Value::Int(now.unix_seconds())),
            "database" | "schema" => Some(match self.env.current_db() {
                Some(d) => Value::str(d),
                None => Value::Null,
            }),
            "version" => Some(Value::str(&self.env.version())),
            "connection_id" => Some(Value::UInt(self.env.connection_id() as u64)),
            "last_insert_id" if nargs == 0 => Some(Value::UInt(self.env.last_insert_id())),
            "row_count" => Some(Value::Int(self.env.row_count())),
            "found_rows" => Some(Value::Int(0)),
            // Waits while the statement is bound: its arguments are constants.
            "master_gtid_wait" if (1..=2).contains(&nargs) => {
                let lit = |i: usize| match args.get(i) {
                    None => Ok(None),
                    Some(Expr::Lit(v)) => Ok(Some(v.clone())),
                    Some(_) => Err(err(
                        code::ER_NOT_SUPPORTED_YET,
                        "This version of MariaDB doesn't yet support 'MASTER_GTID_WAIT with \
                         arguments that are not constants'",
                    )),
                };
                match lit(0)? {
                    Some(p) if !p.is_null() => {
                        let timeout = lit(1)?.filter(|t| !t.is_null()).map(|t| expr::to_f64(&t));
                        Some(self.env.master_gtid_wait(&expr::to_string(&p), timeout)?)
                    }
                    _ => Some(Value::Null),
                }
            }
            "user" | "session_user" | "system_user" => Some(Value::str(&self.env.user())),
            "current_user" => Some(Value::str(&self.env.current_user())),
            "pi" => Some(Value::Double(std::f64::consts::PI)),
            _ => None,
        };
        Ok(folded.map(Expr::Lit))
    }
}
