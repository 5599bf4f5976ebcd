//! Date arithmetic as MariaDB does it: `expr + INTERVAL n unit` (and `-`, DATE_ADD,
//! DATE_SUB, ADDDATE, SUBDATE, TIMESTAMPADD), TIMESTAMPDIFF and DATEDIFF; the calendar,
//! time-of-day and formatting functions are in `calendar.rs`.
//!
//! Adding an interval:
//! - Units of months (MONTH, QUARTER, YEAR, YEAR_MONTH) move the month and keep the day,
//!   cut to the new month's last day (`2024-01-31 + INTERVAL 1 MONTH` is `2024-02-29`);
//!   every other unit adds a duration.
//! - The result's kind follows the first argument: a DATE stays a DATE for units of days
//!   or longer and becomes a DATETIME for units of time; a DATETIME/TIMESTAMP gives a
//!   DATETIME; a TIME gives a TIME (units of months give NULL); anything else (strings,
//!   numbers) is read as a date or datetime and the result is a string in that form.
//! - A result outside `0000-01-01 .. 9999-12-31`, an unreadable or zero date, or NULL
//!   anywhere gives NULL (MariaDB adds a warning; onelog's expressions have no warnings).
//! - The amount of a single unit is an integer (decimals rounded, strings cut at their
//!   first non-digit), but SECOND takes a fraction; a composite unit's amount is a string
//!   of numbers with any separators, the leftmost ones missing if there are fewer
//!   (`'1:30' DAY_SECOND` is 1 minute 30 seconds), a microsecond part scaled by its digits
//!   (`'1.5' SECOND_MICROSECOND` is 1.5 seconds).

use onelog_types::{days_from_civil, Date, DateTime, Time, Value};

use crate::expr::{self, to_string};

mod calendar;
pub use calendar::{call_fn, fn_type, parts_of_format, CalFn};

/// An INTERVAL unit (MariaDB's `interval_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

/// One `date ± INTERVAL amount unit` (a call of `Func::AddInterval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddOp {
    pub unit: Unit,
    pub subtract: bool,
    /// The date is a string that is not a constant: a string result shows six fraction
    /// digits (a constant shows those of its text), as MariaDB's datetime precision of
    /// such an argument is 6.
    pub six: bool,
}

pub(crate) const MICROS_PER_DAY: i128 = 86_400_000_000;
/// 838:59:59.999999, TIME's range.
pub(crate) const TIME_MAX_MICROS: i128 = ((838 * 60 + 59) * 60 + 59) * 1_000_000 + 999_999;

impl Unit {
    /// The single units by name, as TIMESTAMPADD and TIMESTAMPDIFF take them (also with
    /// ODBC's `SQL_TSI_` prefix).
    pub fn single(name: &str) -> Option<Unit> {
        let n = name.to_ascii_uppercase();
        let n = n.strip_prefix("SQL_TSI_").unwrap_or(&n);
        Some(match n {
            "MICROSECOND" => Unit::Microsecond,
            "SECOND" => Unit::Second,
            "MINUTE" => Unit::Minute,
            "HOUR" => Unit::Hour,
            "DAY" => Unit::Day,
            "WEEK" => Unit::Week,
            "MONTH" => Unit::Month,
            "QUARTER" => Unit::Quarter,
            "YEAR" => Unit::Year,
            _ => return None,
        })
    }

