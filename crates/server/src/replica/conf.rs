//! The replica's connection settings: CHANGE MASTER TO options, kept in `master.info`.
//!
//! `master.info` layout: one `name=value` line per setting (`host`, `port`, `user`,
//! `password`, `use_gtid`, `connect_retry`, `heartbeat_period`, `ssl`, `ssl_ca`,
//! `ssl_cert`, `ssl_key`, `ssl_verify_server_cert`, `ssl_capath`, `ssl_cipher`, `ssl_crl`,
//! `ssl_crlpath`), written to
//! `master.info.tmp`, synced and renamed over the old file (then the directory synced), so a
//! crash leaves the old or the new settings. The replication position is not in it: with
//! GTIDs it is the binlog's `@@gtid_slave_pos`; the primary's file and position (what
//! `MASTER_USE_GTID=no` resumes from) are in `master.pos` (see `position.rs`).

use std::io::Write;
use std::path::Path;

use onelog_types::{code, SqlError};

/// MASTER_USE_GTID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UseGtid {
    #[default]
    SlavePos,
    CurrentPos,
    /// The primary's binlog file and position (`MASTER_LOG_FILE`, `MASTER_LOG_POS`).
    No,
}

impl UseGtid {
    pub fn name(self) -> &'static str {
        match self {
            UseGtid::SlavePos => "Slave_Pos",
            UseGtid::CurrentPos => "Current_Pos",
            UseGtid::No => "No",
        }
    }
}

/// What a CHANGE MASTER TO does to the replication position in the primary's binlog.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PositionChange {
    /// Nothing.
    #[default]
    Keep,
    /// MASTER_HOST or MASTER_PORT: another primary, whose binlog starts afresh (file '',
    /// position 4).
    Forget,
    /// MASTER_LOG_FILE and/or MASTER_LOG_POS (None: the current file).
    Set(Option<String>, u64),
}

/// The settings of CHANGE MASTER TO.
#[derive(Clone, Debug, PartialEq)]
pub struct MasterConf {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub use_gtid: UseGtid,
    pub connect_retry: u64,
    /// Seconds between the primary's heartbeats when idle.
    pub heartbeat_period: f64,
    /// MASTER_SSL, MASTER_SSL_CA, MASTER_SSL_CERT, MASTER_SSL_KEY,
    /// MASTER_SSL_VERIFY_SERVER_CERT, MASTER_SSL_CAPATH, MASTER_SSL_CIPHER, MASTER_SSL_CRL,
    /// MASTER_SSL_CRLPATH (see `ssl.rs`).
    pub ssl: bool,
    pub ssl_ca: Option<String>,
    pub ssl_cert: Option<String>,
    pub ssl_key: Option<String>,
    pub ssl_verify_server_cert: bool,
    pub ssl_capath: Option<String>,
    pub ssl_cipher: Option<String>,
    pub ssl_crl: Option<String>,
    pub ssl_crlpath: Option<String>,
}

impl Default for MasterConf {
    fn default() -> Self {
        MasterConf {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            use_gtid: UseGtid::SlavePos,
            connect_retry: 60,
            heartbeat_period: 30.0,
            ssl: false,
            ssl_ca: None,
            ssl_cert: None,
            ssl_key: None,
            ssl_verify_server_cert: false,
            ssl_capath: None,
            ssl_cipher: None,
            ssl_crl: None,
            ssl_crlpath: None,
        }
    }
}

fn bad(msg: String) -> SqlError {
    SqlError::from_code(code::ER_WRONG_ARGUMENTS, msg)
}

