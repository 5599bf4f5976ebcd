//! The event stream of a binlog dump (COM_BINLOG_DUMP): what a MariaDB replica,
//! `mariadb-binlog --read-from-remote-server` or a CDC client receives, as a MariaDB 10.11
//! primary sends it. The server wraps each item in a packet (`0x00` + event).
//!
//! Per file, starting with the first one asked for:
//!
//! ```text
//! fake ROTATE   timestamp 0 | type 4 | server_id | len | log_pos 0 | flags ARTIFICIAL (0x20)
//!               | position u64 (the start offset; 4 for later files) | file name | [CRC32]
//! FORMAT_DESCRIPTION of the file (flag BINLOG_IN_USE cleared; log_pos 0 and created 0,
//!               CRC32 recomputed, when the dump starts inside the file)
//! the file's events from the start position: GTID_LIST, groups, ROTATE at its end
//! ```
//!
//! The first fake ROTATE carries a CRC32 when the client's `@master_binlog_checksum` is
//! CRC32, later ones when the previous file's FORMAT_DESCRIPTION says CRC32. Events are
//! sent as stored (CRC32 included); only those that delimit files and groups are decoded
//! (the replica checks every CRC32). Groups come only once durable ([`Follower`]).
//! ANNOTATE_ROWS events are left out unless asked for (the client places later events by
//! their `log_pos`), and so is the ROW_REDO event that leads an account statement's group
//! (onelog's own redo; the group's QUERY is what replicas run).
//!
//! A dump from a GTID position (`@slave_connect_state`) starts at the newest file whose
//! starting GTID_LIST the position covers. In each domain of the position, groups are left
//! out until the one with the position's server id and a sequence number at or past the
//! position's (left out too when it is the position's GTID itself); then a fake GTID_LIST
//! tells the client where it is:
//!
//! ```text
//! fake GTID_LIST  timestamp 0 | type 163 | server_id | len | log_pos (end of the last
//!                 event read) | flags ARTIFICIAL | count u32 | (domain u32, server u32,
//!                 seq u64) per GTID seen in this dump | CRC32
//! ```
//!
//! When nothing new becomes durable for a while the server sends [`DumpStream::heartbeat`]:
//! timestamp 0 | type 27 | server_id | len | log_pos (how far the dump has read in the
//! current file) | flags 0 | file name | CRC32 (per the file's FORMAT_DESCRIPTION).

use std::collections::VecDeque;
use std::time::Duration;

use crate::error::{BinlogError, Result};
use crate::event::{
    encode_event, event_type, header_flags, seal_event, write_event_unsealed, Event, GtidList,
    Rotate, CHECKSUM_CRC32, CHECKSUM_LEN,
};
use crate::file_log::{Binlog, Feed, Follower, GroupScanner, LogPos, Next};
use crate::gtid::Gtid;

/// Where a dump starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Start {
    /// After the GTID position (`@slave_connect_state`: last GTID per domain).
    Gtid(Vec<Gtid>),
    /// At a file and offset (4: the start of the file).
    File { name: String, offset: u64 },
}

/// What the client asked for.
#[derive(Clone, Debug)]
pub struct DumpOptions {
    pub start: Start,
    /// Fake events carry a CRC32 (`@master_binlog_checksum` is CRC32).
    pub fake_checksum: bool,
    /// Send ANNOTATE_ROWS events (COM_BINLOG_DUMP flag 2).
    pub annotate: bool,
    /// `@slave_gtid_strict_mode`: a GTID position in a hole of the binlog (a later GTID of
    /// the same server exists, the requested one does not) is refused.
    pub strict: bool,
    /// `@slave_gtid_ignore_duplicates`: a position ahead of the binlog in a domain is
    /// accepted (the replica may have those GTIDs from another primary).
    pub ignore_duplicates: bool,
}

/// One item of the stream.
#[derive(Debug)]
pub enum Item {
    /// An event to send; `group_end`: where it ends in the binlog when it is the last
    /// event of a group (what a semi-sync replica acknowledges).
    Event {
        bytes: Vec<u8>,
        group_end: Option<LogPos>,
    },
    /// Nothing became durable within the wait.
    Idle,
}

