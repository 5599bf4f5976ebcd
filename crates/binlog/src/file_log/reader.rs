//! Reading the binlog: events from a position, whole event groups, crossing files.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::naming::Naming;
use super::LogPos;
use crate::error::{BinlogError, Result};
use crate::event::{
    decode_event, Event, EventHeader, FormatDescription, BINLOG_MAGIC, CHECKSUM_CRC32,
    CHECKSUM_LEN, HEADER_LEN,
};
use crate::fs::{FileSystem, LogFile, OpenMode};
use crate::gtid::Gtid;

/// Events larger than this are taken as garbage (MariaDB's max_allowed_packet limit is 1 GiB).
const MAX_EVENT_LEN: u64 = 1 << 30;
const READ_AHEAD: usize = 256 * 1024;

/// Result of reading at one offset (short-lived, so the size of the event variant is fine).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    Event(EventHeader, Event, Vec<u8>),
    /// End of file, or a zeroed header (the unused part of a preallocated file).
    End,
    /// Bytes that are not a whole valid event here (torn write, garbage).
    Invalid(String),
}

/// Buffered positional reads of one file, never beyond `cap`.
pub(crate) struct FileCursor {
    file: Arc<dyn LogFile>,
    cap: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl FileCursor {
    pub fn new(file: Arc<dyn LogFile>, cap: u64) -> io::Result<FileCursor> {
        let len = file.len()?;
        Ok(FileCursor {
            file,
            cap: cap.min(len),
            buf: Vec::new(),
            buf_start: 0,
        })
    }

    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Reads no further than `cap` (nor the file's current length) from now on. What is
    /// buffered stays valid: it was read below the old cap, from bytes that do not change.
    pub fn set_cap(&mut self, cap: u64) -> io::Result<()> {
        self.cap = cap.min(self.file.len()?);
        let keep = self.cap.saturating_sub(self.buf_start) as usize;
        self.buf.truncate(keep);
        Ok(())
    }

    /// `n` bytes at `off`, or fewer if `cap` comes first.
    pub fn read(&mut self, off: u64, n: usize) -> io::Result<&[u8]> {
        let n = n.min(self.cap.saturating_sub(off) as usize);
        let have =
            off >= self.buf_start && off + n as u64 <= self.buf_start + self.buf.len() as u64;
        if !have {
            let want = n.max(READ_AHEAD).min(self.cap.saturating_sub(off) as usize);
            self.buf.resize(want, 0);
            let got = self.file.read_at(&mut self.buf, off)?;
            self.buf.truncate(got);
            self.buf_start = off;
        }
        let s = (off - self.buf_start) as usize;
        let e = (s + n).min(self.buf.len());
        Ok(&self.buf[s..e])
    }

    /// Reads and checks the event at `off`: lengths, CRC32 (when `checksum`), and that its
    /// `log_pos` is its end offset.
    pub fn event_at(&mut self, off: u64, checksum: bool) -> io::Result<Outcome> {
        self.event_at_with(off, checksum, true)
    }

    /// [`FileCursor::event_at`]; with `all` false, only the events that delimit files and
    /// groups (FORMAT_DESCRIPTION, ROTATE, GTID, GTID_LIST, XID, QUERY, ROW_REDO) are decoded and
    /// CRC-checked, the others come back as [`Event::Unknown`] with an empty body beside
    /// their raw bytes (a dump sends those as they are; the replica checks their CRC32, as
    /// with MariaDB's default `master_verify_checksum=OFF`).
    pub fn event_at_with(&mut self, off: u64, checksum: bool, all: bool) -> io::Result<Outcome> {
        let cap = self.cap;
        let h = self.read(off, HEADER_LEN)?;
        if h.is_empty() || h.iter().all(|&b| b == 0) {
            return Ok(Outcome::End);
        }
        if h.len() < HEADER_LEN {
            return Ok(Outcome::Invalid(format!(
                "partial event header ({} bytes)",
                h.len()
            )));
        }
        let len = u32::from_le_bytes(h[9..13].try_into().unwrap()) as u64;
        let min = (HEADER_LEN + if checksum { CHECKSUM_LEN } else { 0 }) as u64;
        if len < min || len > MAX_EVENT_LEN {
            return Ok(Outcome::Invalid(format!("bad event length {len}")));
        }
        if off + len > cap {
            return Ok(Outcome::Invalid(format!(
                "event of {len} bytes runs past the end ({cap})"
            )));
        }
        let raw = self.read(off, len as usize)?.to_vec();
        if raw.len() as u64 != len {
            return Ok(Outcome::Invalid("short read".into()));
        }
        let decoded = if all || delimits(raw[4]) {
            decode_event(&raw, checksum)
        } else {
            EventHeader::decode(&raw).map(|h| {
                let ev = Event::Unknown {
                    type_code: h.type_code,
                    body: Vec::new(),
                };
                (h, ev)
            })
        };
        let (h, ev) = match decoded {
            Ok(x) => x,
            Err(e) => return Ok(Outcome::Invalid(e.to_string())),
        };
        if h.log_pos as u64 != off + len {
            return Ok(Outcome::Invalid(format!(
                "log_pos {} is not the event's end {}",
                h.log_pos,
                off + len
            )));
        }
        Ok(Outcome::Event(h, ev, raw))
    }
}

/// Whether events of this type delimit files or groups (see [`FileCursor::event_at_with`]);
/// ROW_REDO starts an account statement's group.
fn delimits(type_code: u8) -> bool {
    use crate::event::event_type::*;
    matches!(
        type_code,
        FORMAT_DESCRIPTION | ROTATE | GTID | GTID_LIST | XID | QUERY | ROW_REDO
    )
}

/// What a binlog file starts with: magic, FORMAT_DESCRIPTION, GTID_LIST.
#[derive(Clone, Debug)]
pub(crate) struct FileHeader {
    pub fde: FormatDescription,
    pub start_state: Vec<Gtid>,
    /// Offset just past the GTID_LIST.
    pub end: u64,
}

/// Reads and checks a file's header. Err(reason) if it is not a valid one.
pub(crate) fn read_header(
    cur: &mut FileCursor,
) -> io::Result<std::result::Result<FileHeader, String>> {
    if cur.read(0, 4)? != BINLOG_MAGIC {
        return Ok(Err("missing binlog magic".into()));
    }
    let fde = match cur.event_at(4, true)? {
        Outcome::Event(_, Event::FormatDescription(f), _) => {
            if f.checksum_alg != CHECKSUM_CRC32 {
                return Ok(Err("binlog without CRC32 checksums".into()));
            }
            f
        }
        Outcome::Event(..) => return Ok(Err("first event is not FORMAT_DESCRIPTION".into())),
        Outcome::End => return Ok(Err("no FORMAT_DESCRIPTION".into())),
        Outcome::Invalid(r) => return Ok(Err(format!("FORMAT_DESCRIPTION: {r}"))),
    };
    let off = 4 + u32::from_le_bytes(cur.read(4 + 9, 4)?.try_into().unwrap()) as u64;
    match cur.event_at(off, true)? {
        Outcome::Event(h, Event::GtidList(l), _) => Ok(Ok(FileHeader {
            fde,
            start_state: l.gtids,
            end: h.log_pos as u64,
        })),
        Outcome::Event(..) => Ok(Err("second event is not GTID_LIST".into())),
        Outcome::End => Ok(Err("no GTID_LIST".into())),
        Outcome::Invalid(r) => Ok(Err(format!("GTID_LIST: {r}"))),
    }
}

/// One event read from the log.
#[derive(Clone, Debug)]
pub struct ReadEvent {
    /// Where the event starts.
    pub pos: LogPos,
    /// Where it ends (its file and `log_pos`).
    pub end: LogPos,
    pub header: EventHeader,
    pub event: Event,
    /// The whole event as stored, header and CRC included.
    pub raw: Vec<u8>,
}

/// Where a reader finds the files.
#[derive(Clone)]
pub(crate) struct Location {
    pub fs: Arc<dyn FileSystem>,
    pub dir: PathBuf,
    pub naming: Naming,
    pub base: String,
}

impl Location {
    pub fn path(&self, no: u32) -> PathBuf {
        self.dir.join(self.naming.file_name(&self.base, no))
    }

    pub fn name(&self, no: u32) -> String {
        self.naming.file_name(&self.base, no)
    }
}

/// Iterates events from a position up to a limit (by default the end of the log when the
/// reader was made), following ROTATE events and file ends into the next file. Yields the
/// FORMAT_DESCRIPTION and GTID_LIST of every file it enters at its start.
pub struct EventReader {
    loc: Location,
    pos: LogPos,
    limit: LogPos,
    cur: Option<(u32, FileCursor, bool)>,
    failed: bool,
    /// Decode only the events that delimit files and groups.
    delimiters_only: bool,
}

impl EventReader {
    pub(crate) fn new(loc: Location, from: LogPos, limit: LogPos) -> EventReader {
        EventReader {
            loc,
            pos: from,
            limit,
            cur: None,
            failed: false,
            delimiters_only: false,
        }
    }

    /// From now on, decode only FORMAT_DESCRIPTION, ROTATE, GTID, GTID_LIST, XID, QUERY and
    /// ROW_REDO events; the others come as [`Event::Unknown`] beside their raw bytes,
    /// unchecked.
    pub(crate) fn delimiters_only(&mut self) {
        self.delimiters_only = true;
    }

    /// Where the next event starts.
    pub fn position(&self) -> LogPos {
        self.pos
    }

    /// Where reading stops.
    pub fn limit(&self) -> LogPos {
        self.limit
    }

    /// Moves the limit (e.g. to the binlog's new end, to follow it). The open file stays
    /// open; its readable length is taken again.
    pub fn set_limit(&mut self, limit: LogPos) {
        self.limit = limit;
        if let Some((no, c, _)) = &mut self.cur {
            let cap = match (*no).cmp(&limit.file_no) {
                std::cmp::Ordering::Less => u64::MAX,
                std::cmp::Ordering::Equal => limit.offset,
                std::cmp::Ordering::Greater => 0,
            };
            if c.set_cap(cap).is_err() {
                self.cur = None;
            }
        }
    }

    fn corrupt(&mut self, reason: String) -> BinlogError {
        self.failed = true;
        BinlogError::Corrupt {
            file: self.loc.name(self.pos.file_no),
            offset: self.pos.offset,
            reason,
        }
    }

    fn step(&mut self) -> Result<Option<ReadEvent>> {
        loop {
            if self.pos >= self.limit {
                return Ok(None);
            }
            let no = self.pos.file_no;
            if self.cur.as_ref().map(|c| c.0) != Some(no) {
                let path = self.loc.path(no);
                let file = match self.loc.fs.open(&path, OpenMode::READ) {
                    Ok(f) => f,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        if no < self.limit.file_no {
                            self.failed = true;
                            return Err(BinlogError::UnknownFile(self.loc.name(no)));
                        }
                        return Ok(None);
                    }
                    Err(e) => return Err(BinlogError::io("open", path.display(), e)),
                };
                let cap = if no == self.limit.file_no {
                    self.limit.offset
                } else {
                    u64::MAX
                };
                let c = FileCursor::new(file, cap)
                    .map_err(|e| BinlogError::io("stat", path.display(), e))?;
                self.cur = Some((no, c, true));
            }
            let io_err = |e| BinlogError::io("read", self.loc.path(no).display(), e);
            if self.pos.offset < 4 {
                let (_, c, _) = self.cur.as_mut().unwrap();
                let magic = c.read(0, 4).map_err(io_err)?.to_vec();
                if magic != BINLOG_MAGIC {
                    return Err(self.corrupt("missing binlog magic".into()));
                }
                self.pos.offset = 4;
                continue;
            }
            let (_, c, checksum) = self.cur.as_mut().unwrap();
            let off = self.pos.offset;
            match c
                .event_at_with(off, *checksum, !self.delimiters_only)
                .map_err(io_err)?
            {
                Outcome::End => {
                    if no < self.limit.file_no {
                        self.pos = LogPos::new(no + 1, 0);
                        self.cur = None;
                        continue;
                    }
                    return Ok(None);
                }
                Outcome::Invalid(reason) => return Err(self.corrupt(reason)),
                Outcome::Event(header, event, raw) => {
                    if let Event::FormatDescription(f) = &event {
                        *checksum = f.checksum_alg == CHECKSUM_CRC32;
                    }
                    let start = self.pos;
                    let end = LogPos::new(no, header.log_pos as u64);
                    self.pos = if matches!(event, Event::Rotate(_)) {
                        self.cur = None;
                        LogPos::new(no + 1, 0)
                    } else {
                        end
                    };
                    return Ok(Some(ReadEvent {
                        pos: start,
                        end,
                        header,
                        event,
                        raw,
                    }));
                }
            }
        }
    }
}

impl Iterator for EventReader {
    type Item = Result<ReadEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        self.step().transpose()
    }
}

