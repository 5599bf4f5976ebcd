//! Binding DDL: column types and options, indexes, CREATE TABLE, ALTER TABLE and the
//! other statements that become an engine `Ddl`.

use super::alter::bind_alter_columns;
use super::default_expr::apply_default;
use super::*;

/// The display width an integer type is declared with (`INT(5)`), or BOOLEAN's 1
/// (MariaDB shows BOOLEAN as `tinyint(1)`); None for the default width and other types.
pub fn display_width(t: &sq::DataType) -> Option<u16> {
    use sq::DataType as D;
    let w = match t {
        D::Bool | D::Boolean => Some(1),
        D::TinyInt(w)
        | D::TinyIntUnsigned(w)
        | D::SmallInt(w)
        | D::SmallIntUnsigned(w)
        | D::MediumInt(w)
        | D::MediumIntUnsigned(w)
        | D::Int(w)
        | D::IntUnsigned(w)
        | D::Integer(w)
        | D::IntegerUnsigned(w)
        | D::BigInt(w)
        | D::BigIntUnsigned(w) => *w,
        _ => None,
    };
    w.filter(|&w| w > 0 && w <= 255).map(|w| w as u16)
}

/// Maps a declared SQL type to a column type.
pub fn column_type(t: &sq::DataType, name: &str) -> Result<ColumnType, SqlError> {
    use sq::DataType as D;
    let int = |bytes, unsigned| ColumnType::Int { bytes, unsigned };
    let ty = match t {
        D::TinyInt(_) | D::Bool | D::Boolean => int(1, false),
        D::TinyIntUnsigned(_) | D::UTinyInt => int(1, true),
        D::SmallInt(_) | D::Int2(_) => int(2, false),
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) | D::USmallInt => int(2, true),
        D::MediumInt(_) => int(3, false),
        D::MediumIntUnsigned(_) => int(3, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(4, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(4, true),
        D::BigInt(_) | D::Int8(_) => int(8, false),
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt => int(8, true),
        D::Float(info) | D::FloatUnsigned(info) => match info {
            sq::ExactNumberInfo::Precision(p) if *p > 24 => ColumnType::Double,
            _ => ColumnType::Float,
        },
        D::Real
        | D::RealUnsigned
        | D::Double(_)
        | D::DoublePrecision
        | D::DoublePrecisionUnsigned
        | D::DoubleUnsigned(_)
        | D::Float8 => ColumnType::Double,
        D::Decimal(info)
        | D::Numeric(info)
        | D::Dec(info)
        | D::DecimalUnsigned(info)
        | D::DecUnsigned(info) => {
            let (p, s) = exact_info(info, 10, 0);
            super::scalar::decimal_limits(p, s, name)?;
            if s > p {
                return Err(err(
                    1427,
                    format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{name}')"),
                ));
            }
            ColumnType::Decimal {
                precision: p.max(1),
                scale: s,
            }
        }
        D::Char(l) | D::Character(l) => ColumnType::char(char_len(l, 1), Collation::DEFAULT),
        D::Varchar(l) | D::CharacterVarying(l) | D::CharVarying(l) | D::Nvarchar(l) => {
            if l.is_none() {
                return Err(crate::parser::syntax_error("", 0));
            }
            ColumnType::varchar(char_len(l, 0), Collation::DEFAULT)
        }
        D::Binary(l) => ColumnType::char(l.unwrap_or(1) as u32, Collation::Binary),
        D::Varbinary(l) => ColumnType::varchar(
            match l {
                Some(sq::BinaryLength::IntegerLength { length }) => *length as u32,
                _ => 65535,
            },
            Collation::Binary,
        ),
        D::TinyText => ColumnType::text(1, Collation::DEFAULT),
        D::Text => ColumnType::text(2, Collation::DEFAULT),
        D::MediumText => ColumnType::text(3, Collation::DEFAULT),
        D::LongText => ColumnType::text(4, Collation::DEFAULT),
        D::TinyBlob => ColumnType::text(1, Collation::Binary),
        D::Blob(_) => ColumnType::text(2, Collation::Binary),
        D::MediumBlob => ColumnType::text(3, Collation::Binary),
        D::LongBlob => ColumnType::text(4, Collation::Binary),
        D::Date => ColumnType::Date,
        D::Datetime(p) => ColumnType::DateTime {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        D::Timestamp(p, _) => ColumnType::Timestamp {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        D::Time(p, _) => ColumnType::Time {
            fsp: p.unwrap_or(0).min(6) as u8,
        },
        // JSON is LONGTEXT utf8mb4_bin with an implicit CHECK (json_valid(col)).
        D::JSON => ColumnType::text(4, Collation::Utf8mb4Bin),
        D::Enum(members, None) => {
            let mut values = Vec::with_capacity(members.len());
            for m in members {
                match m {
                    sq::EnumMember::Name(s) => values.push(s.trim_end_matches(' ').to_string()),
                    sq::EnumMember::NamedValue(..) => {
                        return Err(unsupported("ENUM values with numbers"))
                    }
                }
            }
            enum_set_type(name, &values, false)?
        }
        D::Set(members) => {
            let values: Vec<String> = members
                .iter()
                .map(|s| s.trim_end_matches(' ').to_string())
                .collect();
            enum_set_type(name, &values, true)?
        }
        D::Bit(n) => {
            let bits = n.unwrap_or(1);
            if bits > 64 {
                return Err(err(
                    1439,
                    format!("Display width out of range for '{name}' (max = 64)"),
                ));
            }
            ColumnType::Bit {
                bits: bits.max(1) as u8,
            }
        }
        D::Custom(n, args)
            if name_parts(n).join(".").eq_ignore_ascii_case("year") && args.len() <= 1 =>
        {
            ColumnType::Year
        }
        D::Uuid => ColumnType::Uuid,
        D::Custom(n, args)
            if name_parts(n).join(".").eq_ignore_ascii_case("inet6") && args.is_empty() =>
        {
            ColumnType::Inet6
        }
        other => return Err(unsupported(&format!("data type {other}"))),
    };
    if let ColumnType::Varchar { len, binary, .. } | ColumnType::Char { len, binary, .. } = ty {
        let max = if matches!(ty, ColumnType::Char { .. }) {
            255
        } else if binary {
            65532
        } else {
            16383
        };
        if len > max {
            return Err(err(
                1074,
                format!(
                    "Column length too big for column '{name}' (max = {max}); use BLOB or TEXT instead"
                ),
            ));
        }
    }
    Ok(ty)
}

pub(super) fn default_value(
    e: &sq::Expr,
    col: &str,
    ty: &ColumnType,
) -> Result<(Option<Value>, bool), SqlError> {
    let invalid = || {
        err(
            code::ER_INVALID_DEFAULT,
            format!("Invalid default value for '{col}'"),
        )
    };
    // CURRENT_TIMESTAMP / NOW()
    if let sq::Expr::Function(f) = e {
        let n = name_parts(&f.name).join(".").to_lowercase();
        if matches!(
            n.as_str(),
            "current_timestamp" | "now" | "localtimestamp" | "localtime"
        ) {
            if !matches!(
                ty,
                ColumnType::DateTime { .. } | ColumnType::Timestamp { .. }
            ) {
                return Err(invalid());
            }
            return Ok((None, true));
        }
    }
    let v = match e {
        sq::Expr::Value(v) => match &v.value {
            sq::Value::Number(n, _) => parse_number(n),
            sq::Value::SingleQuotedString(s) | sq::Value::DoubleQuotedString(s) => {
                Value::Bytes(crate::literal_bytes(s))
            }
            sq::Value::Null => Value::Null,
            sq::Value::Boolean(b) => Value::Int(*b as i64),
            sq::Value::HexStringLiteral(_) => return Err(unsupported("hex DEFAULT")),
            _ => return Err(invalid()),
        },
        sq::Expr::UnaryOp {
            op: sq::UnaryOperator::Minus,
            expr,
        } => match default_value(expr, col, &ColumnType::Double)? {
            (Some(v), _) => expr::binary(BinOp::Sub, Value::Int(0), v)?,
            _ => return Err(invalid()),
        },
        sq::Expr::Nested(inner) => return default_value(inner, col, ty),
        _ => return Err(unsupported("expression DEFAULT values")),
    };
    if v.is_null() {
        return Ok((Some(Value::Null), false));
    }
    match expr::convert_for_column(&v, ty) {
        Ok(c) => Ok((Some(c), false)),
        Err(_) => Err(invalid()),
    }
}

/// A column definition bound to the engine's form, plus the keys declared inline.
pub(super) struct BoundColumn {
    pub(super) def: ColumnDef,
    pub(super) primary: bool,
    pub(super) unique: bool,
    /// Its CHECK constraint (`CHECK (...)`, JSON's `json_valid`).
    pub(super) checks: Vec<onelog_engine::CheckDef>,
}

/// The collation named by `CHARACTER SET cs` and/or `COLLATE name` (None when neither is
/// given). `latin1`, `utf8mb3`/`utf8` and `ascii` are stored as utf8mb4: their `_ci`
/// collations map to utf8mb4_general_ci and their `_bin`/`_cs` ones to utf8mb4_bin (see
/// `onelog_types::collation`).
pub fn charset_collation(
    charset: Option<&str>,
    collation: Option<&str>,
) -> Result<Option<Collation>, SqlError> {
    let cs = match charset {
        Some(cs) => Some(Collation::charset_default(cs).ok_or_else(|| {
            err(
                crate::codes::ER_UNKNOWN_CHARACTER_SET,
                format!("Unknown character set: '{cs}'"),
            )
        })?),
        None => None,
    };
    let Some(name) = collation else {
        return Ok(cs);
    };
    let c = Collation::from_name(name).ok_or_else(|| {
        err(
            crate::codes::ER_UNKNOWN_COLLATION,
            format!("Unknown collation: '{name}'"),
        )
    })?;
    if let Some(cs_name) = charset {
        let of = Collation::charset_of_name(name);
        let same = of.eq_ignore_ascii_case(cs_name)
            || (matches!(of.as_str(), "utf8" | "utf8mb3")
                && matches!(cs_name.to_ascii_lowercase().as_str(), "utf8" | "utf8mb3"));
        if !same {
            return Err(err(
                crate::codes::ER_COLLATION_CHARSET_MISMATCH,
                format!(
                    "COLLATION '{name}' is not valid for CHARACTER SET '{}'",
                    cs_name.to_lowercase()
                ),
            ));
        }
    }
    Ok(Some(c))
}

/// Binds a column definition; text columns without CHARACTER SET / COLLATE get
/// `table_coll`, the table's default collation.
pub(super) fn bind_column(
    c: &sq::ColumnDef,
    table_coll: Collation,
) -> Result<BoundColumn, SqlError> {
    let name = c.name.value.clone();
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_COLUMN_NAME,
            format!("Incorrect column name '{name}'"),
        ));
    }
    let mut ty = column_type(&c.data_type, &name)?;
    let mut charset = None;
    let mut collation = None;
    let mut zerofill = false;
    for o in &c.options {
        match &o.option {
            sq::ColumnOption::CharacterSet(n) if crate::num_attrs::is_mark(n) => zerofill = true,
            sq::ColumnOption::CharacterSet(n) => charset = Some(name_parts(n).join(".")),
            sq::ColumnOption::Collation(n) => collation = Some(name_parts(n).join(".")),
            _ => {}
        }
    }
    let json = matches!(c.data_type, sq::DataType::JSON);
    if ty.is_string() && !ty.is_binary() {
        let coll = charset_collation(charset.as_deref(), collation.as_deref())?;
        // JSON is utf8mb4_bin unless a collation is given.
        let default = if json {
            Collation::Utf8mb4Bin
        } else {
            table_coll
        };
        ty = ty.with_collation(coll.unwrap_or(default));
    }
    let mut checks = Vec::new();
    if json {
        checks.push(json_check(&name));
    }
    let mut def = ColumnDef {
        name: name.clone(),
        ty,
        nullable: true,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        default_expr: None,
        comment: String::new(),
        display_width: display_width(&c.data_type),
        num: Default::default(),
    };
    crate::num_attrs::apply(&mut def, &c.data_type, zerofill)?;
    let mut primary = false;
    let mut unique = false;
    let mut explicit_null = false;
    let mut default_null = false;
    for o in &c.options {
        match &o.option {
            sq::ColumnOption::Null => {
                def.nullable = true;
                explicit_null = true;
            }
            sq::ColumnOption::NotNull => def.nullable = false,
            sq::ColumnOption::Default(e) => default_null = apply_default(&mut def, e)?,
            sq::ColumnOption::PrimaryKey(_) => primary = true,
            sq::ColumnOption::Unique(_) => unique = true,
            sq::ColumnOption::DialectSpecific(toks) => {
                let s: String = toks
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if s.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    def.auto_increment = true;
                } else {
                    return Err(unsupported(&format!("column option {s}")));
                }
            }
            sq::ColumnOption::Comment(s) => def.comment = s.clone(),
            sq::ColumnOption::Check(ck) if ck.name.is_none() => {
                // A column has one constraint; a second replaces JSON's implicit one.
                checks.clear();
                checks.push(column_check(&name, &ck.expr));
            }
            sq::ColumnOption::CharacterSet(_) | sq::ColumnOption::Collation(_) => {}
            // Column-level REFERENCES: bound with the table (`foreign_keys::column_references`).
            sq::ColumnOption::ForeignKey(_) => {}
            sq::ColumnOption::OnUpdate(e) => {
                let (_, now) = default_value(e, &name, &ty)?;
                if !now {
                    return Err(err(
                        crate::codes::ER_INVALID_ON_UPDATE,
                        format!("Invalid ON UPDATE clause for '{name}' column"),
                    ));
                }
                def.on_update_now = true;
            }
            other => return Err(unsupported(&format!("column option {other}"))),
        }
    }
    if primary {
        def.nullable = false;
    }
    if default_null && !def.nullable {
        return Err(err(
            code::ER_INVALID_DEFAULT,
            format!("Invalid default value for '{name}'"),
        ));
    }
    let _ = explicit_null;
    if def.auto_increment
        && !matches!(
            ty,
            ColumnType::Int { .. } | ColumnType::Float | ColumnType::Double
        )
    {
        return Err(err(
            code::ER_WRONG_FIELD_SPEC,
            format!("Incorrect column specifier for column '{name}'"),
        ));
    }
    Ok(BoundColumn {
        def,
        primary,
        unique,
        checks,
    })
}

