//! Event schedules: EVERY intervals (as MariaDB stores and shows them) and the times on a
//! schedule's grid (STARTS + k × interval).

use onelog_types::{DateTime, SqlError, Value};

use crate::dates::{self, AddOp, Unit};
use crate::sql_err;

/// MariaDB's largest interval amount (`EVEX_MAX_INTERVAL_VALUE`).
const MAX_AMOUNT: i64 = 1_000_000_000;

/// An EVERY interval: its amount counted in the unit's smallest part (`'1:2' HOUR_MINUTE`
/// is 62 minutes), and the unit's name.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Every {
    pub amount: i64,
    pub unit: String,
}

/// A step on the grid: months, or microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Months(i64),
    Micros(i128),
}

fn unit_of(name: &str) -> Option<Unit> {
    Some(match name {
        "YEAR_MONTH" => Unit::YearMonth,
        "DAY_HOUR" => Unit::DayHour,
        "DAY_MINUTE" => Unit::DayMinute,
        "DAY_SECOND" => Unit::DaySecond,
        "HOUR_MINUTE" => Unit::HourMinute,
        "HOUR_SECOND" => Unit::HourSecond,
        "MINUTE_SECOND" => Unit::MinuteSecond,
        other => Unit::single(other)?,
    })
}

/// Microseconds of the smallest part of a unit that is not counted in months.
fn part_micros(unit: &str) -> i128 {
    const S: i128 = 1_000_000;
    match unit {
        "SECOND" | "DAY_SECOND" | "HOUR_SECOND" | "MINUTE_SECOND" => S,
        "MINUTE" | "DAY_MINUTE" | "HOUR_MINUTE" => 60 * S,
        "HOUR" | "DAY_HOUR" => 3600 * S,
        "DAY" => 86400 * S,
        "WEEK" => 7 * 86400 * S,
        _ => 0,
    }
}

impl Every {
    /// `EVERY amount unit` from the amount's value: 1542 unless it is positive and at most
    /// MariaDB's limit, 1235 for units of microseconds.
    pub fn new(amount: &Value, unit: &str) -> Result<Every, SqlError> {
        if unit.contains("MICROSECOND") {
            return Err(sql_err(
                1235,
                "This version of MariaDB doesn't yet support 'MICROSECOND'",
            ));
        }
        let bad = || sql_err(1542, "INTERVAL is either not positive or too big");
        let u = unit_of(unit).ok_or_else(bad)?;
        let n: i128 = if u.parts_len() > 0 {
            let span = dates::span(amount, u).ok_or_else(bad)?;
            let (months, micros) = span.amount();
            if unit == "YEAR_MONTH" {
                months
            } else {
                micros / part_micros(unit)
            }
        } else {
            let f = crate::expr::to_f64(amount);
            if !f.is_finite() {
                return Err(bad());
            }
            f.round() as i128
        };
        if n <= 0 || n > MAX_AMOUNT as i128 {
            return Err(bad());
        }
        Ok(Every {
            amount: n as i64,
            unit: unit.to_string(),
        })
    }

    /// The amount as SHOW CREATE EVENT and information_schema show it: a number, or for a
    /// composite unit its parts quoted (`'1:2'`, `'1 2:03:04'` as `'1 2:3:4'`).
    pub fn value_text(&self) -> String {
        let a = self.amount;
        let (d, h, m, s) = match self.unit.as_str() {
            "YEAR_MONTH" => return format!("'{}-{}'", a / 12, a % 12),
            "DAY_HOUR" => return format!("'{} {}'", a / 24, a % 24),
            "DAY_MINUTE" => (a / 1440, a / 60 % 24, a % 60, 0),
            "DAY_SECOND" => (a / 86400, a / 3600 % 24, a / 60 % 60, a % 60),
            "HOUR_MINUTE" => return format!("'{}:{}'", a / 60, a % 60),
            "HOUR_SECOND" => return format!("'{}:{}:{}'", a / 3600, a / 60 % 60, a % 60),
            "MINUTE_SECOND" => return format!("'{}:{}'", a / 60, a % 60),
            _ => return a.to_string(),
        };
        if self.unit == "DAY_MINUTE" {
            format!("'{d} {h}:{m}'")
        } else {
            format!("'{d} {h}:{m}:{s}'")
        }
    }

