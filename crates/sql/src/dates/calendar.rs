//! Calendar, time-of-day and formatting functions, as MariaDB's: LAST_DAY, DAYOFWEEK,
//! WEEKDAY, DAYOFYEAR, QUARTER, FROM_DAYS, TO_SECONDS, MONTHNAME, DAYNAME, WEEK, YEARWEEK,
//! WEEKOFYEAR, MICROSECOND, EXTRACT, TIME_TO_SEC, SEC_TO_TIME, TIMEDIFF, ADDTIME, SUBTIME,
//! MAKEDATE, MAKETIME, TIME(), TIMESTAMP(), PERIOD_ADD, PERIOD_DIFF, DATE_FORMAT and
//! TIME_FORMAT. Every argument is non-NULL here (a NULL argument makes the call NULL before
//! it gets here); an argument that is not a readable date or time gives NULL.
//!
//! Week numbers follow MariaDB's `calc_week`: a mode's bit 0 makes Monday the first day of
//! the week, bit 1 numbers weeks 1-53 within the week's own year (instead of 0-53 within
//! the date's), bit 2 makes week 1 the first with a first day of the week in it (instead
//! of the first with more than 3 days in the year); modes without bit 0 flip bit 2.

use onelog_types::{civil_from_days, days_from_civil, Collation, ColumnType, Date, DateTime};
use onelog_types::{Decimal, Time, Value};

use super::{
    datetime_of, day_number, days_in_month, from_micros, micros_of, midnight, Unit, MICROS_PER_DAY,
    TIME_MAX_MICROS,
};
use crate::expr::{self, to_string};

/// A calendar or time function (`Func::Cal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalFn {
    LastDay,
    /// 1 = Sunday ... 7 = Saturday.
    DayOfWeek,
    /// 0 = Monday ... 6 = Sunday.
    WeekDay,
    DayOfYear,
    Quarter,
    FromDays,
    ToSeconds,
    MonthName,
    DayName,
    /// WEEK(d[, mode])
    Week,
    /// YEARWEEK(d[, mode])
    YearWeek,
    WeekOfYear,
    Microsecond,
    /// EXTRACT(unit FROM d)
    Extract(Unit),
    TimeToSec,
    SecToTime,
    TimeDiff,
    AddTime,
    SubTime,
    MakeDate,
    MakeTime,
    TimeFn,
    /// TIMESTAMP(d[, t])
    TimestampFn,
    PeriodAdd,
    PeriodDiff,
    DateFormat,
    TimeFormat,
    /// STR_TO_DATE(s, format): the parts its format has (see [`parts_of_format`]).
    StrToDate(Parts),
}

/// Which parts a STR_TO_DATE format fills, deciding the result's type (DATE, TIME or
/// DATETIME; with `%f` six fraction digits). A format that is not a constant: all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub date: bool,
    pub time: bool,
    pub fraction: bool,
}

impl Parts {
    pub const ALL: Parts = Parts {
        date: true,
        time: true,
        fraction: true,
    };
}

/// The parts a STR_TO_DATE format names.
pub fn parts_of_format(fmt: &str) -> Parts {
    let mut p = Parts {
        date: false,
        time: false,
        fraction: false,
    };
    let mut it = fmt.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            continue;
        }
        match it.next() {
            Some('Y' | 'y' | 'm' | 'c' | 'M' | 'b' | 'd' | 'e' | 'D' | 'j' | 'a' | 'W') => {
                p.date = true
            }
            Some('H' | 'k' | 'h' | 'I' | 'l' | 'i' | 's' | 'S' | 'p' | 'T' | 'r') => p.time = true,
            Some('f') => {
                p.time = true;
                p.fraction = true;
            }
            _ => {}
        }
    }
    p
}

