//! Scalar functions (CONCAT, SUBSTRING, IF, COALESCE, date parts, MD5, ...), with more
//! string functions in `text.rs`, math in `math.rs`, JSON in `json.rs` and the date
//! functions in `crate::dates`. Functions whose value is fixed for a statement (NOW(),
//! DATABASE(), VERSION(), CONNECTION_ID(), LAST_INSERT_ID(), ROW_COUNT()) are folded to
//! constants by the binder.

use crate::user_locks::UserLockFn;
use onelog_types::{code, Collation, ColumnType, DateTime, Decimal, Value};

use crate::dates::{self, Unit};
use crate::expr::{
    self, compare, eval, to_bytes, to_decimal, to_f64, to_i64, to_string, truth, Ctx, EvalResult,
    Expr,
};

mod inet6;
mod json;
mod math;
mod text;
pub use json::JsonFn;
pub use math::MathFn;
pub use text::TextFn;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Concat,
    ConcatWs,
    Repeat,
    Length,
    CharLength,
    Substring,
    Upper,
    Lower,
    Coalesce,
    IfNull,
    NullIf,
    If,
    Abs,
    Round,
    Truncate,
    Floor,
    Ceil,
    Greatest,
    Least,
    Rand,
    Md5,
    Sha1,
    Left,
    Right,
    Trim,
    LTrim,
    RTrim,
    Replace,
    Reverse,
    Lpad,
    Rpad,
    Instr,
    Locate,
    Hex,
    Space,
    Ascii,
    Sign,
    Pow,
    Sqrt,
    DateFn,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    FromUnixtime,
    UnixTimestamp,
    ToDays,
    IsNullFn,
    Field,
    Crc32,
    Sleep,
    /// GET_LOCK, RELEASE_LOCK, ... (`crate::user_locks`).
    UserLock(crate::user_locks::UserLockFn),
    /// NEXTVAL, LASTVAL, SETVAL (`crate::sequences`; args: the sequence's database and
    /// name as strings, then SETVAL's values).
    Sequence(crate::sequences::SeqFn),
    /// `date ± INTERVAL amount unit` (args: date, amount; see dates.rs).
    AddInterval(dates::AddOp),
    /// `TIMESTAMPDIFF(unit, a, b)` (args: a, b).
    TimestampDiff(Unit),
    DateDiff,
    /// Calendar, time-of-day and formatting functions (dates/calendar.rs).
    Cal(dates::CalFn),
    /// More string functions (text.rs).
    Text(TextFn),
    /// Logarithms and trigonometry (math.rs).
    Math(MathFn),
    /// JSON functions (json.rs).
    Json(JsonFn),
    /// A value as the text protocol shows it for a column of the wire type: a ZEROFILL
    /// column's padded with zeros to its display length, a FLOAT's with 6 significant
    /// digits, a FLOAT(M,D)'s with D decimals. The binder wraps such values where a
    /// string is wanted; not callable by name.
    ZeroFill(onelog_protocol::WireType),
    /// GREATEST / LEAST (`true` / `false`) of UUID/INET6 sort keys, compared byte by
    /// byte: the binder converts the arguments to keys and the result back to text; not
    /// callable by name.
    KeyExtreme(bool),
}

impl Func {
    /// Whether each call may give a different result or have an effect (RAND, SLEEP): such
    /// calls are never folded into constants nor hoisted out of the rows they run for.
    pub fn volatile(self) -> bool {
        matches!(self, Func::Rand | Func::Sleep)
            || self.needs_host()
            || matches!(self, Func::Text(t) if t.volatile())
    }

    /// Whether a call runs through the session (user-level locks, sequences): the
    /// statement then needs the session and a transaction even without tables.
    pub fn needs_host(self) -> bool {
        matches!(self, Func::UserLock(_) | Func::Sequence(_))
    }
}

/// The largest argument count of a function that takes any number of arguments.
pub(crate) const MANY: usize = usize::MAX;

