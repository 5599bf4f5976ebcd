//! Binding queries: FROM items (tables, derived tables, recursive CTEs), SELECT with its
//! clauses, ORDER BY, LIMIT, and column lookup through the scopes.

use super::*;

impl<'a> Binder<'a> {
    /// Binds a recursive CTE where it is used: `anchor UNION [ALL] step`, the step seeing
    /// the CTE's name as the previous iteration's rows. Returns it with its columns.
    #[allow(clippy::type_complexity)]
    pub(super) fn bind_recursive(
        &self,
        cte: &Cte,
    ) -> Result<(Recursive, Vec<(String, ColumnType, bool, u16)>), SqlError> {
        let q = &cte.query;
        let sq::SetExpr::SetOperation {
            op: sq::SetOperator::Union,
            set_quantifier,
            left,
            right,
        } = q.body.as_ref()
        else {
            return Err(unsupported(
                "a recursive WITH that is not anchor UNION step",
            ));
        };
        if q.order_by.is_some() || q.limit_clause.is_some() || mentions_table(left, &cte.name) {
            return Err(unsupported("this form of recursive WITH"));
        }
        let sq::SetExpr::Select(step_sel) = right.as_ref() else {
            return Err(unsupported("a recursive WITH with several recursive parts"));
        };
        let distinct = !matches!(set_quantifier, sq::SetQuantifier::All);
        let mut b = self.sibling();
        b.ctes.truncate(cte.visible);
        let anchor = b.bind_set_query(left, &[], None, 0)?;
        if !cte.columns.is_empty() && cte.columns.len() != anchor.columns.len() {
            return Err(err(
                crate::codes::ER_WITH_COL_WRONG_LIST,
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        let cols: Vec<(String, ColumnType, bool, u16)> = anchor
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = if c.null_type {
                    setop::NULL_STORED
                } else {
                    c.ty
                };
                let name = cte
                    .columns
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| c.name.clone());
                (name, ty, true, 0u16)
            })
            .collect();
        let mut b = self.sibling();
        b.ctes.truncate(cte.visible);
        b.ctes.push(Arc::new(Cte {
            name: cte.name.clone(),
            query: q.clone(),
            columns: Vec::new(),
            visible: cte.visible,
            recursive: false,
            working: Some(cols.clone()),
        }));
        let step = b.bind_select(step_sel, &[])?;
        if step.columns.len() != cols.len() {
            return Err(err(
                crate::codes::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
                "The used SELECT statements have a different number of columns",
            ));
        }
        let types = cols.iter().map(|c| c.1).collect();
        Ok((
            Recursive {
                anchor,
                step,
                distinct,
                types,
            },
            cols,
        ))
    }

    /// Adds a materialised query (a derived table or a CTE) as a source, its columns
    /// renamed to `names` when given.
    pub(super) fn add_derived(
        &mut self,
        sources: &mut Vec<Source>,
        alias: String,
        sel: Select,
        names: &[String],
    ) -> Result<(), SqlError> {
        self.add_derived_in(sources, alias, String::new(), sel, names)
    }

