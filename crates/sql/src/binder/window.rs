//! Window functions: `f(...) OVER (PARTITION BY ... ORDER BY ... frame)`, `OVER w` and
//! `OVER (w ORDER BY ...)` with `WINDOW w AS (...)`. Each call becomes a [`WinCall`] of its
//! SELECT, computed by `executor/window.rs` over the rows left after WHERE, GROUP BY and
//! HAVING; the expression that names it is an aggregate slot after the query's own
//! aggregates (`Expr::Agg(aggs.len() + i)`), so HAVING-less evaluation, ORDER BY, DISTINCT
//! and LIMIT read it like an aggregate's value.
//!
//! What MariaDB 10.11 allows and refuses is followed: window functions only in the select
//! list and ORDER BY (4015), not in aggregates' arguments (4074), ranking functions without
//! a frame (4017) and with an ORDER BY where they need one (4018), frame bounds checked as
//! MariaDB checks them (4014, 4019-4021), named windows refined only by an ORDER BY or a
//! frame (4009-4013), LAG/LEAD without a default (MariaDB's grammar has none).

use super::*;

/// Window calls are `Expr::Agg(WIN_SLOT + i)` while their SELECT binds (so that their
/// types can be asked for before the query's aggregates are all known); the end of the
/// binding renumbers them after the aggregates.
pub(super) const WIN_SLOT: usize = 1 << 40;

/// A window function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// NTILE(n): `args[0]` is n, evaluated per row.
    Ntile,
    /// LAG (positive) or LEAD (negative): the value of the row this many rows before.
    Shift(i64),
    FirstValue,
    LastValue,
    /// NTH_VALUE(x, n): `args[1]` is n, evaluated per row.
    NthValue,
    Agg(AggKind),
}

/// One end of a window frame.
#[derive(Clone, Debug)]
pub enum FrameBound {
    UnboundedPreceding,
    /// `n PRECEDING`: a row count (ROWS) or a distance in the ORDER BY key (RANGE).
    Preceding(Value),
    CurrentRow,
    Following(Value),
    UnboundedFollowing,
}

#[derive(Clone, Debug)]
pub struct Frame {
    /// ROWS (else RANGE).
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

#[derive(Clone, Debug)]
pub struct WinCall {
    pub func: WinFunc,
    pub args: Vec<Expr>,
    pub partition: Vec<Expr>,
    pub part_colls: Vec<Collation>,
    /// (expression, descending)
    pub order: Vec<(Expr, bool)>,
    pub order_colls: Vec<Collation>,
    pub frame: Frame,
    /// Result type, nullability and collation.
    pub ty: ColumnType,
    pub nullable: bool,
    pub coll: (Collation, Derivation),
    /// For aggregates: the aggregate as GROUP BY computes it.
    pub agg: Option<AggCall>,
}

impl WinCall {
    /// Every expression the call evaluates.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.args
            .iter()
            .chain(&self.partition)
            .chain(self.order.iter().map(|(e, _)| e))
            .chain(self.agg.iter().map(|a| &a.arg))
    }

    pub fn exprs_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.args
            .iter_mut()
            .chain(&mut self.partition)
            .chain(self.order.iter_mut().map(|(e, _)| e))
            .chain(self.agg.iter_mut().map(|a| &mut a.arg))
    }
}

pub(super) fn wrong_placement() -> SqlError {
    err(
        crate::codes::ER_WRONG_PLACEMENT_OF_WINDOW_FUNCTION,
        "Window function is allowed only in SELECT list and ORDER BY clause",
    )
}

/// MariaDB's check of a frame's two bounds (4014).
fn check_bounds(start: &sq::WindowFrameBound, end: &sq::WindowFrameBound) -> Result<(), SqlError> {
    use sq::WindowFrameBound as B;
    let bad = matches!(start, B::Following(None))
        || matches!(end, B::Preceding(None))
        || matches!((start, end), (B::CurrentRow, B::Preceding(_)))
        || matches!((start, end), (B::Following(_), B::CurrentRow));
    if bad {
        return Err(err(
            crate::codes::ER_BAD_COMBINATION_OF_WINDOW_FRAME_BOUND_SPECS,
            "Unacceptable combination of window frame bound specifications",
        ));
    }
    Ok(())
}