    fn step(&self) -> Step {
        let a = self.amount;
        match self.unit.as_str() {
            "YEAR" => Step::Months(a * 12),
            "QUARTER" => Step::Months(a * 3),
            "MONTH" | "YEAR_MONTH" => Step::Months(a),
            u => Step::Micros(a as i128 * part_micros(u)),
        }
    }

    /// The first time on the grid `start + k × interval` (k ≥ 0) at or after `t`; None past
    /// the end of the calendar.
    pub fn at_or_after(&self, start: DateTime, t: DateTime) -> Option<DateTime> {
        if t <= start {
            return Some(start);
        }
        match self.step() {
            Step::Micros(us) => {
                let gap = dates::micros_of(&t) - dates::micros_of(&start);
                let k = (gap + us - 1) / us;
                let total = dates::micros_of(&start).checked_add(k.checked_mul(us)?)?;
                let r = dates::from_micros(total);
                (r.date.year <= 9999).then_some(r)
            }
            Step::Months(m) => {
                let months = |d: &DateTime| d.date.year as i64 * 12 + d.date.month as i64;
                let mut k = ((months(&t) - months(&start)) / m - 1).max(0);
                loop {
                    let r = add_months(start, k.checked_mul(m)?)?;
                    if r >= t {
                        return Some(r);
                    }
                    k += 1;
                }
            }
        }
    }
}

fn add_months(start: DateTime, n: i64) -> Option<DateTime> {
    let op = AddOp {
        unit: Unit::Month,
        subtract: false,
        six: false,
    };
    match dates::add_interval(&Value::DateTime(start), &Value::Int(n), op) {
        Value::DateTime(d) => Some(d),
        _ => None,
    }
}

/// A time as events keep it: whole seconds (MariaDB cuts the fraction).
pub fn whole_seconds(mut t: DateTime) -> DateTime {
    t.micro = 0;
    t
}

/// One second after `t`.
pub fn next_second(t: DateTime) -> DateTime {
    dates::from_micros(dates::micros_of(&t) + 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> DateTime {
        crate::expr::parse_datetime(s).unwrap().0
    }

    #[test]
    fn shows_amounts_as_mariadb() {
        let e = |v: &str, u: &str| Every::new(&Value::str(v), u).unwrap().value_text();
        assert_eq!(e("0:62", "HOUR_MINUTE"), "'1:2'");
        assert_eq!(e("1 2:3:4", "DAY_SECOND"), "'1 2:3:4'");
        assert_eq!(e("2-13", "YEAR_MONTH"), "'3-1'");
        assert_eq!(e("3 5", "DAY_HOUR"), "'3 5'");
        assert_eq!(e("1 2:3", "DAY_MINUTE"), "'1 2:3'");
        assert_eq!(e("1.6", "HOUR"), "2");
        assert!(Every::new(&Value::Int(0), "SECOND").is_err());
        assert!(Every::new(&Value::Int(1_000_000_001), "SECOND").is_err());
        assert_eq!(
            Every::new(&Value::Int(1), "SECOND_MICROSECOND")
                .unwrap_err()
                .code,
            1235
        );
    }

    #[test]
    fn grid_times() {
        let every = Every::new(&Value::Int(10), "SECOND").unwrap();
        let s = dt("2024-01-01 00:00:00");
        assert_eq!(every.at_or_after(s, dt("2023-01-01 00:00:00")), Some(s));
        assert_eq!(
            every.at_or_after(s, dt("2024-01-01 00:00:01")),
            Some(dt("2024-01-01 00:00:10"))
        );
        assert_eq!(
            every.at_or_after(s, dt("2024-01-01 00:00:10")),
            Some(dt("2024-01-01 00:00:10"))
        );
        let monthly = Every::new(&Value::Int(1), "MONTH").unwrap();
        let s = dt("2024-01-31 10:00:00");
        assert_eq!(
            monthly.at_or_after(s, dt("2024-02-10 00:00:00")),
            Some(dt("2024-02-29 10:00:00"))
        );
        assert_eq!(
            monthly.at_or_after(s, dt("2024-03-01 00:00:00")),
            Some(dt("2024-03-31 10:00:00"))
        );
    }
}
