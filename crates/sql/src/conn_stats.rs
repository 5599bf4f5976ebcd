//! Server-wide connection counters that the server keeps and SHOW STATUS reports, with
//! MariaDB's names and meanings:
//! - `Aborted_connects`: connections that failed before a session began (wrong password,
//!   a refused TLS requirement, an unknown database, a malformed or abandoned handshake);
//!   `Aborted_connects_preauth` the part of them that failed before the client's
//!   handshake response was read;
//! - `Max_used_connections`: the most connections open at once since the start;
//! - `Ssl_accepts` / `Ssl_finished_accepts`: TLS handshakes begun / completed.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default, Debug)]
pub struct ConnStats {
    pub aborted_connects: AtomicU64,
    pub aborted_connects_preauth: AtomicU64,
    pub max_used_connections: AtomicU64,
    pub ssl_accepts: AtomicU64,
    pub ssl_finished_accepts: AtomicU64,
}

impl ConnStats {
    /// Notes that `open` connections are open now.
    pub fn connections_open(&self, open: usize) {
        self.max_used_connections
            .fetch_max(open as u64, Ordering::Relaxed);
    }

    /// Notes a failed connection attempt (`preauth`: before the handshake response).
    pub fn aborted_connect(&self, preauth: bool) {
        self.aborted_connects.fetch_add(1, Ordering::Relaxed);
        if preauth {
            self.aborted_connects_preauth
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as SHOW STATUS rows.
    pub(crate) fn rows(&self) -> [(&'static str, u64); 5] {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("Aborted_connects", g(&self.aborted_connects)),
            (
                "Aborted_connects_preauth",
                g(&self.aborted_connects_preauth),
            ),
            ("Max_used_connections", g(&self.max_used_connections)),
            ("Ssl_accepts", g(&self.ssl_accepts)),
            ("Ssl_finished_accepts", g(&self.ssl_finished_accepts)),
        ]
    }
}
