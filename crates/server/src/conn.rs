//! One client connection: handshake, authentication, then commands until COM_QUIT.
//!
//! Errors in a statement go back as ERR packets and the connection continues; malformed
//! packets get an ERR (1835) and the connection continues where the protocol allows it;
//! I/O errors and out-of-order packets close the connection. Dropping the session rolls
//! back its open transaction and releases its locks.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use onelog_protocol::*;
use onelog_sql::{QueryResult, ResultColumn, Session};
use onelog_types::{code, SqlError, Value};

mod bulk;

use crate::listener::Server;
use crate::pool::Turn;
use onelog_engine::wait::WaitObserver;

pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// TLS over TCP, after the client's SSLRequest.
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, Stream>>),
}

impl Stream {
    /// A second handle on the socket, for a reader beside the writer (None over TLS).
    pub(crate) fn socket(&self) -> Option<crate::semisync::Socket> {
        match self {
            Stream::Tcp(s) => s.try_clone().ok().map(crate::semisync::Socket::Tcp),
            Stream::Unix(s) => s.try_clone().ok().map(crate::semisync::Socket::Unix),
            Stream::Tls(_) => None,
        }
    }

    fn set_read_timeout(&self, d: Option<std::time::Duration>) {
        let _ = match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(s) => {
                s.sock.set_read_timeout(d);
                Ok(())
            }
        };
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Counts a connection for max_connections while it lives.
struct Slot<'a>(&'a Server);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

pub fn serve(server: &Arc<Server>, stream: Stream, host: String) {
    let n = server.connections.fetch_add(1, Ordering::Relaxed) + 1;
    let _slot = Slot(server);
    let mut ps = PacketStream::new(stream);
    // `SET GLOBAL max_connections` applies to the connections that come after it.
    let max = global_usize(server, "max_connections").unwrap_or(server.cfg.max_connections);
    if n > max + 1 {
        let _ = ps.write_err(&SqlError::from_code(
            code::ER_CON_COUNT_ERROR,
            "Too many connections",
        ));
        let _ = ps.flush();
        return;
    }
    let stats = server.db.conn_stats();
    stats.connections_open(n);
    let mut answered = false;
    match Conn::handshake(server, ps, host, &mut answered) {
        Ok(c) => c.run(),
        Err(_) => stats.aborted_connect(!answered),
    }
}

/// A numeric global variable (as `SET GLOBAL` left it).
fn global_usize(server: &Server, name: &str) -> Option<usize> {
    match server.db.global_variable(name)? {
        Value::UInt(n) => Some(n as usize),
        Value::Int(n) if n >= 0 => Some(n as usize),
        _ => None,
    }
}

struct Prepared {
    params: u16,
    columns: Vec<ColumnInfo>,
    wire: Vec<WireType>,
    types: ParamTypes,
    long_data: HashMap<u16, Vec<u8>>,
}

struct Conn<'a> {
    server: &'a Server,
    ps: PacketStream<Stream>,
    session: Session,
    scramble: [u8; 20],
    host: String,
    caps: u64,
    prepared: HashMap<u32, Prepared>,
    /// The connection's TLS session (None: plain TCP or the unix socket).
    tls: Option<onelog_sql::PeerTls>,
}

/// Writes one statement's result: an OK packet, or a result set ending with an EOF that
/// carries `warnings`; `more` sets SERVER_MORE_RESULTS_EXISTS in `status`.
fn write_result(
    ps: &mut PacketStream<Stream>,
    (mut status, warnings, session_state): (u16, u16, Vec<u8>),
    r: QueryResult,
    more: bool,
    binary: Option<&[WireType]>,
) -> Result<()> {
    if more {
        status |= status::SERVER_MORE_RESULTS_EXISTS;
    }
    match r {
        QueryResult::Ok {
            affected_rows,
            last_insert_id,
            warnings,
            info,
        } => ps.write_ok(&OkPacket {
            affected_rows,
            last_insert_id,
            status,
            warnings,
            info,
            session_state,
        }),
        QueryResult::Rows { columns, rows } => {
            let cols: Vec<ColumnInfo> = columns.iter().map(column_info).collect();
            let wire = wire_types(&cols);
            ps.write_result_header(&cols, status)?;
            for row in &rows {
                if binary.is_some() {
                    ps.write_binary_row(row, &wire)?;
                } else {
                    ps.write_text_row(row, &wire)?;
                }
            }
            ps.write_eof(warnings, status)
        }
    }
}