    /// Whether the unit moves months rather than adding a duration.
    fn months(self) -> bool {
        matches!(
            self,
            Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// Whether the unit has a part shorter than a day (a DATE plus it is a DATETIME).
    pub fn has_time(self) -> bool {
        !matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// Whether the unit ends in microseconds (its results show six fraction digits).
    pub fn has_micro(self) -> bool {
        matches!(
            self,
            Unit::Microsecond
                | Unit::SecondMicrosecond
                | Unit::MinuteMicrosecond
                | Unit::HourMicrosecond
                | Unit::DayMicrosecond
        )
    }

    /// A composite unit's parts, largest first, in microseconds (0: months, for
    /// YEAR_MONTH: 12 then 1).
    fn parts(self) -> &'static [i128] {
        const US: i128 = 1;
        const S: i128 = 1_000_000;
        const M: i128 = 60 * S;
        const H: i128 = 60 * M;
        const D: i128 = 24 * H;
        match self {
            Unit::SecondMicrosecond => &[S, US],
            Unit::MinuteMicrosecond => &[M, S, US],
            Unit::MinuteSecond => &[M, S],
            Unit::HourMicrosecond => &[H, M, S, US],
            Unit::HourSecond => &[H, M, S],
            Unit::HourMinute => &[H, M],
            Unit::DayMicrosecond => &[D, H, M, S, US],
            Unit::DaySecond => &[D, H, M, S],
            Unit::DayMinute => &[D, H, M],
            Unit::DayHour => &[D, H],
            Unit::YearMonth => &[12, 1],
            _ => &[],
        }
    }

    /// How many parts a composite unit has (0 for a single unit).
    pub(crate) fn parts_len(self) -> usize {
        self.parts().len()
    }

    /// Length of a single duration unit in microseconds.
    fn micros(self) -> i128 {
        match self {
            Unit::Microsecond => 1,
            Unit::Second => 1_000_000,
            Unit::Minute => 60_000_000,
            Unit::Hour => 3_600_000_000,
            Unit::Day => MICROS_PER_DAY,
            Unit::Week => 7 * MICROS_PER_DAY,
            _ => 0,
        }
    }
}

/// An interval's amount: months or microseconds (one of them is 0), signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    months: i128,
    micros: i128,
    /// Fraction digits the amount brings to a string result.
    decimals: u32,
}

impl Span {
    /// The amount: (months, microseconds), one of them 0.
    pub(crate) fn amount(&self) -> (i128, i128) {
        (self.months, self.micros)
    }
}

/// Reads `amount unit` into a span; None for NULL.
pub fn span(amount: &Value, unit: Unit) -> Option<Span> {
    if amount.is_null() {
        return None;
    }
    let parts = unit.parts();
    if !parts.is_empty() {
        let (neg, mut nums, micro_digits) = numbers(&to_string(amount), parts.len());
        if unit.has_micro() {
            // The microsecond part counts by its digits: '1.5' is 1 s 500000 µs.
            let last = nums.len() - 1;
            if micro_digits < 6 {
                nums[last] *= 10i128.pow(6 - micro_digits);
            }
        }
        let total = nums.iter().zip(parts).fold(0i128, |acc, (n, p)| {
            acc.saturating_add(n.saturating_mul(*p))
        });
        let total = if neg { -total } else { total };
        let decimals = if unit.has_micro() { 6 } else { 0 };
        return Some(if unit.months() {
            Span {
                months: total,
                micros: 0,
                decimals,
            }
        } else {
            Span {
                months: 0,
                micros: total,
                decimals,
            }
        });
    }
    if unit == Unit::Second {
        // Seconds take a fraction (of up to six digits).
        let (micros, decimals) = match amount {
            Value::Int(_) | Value::UInt(_) => (expr::to_i128(amount) * 1_000_000, 0),
            Value::Decimal(d) => {
                let us = d.rescale(6).and_then(|d| d.narrow()).unwrap_or(0);
                (us, u32::from(d.scale.min(6)))
            }
            other => ((expr::to_f64(other) * 1e6).round() as i128, 6),
        };
        return Some(Span {
            months: 0,
            micros,
            decimals,
        });
    }
    let n = match amount {
        // A string is cut at its first non-digit ('1.5' DAY is 1 day), numbers round.
        Value::Bytes(b) => {
            let (neg, nums, _) = numbers(&String::from_utf8_lossy(b), 1);
            if neg {
                -nums[0]
            } else {
                nums[0]
            }
        }
        other => expr::to_i128(other),
    };
    Some(match unit {
        Unit::Month => Span {
            months: n,
            micros: 0,
            decimals: 0,
        },
        Unit::Quarter => Span {
            months: n.saturating_mul(3),
            micros: 0,
            decimals: 0,
        },
        Unit::Year => Span {
            months: n.saturating_mul(12),
            micros: 0,
            decimals: 0,
        },
        u => Span {
            months: 0,
            micros: n.saturating_mul(u.micros()),
            decimals: if u == Unit::Microsecond { 6 } else { 0 },
        },
    })
}

/// The numbers of a composite amount: sign, `count` numbers (missing leftmost ones are
/// 0), and the digit count of the last one (for microseconds).
fn numbers(s: &str, count: usize) -> (bool, Vec<i128>, u32) {
    let s = s.trim_start();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let mut found: Vec<(i128, u32)> = Vec::new();
    let mut cur: Option<(i128, u32)> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            let (v, n) = cur.unwrap_or((0, 0));
            cur = Some((v.saturating_mul(10).saturating_add(d as i128), n + 1));
        } else if let Some(x) = cur.take() {
            found.push(x);
            if found.len() == count {
                break;
            }
        }
    }
    if let Some(x) = cur {
        if found.len() < count {
            found.push(x);
        }
    }
    let mut nums = vec![0i128; count - found.len()];
    let digits = found.last().map(|x| x.1).unwrap_or(0);
    nums.extend(found.iter().map(|x| x.0));
    (neg, nums, digits)
}