/// Looks a function up by name: (function, min args, max args).
pub fn lookup(name: &str) -> Option<(Func, usize, usize)> {
    use Func::*;
    Some(match name {
        "concat" => (Concat, 1, MANY),
        "concat_ws" => (ConcatWs, 2, MANY),
        "repeat" => (Repeat, 2, 2),
        "length" | "octet_length" => (Length, 1, 1),
        "char_length" | "character_length" => (CharLength, 1, 1),
        "substring" | "substr" | "mid" => (Substring, 2, 3),
        "upper" | "ucase" => (Upper, 1, 1),
        "lower" | "lcase" => (Lower, 1, 1),
        "coalesce" => (Coalesce, 1, MANY),
        "ifnull" | "nvl" => (IfNull, 2, 2),
        "nullif" => (NullIf, 2, 2),
        "if" => (If, 3, 3),
        "abs" => (Abs, 1, 1),
        "round" => (Round, 1, 2),
        "truncate" => (Truncate, 2, 2),
        "floor" => (Floor, 1, 1),
        "ceil" | "ceiling" => (Ceil, 1, 1),
        "greatest" => (Greatest, 2, MANY),
        "least" => (Least, 2, MANY),
        "rand" => (Rand, 0, 1),
        "md5" => (Md5, 1, 1),
        "sha1" | "sha" => (Sha1, 1, 1),
        "left" => (Left, 2, 2),
        "right" => (Right, 2, 2),
        "trim" => (Trim, 1, 1),
        "ltrim" => (LTrim, 1, 1),
        "rtrim" => (RTrim, 1, 1),
        "replace" => (Replace, 3, 3),
        "reverse" => (Reverse, 1, 1),
        "lpad" => (Lpad, 3, 3),
        "rpad" => (Rpad, 3, 3),
        "instr" => (Instr, 2, 2),
        "locate" => (Locate, 2, 3),
        "hex" => (Hex, 1, 1),
        "space" => (Space, 1, 1),
        "ascii" => (Ascii, 1, 1),
        "sign" => (Sign, 1, 1),
        "pow" | "power" => (Pow, 2, 2),
        "sqrt" => (Sqrt, 1, 1),
        "date" => (DateFn, 1, 1),
        "year" => (Year, 1, 1),
        "month" => (Month, 1, 1),
        "day" | "dayofmonth" => (Day, 1, 1),
        "hour" => (Hour, 1, 1),
        "minute" => (Minute, 1, 1),
        "second" => (Second, 1, 1),
        "from_unixtime" => (FromUnixtime, 1, 1),
        "unix_timestamp" => (UnixTimestamp, 1, 1),
        "to_days" => (ToDays, 1, 1),
        "isnull" => (IsNullFn, 1, 1),
        "field" => (Field, 2, MANY),
        "crc32" => (Crc32, 1, 1),
        "sleep" => (Sleep, 1, 1),
        "get_lock" => (UserLock(UserLockFn::Get), 2, 2),
        "release_lock" => (UserLock(UserLockFn::Release), 1, 1),
        "release_all_locks" => (UserLock(UserLockFn::ReleaseAll), 0, 0),
        "is_free_lock" => (UserLock(UserLockFn::IsFree), 1, 1),
        "is_used_lock" => (UserLock(UserLockFn::IsUsed), 1, 1),
        "datediff" => (DateDiff, 2, 2),
        other => {
            if let Some((f, min, max)) = dates::CalFn::lookup(other) {
                (Cal(f), min, max)
            } else if let Some((f, min, max)) = TextFn::lookup(other) {
                (Text(f), min, max)
            } else if let Some((f, min, max)) = JsonFn::lookup(other) {
                (Json(f), min, max)
            } else {
                let (f, min, max) = MathFn::lookup(other)?;
                (Math(f), min, max)
            }
        }
    })
}