/// CHANGE MASTER TO: the options over the current settings, what they do to the
/// position, and the notes MariaDB gives (MASTER_LOG_FILE/POS beside an explicit GTID
/// mode: ignored for now but recorded, 1618; GTID mode turned off by them, 4190).
pub fn apply_options(
    mut c: MasterConf,
    opts: &[(String, String)],
) -> Result<(MasterConf, PositionChange, Vec<SqlError>), SqlError> {
    let was = c.use_gtid;
    let mut gtid_given = false;
    let (mut file, mut pos, mut new_primary) = (None, None, false);
    for (name, v) in opts {
        let num = || -> Result<f64, SqlError> {
            v.parse::<f64>()
                .map_err(|_| bad(format!("Incorrect value '{v}' for {name}")))
        };
        match name.as_str() {
            "MASTER_HOST" => c.host = v.clone(),
            "MASTER_PORT" => c.port = num()? as u16,
            "MASTER_USER" => c.user = v.clone(),
            "MASTER_PASSWORD" => c.password = v.clone(),
            "MASTER_CONNECT_RETRY" => c.connect_retry = (num()? as u64).max(1),
            "MASTER_HEARTBEAT_PERIOD" => c.heartbeat_period = num()?.clamp(0.001, 4294967.0),
            "MASTER_USE_GTID" => {
                c.use_gtid = match v.to_ascii_lowercase().as_str() {
                    "slave_pos" => UseGtid::SlavePos,
                    "current_pos" => UseGtid::CurrentPos,
                    "no" => UseGtid::No,
                    _ => return Err(bad(format!("Incorrect value '{v}' for MASTER_USE_GTID"))),
                };
                gtid_given = c.use_gtid != UseGtid::No;
            }
            "MASTER_LOG_FILE" => file = Some(v.clone()),
            "MASTER_LOG_POS" => pos = Some(num()?.max(0.0) as u64),
            "RELAY_LOG_FILE" | "RELAY_LOG_POS" => {
                return Err(SqlError::from_code(
                    code::ER_NOT_SUPPORTED_YET,
                    format!(
                        "This version of MariaDB doesn't yet support '{name}: onelog applies \
                         events as they arrive and keeps no relay log'"
                    ),
                ))
            }
            "MASTER_SSL" => c.ssl = num()? != 0.0,
            "MASTER_SSL_VERIFY_SERVER_CERT" => c.ssl_verify_server_cert = num()? != 0.0,
            "MASTER_SSL_CA" => c.ssl_ca = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_CERT" => c.ssl_cert = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_KEY" => c.ssl_key = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_CAPATH" => c.ssl_capath = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_CIPHER" => c.ssl_cipher = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_CRL" => c.ssl_crl = (!v.is_empty()).then(|| v.clone()),
            "MASTER_SSL_CRLPATH" => c.ssl_crlpath = (!v.is_empty()).then(|| v.clone()),
            _ => {
                return Err(SqlError::from_code(
                    1064,
                    format!(
                        "You have an error in your SQL syntax; check the manual that corresponds \
                         to your MariaDB server version for the right syntax to use near '{name}'"
                    ),
                ))
            }
        }
        new_primary |= name == "MASTER_HOST" || name == "MASTER_PORT";
    }
    let mut notes = Vec::new();
    let change = if file.is_none() && pos.is_none() {
        if new_primary {
            PositionChange::Forget
        } else {
            PositionChange::Keep
        }
    } else if gtid_given {
        for (given, name) in [
            (file.is_some(), "MASTER_LOG_FILE"),
            (pos.is_some(), "MASTER_LOG_POS"),
        ] {
            if given {
                notes.push(SqlError::note(
                    code::ER_WARN_OPTION_IGNORED,
                    format!("<{name}> option ignored"),
                ));
            }
        }
        // Recorded all the same: a later MASTER_USE_GTID=no starts there.
        PositionChange::Set(file, pos.unwrap_or(4).max(4))
    } else {
        if was != UseGtid::No && c.use_gtid != UseGtid::No {
            notes.push(SqlError::note(
                code::ER_CHANGE_MASTER_IMPLICIT_USE_GTID,
                format!(
                    "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from \
                     '{}' to 'No'",
                    was.name()
                ),
            ));
        }
        c.use_gtid = UseGtid::No;
        PositionChange::Set(file, pos.unwrap_or(4).max(4))
    };
    Ok((c, change, notes))
}