impl CalFn {
    /// By name: (function, min args, max args).
    pub fn lookup(name: &str) -> Option<(CalFn, usize, usize)> {
        use CalFn::*;
        Some(match name {
            "last_day" => (LastDay, 1, 1),
            "dayofweek" => (DayOfWeek, 1, 1),
            "weekday" => (WeekDay, 1, 1),
            "dayofyear" => (DayOfYear, 1, 1),
            "quarter" => (Quarter, 1, 1),
            "from_days" => (FromDays, 1, 1),
            "to_seconds" => (ToSeconds, 1, 1),
            "monthname" => (MonthName, 1, 1),
            "dayname" => (DayName, 1, 1),
            "week" => (Week, 1, 2),
            "yearweek" => (YearWeek, 1, 2),
            "weekofyear" => (WeekOfYear, 1, 1),
            "microsecond" => (Microsecond, 1, 1),
            "time_to_sec" => (TimeToSec, 1, 1),
            "sec_to_time" => (SecToTime, 1, 1),
            "timediff" => (TimeDiff, 2, 2),
            "addtime" => (AddTime, 2, 2),
            "subtime" => (SubTime, 2, 2),
            "makedate" => (MakeDate, 2, 2),
            "maketime" => (MakeTime, 3, 3),
            "time" => (TimeFn, 1, 1),
            "timestamp" => (TimestampFn, 1, 2),
            "period_add" => (PeriodAdd, 2, 2),
            "period_diff" => (PeriodDiff, 2, 2),
            "date_format" => (DateFormat, 2, 2),
            "time_format" => (TimeFormat, 2, 2),
            "str_to_date" => (StrToDate(Parts::ALL), 2, 2),
            _ => return None,
        })
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The result type of a call given its argument types.
pub fn fn_type(f: CalFn, args: &[ColumnType]) -> ColumnType {
    use CalFn::*;
    let int = ColumnType::Int {
        bytes: 4,
        unsigned: false,
    };
    let bigint = ColumnType::Int {
        bytes: 8,
        unsigned: false,
    };
    let fsp_of = |t: Option<&ColumnType>| match t {
        Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp })
        | Some(ColumnType::Time { fsp }) => *fsp,
        Some(ColumnType::Decimal { scale, .. }) => (*scale).min(6),
        _ => 0,
    };
    match f {
        LastDay | FromDays | MakeDate => ColumnType::Date,
        DayOfWeek | WeekDay | DayOfYear | Quarter | Week | YearWeek | WeekOfYear | Microsecond
        | Extract(_) | PeriodAdd | PeriodDiff => int,
        ToSeconds => bigint,
        TimeToSec => match fsp_of(args.first()) {
            0 => bigint,
            fsp => ColumnType::Decimal {
                precision: 17 + fsp,
                scale: fsp,
            },
        },
        MonthName | DayName => ColumnType::varchar(9, Collation::DEFAULT),
        SecToTime | MakeTime => ColumnType::Time {
            fsp: fsp_of(args.last()),
        },
        TimeFn => ColumnType::Time {
            fsp: fsp_of(args.first()),
        },
        TimeDiff => ColumnType::Time {
            fsp: fsp_of(args.first()).max(fsp_of(args.get(1))),
        },
        TimestampFn => ColumnType::DateTime {
            fsp: fsp_of(args.first()).max(fsp_of(args.get(1))),
        },
        AddTime | SubTime => match args.first() {
            Some(ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp }) => {
                ColumnType::DateTime { fsp: *fsp }
            }
            Some(ColumnType::Time { fsp }) => ColumnType::Time { fsp: *fsp },
            _ => ColumnType::char(26, Collation::DEFAULT),
        },
        DateFormat | TimeFormat => ColumnType::varchar(64, Collation::DEFAULT),
        StrToDate(p) => {
            let fsp = if p.fraction { 6 } else { 0 };
            match (p.date, p.time) {
                (true, false) => ColumnType::Date,
                (false, true) => ColumnType::Time { fsp },
                _ => ColumnType::DateTime { fsp },
            }
        }
    }
}