/// Index columns: positions and prefix lengths.
pub(super) fn index_columns(
    cols: &[ColumnDef],
    ics: &[sq::IndexColumn],
) -> Result<(Vec<usize>, Vec<Option<u32>>), SqlError> {
    let mut pos = Vec::new();
    let mut prefix = Vec::new();
    for ic in ics {
        let (name, plen) = match &ic.column.expr {
            sq::Expr::Identifier(i) => (i.value.clone(), None),
            sq::Expr::Function(f) => {
                // `c(10)` parses as a function call.
                let n = name_parts(&f.name).pop().unwrap_or_default();
                let len = match &f.args {
                    sq::FunctionArguments::List(l) if l.args.len() == 1 => match &l.args[0] {
                        sq::FunctionArg::Unnamed(sq::FunctionArgExpr::Expr(sq::Expr::Value(v))) => {
                            match &v.value {
                                sq::Value::Number(n, _) => n.parse::<u32>().ok(),
                                _ => None,
                            }
                        }
                        _ => None,
                    },
                    _ => None,
                };
                (n, Some(len.ok_or_else(|| unsupported("functional index"))?))
            }
            other => return Err(unsupported(&format!("index on {other}"))),
        };
        let Some(i) = cols.iter().position(|c| ident_eq(&c.name, &name)) else {
            return Err(err(
                code::ER_KEY_COLUMN_DOES_NOT_EXIST,
                format!("Key column '{name}' doesn't exist in table"),
            ));
        };
        // TEXT/BLOB keys without a length get a 768-character prefix (MariaDB 10.11
        // accepts them the same way for non-unique keys).
        let plen = if plen.is_none() && matches!(cols[i].ty, ColumnType::Blob { .. }) {
            Some(768)
        } else {
            plen
        };
        pos.push(i);
        prefix.push(plen);
    }
    Ok((pos, prefix))
}