/// The dump of one client (see the module docs).
pub struct DumpStream<'a> {
    log: &'a Binlog,
    follower: Follower<'a>,
    queue: VecDeque<(Vec<u8>, Option<LogPos>)>,
    annotate: bool,
    /// CRC32 on the next fake ROTATE.
    rotate_crc: bool,
    /// The file being sent and whether its events carry a CRC32.
    file_no: u32,
    crc: bool,
    /// The dump starts inside this file.
    mid_file: Option<u32>,
    /// Domains still being skipped, with the position's GTID in each.
    skip_to: Vec<Gtid>,
    /// The GTIDs seen in this dump, last per (domain, server).
    seen: Vec<Gtid>,
    groups: GroupScanner,
    /// Inside a group that is left out.
    skipping: bool,
    /// A fake GTID_LIST is due once the current group is done with.
    fake_list_due: bool,
    /// See [`DumpOptions::strict`].
    strict: bool,
    server_id: u32,
}

impl<'a> DumpStream<'a> {
    /// Opens the dump: checks the start position (MariaDB's 1236 texts come back as
    /// [`BinlogError::GtidNotFound`]; an unknown file is [`BinlogError::UnknownFile`], a
    /// position outside the file [`BinlogError::InvalidArgument`]).
    pub fn open(log: &'a Binlog, opts: DumpOptions) -> Result<DumpStream<'a>> {
        let (from, mut skip_to) = match &opts.start {
            Start::Gtid(pos) => (
                LogPos::new(
                    log.find_gtid_start_with(pos, opts.ignore_duplicates)?
                        .file_no,
                    4,
                ),
                pos.clone(),
            ),
            Start::File { name, offset } => {
                let no = log
                    .file_no(name)
                    .ok_or_else(|| BinlogError::UnknownFile(name.clone()))?;
                if *offset < 4 {
                    return Err(BinlogError::InvalidArgument(format!(
                        "position {offset} is before the first event"
                    )));
                }
                (LogPos::new(no, *offset), Vec::new())
            }
        };
        // A domain whose position is where the start file begins has nothing to skip.
        if let Some(start_state) = log.file_start_state(from.file_no) {
            skip_to.retain(|g| !start_state.contains(g));
        }
        let mut follower = log.follow(from)?;
        follower.delimiters_only();
        let mut stream = DumpStream {
            log,
            follower,
            queue: VecDeque::new(),
            annotate: opts.annotate,
            rotate_crc: opts.fake_checksum,
            file_no: from.file_no,
            crc: true,
            mid_file: (from.offset > 4).then_some(from.file_no),
            skip_to,
            seen: Vec::new(),
            groups: GroupScanner::default(),
            skipping: false,
            fake_list_due: false,
            strict: opts.strict,
            server_id: log.options().server_id,
        };
        if from.offset > 4 {
            // Starting inside the file: its FORMAT_DESCRIPTION is read separately.
            let mut head = log.follow(LogPos::new(from.file_no, 4))?;
            match head.next(Duration::ZERO)? {
                Next::Event(e) if matches!(e.event, Event::FormatDescription(_)) => {
                    stream.push_file_start(from, &e.event, e.raw);
                }
                _ => {
                    return Err(BinlogError::Corrupt {
                        file: log.file_name(from.file_no),
                        offset: 4,
                        reason: "Failed to find format descriptor event in start of binlog".into(),
                    })
                }
            }
        }
        Ok(stream)
    }

    /// Lets appended bytes wait this long for another sync before the dump syncs them
    /// (see [`Follower::set_sync_after`]).
    pub fn set_sync_after(&mut self, after: Option<Duration>) {
        self.follower.set_sync_after(after);
    }

    /// The file being sent.
    pub fn file_name(&self) -> String {
        self.log.file_name(self.file_no)
    }

    /// How far the dump has read in the current file.
    pub fn offset(&self) -> u64 {
        let p = self.follower.position();
        if p.file_no == self.file_no {
            p.offset
        } else {
            4
        }
    }

    /// An artificial event (timestamp 0) with or without its CRC32.
    fn fake_event(&self, ev: &Event, flags: u16, log_pos: u32, crc: bool) -> Vec<u8> {
        if crc {
            return encode_event(0, self.server_id, flags, log_pos, ev);
        }
        let mut out = Vec::new();
        write_event_unsealed(&mut out, 0, self.server_id, flags, ev);
        out.truncate(out.len() - CHECKSUM_LEN);
        let len = out.len() as u32;
        out[9..13].copy_from_slice(&len.to_le_bytes());
        out[13..17].copy_from_slice(&log_pos.to_le_bytes());
        out
    }

    /// Queues what starts file `at.file_no`: the fake ROTATE and its FORMAT_DESCRIPTION.
    fn push_file_start(&mut self, at: LogPos, fde: &Event, mut raw: Vec<u8>) {
        let rotate = Event::Rotate(Rotate {
            position: at.offset,
            next_file: self.log.file_name(at.file_no),
        });
        let rotate = self.fake_event(&rotate, header_flags::ARTIFICIAL, 0, self.rotate_crc);
        self.queue.push_back((rotate, None));
        self.file_no = at.file_no;
        self.crc = matches!(fde, Event::FormatDescription(f) if f.checksum_alg == CHECKSUM_CRC32);
        self.rotate_crc = self.crc;
        let flags = u16::from_le_bytes([raw[17], raw[18]]) & !header_flags::BINLOG_IN_USE;
        raw[17..19].copy_from_slice(&flags.to_le_bytes());
        let mid_file = self.mid_file.take() == Some(at.file_no);
        if mid_file || !self.skip_to.is_empty() {
            // As MariaDB: the client must not take this event's position (inside the file)
            // nor its creation time (which would make a replica drop temporary tables).
            if mid_file {
                raw[13..17].copy_from_slice(&0u32.to_le_bytes());
            }
            // created: after binlog_version u16 and server_version [50].
            raw[19 + 52..19 + 56].copy_from_slice(&0u32.to_le_bytes());
            if self.crc {
                let log_pos = u32::from_le_bytes(raw[13..17].try_into().unwrap());
                seal_event(&mut raw, log_pos);
            }
        }
        self.queue.push_back((raw, None));
    }

    fn saw(&mut self, g: Gtid) {
        match self
            .seen
            .iter_mut()
            .find(|s| s.domain == g.domain && s.server == g.server)
        {
            Some(s) => *s = g,
            None => self.seen.push(g),
        }
    }

    /// Whether the group starting with `g` is left out (MariaDB's rule, see the module
    /// docs); a domain whose position is reached stops being skipped.
    ///
    /// In strict mode, reaching the position's server with a later sequence number than
    /// the position's means the position's GTID is missing from the binlog (a hole):
    /// MariaDB refuses that with 1236.
    fn skip_group(&mut self, g: Gtid) -> Result<bool> {
        let Some(i) = self.skip_to.iter().position(|p| p.domain == g.domain) else {
            return Ok(false);
        };
        let p = self.skip_to[i];
        let skip = g.server != p.server || g.seq <= p.seq;
        if g.server == p.server && g.seq >= p.seq {
            if self.strict && g.seq > p.seq {
                return Err(BinlogError::GtidNotFound(format!(
                    "The binlog on the master is missing the GTID {p} requested by the \
                     slave (even though a subsequent sequence number does exist), and GTID \
                     strict mode is enabled"
                )));
            }
            self.skip_to.remove(i);
            self.fake_list_due = true;
        }
        Ok(skip)
    }

    /// The next item, waiting up to `wait` for something to become durable.
    pub fn next(&mut self, wait: Duration) -> Result<Item> {
        loop {
            if let Some((bytes, group_end)) = self.queue.pop_front() {
                return Ok(Item::Event { bytes, group_end });
            }
            let e = match self.follower.next(wait)? {
                Next::Idle => return Ok(Item::Idle),
                Next::Event(e) => e,
            };
            if let Event::FormatDescription(_) = &e.event {
                self.push_file_start(LogPos::new(e.pos.file_no, 4), &e.event, e.raw);
                continue;
            }
            if let Event::Gtid(g) = &e.event {
                let g = g.gtid(e.header.server_id);
                self.saw(g);
                self.skipping = self.skip_group(g)?;
            }
            if let Event::RowRedo(_) = &e.event {
                // onelog's own redo of an account statement (before its GTID): replicas
                // run the statement's QUERY instead, and a MariaDB replica refuses a group
                // that does not start with its GTID.
                self.groups.feed(&e.header, &e.event);
                continue;
            }
            let send = !self.skipping
                && (self.annotate || e.header.type_code != event_type::ANNOTATE_ROWS);
            let mut group_end = None;
            if let Feed::Complete(_) = self.groups.feed(&e.header, &e.event) {
                self.skipping = false;
                group_end = Some(e.end);
            }
            if send {
                self.queue.push_back((e.raw, group_end));
            }
            if self.fake_list_due && !self.skipping {
                self.fake_list_due = false;
                let list = Event::GtidList(GtidList {
                    gtids: self.seen.clone(),
                    flags: 0,
                });
                let ev = self.fake_event(
                    &list,
                    header_flags::ARTIFICIAL,
                    e.end.offset as u32,
                    self.crc,
                );
                self.queue.push_back((ev, None));
            }
        }
    }

    /// A HEARTBEAT naming the current file and how far the dump has read in it.
    pub fn heartbeat(&self) -> Vec<u8> {
        let ev = Event::Heartbeat(self.file_name());
        self.fake_event(&ev, 0, self.offset() as u32, self.crc)
    }
}
