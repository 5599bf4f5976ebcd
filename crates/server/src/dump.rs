//! The dump thread: a connection that sent COM_BINLOG_DUMP receives the binlog's events
//! (`onelog_binlog::stream`), one packet each (`0x00` + event), from the position it asked
//! for, and then each group as soon as it is durable, until it disconnects or is killed.
//! Heartbeats when idle for `@master_heartbeat_period`; with the non-blocking flag (or
//! server id 0) an EOF packet at the end instead of waiting. Errors are MariaDB's 1236.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use onelog_binlog::stream::{DumpOptions, DumpStream, Item, Start};
use onelog_binlog::BinlogError;
use onelog_protocol::{PacketStream, Result};
use onelog_sql::Session;
use onelog_types::{code, SqlError};

use crate::conn::Stream;
use crate::listener::Server;
use crate::semisync::{self, AckSession};

/// COM_BINLOG_DUMP flags.
const DUMP_NON_BLOCK: u16 = 1;
const DUMP_SEND_ANNOTATE_ROWS: u16 = 2;

/// How much lower than its connection's scheduling priority a dump thread runs (nice).
const DUMP_NICE: i32 = 5;

/// Lowers this thread's priority by [`DUMP_NICE`] while alive (restored on drop): when the
/// cores are busy, a dump thread that wakes on every synced group should not take them
/// from the commit path and the sessions being answered.
struct LowerPriority {
    tid: libc::id_t,
    was: Option<i32>,
}

impl LowerPriority {
    fn new() -> LowerPriority {
        // SAFETY: gettid, getpriority and setpriority on this thread's own id.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            *libc::__errno_location() = 0;
            let was = libc::getpriority(libc::PRIO_PROCESS, tid);
            let ok = *libc::__errno_location() == 0
                && libc::setpriority(libc::PRIO_PROCESS, tid, (was + DUMP_NICE).min(19)) == 0;
            LowerPriority {
                tid,
                was: ok.then_some(was),
            }
        }
    }
}

impl Drop for LowerPriority {
    fn drop(&mut self) {
        if let Some(was) = self.was {
            // SAFETY: setpriority on this thread's own id (raising back needs the
            // capability the server has when it runs its commit path above nice 0).
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, self.tid, was);
            }
        }
    }
}

/// How often a waiting dump looks at KILL and shutdown.
const POLL: Duration = Duration::from_millis(100);

/// What the client sent in COM_BINLOG_DUMP.
pub(crate) struct DumpRequest<'a> {
    pub position: u32,
    pub flags: u16,
    pub server_id: u32,
    pub file: &'a [u8],
}

fn fatal(msg: impl Into<String>) -> SqlError {
    SqlError::from_code(code::ER_MASTER_FATAL_ERROR_READING_BINLOG, msg)
}

/// MariaDB's texts for a position that cannot be served.
fn dump_error(e: BinlogError, req: &DumpRequest<'_>) -> SqlError {
    match e {
        BinlogError::GtidNotFound(msg) => fatal(msg),
        BinlogError::UnknownFile(_) => {
            fatal("Could not find first log file name in binary log index file")
        }
        BinlogError::InvalidArgument(_) => {
            let file = String::from_utf8_lossy(req.file);
            fatal(format!(
                "Client requested master to start replication from impossible position; the \
                 first event '{file}' at {}, the last event read from '{file}' at 4, the last \
                 byte read from '{file}' at 4.",
                req.position
            ))
        }
        other => fatal(other.to_string()),
    }
}

/// Writes one event packet; `semi`: the semi-sync header's flags, for a semi-sync
/// replica. An event that needs an ACK goes out at once, and the packet sequence restarts
/// (see `semisync.rs`).
fn write_event(ps: &mut PacketStream<Stream>, ev: &[u8], semi: Option<u8>) -> Result<()> {
    ps.write_packet_with(|b| {
        b.push(0);
        if let Some(flags) = semi {
            b.extend_from_slice(&[semisync::MAGIC, flags]);
        }
        b.extend_from_slice(ev);
    })?;
    if semi.is_some_and(|f| f & semisync::NEED_ACK != 0) {
        ps.flush()?;
        ps.set_seq(1);
    }
    Ok(())
}

/// Serves one dump until the client goes, the dump is killed or the server stops. Errors
/// are answered; the connection ends afterwards either way (as in MariaDB).
pub(crate) fn serve(
    server: &Server,
    ps: &mut PacketStream<Stream>,
    session: &mut Session,
    req: DumpRequest<'_>,
) -> Result<()> {
    match run(server, ps, session, &req) {
        Ok(()) => Ok(()),
        Err(DumpEnd::Io(e)) => Err(e),
        Err(DumpEnd::Refused(e)) => {
            ps.write_err(&e)?;
            ps.flush()
        }
    }
}

enum DumpEnd {
    Io(onelog_protocol::ProtocolError),
    Refused(SqlError),
}