pub(super) fn unique_index_name(existing: &[IndexDef], base: &str) -> String {
    if !existing.iter().any(|i| ident_eq(&i.name, base)) {
        return base.to_string();
    }
    for n in 2.. {
        let cand = format!("{base}_{n}");
        if !existing.iter().any(|i| ident_eq(&i.name, &cand)) {
            return cand;
        }
    }
    unreachable!()
}

pub(super) fn make_index(
    cols: &[ColumnDef],
    existing: &[IndexDef],
    name: Option<String>,
    ics: &[sq::IndexColumn],
    unique: bool,
    primary: bool,
) -> Result<IndexDef, SqlError> {
    let (columns, prefix_lens) = index_columns(cols, ics)?;
    let name = if primary {
        "PRIMARY".to_string()
    } else {
        match name {
            Some(n) => {
                if ident_eq(&n, "PRIMARY") {
                    return Err(err(1280, format!("Incorrect index name '{n}'")));
                }
                n
            }
            None => unique_index_name(existing, &cols[columns[0]].name),
        }
    };
    Ok(IndexDef {
        id: 0,
        name,
        columns,
        prefix_lens,
        unique: unique || primary,
        primary,
    })
}

/// Binds an index from a table constraint (PRIMARY KEY, UNIQUE, KEY/INDEX). Foreign keys
/// and CHECK constraints yield None (bound by `foreign_keys` and `add_table_check`).
pub(super) fn constraint_index(
    cols: &[ColumnDef],
    existing: &[IndexDef],
    c: &sq::TableConstraint,
) -> Result<Option<IndexDef>, SqlError> {
    Ok(Some(match c {
        sq::TableConstraint::PrimaryKey(pk) => {
            make_index(cols, existing, None, &pk.columns, true, true)?
        }
        sq::TableConstraint::Unique(u) => make_index(
            cols,
            existing,
            u.index_name
                .as_ref()
                .or(u.name.as_ref())
                .map(|i| i.value.clone()),
            &u.columns,
            true,
            false,
        )?,
        sq::TableConstraint::Index(i) => make_index(
            cols,
            existing,
            i.name.as_ref().map(|n| n.value.clone()),
            &i.columns,
            false,
            false,
        )?,
        sq::TableConstraint::ForeignKey(_) | sq::TableConstraint::Check(_) => return Ok(None),
        other => return Err(unsupported(&format!("constraint {other}"))),
    }))
}