/// Calls `f` on non-NULL arguments.
pub fn call_fn(f: CalFn, a: &[Value]) -> Value {
    use CalFn::*;
    let date = || datetime_of(&a[0]);
    let opt = |v: Option<Value>| v.unwrap_or(Value::Null);
    match f {
        LastDay => opt(date().map(|dt| {
            Value::Date(Date {
                day: days_in_month(dt.date.year as i128, dt.date.month as u32),
                ..dt.date
            })
        })),
        DayOfWeek => opt(date().map(|dt| Value::Int((weekday(dt.date) + 1) % 7 + 1))),
        WeekDay => opt(date().map(|dt| Value::Int(weekday(dt.date)))),
        DayOfYear => opt(date().map(|dt| Value::Int(day_of_year(dt.date)))),
        Quarter => opt(date().map(|dt| Value::Int((dt.date.month as i64 + 2) / 3))),
        FromDays => from_days(&a[0]),
        ToSeconds => {
            opt(date().map(|dt| Value::Int((micros_of(&dt) / 1_000_000 + 719_528 * 86_400) as i64)))
        }
        MonthName => opt(date().map(|dt| Value::str(MONTHS[dt.date.month as usize - 1]))),
        DayName => opt(date().map(|dt| Value::str(DAYS[weekday(dt.date) as usize]))),
        Week | YearWeek | WeekOfYear => opt(date().map(|dt| {
            let mode = match (f, a.get(1)) {
                (WeekOfYear, _) => 3,
                (_, Some(m)) => expr::to_i64(m) as u32,
                _ => 0,
            };
            let mut behaviour = week_mode(mode);
            if f == YearWeek {
                behaviour |= WEEK_YEAR;
            }
            let (week, year) = calc_week(dt.date, behaviour);
            Value::Int(if f == YearWeek {
                year * 100 + week
            } else {
                week
            })
        })),
        Microsecond => opt(time_or_datetime(&a[0]).map(|t| Value::Int(t.micro as i64))),
        Extract(unit) => extract(unit, &a[0]),
        // A fraction only from typed values (a string's would need the type to follow the
        // value: MariaDB types a literal by its text; onelog gives whole seconds there).
        TimeToSec => opt(time_or_datetime(&a[0]).map(|t| {
            let us = Time::to_micros(&t) as i128;
            let typed = matches!(a[0], Value::Time(_) | Value::DateTime(_));
            if !typed || us % 1_000_000 == 0 {
                Value::Int((us / 1_000_000) as i64)
            } else {
                let (mut m, mut scale) = (us, 6u8);
                while m % 10 == 0 {
                    m /= 10;
                    scale -= 1;
                }
                Value::Decimal(Decimal::new(m, scale))
            }
        })),
        SecToTime => {
            let us = match expr::to_decimal(&a[0]).and_then(|d| d.rescale(6)) {
                Some(d) => d.narrow().unwrap_or(if d.is_negative() {
                    i128::MIN
                } else {
                    i128::MAX
                }),
                None => return Value::Null,
            };
            Value::Time(Time::from_micros(
                us.clamp(-TIME_MAX_MICROS + 999_999, TIME_MAX_MICROS - 999_999) as i64,
            ))
        }
        TimeDiff => match (moment(&a[0]), moment(&a[1])) {
            (Some(Moment::Day(x)), Some(Moment::Day(y))) => time_result(x - y),
            (Some(Moment::Clock(x)), Some(Moment::Clock(y))) => time_result(x - y),
            _ => Value::Null,
        },
        AddTime | SubTime => {
            let Some(Moment::Clock(d)) = moment(&a[1]) else {
                return Value::Null;
            };
            let d = if f == SubTime { -d } else { d };
            let string = !matches!(a[0], Value::DateTime(_) | Value::Time(_) | Value::Date(_));
            match moment(&a[0]) {
                Some(Moment::Day(x)) => {
                    let us = x + d;
                    if us < 0 || us >= (days_from_civil(9999, 12, 31) as i128 + 1) * MICROS_PER_DAY
                    {
                        return Value::Null;
                    }
                    let dt = from_micros(us);
                    if string {
                        Value::str(&format!("{dt:.p$}", p = if dt.micro != 0 { 6 } else { 0 }))
                    } else {
                        Value::DateTime(dt)
                    }
                }
                Some(Moment::Clock(x)) => match time_result(x + d) {
                    Value::Time(t) if string => {
                        Value::str(&format!("{t:.p$}", p = if t.micro != 0 { 6 } else { 0 }))
                    }
                    other => other,
                },
                None => Value::Null,
            }
        }
        MakeDate => {
            let (mut year, day) = (expr::to_i64(&a[0]), expr::to_i64(&a[1]));
            if !(1..=3_660_000).contains(&day) || !(0..=9999).contains(&year) {
                return Value::Null;
            }
            if year < 100 {
                year += if year < 70 { 2000 } else { 1900 };
            }
            let n = days_from_civil(year, 1, 1) + day - 1;
            if n > days_from_civil(9999, 12, 31) {
                return Value::Null;
            }
            let (y, m, d) = civil_from_days(n);
            Value::Date(Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            })
        }
        MakeTime => {
            let (h, m) = (expr::to_i64(&a[0]), expr::to_i64(&a[1]));
            let s = match expr::to_decimal(&a[2]).and_then(|d| d.rescale(6)) {
                Some(d) => d.narrow().unwrap_or(i128::MAX),
                None => return Value::Null,
            };
            if !(0..60).contains(&m) || !(0..60_000_000).contains(&s) {
                return Value::Null;
            }
            let us = (h.unsigned_abs() as i128 * 3600 + m as i128 * 60) * 1_000_000 + s;
            let us = us.min(TIME_MAX_MICROS - 999_999);
            Value::Time(Time::from_micros(if h < 0 { -us } else { us } as i64))
        }
        TimeFn => opt(time_or_datetime(&a[0]).map(Value::Time)),
        TimestampFn => {
            let Some(dt) = date() else {
                return Value::Null;
            };
            let add = match a.get(1).map(moment) {
                None => 0,
                Some(Some(Moment::Clock(us))) => us,
                Some(_) => return Value::Null,
            };
            let us = micros_of(&dt) + add;
            if us < 0 || us >= (days_from_civil(9999, 12, 31) as i128 + 1) * MICROS_PER_DAY {
                return Value::Null;
            }
            Value::DateTime(from_micros(us))
        }
        PeriodAdd => {
            let (p, n) = (expr::to_i64(&a[0]), expr::to_i64(&a[1]));
            if p == 0 {
                return Value::Int(0);
            }
            let months = period_months(p).saturating_add(n);
            Value::Int((months / 12) * 100 + months % 12 + 1)
        }
        PeriodDiff => {
            let (p, q) = (expr::to_i64(&a[0]), expr::to_i64(&a[1]));
            Value::Int(period_months(p).saturating_sub(period_months(q)))
        }
        StrToDate(p) => opt(str_to_date(&to_string(&a[0]), &to_string(&a[1])).map(|dt| {
            match (p.date, p.time) {
                (true, false) => Value::Date(dt.date),
                (false, true) => Value::Time(clock(&dt)),
                _ => Value::DateTime(dt),
            }
        })),
        DateFormat => opt(date().map(|dt| Value::str(&format(&dt, &to_string(&a[1]), false)))),
        TimeFormat => opt(time_or_datetime(&a[0]).map(|t| {
            let dt = DateTime {
                date: Date {
                    year: 0,
                    month: 0,
                    day: 0,
                },
                hour: t.hours.min(255) as u8,
                minute: t.minute,
                second: t.second,
                micro: t.micro,
            };
            let s = format(&dt, &to_string(&a[1]), true);
            Value::str(&match t.negative {
                true => format!("-{s}"),
                false => s,
            })
        })),
    }
}