impl<'a> Binder<'a> {
    /// Records the `WINDOW name AS (...)` definitions of a SELECT (4010 for a name given
    /// twice).
    pub(super) fn set_named_windows(
        &mut self,
        defs: &[sq::NamedWindowDefinition],
    ) -> Result<(), SqlError> {
        self.named_windows.clear();
        for d in defs {
            let name = d.0.value.clone();
            if self.named_windows.iter().any(|(n, _)| ident_eq(n, &name)) {
                return Err(err(
                    crate::codes::ER_DUP_WINDOW_NAME,
                    format!("Multiple window specifications with the same name '{name}'"),
                ));
            }
            let spec = match &d.1 {
                sq::NamedWindowExpr::NamedWindow(r) => sq::WindowSpec {
                    window_name: Some(r.clone()),
                    partition_by: vec![],
                    order_by: vec![],
                    window_frame: None,
                },
                sq::NamedWindowExpr::WindowSpec(s) => s.clone(),
            };
            // It may refer only to a window defined before it.
            self.resolve_spec(&spec)?;
            self.named_windows.push((name, spec));
        }
        Ok(())
    }

    /// A window specification with the named window it refers to merged in.
    fn resolve_spec(&self, spec: &sq::WindowSpec) -> Result<sq::WindowSpec, SqlError> {
        let Some(name) = &spec.window_name else {
            return Ok(spec.clone());
        };
        let name = &name.value;
        let base = self
            .named_windows
            .iter()
            .find(|(n, _)| ident_eq(n, name))
            .map(|(_, s)| s)
            .ok_or_else(|| {
                err(
                    crate::codes::ER_WRONG_WINDOW_SPEC_NAME,
                    format!("Window specification with name '{name}' is not defined"),
                )
            })?;
        let base = self.resolve_spec(base)?;
        if !spec.partition_by.is_empty() {
            return Err(err(
                crate::codes::ER_PARTITION_LIST_IN_REFERENCING_WINDOW_SPEC,
                format!("Window specification referencing another one '{name}' cannot contain partition list"),
            ));
        }
        if !spec.order_by.is_empty() && !base.order_by.is_empty() {
            return Err(err(
                crate::codes::ER_ORDER_LIST_IN_REFERENCING_WINDOW_SPEC,
                format!("Referenced window specification '{name}' already contains order list"),
            ));
        }
        if base.window_frame.is_some() {
            return Err(err(
                crate::codes::ER_WINDOW_FRAME_IN_REFERENCED_WINDOW_SPEC,
                format!("Referenced window specification '{name}' cannot contain window frame"),
            ));
        }
        Ok(sq::WindowSpec {
            window_name: None,
            partition_by: base.partition_by,
            order_by: if spec.order_by.is_empty() {
                base.order_by
            } else {
                spec.order_by.clone()
            },
            window_frame: spec.window_frame.clone(),
        })
    }

    /// `f(...) OVER ...`: returns the slot naming the call.
    pub(super) fn bind_window(
        &mut self,
        f: &sq::Function,
        over: &sq::WindowType,
        name: &str,
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        if !self.win_ok || !matches!(clause, Clause::Field | Clause::Order) {
            return Err(wrong_placement());
        }
        if !self.allow_agg || self.win_in_agg {
            return Err(err(
                crate::codes::ER_SUM_FUNC_WITH_WINDOW_FUNC_AS_ARG,
                "Window functions can not be used as arguments to group functions.",
            ));
        }
        if self.in_window {
            return Err(wrong_placement());
        }
        // MariaDB checks a function's need for an ORDER BY, or refusal of a frame, on the
        // specification it names, before merging in the window that one refers to.
        let written = match over {
            sq::WindowType::NamedWindow(n) => self
                .named_windows
                .iter()
                .find(|(w, _)| ident_eq(w, &n.value))
                .map(|(_, s)| s.clone())
                .ok_or_else(|| {
                    err(
                        crate::codes::ER_WRONG_WINDOW_SPEC_NAME,
                        format!(
                            "Window specification with name '{}' is not defined",
                            n.value
                        ),
                    )
                })?,
            sq::WindowType::WindowSpec(s) => s.clone(),
        };
        let spec = self.resolve_spec(&written)?;
        self.in_window = true;
        let r = self.bind_window_call(f, &written, &spec, name, clause);
        self.in_window = false;
        let call = r?;
        self.windows.push(call);
        Ok(Expr::Agg(WIN_SLOT + self.windows.len() - 1))
    }

