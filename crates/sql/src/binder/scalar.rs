//! Binding expressions: literals, columns, operators, row comparisons, subqueries,
//! variables, function calls and date arithmetic, and the literal and CAST helpers they use.

use super::*;

impl<'a> Binder<'a> {
    pub fn bind_value(&self, v: &sq::Value) -> Result<Value, SqlError> {
        Ok(match v {
            sq::Value::Number(n, _) => parse_number(n),
            sq::Value::SingleQuotedString(s)
            | sq::Value::DoubleQuotedString(s)
            | sq::Value::NationalStringLiteral(s)
            | sq::Value::EscapedStringLiteral(s)
            | sq::Value::TripleSingleQuotedString(s)
            | sq::Value::TripleDoubleQuotedString(s) => Value::Bytes(crate::literal_bytes(s)),
            sq::Value::SingleQuotedByteStringLiteral(s)
            | sq::Value::DoubleQuotedByteStringLiteral(s) => {
                // b'0101'
                let mut n: u64 = 0;
                for c in s.chars() {
                    n = (n << 1) | (c == '1') as u64;
                }
                Value::UInt(n)
            }
            sq::Value::HexStringLiteral(h) => {
                let h = if h.len() % 2 == 1 {
                    format!("0{h}")
                } else {
                    h.clone()
                };
                let mut out = Vec::with_capacity(h.len() / 2);
                for i in (0..h.len()).step_by(2) {
                    out.push(
                        u8::from_str_radix(&h[i..i + 2], 16)
                            .map_err(|_| crate::parser::syntax_error(&h, 0))?,
                    );
                }
                Value::Bytes(out)
            }
            sq::Value::Boolean(b) => Value::Int(*b as i64),
            sq::Value::Null => Value::Null,
            sq::Value::Placeholder(p) => {
                let i: usize = p.trim_start_matches('?').parse().unwrap_or(0);
                self.env
                    .params()
                    .get(i.wrapping_sub(1))
                    .cloned()
                    .unwrap_or(Value::Null)
            }
            other => return Err(unsupported(&other.to_string())),
        })
    }

    pub(super) fn sub(&mut self, e: &sq::Expr, clause: Clause) -> Result<Box<Expr>, SqlError> {
        Ok(Box::new(self.bind_expr(e, clause)?))
    }

    pub(super) fn bind_subquery(&mut self, q: &sq::Query) -> Result<usize, SqlError> {
        let mut sel = self.child().bind_query(q)?;
        // The columns of this query the subquery (or one nested in it) reads.
        let mut params = Vec::new();
        visit_exprs(&sel, 0, &mut |e, depth| {
            e.walk(&mut |x| {
                if let Expr::Outer(d, p) = x {
                    if *d == depth + 1 && !params.contains(p) {
                        params.push(*p);
                    }
                }
            })
        });
        params.sort_unstable();
        sel.params = params;
        self.subqueries.push(sel);
        Ok(self.subqueries.len() - 1)
    }

    /// The collation comparing `a` with the one column of subquery `i`.
    pub(super) fn subquery_coll(&self, a: &Expr, i: usize) -> Collation {
        let sub = match self.subqueries[i].columns[0].ty.collation() {
            Some(c) => (c, Derivation::Implicit),
            None => (Collation::DEFAULT, Derivation::Numeric),
        };
        Collation::aggregate(self.coll_of(a), sub).0
    }

    /// A subquery used as a one-column operand (IN, ANY/ALL, scalar).
    pub(super) fn bind_column_subquery(
        &mut self,
        q: &sq::Query,
        with_limit: bool,
    ) -> Result<usize, SqlError> {
        if !with_limit && q.limit_clause.is_some() {
            return Err(unsupported("LIMIT & IN/ALL/ANY/SOME subquery"));
        }
        let i = self.bind_subquery(q)?;
        if self.subqueries[i].columns.len() != 1 {
            return Err(err(
                code::ER_OPERAND_COLUMNS,
                "Operand should contain 1 column(s)",
            ));
        }
        Ok(i)
    }