/// A table's options (see `table_options.rs`), and the default collation of its text
/// columns.
pub(super) fn table_options(
    opts: &sq::CreateTableOptions,
) -> Result<(onelog_engine::TableOptionSet, Collation), SqlError> {
    let list: &[sq::SqlOption] = match opts {
        sq::CreateTableOptions::None => &[],
        sq::CreateTableOptions::With(v)
        | sq::CreateTableOptions::Options(v)
        | sq::CreateTableOptions::Plain(v)
        | sq::CreateTableOptions::TableProperties(v) => v,
    };
    let set = super::table_options::bind_table_options(list, "InnoDB")?.set;
    let collation = set.collation.unwrap_or(Collation::DEFAULT);
    Ok((set, collation))
}

/// Binds CREATE TABLE into the engine's table definition.
pub fn bind_create_table(
    b: &Binder,
    ct: &sq::CreateTable,
) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    bind_create_table_with(b, ct, Vec::new())
}

/// [`bind_create_table`] with `extra` columns after the declared ones, which keys and
/// constraints may name (CREATE ... SELECT: the query's columns not declared).
pub(crate) fn bind_create_table_with(
    b: &Binder,
    ct: &sq::CreateTable,
    extra: Vec<ColumnDef>,
) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    if ct.temporary {
        return Err(unsupported("CREATE TEMPORARY TABLE"));
    }
    if ct.query.is_some() {
        return Err(unsupported("CREATE TABLE ... SELECT"));
    }
    let (db, name) = b.table_name(&ct.name)?;
    if name.is_empty() || name.len() > 64 {
        return Err(err(
            code::ER_WRONG_TABLE_NAME,
            format!("Incorrect table name '{name}'"),
        ));
    }
    if let Some(like) = &ct.like {
        return create_table_like(b, ct, like, db, name);
    }
    if ct.columns.is_empty() && extra.is_empty() {
        return Err(err(
            code::ER_TABLE_MUST_HAVE_COLUMNS,
            "A table must have at least 1 column",
        ));
    }
    let (opts, collation) = table_options(&ct.table_options)?;
    let mut columns = Vec::new();
    let mut inline_pk = Vec::new();
    let mut inline_unique = Vec::new();
    let mut checks = Vec::new();
    for c in &ct.columns {
        let mut bc = bind_column(c, collation)?;
        checks.append(&mut bc.checks);
        if columns
            .iter()
            .any(|x: &ColumnDef| ident_eq(&x.name, &bc.def.name))
        {
            return Err(err(
                code::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{}'", bc.def.name),
            ));
        }
        if bc.primary {
            inline_pk.push(columns.len());
        }
        if bc.unique {
            inline_unique.push(columns.len());
        }
        columns.push(bc.def);
    }
    if !extra.is_empty() {
        // As MariaDB: the declared columns the query does not name, then the query's in
        // its order (a declared one of the same name in its place).
        let inline_names = |v: &[usize], cols: &[ColumnDef]| -> Vec<String> {
            v.iter().map(|&i| cols[i].name.clone()).collect()
        };
        let (pk_names, unique_names) = (
            inline_names(&inline_pk, &columns),
            inline_names(&inline_unique, &columns),
        );
        let (mut declared, mut ordered): (Vec<ColumnDef>, Vec<ColumnDef>) = columns
            .into_iter()
            .partition(|c| extra.iter().any(|e| ident_eq(&e.name, &c.name)));
        for e in extra {
            match declared.iter().position(|d| ident_eq(&d.name, &e.name)) {
                Some(i) => ordered.push(declared.remove(i)),
                None => ordered.push(e),
            }
        }
        columns = ordered;
        let position = |n: &String| columns.iter().position(|c| ident_eq(&c.name, n));
        inline_pk = pk_names.iter().filter_map(position).collect();
        inline_unique = unique_names.iter().filter_map(position).collect();
    }
    let warnings = Vec::new();
    let mut indexes: Vec<IndexDef> = Vec::new();
    let mut fk_specs: Vec<sq::ForeignKeyConstraint> = ct
        .columns
        .iter()
        .flat_map(crate::foreign_keys::column_references)
        .collect();
    if inline_pk.len() > 1 {
        return Err(err(
            code::ER_MULTIPLE_PRI_KEY,
            "Multiple primary key defined",
        ));
    }
    if let Some(&c) = inline_pk.first() {
        indexes.push(IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![c],
            prefix_lens: vec![None],
            unique: true,
            primary: true,
        });
    }
    for c in &ct.constraints {
        if let sq::TableConstraint::Check(ck) = c {
            add_table_check(
                &mut checks,
                ck.name.as_ref().map(|n| n.value.as_str()),
                &ck.expr,
            )?;
            continue;
        }
        if let sq::TableConstraint::ForeignKey(fk) = c {
            fk_specs.push(fk.clone());
            continue;
        }
        if let Some(idx) = constraint_index(&columns, &indexes, c)? {
            if idx.primary {
                if indexes.iter().any(|i| i.primary) {
                    return Err(err(
                        code::ER_MULTIPLE_PRI_KEY,
                        "Multiple primary key defined",
                    ));
                }
                for &col in &idx.columns {
                    columns[col].nullable = false;
                    if columns[col].default.is_none() {
                        // keep
                    }
                }
                indexes.insert(0, idx);
            } else {
                if indexes.iter().any(|i| ident_eq(&i.name, &idx.name)) {
                    return Err(err(
                        code::ER_DUP_KEYNAME,
                        format!("Duplicate key name '{}'", idx.name),
                    ));
                }
                indexes.push(idx);
            }
        }
    }
    for &c in &inline_unique {
        let name = unique_index_name(&indexes, &columns[c].name);
        indexes.push(IndexDef {
            id: 0,
            name,
            columns: vec![c],
            prefix_lens: vec![None],
            unique: true,
            primary: false,
        });
    }
    check_auto_key(&columns, &indexes)?;
    order_checks(&columns, &mut checks);
    let foreign_keys = crate::foreign_keys::bind_create(
        b,
        &db,
        &name,
        &columns,
        &mut indexes,
        &checks,
        &fk_specs,
    )?;
    let mut def = TableDef {
        id: 0,
        db,
        name,
        columns,
        indexes,
        hidden_pk: false,
        comment: String::new(),
        engine_name: "InnoDB".into(),
        auto_increment_start: None,
        collation,
        checks,
        foreign_keys,
        sequence: false,
        create_options: Vec::new(),
        create_time: None,
    };
    opts.apply(&mut def);
    // Conditions must bind against the table (1054 for an unknown column).
    let t = Arc::new(def);
    for c in &t.checks {
        bind_check(b.env, &t, c)?;
    }
    super::default_expr::check_table_defaults(b.env, &t)?;
    let def = Arc::unwrap_or_clone(t);
    Ok((
        Ddl::CreateTable {
            def,
            if_not_exists: ct.if_not_exists,
            or_replace: ct.or_replace,
        },
        warnings,
    ))
}

