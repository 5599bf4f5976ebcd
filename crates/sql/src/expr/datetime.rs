//! Parsing dates, times and datetimes from strings and numbers as MariaDB reads them.

use super::*;

pub(super) fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || s.len() > 9 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also with `T`, and the compact `YYYYMMDD[HHMMSS]`
/// forms). Zero dates are accepted. Returns (datetime, had_time).
pub fn parse_datetime(s: &str) -> Option<(DateTime, bool)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let (date_part, time_part) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let (y, m, d) = if date_part.contains(['-', '/', '.']) {
        let parts: Vec<&str> = date_part.split(['-', '/', '.']).collect();
        if parts.len() != 3 {
            return None;
        }
        let mut y = digits(parts[0])?;
        if parts[0].len() <= 2 {
            y += if y < 70 { 2000 } else { 1900 };
        }
        (y, digits(parts[1])?, digits(parts[2])?)
    } else if time_part.is_none() && date_part.len() == 14 || date_part.len() == 8 {
        if date_part.len() == 14 {
            let (dp, tp) = date_part.split_at(8);
            let t = format!("{}:{}:{}", &tp[0..2], &tp[2..4], &tp[4..6]);
            let (dt, _) =
                parse_datetime(&format!("{}-{}-{} {t}", &dp[0..4], &dp[4..6], &dp[6..8]))?;
            return Some((dt, true));
        }
        (
            digits(&date_part[0..4])?,
            digits(&date_part[4..6])?,
            digits(&date_part[6..8])?,
        )
    } else if date_part.len() == 6 && date_part.bytes().all(|b| b.is_ascii_digit()) {
        let y = digits(&date_part[0..2])?;
        (
            y + if y < 70 { 2000 } else { 1900 },
            digits(&date_part[2..4])?,
            digits(&date_part[4..6])?,
        )
    } else {
        return None;
    };
    if y > 9999 || m > 12 || d > 31 {
        return None;
    }
    let date = Date {
        year: y as u16,
        month: m as u8,
        day: d as u8,
    };
    let zero = m == 0 && d == 0 && y == 0;
    if !zero && !date.is_valid() {
        return None;
    }
    let mut dt = DateTime {
        date,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
    };
    let had_time = time_part.is_some();
    if let Some(t) = time_part {
        let tm = parse_time(t)?;
        if tm.negative || tm.hours > 23 {
            return None;
        }
        dt.hour = tm.hours as u8;
        dt.minute = tm.minute;
        dt.second = tm.second;
        dt.micro = tm.micro;
    }
    Some((dt, had_time))
}

/// Parses `[-][D ]HH:MM[:SS[.ffffff]]`, `HHMMSS`, `SS`.
pub fn parse_time(s: &str) -> Option<Time> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (main, frac) = match s.find('.') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let micro = match frac {
        Some(f) => {
            if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let f6: String = f.chars().chain(std::iter::repeat('0')).take(6).collect();
            f6.parse().ok()?
        }
        None => 0,
    };
    let (days, hms) = match main.split_once(' ') {
        Some((d, r)) => (digits(d)?, r),
        None => (0, main),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let (h, m, sec) = match parts.len() {
        3 => (digits(parts[0])?, digits(parts[1])?, digits(parts[2])?),
        2 => (digits(parts[0])?, digits(parts[1])?, 0),
        1 => {
            let n = digits(parts[0])?;
            (n / 10000, (n / 100) % 100, n % 100)
        }
        _ => return None,
    };
    if m > 59 || sec > 59 {
        return None;
    }
    let hours = days * 24 + h;
    if hours > 838 {
        return None;
    }
    Some(Time {
        negative,
        hours,
        minute: m as u8,
        second: sec as u8,
        micro,
    })
}

pub(super) fn datetime_of(v: &Value) -> Option<DateTime> {
    match v {
        Value::DateTime(d) => Some(*d),
        Value::Date(d) => Some(DateTime {
            date: *d,
            hour: 0,
            minute: 0,
            second: 0,
            micro: 0,
        }),
        Value::Bytes(b) => parse_datetime(std::str::from_utf8(b).ok()?).map(|x| x.0),
        Value::Int(_) | Value::UInt(_) => parse_datetime(&v.to_string()).map(|x| x.0),
        _ => None,
    }
}
