//! DATE, DATETIME/TIMESTAMP and TIME values.

use std::fmt;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A date and time of day with microseconds. TIMESTAMP values are UTC.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct DateTime {
    pub date: Date,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

/// A TIME value: a signed duration up to 838:59:59.999999.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Time {
    pub negative: bool,
    pub hours: u32,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

impl Time {
    /// Signed microseconds, for ordering and arithmetic.
    pub fn to_micros(&self) -> i64 {
        let v = ((self.hours as i64 * 60 + self.minute as i64) * 60 + self.second as i64)
            * 1_000_000
            + self.micro as i64;
        if self.negative {
            -v
        } else {
            v
        }
    }

    pub fn from_micros(v: i64) -> Time {
        let negative = v < 0;
        let a = v.unsigned_abs();
        Time {
            negative,
            hours: (a / 3_600_000_000) as u32,
            minute: ((a / 60_000_000) % 60) as u8,
            second: ((a / 1_000_000) % 60) as u8,
            micro: (a % 1_000_000) as u32,
        }
    }
}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_micros().cmp(&other.to_micros())
    }
}

/// Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Inverse of [`days_from_civil`].
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl Date {
    pub fn is_valid(&self) -> bool {
        if self.month == 0 || self.month > 12 || self.day == 0 {
            return false;
        }
        let y = self.year as i64;
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let days = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        self.day <= days[self.month as usize - 1]
    }
}

impl DateTime {
    /// Seconds since the Unix epoch, taking the value as UTC.
    pub fn unix_seconds(&self) -> i64 {
        days_from_civil(
            self.date.year as i64,
            self.date.month as u32,
            self.date.day as u32,
        ) * 86400
            + self.hour as i64 * 3600
            + self.minute as i64 * 60
            + self.second as i64
    }

    pub fn from_unix(secs: i64, micro: u32) -> DateTime {
        let days = secs.div_euclid(86400);
        let rem = secs.rem_euclid(86400);
        let (y, m, d) = civil_from_days(days);
        DateTime {
            date: Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            },
            hour: (rem / 3600) as u8,
            minute: ((rem / 60) % 60) as u8,
            second: (rem % 60) as u8,
            micro,
        }
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn write_micro(f: &mut fmt::Formatter<'_>, micro: u32) -> fmt::Result {
    // Precision requested by the caller ({:.3}) or all six digits when non-zero.
    match f.precision() {
        Some(0) => Ok(()),
        Some(p) => {
            let p = p.min(6);
            write!(f, ".{:0p$}", micro / 10u32.pow(6 - p as u32), p = p)
        }
        None if micro != 0 => write!(f, ".{micro:06}"),
        None => Ok(()),
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        )?;
        write_micro(f, self.micro)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{:02}:{:02}:{:02}",
            if self.negative { "-" } else { "" },
            self.hours,
            self.minute,
            self.second
        )?;
        write_micro(f, self.micro)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_round_trip() {
        let dt = DateTime::from_unix(1_700_000_000, 5);
        assert_eq!(dt.unix_seconds(), 1_700_000_000);
        assert_eq!(format!("{dt}"), "2023-11-14 22:13:20.000005");
        assert_eq!(format!("{dt:.0}"), "2023-11-14 22:13:20");
    }
}
