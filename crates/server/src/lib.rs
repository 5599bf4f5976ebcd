//! onelog-server: `onelogd`, the MariaDB-protocol server on the SQL layer.
//!
//! - `config.rs`: command-line and option-file settings (MariaDB names).
//! - `listener.rs`: TCP and unix-socket listeners, one thread per connection, shutdown.
//! - `conn.rs`: one connection: handshake, authentication, the command loop.
//! - `pool.rs`: `thread_handling=pool-of-threads`, a limit on statements running at once.
//! - `tls.rs`: TLS with rustls (`--ssl-cert`, `--ssl-key`, `require_secure_transport`).

pub mod config;
mod conn;
mod listener;
pub mod pool;
mod tls;

pub use config::Config;
pub use listener::{run, Server};