const FILE: &str = "master.info";

/// The settings in `datadir/master.info` (None without the file).
pub fn load(datadir: &Path) -> Result<Option<MasterConf>, String> {
    let path = datadir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut c = MasterConf::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let bad = || format!("{}: bad value of {k}: {v}", path.display());
        match k {
            "host" => c.host = v.to_string(),
            "port" => c.port = v.parse().map_err(|_| bad())?,
            "user" => c.user = v.to_string(),
            "password" => c.password = v.to_string(),
            "use_gtid" => {
                c.use_gtid = match v {
                    "current_pos" => UseGtid::CurrentPos,
                    "no" => UseGtid::No,
                    _ => UseGtid::SlavePos,
                }
            }
            "connect_retry" => c.connect_retry = v.parse().map_err(|_| bad())?,
            "heartbeat_period" => c.heartbeat_period = v.parse().map_err(|_| bad())?,
            "ssl" => c.ssl = v == "1",
            "ssl_verify_server_cert" => c.ssl_verify_server_cert = v == "1",
            "ssl_ca" => c.ssl_ca = (!v.is_empty()).then(|| v.to_string()),
            "ssl_cert" => c.ssl_cert = (!v.is_empty()).then(|| v.to_string()),
            "ssl_key" => c.ssl_key = (!v.is_empty()).then(|| v.to_string()),
            "ssl_capath" => c.ssl_capath = (!v.is_empty()).then(|| v.to_string()),
            "ssl_cipher" => c.ssl_cipher = (!v.is_empty()).then(|| v.to_string()),
            "ssl_crl" => c.ssl_crl = (!v.is_empty()).then(|| v.to_string()),
            "ssl_crlpath" => c.ssl_crlpath = (!v.is_empty()).then(|| v.to_string()),
            _ => {}
        }
    }
    Ok(Some(c))
}

/// Writes (or, with None, removes) `datadir/master.info`, crash-atomically.
pub fn save(datadir: &Path, c: Option<&MasterConf>) -> Result<(), String> {
    let path = datadir.join(FILE);
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    match c {
        None => match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        },
        Some(c) => {
            let opt = |o: &Option<String>| o.clone().unwrap_or_default();
            let text = format!(
                "host={}\nport={}\nuser={}\npassword={}\nuse_gtid={}\nconnect_retry={}\n\
                 heartbeat_period={}\nssl={}\nssl_ca={}\nssl_cert={}\nssl_key={}\n\
                 ssl_verify_server_cert={}\nssl_capath={}\nssl_cipher={}\nssl_crl={}\n\
                 ssl_crlpath={}\n",
                c.host,
                c.port,
                c.user,
                c.password,
                match c.use_gtid {
                    UseGtid::SlavePos => "slave_pos",
                    UseGtid::CurrentPos => "current_pos",
                    UseGtid::No => "no",
                },
                c.connect_retry,
                c.heartbeat_period,
                c.ssl as u8,
                opt(&c.ssl_ca),
                opt(&c.ssl_cert),
                opt(&c.ssl_key),
                c.ssl_verify_server_cert as u8,
                opt(&c.ssl_capath),
                opt(&c.ssl_cipher),
                opt(&c.ssl_crl),
                opt(&c.ssl_crlpath),
            );
            let tmp = datadir.join(format!("{FILE}.tmp"));
            let mut f = std::fs::File::create(&tmp).map_err(io)?;
            f.write_all(text.as_bytes()).map_err(io)?;
            f.sync_all().map_err(io)?;
            std::fs::rename(&tmp, &path).map_err(io)?;
        }
    }
    std::fs::File::open(datadir)
        .and_then(|d| d.sync_all())
        .map_err(io)
}
