//! The replica's events on their way to be applied: as they arrive, in the replica
//! thread's own session (`slave_parallel_threads=0`), or gathered into whole groups for
//! the worker pool (`parallel.rs`).
//!
//! A group larger than [`GATHER_LIMIT`] is not held in memory: once the pool has
//! committed every group before it, it is applied here as its events arrive, like a
//! serial replica does.

use std::net::TcpStream;
use std::sync::Arc;

use onelog_binlog::event::{Event, GtidEvent};
use onelog_binlog::EventHeader;
use onelog_sql::Database;
use parking_lot::Mutex;

use super::apply::{Applied, Applier};
use super::parallel::{Job, Mode, Planner, Pool};
use super::Status;

/// Bytes of one group held for the pool; a larger group is applied as it arrives.
pub const GATHER_LIMIT: usize = 16 << 20;

/// `slave_parallel_threads`, `slave_parallel_mode`, `slave_parallel_max_queued`.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub threads: usize,
    pub mode: Mode,
    pub max_queued: usize,
}

/// What one event did.
#[derive(Debug, PartialEq, Eq)]
pub enum Fed {
    /// It did not end a group.
    Event,
    /// It ended a group, committed here.
    Committed,
    /// It ended a group, queued for the workers under this sequence number.
    Queued(u64),
}

/// The part an event after a GTID plays in its group.
#[derive(Debug, PartialEq, Eq)]
pub enum GroupEvent {
    /// `BEGIN`.
    Begin,
    /// XID, XA_PREPARE, `COMMIT` or `ROLLBACK`: the end of a transactional group.
    End,
    /// Another statement: the whole of a standalone group.
    Statement,
    /// Table maps, rows events and the rest.
    Other,
}

pub fn group_event(ev: &Event) -> GroupEvent {
    match ev {
        Event::Xid(_) | Event::XaPrepare(_) => GroupEvent::End,
        Event::Query(q) => {
            let text = String::from_utf8_lossy(&q.query);
            let t = text.trim();
            if t.eq_ignore_ascii_case("BEGIN") {
                GroupEvent::Begin
            } else if t.eq_ignore_ascii_case("COMMIT") || t.eq_ignore_ascii_case("ROLLBACK") {
                GroupEvent::End
            } else {
                GroupEvent::Statement
            }
        }
        _ => GroupEvent::Other,
    }
}

/// A group being gathered for the pool.
struct Gathered {
    gtid: GtidEvent,
    events: Vec<(EventHeader, Event)>,
    bytes: usize,
    /// It carries SQL statements, not only rows (it then runs alone).
    statements: bool,
}

pub struct Feed {
    applier: Applier,
    pool: Option<Arc<Pool>>,
    planner: Planner,
    gathering: Option<Gathered>,
    /// The open group is applied here as it arrives (too big to gather).
    inline: bool,
    next_seq: u64,
}

type Failure = (u16, String);

impl Feed {
    pub fn new(
        db: &Arc<Database>,
        s: Settings,
        status: Arc<Mutex<Status>>,
        socket: Arc<Mutex<Option<TcpStream>>>,
    ) -> Feed {
        let parallel = s.threads > 0 && s.mode != Mode::None;
        Feed {
            applier: Applier::new(db.system_session()),
            pool: parallel
                .then(|| Pool::start(db.clone(), s.threads, s.max_queued, status, socket)),
            planner: Planner::new(s.mode),
            gathering: None,
            inline: false,
            next_seq: 0,
        }
    }

    fn apply_here(&mut self, h: &EventHeader, ev: &Event) -> Result<Fed, Failure> {
        match self.applier.apply(h, ev) {
            Ok(Applied::Event) => Ok(Fed::Event),
            Ok(Applied::Group(_)) => {
                self.inline = false;
                Ok(Fed::Committed)
            }
            Err(e) => Err((e.code, e.message)),
        }
    }

    /// Takes one event of the primary's stream. `bytes`: its size; `end`: the primary's
    /// binlog file and the event's end position in it.
    pub fn event(
        &mut self,
        h: EventHeader,
        ev: Event,
        bytes: usize,
        end: (String, u64),
    ) -> Result<Fed, Failure> {
        let Some(pool) = self.pool.clone() else {
            return self.apply_here(&h, &ev);
        };
        if self.inline {
            return self.apply_here(&h, &ev);
        }
        if let Event::Gtid(g) = &ev {
            // A group cut off by a new GTID is dropped, as the serial applier does.
            self.gathering = Some(Gathered {
                gtid: *g,
                events: vec![(h, ev)],
                bytes,
                statements: false,
            });
            return Ok(Fed::Event);
        }
        let Some(gat) = self.gathering.as_mut() else {
            // Outside a group: FORMAT_DESCRIPTION, ROTATE, GTID_LIST, ... (no data).
            return self.apply_here(&h, &ev);
        };
        let ends = match group_event(&ev) {
            GroupEvent::End => true,
            GroupEvent::Statement => {
                gat.statements = true;
                gat.gtid.is_standalone()
            }
            GroupEvent::Begin | GroupEvent::Other => false,
        };
        gat.events.push((h, ev));
        gat.bytes += bytes;
        if ends {
            let gat = self.gathering.take().expect("gathering");
            let seq = self.next_seq;
            self.next_seq += 1;
            let start = self.planner.plan(seq, &gat.gtid, gat.statements);
            pool.dispatch(Job {
                seq,
                start,
                events: gat.events,
                bytes: gat.bytes,
                end,
                timestamp: h.timestamp,
            })?;
            return Ok(Fed::Queued(seq));
        }
        if gat.bytes > GATHER_LIMIT {
            // Too big to hold: applied here once every group before it is committed.
            pool.drain()?;
            let gat = self.gathering.take().expect("gathering");
            self.inline = true;
            for (h, ev) in &gat.events {
                self.apply_here(h, ev)?;
            }
        }
        Ok(Fed::Event)
    }

    /// Whether a group is partly received.
    pub fn in_group(&self) -> bool {
        self.gathering.is_some() || self.applier.in_group()
    }

    /// Whether nothing is received and not yet committed.
    pub fn idle(&self) -> bool {
        !self.in_group() && self.pool.as_ref().is_none_or(|p| p.idle())
    }

    /// Drops a partly received group (the connection broke inside it).
    pub fn abandon_partial(&mut self) {
        self.gathering = None;
        self.inline = false;
        self.applier.abandon();
    }

    /// Waits until every whole group received is committed.
    pub fn drain(&self) -> Result<(), Failure> {
        self.pool.as_ref().map_or(Ok(()), |p| p.drain())
    }

    /// Waits until group `seq` (see [`Fed::Queued`]) is committed.
    pub fn wait_committed(&self, seq: u64) -> Result<(), Failure> {
        self.pool
            .as_ref()
            .map_or(Ok(()), |p| p.wait_committed(seq + 1))
    }

    /// The error of a group that failed in the pool.
    pub fn failure(&self) -> Option<Failure> {
        self.pool.as_ref().and_then(|p| p.failure())
    }

    /// Stops: what is not queued for commit is rolled back.
    pub fn stop(&mut self) {
        self.abandon_partial();
        if let Some(p) = self.pool.take() {
            p.stop();
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.stop();
    }
}
