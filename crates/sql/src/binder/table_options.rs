//! Table options of CREATE TABLE and ALTER TABLE, checked as MariaDB 10.11 checks them with
//! InnoDB, into the engine's [`TableOptionSet`]:
//! - `ENGINE`: the storage engines MariaDB ships enabled (InnoDB, MyISAM, Aria, MEMORY,
//!   CSV, MRG_MyISAM; `HEAP` and `MERGE` are their old names), spelled as MariaDB spells
//!   them; any other name is 1286. Every table is stored in RocksDB: the name is kept
//!   for SHOW CREATE TABLE and information_schema.
//! - `AUTO_INCREMENT`, `COMMENT`, `[DEFAULT] CHARSET` / `COLLATE` (`DEFAULT`: the server's).
//! - The create options MariaDB keeps and shows: `ROW_FORMAT` (FIXED and PAGE are not
//!   InnoDB's: 1478), the tri-state `PACK_KEYS`, `STATS_PERSISTENT`, `STATS_AUTO_RECALC`,
//!   `PAGE_CHECKSUM`, `TRANSACTIONAL` (0, 1 or DEFAULT), the flags `CHECKSUM` and
//!   `DELAY_KEY_WRITE` (any number; 0 removes them), `MIN_ROWS` / `MAX_ROWS` (capped at
//!   4294967295), `AVG_ROW_LENGTH`, `KEY_BLOCK_SIZE` (0 removes them), and
//!   `STATS_SAMPLE_PAGES` (1 to 65535 or DEFAULT). A value outside these is a syntax error,
//!   as in MariaDB's grammar.
//! - `CONVERT TO CHARACTER SET cs [COLLATE c]` (ALTER only): every text column and the
//!   table's default take the collation.
//! - DATA DIRECTORY, INDEX DIRECTORY, CONNECTION, PASSWORD, INSERT_METHOD, UNION and
//!   TABLESPACE name files and engines onelog does not have: accepted and not kept.

use onelog_engine::TableOptionSet;

use super::ddl::charset_collation;
use super::*;

/// Bound table options: what the table's definition takes, and the collation of a
/// `CONVERT TO CHARACTER SET`.
#[derive(Debug, Default)]
pub(super) struct BoundOptions {
    pub set: TableOptionSet,
    pub convert: Option<Collation>,
}

/// MariaDB's name of a storage engine it ships enabled; None for any other name.
fn engine_name(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_lowercase().as_str() {
        "innodb" => "InnoDB",
        "myisam" => "MyISAM",
        "aria" => "Aria",
        "memory" | "heap" => "MEMORY",
        "csv" => "CSV",
        "mrg_myisam" | "merge" | "mrg_isam" => "MRG_MyISAM",
        _ => return None,
    })
}