/// The result type of a function call given its argument types (for column metadata).
pub fn result_type(f: Func, args: &[ColumnType]) -> ColumnType {
    use Func::*;
    let varchar = |len: u32| ColumnType::varchar(len, Collation::DEFAULT);
    let bigint = ColumnType::Int {
        bytes: 8,
        unsigned: false,
    };
    match f {
        Length | CharLength | Instr | Locate | Ascii | Sign | Year | Month | Day | Hour
        | Minute | Second | ToDays | IsNullFn | Field | Sleep => bigint,
        UserLock(crate::user_locks::UserLockFn::IsUsed) => ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
        UserLock(_) => ColumnType::Int {
            bytes: 4,
            unsigned: false,
        },
        Sequence(_) => bigint,
        Crc32 => ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
        UnixTimestamp => bigint,
        Rand | Pow | Sqrt => ColumnType::Double,
        // FLOOR/CEIL of a DECIMAL: its integer digits (one more for the carry), no
        // fraction; an INT or BIGINT when they fit (MariaDB's types).
        Floor | Ceil => match args.first().copied() {
            Some(ColumnType::Decimal { precision, scale }) => {
                match precision.saturating_sub(scale) + 1 {
                    0..=9 => ColumnType::Int {
                        bytes: 4,
                        unsigned: false,
                    },
                    10..=18 => bigint,
                    p => ColumnType::Decimal {
                        precision: p.min(65),
                        scale: 0,
                    },
                }
            }
            other => other.unwrap_or(bigint),
        },
        // ABS of a FLOAT is a DOUBLE, as in MariaDB.
        Abs if args.first() == Some(&ColumnType::Float) => ColumnType::Double,
        Abs | Round | Truncate => args.first().copied().unwrap_or(bigint),
        DateDiff => ColumnType::Int {
            bytes: 4,
            unsigned: false,
        },
        Cal(c) => dates::fn_type(c, args),
        Text(t) => text::text_type(t),
        Math(_) => ColumnType::Double,
        Json(j) => json::json_type(j),
        TimestampDiff(_) => bigint,
        AddInterval(op) => interval_type(op, args),
        Md5 => varchar(32),
        Sha1 => varchar(40),
        ZeroFill(w) => varchar(w.length),
        DateFn => ColumnType::Date,
        FromUnixtime => ColumnType::DateTime { fsp: 0 },
        Greatest | Least => merged_type(args).unwrap_or(varchar(255)),
        Coalesce | IfNull => result_type_of(args).unwrap_or(varchar(255)),
        If => result_type_of(args.get(1..).unwrap_or(&[])).unwrap_or(varchar(255)),
        NullIf => args.first().copied().unwrap_or(varchar(255)),
        _ => varchar(255),
    }
}

/// The type of `date + INTERVAL amount unit` given the types of date and amount (see
/// dates.rs): DATE for a DATE and whole days, TIME for a TIME, DATETIME with the fraction
/// digits the amount brings for dates and datetimes, else a string.
fn interval_type(op: dates::AddOp, args: &[ColumnType]) -> ColumnType {
    let unit = op.unit;
    let amount_fsp = match (unit, args.get(1)) {
        (u, _) if u.has_micro() => 6,
        (Unit::Second, Some(ColumnType::Decimal { scale, .. })) => (*scale).min(6),
        (Unit::Second, Some(ColumnType::Double | ColumnType::Float))
        | (Unit::Second, Some(ColumnType::Char { .. } | ColumnType::Varchar { .. })) => 6,
        _ => 0,
    };
    match args.first() {
        Some(ColumnType::Date) if !unit.has_time() => ColumnType::Date,
        Some(ColumnType::Date) => ColumnType::DateTime { fsp: amount_fsp },
        Some(ColumnType::DateTime { fsp }) | Some(ColumnType::Timestamp { fsp }) => {
            ColumnType::DateTime {
                fsp: (*fsp).max(amount_fsp),
            }
        }
        Some(ColumnType::Time { fsp }) => ColumnType::Time {
            fsp: (*fsp).max(amount_fsp),
        },
        // MariaDB types the string form as CHAR (MYSQL_TYPE_STRING) of a datetime's length.
        _ => ColumnType::char(
            if amount_fsp > 0 || op.six { 26 } else { 19 },
            Collation::DEFAULT,
        ),
    }
}

/// The type of a function that returns one of `args` (COALESCE, IFNULL, IF's branches):
/// NULL literals (typed `VARBINARY(0)`) don't count, and strings merge to the longest,
/// binary only if every one is binary (`COALESCE(NULL, 'x')` is text, as in MariaDB).
/// The type of a value that is one of `args` (IF, IFNULL, COALESCE, CASE): MariaDB's type
/// aggregation for results, as a UNION column's, over the arguments that are not NULL
/// literals (None without arguments).
pub fn result_type_of(args: &[ColumnType]) -> Option<ColumnType> {
    let null = ColumnType::varchar(0, Collation::Binary);
    args.iter()
        .copied()
        .filter(|t| *t != null)
        .reduce(crate::binder::union_type)
        .or_else(|| args.first().copied())
}