/// The results of a COM_QUERY go out as each statement ends; LOAD DATA LOCAL asks the
/// client for its file in between (see `local_infile.rs`).
struct QuerySink<'a> {
    ps: &'a mut PacketStream<Stream>,
    /// The client announced CLIENT_LOCAL_FILES.
    local_files: bool,
    sent: usize,
    failed: Option<ProtocolError>,
    /// Result sets go in the binary protocol (COM_STMT_EXECUTE).
    binary: bool,
}

impl QuerySink<'_> {
    fn write(&mut self, session: &Session, r: QueryResult, more: bool, status: u16) -> bool {
        let status = session.status_flags() | status;
        let binary = self.binary.then_some(&[][..]);
        let head = (
            status,
            session.warning_count(),
            session.take_session_state(),
        );
        match write_result(self.ps, head, r, more, binary) {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }
}

impl onelog_sql::Client for QuerySink<'_> {
    fn result(
        &mut self,
        session: &Session,
        r: std::result::Result<QueryResult, SqlError>,
        more: bool,
    ) -> bool {
        self.sent += 1;
        match r {
            Ok(r) => self.write(session, r, more, 0),
            Err(e) => match self.ps.write_err(&e) {
                Ok(()) => true,
                Err(e) => {
                    self.failed = Some(e);
                    false
                }
            },
        }
    }

    fn out_params(&mut self, session: &Session, r: QueryResult) -> bool {
        self.write(session, r, true, status::SERVER_PS_OUT_PARAMS)
    }

    fn local_files(&self) -> bool {
        self.local_files
    }

    fn local_file(&mut self, name: &str) -> io::Result<Box<dyn Read + '_>> {
        crate::local_infile::request(self.ps, name)
    }
}

/// A SQL-layer result column as a protocol column definition.
fn column_info(c: &ResultColumn) -> ColumnInfo {
    ColumnInfo {
        db: c.db.clone(),
        table: c.table.clone(),
        org_table: c.org_table.clone(),
        name: c.name.clone(),
        org_name: c.org_name.clone(),
        ty: FieldType::Raw(c.wire()),
        nullable: c.nullable,
        flags: c.flags,
    }
}