impl From<onelog_protocol::ProtocolError> for DumpEnd {
    fn from(e: onelog_protocol::ProtocolError) -> Self {
        DumpEnd::Io(e)
    }
}

impl From<SqlError> for DumpEnd {
    fn from(e: SqlError) -> Self {
        DumpEnd::Refused(e)
    }
}

fn run(
    server: &Server,
    ps: &mut PacketStream<Stream>,
    session: &mut Session,
    req: &DumpRequest<'_>,
) -> std::result::Result<(), DumpEnd> {
    let vars = session.start_dump(req.server_id)?;
    let engine = server.db.engine().clone();
    let log = engine
        .binlog_log()
        .ok_or_else(|| fatal("Binary log is not open"))?;
    let Some(checksum) = vars.checksum.as_deref() else {
        return Err(fatal(
            "Slave can not handle replication events with the checksum that master is \
             configured to log",
        )
        .into());
    };
    let start = match &vars.connect_state {
        Some(state) => Start::Gtid(onelog_binlog::parse_gtid_list(state).map_err(|_| {
            fatal(format!(
                "Failed to parse the slave's GTID position '{state}'"
            ))
        })?),
        None => {
            // The name ends at a NUL, as MariaDB reads it (python-mysql-replication sends
            // four NUL bytes for "the first file").
            let file = req.file.split(|&b| b == 0).next().unwrap_or_default();
            let name = String::from_utf8_lossy(file).into_owned();
            let name = if name.is_empty() {
                // An empty name: the first file (as mariadb-binlog without a file name).
                log.list_files()
                    .first()
                    .map(|f| f.0.clone())
                    .unwrap_or_default()
            } else {
                name
            };
            Start::File {
                name,
                offset: req.position as u64,
            }
        }
    };
    let opts = DumpOptions {
        start,
        fake_checksum: checksum.eq_ignore_ascii_case("CRC32"),
        annotate: req.flags & DUMP_SEND_ANNOTATE_ROWS != 0,
        strict: vars.strict,
        ignore_duplicates: vars.ignore_duplicates,
    };
    let non_block = req.flags & DUMP_NON_BLOCK != 0 || req.server_id == 0;
    let heartbeat = (vars.heartbeat_ns > 0).then(|| Duration::from_nanos(vars.heartbeat_ns));
    // The whole dump is a wait as far as the thread pool is concerned.
    let refused = |e| DumpEnd::Refused(dump_error(e, req));
    onelog_engine::wait::blocking(|| {
        // A semi-sync replica's dump is on the commit path: it keeps its priority.
        let _nice = (!vars.semi_sync).then(LowerPriority::new);
        let mut stream = DumpStream::open(log, opts).map_err(refused)?;
        // A semi-sync replica: every packet has the header; ACKs are read beside the dump
        // (not over TLS, where the connection cannot be read from another thread: the
        // replica is then served asynchronously, every flag clear).
        let ack = match (vars.semi_sync, ps.get_ref().socket()) {
            (true, Some(sock)) => {
                AckSession::start(engine.clone(), sock, ps.unread().to_vec(), req.server_id).ok()
            }
            _ => None,
        };
        let semi = |group_end| {
            vars.semi_sync
                .then(|| ack.as_ref().map_or(0, |a| a.flags_for(group_end)))
        };
        let mut last_sent = Instant::now();
        // An event written after a wait, not flushed yet.
        let mut pending = false;
        loop {
            let sync_after =
                (engine.sync_binlog() != 1).then_some(onelog_binlog::FOLLOW_SYNC_AFTER);
            stream.set_sync_after(sync_after);
            // Everything durable now, then one flush (one send per group).
            let mut sent = std::mem::take(&mut pending);
            while let Item::Event { bytes, group_end } =
                stream.next(Duration::ZERO).map_err(refused)?
            {
                write_event(ps, &bytes, semi(group_end))?;
                sent = true;
            }
            if sent {
                ps.flush()?;
                last_sent = Instant::now();
            }
            if non_block {
                ps.write_eof(0, 0)?;
                ps.flush()?;
                return Ok(());
            }
            if session.is_killed()
                || server.stopping.load(Ordering::Relaxed)
                || ack.as_ref().is_some_and(|a| a.closed())
            {
                return Ok(());
            }
            let mut wait = POLL;
            if let Some(hb) = heartbeat {
                let due = last_sent + hb;
                let now = Instant::now();
                if now >= due {
                    write_event(ps, &stream.heartbeat(), semi(None))?;
                    ps.flush()?;
                    last_sent = now;
                    continue;
                }
                wait = wait.min(due - now);
            }
            if let Item::Event { bytes, group_end } = stream.next(wait).map_err(refused)? {
                // The rest of its group is durable too: sent with it, above.
                write_event(ps, &bytes, semi(group_end))?;
                pending = true;
            }
        }
    })
}