fn merged_type(args: &[ColumnType]) -> Option<ColumnType> {
    let null = ColumnType::varchar(0, Collation::Binary);
    let typed: Vec<ColumnType> = args.iter().copied().filter(|t| *t != null).collect();
    let Some(first) = typed.first().copied() else {
        return args.first().copied();
    };
    let str_len = |t: &ColumnType| match *t {
        ColumnType::Char { len, binary, .. } | ColumnType::Varchar { len, binary, .. } => {
            Some((len, binary))
        }
        _ => None,
    };
    let strs: Option<Vec<(u32, bool)>> = typed.iter().map(str_len).collect();
    match strs {
        Some(v) if v.len() > 1 => Some(ColumnType::varchar(
            v.iter().map(|x| x.0).max().unwrap_or(0),
            if v.iter().all(|x| x.1) {
                Collation::Binary
            } else {
                Collation::DEFAULT
            },
        )),
        _ => Some(first),
    }
}

fn arg(args: &[Expr], i: usize, cx: &Ctx) -> EvalResult<Value> {
    match args.get(i) {
        Some(e) => eval(e, cx),
        None => Ok(Value::Null),
    }
}

fn text(v: Value) -> Value {
    v
}

fn chars(v: &Value) -> Vec<char> {
    to_string(v).chars().collect()
}

/// A date or datetime argument (a string read as one); None for NULL or unreadable text.
pub(crate) fn datetime_arg(v: &Value) -> Option<DateTime> {
    match v {
        Value::DateTime(d) => Some(*d),
        Value::Date(d) => Some(dates::midnight(*d)),
        Value::Null => None,
        other => expr::parse_datetime(&to_string(other)).map(|x| x.0),
    }
}