/// `CREATE TABLE t LIKE src`: src's definition under the new name, without its foreign
/// keys and hidden primary key (a sequence stays a sequence).
fn create_table_like(
    b: &Binder,
    ct: &sq::CreateTable,
    like: &sq::CreateTableLikeKind,
    db: String,
    name: String,
) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    let src_name = match like {
        sq::CreateTableLikeKind::Parenthesized(l) | sq::CreateTableLikeKind::Plain(l) => &l.name,
    };
    let (sdb, sname) = b.table_name(src_name)?;
    let src = b.resolve_table(&sdb, &sname)?;
    let mut def = (*src).clone();
    def.id = 0;
    def.db = db;
    def.name = name;
    if def.hidden_pk {
        def.indexes.remove(0);
        def.hidden_pk = false;
    }
    for i in &mut def.indexes {
        i.id = 0;
    }
    // As in MariaDB, CREATE TABLE ... LIKE copies no foreign keys.
    def.foreign_keys.clear();
    if def.sequence {
        return Ok((crate::sequences::like_ddl(def, ct.if_not_exists), vec![]));
    }
    Ok((
        Ddl::CreateTable {
            def,
            if_not_exists: ct.if_not_exists,
            or_replace: ct.or_replace,
        },
        vec![],
    ))
}