/// Tracks event-group boundaries: a group starts at a GTID event and ends at XID, at the
/// QUERY of a standalone GTID, or at a `COMMIT`/`ROLLBACK` QUERY. A row-redo event before
/// a GTID event belongs to that group (see [`crate::redo`]): it starts the group, which
/// must go on with the GTID event.
#[derive(Default)]
pub(crate) struct GroupScanner {
    open: Option<(Gtid, bool)>,
    /// A row-redo event was read; the GTID event of its group comes next.
    lead: bool,
}

#[derive(Debug)]
pub(crate) enum Feed {
    /// An event outside any group (FORMAT_DESCRIPTION, GTID_LIST, ROTATE, ...).
    Outside,
    /// The group's GTID event or one of its events.
    Inside,
    /// The event that completes the group.
    Complete(Gtid),
    /// An event that cannot be where it is.
    Error(String),
}

impl GroupScanner {
    pub fn open_group(&self) -> Option<Gtid> {
        self.open.map(|o| o.0)
    }

    /// Whether the events fed last are part of a group that is not complete yet.
    pub fn unfinished(&self) -> bool {
        self.open.is_some() || self.lead
    }

    pub fn feed(&mut self, h: &EventHeader, ev: &Event) -> Feed {
        match (self.open, ev) {
            (None, Event::Gtid(g)) => {
                self.lead = false;
                self.open = Some((g.gtid(h.server_id), g.is_standalone()));
                Feed::Inside
            }
            (None, Event::RowRedo(_)) if !self.lead => {
                self.lead = true;
                Feed::Inside
            }
            (None, _) if self.lead => Feed::Error(format!(
                "{} event after a row redo event, before its group's GTID event",
                ev.type_name()
            )),
            (None, _) => Feed::Outside,
            (Some((g, _)), Event::Gtid(_)) => {
                Feed::Error(format!("GTID event while group {g} is unfinished"))
            }
            (Some((g, standalone)), ev) => {
                let ends = match ev {
                    Event::Xid(_) | Event::XaPrepare(_) => true,
                    Event::Query(q) => {
                        standalone
                            || q.query.eq_ignore_ascii_case(b"COMMIT")
                            || q.query.eq_ignore_ascii_case(b"ROLLBACK")
                    }
                    _ => false,
                };
                if ends {
                    self.open = None;
                    return Feed::Complete(g);
                }
                match ev {
                    // The rows of a foreign key cascade, inside a transaction's group.
                    Event::RowRedo(_) if !standalone => Feed::Inside,
                    Event::FormatDescription(_)
                    | Event::Rotate(_)
                    | Event::GtidList(_)
                    | Event::BinlogCheckpoint(_)
                    | Event::RowRedo(_) => {
                        Feed::Error(format!("{} event inside group {g}", ev.type_name()))
                    }
                    _ => Feed::Inside,
                }
            }
        }
    }
}