pub fn call(f: Func, args: &[Expr], cx: &Ctx) -> EvalResult<Value> {
    use Func::*;
    // Functions that do not propagate NULL from every argument.
    match f {
        Coalesce => {
            for a in args {
                let v = eval(a, cx)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            return Ok(Value::Null);
        }
        IfNull => {
            let v = arg(args, 0, cx)?;
            return if v.is_null() { arg(args, 1, cx) } else { Ok(v) };
        }
        If => {
            let c = arg(args, 0, cx)?;
            return if truth(&c) == Some(true) {
                arg(args, 1, cx)
            } else {
                arg(args, 2, cx)
            };
        }
        NullIf => {
            let a = arg(args, 0, cx)?;
            let b = arg(args, 1, cx)?;
            return Ok(
                if compare(&a, &b, Collation::DEFAULT) == Some(std::cmp::Ordering::Equal) {
                    Value::Null
                } else {
                    a
                },
            );
        }
        ConcatWs => {
            let sep = arg(args, 0, cx)?;
            if sep.is_null() {
                return Ok(Value::Null);
            }
            let sep = to_bytes(&sep);
            let mut out = Vec::new();
            let mut first = true;
            for a in &args[1..] {
                let v = eval(a, cx)?;
                if v.is_null() {
                    continue;
                }
                if !first {
                    out.extend_from_slice(&sep);
                }
                first = false;
                out.extend_from_slice(&to_bytes(&v));
            }
            return Ok(Value::Bytes(out));
        }
        IsNullFn => return Ok(expr::bool_val(arg(args, 0, cx)?.is_null())),
        Text(TextFn::Quote) => return text::call_text(TextFn::Quote, &[arg(args, 0, cx)?]),
        Text(
            t @ (TextFn::IsIpv4 | TextFn::IsIpv6 | TextFn::IsIpv4Compat | TextFn::IsIpv4Mapped),
        ) => return Ok(inet6::call(t, &arg(args, 0, cx)?)),
        Json(j) if j.takes_null() => {
            let vals = args
                .iter()
                .map(|a| eval(a, cx))
                .collect::<EvalResult<Vec<_>>>()?;
            return Ok(json::call_json(j, &vals));
        }
        // ELT(n, ...): only n and the chosen argument matter.
        Text(TextFn::Elt) => {
            let n = arg(args, 0, cx)?;
            if n.is_null() {
                return Ok(Value::Null);
            }
            return match usize::try_from(to_i64(&n)) {
                Ok(i) if i >= 1 && i < args.len() => arg(args, i, cx),
                _ => Ok(Value::Null),
            };
        }
        Rand => {
            use rand::Rng;
            return Ok(Value::Double(rand::thread_rng().gen::<f64>()));
        }
        Sleep => return sleep(&arg(args, 0, cx)?, cx),
        Sequence(f) => {
            let vals = args
                .iter()
                .map(|a| eval(a, cx))
                .collect::<EvalResult<Vec<_>>>()?;
            return cx.subs()?.sequence(f, &vals);
        }
        UserLock(f) => {
            let name = match args.first() {
                Some(a) => match eval(a, cx)? {
                    Value::Null => None,
                    v => Some(crate::expr::to_string(&v)),
                },
                None => None,
            };
            let mut timeout = 0.0;
            if let Some(a) = args.get(1) {
                let v = eval(a, cx)?;
                timeout = to_f64(&v);
                // A NULL or negative timeout: NULL and warning 1411 (MariaDB).
                if v.is_null() || timeout.trunc() < 0.0 {
                    let shown = if v.is_null() {
                        "NULL".to_string()
                    } else {
                        crate::expr::to_string(&v)
                    };
                    cx.subs()?.warn(crate::sql_err(
                        code::ER_WRONG_VALUE_FOR_TYPE,
                        format!("Incorrect timeout value: '{shown}' for function get_lock"),
                    ));
                    return Ok(Value::Null);
                }
            }
            return cx.subs()?.user_lock(f, name.as_deref(), timeout);
        }
        Field => {
            let x = arg(args, 0, cx)?;
            if x.is_null() {
                return Ok(Value::Int(0));
            }
            for (i, a) in args[1..].iter().enumerate() {
                let v = eval(a, cx)?;
                if compare(&x, &v, Collation::DEFAULT) == Some(std::cmp::Ordering::Equal) {
                    return Ok(Value::Int(i as i64 + 1));
                }
            }
            return Ok(Value::Int(0));
        }
        _ => {}
    }
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        let v = eval(a, cx)?;
        if v.is_null() {
            return Ok(Value::Null);
        }
        vals.push(v);
    }
    Ok(match f {
        Concat | Repeat | Length | CharLength | Substring | Upper | Lower | Left | Right | Trim
        | LTrim | RTrim | Replace | Reverse | Lpad | Rpad | Instr | Locate | Hex | Space
        | Ascii | Md5 | Sha1 | Crc32 | ZeroFill(..) => string_values(f, &vals)?,
        Abs | Round | Truncate | Floor | Ceil | Greatest | Least | Sign | Pow | Sqrt => {
            number_values(f, &vals)?
        }
        KeyExtreme(greatest) => key_extreme(greatest, &vals),
        DateFn | Year | Month | Day | Hour | Minute | Second | FromUnixtime | UnixTimestamp
        | ToDays | AddInterval(_) | TimestampDiff(_) | DateDiff | Cal(_) => date_values(f, &vals)?,
        Text(t) => text::call_text(t, &vals)?,
        Math(m) => math::call_math(m, &vals),
        Json(j) => json::call_json(j, &vals),
        Coalesce | IfNull | If | NullIf | ConcatWs | IsNullFn | Rand | Field | Sleep
        | UserLock(_) | Sequence(_) => {
            unreachable!()
        }
    })
}