pub(crate) fn days_in_month(year: i128, month: u32) -> u8 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

pub(crate) fn day_number(d: Date) -> i128 {
    days_from_civil(d.year as i64, d.month as u32, d.day as u32) as i128
}

pub(crate) fn micros_of(dt: &DateTime) -> i128 {
    day_number(dt.date) * MICROS_PER_DAY
        + ((dt.hour as i128 * 60 + dt.minute as i128) * 60 + dt.second as i128) * 1_000_000
        + dt.micro as i128
}

/// `dt` plus the span, None outside years 0-9999.
fn add(dt: DateTime, s: &Span) -> Option<DateTime> {
    if dt.date.month == 0 || dt.date.day == 0 {
        return None;
    }
    if s.months != 0 {
        let period =
            (dt.date.year as i128 * 12 + dt.date.month as i128 - 1).checked_add(s.months)?;
        if !(0..120_000).contains(&period) {
            return None;
        }
        let (year, month) = (period / 12, (period % 12) as u32 + 1);
        let day = dt.date.day.min(days_in_month(year, month));
        return Some(DateTime {
            date: Date {
                year: year as u16,
                month: month as u8,
                day,
            },
            ..dt
        });
    }
    let total = micros_of(&dt).checked_add(s.micros)?;
    let (lo, hi) = (
        days_from_civil(0, 1, 1) as i128 * MICROS_PER_DAY,
        (days_from_civil(9999, 12, 31) as i128 + 1) * MICROS_PER_DAY,
    );
    if total < lo || total >= hi {
        return None;
    }
    Some(from_micros(total))
}

pub(crate) fn from_micros(total: i128) -> DateTime {
    let secs = total.div_euclid(1_000_000) as i64;
    DateTime::from_unix(secs, total.rem_euclid(1_000_000) as u32)
}