/// One complete event group read from the log.
#[derive(Clone, Debug)]
pub struct ReadGroup {
    pub gtid: Gtid,
    /// Start of the group's first event.
    pub start: LogPos,
    /// End of the group's last event.
    pub end: LogPos,
    /// Every event of the group, in log order: the GTID event first, or the row-redo event
    /// that precedes it.
    pub events: Vec<ReadEvent>,
}

/// Iterates complete event groups (GTID .. XID, GTID .. XA_PREPARE, GTID + QUERY, or
/// ROW_REDO + GTID + QUERY),
/// crossing files. A group cut off by the reader's limit is not returned.
pub struct GroupReader {
    events: EventReader,
    /// domain -> seq: groups at or below are skipped (a replica's position).
    skip: HashMap<u32, u64>,
}

impl GroupReader {
    pub(crate) fn new(events: EventReader) -> GroupReader {
        GroupReader {
            events,
            skip: HashMap::new(),
        }
    }

    /// Skips groups a replica at GTID position `pos` already has.
    pub fn skip_through(&mut self, pos: &[Gtid]) {
        for g in pos {
            self.skip.insert(g.domain, g.seq);
        }
    }

    pub fn events_mut(&mut self) -> &mut EventReader {
        &mut self.events
    }

    fn skipped(&self, g: &Gtid) -> bool {
        self.skip.get(&g.domain).is_some_and(|&s| g.seq <= s)
    }
}