/// String functions of non-NULL arguments.
fn string_values(f: Func, vals: &[Value]) -> EvalResult<Value> {
    use Func::*;
    let v0 = || vals[0].clone();
    Ok(match f {
        Concat => {
            let mut out = Vec::new();
            for v in vals {
                out.extend_from_slice(&to_bytes(v));
            }
            Value::Bytes(out)
        }
        Repeat => {
            let n = to_i64(&vals[1]).max(0) as usize;
            let s = to_bytes(&vals[0]);
            if s.len().saturating_mul(n) > 64 << 20 {
                return Ok(Value::Null);
            }
            Value::Bytes(s.repeat(n))
        }
        Length => Value::Int(to_bytes(&vals[0]).len() as i64),
        CharLength => Value::Int(chars(&vals[0]).len() as i64),
        Substring => {
            let c = chars(&vals[0]);
            let pos = to_i64(&vals[1]);
            let len = vals.get(2).map(to_i64).unwrap_or(i64::MAX);
            let n = c.len() as i64;
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                return Ok(Value::str(""));
            };
            if start < 0 || start >= n || len <= 0 {
                return Ok(Value::str(""));
            }
            let end = start.saturating_add(len).min(n);
            Value::Bytes(
                c[start as usize..end as usize]
                    .iter()
                    .collect::<String>()
                    .into_bytes(),
            )
        }
        Upper => text(Value::Bytes(
            to_string(&vals[0]).to_uppercase().into_bytes(),
        )),
        Lower => text(Value::Bytes(
            to_string(&vals[0]).to_lowercase().into_bytes(),
        )),
        Left | Right => {
            let c = chars(&vals[0]);
            let n = (to_i64(&vals[1]).max(0) as usize).min(c.len());
            let s: String = if f == Left {
                c[..n].iter().collect()
            } else {
                c[c.len() - n..].iter().collect()
            };
            Value::Bytes(s.into_bytes())
        }
        Trim => Value::Bytes(to_string(&vals[0]).trim_matches(' ').as_bytes().to_vec()),
        LTrim => Value::Bytes(
            to_string(&vals[0])
                .trim_start_matches(' ')
                .as_bytes()
                .to_vec(),
        ),
        RTrim => Value::Bytes(
            to_string(&vals[0])
                .trim_end_matches(' ')
                .as_bytes()
                .to_vec(),
        ),
        Replace => {
            let s = to_string(&vals[0]);
            let from = to_string(&vals[1]);
            if from.is_empty() {
                Value::Bytes(s.into_bytes())
            } else {
                Value::Bytes(s.replace(&from, &to_string(&vals[2])).into_bytes())
            }
        }
        ZeroFill(w) => {
            let mut text = Vec::new();
            onelog_protocol::put_text_value(&mut text, &vals[0], &w);
            Value::Bytes(text)
        }
        Reverse => Value::Bytes(
            chars(&vals[0])
                .iter()
                .rev()
                .collect::<String>()
                .into_bytes(),
        ),
        Lpad | Rpad => {
            let c = chars(&vals[0]);
            let n = to_i64(&vals[1]);
            if n < 0 {
                return Ok(Value::Null);
            }
            let n = n as usize;
            if n > 64 << 20 {
                return Ok(Value::Null);
            }
            let pad = chars(&vals[2]);
            if c.len() >= n {
                Value::Bytes(c[..n].iter().collect::<String>().into_bytes())
            } else if pad.is_empty() {
                Value::Null
            } else {
                let fill: String = pad.iter().cycle().take(n - c.len()).collect();
                let s: String = c.iter().collect();
                Value::Bytes(if f == Lpad { fill + &s } else { s + &fill }.into_bytes())
            }
        }
        Instr | Locate => {
            let (hay, needle) = if f == Instr {
                (to_bytes(&vals[0]), to_bytes(&vals[1]))
            } else {
                (to_bytes(&vals[1]), to_bytes(&vals[0]))
            };
            let from = if f == Locate {
                (vals.get(2).map(to_i64).unwrap_or(1) - 1).max(0) as usize
            } else {
                0
            };
            // As MariaDB: at each character of the haystack, the next bytes as long as the
            // needle compare under the connection collation (case-insensitive; an accented
            // letter only matches one of the same UTF-8 length).
            let starts = hay
                .iter()
                .enumerate()
                .filter(|(_, b)| **b & 0xC0 != 0x80)
                .map(|(i, _)| i);
            let mut pos = 0;
            if needle.is_empty() {
                pos = from + 1;
            } else {
                for (k, i) in starts.enumerate().skip(from) {
                    let Some(window) = hay.get(i..i + needle.len()) else {
                        break;
                    };
                    if Collation::weights(window).eq(Collation::weights(&needle)) {
                        pos = k + 1;
                        break;
                    }
                }
            }
            Value::Int(pos as i64)
        }
        Hex => match v0() {
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_) => {
                Value::Bytes(format!("{:X}", expr::to_i128(&vals[0]) as u64).into_bytes())
            }
            other => Value::Bytes(hex(&to_bytes(&other)).to_uppercase().into_bytes()),
        },
        Space => {
            let n = to_i64(&vals[0]).clamp(0, 64 << 20) as usize;
            Value::Bytes(vec![b' '; n])
        }
        Ascii => Value::Int(to_bytes(&vals[0]).first().copied().unwrap_or(0) as i64),
        Md5 => Value::Bytes(hex(&md5(&to_bytes(&vals[0]))).into_bytes()),
        Sha1 => {
            use sha1::{Digest, Sha1 as H};
            Value::Bytes(hex(&H::digest(to_bytes(&vals[0]))).into_bytes())
        }
        Crc32 => Value::UInt(crc32(&to_bytes(&vals[0])) as u64),
        _ => unreachable!("{f:?} is not a string function"),
    })
}