/// A database name (1102 when it is not one identifier of 1 to 64 characters).
fn db_name(n: &sq::ObjectName) -> Result<String, SqlError> {
    let p = name_parts(n);
    if p.len() != 1 || p[0].is_empty() || p[0].len() > 64 {
        return Err(err(
            code::ER_WRONG_DB_NAME,
            format!("Incorrect database name '{n}'"),
        ));
    }
    Ok(p[0].clone())
}

/// Binds a DDL statement into the engine's form; Ok(None) if `stmt` is not DDL.
pub fn bind_ddl(
    b: &Binder,
    stmt: &sq::Statement,
) -> Result<Option<(Ddl, Vec<SqlError>)>, SqlError> {
    use sq::Statement as S;
    Ok(Some(match stmt {
        S::CreateDatabase {
            db_name: n,
            if_not_exists,
            ..
        } => (
            Ddl::CreateDatabase {
                name: db_name(n)?,
                if_not_exists: *if_not_exists,
            },
            vec![],
        ),
        S::CreateSchema {
            schema_name,
            if_not_exists,
            ..
        } => {
            let sq::SchemaName::Simple(n) = schema_name else {
                return Err(unsupported("CREATE SCHEMA AUTHORIZATION"));
            };
            (
                Ddl::CreateDatabase {
                    name: db_name(n)?,
                    if_not_exists: *if_not_exists,
                },
                vec![],
            )
        }
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            temporary,
            ..
        } => bind_drop(
            b,
            object_type,
            *if_exists,
            names,
            table.as_ref(),
            *temporary,
        )?,
        S::CreateTable(ct) => bind_create_table(b, ct)?,
        S::AlterTable(at) => {
            let (db, tname) = b.table_name(&at.name)?;
            let def = b.resolve_table(&db, &tname)?;
            // ALTER TABLE t RENAME TO u
            if let [sq::AlterTableOperation::RenameTable { table_name }] = at.operations.as_slice()
            {
                let n = match table_name {
                    sq::RenameTableNameKind::As(n) | sq::RenameTableNameKind::To(n) => n,
                };
                let to = b.table_name(n)?;
                return Ok(Some((
                    Ddl::RenameTables {
                        renames: vec![((db, tname), to)],
                    },
                    vec![],
                )));
            }
            if def.sequence {
                return Err(crate::sequences::invalid_structure(&db, &tname));
            }
            let (ops, cols) = bind_alter_columns(&def, &at.operations)?;
            let after = Arc::new(TableDef {
                columns: cols,
                ..(*def).clone()
            });
            super::default_expr::check_table_defaults(b.env, &after)?;
            let ops = crate::foreign_keys::bind_alter_ops(b, &def, &at.operations, ops)?;
            (
                Ddl::AlterTable {
                    db,
                    table: tname,
                    ops,
                    convert: None,
                },
                vec![],
            )
        }
        S::CreateIndex(ci) => bind_create_index(b, ci)?,
        S::Truncate(t) => {
            if t.table_names.len() != 1 {
                return Err(crate::parser::syntax_error("", 0));
            }
            let (db, tname) = b.table_name(&t.table_names[0].name)?;
            if b.resolve_table(&db, &tname)?.sequence {
                return Err(crate::sequences::no_such_option(&db, &tname));
            }
            (Ddl::TruncateTable { db, table: tname }, vec![])
        }
        S::RenameTable(rs) => {
            let mut renames = Vec::new();
            for r in rs {
                renames.push((b.table_name(&r.old_name)?, b.table_name(&r.new_name)?));
            }
            (Ddl::RenameTables { renames }, vec![])
        }
        _ => return Ok(None),
    }))
}

