//! `max_prepared_stmt_count`: the prepared statements of all sessions together (protocol
//! and SQL `PREPARE`) are bounded, as in MariaDB, so that no client can fill the server's
//! memory with statements it never closes. A session reports its own count after every
//! change ([`SessionCount::set`]); the server's total is `Prepared_stmt_count`.

use std::sync::atomic::{AtomicUsize, Ordering};

use onelog_types::SqlError;

use crate::sql_err;

/// MariaDB's ER_MAX_PREPARED_STMT_COUNT_REACHED.
const ER_MAX_PREPARED_STMT_COUNT_REACHED: u16 = 1461;

/// The server's prepared statements.
#[derive(Default)]
pub struct PreparedCount(AtomicUsize);

impl PreparedCount {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// Error 1461 unless one more statement fits under `max`.
    pub fn room_for_one(&self, max: usize) -> Result<(), SqlError> {
        if self.get() >= max {
            return Err(sql_err(
                ER_MAX_PREPARED_STMT_COUNT_REACHED,
                format!(
                    "Can't create more than max_prepared_stmt_count statements (current value: {max})"
                ),
            ));
        }
        Ok(())
    }
}

/// One session's share of [`PreparedCount`].
#[derive(Default)]
pub struct SessionCount(usize);

impl SessionCount {
    /// The session now holds `n` prepared statements.
    pub fn set(&mut self, total: &PreparedCount, n: usize) {
        if n >= self.0 {
            total.0.fetch_add(n - self.0, Ordering::Relaxed);
        } else {
            total.0.fetch_sub(self.0 - n, Ordering::Relaxed);
        }
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_add_up_and_the_limit_holds() {
        let total = PreparedCount::default();
        let (mut a, mut b) = (SessionCount::default(), SessionCount::default());
        a.set(&total, 3);
        b.set(&total, 2);
        assert_eq!(total.get(), 5);
        assert!(total.room_for_one(6).is_ok());
        let e = total.room_for_one(5).unwrap_err();
        assert_eq!((e.code, e.state), (1461, "42000"));
        assert!(e.message.ends_with("(current value: 5)"));
        a.set(&total, 0);
        assert_eq!(total.get(), 2);
    }
}