/// Numeric functions of non-NULL arguments.
/// [`Func::KeyExtreme`]: the greatest (or least) of sort keys `vals` (none NULL).
fn key_extreme(greatest: bool, vals: &[Value]) -> Value {
    let mut best = &vals[0];
    for v in &vals[1..] {
        let o = compare(v, best, Collation::Binary).unwrap_or(std::cmp::Ordering::Equal);
        if (greatest && o.is_gt()) || (!greatest && o.is_lt()) {
            best = v;
        }
    }
    best.clone()
}

fn number_values(f: Func, vals: &[Value]) -> EvalResult<Value> {
    use Func::*;
    let v0 = || vals[0].clone();
    Ok(match f {
        Abs => match v0() {
            Value::Int(i) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| crate::sql_err(1690, "BIGINT value is out of range"))?,
            ),
            Value::UInt(u) => Value::UInt(u),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            other => Value::Double(to_f64(&other).abs()),
        },
        Round | Truncate => {
            let digits = vals.get(1).map(to_i64).unwrap_or(0);
            let trunc = f == Truncate;
            match v0() {
                Value::Int(_) | Value::UInt(_) if digits >= 0 => v0(),
                Value::Double(d) => {
                    let p = 10f64.powi(digits.clamp(-30, 30) as i32);
                    let r = if trunc {
                        (d * p).trunc() / p
                    } else {
                        (d * p).round() / p
                    };
                    Value::Double(r)
                }
                other => {
                    let d = to_decimal(&other).unwrap_or(Decimal::new(0, 0));
                    let r = crate::expr::decimal_ops::round_to(d, digits, trunc)?;
                    if matches!(other, Value::Bytes(_)) {
                        Value::Double(r.to_f64())
                    } else if digits < 0 {
                        match r.narrow().and_then(|m| i64::try_from(m).ok()) {
                            Some(i) => Value::Int(i),
                            None => Value::Decimal(r),
                        }
                    } else {
                        Value::Decimal(r)
                    }
                }
            }
        }
        Floor | Ceil => match v0() {
            Value::Int(_) | Value::UInt(_) => v0(),
            Value::Decimal(d) => {
                let q = crate::expr::decimal_ops::floor_ceil(d, f == Ceil);
                match q.narrow().and_then(|m| i64::try_from(m).ok()) {
                    Some(i) => Value::Int(i),
                    None => Value::Decimal(q),
                }
            }
            other => {
                let x = to_f64(&other);
                let r = if f == Floor { x.floor() } else { x.ceil() };
                if r.abs() < 9e18 {
                    Value::Int(r as i64)
                } else {
                    Value::Double(r)
                }
            }
        },
        Greatest | Least => {
            let mut best = v0();
            for v in &vals[1..] {
                let o = compare(v, &best, Collation::DEFAULT).unwrap_or(std::cmp::Ordering::Equal);
                if (f == Greatest && o.is_gt()) || (f == Least && o.is_lt()) {
                    best = v.clone();
                }
            }
            best
        }
        Sign => {
            let x = to_f64(&vals[0]);
            Value::Int(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            })
        }
        Pow => Value::Double(to_f64(&vals[0]).powf(to_f64(&vals[1]))),
        Sqrt => {
            let x = to_f64(&vals[0]);
            if x < 0.0 {
                Value::Null
            } else {
                Value::Double(x.sqrt())
            }
        }
        _ => unreachable!("{f:?} is not a number function"),
    })
}