/// `DROP TABLE`, `DROP DATABASE | SCHEMA`, `DROP INDEX ... ON t`.
fn bind_drop(
    b: &Binder,
    object_type: &sq::ObjectType,
    if_exists: bool,
    names: &[sq::ObjectName],
    table: Option<&sq::ObjectName>,
    temporary: bool,
) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    if temporary {
        return Err(unsupported("DROP TEMPORARY TABLE"));
    }
    Ok(match object_type {
        sq::ObjectType::Table => {
            let mut tables = Vec::new();
            for n in names {
                tables.push(b.table_name(n)?);
            }
            (Ddl::DropTables { tables, if_exists }, vec![])
        }
        sq::ObjectType::Database | sq::ObjectType::Schema => {
            if names.len() != 1 {
                return Err(crate::parser::syntax_error("", 0));
            }
            (
                Ddl::DropDatabase {
                    name: db_name(&names[0])?,
                    if_exists,
                },
                vec![],
            )
        }
        sq::ObjectType::Index => {
            let Some(t) = table else {
                return Err(crate::parser::syntax_error("", 0));
            };
            let (db, tname) = b.table_name(t)?;
            let def = b.resolve_table(&db, &tname)?;
            let name = name_parts(&names[0]).pop().unwrap_or_default();
            let op = if ident_eq(&name, "PRIMARY") {
                sq::AlterTableOperation::DropPrimaryKey {
                    drop_behavior: None,
                }
            } else {
                sq::AlterTableOperation::DropIndex {
                    name: sq::Ident::new(name),
                }
            };
            let ops = bind_alter(&def, std::slice::from_ref(&op))?;
            let ops = crate::foreign_keys::bind_alter_ops(b, &def, &[op], ops)?;
            (
                Ddl::AlterTable {
                    db,
                    table: tname,
                    ops,
                    convert: None,
                },
                vec![],
            )
        }
        other => return Err(unsupported(&format!("DROP {other}"))),
    })
}