    pub fn bind_expr(&mut self, e: &sq::Expr, clause: Clause) -> Result<Expr, SqlError> {
        stack::check()?;
        if self.env.interrupted() {
            return Err(err(
                code::ER_QUERY_INTERRUPTED,
                "Query execution was interrupted",
            ));
        }
        use sq::Expr as E;
        Ok(match e {
            E::Identifier(id) => {
                if id.quote_style.is_none() && id.value.starts_with('@') {
                    return self.bind_variable(std::slice::from_ref(&id.value));
                }
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
                    return Err(unsupported("DEFAULT in this position"));
                }
                self.lookup_column(std::slice::from_ref(&id.value), clause)?
            }
            E::CompoundIdentifier(ids) => {
                let parts: Vec<String> = ids.iter().map(|i| i.value.clone()).collect();
                if ids[0].quote_style.is_none() && parts[0].starts_with('@') {
                    return self.bind_variable(&parts);
                }
                self.lookup_column(&parts, clause)?
            }
            E::Value(v) => {
                let lit = Expr::Lit(self.bind_value(&v.value)?);
                if matches!(v.value, sq::Value::HexStringLiteral(_)) {
                    // X'..' is a binary string.
                    Expr::Collate(Box::new(lit), Collation::Binary, Derivation::Coercible)
                } else {
                    lit
                }
            }
            E::Nested(inner) => self.bind_expr(inner, clause)?,
            E::BinaryOp { .. } | E::UnaryOp { .. } => self.bind_operator(e, clause)?,
            E::IsNull(a) => Expr::IsNull(self.sub(a, clause)?, false),
            E::IsNotNull(a) => Expr::IsNull(self.sub(a, clause)?, true),
            E::IsTrue(a) => Expr::IsBool(self.sub(a, clause)?, true, false),
            E::IsNotTrue(a) => Expr::IsBool(self.sub(a, clause)?, true, true),
            E::IsFalse(a) => Expr::IsBool(self.sub(a, clause)?, false, false),
            E::IsNotFalse(a) => Expr::IsBool(self.sub(a, clause)?, false, true),
            E::IsUnknown(a) => Expr::IsNull(self.sub(a, clause)?, false),
            E::IsNotUnknown(a) => Expr::IsNull(self.sub(a, clause)?, true),
            E::Subquery(q) => {
                let i = self.bind_column_subquery(q, true)?;
                Expr::Subquery(i)
            }
            E::Exists { subquery, negated } => {
                let i = self.bind_subquery(subquery)?;
                Expr::Exists(i, *negated)
            }
            E::Between { .. }
            | E::InList { .. }
            | E::InSubquery { .. }
            | E::AnyOp { .. }
            | E::AllOp { .. }
            | E::Like { .. }
            | E::ILike { .. }
            | E::RLike { .. } => self.bind_predicate(e, clause)?,
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let mut op = match operand {
                    Some(o) => Some(self.sub(o, clause)?),
                    None => None,
                };
                let mut whens = Vec::new();
                for c in conditions {
                    whens.push((
                        self.bind_expr(&c.condition, clause)?,
                        self.bind_expr(&c.result, clause)?,
                    ));
                }
                let mut els = match else_result {
                    Some(e) => Some(self.sub(e, clause)?),
                    None => None,
                };
                self.fixed_bin_case(&mut op, &mut whens, &mut els)?;
                let coll = match &op {
                    Some(o) => self.agg_coll(
                        &std::iter::once(&**o)
                            .chain(whens.iter().map(|(w, _)| w))
                            .collect::<Vec<_>>(),
                    ),
                    None => Collation::DEFAULT,
                };
                Expr::Case(op, whens, els, coll)
            }
            E::Cast { .. }
            | E::Convert { .. }
            | E::Collate { .. }
            | E::Prefixed { .. }
            | E::Extract { .. }
            | E::TypedString(_)
            | E::Substring { .. }
            | E::Trim { .. }
            | E::Ceil { .. }
            | E::Floor { .. }
            | E::Position { .. } => self.bind_special_form(e, clause)?,
            E::Function(f) => self.bind_function(f, clause)?,
            E::Tuple(_) => {
                return Err(err(
                    code::ER_OPERAND_COLUMNS,
                    "Operand should contain 1 column(s)",
                ))
            }
            other => return Err(unsupported(&format!("expression {other}"))),
        })
    }

    /// A comparison of two row constructors (`(a, b) = (1, 2)`), expanded into comparisons
    /// of their elements: `=` and `<=>` hold when every pair does, `<>` is NOT `=`, and the
    /// orderings compare lexicographically (the first unequal pair decides; a NULL pair
    /// before it makes the result NULL), as MariaDB compares rows.
    pub(super) fn bind_row_cmp(
        &mut self,
        op: BinOp,
        l: &sq::Expr,
        r: &sq::Expr,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let width = |e: &sq::Expr| match e {
            sq::Expr::Tuple(v) => v.len(),
            _ => 1,
        };
        let (sq::Expr::Tuple(a), sq::Expr::Tuple(b)) = (l, r) else {
            if matches!(l, sq::Expr::Subquery(_)) || matches!(r, sq::Expr::Subquery(_)) {
                return Err(unsupported("row constructors compared with a subquery"));
            }
            if width(l) != width(r) {
                // A row against a scalar: MariaDB's type error.
                let (row_left, scalar) = if width(l) > 1 { (true, r) } else { (false, l) };
                let t = self.bind_expr(scalar, clause)?;
                let name = match self.type_of(&t).0 {
                    ColumnType::Int { bytes: 8, .. } => "bigint",
                    ColumnType::Int { .. } => "int",
                    ColumnType::Decimal { .. } => "decimal",
                    ColumnType::Float => "float",
                    ColumnType::Double => "double",
                    ColumnType::Date => "date",
                    ColumnType::DateTime { .. } => "datetime",
                    ColumnType::Timestamp { .. } => "timestamp",
                    ColumnType::Time { .. } => "time",
                    _ => "varchar",
                };
                let (a, b) = if row_left {
                    ("row", name)
                } else {
                    (name, "row")
                };
                return Err(err(
                    code::ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION,
                    format!(
                        "Illegal parameter data types {a} and {b} for operation '{}'",
                        cmp_symbol(op).unwrap_or("<=>")
                    ),
                ));
            }
            let x = self.sub(l, clause)?;
            let y = self.sub(r, clause)?;
            let coll = self.agg_coll_checked(&[&x, &y], cmp_symbol(op).unwrap_or("="))?;
            return Ok(Expr::Bin(op, x, y, coll));
        };
        if a.len() != b.len() || a.is_empty() {
            return Err(err(
                code::ER_OPERAND_COLUMNS,
                format!("Operand should contain {} column(s)", a.len()),
            ));
        }
        let and = |x: Expr, y: Expr| Expr::And(Box::new(x), Box::new(y));
        Ok(match op {
            BinOp::Eq | BinOp::NullSafeEq => {
                let mut eqs = Vec::with_capacity(a.len());
                for (x, y) in a.iter().zip(b) {
                    eqs.push(self.bind_row_cmp(op, x, y, clause)?);
                }
                Logic::And.balanced(eqs)
            }
            BinOp::Ne => Expr::Not(Box::new(self.bind_row_cmp(BinOp::Eq, l, r, clause)?)),
            _ => {
                let strict = match op {
                    BinOp::Le => BinOp::Lt,
                    BinOp::Ge => BinOp::Gt,
                    o => o,
                };
                let n = a.len();
                // The comparison nests two levels per column.
                stack::check_room(n * 2 * ROW_CMP_BYTES_PER_LEVEL)?;
                let mut acc = self.bind_row_cmp(op, &a[n - 1], &b[n - 1], clause)?;
                for i in (0..n - 1).rev() {
                    let lt = self.bind_row_cmp(strict, &a[i], &b[i], clause)?;
                    let eq = self.bind_row_cmp(BinOp::Eq, &a[i], &b[i], clause)?;
                    acc = Expr::Or(Box::new(lt), Box::new(and(eq, acc)));
                }
                acc
            }
        })
    }

    pub(super) fn bind_variable(&mut self, parts: &[String]) -> Result<Expr, SqlError> {
        let first = &parts[0];
        if let Some(rest) = first.strip_prefix("@@") {
            let (scope, name) = if parts.len() == 2 {
                let s = match rest.to_lowercase().as_str() {
                    "global" => Some(VarScope::Global),
                    "session" | "local" => Some(VarScope::Session),
                    _ => {
                        return Err(err(
                            code::ER_UNKNOWN_SYSTEM_VARIABLE,
                            format!("Unknown system variable '{rest}'"),
                        ))
                    }
                };
                (s, parts[1].clone())
            } else {
                (None, rest.to_string())
            };
            return Ok(Expr::Lit(self.env.sys_var(scope, &name.to_lowercase())?));
        }
        let name = first.trim_start_matches('@');
        Ok(Expr::Lit(self.env.user_var(&name.to_lowercase())))
    }

    pub(super) fn fn_args(
        &mut self,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<(Vec<Expr>, bool, bool), SqlError> {
        // (args, star, distinct)
        match &f.args {
            sq::FunctionArguments::None => Ok((vec![], false, false)),
            sq::FunctionArguments::Subquery(_) => Err(unsupported("subquery as function argument")),
            sq::FunctionArguments::List(l) => {
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(sq::DuplicateTreatment::Distinct)
                );
                let mut out = Vec::new();
                let mut star = false;
                for a in &l.args {
                    match a {
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => {
                            out.push(self.bind_expr(e, clause)?)
                        }
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(unsupported("named function arguments")),
                    }
                }
                Ok((out, star, distinct))
            }
        }
    }

    /// `GROUP_CONCAT(... [ORDER BY e [ASC|DESC], ...] [SEPARATOR 'str'])`: an ORDER BY
    /// position names an argument (MariaDB).
    pub(super) fn group_concat_clauses(
        &mut self,
        f: &sq::Function,
        args: &[Expr],
        clause: Clause,
    ) -> Result<(AggOrder, Vec<u8>), SqlError> {
        let mut order = Vec::new();
        let mut separator = DEFAULT_SEPARATOR.to_vec();
        let sq::FunctionArguments::List(l) = &f.args else {
            return Ok((order, separator));
        };
        for c in &l.clauses {
            match c {
                sq::FunctionArgumentClause::OrderBy(items) => {
                    for o in items {
                        let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
                        let e = match positional(&o.expr, args, "ORDER BY") {
                            Some(e) => e?,
                            None => self.bind_expr(&o.expr, clause)?,
                        };
                        let coll = self.coll_of(&e).0;
                        order.push((e, desc, coll));
                    }
                }
                sq::FunctionArgumentClause::Separator(v) => {
                    separator = match self.bind_value(&v.value)? {
                        Value::Bytes(b) => b,
                        other => crate::expr::to_bytes(&other),
                    };
                }
                other => return Err(unsupported(&format!("{other} in GROUP_CONCAT"))),
            }
        }
        Ok((order, separator))
    }

    pub(super) fn bind_function(
        &mut self,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        if f.filter.is_some() || !f.within_group.is_empty() || f.null_treatment.is_some() {
            return Err(crate::parser::syntax_error(&f.to_string(), 0));
        }
        let parts = name_parts(&f.name);
        let name = parts.last().cloned().unwrap_or_default().to_lowercase();
        if parts.len() == 2 && f.over.is_none() {
            // `db.f(...)`: a stored function.
            let (args, _, _) = self.fn_args(f, clause)?;
            let cat = self.env.catalog();
            return match crate::routines::bind_function(
                &cat,
                Some(&parts[0]),
                &parts[1],
                args.len(),
            )? {
                Some(r) => Ok(Expr::Routine(r, args)),
                None => Err(crate::routines::no_function(&parts[0], &parts[1])),
            };
        }
        if parts.len() > 1 {
            return Err(err(
                code::ER_FUNCTION_NOT_DEFINED,
                format!("FUNCTION {} does not exist", parts.join(".")),
            ));
        }
        if let Some(over) = &f.over {
            return self.bind_window(f, over, &name, clause);
        }
        if matches!(name.as_str(), "nextval" | "lastval" | "setval") {
            return self.bind_sequence_call(f, &name, clause);
        }
        if name == "default" {
            return self.bind_default_call(f, clause);
        }
        // Aggregates.
        let agg = match name.as_str() {
            "count" => Some(AggKind::Count),
            "sum" => Some(AggKind::Sum),
            "min" => Some(AggKind::Min),
            "max" => Some(AggKind::Max),
            "avg" => Some(AggKind::Avg),
            "group_concat" => Some(AggKind::GroupConcat),
            "bit_and" => Some(AggKind::BitAnd),
            "bit_or" => Some(AggKind::BitOr),
            "bit_xor" => Some(AggKind::BitXor),
            "std" | "stddev" | "stddev_pop" => Some(AggKind::StdPop),
            "stddev_samp" => Some(AggKind::StdSamp),
            "variance" | "var_pop" => Some(AggKind::VarPop),
            "var_samp" => Some(AggKind::VarSamp),
            "json_arrayagg" => Some(AggKind::JsonArrayAgg),
            _ => None,
        };
        if let Some(kind) = agg {
            return self.bind_aggregate(f, kind, &name, clause);
        }
        // VALUES(col) in ON DUPLICATE KEY UPDATE.
        if name == "values" || name == "value" {
            if let Some(off) = self.values_offset {
                let (args, _, _) = self.fn_args(f, clause)?;
                if let [Expr::Col(p)] = args.as_slice() {
                    return Ok(Expr::Col(off + p));
                }
            }
        }
        if let Some(e) = self.bind_date_arith(&name, f, clause)? {
            return Ok(e);
        }
        if name == "mod" {
            // MOD(a, b) is `a % b`.
            let (mut args, _, _) = self.fn_args(f, clause)?;
            if args.len() != 2 {
                return Err(err(
                    code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                    "Incorrect parameter count in the call to native function 'mod'",
                ));
            }
            let (b, a) = (args.pop().unwrap(), args.pop().unwrap());
            let coll = self.agg_coll(&[&a, &b]);
            return Ok(Expr::Bin(BinOp::Mod, Box::new(a), Box::new(b), coll));
        }
        let (args, _, _) = self.fn_args(f, clause)?;
        let nargs = args.len();
        if let Some(e) = self.fold_call(&name, &args)? {
            return Ok(e);
        }
        let Some((func, min, max)) = functions::lookup(&name) else {
            // MariaDB names the current database, if any.
            let written = parts.last().cloned().unwrap_or_default();
            let cat = self.env.catalog();
            if let Some(r) =
                crate::routines::bind_function(&cat, self.env.current_db(), &written, nargs)?
            {
                return Ok(Expr::Routine(r, args));
            }
            let qualified = match self.env.current_db() {
                Some(db) => format!("{db}.{written}"),
                None => written,
            };
            return Err(err(
                code::ER_FUNCTION_NOT_DEFINED,
                format!("FUNCTION {qualified} does not exist"),
            ));
        };
        if nargs < min || nargs > max {
            return Err(err(
                code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ));
        }
        // STR_TO_DATE's type follows its format, when that is a constant.
        let func = match (func, args.get(1)) {
            (Func::Cal(dates::CalFn::StrToDate(_)), Some(Expr::Lit(f))) if !f.is_null() => {
                Func::Cal(dates::CalFn::StrToDate(dates::parts_of_format(
                    &expr::to_string(f),
                )))
            }
            // JSON_OBJECT, JSON_ARRAY, JSON_SET, ... embed the results of JSON functions as
            // JSON.
            (Func::Json(j), _) if j.with_json_args(0).is_some() => {
                let mut mask = 0u64;
                for (i, a) in args.iter().enumerate().take(64) {
                    if matches!(a, Expr::Func(Func::Json(g), _) if g.gives_json()) {
                        mask |= 1 << i;
                    }
                }
                Func::Json(j.with_json_args(mask).unwrap_or(j))
            }
            (f, _) => f,
        };
        let args = self.zerofill_args(func, args);
        self.fixed_bin_call(func, args)
    }

    /// `date ± INTERVAL amount unit` as a call of [`Func::AddInterval`].
    pub(super) fn bind_add_interval(
        &mut self,
        date: &sq::Expr,
        iv: &sq::Interval,
        subtract: bool,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        let unit = interval_unit(iv)?;
        let d = self.bind_expr(date, clause)?;
        let n = self.bind_expr(&iv.value, clause)?;
        Ok(self.add_interval_call(unit, subtract, d, n))
    }

    pub(super) fn add_interval_call(
        &self,
        unit: dates::Unit,
        subtract: bool,
        d: Expr,
        n: Expr,
    ) -> Expr {
        let six = !matches!(d, Expr::Lit(_)) && self.type_of(&d).0.is_string();
        let op = dates::AddOp {
            unit,
            subtract,
            six,
        };
        Expr::Func(Func::AddInterval(op), vec![d, n])
    }

    /// The date functions whose arguments are not plain expressions: DATE_ADD/DATE_SUB
    /// (an INTERVAL), ADDDATE/SUBDATE (an INTERVAL or a number of days),
    /// TIMESTAMPADD/TIMESTAMPDIFF (a unit name first). None for any other function.
    pub(super) fn bind_date_arith(
        &mut self,
        name: &str,
        f: &sq::Function,
        clause: Clause,
    ) -> Result<Option<Expr>, SqlError> {
        if !matches!(
            name,
            "date_add" | "date_sub" | "adddate" | "subdate" | "timestampadd" | "timestampdiff"
        ) {
            return Ok(None);
        }
        let mut raw: Vec<&sq::Expr> = Vec::new();
        if let sq::FunctionArguments::List(l) = &f.args {
            for a in &l.args {
                match a {
                    sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(e)) => raw.push(e),
                    _ => return Err(crate::parser::syntax_error(&f.to_string(), 0)),
                }
            }
        }
        // Part of MariaDB's grammar: a wrong argument count is a syntax error.
        let want = if name.starts_with("timestamp") { 3 } else { 2 };
        if raw.len() != want {
            return Err(crate::parser::syntax_error(&f.to_string(), 0));
        }
        let subtract = name.contains("sub");
        Ok(Some(match name {
            "timestampadd" | "timestampdiff" => {
                let unit = match raw[0] {
                    sq::Expr::Identifier(id) if id.quote_style.is_none() => {
                        dates::Unit::single(&id.value)
                    }
                    _ => None,
                }
                .ok_or_else(|| crate::parser::syntax_error(&raw[0].to_string(), 0))?;
                let a = self.bind_expr(raw[1], clause)?;
                let b = self.bind_expr(raw[2], clause)?;
                if name == "timestampadd" {
                    self.add_interval_call(unit, false, b, a)
                } else {
                    Expr::Func(Func::TimestampDiff(unit), vec![a, b])
                }
            }
            _ => match raw[1] {
                sq::Expr::Interval(iv) => self.bind_add_interval(raw[0], iv, subtract, clause)?,
                // ADDDATE(d, n) / SUBDATE(d, n): n days.
                days if name.ends_with("date") => {
                    let d = self.bind_expr(raw[0], clause)?;
                    let n = self.bind_expr(days, clause)?;
                    self.add_interval_call(dates::Unit::Day, subtract, d, n)
                }
                other => return Err(crate::parser::syntax_error(&other.to_string(), 0)),
            },
        }))
    }
}