/// Date and time functions of non-NULL arguments.
fn date_values(f: Func, vals: &[Value]) -> EvalResult<Value> {
    use Func::*;
    Ok(match f {
        DateFn => match datetime_arg(&vals[0]) {
            Some(d) => Value::Date(d.date),
            None => Value::Null,
        },
        Year | Month | Day | Hour | Minute | Second => {
            let v = &vals[0];
            if let (Value::Time(t), Hour | Minute | Second) = (v, f) {
                return Ok(Value::Int(match f {
                    Hour => t.hours as i64,
                    Minute => t.minute as i64,
                    _ => t.second as i64,
                }));
            }
            match datetime_arg(v) {
                Some(d) => Value::Int(match f {
                    Year => d.date.year as i64,
                    Month => d.date.month as i64,
                    Day => d.date.day as i64,
                    Hour => d.hour as i64,
                    Minute => d.minute as i64,
                    _ => d.second as i64,
                }),
                None => Value::Null,
            }
        }
        FromUnixtime => {
            let s = to_f64(&vals[0]);
            if s < 0.0 {
                Value::Null
            } else {
                Value::DateTime(DateTime::from_unix(s as i64, 0))
            }
        }
        UnixTimestamp => match datetime_arg(&vals[0]) {
            Some(d) => Value::Int(d.unix_seconds().max(0)),
            None => Value::Null,
        },
        ToDays => match datetime_arg(&vals[0]) {
            Some(d) => Value::Int(
                dates::day_number(d.date) as i64 + 719528, // days from year 0
            ),
            None => Value::Null,
        },
        AddInterval(op) => dates::add_interval(&vals[0], &vals[1], op),
        TimestampDiff(unit) => dates::timestamp_diff(unit, &vals[0], &vals[1]),
        DateDiff => dates::date_diff(&vals[0], &vals[1]),
        Cal(c) => dates::call_fn(c, vals),
        _ => unreachable!("{f:?} is not a date function"),
    })
}

/// SLEEP(seconds), as MariaDB's: sleeps for the (fractional) number of seconds and returns
/// 0, or 1 as soon as the statement is killed (KILL QUERY / KILL). NULL or a negative
/// duration returns 0 at once. The sleep counts as a wait for the thread pool.
fn sleep(secs: &Value, cx: &Ctx) -> EvalResult<Value> {
    let secs = if secs.is_null() { 0.0 } else { to_f64(secs) };
    // NaN is not positive either.
    if secs.is_nan() || secs <= 0.0 {
        return Ok(Value::Int(0));
    }
    // Beyond a year is as good as forever (and keeps the Duration in range).
    let total = std::time::Duration::from_secs_f64(secs.min(365.0 * 86_400.0));
    let deadline = std::time::Instant::now() + total;
    let killed = onelog_engine::wait::blocking(|| loop {
        if cx.subs.is_some_and(|s| s.interrupted()) {
            return true;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return false;
        }
        // Wakes at least every 10 ms to notice a kill.
        std::thread::sleep((deadline - now).min(std::time::Duration::from_millis(10)));
    });
    Ok(Value::Int(killed as i64))
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// MD5 (RFC 1321).
pub fn md5(input: &[u8]) -> [u8; 16] {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5,
        9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10,
        15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64)
        .map(|i| ((i as f64 + 1.0).sin().abs() * 4294967296.0) as u32)
        .collect();
    let mut a0: u32 = 0x67452301;
    let mut b0: u32 = 0xefcdab89;
    let mut c0: u32 = 0x98badcfe;
    let mut d0: u32 = 0x10325476;
    let mut msg = input.to_vec();
    let bit_len = (input.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_le_bytes());
    for chunk in msg.chunks(64) {
        let m: Vec<u32> = chunk
            .chunks(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f2 = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f2.rotate_left(S[i]));
        }
        a0 = a0.wrapping_add(a);
        b0 = b0.wrapping_add(b);
        c0 = c0.wrapping_add(c);
        d0 = d0.wrapping_add(d);
    }
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&a0.to_le_bytes());
    out[4..8].copy_from_slice(&b0.to_le_bytes());
    out[8..12].copy_from_slice(&c0.to_le_bytes());
    out[12..16].copy_from_slice(&d0.to_le_bytes());
    out
}

/// REGEXP / RLIKE (POSIX-like syntax as the `regex` crate reads it; case-sensitive).
pub fn simple_regexp(s: &str, pat: &str) -> EvalResult<bool> {
    let re = regex::Regex::new(pat).map_err(|e| {
        crate::sql_err(
            code::ER_WRONG_ARGUMENTS,
            format!("Got error '{e}' from regexp"),
        )
    })?;
    Ok(re.is_match(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_known() {
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
    }
}