    fn bind_window_call(
        &mut self,
        f: &sq::Function,
        written: &sq::WindowSpec,
        spec: &sq::WindowSpec,
        name: &str,
        clause: Clause,
    ) -> Result<WinCall, SqlError> {
        let agg_kind = match name {
            "count" => Some(AggKind::Count),
            "sum" => Some(AggKind::Sum),
            "min" => Some(AggKind::Min),
            "max" => Some(AggKind::Max),
            "avg" => Some(AggKind::Avg),
            "bit_and" => Some(AggKind::BitAnd),
            "bit_or" => Some(AggKind::BitOr),
            "bit_xor" => Some(AggKind::BitXor),
            "std" | "stddev" | "stddev_pop" => Some(AggKind::StdPop),
            "stddev_samp" => Some(AggKind::StdSamp),
            "variance" | "var_pop" => Some(AggKind::VarPop),
            "var_samp" => Some(AggKind::VarSamp),
            "group_concat" | "json_arrayagg" => {
                return Err(unsupported(&format!(
                    "{}() aggregate as window function",
                    name.to_uppercase()
                )))
            }
            _ => None,
        };
        self.win_in_agg = true;
        let r = self.fn_args(f, clause);
        self.win_in_agg = false;
        let (args, star, distinct) = r?;
        let nargs = args.len();
        let paramcount = || {
            err(
                code::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            )
        };
        let syntax = || crate::parser::syntax_error(&f.to_string(), 0);
        if distinct {
            return Err(unsupported(&format!(
                "{}(DISTINCT) aggregate as window function",
                name.to_uppercase()
            )));
        }
        let func = match (name, agg_kind) {
            (_, Some(AggKind::Count)) if star => WinFunc::Agg(AggKind::CountStar),
            (_, Some(k)) if nargs == 1 && !star => WinFunc::Agg(k),
            (_, Some(_)) => return Err(syntax()),
            ("row_number", _) => WinFunc::RowNumber,
            ("rank", _) => WinFunc::Rank,
            ("dense_rank", _) => WinFunc::DenseRank,
            ("percent_rank", _) => WinFunc::PercentRank,
            ("cume_dist", _) => WinFunc::CumeDist,
            ("ntile", _) => WinFunc::Ntile,
            ("lag" | "lead", _) => {
                if !(1..=2).contains(&nargs) {
                    return Err(syntax());
                }
                let k = match args.get(1) {
                    None => 1,
                    Some(e) if e.is_const() => expr::to_i64(&expr::eval(e, &expr::Ctx::new(&[]))?),
                    Some(_) => return Err(unsupported("a LAG/LEAD offset that is not a constant")),
                };
                WinFunc::Shift(if name == "lag" { k } else { k.saturating_neg() })
            }
            ("first_value", _) => WinFunc::FirstValue,
            ("last_value", _) => WinFunc::LastValue,
            ("nth_value", _) => WinFunc::NthValue,
            _ => {
                return Err(err(
                    code::ER_FUNCTION_NOT_DEFINED,
                    format!("FUNCTION {name} does not exist"),
                ))
            }
        };
        let want = match func {
            WinFunc::RowNumber
            | WinFunc::Rank
            | WinFunc::DenseRank
            | WinFunc::PercentRank
            | WinFunc::CumeDist => 0,
            WinFunc::NthValue => 2,
            WinFunc::Shift(_) | WinFunc::Agg(_) => nargs,
            _ => 1,
        };
        if nargs != want || (star && !matches!(func, WinFunc::Agg(AggKind::CountStar))) {
            return Err(if want == 0 { syntax() } else { paramcount() });
        }
        let frame_prohibited = matches!(
            func,
            WinFunc::RowNumber
                | WinFunc::Rank
                | WinFunc::DenseRank
                | WinFunc::PercentRank
                | WinFunc::CumeDist
                | WinFunc::Ntile
        );
        if written.window_frame.is_some() && frame_prohibited {
            return Err(err(
                crate::codes::ER_NOT_ALLOWED_WINDOW_FRAME,
                format!("Window frame is not allowed with '{name}'"),
            ));
        }
        let order_mandatory = matches!(
            func,
            WinFunc::Rank
                | WinFunc::DenseRank
                | WinFunc::PercentRank
                | WinFunc::CumeDist
                | WinFunc::Shift(_)
        );
        if written.order_by.is_empty() && order_mandatory {
            return Err(err(
                crate::codes::ER_NO_ORDER_LIST_IN_WINDOW_SPEC,
                format!("No order list in window specification for '{name}'"),
            ));
        }
        if let (WinFunc::Ntile, Some(Expr::Lit(v))) = (func, args.first()) {
            if v.is_null() || expr::to_i64(v) <= 0 {
                return Err(ntile_error());
            }
        }
        let mut partition = Vec::new();
        for e in &spec.partition_by {
            partition.push(self.bind_expr(e, clause)?);
        }
        let mut order = Vec::new();
        for o in &spec.order_by {
            let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
            order.push((self.bind_expr(&o.expr, clause)?, desc));
        }
        let part_colls = partition.iter().map(|e| self.coll_of(e).0).collect();
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        let frame = self.bind_frame(spec.window_frame.as_ref(), &order)?;
        let numeric = (Collation::DEFAULT, Derivation::Numeric);
        let bigint_nn = (bigint(), false);
        let mut agg = None;
        let ((ty, nullable), coll) = match func {
            WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile => {
                (bigint_nn, numeric)
            }
            WinFunc::PercentRank | WinFunc::CumeDist => ((ColumnType::Double, true), numeric),
            WinFunc::Shift(_) | WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                ((self.type_of(&args[0]).0, true), self.coll_of(&args[0]))
            }
            WinFunc::Agg(kind) => {
                let arg = args.first().cloned().unwrap_or(Expr::Lit(Value::Int(1)));
                let a = AggCall {
                    kind,
                    arg_type: self.type_of(&arg).0,
                    arg,
                    distinct: false,
                    order: Vec::new(),
                    separator: DEFAULT_SEPARATOR.to_vec(),
                };
                let t = self.agg_call_type(&a);
                let c = self.agg_call_coll(&a);
                agg = Some(a);
                (t, c)
            }
        };
        Ok(WinCall {
            func,
            args: if agg.is_some() { Vec::new() } else { args },
            partition,
            part_colls,
            order,
            order_colls,
            frame,
            ty,
            nullable,
            coll,
            agg,
        })
    }

    /// The frame as written, or MariaDB's default: RANGE BETWEEN UNBOUNDED PRECEDING AND
    /// CURRENT ROW with an ORDER BY, the whole partition without one.
    fn bind_frame(
        &mut self,
        frame: Option<&sq::WindowFrame>,
        order: &[(Expr, bool)],
    ) -> Result<Frame, SqlError> {
        let Some(fr) = frame else {
            return Ok(Frame {
                rows: order.is_empty(),
                start: FrameBound::UnboundedPreceding,
                end: if order.is_empty() {
                    FrameBound::UnboundedFollowing
                } else {
                    FrameBound::CurrentRow
                },
            });
        };
        let rows = match fr.units {
            sq::WindowFrameUnits::Rows => true,
            sq::WindowFrameUnits::Range => false,
            // Not in MariaDB's grammar.
            sq::WindowFrameUnits::Groups => {
                return Err(crate::parser::syntax_error(&fr.units.to_string(), 0))
            }
        };
        if fr.end_bound.is_none() && matches!(fr.start_bound, sq::WindowFrameBound::Following(_)) {
            // `ROWS n FOLLOWING` is not in MariaDB's grammar.
            return Err(crate::parser::syntax_error(&fr.start_bound.to_string(), 0));
        }
        let end = fr
            .end_bound
            .clone()
            .unwrap_or(sq::WindowFrameBound::CurrentRow);
        check_bounds(&fr.start_bound, &end)?;
        let offsets = [&fr.start_bound, &end].iter().any(|b| {
            matches!(
                b,
                sq::WindowFrameBound::Preceding(Some(_)) | sq::WindowFrameBound::Following(Some(_))
            )
        });
        if !rows && offsets {
            if order.len() != 1 {
                return Err(err(
                    crate::codes::ER_RANGE_FRAME_NEEDS_SIMPLE_ORDERBY,
                    "RANGE-type frame requires ORDER BY clause with single sort key",
                ));
            }
            if !is_numeric_ty(&self.type_of(&order[0].0).0) {
                return Err(err(
                    crate::codes::ER_WRONG_TYPE_FOR_RANGE_FRAME,
                    "Numeric datatype is required for RANGE-type frame",
                ));
            }
        }
        let start = self.bind_bound(&fr.start_bound, rows)?;
        let end = self.bind_bound(&end, rows)?;
        Ok(Frame { rows, start, end })
    }

    fn bind_bound(&mut self, b: &sq::WindowFrameBound, rows: bool) -> Result<FrameBound, SqlError> {
        use sq::WindowFrameBound as B;
        let offset = |s: &mut Self, e: &sq::Expr| -> Result<Value, SqlError> {
            let x = s.bind_expr(e, Clause::Field)?;
            let (ty, _) = s.type_of(&x);
            let v = if x.is_const() {
                expr::eval(&x, &expr::Ctx::new(&[]))?
            } else {
                Value::Null
            };
            if rows && (!matches!(ty, ColumnType::Int { .. }) || v.is_null()) {
                return Err(err(
                    crate::codes::ER_WRONG_TYPE_FOR_ROWS_FRAME,
                    "Integer is required for ROWS-type frame",
                ));
            }
            if !rows && (!is_numeric_ty(&ty) || v.is_null()) {
                return Err(err(
                    crate::codes::ER_WRONG_TYPE_FOR_RANGE_FRAME,
                    "Numeric datatype is required for RANGE-type frame",
                ));
            }
            Ok(v)
        };
        Ok(match b {
            B::CurrentRow => FrameBound::CurrentRow,
            B::Preceding(None) => FrameBound::UnboundedPreceding,
            B::Following(None) => FrameBound::UnboundedFollowing,
            B::Preceding(Some(e)) => FrameBound::Preceding(offset(self, e)?),
            B::Following(Some(e)) => FrameBound::Following(offset(self, e)?),
        })
    }

    /// PERCENT_RANK and CUME_DIST are DOUBLEs shown with 10 decimals, as in MariaDB.
    pub(super) fn window_column(&self, e: &Expr, rc: &mut ResultColumn) {
        if let Expr::Agg(i) = e {
            if let Some(w) = i.checked_sub(WIN_SLOT).and_then(|i| self.windows.get(i)) {
                if matches!(w.func, WinFunc::PercentRank | WinFunc::CumeDist) {
                    rc.decimals = 10;
                }
            }
        }
    }

    /// HAVING does not see select-list aliases; one that names a window function is
    /// refused as MariaDB refuses it (4015) rather than as an unknown column.
    pub(super) fn window_alias_error(&self, e: SqlError) -> SqlError {
        let names_window = self
            .aliases
            .iter()
            .any(|(a, x)| has_window(x) && e.message.starts_with(&format!("Unknown column '{a}'")));
        if e.code == code::ER_BAD_FIELD_ERROR && names_window {
            wrong_placement()
        } else {
            e
        }
    }

    /// Renumbers the window calls bound in this SELECT after its aggregates, in every
    /// expression that can hold one (select list, ORDER BY).
    pub(super) fn place_windows(
        &self,
        naggs: usize,
        items: &mut [Expr],
        order: &mut [(Expr, bool)],
    ) {
        let mut fix = |e: &mut Expr| {
            e.walk_mut(&mut |x| {
                if let Expr::Agg(i) = x {
                    if *i >= WIN_SLOT {
                        *i = *i - WIN_SLOT + naggs;
                    }
                }
            })
        };
        items.iter_mut().for_each(&mut fix);
        order.iter_mut().for_each(|(e, _)| fix(e));
    }
}

/// Whether `e` holds a window call of the SELECT being bound.
pub(super) fn has_window(e: &Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| found |= matches!(x, Expr::Agg(i) if *i >= WIN_SLOT));
    found
}

pub fn ntile_error() -> SqlError {
    err(
        crate::codes::ER_INVALID_NTILE_ARGUMENT,
        "Argument of NTILE must be greater than 0",
    )
}
