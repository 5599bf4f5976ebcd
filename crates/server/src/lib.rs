//! onelog-server: `onelogd`, the MariaDB-protocol server on the SQL layer.
//!
//! - `config.rs`: command-line and option-file settings (MariaDB names).
//! - `listener.rs`: TCP and unix-socket listeners, one thread per connection, shutdown.
//! - `conn.rs`: one connection: handshake, authentication, the command loop.
//! - `dump.rs`: COM_BINLOG_DUMP, the binlog stream a replica or CDC client follows.
//! - `replica/`: onelogd as a replica of a MariaDB or onelog primary (CHANGE MASTER TO,
//!   START SLAVE, the applier).
//! - `pool.rs`: `thread_handling=pool-of-threads`, a limit on statements running at once.
//! - `tls.rs`: TLS with rustls (`--ssl-cert`, `--ssl-key`, `--ssl-ca`,
//!   `require_secure_transport`).
//! - `x509_name.rs`: a client certificate's issuer and subject as `REQUIRE` compares them.

pub mod config;
mod conn;
mod dump;
mod listener;
mod local_infile;
pub mod pool;
mod replica;
mod semisync;
mod tls;
mod x509_name;

pub use config::Config;
pub use listener::{run, Server};
