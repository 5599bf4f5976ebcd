//! Binding INSERT, UPDATE and DELETE (single- and multi-table).

use super::*;

impl<'a> Binder<'a> {
    pub fn bind_insert(mut self, ins: &sq::Insert) -> Result<Insert, SqlError> {
        let sq::TableObject::TableName(name) = &ins.table else {
            return Err(unsupported("INSERT INTO TABLE FUNCTION"));
        };
        let (db, tname) = self.table_name(name)?;
        let t = self.resolve_table(&db, &tname)?;
        let mut columns = Vec::new();
        for c in &ins.columns {
            let parts = name_parts(c);
            let cname = parts.last().cloned().unwrap_or_default();
            let Some(i) = t.column_index(&cname) else {
                return Err(err(
                    code::ER_BAD_FIELD_ERROR,
                    format!("Unknown column '{cname}' in 'INSERT INTO'"),
                ));
            };
            if columns.contains(&i) {
                return Err(err(
                    1110,
                    format!("Column '{}' specified twice", t.columns[i].name),
                ));
            }
            columns.push(i);
        }
        let source = if !ins.assignments.is_empty() {
            // INSERT ... SET a=1, b=2
            self.enter_row_of(&t)?;
            let mut row = Vec::new();
            for a in &ins.assignments {
                let sq::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(unsupported("tuple assignment"));
                };
                let cname = name_parts(n).pop().unwrap_or_default();
                let Some(i) = t.column_index(&cname) else {
                    return Err(err(
                        code::ER_BAD_FIELD_ERROR,
                        format!("Unknown column '{cname}' in 'field list'"),
                    ));
                };
                columns.push(i);
                row.push(self.bind_insert_value(&a.value)?);
            }
            self.leave_insert_row();
            InsertSource::Values(vec![row])
        } else {
            if columns.is_empty() {
                columns = (0..t.columns.len()).collect();
            }
            let Some(src) = &ins.source else {
                return Err(unsupported("INSERT without VALUES"));
            };
            match src.body.as_ref() {
                sq::SetExpr::Values(v) if src.order_by.is_none() && src.limit_clause.is_none() => {
                    let mut rows = Vec::with_capacity(v.rows.len());
                    self.enter_row_of(&t)?;
                    for (n, r) in v.rows.iter().enumerate() {
                        let r = &r.content;
                        if r.len() != columns.len() && !(r.is_empty() && ins.columns.is_empty()) {
                            return Err(err(
                                crate::codes::ER_WRONG_VALUE_COUNT_ON_ROW,
                                format!("Column count doesn't match value count at row {}", n + 1),
                            ));
                        }
                        let mut row = Vec::with_capacity(r.len());
                        for e in r {
                            row.push(self.bind_insert_value(e)?);
                        }
                        if row.is_empty() {
                            row = vec![None; columns.len()];
                        }
                        rows.push(row);
                    }
                    self.leave_insert_row();
                    InsertSource::Values(rows)
                }
                _ => {
                    let sel = self.child().bind_query(src)?;
                    if sel.columns.len() != columns.len() {
                        return Err(err(
                            crate::codes::ER_WRONG_VALUE_COUNT_ON_ROW,
                            "Column count doesn't match value count at row 1",
                        ));
                    }
                    InsertSource::Select(Box::new(sel))
                }
            }
        };
        let mut on_dup = Vec::new();
        if let Some(on) = &ins.on {
            match on {
                sq::OnInsert::DuplicateKeyUpdate(assigns) => {
                    // Scope: the existing row; VALUES(c) refers to the new row.
                    let mut sources = Vec::new();
                    self.bind_table_factor(&mut sources, &table_factor(name))?;
                    self.values_offset = Some(t.columns.len() + t.hidden_pk as usize);
                    for a in assigns {
                        let sq::AssignmentTarget::ColumnName(n) = &a.target else {
                            return Err(unsupported("tuple assignment"));
                        };
                        let cname = name_parts(n).pop().unwrap_or_default();
                        let Some(i) = t.column_index(&cname) else {
                            return Err(err(
                                code::ER_BAD_FIELD_ERROR,
                                format!("Unknown column '{cname}' in 'field list'"),
                            ));
                        };
                        let e = self.bind_expr(&a.value, Clause::Field)?;
                        on_dup.push((i, e));
                    }
                }
                _ => return Err(unsupported("ON CONFLICT")),
            }
        }
        let returning = match &ins.returning {
            Some(list) => {
                let mut b = self.sibling();
                let mut sources = Vec::new();
                b.bind_table_factor(&mut sources, &table_factor(name))?;
                Some(b.bind_returning(&sources, list)?)
            }
            None => None,
        };
        Ok(Insert {
            table: t,
            columns,
            source,
            ignore: ins.ignore,
            replace: ins.replace_into,
            on_dup,
            subqueries: std::mem::take(&mut self.subqueries),
            returning,
            defaults: vec![],
        })
    }

    pub(crate) fn bind_insert_value(&mut self, e: &sq::Expr) -> Result<Option<Expr>, SqlError> {
        if let sq::Expr::Identifier(id) = e {
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT") {
                return Ok(None);
            }
        }
        Ok(Some(self.bind_expr(e, Clause::Values)?))
    }

    pub(super) fn bind_single_table_dml(
        &mut self,
        from: &sq::TableWithJoins,
        selection: Option<&sq::Expr>,
        order_by: &[sq::OrderByExpr],
        limit: Option<&sq::Expr>,
    ) -> Result<Select, SqlError> {
        let mut sources = Vec::new();
        if self
            .bind_table_factor(&mut sources, &from.relation)?
            .is_none()
        {
            // DUAL
            let at = self.sql.to_ascii_lowercase().find("dual").unwrap_or(0);
            return Err(crate::parser::syntax_error(self.sql, at));
        }
        if sources.first().is_none_or(|s| s.table().is_none()) {
            let name = sources.first().map(|s| s.alias.clone()).unwrap_or_default();
            return Err(err(
                crate::codes::ER_NON_UPDATABLE_TABLE,
                format!("The target table {name} of the UPDATE/DELETE is not updatable"),
            ));
        }
        let mut filter = Vec::new();
        if let Some(w) = selection {
            let b = self.bind_expr(w, Clause::Where)?;
            conjuncts(b, &mut filter);
        }
        let mut order = Vec::new();
        for o in order_by {
            order.push((
                self.bind_expr(&o.expr, Clause::Order)?,
                matches!(o.options.sort, Some(sq::OrderBySort::Desc)),
            ));
        }
        let limit = match limit {
            Some(e) => Some(self.const_u64(e)?),
            None => None,
        };
        let src = &sources[0];
        let items: Vec<Expr> = (0..src.width).map(|i| Expr::Col(src.offset + i)).collect();
        Ok(Select {
            sources,
            filter,
            group_by: vec![],
            aggs: vec![],
            having: None,
            columns: vec![],
            items,
            distinct: false,
            order_colls: order.iter().map(|(e, _)| self.coll_of(e).0).collect(),
            group_colls: vec![],
            derivs: vec![],
            order_by: order,
            limit,
            offset: 0,
            lock: LockMode::Exclusive,
            aggregate: false,
            subqueries: vec![],
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
            windows: Vec::new(),
        })
    }

    pub fn bind_update(mut self, u: &sq::Update) -> Result<Update, SqlError> {
        if u.from.is_some() {
            return Err(unsupported("UPDATE ... FROM"));
        }
        if !u.table.joins.is_empty() {
            return self.bind_multi_update(u);
        }
        let mut select = self.bind_single_table_dml(
            &u.table,
            u.selection.as_ref(),
            &u.order_by,
            u.limit.as_ref(),
        )?;
        let mut sets = Vec::new();
        for a in &u.assignments {
            let pos = self.set_target(&a.target)?;
            let e = self.bind_set_value(pos, &a.value)?;
            sets.push((pos, e));
        }
        select.subqueries = std::mem::take(&mut self.subqueries);
        Ok(Update {
            select,
            sets,
            ignore: false,
            multi: false,
        })
    }

    /// The row position a SET assignment writes.
    pub(super) fn set_target(&self, target: &sq::AssignmentTarget) -> Result<usize, SqlError> {
        let sq::AssignmentTarget::ColumnName(n) = target else {
            return Err(unsupported("tuple assignment"));
        };
        match self.lookup_column(&name_parts(n), Clause::Set)? {
            Expr::Col(pos) => Ok(pos),
            _ => Err(unsupported("assignment to an outer column")),
        }
    }

    /// `UPDATE t1 JOIN t2 ... SET t1.a = ..., t2.b = ... [WHERE] [ORDER BY] [LIMIT]`.
    pub(super) fn bind_multi_update(mut self, u: &sq::Update) -> Result<Update, SqlError> {
        let mut sources = self.bind_from(std::slice::from_ref(&u.table))?;
        let mut sets = Vec::new();
        let mut targets = Vec::new();
        for a in &u.assignments {
            let pos = self.set_target(&a.target)?;
            let si = sources
                .iter()
                .position(|s| pos >= s.offset && pos < s.offset + s.ncols)
                .ok_or_else(|| unsupported("this UPDATE target"))?;
            if sources[si].table().is_none() {
                return Err(err(
                    crate::codes::ER_NON_UPDATABLE_TABLE,
                    format!(
                        "The target table {} of the UPDATE is not updatable",
                        sources[si].alias
                    ),
                ));
            }
            if !targets.contains(&si) {
                targets.push(si);
            }
            let e = self.bind_set_value(pos, &a.value)?;
            sets.push((pos, e));
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.lock = Some(if targets.contains(&i) {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            });
        }
        let select =
            self.bind_dml_select(sources, u.selection.as_ref(), &u.order_by, u.limit.as_ref())?;
        Ok(Update {
            select,
            sets,
            ignore: false,
            multi: true,
        })
    }

    /// The WHERE / ORDER BY / LIMIT of a multi-table UPDATE or DELETE over `sources`.
    pub(super) fn bind_dml_select(
        &mut self,
        sources: Vec<Source>,
        selection: Option<&sq::Expr>,
        order_by: &[sq::OrderByExpr],
        limit: Option<&sq::Expr>,
    ) -> Result<Select, SqlError> {
        let mut filter = Vec::new();
        if let Some(w) = selection {
            conjuncts(self.bind_expr(w, Clause::Where)?, &mut filter);
        }
        let mut order = Vec::new();
        for o in order_by {
            order.push((
                self.bind_expr(&o.expr, Clause::Order)?,
                matches!(o.options.sort, Some(sq::OrderBySort::Desc)),
            ));
        }
        let limit = match limit {
            Some(e) => Some(self.const_u64(e)?),
            None => None,
        };
        let order_colls = order.iter().map(|(e, _)| self.coll_of(e).0).collect();
        Ok(Select {
            sources,
            filter,
            group_by: vec![],
            aggs: vec![],
            having: None,
            columns: vec![],
            items: vec![],
            distinct: false,
            order_by: order,
            limit,
            offset: 0,
            lock: LockMode::Exclusive,
            aggregate: false,
            subqueries: std::mem::take(&mut self.subqueries),
            width: self.types.len(),
            ordered: false,
            params: Vec::new(),
            windows: Vec::new(),
            order_colls,
            group_colls: vec![],
            derivs: vec![],
        })
    }

    pub fn bind_delete(mut self, d: &sq::Delete) -> Result<Delete, SqlError> {
        let from = match &d.from {
            sq::FromTable::WithFromKeyword(v) | sq::FromTable::WithoutKeyword(v) => v,
        };
        let multi = !d.tables.is_empty()
            || d.using.is_some()
            || from.len() != 1
            || !from[0].joins.is_empty();
        if multi {
            if d.returning.is_some() {
                // MariaDB's grammar has RETURNING for single-table DELETE only.
                let at = self
                    .sql
                    .to_ascii_lowercase()
                    .rfind("returning")
                    .unwrap_or(0);
                return Err(crate::parser::syntax_error(self.sql, at));
            }
            return self.bind_multi_delete(d, from);
        }
        let mut select = self.bind_single_table_dml(
            &from[0],
            d.selection.as_ref(),
            &d.order_by,
            d.limit.as_ref(),
        )?;
        let returning = match &d.returning {
            Some(list) => Some(self.bind_returning(&select.sources, list)?),
            None => None,
        };
        select.subqueries = std::mem::take(&mut self.subqueries);
        Ok(Delete {
            select,
            targets: vec![],
            returning,
        })
    }

    /// `DELETE t1, t2 FROM <join> ...` / `DELETE FROM t1, t2 USING <join> ...`.
    pub(super) fn bind_multi_delete(
        mut self,
        d: &sq::Delete,
        from: &[sq::TableWithJoins],
    ) -> Result<Delete, SqlError> {
        if !d.order_by.is_empty() || d.limit.is_some() {
            let at = self.sql.to_ascii_uppercase().rfind(
                if d.limit.is_some() && d.order_by.is_empty() {
                    "LIMIT"
                } else {
                    "ORDER"
                },
            );
            return Err(crate::parser::syntax_error(
                self.sql,
                at.unwrap_or(self.sql.len()),
            ));
        }
        let (names, join): (Vec<Vec<String>>, &[sq::TableWithJoins]) = match &d.using {
            Some(using) => {
                let mut names = Vec::new();
                for t in from {
                    match &t.relation {
                        sq::TableFactor::Table { name, .. } if t.joins.is_empty() => {
                            names.push(name_parts(name))
                        }
                        _ => return Err(crate::parser::syntax_error(self.sql, 0)),
                    }
                }
                (names, using)
            }
            None => (d.tables.iter().map(name_parts).collect(), from),
        };
        let mut sources = self.bind_from(join)?;
        let mut targets = Vec::new();
        for parts in &names {
            let name = parts.last().cloned().unwrap_or_default();
            let db = if parts.len() > 1 {
                Some(parts[0].clone())
            } else {
                None
            };
            let Some(si) = sources
                .iter()
                .position(|s| s.alias == name && db.as_ref().is_none_or(|d| *d == s.db))
            else {
                return Err(err(
                    code::ER_UNKNOWN_TABLE,
                    format!("Unknown table '{name}' in MULTI DELETE"),
                ));
            };
            if sources[si].table().is_none() {
                return Err(err(
                    crate::codes::ER_NON_UPDATABLE_TABLE,
                    format!("The target table {name} of the DELETE is not updatable"),
                ));
            }
            if !targets.contains(&si) {
                targets.push(si);
            }
        }
        for (i, s) in sources.iter_mut().enumerate() {
            s.lock = Some(if targets.contains(&i) {
                LockMode::Exclusive
            } else {
                LockMode::Shared
            });
        }
        let select = self.bind_dml_select(sources, d.selection.as_ref(), &[], None)?;
        // A subquery may not read a table rows are deleted from.
        let mut read = Vec::new();
        for q in &select.subqueries {
            tables_read(q, &mut read);
        }
        for &si in &targets {
            let src = &select.sources[si];
            if let Some(t) = src.table() {
                if read.iter().any(|(d, n)| *d == t.db && *n == t.name) {
                    return Err(err(
                        crate::codes::ER_UPDATE_TABLE_USED,
                        format!(
                            "Table '{}' is specified twice, both as a target for 'DELETE' and as a separate source for data",
                            src.alias
                        ),
                    ));
                }
            }
        }
        Ok(Delete {
            select,
            targets,
            returning: None,
        })
    }
}

/// `name` as a FROM item without alias or hints.
fn table_factor(name: &sq::ObjectName) -> sq::TableFactor {
    sq::TableFactor::Table {
        name: name.clone(),
        alias: None,
        args: None,
        with_hints: vec![],
        version: None,
        with_ordinality: false,
        partitions: vec![],
        json_path: None,
        sample: None,
        index_hints: vec![],
    }
}
