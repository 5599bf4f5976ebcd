//! The server's error log, in MariaDB's format: `YYYY-MM-DD HH:MM:SS 0 [Level] message`, one
//! line per message, on stderr (which `onelogd --log-error=FILE` points at the file). Use
//! [`note!`](crate::note), [`warning!`](crate::warning) and [`error!`](crate::error).

use std::fmt;
use std::io::Write;

/// A message's severity, as MariaDB names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Error => "ERROR",
            Level::Warning => "Warning",
            Level::Note => "Note",
        }
    }
}

/// The local time as MariaDB prints it in its error log (`2026-11-27  2:05:09`: the hour
/// padded with a space).
pub fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as libc::time_t)
        .unwrap_or(0);
    // SAFETY: localtime_r writes into the `tm` we own.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        tm
    };
    format!(
        "{:04}-{:02}-{:02} {:2}:{:02}:{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// Writes one line to the error log (one write, so lines of threads do not interleave).
pub fn write(level: Level, args: fmt::Arguments<'_>) {
    let line = format!("{} 0 [{}] {args}\n", timestamp(), level.name());
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Logs a note (`[Note]`).
#[macro_export]
macro_rules! note {
    ($($t:tt)*) => { $crate::log::write($crate::log::Level::Note, format_args!($($t)*)) };
}

/// Logs a warning (`[Warning]`).
#[macro_export]
macro_rules! warning {
    ($($t:tt)*) => { $crate::log::write($crate::log::Level::Warning, format_args!($($t)*)) };
}

/// Logs an error (`[ERROR]`).
#[macro_export]
macro_rules! error {
    ($($t:tt)*) => { $crate::log::write($crate::log::Level::Error, format_args!($($t)*)) };
}

#[cfg(test)]
mod tests {
    #[test]
    fn timestamps_look_like_mariadbs() {
        let t = super::timestamp();
        assert_eq!(t.len(), 19, "{t}");
        assert_eq!(&t[4..5], "-");
        assert_eq!(&t[13..14], ":");
    }
}