/// `v ± INTERVAL amount unit`.
pub fn add_interval(v: &Value, amount: &Value, op: AddOp) -> Value {
    let unit = op.unit;
    let Some(mut s) = span(amount, unit) else {
        return Value::Null;
    };
    if op.subtract {
        s.months = -s.months;
        s.micros = -s.micros;
    }
    let done = |d: Option<DateTime>, f: fn(DateTime) -> Value| d.map(f).unwrap_or(Value::Null);
    match v {
        Value::Null => Value::Null,
        Value::Date(d) => {
            let r = add(midnight(*d), &s);
            if unit.has_time() {
                done(r, Value::DateTime)
            } else {
                done(r, |r| Value::Date(r.date))
            }
        }
        Value::DateTime(dt) => done(add(*dt, &s), Value::DateTime),
        Value::Time(t) => {
            if s.months != 0 {
                return Value::Null;
            }
            match (t.to_micros() as i128).checked_add(s.micros) {
                Some(us) if us.abs() <= TIME_MAX_MICROS => {
                    Value::Time(Time::from_micros(us as i64))
                }
                _ => Value::Null,
            }
        }
        other => {
            let text = to_string(other);
            let Some((dt, had_time)) = expr::parse_datetime(&text) else {
                return Value::Null;
            };
            match add(dt, &s) {
                Some(r) if had_time || unit.has_time() => {
                    let own = if op.six { 6 } else { fraction_digits(&text) };
                    let decimals = own.max(s.decimals) as usize;
                    Value::str(&format!("{r:.decimals$}"))
                }
                Some(r) => Value::str(&r.date.to_string()),
                None => Value::Null,
            }
        }
    }
}

