//! Commit order decided outside the engine.
//!
//! A replica applying its primary's transactions in parallel must commit them in the
//! primary's order: the binlog is its position, so a crash may lose a suffix of applied
//! transactions but never leave a hole. A transaction carrying a [`CommitOrder`] waits,
//! once it is encoded, until the order lets it into the commit queue, and tells the order
//! as soon as it is queued, so the next one can follow into the same group while this one
//! is written and synced.
//!
//! A later transaction that waits for its turn may hold a row lock an earlier one needs:
//! the earlier one waits for the lock, the later one for the earlier one's commit. The
//! wait for the turn is therefore told whether another transaction waits for one of this
//! one's locks; it then gives up ([`EngineError::Deadlock`]), the transaction is rolled
//! back (its locks released) and the caller retries it after the earlier ones.
//!
//! [`EngineError::Deadlock`]: crate::EngineError::Deadlock

use crate::error::Result;

/// The order transactions enter the commit queue in (see the module docs).
pub trait CommitOrder: Send + Sync {
    /// Blocks until the transaction may be queued. `blocking()` tells whether another
    /// transaction waits for a lock this one holds; the wait then fails with
    /// `EngineError::Deadlock` (or `Interrupted` when the order was abandoned), and the
    /// transaction is not committed.
    fn wait_turn(&self, blocking: &dyn Fn() -> bool) -> Result<()>;

    /// The transaction is in the commit queue: the next one may follow.
    fn queued(&self);
}