/// An option value's text: a number, a string, or a word.
fn value_text(e: &sq::Expr) -> String {
    match e {
        sq::Expr::Value(v) => match &v.value {
            sq::Value::Number(n, _) => n.clone(),
            sq::Value::SingleQuotedString(s) | sq::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        sq::Expr::Identifier(i) => i.value.clone(),
        other => other.to_string(),
    }
}

/// MariaDB's syntax error at an option's value.
fn bad_value(v: &str) -> SqlError {
    crate::parser::syntax_error(v, 0)
}

fn number(v: &str) -> Result<u64, SqlError> {
    v.parse().map_err(|_| bad_value(v))
}

/// A create option's shown value (None: not shown) from its value as written.
fn create_option(key: &str, v: &str, engine: &str) -> Result<Option<String>, SqlError> {
    let default = v.eq_ignore_ascii_case("DEFAULT");
    Ok(match key {
        "ROW_FORMAT" => {
            let f = v.to_ascii_uppercase();
            match f.as_str() {
                "DEFAULT" => None,
                "DYNAMIC" | "COMPRESSED" | "REDUNDANT" | "COMPACT" => Some(f),
                "FIXED" | "PAGE" if engine == "InnoDB" => return Err(err(
                    code::ER_ILLEGAL_HA_CREATE_OPTION,
                    "Table storage engine 'InnoDB' does not support the create option 'ROW_TYPE'",
                )),
                "FIXED" | "PAGE" => Some(f),
                _ => return Err(bad_value(v)),
            }
        }
        "PACK_KEYS" | "STATS_PERSISTENT" | "STATS_AUTO_RECALC" | "PAGE_CHECKSUM"
        | "TRANSACTIONAL" => match v {
            _ if default => None,
            "0" | "1" => Some(v.to_string()),
            _ => return Err(bad_value(v)),
        },
        "CHECKSUM" | "DELAY_KEY_WRITE" => (number(v)? != 0).then(|| "1".to_string()),
        "MIN_ROWS" | "MAX_ROWS" => {
            let n = number(v)?.min(u64::from(u32::MAX));
            (n != 0).then(|| n.to_string())
        }
        "AVG_ROW_LENGTH" | "KEY_BLOCK_SIZE" => {
            let n = number(v)?;
            (n != 0).then(|| n.to_string())
        }
        "STATS_SAMPLE_PAGES" => match v {
            _ if default => None,
            _ => match number(v)? {
                n @ 1..=65535 => Some(n.to_string()),
                _ => return Err(bad_value(v)),
            },
        },
        _ => None,
    })
}

/// Binds a list of table options. `engine` is the table's engine before them (for the
/// options an engine refuses); a later ENGINE in the list counts from there on.
pub(super) fn bind_table_options(
    list: &[sq::SqlOption],
    engine: &str,
) -> Result<BoundOptions, SqlError> {
    let mut out = BoundOptions::default();
    let mut engine = engine.to_string();
    let mut charset: Option<String> = None;
    let mut collation: Option<String> = None;
    let mut convert: Option<(String, Option<String>)> = None;
    for o in list {
        let (key, v) = match o {
            sq::SqlOption::KeyValue { key, value } => (key.value.to_uppercase(), value_text(value)),
            sq::SqlOption::Comment(sq::CommentDef::WithEq(c) | sq::CommentDef::WithoutEq(c)) => {
                ("COMMENT".to_string(), c.clone())
            }
            sq::SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("ENGINE") =>
            {
                let name = l.name.as_ref().map(|n| n.value.clone()).unwrap_or_default();
                ("ENGINE".to_string(), name)
            }
            _ => continue,
        };
        match key.as_str() {
            "ENGINE" => {
                let e = engine_name(&v).ok_or_else(|| {
                    err(
                        code::ER_UNKNOWN_STORAGE_ENGINE,
                        format!("Unknown storage engine '{v}'"),
                    )
                })?;
                engine = e.to_string();
                out.set.engine = Some(engine.clone());
            }
            "AUTO_INCREMENT" => out.set.auto_increment = Some(number(&v)?),
            "COMMENT" => out.set.comment = Some(v),
            "CHARSET" | "DEFAULT CHARSET" | "CHARACTER SET" | "DEFAULT CHARACTER SET" => {
                charset = Some(v)
            }
            "COLLATE" | "DEFAULT COLLATE" => collation = Some(v),
            "CONVERT CHARSET" => convert = Some((v, None)),
            "CONVERT COLLATE" => {
                if let Some((_, c)) = &mut convert {
                    *c = Some(v);
                }
            }
            k if onelog_engine::CREATE_OPTION_ORDER.contains(&k) => {
                let shown = create_option(k, &v, &engine)?;
                out.set.create_options.push((k.to_string(), shown));
            }
            _ => {}
        }
    }
    let server_default = |cs: Option<String>| cs.filter(|c| !c.eq_ignore_ascii_case("DEFAULT"));
    if charset.is_some() || collation.is_some() {
        let charset = server_default(charset);
        let collation = server_default(collation);
        out.set.collation = Some(
            charset_collation(charset.as_deref(), collation.as_deref())?
                .unwrap_or(Collation::DEFAULT),
        );
    }
    if let Some((cs, coll)) = convert {
        let c = charset_collation(server_default(Some(cs)).as_deref(), coll.as_deref())?
            .unwrap_or(Collation::DEFAULT);
        out.convert = Some(c);
        out.set.collation = Some(c);
    }
    Ok(out)
}

/// A text column's type with collation `c` (what CONVERT TO CHARACTER SET makes of it);
/// None for a column that is not text.
pub(super) fn converted_type(ty: &ColumnType, c: Collation) -> Option<ColumnType> {
    Some(match ty {
        ColumnType::Char {
            len, binary: false, ..
        } => ColumnType::char(*len, c),
        ColumnType::Varchar {
            len, binary: false, ..
        } => ColumnType::varchar(*len, c),
        ColumnType::Blob {
            len_bytes,
            binary: false,
            ..
        } => ColumnType::text(*len_bytes, c),
        ColumnType::Enum { elems, .. } => ColumnType::Enum {
            elems: *elems,
            collation: c,
        },
        ColumnType::Set { elems, .. } => ColumnType::Set {
            elems: *elems,
            collation: c,
        },
        _ => return None,
    })
}