impl Iterator for GroupReader {
    type Item = Result<ReadGroup>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut scanner = GroupScanner::default();
        let mut events: Vec<ReadEvent> = Vec::new();
        loop {
            let e = match self.events.next()? {
                Ok(e) => e,
                Err(err) => return Some(Err(err)),
            };
            match scanner.feed(&e.header, &e.event) {
                Feed::Outside => {}
                Feed::Inside => events.push(e),
                Feed::Complete(gtid) => {
                    let end = e.end;
                    events.push(e);
                    let group = ReadGroup {
                        gtid,
                        start: events[0].pos,
                        end,
                        events: std::mem::take(&mut events),
                    };
                    if !self.skipped(&gtid) {
                        return Some(Ok(group));
                    }
                }
                Feed::Error(reason) => {
                    return Some(Err(BinlogError::Corrupt {
                        file: self.events.loc.name(e.pos.file_no),
                        offset: e.pos.offset,
                        reason,
                    }))
                }
            }
        }
    }
}

/// Events of one file, read on its own (for dump and export): from the magic to the end of
/// the events (zeros or end of file). Positions carry `file_no` 0.
pub struct FileEvents {
    cur: FileCursor,
    name: String,
    off: u64,
    checksum: bool,
    done: bool,
}

impl FileEvents {
    pub fn open(fs: &dyn FileSystem, path: &std::path::Path) -> Result<FileEvents> {
        let file = fs
            .open(path, OpenMode::READ)
            .map_err(|e| BinlogError::io("open", path.display(), e))?;
        let mut cur = FileCursor::new(file, u64::MAX)
            .map_err(|e| BinlogError::io("stat", path.display(), e))?;
        let name = path.display().to_string();
        let magic = cur
            .read(0, 4)
            .map_err(|e| BinlogError::io("read", &name, e))?;
        if magic != BINLOG_MAGIC {
            return Err(BinlogError::Corrupt {
                file: name,
                offset: 0,
                reason: "missing binlog magic".into(),
            });
        }
        Ok(FileEvents {
            cur,
            name,
            off: 4,
            checksum: true,
            done: false,
        })
    }

    /// Offset of the next event (after the last one returned).
    pub fn offset(&self) -> u64 {
        self.off
    }
}

impl Iterator for FileEvents {
    type Item = Result<ReadEvent>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.cur.event_at(self.off, self.checksum) {
            Err(e) => Err(BinlogError::io("read", &self.name, e)),
            Ok(Outcome::End) => {
                self.done = true;
                return None;
            }
            Ok(Outcome::Invalid(reason)) => Err(BinlogError::Corrupt {
                file: self.name.clone(),
                offset: self.off,
                reason,
            }),
            Ok(Outcome::Event(header, event, raw)) => {
                if let Event::FormatDescription(f) = &event {
                    self.checksum = f.checksum_alg == CHECKSUM_CRC32;
                }
                let pos = LogPos::new(0, self.off);
                self.off = header.log_pos as u64;
                Ok(ReadEvent {
                    pos,
                    end: LogPos::new(0, self.off),
                    header,
                    event,
                    raw,
                })
            }
        };
        if r.is_err() {
            self.done = true;
        }
        Some(r)
    }
}