/// Digits after the seconds of a datetime string (`'... 10:00:00.25'`: 2).
fn fraction_digits(s: &str) -> u32 {
    let s = s.trim();
    match (s.find([' ', 'T']), s.rfind('.')) {
        (Some(sp), Some(dot)) if dot > sp => s[dot + 1..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .count()
            .min(6) as u32,
        _ => 0,
    }
}

pub(crate) fn midnight(date: Date) -> DateTime {
    DateTime {
        date,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
    }
}

/// A date or datetime argument; None for NULL, a TIME (which MariaDB would take with
/// today's date) or anything not readable as a (non-zero) date.
pub(crate) fn datetime_of(v: &Value) -> Option<DateTime> {
    if matches!(v, Value::Time(_)) {
        return None;
    }
    crate::functions::datetime_arg(v).filter(|dt| dt.date.month != 0 && dt.date.day != 0)
}

/// `TIMESTAMPDIFF(unit, a, b)`: whole units from `a` to `b`, toward zero.
pub fn timestamp_diff(unit: Unit, a: &Value, b: &Value) -> Value {
    let (Some(a), Some(b)) = (datetime_of(a), datetime_of(b)) else {
        return Value::Null;
    };
    let n = if unit.months() {
        // Whole months: the later day and time of day must reach the earlier's.
        let (lo, hi, sign) = if micros_of(&b) >= micros_of(&a) {
            (a, b, 1)
        } else {
            (b, a, -1)
        };
        let mut months = (hi.date.year as i128 - lo.date.year as i128) * 12 + hi.date.month as i128
            - lo.date.month as i128;
        let rest = |d: &DateTime| micros_of(d) - day_number(d.date) * MICROS_PER_DAY;
        if (hi.date.day, rest(&hi)) < (lo.date.day, rest(&lo)) {
            months -= 1;
        }
        sign * match unit {
            Unit::Quarter => months / 3,
            Unit::Year => months / 12,
            _ => months,
        }
    } else {
        (micros_of(&b) - micros_of(&a)) / unit.micros()
    };
    Value::Int(n as i64)
}

/// `DATEDIFF(a, b)`: days from `b`'s date to `a`'s.
pub fn date_diff(a: &Value, b: &Value) -> Value {
    match (datetime_of(a), datetime_of(b)) {
        (Some(a), Some(b)) => Value::Int((day_number(a.date) - day_number(b.date)) as i64),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::str(x)
    }

    fn op(unit: Unit, subtract: bool) -> AddOp {
        AddOp {
            unit,
            subtract,
            six: false,
        }
    }

    fn add_str(v: &str, amount: Value, unit: Unit) -> String {
        to_string(&add_interval(&s(v), &amount, op(unit, false)))
    }

    #[test]
    fn months_keep_the_day_within_the_month() {
        assert_eq!(
            add_str("2024-01-31", Value::Int(1), Unit::Month),
            "2024-02-29"
        );
        assert_eq!(
            add_str("2023-01-31", Value::Int(1), Unit::Month),
            "2023-02-28"
        );
        assert_eq!(
            add_str("2024-02-29", Value::Int(1), Unit::Year),
            "2025-02-28"
        );
        assert_eq!(
            add_str("2024-01-01", Value::Int(2), Unit::Quarter),
            "2024-07-01"
        );
        assert_eq!(
            add_str("2024-01-01", s("-1-2"), Unit::YearMonth),
            "2022-11-01"
        );
    }

    #[test]
    fn durations_and_result_forms() {
        assert_eq!(
            add_str("2024-01-01", Value::Int(1), Unit::Day),
            "2024-01-02"
        );
        assert_eq!(
            add_str("2024-01-01", Value::Int(1), Unit::Second),
            "2024-01-01 00:00:01"
        );
        assert_eq!(
            add_str("2024-01-01", s("1:30"), Unit::HourMinute),
            "2024-01-01 01:30:00"
        );
        assert_eq!(
            add_str("2024-01-01", s("30"), Unit::DaySecond),
            "2024-01-01 00:00:30"
        );
        assert_eq!(
            add_str("2024-01-01", s("1.5"), Unit::SecondMicrosecond),
            "2024-01-01 00:00:01.500000"
        );
        assert_eq!(
            add_str("2024-01-01 00:00:00.25", Value::Int(1), Unit::Day),
            "2024-01-02 00:00:00.25"
        );
        assert_eq!(
            add_str("2024-01-01", s("-1 1"), Unit::DayHour),
            "2023-12-30 23:00:00"
        );
        // A string amount of a single unit is cut at its first non-digit.
        assert_eq!(add_str("2024-01-01", s("1.5"), Unit::Day), "2024-01-02");
        assert_eq!(add_str("9999-12-31", Value::Int(1), Unit::Day), "NULL");
        assert_eq!(add_str("abc", Value::Int(1), Unit::Day), "NULL");
        assert_eq!(add_str("0000-00-00", Value::Int(1), Unit::Day), "NULL");
    }

    #[test]
    fn typed_arguments_keep_their_kind() {
        let d = Value::Date(Date {
            year: 2024,
            month: 1,
            day: 1,
        });
        assert!(matches!(
            add_interval(&d, &Value::Int(1), op(Unit::Day, false)),
            Value::Date(_)
        ));
        assert!(matches!(
            add_interval(&d, &Value::Int(1), op(Unit::Hour, true)),
            Value::DateTime(_)
        ));
        let t = Value::Time(Time::from_micros(10 * 3_600_000_000));
        assert_eq!(
            to_string(&add_interval(&t, &Value::Int(1), op(Unit::Day, false))),
            "34:00:00"
        );
        assert_eq!(
            add_interval(&t, &Value::Int(1), op(Unit::Month, false)),
            Value::Null
        );
    }

    #[test]
    fn differences() {
        let diff = |u, a: &str, b: &str| to_string(&timestamp_diff(u, &s(a), &s(b)));
        assert_eq!(diff(Unit::Month, "2024-01-31", "2024-02-29"), "0");
        assert_eq!(diff(Unit::Month, "2024-01-31", "2024-03-31"), "2");
        assert_eq!(diff(Unit::Month, "2024-03-31", "2024-01-31"), "-2");
        assert_eq!(diff(Unit::Year, "2000-02-29", "2004-02-28"), "3");
        assert_eq!(diff(Unit::Day, "2024-01-02", "2024-01-01 00:00:01"), "0");
        assert_eq!(
            diff(Unit::Second, "2024-01-01", "2024-01-02 00:00:01.5"),
            "86401"
        );
        assert_eq!(
            to_string(&date_diff(&s("2024-03-01"), &s("2024-01-01 23:00"))),
            "60"
        );
    }
}
