//! onelogd as a replica: `CHANGE MASTER TO`, `START | STOP SLAVE`, `RESET SLAVE`,
//! `SHOW SLAVE STATUS`. One thread per replica connects to the primary (a MariaDB server
//! or another onelogd) with onelog's protocol client, asks for the binlog from this
//! server's `@@gtid_slave_pos` (GTID positioning, MariaDB's `MASTER_USE_GTID=slave_pos` /
//! `current_pos`) and applies each event as it arrives (`apply.rs`). The position needs no
//! file of its own: every applied group is logged in onelog's binlog under the primary's
//! GTID, in the same group as its rows, and `@@gtid_slave_pos` is read back from there, so
//! after a crash the replica resumes exactly after the last group it committed. With
//! `MASTER_USE_GTID=no` it asks for the binlog from a file and position instead (those of
//! CHANGE MASTER TO, then those after the last committed group, kept in `master.pos`), and
//! drops the groups its `@@gtid_slave_pos` says it has applied (`position.rs`).
//!
//! The connection settings live in `master.info` in the data directory (`name=value`
//! lines, written to a temporary file, synced and renamed), so a restarted server resumes
//! replication unless `--skip-slave-start`.

mod apply;
mod conf;
mod feed;
mod parallel;
mod position;
mod ssl;

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use onelog_binlog::event::{decode_event, Event};
use onelog_protocol::{Client, ClientError, DumpPacket};
use onelog_sql::{Database, ReplicaControl};
use onelog_types::{code, SqlError, Value};
use parking_lot::Mutex;

use conf::{MasterConf, PositionChange, UseGtid};
use feed::{Fed, Feed, Settings};
use position::{Duplicates, Filtered, PosFile};

/// What SHOW SLAVE STATUS reports.
#[derive(Default, Clone)]
struct Status {
    io_state: String,
    io_running: bool,
    sql_running: bool,
    master_log_file: String,
    read_pos: u64,
    /// The primary's binlog file and position after the last committed group.
    exec_file: String,
    exec_pos: u64,
    master_server_id: u32,
    gtid_io_pos: String,
    last_io_error: Option<(u16, String)>,
    last_sql_error: Option<(u16, String)>,
    /// Seconds between the primary's timestamp of the last applied event and now, while
    /// there are events to apply (None when stopped).
    behind: Option<u64>,
    groups: u64,
    /// Groups rolled back and applied again after a conflict (parallel apply).
    retried: u64,
    /// Where the executed position is kept (`master.pos`).
    pos_file: Option<Arc<PosFile>>,
}

impl Status {
    /// A group ending at `pos` in the primary's `file` is committed (or was applied before).
    fn executed(&mut self, file: String, pos: u64) {
        if let Some(p) = &self.pos_file {
            if let Err(e) = p.record(&file, pos, false) {
                onelog_types::warning!("replica: could not record its position: {e}");
            }
        }
        self.exec_file = file;
        self.exec_pos = pos;
    }