    /// [`Self::add_derived`] for a source that belongs to database `db` (a view).
    pub(super) fn add_derived_in(
        &mut self,
        sources: &mut Vec<Source>,
        alias: String,
        db: String,
        sel: Select,
        names: &[String],
    ) -> Result<(), SqlError> {
        if !names.is_empty() && names.len() != sel.columns.len() {
            return Err(err(
                crate::codes::ER_WITH_COL_WRONG_LIST,
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        // A derived table is materialised: NULL-typed columns become BINARY(0).
        let cols: Vec<_> = sel
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let ty = if c.null_type {
                    setop::NULL_STORED
                } else {
                    c.ty
                };
                let name = names.get(i).cloned().unwrap_or_else(|| c.name.clone());
                // A ZEROFILL column stays one (its width is the column's length).
                (name, ty, c.nullable, c.flags & cf::ZEROFILL)
            })
            .collect();
        let n = cols.len();
        self.add_source(
            sources,
            alias,
            db,
            SourceKind::Derived(Box::new(sel)),
            cols,
            n,
            IndexHints::default(),
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn add_source(
        &mut self,
        sources: &mut Vec<Source>,
        alias: String,
        db: String,
        kind: SourceKind,
        cols: Vec<(String, ColumnType, bool, u16)>,
        width: usize,
        hints: IndexHints,
    ) -> Result<(), SqlError> {
        if sources.iter().any(|s| s.alias == alias && s.db == db) {
            return Err(err(
                code::ER_NONUNIQ_TABLE,
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
        let offset = self.types.len();
        let table_name = match &kind {
            SourceKind::Table(t) => t.name.clone(),
            _ => alias.clone(),
        };
        for (i, (name, _ty, nullable, flags)) in cols.iter().enumerate() {
            let (display_width, digits) = match &kind {
                SourceKind::Table(t) => t
                    .columns
                    .get(i)
                    .map_or((None, None), |c| (c.display_width, c.num.digits)),
                SourceKind::Derived(sel) => match sel.columns.get(i) {
                    Some(c) if c.flags & cf::ZEROFILL != 0 => {
                        let digits = matches!(c.ty, ColumnType::Float | ColumnType::Double)
                            && c.decimals < 31;
                        (
                            u16::try_from(c.length).ok(),
                            digits.then_some((c.length.min(255) as u8, c.decimals)),
                        )
                    }
                    _ => (None, None),
                },
                _ => (None, None),
            };
            self.scope.push(ScopeCol {
                display_width,
                digits,
                alias: alias.clone(),
                db: db.clone(),
                table: table_name.clone(),
                name: name.clone(),
                pos: offset + i,
                nullable: *nullable,
                flags: *flags,
                using_hidden: false,
            });
        }
        let ncols = cols.len();
        for (_, ty, nullable, _) in &cols {
            self.types.push((*ty, *nullable));
        }
        for _ in ncols..width {
            self.types.push((bigint(), false));
        }
        sources.push(Source {
            alias,
            db,
            kind,
            offset,
            width,
            ncols,
            join: JoinKind::Inner,
            group_end: 0,
            on: Vec::new(),
            post: Vec::new(),
            hints,
            lock: None,
            access: Access::default(),
            filters: Vec::new(),
            view: None,
        });
        Ok(())
    }

    /// Binds one FROM item: adds its sources; returns its join tree and `SELECT *` columns
    /// (None for DUAL).
    pub(super) fn bind_table_factor(
        &mut self,
        sources: &mut Vec<Source>,
        tf: &sq::TableFactor,
    ) -> Result<Option<joins::Item>, SqlError> {
        stack::check()?;
        match tf {
            sq::TableFactor::Table {
                name,
                alias,
                args,
                index_hints,
                ..
            } => {
                if args.is_some() {
                    return Err(unsupported("table functions"));
                }
                let parts = name_parts(name);
                if parts.len() == 1 && parts[0].eq_ignore_ascii_case("dual") && alias.is_none() {
                    // FROM DUAL: no table.
                    return Ok(None);
                }
                if parts.len() == 1 {
                    if let Some(cte) = self.ctes.iter().rev().find(|c| c.name == parts[0]) {
                        let cte = cte.clone();
                        let alias_name = alias
                            .as_ref()
                            .map_or_else(|| cte.name.clone(), |a| a.name.value.clone());
                        if let Some(cols) = &cte.working {
                            let n = cols.len();
                            self.add_source(
                                sources,
                                alias_name,
                                String::new(),
                                SourceKind::Working,
                                cols.clone(),
                                n,
                                IndexHints::default(),
                            )?;
                            return Ok(Some(joins::Item::leaf(sources)));
                        }
                        if cte.recursive {
                            let (r, cols) = self.bind_recursive(&cte)?;
                            let n = cols.len();
                            self.add_source(
                                sources,
                                alias_name,
                                String::new(),
                                SourceKind::Recursive(Box::new(r)),
                                cols,
                                n,
                                IndexHints::default(),
                            )?;
                            return Ok(Some(joins::Item::leaf(sources)));
                        }
                        let mut b = self.sibling();
                        b.ctes.truncate(cte.visible);
                        let sel = b.bind_query(&cte.query)?;
                        self.add_derived(sources, alias_name, sel, &cte.columns)?;
                        return Ok(Some(joins::Item::leaf(sources)));
                    }
                }
                let (db, tname) = self.table_name(name)?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| tname.clone());
                let mut hints = IndexHints::default();
                for h in index_hints {
                    let names: Vec<String> =
                        h.index_names.iter().map(|i| i.value.clone()).collect();
                    match h.hint_type {
                        sq::TableIndexHintType::Ignore => hints.ignore.extend(names),
                        sq::TableIndexHintType::Use | sq::TableIndexHintType::Force => {
                            hints.force |= h.hint_type == sq::TableIndexHintType::Force;
                            hints.only.get_or_insert_with(Vec::new).extend(names);
                        }
                    }
                }
                if db.eq_ignore_ascii_case("information_schema") {
                    let Some((cols, rows)) = self.env.info_schema(&tname.to_uppercase()) else {
                        return Err(err(
                            code::ER_UNKNOWN_TABLE,
                            format!("Unknown table '{tname}' in information_schema"),
                        ));
                    };
                    let n = cols.len();
                    let cols = cols.into_iter().map(|c| (c.name, c.ty, true, 0)).collect();
                    self.add_source(
                        sources,
                        alias_name,
                        "information_schema".into(),
                        SourceKind::Rows(Arc::new(rows)),
                        cols,
                        n,
                        hints,
                    )?;
                    return Ok(Some(joins::Item::leaf(sources)));
                }
                let cat = self.env.catalog();
                if !cat.has_database(&db) {
                    return Err(err(
                        code::ER_NO_SUCH_TABLE,
                        format!("Table '{db}.{tname}' doesn't exist"),
                    ));
                }
                if cat.table(&db, &tname).is_none() {
                    if let Some(v) = cat.object(onelog_engine::ObjectKind::View, &db, &tname) {
                        let def = Arc::new(crate::views::ViewDef::decode(v)?);
                        self.bind_view(sources, &db, &tname, alias_name, def)?;
                        return Ok(Some(joins::Item::leaf(sources)));
                    }
                }
                let t = self.resolve_table(&db, &tname)?;
                for n in hints.only.iter().flatten().chain(hints.ignore.iter()) {
                    if t.index_by_name(n).is_none() {
                        return Err(err(
                            code::ER_KEY_DOES_NOT_EXISTS,
                            format!("Key '{n}' doesn't exist in table '{}'", t.name),
                        ));
                    }
                }
                let cols = t
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), c.ty, c.nullable, col_flags(&t, i)))
                    .collect();
                let width = t.columns.len() + t.hidden_pk as usize;
                self.add_source(
                    sources,
                    alias_name,
                    db,
                    SourceKind::Table(t),
                    cols,
                    width,
                    hints,
                )?;
                Ok(Some(joins::Item::leaf(sources)))
            }
            sq::TableFactor::Derived {
                subquery, alias, ..
            } => {
                let Some(alias) = alias else {
                    return Err(err(1248, "Every derived table must have its own alias"));
                };
                let sel = self.sibling().bind_query(subquery)?;
                let names: Vec<String> =
                    alias.columns.iter().map(|c| c.name.value.clone()).collect();
                self.add_derived(sources, alias.name.value.clone(), sel, &names)?;
                Ok(Some(joins::Item::leaf(sources)))
            }
            sq::TableFactor::NestedJoin {
                table_with_joins, ..
            } => self.bind_from_item(sources, table_with_joins),
            other => Err(unsupported(&format!("{other}"))),
        }
    }

    // ---------------------------------------------------------------- queries

    pub fn bind_query(mut self, q: &sq::Query) -> Result<Select, SqlError> {
        stack::check()?;
        if self.nest >= MAX_SELECT_NESTING {
            return Err(err(
                crate::codes::ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT,
                "Too high level of nesting for select",
            ));
        }
        if let Some(with) = &q.with {
            let first = self.ctes.len();
            for c in &with.cte_tables {
                let name = c.alias.name.value.clone();
                if self.ctes[first..].iter().any(|x| x.name == name) {
                    return Err(err(
                        crate::codes::ER_DUP_QUERY_NAME,
                        format!("Duplicate query name `{name}` in WITH clause"),
                    ));
                }
                let visible = self.ctes.len();
                let recursive = with.recursive && mentions_table(&c.query.body, &name);
                self.ctes.push(Arc::new(Cte {
                    name,
                    query: (*c.query).clone(),
                    columns: c
                        .alias
                        .columns
                        .iter()
                        .map(|x| x.name.value.clone())
                        .collect(),
                    visible,
                    recursive,
                    working: None,
                }));
            }
        }
        let lock = match q.locks.first().map(|l| l.lock_type) {
            Some(sq::LockType::Update) => LockMode::Exclusive,
            Some(sq::LockType::Share) => LockMode::Shared,
            None => LockMode::None,
        };
        let (limit, offset) = self.bind_limit(q.limit_clause.as_ref())?;
        let order_by: Vec<sq::OrderByExpr> = match &q.order_by {
            Some(ob) => match &ob.kind {
                sq::OrderByKind::Expressions(v) => v.clone(),
                sq::OrderByKind::All(_) => return Err(unsupported("ORDER BY ALL")),
            },
            None => Vec::new(),
        };
        match q.body.as_ref() {
            sq::SetExpr::Select(s) => {
                let mut sel = self.bind_select(s, &order_by)?;
                sel.limit = limit;
                sel.offset = offset;
                sel.lock = lock;
                Ok(sel)
            }
            sq::SetExpr::Query(inner) if order_by.is_empty() && limit.is_none() => {
                let mut sel = self.bind_query(inner)?;
                if lock != LockMode::None {
                    sel.lock = lock;
                }
                Ok(sel)
            }
            sq::SetExpr::SetOperation { .. } | sq::SetExpr::Query(_) => {
                let mut sel = self.bind_set_query(&q.body, &order_by, limit, offset)?;
                // FOR UPDATE / LOCK IN SHARE MODE after a set operation locks the rows of
                // its last part.
                if lock != LockMode::None {
                    if let Some(SourceKind::SetOp(op)) =
                        sel.sources.first_mut().map(|s| &mut s.kind)
                    {
                        if let Some(last) = op.root.leaves_mut().pop() {
                            last.lock = lock;
                        }
                    }
                }
                Ok(sel)
            }
            sq::SetExpr::Values(_) => Err(unsupported("VALUES as a query")),
            _ => Err(unsupported("this query form")),
        }
    }

    pub(super) fn const_u64(&mut self, e: &sq::Expr) -> Result<u64, SqlError> {
        // `LIMIT ?` while the statement is prepared (parameters are all NULL then): the
        // value comes with each execute. (A NULL bound at execute also reads as 0.)
        if let sq::Expr::Value(v) = e {
            if let sq::Value::Placeholder(p) = &v.value {
                let i: usize = p.trim_start_matches('?').parse().unwrap_or(0);
                let bound = self.env.params().get(i.wrapping_sub(1));
                if bound.is_none_or(|v| v.is_null()) {
                    return Ok(0);
                }
            }
        }
        let b = self.bind_expr(e, Clause::Field)?;
        if !b.is_const() {
            return Err(crate::parser::syntax_error(&e.to_string(), 0));
        }
        let v = expr::eval(&b, &expr::Ctx::new(&[]))?;
        match v {
            Value::Int(i) if i >= 0 => Ok(i as u64),
            Value::UInt(u) => Ok(u),
            Value::Bytes(_) | Value::Decimal(_) | Value::Double(_) => {
                Ok(expr::to_i64(&v).max(0) as u64)
            }
            _ => Err(err(
                code::ER_WRONG_ARGUMENTS,
                "Incorrect arguments to LIMIT",
            )),
        }
    }

    pub(super) fn bind_limit(
        &mut self,
        l: Option<&sq::LimitClause>,
    ) -> Result<(Option<u64>, u64), SqlError> {
        Ok(match l {
            None => (None, 0),
            Some(sq::LimitClause::LimitOffset { limit, offset, .. }) => {
                let lim = match limit {
                    Some(e) => Some(self.const_u64(e)?),
                    None => None,
                };
                let off = match offset {
                    Some(o) => self.const_u64(&o.value)?,
                    None => 0,
                };
                (lim, off)
            }
            Some(sq::LimitClause::OffsetCommaLimit { offset, limit }) => {
                (Some(self.const_u64(limit)?), self.const_u64(offset)?)
            }
        })
    }

    pub(super) fn item_name(&self, e: &sq::Expr) -> String {
        if let sq::Expr::Subquery(_) = e {
            // The span covers the query inside the parentheses.
            if let Some((a, b)) = self.span_offsets(e.span()) {
                let before = self.sql[..a].trim_end();
                let after = self.sql[b..].trim_start();
                if before.ends_with('(') && after.starts_with(')') {
                    let a = before.len() - 1;
                    let b = self.sql.len() - after.len() + 1;
                    return self.sql[a..b].to_string();
                }
            }
        }
        match e {
            sq::Expr::Identifier(i) => i.value.clone(),
            sq::Expr::CompoundIdentifier(v) if !v[0].value.starts_with('@') => {
                v.last().map(|i| i.value.clone()).unwrap_or_default()
            }
            _ => self
                .item_text(e)
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| e.to_string()),
        }
    }

    pub(super) fn result_column(&self, e: &Expr, name: String) -> ResultColumn {
        if self.is_null_type(e) {
            return ResultColumn::null(name);
        }
        let (ty, nullable) = self.type_of(e);
        let mut rc = ResultColumn::expr(name, ty, nullable);
        self.window_column(e, &mut rc);
        if let Expr::Col(p) = e {
            if let Some(sc) = self.scope.iter().find(|s| s.pos == *p) {
                rc.org_name = sc.name.clone();
                rc.table = sc.alias.clone();
                rc.org_table = sc.table.clone();
                rc.db = sc.db.clone();
                rc.flags = sc.flags;
                if let Some(w) = sc.display_width {
                    rc.length = w as u32;
                }
                if let Some((m, d)) = sc.digits {
                    rc.length = m as u32;
                    rc.decimals = d;
                }
                if sc.flags & cf::ZEROFILL != 0 {
                    rc.length = crate::num_attrs::decimal_length(&ty).unwrap_or(rc.length);
                }
                if sc.nullable {
                    rc.flags &= !cf::NOT_NULL;
                }
            }
        }
        rc
    }

    pub(super) fn bind_select(
        &mut self,
        s: &sq::Select,
        order_by: &[sq::OrderByExpr],
    ) -> Result<Select, SqlError> {
        if s.into.is_some() {
            return Err(unsupported("SELECT INTO"));
        }
        let sources = self.bind_from(&s.from)?;
        let mut filter = Vec::new();
        if let Some(w) = &s.selection {
            let b = self.bind_expr(w, Clause::Where)?;
            conjuncts(b, &mut filter);
        }
        self.set_named_windows(&s.named_window)?;
        // Select list.
        self.allow_agg = true;
        self.win_ok = true;
        let mut items = Vec::new();
        let mut columns = Vec::new();
        for item in &s.projection {
            match item {
                sq::SelectItem::Wildcard(_) => {
                    if sources.is_empty() {
                        return Err(err(crate::codes::ER_NO_TABLES_USED, "No tables used"));
                    }
                    for p in self.star.clone() {
                        let e = Expr::Col(p);
                        let name = self.scope_name(p);
                        columns.push(self.result_column(&e, name));
                        items.push(e);
                    }
                }
                sq::SelectItem::QualifiedWildcard(kind, _) => {
                    let name = match kind {
                        sq::SelectItemQualifiedWildcardKind::ObjectName(n) => name_parts(n),
                        sq::SelectItemQualifiedWildcardKind::Expr(e) => vec![e.to_string()],
                    };
                    let alias = name.last().cloned().unwrap_or_default();
                    let src = sources
                        .iter()
                        .find(|s| s.alias == alias)
                        .ok_or_else(|| {
                            err(code::ER_BAD_TABLE_ERROR, format!("Unknown table '{alias}'"))
                        })?
                        .clone();
                    self.push_source_columns(&src, &mut items, &mut columns);
                }
                sq::SelectItem::UnnamedExpr(e) => {
                    let b = self.bind_expr(e, Clause::Field)?;
                    let name = self.item_name(e);
                    columns.push(self.result_column(&b, name));
                    items.push(b);
                }
                sq::SelectItem::ExprWithAlias { expr, alias } => {
                    let b = self.bind_expr(expr, Clause::Field)?;
                    columns.push(self.result_column(&b, alias.value.clone()));
                    self.aliases.push((alias.value.clone(), b.clone()));
                    items.push(b);
                }
                other => return Err(unsupported(&other.to_string())),
            }
        }
        self.win_ok = false;
        for (i, c) in columns.iter().enumerate() {
            if !self.aliases.iter().any(|(a, _)| ident_eq(a, &c.name)) {
                self.aliases.push((c.name.clone(), items[i].clone()));
            }
        }
        // GROUP BY
        let mut group_by = Vec::new();
        match &s.group_by {
            sq::GroupByExpr::Expressions(exprs, mods) => {
                if !mods.is_empty() {
                    return Err(unsupported("GROUP BY modifiers"));
                }
                self.allow_agg = false;
                for e in exprs {
                    group_by.push(self.bind_order_item(e, &items, Clause::Group)?);
                }
                self.allow_agg = true;
            }
            sq::GroupByExpr::All(_) => return Err(unsupported("GROUP BY ALL")),
        }
        let having = match &s.having {
            Some(h) => Some(
                self.bind_expr(h, Clause::Having)
                    .map_err(|e| self.window_alias_error(e))?,
            ),
            None => None,
        };
        // A select-list alias of a window function cannot be grouped or filtered on.
        if group_by.iter().chain(&having).any(window::has_window) {
            return Err(window::wrong_placement());
        }
        let mut order = Vec::new();
        self.win_ok = true;
        for o in order_by {
            let desc = matches!(o.options.sort, Some(sq::OrderBySort::Desc));
            let item = self.bind_order_item(&o.expr, &items, Clause::Order)?;
            order.push((self.fixed_bin_order(self.as_number(item)), desc));
        }
        self.win_ok = false;
        let aggregate = !group_by.is_empty() || !self.aggs.is_empty();
        let distinct = matches!(s.distinct, Some(sq::Distinct::Distinct));
        if matches!(s.distinct, Some(sq::Distinct::On(_))) {
            return Err(unsupported("DISTINCT ON"));
        }
        // (Before the aggregates move into the plan: ORDER BY may name them.)
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        let group_colls = group_by.iter().map(|e| self.coll_of(e).0).collect();
        let derivs = items.iter().map(|e| self.coll_of(e).1).collect();
        self.place_windows(self.aggs.len(), &mut items, &mut order);
        Ok(Select {
            sources,
            filter,
            group_by,
            aggs: std::mem::take(&mut self.aggs),
            having,
            items,
            columns,
            distinct,
            order_colls,
            group_colls,
            derivs,
            order_by: order,
            limit: None,
            offset: 0,
            lock: LockMode::None,
            aggregate,
            subqueries: std::mem::take(&mut self.subqueries),
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
            windows: std::mem::take(&mut self.windows),
        })
    }

    pub(super) fn push_source_columns(
        &self,
        src: &Source,
        items: &mut Vec<Expr>,
        cols: &mut Vec<ResultColumn>,
    ) {
        for i in 0..src.ncols {
            let e = Expr::Col(src.offset + i);
            let name = self
                .scope
                .iter()
                .find(|s| s.pos == src.offset + i)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            cols.push(self.result_column(&e, name));
            items.push(e);
        }
    }

    /// ORDER BY / GROUP BY item: a position, a select-list alias, or an expression.
    pub(super) fn bind_order_item(
        &mut self,
        e: &sq::Expr,
        items: &[Expr],
        clause: Clause,
    ) -> Result<Expr, SqlError> {
        if let Some(item) = positional(e, items, clause.name()) {
            return item;
        }
        if let sq::Expr::Identifier(id) = e {
            // A real column wins over an alias in GROUP BY; an alias wins in ORDER BY.
            let col = self.lookup_column(std::slice::from_ref(&id.value), clause);
            if clause == Clause::Order || !matches!(col, Ok(Expr::Col(_))) {
                if let Some((_, x)) = self.aliases.iter().find(|(a, _)| ident_eq(a, &id.value)) {
                    return Ok(x.clone());
                }
            }
        }
        self.bind_expr(e, clause)
    }

    // ---------------------------------------------------------------- names

    pub(super) fn lookup_column(&self, parts: &[String], clause: Clause) -> Result<Expr, SqlError> {
        let (db, tbl, col) = match parts.len() {
            1 => (None, None, &parts[0]),
            2 => (None, Some(&parts[0]), &parts[1]),
            3 => (Some(&parts[0]), Some(&parts[1]), &parts[2]),
            _ => {
                return Err(err(
                    code::ER_BAD_FIELD_ERROR,
                    format!(
                        "Unknown column '{}' in '{}'",
                        parts.join("."),
                        clause.name()
                    ),
                ))
            }
        };
        let find = |scope: &[ScopeCol]| -> Vec<usize> {
            scope
                .iter()
                .filter(|s| {
                    ident_eq(&s.name, col)
                        && tbl.is_none_or(|t| s.alias == *t)
                        && db.is_none_or(|d| s.db == *d)
                        && !(tbl.is_none() && s.using_hidden)
                })
                .map(|s| s.pos)
                .collect()
        };
        let ambiguous = || {
            err(
                code::ER_NON_UNIQ_ERROR,
                format!(
                    "Column '{}' in {} is ambiguous",
                    parts.join("."),
                    clause.name()
                ),
            )
        };
        let matches = find(&self.scope);
        match matches.len() {
            0 => {}
            1 => return Ok(Expr::Col(matches[0])),
            _ => return Err(ambiguous()),
        }
        // An enclosing query's column (correlated subquery).
        for (d, o) in self.outer.iter().enumerate() {
            let m = find(&o.scope);
            match m.len() {
                0 => {}
                1 => return Ok(Expr::Outer(d + 1, m[0])),
                _ => return Err(ambiguous()),
            }
        }
        // `CURRENT_USER` without parentheses is the function (a reserved word in MariaDB).
        if parts.len() == 1 && col.eq_ignore_ascii_case("current_user") {
            return Ok(Expr::Lit(Value::str(&self.env.current_user())));
        }
        Err(err(
            code::ER_BAD_FIELD_ERROR,
            format!(
                "Unknown column '{}' in '{}'",
                parts.join("."),
                clause.name()
            ),
        ))
    }
}