impl<'a> Conn<'a> {
    /// The login; `answered` is set once the client's handshake response is read (a
    /// failure before that is a pre-authentication abort).
    fn handshake(
        server: &'a Server,
        mut ps: PacketStream<Stream>,
        host: String,
        answered: &mut bool,
    ) -> Result<Conn<'a>> {
        let db = &server.db;
        let conn_id = db.next_connection_id();
        // As in MariaDB, a session takes the global max_allowed_packet when it connects.
        ps.set_max_allowed_packet(
            global_usize(server, "max_allowed_packet").unwrap_or(server.cfg.max_allowed_packet),
        );
        let scramble = new_scramble();
        let hs = InitialHandshake {
            server_version: DEFAULT_SERVER_VERSION,
            connection_id: conn_id,
            scramble,
            capabilities: server_capabilities(server.tls.is_some()),
            collation: 45,
            status: status::SERVER_STATUS_AUTOCOMMIT,
            auth_plugin: NATIVE_PASSWORD_PLUGIN,
        };
        ps.write_packet_with(|b| hs.encode(b))?;
        ps.flush()?;
        // A client that never answers must not hold a thread forever.
        ps.get_ref()
            .set_read_timeout(Some(std::time::Duration::from_secs(10)));
        let mut hello = parse_handshake_response(&ps.read_packet()?);
        let stats = db.conn_stats();
        if let (Ok(ClientHello::SslRequest { .. }), Some(cfg)) = (&hello, &server.tls) {
            // TLS handshake on the same socket; the real response comes inside it.
            onelog_sql::ConnStats::bump(&stats.ssl_accepts);
            let cfg = cfg.clone();
            ps = ps.map_stream(|s, unread| {
                let mut conn = rustls::ServerConnection::new(cfg).map_err(io::Error::other)?;
                let mut unread = unread;
                while !unread.is_empty() {
                    conn.read_tls(&mut unread)?;
                }
                Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(conn, s))))
            })?;
            hello = parse_handshake_response(&ps.read_packet()?);
            onelog_sql::ConnStats::bump(&stats.ssl_finished_accepts);
        }
        let tls = match ps.get_ref() {
            Stream::Tls(t) => Some(crate::tls::peer_tls(&t.conn)),
            _ => None,
        };
        let resp = match hello {
            Ok(ClientHello::Response(r)) => {
                *answered = true;
                r
            }
            Ok(ClientHello::SslRequest { .. }) => {
                ps.write_err(&SqlError::from_code(
                    code::ER_NOT_SUPPORTED_AUTH_MODE,
                    "SSL connection error: TLS is not enabled on this server",
                ))?;
                ps.flush()?;
                return Err(ProtocolError::Malformed("TLS not enabled"));
            }
            Err(e) => {
                ps.write_err(&SqlError::from_code(
                    code::ER_HANDSHAKE_ERROR,
                    "Bad handshake",
                ))?;
                ps.flush()?;
                return Err(e);
            }
        };
        if server.cfg.require_secure_transport && matches!(ps.get_ref(), Stream::Tcp(_)) {
            ps.write_err(&SqlError::from_code(
                code::ER_SECURE_TRANSPORT_REQUIRED,
                "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
            ))?;
            ps.flush()?;
            return Err(ProtocolError::Malformed("insecure transport"));
        }
        let mut token = resp.auth_response.clone();
        if resp.needs_auth_switch() {
            ps.write_packet(&native_auth_switch_request(&scramble))?;
            ps.flush()?;
            token = ps.read_packet()?;
        }
        if let Err(e) = db.authenticate(&resp.user, &host, &scramble, &token, tls.as_ref()) {
            ps.write_err(&e)?;
            ps.flush()?;
            return Err(ProtocolError::Malformed("access denied"));
        }
        let mut session = Session::new(db.clone(), resp.user.clone(), host.clone(), conn_id);
        session.set_tls(tls.clone());
        session.set_client_found_rows(resp.capabilities & capability::CLIENT_FOUND_ROWS != 0);
        session.set_session_track(resp.capabilities & capability::CLIENT_SESSION_TRACK != 0);
        if let Some(d) = resp.database.as_deref().filter(|d| !d.is_empty()) {
            if let Err(e) = session.use_database(d) {
                ps.write_err(&e)?;
                ps.flush()?;
                return Err(ProtocolError::Malformed("bad database"));
            }
        }
        ps.write_ok(&OkPacket {
            status: session.status_flags(),
            session_state: session.take_session_state(),
            ..OkPacket::default()
        })?;
        ps.flush()?;
        ps.set_skip_oversized(true);
        ps.get_ref().set_read_timeout(Some(server.cfg.wait_timeout));
        Ok(Conn {
            server,
            ps,
            session,
            scramble,
            host,
            caps: resp.capabilities,
            prepared: HashMap::new(),
            tls,
        })
    }

    fn run(mut self) {
        let mut buf = Vec::new();
        // Under pool-of-threads each command runs in a turn, given back while it waits.
        let turn = self.server.pool.clone().map(|p| Rc::new(Turn::new(p)));
        onelog_engine::wait::set_observer(turn.clone().map(|t| t as Rc<dyn WaitObserver>));
        loop {
            if self.server.stopping.load(Ordering::Relaxed) {
                let _ = self.ps.write_err(&SqlError::from_code(
                    code::ER_SERVER_SHUTDOWN,
                    "Server shutdown in progress",
                ));
                let _ = self.ps.flush();
                return;
            }
            self.ps.reset_seq();
            match self.ps.read_packet_into(&mut buf) {
                Ok(()) => {}
                Err(e) if e.is_recoverable() => {
                    let _ = self.ps.write_err(&e.to_sql_error());
                    if self.ps.flush().is_err() {
                        return;
                    }
                    continue;
                }
                Err(_) => return,
            }
            if self.session.is_killed() {
                return;
            }
            if let Some(t) = &turn {
                t.enter(self.high_priority(&buf));
            }
            // A panic in a statement ends this connection only: its session is dropped
            // (its transaction rolled back, its locks released) and the client is told.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.command(&buf)));
            if let Some(t) = &turn {
                t.leave();
            }
            match r {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) | Ok(Err(_)) => return,
                Err(_) => {
                    let _ = self.ps.write_err(&SqlError::from_code(
                        code::ER_UNKNOWN_ERROR,
                        "Internal error in this statement; the connection is closed and its \
                         transaction rolled back (see the server's log)",
                    ));
                    let _ = self.ps.flush();
                    return;
                }
            }
            let sent = self.ps.flush();
            // SHUTDOWN / COM_SHUTDOWN stop the server once their answer is out.
            self.server.db.run_requested_shutdown();
            if sent.is_err() {
                return;
            }
        }
    }

    /// The thread pool's priority of a command: everything but a query returning rows
    /// outside a transaction goes first (see `pool.rs`).
    fn high_priority(&self, payload: &[u8]) -> bool {
        if self.status() & status::SERVER_STATUS_IN_TRANS != 0 {
            return true;
        }
        let read = match payload.first() {
            Some(&com::QUERY) => crate::pool::is_read_query(&payload[1..]),
            Some(&com::STMT_EXECUTE) => payload
                .get(1..5)
                .and_then(|id| {
                    self.prepared
                        .get(&u32::from_le_bytes(id.try_into().unwrap()))
                })
                .is_some_and(|p| !p.columns.is_empty()),
            _ => false,
        };
        !read
    }

    fn status(&self) -> u16 {
        self.session.status_flags()
    }

    fn ok(&mut self) -> Result<()> {
        let ok = OkPacket {
            status: self.status(),
            session_state: self.session.take_session_state(),
            ..OkPacket::default()
        };
        self.ps.write_ok(&ok)
    }

    /// Writes one statement's result; `more` sets SERVER_MORE_RESULTS_EXISTS.
    fn write_result(
        &mut self,
        r: QueryResult,
        more: bool,
        binary: Option<&[WireType]>,
    ) -> Result<()> {
        let head = (
            self.status(),
            self.session.warning_count(),
            self.session.take_session_state(),
        );
        write_result(&mut self.ps, head, r, more, binary)
    }

    /// Handles one command; Ok(false) ends the connection.
    fn command(&mut self, payload: &[u8]) -> Result<bool> {
        let cmd = match parse_command(payload, self.caps) {
            Ok(c) => c,
            Err(e) => {
                self.ps.write_err(&e.to_sql_error())?;
                return Ok(true);
            }
        };
        match cmd {
            Command::Quit => return Ok(false),
            Command::Ping => self.ok()?,
            Command::InitDb(db) => {
                let db = String::from_utf8_lossy(db).into_owned();
                match self.session.use_database(&db) {
                    Ok(()) => self.ok()?,
                    Err(e) => self.ps.write_err(&e)?,
                }
            }
            Command::Query(q) => {
                let sql = onelog_sql::decode_query(q).into_owned();
                let mut sink = QuerySink {
                    ps: &mut self.ps,
                    local_files: self.caps & capability::CLIENT_LOCAL_FILES != 0,
                    sent: 0,
                    failed: None,
                    binary: false,
                };
                self.session.execute_with(&sql, &mut sink);
                let (n, failed) = (sink.sent, sink.failed.take());
                if let Some(e) = failed {
                    return Err(e);
                }
                if n == 0 {
                    self.ps.write_err(&SqlError::from_code(
                        code::ER_EMPTY_QUERY,
                        "Query was empty",
                    ))?;
                }
            }
            Command::Statistics => {
                let db = &self.server.db;
                let st = db.engine().status();
                let (uptime, questions) = (db.uptime(), db.questions());
                // MariaDB's average: statements received over seconds up, to 1/1000.
                let qps1000 = (questions * 1000).checked_div(uptime).unwrap_or(0);
                let text = format!(
                    "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  Open tables: {}  Queries per second avg: {}.{:03}  Binlog commits: {}  Log syncs: {}",
                    db.threads_connected(),
                    db.engine().catalog().tables.len(),
                    qps1000 / 1000,
                    qps1000 % 1000,
                    st.binlog_commits,
                    st.log_syncs,
                );
                self.ps.write_packet(text.as_bytes())?;
            }
            Command::Refresh(options) => match self.session.refresh(options) {
                Ok(_) => self.ok()?,
                Err(e) => self.ps.write_err(&e)?,
            },
            Command::Shutdown => match self.session.shutdown() {
                Ok(_) => {
                    let st = self.status();
                    self.ps.write_eof(0, st)?
                }
                Err(e) => self.ps.write_err(&e)?,
            },
            Command::ProcessKill(id) => match self.session.kill_connection(id as u64, false) {
                Ok(()) => self.ok()?,
                Err(e) => self.ps.write_err(&e)?,
            },
            Command::SetOption(_) => {
                let st = self.status();
                self.ps.write_eof(0, st)?
            }
            Command::ResetConnection => {
                self.session.reset();
                self.prepared.clear();
                self.ok()?
            }
            Command::ChangeUser(cu) => {
                let db = self.server.db.clone();
                let tls = self.tls.as_ref();
                match db.authenticate(&cu.user, &self.host, &self.scramble, &cu.auth_response, tls)
                {
                    Ok(_) => {
                        let id = self.session.connection_id();
                        self.session = Session::new(db, cu.user.clone(), self.host.clone(), id);
                        self.session.set_tls(self.tls.clone());
                        self.prepared.clear();
                        if let Some(d) = cu.database.as_deref().filter(|d| !d.is_empty()) {
                            if let Err(e) = self.session.use_database(d) {
                                self.ps.write_err(&e)?;
                                return Ok(true);
                            }
                        }
                        self.ok()?
                    }
                    Err(e) => {
                        self.ps.write_err(&e)?;
                        return Ok(false);
                    }
                }
            }
            Command::FieldList { table, .. } => self.field_list(table)?,
            Command::StmtPrepare(q) => {
                let sql = onelog_sql::decode_query(q).into_owned();
                match self.session.prepare(&sql) {
                    Ok(info) => {
                        let cols: Vec<ColumnInfo> = info.columns.iter().map(column_info).collect();
                        let wire = wire_types(&cols);
                        let st = self.status();
                        self.ps
                            .write_prepare_ok(info.id, info.params, &cols, 0, st)?;
                        self.prepared.insert(
                            info.id,
                            Prepared {
                                params: info.params,
                                columns: cols,
                                wire,
                                types: Vec::new(),
                                long_data: HashMap::new(),
                            },
                        );
                    }
                    Err(e) => self.ps.write_err(&e)?,
                }
            }
            Command::StmtExecute { stmt_id, .. } => self.execute(stmt_id, payload)?,
            Command::StmtBulkExecute { stmt_id, .. } => self.bulk_execute(stmt_id, payload)?,
            Command::StmtSendLongData {
                stmt_id,
                param_id,
                data,
            } => {
                let stmt_id = self.resolve_stmt(stmt_id);
                if let Some(p) = self.prepared.get_mut(&stmt_id) {
                    p.long_data
                        .entry(param_id)
                        .or_default()
                        .extend_from_slice(data);
                }
            }
            Command::StmtClose(id) => {
                let id = self.resolve_stmt(id);
                self.prepared.remove(&id);
                self.session.close_prepared(id);
            }
            Command::StmtReset(id) => {
                let id = self.resolve_stmt(id);
                if let Some(p) = self.prepared.get_mut(&id) {
                    p.long_data.clear();
                }
                self.ok()?
            }
            Command::RegisterSlave(r) => {
                match self
                    .session
                    .register_replica(r.server_id, &r.host, r.port, r.master_id)
                {
                    Ok(()) => self.ok()?,
                    Err(e) => self.ps.write_err(&e)?,
                }
            }
            Command::BinlogDump {
                position,
                flags,
                server_id,
                file,
            } => {
                let req = crate::dump::DumpRequest {
                    position,
                    flags,
                    server_id,
                    file,
                };
                crate::dump::serve(self.server, &mut self.ps, &mut self.session, req)?;
                return Ok(false);
            }
            _ => self.ps.write_err(&SqlError::from_code(
                code::ER_UNKNOWN_COM_ERROR,
                "Unknown command",
            ))?,
        }
        Ok(true)
    }

    fn execute(&mut self, stmt_id: u32, payload: &[u8]) -> Result<()> {
        let stmt_id = self.resolve_stmt(stmt_id);
        let Some(p) = self.prepared.get_mut(&stmt_id) else {
            return self.ps.write_err(&SqlError::from_code(
                code::ER_UNKNOWN_STMT_HANDLER,
                format!(
                    "Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_execute"
                ),
            ));
        };
        let params = match decode_execute_params(payload, p.params, &mut p.types, &mut p.long_data)
        {
            Ok(v) => v,
            Err(e) => return self.ps.write_err(&e.to_sql_error()),
        };
        let wire = p.wire.clone();
        let _ = &p.columns;
        // A CALL's result sets and OUT parameters go out as they come.
        let mut sink = QuerySink {
            ps: &mut self.ps,
            local_files: false,
            sent: 0,
            failed: None,
            binary: true,
        };
        let r = self
            .session
            .execute_prepared_to(stmt_id, &params, Some(&mut sink));
        if let Some(e) = sink.failed.take() {
            return Err(e);
        }
        match r {
            Ok(r) => self.write_result(r, false, Some(&wire)),
            Err(e) => self.ps.write_err(&e),
        }
    }

    fn field_list(&mut self, table: &[u8]) -> Result<()> {
        let table = String::from_utf8_lossy(table).into_owned();
        let Some(db) = self.session.current_db().map(str::to_string) else {
            return self.ps.write_err(&SqlError::from_code(
                code::ER_NO_DB_ERROR,
                "No database selected",
            ));
        };
        let cat = self.server.db.engine().catalog();
        let Some(t) = cat.table(&db, &table) else {
            return self.ps.write_err(&SqlError::from_code(
                code::ER_NO_SUCH_TABLE,
                format!("Table '{db}.{table}' doesn't exist"),
            ));
        };
        for c in &t.columns {
            let ci = ColumnInfo::table_column(&db, &t.name, &c.name, c.ty, c.nullable);
            self.ps
                .write_packet_with(|b| ci.encode_definition(b, true))?;
        }
        let st = self.status();
        self.ps.write_eof(0, st)
    }
}