/// STR_TO_DATE's reading of `s` by `fmt` (MariaDB's `extract_date_time`): spaces before
/// each field are skipped, a numeric field takes up to its width of digits, names match
/// case-insensitively, other format characters must match; text left over is ignored.
/// The date is not checked (`2024-02-30` and zero parts stay as read). None: no match.
fn str_to_date(s: &str, fmt: &str) -> Option<DateTime> {
    let v = s.as_bytes();
    let mut i = 0;
    let (mut year, mut month, mut day) = (0i64, 0i64, 0i64);
    let (mut hour, mut minute, mut second, mut micro) = (0i64, 0i64, 0i64, 0i64);
    let (mut pm, mut twelve, mut yday) = (None::<bool>, false, None::<i64>);
    let num = |i: &mut usize, width: usize| -> Option<(i64, usize)> {
        let start = *i;
        while *i < v.len() && *i - start < width && v[*i].is_ascii_digit() {
            *i += 1;
        }
        (*i > start).then(|| (s[start..*i].parse().unwrap_or(0), *i - start))
    };
    let name = |i: &mut usize, names: &[&str], short: bool| -> Option<usize> {
        names.iter().position(|n| {
            let n = if short { &n[..3] } else { n };
            let end = *i + n.len();
            if s.get(*i..end).is_some_and(|w| w.eq_ignore_ascii_case(n)) {
                *i = end;
                true
            } else {
                false
            }
        })
    };
    let mut f = fmt.chars().peekable();
    while let Some(c) = f.next() {
        while i < v.len() && v[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= v.len() {
            break;
        }
        if c != '%' || f.peek().is_none() {
            if !c.is_whitespace() {
                if v[i] as char != c {
                    return None;
                }
                i += 1;
            }
            continue;
        }
        match f.next()? {
            'Y' => {
                let (y, n) = num(&mut i, 4)?;
                year = if n <= 2 { two_digit_year(y) } else { y };
            }
            'y' => year = two_digit_year(num(&mut i, 2)?.0),
            'm' | 'c' => month = num(&mut i, 2)?.0,
            'M' => month = name(&mut i, &MONTHS, false)? as i64 + 1,
            'b' => month = name(&mut i, &MONTHS, true)? as i64 + 1,
            'd' | 'e' => day = num(&mut i, 2)?.0,
            'D' => {
                day = num(&mut i, 2)?.0;
                i = (i + 2).min(v.len());
            }
            'j' => yday = Some(num(&mut i, 3)?.0),
            'H' | 'k' => hour = num(&mut i, 2)?.0,
            'h' | 'I' | 'l' => {
                hour = num(&mut i, 2)?.0;
                twelve = true;
            }
            'i' => minute = num(&mut i, 2)?.0,
            's' | 'S' => second = num(&mut i, 2)?.0,
            'f' => {
                let (x, n) = num(&mut i, 6)?;
                micro = x * 10i64.pow(6 - n as u32);
            }
            'p' => {
                let t = s.get(i..i + 2)?;
                pm = Some(match t.to_ascii_uppercase().as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                i += 2;
            }
            'a' => _ = name(&mut i, &DAYS, true)?,
            'W' => _ = name(&mut i, &DAYS, false)?,
            spec @ ('T' | 'r') => {
                hour = num(&mut i, 2)?.0;
                for field in [&mut minute, &mut second] {
                    if v.get(i) != Some(&b':') {
                        return None;
                    }
                    i += 1;
                    *field = num(&mut i, 2)?.0;
                }
                if spec == 'r' {
                    // hh:mm:ss AM/PM
                    twelve = true;
                    while i < v.len() && v[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    pm = match s.get(i..i + 2).map(|t| t.to_ascii_uppercase()) {
                        Some(t) if t == "AM" => Some(false),
                        Some(t) if t == "PM" => Some(true),
                        _ => return None,
                    };
                    i += 2;
                }
            }
            '%' => {
                if v[i] != b'%' {
                    return None;
                }
                i += 1;
            }
            _ => return None,
        }
    }
    if twelve || pm.is_some() {
        if hour > 12 || hour < 1 && twelve {
            return None;
        }
        hour %= 12;
        if pm == Some(true) {
            hour += 12;
        }
    }
    if minute > 59 || second > 59 || hour > 838 {
        return None;
    }
    if let Some(n) = yday {
        if !(1..=366).contains(&n) {
            return None;
        }
        let (y, m, d) = civil_from_days(days_from_civil(year, 1, 1) + n - 1);
        (year, month, day) = (y, m as i64, d as i64);
    }
    if year > 9999 || month > 12 || day > 31 || hour > 23 {
        return None;
    }
    Some(DateTime {
        date: Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        },
        hour: hour as u8,
        minute: minute as u8,
        second: second as u8,
        micro: micro as u32,
    })
}

/// Two-digit years: 00-69 → 2000-2069, 70-99 → 1970-1999.
fn two_digit_year(y: i64) -> i64 {
    match y {
        0..=69 => y + 2000,
        70..=99 => y + 1900,
        _ => y,
    }
}

/// 0 = Monday ... 6 = Sunday (1970-01-01 was a Thursday).
fn weekday(d: Date) -> i64 {
    (day_number(d) + 3).rem_euclid(7) as i64
}

fn day_of_year(d: Date) -> i64 {
    (day_number(d) - days_from_civil(d.year as i64, 1, 1) as i128 + 1) as i64
}

/// `FROM_DAYS(n)`: the date `n` days after year 0's (proleptic) start, as TO_DAYS counts;
/// MariaDB gives `0000-00-00` below day 366 and NULL past 9999.
fn from_days(v: &Value) -> Value {
    let n = expr::to_i128(v);
    if n < 366 {
        return Value::Date(Date {
            year: 0,
            month: 0,
            day: 0,
        });
    }
    let days = n - 719_528; // TO_DAYS('1970-01-01')
    if days > days_from_civil(9999, 12, 31) as i128 {
        return Value::Null;
    }
    let (y, m, d) = civil_from_days(days as i64);
    Value::Date(Date {
        year: y as u16,
        month: m as u8,
        day: d as u8,
    })
}

/// A time of day or duration: a TIME as is, the time part of a DATETIME, a string read as
/// either.
fn time_or_datetime(v: &Value) -> Option<Time> {
    match v {
        Value::Time(t) => Some(*t),
        Value::DateTime(dt) => Some(clock(dt)),
        Value::Date(_) => Some(Time::from_micros(0)),
        other => {
            let s = to_string(other);
            match expr::parse_datetime(&s) {
                Some((dt, true)) => Some(clock(&dt)),
                _ => expr::parse_time(&s),
            }
        }
    }
}

fn clock(dt: &DateTime) -> Time {
    Time {
        negative: false,
        hours: dt.hour as u32,
        minute: dt.minute,
        second: dt.second,
        micro: dt.micro,
    }
}

/// A point in time (microseconds since 1970, for dates and datetimes) or a duration (for
/// times), as TIMEDIFF and ADDTIME tell them apart.
enum Moment {
    Day(i128),
    Clock(i128),
}

fn moment(v: &Value) -> Option<Moment> {
    match v {
        Value::Time(t) => Some(Moment::Clock(t.to_micros() as i128)),
        Value::DateTime(dt) => Some(Moment::Day(micros_of(dt))),
        Value::Date(d) => Some(Moment::Day(micros_of(&midnight(*d)))),
        other => {
            let s = to_string(other);
            match expr::parse_datetime(&s) {
                Some((dt, true)) => Some(Moment::Day(micros_of(&dt))),
                _ => expr::parse_time(&s).map(|t| Moment::Clock(t.to_micros() as i128)),
            }
        }
    }
}

/// A duration as TIME, clamped to TIME's range as MariaDB does.
fn time_result(us: i128) -> Value {
    let max = TIME_MAX_MICROS - 999_999;
    Value::Time(Time::from_micros(us.clamp(-max, max) as i64))
}

/// `YYMM` or `YYYYMM` as months since year 0 (two-digit years: 70-99 → 19xx, else 20xx).
fn period_months(p: i64) -> i64 {
    let (mut y, m) = (p / 100, p % 100);
    if (0..70).contains(&y) {
        y += 2000;
    } else if (70..100).contains(&y) {
        y += 1900;
    }
    y.saturating_mul(12).saturating_add(m - 1)
}

/// EXTRACT(unit FROM v): a single unit's field, a composite unit's fields run together
/// (`HOUR_MINUTE` of 10:11 is 1011).
fn extract(unit: Unit, v: &Value) -> Value {
    let time = match v {
        Value::Time(t) => Some(*t),
        Value::Date(_) | Value::DateTime(_) => None,
        // A string that is no date may be a time ('10:00:00.5').
        other => match datetime_of(other) {
            Some(_) => None,
            None => expr::parse_time(&to_string(other)),
        },
    };
    let dt = match time {
        Some(t) => {
            // A TIME has no date: its hours count whole days for DAY, as MariaDB's do.
            let us = t.to_micros().unsigned_abs() as i128;
            let sign = if t.negative { -1 } else { 1 };
            let (h, m, s, f) = (
                us / 3_600_000_000,
                (us / 60_000_000) % 60,
                (us / 1_000_000) % 60,
                us % 1_000_000,
            );
            let n = match unit {
                Unit::Day => h / 24,
                Unit::Hour => h % 24,
                Unit::Minute => m,
                Unit::Second => s,
                Unit::Microsecond => f,
                Unit::HourMinute => (h % 24) * 100 + m,
                Unit::HourSecond => ((h % 24) * 100 + m) * 100 + s,
                Unit::MinuteSecond => m * 100 + s,
                _ => return Value::Int(0),
            };
            return Value::Int((sign * n) as i64);
        }
        None => match datetime_of(v) {
            Some(dt) => dt,
            None => return Value::Null,
        },
    };
    let (y, mo, d) = (
        dt.date.year as i64,
        dt.date.month as i64,
        dt.date.day as i64,
    );
    let (h, mi, s, f) = (
        dt.hour as i64,
        dt.minute as i64,
        dt.second as i64,
        dt.micro as i64,
    );
    Value::Int(match unit {
        Unit::Year => y,
        Unit::Quarter => (mo + 2) / 3,
        Unit::Month => mo,
        Unit::Week => calc_week(dt.date, week_mode(0)).0,
        Unit::Day => d,
        Unit::Hour => h,
        Unit::Minute => mi,
        Unit::Second => s,
        Unit::Microsecond => f,
        Unit::YearMonth => y * 100 + mo,
        Unit::DayHour => d * 100 + h,
        Unit::DayMinute => (d * 100 + h) * 100 + mi,
        Unit::DaySecond => ((d * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((d * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + f,
        Unit::HourMinute => h * 100 + mi,
        Unit::HourSecond => (h * 100 + mi) * 100 + s,
        Unit::HourMicrosecond => ((h * 100 + mi) * 100 + s) * 1_000_000 + f,
        Unit::MinuteSecond => mi * 100 + s,
        Unit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + f,
        Unit::SecondMicrosecond => s * 1_000_000 + f,
    })
}

const WEEK_MONDAY_FIRST: u32 = 1;
const WEEK_YEAR: u32 = 2;
const WEEK_FIRST_WEEKDAY: u32 = 4;

fn week_mode(mode: u32) -> u32 {
    let mut m = mode & 7;
    if m & WEEK_MONDAY_FIRST == 0 {
        m ^= WEEK_FIRST_WEEKDAY;
    }
    m
}

fn days_in_year(y: i64) -> i64 {
    if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
        366
    } else {
        365
    }
}

/// MariaDB's `calc_week`: (week, year of the week).
fn calc_week(d: Date, behaviour: u32) -> (i64, i64) {
    let daynr = day_number(d) as i64;
    let mut first_daynr = days_from_civil(d.year as i64, 1, 1);
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;
    // Weekday of Jan 1: 0 = the week's first day.
    let wd = |n: i64| {
        let monday0 = (n + 3).rem_euclid(7);
        if monday_first {
            monday0
        } else {
            (monday0 + 1) % 7
        }
    };
    let mut weekday = wd(first_daynr);
    let mut year = d.year as i64;
    if d.month == 1 && (d.day as i64) <= 7 - weekday {
        if !week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        weekday = (weekday + 53 * 7 - days).rem_euclid(7);
    }
    let days = if (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let weekday = (weekday + days_in_year(year)) % 7;
        if (!first_weekday && weekday < 4) || (first_weekday && weekday == 0) {
            return (1, year + 1);
        }
    }
    (days / 7 + 1, year)
}

/// DATE_FORMAT's (and, `time_only`, TIME_FORMAT's) specifiers; an unknown one is its
/// letter. TIME_FORMAT gives NULL-like empty output for date parts in MariaDB; here they
/// format the zero date.
fn format(d: &DateTime, fmt: &str, time_only: bool) -> String {
    let mut out = String::new();
    let mut it = fmt.chars();
    let date = d.date;
    let wday = || weekday(date);
    let h12 = if d.hour.is_multiple_of(12) {
        12
    } else {
        d.hour % 12
    };
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = it.next() else { break };
        let month_ok = (1..=12).contains(&date.month);
        let s = match spec {
            'Y' => format!("{:04}", date.year),
            'y' => format!("{:02}", date.year % 100),
            'm' => format!("{:02}", date.month),
            'c' => format!("{}", date.month),
            'd' => format!("{:02}", date.day),
            'e' => format!("{}", date.day),
            'H' => format!("{:02}", d.hour),
            'k' => format!("{}", d.hour),
            'h' | 'I' => format!("{h12:02}"),
            'l' => format!("{h12}"),
            'i' => format!("{:02}", d.minute),
            's' | 'S' => format!("{:02}", d.second),
            'f' => format!("{:06}", d.micro),
            'p' => (if d.hour < 12 { "AM" } else { "PM" }).to_string(),
            'T' => format!("{:02}:{:02}:{:02}", d.hour, d.minute, d.second),
            'r' => format!(
                "{h12:02}:{:02}:{:02} {}",
                d.minute,
                d.second,
                if d.hour < 12 { "AM" } else { "PM" }
            ),
            _ if time_only && "MbWaDjUuVvXxw".contains(spec) => String::new(),
            'M' if month_ok => MONTHS[date.month as usize - 1].to_string(),
            'b' if month_ok => MONTHS[date.month as usize - 1][..3].to_string(),
            'W' if month_ok => DAYS[wday() as usize].to_string(),
            'a' if month_ok => DAYS[wday() as usize][..3].to_string(),
            'w' if month_ok => format!("{}", (wday() + 1) % 7),
            'j' if month_ok => format!("{:03}", day_of_year(date)),
            'D' => {
                let n = date.day;
                let suffix = match (n % 10, n / 10 % 10) {
                    (_, 1) => "th",
                    (1, _) => "st",
                    (2, _) => "nd",
                    (3, _) => "rd",
                    _ => "th",
                };
                format!("{n}{suffix}")
            }
            'U' if month_ok => format!("{:02}", calc_week(date, WEEK_FIRST_WEEKDAY).0),
            'u' if month_ok => format!("{:02}", calc_week(date, WEEK_MONDAY_FIRST).0),
            'V' if month_ok => format!("{:02}", calc_week(date, WEEK_YEAR | WEEK_FIRST_WEEKDAY).0),
            'v' if month_ok => format!("{:02}", calc_week(date, WEEK_MONDAY_FIRST | WEEK_YEAR).0),
            'X' if month_ok => format!("{:04}", calc_week(date, WEEK_YEAR | WEEK_FIRST_WEEKDAY).1),
            'x' if month_ok => format!("{:04}", calc_week(date, WEEK_MONDAY_FIRST | WEEK_YEAR).1),
            'M' | 'b' | 'W' | 'a' | 'w' | 'j' | 'U' | 'u' | 'V' | 'v' | 'X' | 'x' => String::new(),
            other => other.to_string(),
        };
        out += &s;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(f: CalFn, args: &[&str]) -> String {
        let a: Vec<Value> = args.iter().map(|s| Value::str(s)).collect();
        to_string(&call_fn(f, &a))
    }

    #[test]
    fn week_numbers_follow_the_modes() {
        // 2024-01-01 is a Monday; 2023-01-01 a Sunday.
        assert_eq!(call(CalFn::Week, &["2024-05-06"]), "18");
        assert_eq!(call(CalFn::YearWeek, &["2024-05-06"]), "202418");
        assert_eq!(call(CalFn::WeekOfYear, &["2024-05-06"]), "19");
        assert_eq!(call(CalFn::Week, &["2024-01-01", "0"]), "0");
        assert_eq!(call(CalFn::Week, &["2024-01-01", "1"]), "1");
        assert_eq!(call(CalFn::YearWeek, &["2024-01-01", "0"]), "202353");
        assert_eq!(call(CalFn::Week, &["2023-01-01", "3"]), "52");
        assert_eq!(call(CalFn::Week, &["2024-12-31", "3"]), "1");
    }

    #[test]
    fn names_and_formats() {
        assert_eq!(call(CalFn::MonthName, &["2024-05-06"]), "May");
        assert_eq!(call(CalFn::DayName, &["2024-05-06"]), "Monday");
        assert_eq!(
            call(
                CalFn::DateFormat,
                &[
                    "2024-01-07 13:05:09.123",
                    "%W %a %M %b %D %j %p %r %l %h %w %U %u"
                ]
            ),
            "Sunday Sun January Jan 7th 007 PM 01:05:09 PM 1 01 0 01 01"
        );
        assert_eq!(call(CalFn::TimeFormat, &["10:11:12", "%H.%i"]), "10.11");
    }

    #[test]
    fn times() {
        assert_eq!(call(CalFn::TimeToSec, &["01:00:00"]), "3600");
        assert_eq!(call(CalFn::SecToTime, &["3661"]), "01:01:01");
        assert_eq!(call(CalFn::SecToTime, &["4000000"]), "838:59:59");
        assert_eq!(call(CalFn::TimeDiff, &["10:00:00", "09:00:30"]), "00:59:30");
        assert_eq!(
            call(
                CalFn::TimeDiff,
                &["2024-01-02 00:00:00", "2024-01-01 23:00:00"]
            ),
            "01:00:00"
        );
        assert_eq!(
            call(CalFn::TimeDiff, &["2024-01-02 00:00:00", "10:00:00"]),
            "NULL"
        );
        assert_eq!(
            call(CalFn::AddTime, &["2024-01-01 23:00:00", "02:00:00"]),
            "2024-01-02 01:00:00"
        );
        assert_eq!(call(CalFn::MakeDate, &["2024", "60"]), "2024-02-29");
        assert_eq!(call(CalFn::MakeTime, &["10", "60", "0"]), "NULL");
        assert_eq!(call(CalFn::PeriodAdd, &["202401", "2"]), "202403");
        assert_eq!(call(CalFn::PeriodDiff, &["202403", "202311"]), "4");
    }
}