    /// The position CHANGE MASTER TO or RESET SLAVE set, durably.
    fn set_position(&mut self, file: String, pos: u64) -> Result<(), SqlError> {
        if let Some(p) = &self.pos_file {
            p.record(&file, pos, true)
                .map_err(|e| err(code::ER_UNKNOWN_ERROR, format!("master.pos: {e}")))?;
        }
        self.master_log_file = file.clone();
        self.read_pos = pos;
        self.exec_file = file;
        self.exec_pos = pos;
        Ok(())
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    /// A clone of the socket, to unblock a read on STOP SLAVE.
    socket: Arc<Mutex<Option<TcpStream>>>,
    thread: std::thread::JoinHandle<()>,
}

/// The replica of this server (see the module docs).
pub struct Replica {
    db: Arc<Database>,
    datadir: std::path::PathBuf,
    server_id: u32,
    conf: Mutex<Option<MasterConf>>,
    status: Arc<Mutex<Status>>,
    running: Mutex<Option<Running>>,
}

fn err(code: u16, msg: impl Into<String>) -> SqlError {
    SqlError::from_code(code, msg)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Replica {
    /// The replica of `db`, with the settings `master.info` holds, if any.
    pub fn open(db: Arc<Database>, datadir: &std::path::Path) -> Result<Arc<Replica>, String> {
        let conf = conf::load(datadir)?;
        let (pos_file, pos) = PosFile::open(datadir)?;
        let mut status = Status {
            pos_file: Some(Arc::new(pos_file)),
            ..Status::default()
        };
        if let Some((file, pos)) = pos {
            status.master_log_file = file.clone();
            status.read_pos = pos;
            status.exec_file = file;
            status.exec_pos = pos;
        }
        Ok(Arc::new(Replica {
            server_id: db.engine().options().server_id,
            db,
            datadir: datadir.to_path_buf(),
            conf: Mutex::new(conf),
            status: Arc::new(Mutex::new(status)),
            running: Mutex::new(None),
        }))
    }

    /// Whether `master.info` names a primary (the server then starts the replica).
    pub fn configured(&self) -> bool {
        self.conf.lock().is_some()
    }

    fn is_running(&self) -> bool {
        self.running
            .lock()
            .as_ref()
            .is_some_and(|r| !r.thread.is_finished())
    }

    fn global_number(&self, name: &str, default: u64) -> u64 {
        match self.db.global_variable(name) {
            Some(Value::Int(n)) => n.max(0) as u64,
            Some(Value::UInt(n)) => n,
            Some(v) => v.to_string().parse().unwrap_or(default),
            None => default,
        }
    }

    /// `@@slave_parallel_mode`.
    fn parallel_mode(&self) -> String {
        self.db.global_variable("slave_parallel_mode").map_or_else(
            || "optimistic".into(),
            |v| v.to_string().to_ascii_lowercase(),
        )
    }

    /// The parallel-apply settings START SLAVE takes.
    fn settings(&self) -> Settings {
        Settings {
            threads: self.global_number("slave_parallel_threads", 0) as usize,
            mode: parallel::Mode::parse(&self.parallel_mode())
                .unwrap_or(parallel::Mode::Optimistic),
            max_queued: self.global_number("slave_parallel_max_queued", 131_072) as usize,
        }
    }

    /// Stops the replica thread and waits for it.
    pub fn shutdown(&self) {
        let r = self.running.lock().take();
        if let Some(r) = r {
            r.stop.store(true, Ordering::SeqCst);
            if let Some(s) = r.socket.lock().as_ref() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
            let _ = r.thread.join();
        }
    }
}

impl ReplicaControl for Replica {
    fn change_master(&self, opts: &[(String, String)]) -> Result<Vec<SqlError>, SqlError> {
        if self.is_running() {
            return Err(err(
                code::ER_SLAVE_MUST_STOP,
                "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first",
            ));
        }
        let mut c = self.conf.lock();
        let (new, change, notes) = conf::apply_options(c.clone().unwrap_or_default(), opts)?;
        conf::save(&self.datadir, Some(&new)).map_err(|e| err(code::ER_UNKNOWN_ERROR, e))?;
        *c = Some(new);
        let mut st = self.status.lock();
        match change {
            PositionChange::Keep => {}
            PositionChange::Forget => {
                st.set_position(String::new(), 4)?;
                // As MariaDB shows a primary it has not read from yet.
                st.exec_pos = 0;
            }
            PositionChange::Set(file, pos) => {
                let file = file.unwrap_or_else(|| st.exec_file.clone());
                st.set_position(file, pos)?;
            }
        }
        Ok(notes)
    }

    fn start(&self) -> Result<(), SqlError> {
        let Some(conf) = self.conf.lock().clone() else {
            return Err(err(
                code::ER_BAD_SLAVE,
                "The server is not configured as slave; fix in config file or with CHANGE MASTER TO",
            ));
        };
        let mut running = self.running.lock();
        if running.as_ref().is_some_and(|r| !r.thread.is_finished()) {
            // MariaDB: a note, and nothing happens.
            return Ok(());
        }
        let stop = Arc::new(AtomicBool::new(false));
        let socket = Arc::new(Mutex::new(None));
        {
            let mut st = self.status.lock();
            st.io_running = true;
            st.sql_running = true;
            st.last_io_error = None;
            st.last_sql_error = None;
            st.io_state = "Connecting to master".into();
        }
        let ctx = Worker {
            db: self.db.clone(),
            server_id: self.server_id,
            conf,
            settings: self.settings(),
            status: self.status.clone(),
            stop: stop.clone(),
            socket: socket.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("onelog-replica".into())
            .spawn(move || ctx.run())
            .map_err(|e| err(code::ER_UNKNOWN_ERROR, e.to_string()))?;
        *running = Some(Running {
            stop,
            socket,
            thread,
        });
        Ok(())
    }

    fn stop(&self) -> Result<(), SqlError> {
        self.shutdown();
        let mut st = self.status.lock();
        st.io_running = false;
        st.sql_running = false;
        st.io_state.clear();
        st.behind = None;
        Ok(())
    }

    fn reset(&self, all: bool) -> Result<Vec<SqlError>, SqlError> {
        if self.is_running() {
            return Err(err(
                code::ER_SLAVE_MUST_STOP,
                "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' first",
            ));
        }
        let mut st = self.status.lock();
        *st = Status {
            pos_file: st.pos_file.take(),
            ..Status::default()
        };
        st.set_position(String::new(), 4)?;
        st.exec_pos = 0;
        let mut conf = self.conf.lock();
        let mut notes = Vec::new();
        if all {
            conf::save(&self.datadir, None).map_err(|e| err(code::ER_UNKNOWN_ERROR, e))?;
            *conf = None;
        } else if let Some(c) = conf.as_mut().filter(|c| c.use_gtid == UseGtid::No) {
            // MariaDB goes back to GTID positioning.
            c.use_gtid = UseGtid::SlavePos;
            conf::save(&self.datadir, Some(c)).map_err(|e| err(code::ER_UNKNOWN_ERROR, e))?;
            notes.push(SqlError::note(
                code::ER_CHANGE_MASTER_IMPLICIT_USE_GTID,
                "RESET SLAVE is implicitly changing the value of 'Using_Gtid' from 'No' to \
                 'Slave_Pos'",
            ));
        }
        Ok(notes)
    }

    fn running(&self) -> bool {
        self.is_running()
    }

    fn retried_transactions(&self) -> u64 {
        self.status.lock().retried
    }

    fn status(&self) -> Option<Vec<(&'static str, Value)>> {
        let conf = self.conf.lock().clone()?;
        let running = self.is_running();
        let st = self.status.lock().clone();
        let s = |v: &str| Value::str(v);
        let u = |v: u64| Value::UInt(v);
        let yes_no = |b: bool| s(if b { "Yes" } else { "No" });
        let (io_errno, io_error) = st.last_io_error.clone().unwrap_or((0, String::new()));
        let (sql_errno, sql_error) = st.last_sql_error.clone().unwrap_or((0, String::new()));
        let (last_errno, last_error) = (sql_errno, sql_error.clone());
        let io_running = running && st.io_running;
        let sql_running = running && st.sql_running;
        Some(vec![
            (
                "Slave_IO_State",
                s(if io_running { &st.io_state } else { "" }),
            ),
            ("Master_Host", s(&conf.host)),
            ("Master_User", s(&conf.user)),
            ("Master_Port", u(conf.port as u64)),
            ("Connect_Retry", u(conf.connect_retry)),
            ("Master_Log_File", s(&st.master_log_file)),
            ("Read_Master_Log_Pos", u(st.read_pos)),
            ("Relay_Log_File", s("")),
            ("Relay_Log_Pos", u(0)),
            ("Relay_Master_Log_File", s(&st.exec_file)),
            ("Slave_IO_Running", yes_no(io_running)),
            ("Slave_SQL_Running", yes_no(sql_running)),
            ("Replicate_Do_DB", s("")),
            ("Replicate_Ignore_DB", s("")),
            ("Replicate_Do_Table", s("")),
            ("Replicate_Ignore_Table", s("")),
            ("Replicate_Wild_Do_Table", s("")),
            ("Replicate_Wild_Ignore_Table", s("")),
            ("Last_Errno", u(last_errno as u64)),
            ("Last_Error", s(&last_error)),
            ("Skip_Counter", u(0)),
            ("Exec_Master_Log_Pos", u(st.exec_pos)),
            ("Relay_Log_Space", u(0)),
            ("Until_Condition", s("None")),
            ("Until_Log_File", s("")),
            ("Until_Log_Pos", u(0)),
            ("Master_SSL_Allowed", yes_no(conf.ssl)),
            (
                "Master_SSL_CA_File",
                s(conf.ssl_ca.as_deref().unwrap_or("")),
            ),
            (
                "Master_SSL_CA_Path",
                s(conf.ssl_capath.as_deref().unwrap_or("")),
            ),
            ("Master_SSL_Cert", s(conf.ssl_cert.as_deref().unwrap_or(""))),
            (
                "Master_SSL_Cipher",
                s(conf.ssl_cipher.as_deref().unwrap_or("")),
            ),
            ("Master_SSL_Key", s(conf.ssl_key.as_deref().unwrap_or(""))),
            (
                "Seconds_Behind_Master",
                match (sql_running, st.behind) {
                    (true, Some(b)) => u(b),
                    _ => Value::Null,
                },
            ),
            (
                "Master_SSL_Verify_Server_Cert",
                yes_no(conf.ssl_verify_server_cert),
            ),
            ("Last_IO_Errno", u(io_errno as u64)),
            ("Last_IO_Error", s(&io_error)),
            ("Last_SQL_Errno", u(sql_errno as u64)),
            ("Last_SQL_Error", s(&sql_error)),
            ("Replicate_Ignore_Server_Ids", s("")),
            ("Master_Server_Id", u(st.master_server_id as u64)),
            ("Master_SSL_Crl", s(conf.ssl_crl.as_deref().unwrap_or(""))),
            (
                "Master_SSL_Crlpath",
                s(conf.ssl_crlpath.as_deref().unwrap_or("")),
            ),
            ("Using_Gtid", s(conf.use_gtid.name())),
            ("Gtid_IO_Pos", s(&st.gtid_io_pos)),
            ("Replicate_Do_Domain_Ids", s("")),
            ("Replicate_Ignore_Domain_Ids", s("")),
            ("Parallel_Mode", s(&self.parallel_mode())),
            ("SQL_Delay", u(0)),
            ("SQL_Remaining_Delay", Value::Null),
            (
                "Slave_SQL_Running_State",
                s(if sql_running {
                    "Slave has read all relay log; waiting for more updates"
                } else {
                    ""
                }),
            ),
            ("Slave_DDL_Groups", u(0)),
            ("Slave_Non_Transactional_Groups", u(0)),
            ("Slave_Transactional_Groups", u(st.groups)),
        ])
    }
}

/// The replica thread's state.
struct Worker {
    db: Arc<Database>,
    server_id: u32,
    conf: MasterConf,
    settings: Settings,
    status: Arc<Mutex<Status>>,
    stop: Arc<AtomicBool>,
    socket: Arc<Mutex<Option<TcpStream>>>,
}

/// Why a connection ended.
enum End {
    /// STOP SLAVE or shutdown.
    Stopped,
    /// A network or primary error: reconnect after `connect_retry`.
    Io(u16, String),
    /// An error applying an event: the replica stops (MariaDB's SQL thread stops).
    Sql(u16, String),
    /// An error that retrying cannot fix (e.g. equal server ids): the replica stops.
    Fatal(u16, String),
}

fn io_end(e: ClientError) -> End {
    match e {
        ClientError::Server(s) if s.code == code::ER_MASTER_FATAL_ERROR_READING_BINLOG => {
            End::Fatal(
                s.code,
                format!(
                    "Got fatal error {} from master when reading data from binary log: '{}'",
                    s.code, s.message
                ),
            )
        }
        ClientError::Server(s) => End::Io(s.code, s.message),
        ClientError::Protocol(p) => End::Io(
            code::ER_UNKNOWN_ERROR,
            format!("error reading packet from server: {p}"),
        ),
    }
}

impl Worker {
    fn set_state(&self, s: &str) {
        self.status.lock().io_state = s.to_string();
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn run(self) {
        let mut feed = Feed::new(
            &self.db,
            self.settings,
            self.status.clone(),
            self.socket.clone(),
        );
        let mut first = true;
        loop {
            if self.stopped() {
                break;
            }
            if !first {
                // Reconnect after connect_retry (checking for STOP meanwhile).
                self.set_state("Waiting to reconnect after a failed master event read");
                let until = Instant::now() + Duration::from_secs(self.conf.connect_retry.max(1));
                while Instant::now() < until && !self.stopped() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                if self.stopped() {
                    break;
                }
            }
            first = false;
            let mut end = self.session(&mut feed);
            if let End::Io(..) = end {
                // The groups received whole still commit; the position asked for next
                // is after them.
                feed.abandon_partial();
                if let Err((code, msg)) = feed.drain() {
                    end = End::Sql(code, msg);
                }
            }
            match end {
                End::Stopped => break,
                End::Io(code, msg) => {
                    self.status.lock().last_io_error = Some((code, msg));
                }
                End::Sql(code, msg) => {
                    feed.stop();
                    let mut st = self.status.lock();
                    st.last_sql_error = Some((code, msg));
                    st.sql_running = false;
                    st.io_running = false;
                    onelog_types::error!(
                        "replica stopped: {}",
                        st.last_sql_error.as_ref().unwrap().1
                    );
                    return;
                }
                End::Fatal(code, msg) => {
                    feed.stop();
                    let mut st = self.status.lock();
                    onelog_types::error!("replica stopped: {msg}");
                    st.last_io_error = Some((code, msg));
                    st.io_running = false;
                    st.sql_running = false;
                    return;
                }
            }
        }
        feed.stop();
        let mut st = self.status.lock();
        st.io_running = false;
        st.sql_running = false;
    }

    /// One connection to the primary: log in, ask for the binlog from our position, apply
    /// until the connection ends.
    fn session(&self, feed: &mut Feed) -> End {
        let c = &self.conf;
        self.set_state("Connecting to master");
        let mut client = match self.connect() {
            Ok(cl) => cl,
            Err(e) => return e,
        };
        if let Ok(s) = client_socket(&client) {
            *self.socket.lock() = Some(s);
        }
        if self.stopped() {
            return End::Stopped;
        }
        match self.prepare(&mut client) {
            Ok(()) => {}
            Err(e) => return e,
        }
        self.set_state("Waiting for master to send event");
        let heartbeat = Duration::from_secs_f64(c.heartbeat_period.max(0.1));
        let _ = client
            .stream()
            .tcp()
            .set_read_timeout(Some(heartbeat * 2 + Duration::from_secs(5)));
        let mut crc = true;
        // A semi-sync ACK asked for, sent once what it covers is committed here.
        let mut pending_ack: Option<(String, u64)> = None;
        let semi = self.db.engine().semisync().clone();
        let _status = SlaveStatus::set(&semi, client.is_semi_sync());
        let mut duplicates = (c.use_gtid == UseGtid::No).then(|| {
            let applied = self.db.engine().gtid_slave_pos();
            Duplicates::new(&onelog_binlog::parse_gtid_list(&applied).unwrap_or_default())
        });
        loop {
            if self.stopped() {
                return End::Stopped;
            }
            let raw = match client.read_dump() {
                Ok(DumpPacket::Event(raw)) => raw,
                Ok(DumpPacket::Eof) => {
                    return End::Io(code::ER_UNKNOWN_ERROR, "the primary ended the dump".into())
                }
                Err(_) if self.stopped() => return End::Stopped,
                Err(e) => {
                    // A worker's failure shuts the connection down to end this read.
                    return match feed.failure() {
                        Some((code, msg)) => End::Sql(code, msg),
                        None => io_end(e),
                    };
                }
            };
            // The FORMAT_DESCRIPTION says whether the events after it carry a CRC32.
            let (h, ev) = match decode_event(&raw, crc && raw.get(4) != Some(&15)) {
                Ok(x) => x,
                Err(e) => {
                    return End::Io(
                        code::ER_UNKNOWN_ERROR,
                        format!("a malformed event from the primary: {e}"),
                    )
                }
            };
            let file = {
                let mut st = self.status.lock();
                match &ev {
                    Event::Rotate(r) => {
                        st.master_log_file = r.next_file.clone();
                        st.read_pos = r.position;
                    }
                    Event::FormatDescription(f) => {
                        crc = f.checksum_alg == onelog_binlog::event::CHECKSUM_CRC32;
                    }
                    _ => {
                        if h.log_pos > 0 {
                            st.read_pos = h.log_pos as u64;
                        }
                    }
                }
                if let Event::Gtid(g) = &ev {
                    st.gtid_io_pos = g.gtid(h.server_id).to_string();
                }
                st.master_log_file.clone()
            };
            if client.needs_ack() {
                pending_ack = Some((file.clone(), h.log_pos as u64));
            }
            if let Event::Heartbeat(_) = ev {
                if feed.idle() {
                    self.status.lock().behind = Some(0);
                }
                continue;
            }
            match duplicates.as_mut().map(|d| d.filter(&ev)) {
                None | Some(Filtered::Apply) => {}
                Some(Filtered::Drop) => continue,
                Some(Filtered::DropEnd) => {
                    // The groups queued before it commit first: the position never passes
                    // a group that is not committed.
                    if let Err((code, msg)) = feed.drain() {
                        return End::Sql(code, msg);
                    }
                    let mut st = self.status.lock();
                    let pos = st.read_pos;
                    st.executed(file, pos);
                    continue;
                }
            }
            let (pos, ts) = (h.log_pos as u64, h.timestamp as u64);
            match feed.event(h, ev, raw.len(), (file.clone(), pos)) {
                Ok(Fed::Event) => {}
                Ok(Fed::Committed) => {
                    let mut st = self.status.lock();
                    st.groups += 1;
                    let pos = st.read_pos;
                    st.executed(file, pos);
                    st.behind = Some(now_secs().saturating_sub(ts));
                }
                Ok(Fed::Queued(seq)) => {
                    if pending_ack.is_some() {
                        if let Err((code, msg)) = feed.wait_committed(seq) {
                            return End::Sql(code, msg);
                        }
                    }
                }
                Err((code, msg)) => return End::Sql(code, msg),
            }
            // Acknowledged once committed (durable) here: stronger than a MariaDB replica's
            // ACK, which only says the event reached its relay log.
            if !feed.in_group() {
                if let Some((file, pos)) = pending_ack.take() {
                    if let Err(e) = client.send_semi_sync_ack(&file, pos) {
                        return io_end(e);
                    }
                }
            }
        }
    }

    /// Connects to the primary and logs in (over TLS with MASTER_SSL=1, see `ssl.rs`).
    fn connect(&self) -> Result<Client<ssl::Stream>, End> {
        use std::net::ToSocketAddrs;
        let c = &self.conf;
        let tls = ssl::client_config(c).map_err(|e| End::Io(2026, e))?;
        let timeout = Duration::from_secs(10);
        let connect = || -> std::io::Result<TcpStream> {
            let addr = (c.host.as_str(), c.port)
                .to_socket_addrs()?
                .next()
                .ok_or_else(|| std::io::Error::other(format!("unknown host '{}'", c.host)))?;
            let s = TcpStream::connect_timeout(&addr, timeout)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_nodelay(true)?;
            Ok(s)
        };
        let tcp = connect().map_err(|e| io_end(e.into()))?;
        let mut upgrade = tls.map(|cfg| {
            let host = c.host.clone();
            move |s: ssl::Stream| ssl::upgrade(cfg.clone(), &host, s)
        });
        Client::login_with(
            ssl::Stream::Plain(tcp),
            &c.user,
            &c.password,
            upgrade
                .as_mut()
                .map(|f| f as &mut dyn FnMut(ssl::Stream) -> std::io::Result<ssl::Stream>),
        )
        .map_err(io_end)
    }

    /// The queries a MariaDB replica sends before COM_BINLOG_DUMP, then the dump request.
    fn prepare(&self, client: &mut Client<ssl::Stream>) -> Result<(), End> {
        let q = |client: &mut Client<ssl::Stream>, sql: &str| client.query(sql).map_err(io_end);
        let id = client
            .query("SHOW VARIABLES LIKE 'SERVER_ID'")
            .map_err(io_end)?
            .into_iter()
            .next()
            .and_then(|r| r.get(1).cloned().flatten())
            .and_then(|v| String::from_utf8_lossy(&v).parse::<u32>().ok())
            .unwrap_or(0);
        if id == self.server_id {
            return Err(End::Fatal(
                code::ER_SLAVE_FATAL_ERROR,
                "Fatal error: The slave I/O thread stops because master and slave have equal \
                 MariaDB server ids; these ids must be different for replication to work (or \
                 the --replicate-same-server-id option must be used on slave but this does \
                 not always make sense; please check the manual before using it)."
                    .into(),
            ));
        }
        self.status.lock().master_server_id = id;
        let hb_ns = (self.conf.heartbeat_period * 1e9) as u64;
        q(client, &format!("SET @master_heartbeat_period = {hb_ns}"))?;
        q(
            client,
            "SET @master_binlog_checksum = @@global.binlog_checksum",
        )?;
        q(client, "SET @mariadb_slave_capability = 4")?;
        let pos = match self.conf.use_gtid {
            UseGtid::CurrentPos => Some(self.db.engine().gtid_binlog_pos()),
            UseGtid::SlavePos => Some(self.db.engine().gtid_slave_pos()),
            UseGtid::No => None,
        };
        if let Some(pos) = &pos {
            q(client, &format!("SET @slave_connect_state = '{pos}'"))?;
        }
        q(client, "SET @slave_gtid_strict_mode = 0")?;
        if self
            .db
            .engine()
            .semisync()
            .slave_enabled
            .load(Ordering::Relaxed)
        {
            // As a MariaDB replica: semi-sync only with a primary that has it.
            match client.query("SELECT @@global.rpl_semi_sync_master_enabled") {
                Ok(_) => {
                    q(client, "SET @rpl_semi_sync_slave = 1")?;
                    client.set_semi_sync(true);
                }
                Err(_) => onelog_types::warning!(
                    "the primary does not support semi-sync replication;                      replicating asynchronously"
                ),
            }
        }
        q(client, "SET @slave_gtid_ignore_duplicates = 0")?;
        client
            .register_slave(self.server_id, "", 0)
            .map_err(io_end)?;
        // From the file and position after the last committed group (GTID positioning
        // ignores them).
        let (file, at) = match pos {
            Some(_) => (String::new(), 4),
            None => {
                let st = self.status.lock();
                (st.exec_file.clone(), st.exec_pos.max(4))
            }
        };
        client
            .binlog_dump(at as u32, 0, self.server_id, &file)
            .map_err(io_end)?;
        Ok(())
    }
}

/// `Rpl_semi_sync_slave_status`: ON while a semi-sync dump is being read.
struct SlaveStatus<'a>(&'a onelog_engine::SemiSync);

impl<'a> SlaveStatus<'a> {
    fn set(s: &'a onelog_engine::SemiSync, on: bool) -> SlaveStatus<'a> {
        s.slave_status.store(on, Ordering::Relaxed);
        SlaveStatus(s)
    }
}

impl Drop for SlaveStatus<'_> {
    fn drop(&mut self) {
        self.0.slave_status.store(false, Ordering::Relaxed);
    }
}

fn client_socket(c: &Client<ssl::Stream>) -> std::io::Result<TcpStream> {
    c.stream().tcp().try_clone()
}