pub fn parse_number(n: &str) -> Value {
    if n.contains(['e', 'E']) {
        return Value::Double(n.parse().unwrap_or(0.0));
    }
    if n.contains('.') {
        return match n.parse::<Decimal>() {
            Ok(d) => Value::Decimal(d),
            Err(_) => Value::Double(n.parse().unwrap_or(0.0)),
        };
    }
    if let Ok(i) = n.parse::<i64>() {
        return Value::Int(i);
    }
    if let Ok(u) = n.parse::<u64>() {
        return Value::UInt(u);
    }
    match n.parse::<Decimal>() {
        Ok(d) => Value::Decimal(d),
        Err(_) => Value::Double(n.parse().unwrap_or(0.0)),
    }
}

/// The type of `CAST(what AS t)`.
pub(super) fn cast_type(t: &sq::DataType, what: &sq::Expr) -> Result<CastType, SqlError> {
    let fsp_of = |p: Option<u64>| fsp_of(p, what);
    use sq::DataType as D;
    Ok(match t {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => CastType::Signed,
        D::Unsigned | D::UnsignedInteger | D::IntUnsigned(_) | D::BigIntUnsigned(_) => {
            CastType::Unsigned
        }
        D::Char(len) | D::Varchar(len) | D::Nvarchar(len) | D::Character(len) => {
            CastType::Char(match len {
                Some(sq::CharacterLength::IntegerLength { length, .. }) => {
                    Some((*length).min(u32::MAX as u64) as u32)
                }
                _ => None,
            })
        }
        D::Text => CastType::Char(None),
        D::Binary(_) | D::Varbinary(_) | D::Blob(_) => CastType::Binary,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => CastType::Double,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = exact_info(info, 10, 0);
            decimal_limits(p, s, &cast_name(what))?;
            if s > p {
                return Err(crate::sql_err(
                    1427,
                    format!(
                        "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{}')",
                        cast_name(what)
                    ),
                ));
            }
            CastType::Decimal(p.max(1), s)
        }
        D::Date => CastType::Date,
        D::Datetime(p) | D::Timestamp(p, _) => CastType::DateTime(fsp_of(*p)?),
        D::Time(p, _) => CastType::Time(fsp_of(*p)?),
        D::Uuid => CastType::FixedBin(onelog_types::FixedBin::Uuid),
        D::Custom(n, args) if args.is_empty() && n.to_string().eq_ignore_ascii_case("inet6") => {
            CastType::FixedBin(onelog_types::FixedBin::Inet6)
        }
        other => return Err(unsupported(&format!("CAST AS {other}"))),
    })
}