/// `CREATE [UNIQUE] INDEX name ON t (...)`: an ALTER TABLE adding the index.
fn bind_create_index(b: &Binder, ci: &sq::CreateIndex) -> Result<(Ddl, Vec<SqlError>), SqlError> {
    let (db, tname) = b.table_name(&ci.table_name)?;
    let def = b.resolve_table(&db, &tname)?;
    let Some(name) = &ci.name else {
        return Err(crate::parser::syntax_error("", 0));
    };
    let iname = name_parts(name).pop().unwrap_or_default();
    let c = if ci.unique {
        sq::TableConstraint::Unique(sq::UniqueConstraint {
            name: None,
            index_name: Some(sq::Ident::new(iname)),
            index_type_display: sq::KeyOrIndexDisplay::None,
            index_type: None,
            columns: ci.columns.clone(),
            include: vec![],
            index_options: vec![],
            characteristics: None,
            nulls_distinct: sq::NullsDistinctOption::None,
        })
    } else {
        sq::TableConstraint::Index(sq::IndexConstraint {
            display_as_key: false,
            name: Some(sq::Ident::new(iname)),
            index_type: None,
            columns: ci.columns.clone(),
            index_options: vec![],
        })
    };
    let ops = bind_alter(
        &def,
        &[sq::AlterTableOperation::AddConstraint {
            constraint: c,
            not_valid: false,
        }],
    )?;
    Ok((
        Ddl::AlterTable {
            db,
            table: tname,
            ops,
            convert: None,
        },
        vec![],
    ))
}