/// A fractional-seconds precision, 0-6 (MariaDB: error 1426 above 6, naming the value).
pub(super) fn fsp_of(p: Option<u64>, what: &sq::Expr) -> Result<u8, SqlError> {
    match p {
        None => Ok(0),
        Some(p) if p <= 6 => Ok(p as u8),
        Some(_) => Err(err(
            code::ER_TOO_BIG_PRECISION,
            format!(
                "Too big precision specified for '{}'. Maximum is 6",
                cast_name(what)
            ),
        )),
    }
}

/// How MariaDB names the operand of a CAST in its errors: a string without quotes.
fn cast_name(what: &sq::Expr) -> String {
    match what {
        sq::Expr::Value(v) => match &v.value {
            sq::Value::SingleQuotedString(t) | sq::Value::DoubleQuotedString(t) => t.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// DECIMAL(p, s) limits: 1426 above 65 digits, 1425 above 38 fractional digits.
pub(super) fn decimal_limits(p: u8, s: u8, name: &str) -> Result<(), SqlError> {
    if p > Decimal::MAX_PRECISION {
        return Err(err(
            code::ER_TOO_BIG_PRECISION,
            format!(
                "Too big precision specified for '{name}'. Maximum is {}",
                Decimal::MAX_PRECISION
            ),
        ));
    }
    if s > Decimal::MAX_SCALE {
        return Err(err(
            1425,
            format!(
                "Too big scale specified for '{name}'. Maximum is {}",
                Decimal::MAX_SCALE
            ),
        ));
    }
    Ok(())
}

pub(super) fn exact_info(info: &sq::ExactNumberInfo, dp: u8, ds: u8) -> (u8, u8) {
    match info {
        sq::ExactNumberInfo::None => (dp, ds),
        sq::ExactNumberInfo::Precision(p) => ((*p).min(255) as u8, 0),
        sq::ExactNumberInfo::PrecisionAndScale(p, s) => {
            ((*p).min(255) as u8, (*s).clamp(0, 255) as u8)
        }
    }
}

// ---------------------------------------------------------------- DDL

pub(super) fn char_len(l: &Option<sq::CharacterLength>, default: u32) -> u32 {
    match l {
        Some(sq::CharacterLength::IntegerLength { length, .. }) => *length as u32,
        Some(sq::CharacterLength::Max) => 65535,
        None => default,
    }
}

/// Moves a `BINARY` cast onto the leftmost operand of `e` (see the binder's `E::Cast`
/// arm); false when `e` has no operand to descend into.
pub(super) fn binary_onto_leftmost(e: &mut sq::Expr) -> bool {
    use sq::Expr as E;
    let inner = match e {
        E::BinaryOp { left, .. } => left,
        E::Like { expr, .. }
        | E::ILike { expr, .. }
        | E::RLike { expr, .. }
        | E::InList { expr, .. }
        | E::InSubquery { expr, .. }
        | E::Between { expr, .. }
        | E::IsNull(expr)
        | E::IsNotNull(expr) => expr,
        _ => return false,
    };
    if !binary_onto_leftmost(inner) {
        let leaf = (**inner).clone();
        **inner = E::Cast {
            kind: sq::CastKind::Cast,
            expr: Box::new(leaf),
            data_type: sq::DataType::Binary(None),
            format: None,
        };
    }
    true
}

/// A single unit (of INTERVAL or EXTRACT).
pub(super) fn single_unit(f: &sq::DateTimeField) -> Option<dates::Unit> {
    use dates::Unit as U;
    use sq::DateTimeField as F;
    Some(match f {
        F::Microsecond => U::Microsecond,
        F::Second => U::Second,
        F::Minute => U::Minute,
        F::Hour => U::Hour,
        F::Day => U::Day,
        F::Week(None) => U::Week,
        F::Month => U::Month,
        F::Quarter => U::Quarter,
        F::Year => U::Year,
        _ => return None,
    })
}

/// The unit of an INTERVAL as sqlparser gives it: one field, or a range `a TO b` for
/// MariaDB's composite units (which the parser rewrites into that form; see parser.rs,
/// `rewrite_interval_units`).
pub(super) fn interval_unit(iv: &sq::Interval) -> Result<dates::Unit, SqlError> {
    use dates::Unit as U;
    use sq::DateTimeField as F;
    let unit = match (&iv.leading_field, &iv.last_field) {
        _ if iv.leading_precision.is_some() || iv.fractional_seconds_precision.is_some() => None,
        (Some(f), None) => single_unit(f),
        (Some(a), Some(b)) => match (a, b) {
            // SECOND_MICROSECOND (sqlparser reads `SECOND TO ...` as something else).
            (F::Millisecond, F::Microsecond) => Some(U::SecondMicrosecond),
            (F::Minute, F::Microsecond) => Some(U::MinuteMicrosecond),
            (F::Minute, F::Second) => Some(U::MinuteSecond),
            (F::Hour, F::Microsecond) => Some(U::HourMicrosecond),
            (F::Hour, F::Second) => Some(U::HourSecond),
            (F::Hour, F::Minute) => Some(U::HourMinute),
            (F::Day, F::Microsecond) => Some(U::DayMicrosecond),
            (F::Day, F::Second) => Some(U::DaySecond),
            (F::Day, F::Minute) => Some(U::DayMinute),
            (F::Day, F::Hour) => Some(U::DayHour),
            (F::Year, F::Month) => Some(U::YearMonth),
            _ => None,
        },
        _ => None,
    };
    unit.ok_or_else(|| crate::parser::syntax_error(&iv.to_string(), 0))
}

/// The symbol MariaDB names a comparison by in its errors (None: not a comparison).
pub(super) fn cmp_symbol(op: BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Eq => "=",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::NullSafeEq => "<=>",
        _ => return None,
    })
}
