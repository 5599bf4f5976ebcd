use std::path::Path;
use std::sync::Arc;

use onelog_types::{ColumnType, Value};

use super::*;
use crate::event::Event;
use crate::fs::{FileSystem, SimFs};
use crate::rows::{ColumnDef, TableDef};

fn table() -> TableDef {
    TableDef {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnDef {
                name: "id".into(),
                ty: ColumnType::Int {
                    bytes: 8,
                    unsigned: false,
                },
                nullable: false,
            },
            ColumnDef {
                name: "v".into(),
                ty: ColumnType::Blob {
                    len_bytes: 3,
                    binary: true,
                    collation: onelog_types::Collation::Binary,
                },
                nullable: true,
            },
        ],
        primary_key: vec![0],
    }
}

fn trx(id: i64, payload: usize) -> EventGroup {
    let mut g = EventGroup::transaction(1, 1_700_000_000);
    g.map_table(5, &table()).unwrap();
    g.insert(5, &[Value::Int(id), Value::Bytes(vec![b'x'; payload])])
        .unwrap();
    g.commit(id as u64).unwrap();
    g
}

fn opts(naming: Naming, max: u64) -> BinlogOptions {
    let mut o = BinlogOptions::new("/log");
    o.naming = naming;
    o.max_binlog_size = max;
    if naming == Naming::Classic {
        o.base_name = "mb".into();
    }
    o
}

fn open(fs: &SimFs, o: &BinlogOptions) -> Binlog {
    Binlog::open_with_fs(Arc::new(fs.clone()), o.clone()).unwrap()
}

fn ids(b: &Binlog) -> Vec<u64> {
    b.read_groups(LogPos::new(b.options().naming.first_number(), 0))
        .map(|g| g.unwrap().gtid.seq)
        .collect()
}

#[test]
fn append_read_and_reopen() {
    for naming in [Naming::Engine, Naming::Classic] {
        let fs = SimFs::new();
        let o = opts(naming, 1 << 20);
        let b = open(&fs, &o);
        assert!(b.recovery_report().created);
        let first = naming.first_number();
        assert_eq!(b.end_pos().file_no, first);
        let mut gs: Vec<_> = (1..=3).map(|i| trx(i, 10)).collect();
        gs.push(EventGroup::ddl(1, 1, 7, "d", "CREATE TABLE u (a INT)"));
        let info = b.append(&mut gs).unwrap();
        assert_eq!(info.groups.len(), 4);
        assert_eq!(info.groups[0].gtid, Gtid::new(0, 1, 1));
        assert_eq!(info.groups[3].gtid, Gtid::new(0, 1, 4));
        assert_eq!(info.groups[1].start, info.groups[0].end);
        assert_eq!(info.end, b.end_pos());
        b.sync().unwrap();
        assert_eq!(b.synced_pos(), b.end_pos());
        assert_eq!(b.gtid_binlog_pos(), "0-1-4");

        let groups: Vec<_> = b
            .read_groups(LogPos::new(first, 0))
            .map(|g| g.unwrap())
            .collect();
        assert_eq!(groups.len(), 4);
        for (g, a) in groups.iter().zip(&info.groups) {
            assert_eq!((g.gtid, g.start, g.end), (a.gtid, a.start, a.end));
        }
        // Commit ids: groups appended together share one.
        let Event::Gtid(ge) = &groups[1].events[0].event else {
            panic!()
        };
        assert_eq!(ge.commit_id, Some(1));
        assert!(matches!(groups[3].events[1].event, Event::Query(_)));

        let events: Vec<_> = b
            .read_events(LogPos::new(first, 0))
            .map(|e| e.unwrap())
            .collect();
        assert!(matches!(events[0].event, Event::FormatDescription(_)));
        assert_eq!(events[0].pos.offset, 4);
        assert!(matches!(events[1].event, Event::GtidList(_)));

        drop(b);
        let b = open(&fs, &o);
        let r = b.recovery_report();
        assert_eq!(
            (r.truncated_bytes, r.groups_scanned, r.created),
            (0, 4, false)
        );
        assert_eq!(b.end_pos(), info.end);
        let more = b.append(&mut [trx(9, 1)]).unwrap();
        assert_eq!(more.groups[0].gtid.seq, 5);
        assert_eq!(ids(&b), vec![1, 2, 3, 4, 5]);
        if naming == Naming::Engine {
            let f = fs
                .open(&Path::new("/log").join("binlog-000000"), OpenMode::READ)
                .unwrap();
            assert_eq!(f.len().unwrap(), 1 << 20, "preallocated");
        } else {
            let idx = fs.read_all(Path::new("/log/mb.index")).unwrap();
            assert_eq!(idx, b"./mb.000001\n");
        }
    }
}

#[test]
fn rotation_keeps_groups_whole() {
    for naming in [Naming::Engine, Naming::Classic] {
        let fs = SimFs::new();
        let o = opts(naming, 8192);
        let b = open(&fs, &o);
        let mut all = Vec::new();
        for round in 0..10 {
            let mut gs: Vec<_> = (0..5).map(|i| trx(round * 5 + i, 300)).collect();
            all.extend(b.append(&mut gs).unwrap().groups);
            b.sync().unwrap();
        }
        // One group bigger than a whole file gets a file of its own.
        let big = b.append(&mut [trx(1000, 20_000)]).unwrap().groups[0];
        all.push(big);
        all.extend(b.append(&mut [trx(1001, 10)]).unwrap().groups);
        b.sync().unwrap();
        assert!(big.end.offset > 8192);
        assert_ne!(all.last().unwrap().start.file_no, big.start.file_no);
        let files = b.list_files();
        assert!(files.len() > 5, "{files:?}");
        for g in &all {
            assert_eq!(g.start.file_no, g.end.file_no);
        }
        let read: Vec<_> = b
            .read_groups(LogPos::new(naming.first_number(), 0))
            .map(|g| g.unwrap())
            .collect();
        assert_eq!(read.len(), all.len());
        for (r, a) in read.iter().zip(&all) {
            assert_eq!((r.gtid, r.start, r.end), (a.gtid, a.start, a.end));
        }
        // Every file but the last ends with ROTATE at its used size, which is its length.
        for (i, (name, size)) in files.iter().enumerate() {
            let len = fs
                .open(&Path::new("/log").join(name), OpenMode::READ)
                .unwrap()
                .len()
                .unwrap();
            if i + 1 < files.len() {
                assert_eq!(len, *size, "{name}");
                if *size <= 8192 {
                    assert!(*size <= 8192);
                }
            }
        }
        let rotations = b.stats().rotations;
        assert_eq!(rotations as usize, files.len() - 1);
        // Reopen: same files, same state.
        let state = b.gtid_binlog_state();
        drop(b);
        let b = open(&fs, &o);
        assert_eq!(b.gtid_binlog_state(), state);
        assert_eq!(b.list_files(), files);
    }
}

#[test]
fn flush_purge_and_reset() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    assert_eq!(b.rotate().unwrap(), "binlog-000001");
    b.append(&mut [trx(2, 1)]).unwrap();
    assert_eq!(b.rotate().unwrap(), "binlog-000002");
    b.append(&mut [trx(3, 1)]).unwrap();
    assert_eq!(b.rotate().unwrap(), "binlog-000003");
    assert_eq!(b.file_start_state(2), Some(vec![Gtid::new(0, 1, 2)]));
    // The rotated file was cut to its used size.
    let f = fs
        .open(Path::new("/log/binlog-000000"), OpenMode::READ)
        .unwrap();
    assert_eq!(f.len().unwrap(), b.list_files()[0].1);

    // GTID positioning.
    assert_eq!(
        b.find_gtid_start(&[Gtid::new(0, 1, 2)]).unwrap(),
        LogPos::new(2, 0)
    );
    assert_eq!(
        b.find_gtid_start(&[Gtid::new(0, 1, 1)]).unwrap(),
        LogPos::new(1, 0)
    );
    assert_eq!(b.find_gtid_start(&[]).unwrap(), LogPos::new(0, 0));
    assert!(b.find_gtid_start(&[Gtid::new(0, 1, 9)]).is_err());
    let after: Vec<_> = b
        .read_groups_after_gtid(&[Gtid::new(0, 1, 1)])
        .unwrap()
        .map(|g| g.unwrap().gtid.seq)
        .collect();
    assert_eq!(after, vec![2, 3]);

    // Purge respects the recovery position and the active file.
    let removed = b
        .purge_to("binlog-000003", Some(LogPos::new(1, 300)))
        .unwrap();
    assert_eq!(removed, vec!["binlog-000000"]);
    assert!(b.purge_to("binlog-000009", None).is_err());
    let removed = b.purge_to("binlog-000003", None).unwrap();
    assert_eq!(removed, vec!["binlog-000001", "binlog-000002"]);
    assert!(b.find_gtid_start(&[]).is_err(), "purged");
    assert!(
        b.purge_before(u32::MAX, None).unwrap().is_empty(),
        "active file stays"
    );
    b.rotate().unwrap();
    assert_eq!(
        b.purge_before(u32::MAX, None).unwrap(),
        vec!["binlog-000003"]
    );
    assert_eq!(b.list_files().len(), 1);

    // RESET MASTER with a given state.
    let end = b.reset(Some(&[Gtid::new(0, 1, 100)])).unwrap();
    assert_eq!(end.file_no, 0);
    assert_eq!(b.list_files().len(), 1);
    assert_eq!(b.gtid_binlog_pos(), "0-1-100");
    let info = b.append(&mut [trx(1, 1)]).unwrap();
    assert_eq!(info.groups[0].gtid, Gtid::new(0, 1, 101));
    b.sync().unwrap();
    drop(b);
    let b = open(&fs, &o);
    assert_eq!(b.gtid_binlog_pos(), "0-1-101");
    assert_eq!(
        fs.list_dir(Path::new("/log")).unwrap(),
        vec!["binlog-000000"]
    );
}

#[test]
fn interrupted_reset_completes_at_open() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    b.rotate().unwrap();
    b.sync().unwrap();
    drop(b);
    // A crash right after RESET's decision point: the prepared file exists.
    let tmp = Path::new("/log/binlog-000000.reset");
    let f = fs.open(tmp, OpenMode::CREATE).unwrap();
    f.write_at(&file_header(1, "v", 5, &[Gtid::new(0, 1, 50)]), 0)
        .unwrap();
    f.sync_data().unwrap();
    fs.sync_dir(Path::new("/log")).unwrap();
    let b = open(&fs, &o);
    assert!(b.recovery_report().completed_reset);
    assert_eq!(b.gtid_binlog_pos(), "0-1-50");
    assert_eq!(b.list_files().len(), 1);
    // A torn prepared file is dropped instead.
    drop(b);
    let f = fs.open(tmp, OpenMode::CREATE).unwrap();
    f.write_at(b"\xfebin\x01\x02", 0).unwrap();
    let b = open(&fs, &o);
    assert!(!b.recovery_report().completed_reset);
    assert_eq!(b.gtid_binlog_pos(), "0-1-50");
}

#[test]
fn explicit_gtids_and_domains() {
    let fs = SimFs::new();
    let mut o = opts(Naming::Engine, 1 << 16);
    o.domain_id = 2;
    let b = open(&fs, &o);
    let mut g = trx(1, 1);
    g.set_gtid(Some(Gtid::new(7, 9, 40)));
    let info = b.append(&mut [trx(2, 1), g, trx(3, 1)]).unwrap();
    let got: Vec<_> = info.groups.iter().map(|g| g.gtid.to_string()).collect();
    assert_eq!(got, ["2-1-1", "7-9-40", "2-1-2"]);
    assert_eq!(b.gtid_binlog_pos(), "2-1-2,7-9-40");
    b.sync().unwrap();
    drop(b);
    let b = open(&fs, &o);
    assert_eq!(b.gtid_binlog_state(), "2-1-2,7-9-40");
}

#[test]
fn failed_sync_is_sticky() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    b.sync().unwrap();
    b.append(&mut [trx(2, 1)]).unwrap();
    fs.fail_nth_sync(1);
    let e = b.sync().unwrap_err();
    assert!(
        matches!(
            e,
            BinlogError::Io {
                op: "fdatasync",
                ..
            }
        ),
        "{e}"
    );
    // A retry that "succeeds" must not be believed: the binlog refuses work.
    let e = b.append(&mut [trx(3, 1)]).unwrap_err();
    assert!(e.to_string().contains("fdatasync"), "{e}");
    assert!(matches!(b.sync(), Err(BinlogError::Poisoned(_))));
    assert!(b.poisoned().is_some());
    // Reads still work.
    assert_eq!(ids(&b).len(), 2);
    drop(b);
    fs.crash();
    let b = open(&fs, &o);
    assert_eq!(ids(&b), vec![1]);
    assert!(b.poisoned().is_none());
}

#[test]
fn disk_full_poisons_writes() {
    let fs = SimFs::new();
    let o = opts(Naming::Classic, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    fs.set_disk_full(true);
    let e = b.append(&mut [trx(2, 1)]).unwrap_err();
    assert!(matches!(e, BinlogError::Io { op: "write", .. }), "{e}");
    fs.set_disk_full(false);
    assert!(matches!(
        b.append(&mut [trx(3, 1)]),
        Err(BinlogError::Poisoned(_))
    ));
}

#[test]
fn write_through_needs_no_fdatasync() {
    let fs = SimFs::new();
    let mut o = opts(Naming::Engine, 1 << 16);
    o.sync_method = SyncMethod::WriteThrough;
    let b = open(&fs, &o);
    let before = fs.sync_count();
    for i in 0..5 {
        b.append(&mut [trx(i, 10)]).unwrap();
        b.sync().unwrap();
    }
    assert_eq!(fs.sync_count(), before);
    assert_eq!(b.stats().syncs, 0);
    fs.crash();
    let b = open(&fs, &o);
    assert_eq!(ids(&b), vec![1, 2, 3, 4, 5]);
}

#[test]
fn recovery_cuts_unfinished_group_and_garbage() {
    for naming in [Naming::Engine, Naming::Classic] {
        let fs = SimFs::new();
        let o = opts(naming, 1 << 16);
        let b = open(&fs, &o);
        b.append(&mut [trx(1, 10), trx(2, 10)]).unwrap();
        let end = b.sync().unwrap();
        // A group without its XID, then garbage.
        let mut g = trx(3, 10);
        g.set_gtid(None);
        let info = b.append(&mut [g]).unwrap();
        b.sync().unwrap();
        drop(b);
        let name = Path::new("/log").join(o.naming.file_name(&o.base_name, end.file_no));
        let xid_at = info.end.offset - 31;
        fs.scribble(&name, xid_at, &[0xab; 40]);
        let b = open(&fs, &o);
        let r = b.recovery_report().clone();
        assert_eq!(r.end, end, "{r:?}");
        assert_eq!(r.discarded_group, Some(Gtid::new(0, 1, 3)));
        assert!(r.truncated_bytes >= 40, "{r:?}");
        assert!(r.stop_reason.is_some());
        assert_eq!(b.gtid_binlog_pos(), "0-1-2");
        // The next group reuses seq 3 and lands right at the end.
        let info = b.append(&mut [trx(3, 10)]).unwrap();
        assert_eq!(info.groups[0].start, end);
        assert_eq!(info.groups[0].gtid.seq, 3);
        b.sync().unwrap();
        drop(b);
        let b = open(&fs, &o);
        assert_eq!(ids(&b), vec![1, 2, 3]);
        assert_eq!(b.recovery_report().truncated_bytes, 0);
    }
}

/// A transaction's rows logged as a statement: ROW_REDO GTID QUERY.
fn stmt(id: i64) -> EventGroup {
    let mut g = EventGroup::transaction(1, 1_700_000_000);
    g.map_table(5, &table()).unwrap();
    g.insert(5, &[Value::Int(id), Value::Null]).unwrap();
    let q = crate::event::Query::new("", &format!("CREATE USER u{id}"), 3);
    g.commit_statement(id as u64, q).unwrap();
    g
}

#[test]
fn statement_groups_start_at_their_row_redo() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 1 << 16);
    let b = open(&fs, &o);
    let info = b.append(&mut [trx(1, 1), stmt(2), trx(3, 1)]).unwrap();
    b.sync().unwrap();
    let groups: Vec<_> = b
        .read_groups(LogPos::new(0, 0))
        .map(|g| g.unwrap())
        .collect();
    assert_eq!(groups.len(), 3);
    for (g, a) in groups.iter().zip(&info.groups) {
        assert_eq!((g.gtid, g.start, g.end), (a.gtid, a.start, a.end));
    }
    let g = &groups[1];
    assert_eq!(g.start, groups[0].end);
    assert_eq!(g.events[0].pos, g.start);
    assert!(matches!(g.events[0].event, Event::RowRedo(_)));
    assert!(matches!(g.events[1].event, Event::Gtid(_)));
    assert!(matches!(g.events[2].event, Event::Query(_)));
    assert_eq!(g.events.len(), 3);
    // A replica at GTID 0-1-1 gets the statement group whole, from its row redo on.
    let mut r = b.read_groups(LogPos::new(0, 0));
    r.skip_through(&[Gtid::new(0, 1, 1)]);
    let next = r.next().unwrap().unwrap();
    assert_eq!((next.gtid.seq, next.start), (2, g.start));
    drop(b);

    // Torn after the row redo, or inside the GTID or QUERY event: the whole group goes,
    // from its row redo on.
    let name = Path::new("/log").join(o.naming.file_name(&o.base_name, 0));
    let redo_end = g.events[0].end.offset;
    for cut in [redo_end, redo_end + 10, g.end.offset - 3] {
        let fs = SimFs::new();
        let b = open(&fs, &o);
        b.append(&mut [trx(1, 1), stmt(2)]).unwrap();
        b.sync().unwrap();
        drop(b);
        fs.scribble(&name, cut, &vec![0xcd; (g.end.offset - cut) as usize + 200]);
        let b = open(&fs, &o);
        let r = b.recovery_report().clone();
        assert_eq!(r.end, g.start, "cut at {cut}: {r:?}");
        assert!(r.stop_reason.is_some());
        assert_eq!(ids(&b), vec![1]);
        assert_eq!(b.gtid_binlog_pos(), "0-1-1");
    }
}

#[test]
fn crash_between_rotate_and_new_file() {
    let fs = SimFs::new();
    let o = opts(Naming::Classic, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    b.rotate().unwrap();
    b.append(&mut [trx(2, 1)]).unwrap();
    b.sync().unwrap();
    drop(b);
    // The new file's header never made it.
    let f = fs
        .open(Path::new("/log/mb.000002"), OpenMode::WRITE)
        .unwrap();
    f.set_len(100).unwrap();
    f.sync_data().unwrap();
    // (and so no group could be in it: drop the group from the expectation)
    let b = open(&fs, &o);
    let r = b.recovery_report();
    assert_eq!(r.removed_files, vec!["mb.000002"]);
    assert_eq!(r.active_file, "mb.000002");
    assert_eq!(b.list_files().len(), 2);
    assert_eq!(b.gtid_binlog_pos(), "0-1-1");
    assert_eq!(
        fs.read_all(Path::new("/log/mb.index")).unwrap(),
        b"./mb.000001\n./mb.000002\n"
    );
}

#[test]
fn reader_follows_limit() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 1 << 16);
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 1)]).unwrap();
    let mut r = b.read_groups(LogPos::new(0, 0));
    assert_eq!(r.next().unwrap().unwrap().gtid.seq, 1);
    assert!(r.next().is_none());
    b.append(&mut [trx(2, 1)]).unwrap();
    b.rotate().unwrap();
    b.append(&mut [trx(3, 1)]).unwrap();
    r.events_mut().set_limit(b.end_pos());
    let rest: Vec<_> = r.map(|g| g.unwrap().gtid.seq).collect();
    assert_eq!(rest, vec![2, 3]);
}

#[test]
fn zero_fill_keeps_a_runway_of_written_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = BinlogOptions::new(dir.path());
    o.max_binlog_size = 32 << 20;
    o.preallocate = Preallocate::ZeroFill;
    let b = Binlog::open(o.clone()).unwrap();
    let mut groups: Vec<EventGroup> = (0..200).map(|i| trx(i, 1000)).collect();
    b.append(&mut groups).unwrap();
    b.sync().unwrap();
    let end = b.end_pos().offset;
    let path = dir.path().join(b.active_file());
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(meta.len(), 32 << 20, "space reserved up front");
    // The runway holds real (allocated, written) blocks: check with the block count.
    use std::os::unix::fs::MetadataExt;
    assert!(meta.blocks() * 512 >= end + RUNWAY, "runway written");
    drop(b);
    let b = Binlog::open(o).unwrap();
    assert_eq!(ids(&b).len(), 200);
}

/// The runway's thread writes and syncs the zeros ahead while appends go on: with every
/// sync held (a disk that does not answer), appends inside the zeros written so far still
/// complete, and the zeros reach further once the disk answers.
#[test]
fn zero_fill_extends_the_runway_beside_appends() {
    let fs = SimFs::new();
    let mut o = opts(Naming::Engine, 64 << 20);
    o.preallocate = Preallocate::ZeroFill;
    let b = Arc::new(open(&fs, &o));
    // The first append writes its zeros inline.
    b.append(&mut [trx(0, 100)]).unwrap();
    b.sync().unwrap();
    // Zeros read back like preallocated bytes: the writes tell them apart (one per page
    // of zeros, one per append here).
    let writes_before = fs.write_count();
    fs.hold_syncs(true);
    let (tx, rx) = std::sync::mpsc::channel();
    let appender = {
        let b = b.clone();
        std::thread::spawn(move || {
            // 3 MiB in 100 KiB groups: past the point where the thread is asked for more
            // zeros, but inside those written inline by the first append.
            for i in 1..=30 {
                b.append(&mut [trx(i, 100 << 10)]).unwrap();
            }
            tx.send(()).unwrap();
        })
    };
    rx.recv_timeout(std::time::Duration::from_secs(20))
        .expect("appends waited for the runway's sync");
    appender.join().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while fs.held_syncs() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the runway's thread never synced zeros"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    fs.hold_syncs(false);
    b.sync().unwrap();
    // The thread wrote zeros past what the first append's inline extension covered.
    let end = b.end_pos().offset;
    let zero_pages = fs.write_count() - writes_before;
    assert!(
        zero_pages >= RUNWAY / 4096,
        "no zeros written ahead ({zero_pages} writes)"
    );
    assert!(end < 4 << 20);
    drop(b);
    fs.crash();
    let b = open(&fs, &o);
    assert_eq!(ids(&b), (0..=30).map(|i| i as u64 + 1).collect::<Vec<_>>());
}

#[test]
fn zero_fill_skips_what_a_large_write_covers() {
    let fs = SimFs::new();
    let mut o = opts(Naming::Engine, 64 << 20);
    o.preallocate = Preallocate::ZeroFill;
    let b = open(&fs, &o);
    b.append(&mut [trx(1, 100)]).unwrap();
    let before = fs.write_count();
    // One 12 MiB transaction: its own write, then zeros (4 KiB each) only after its end.
    b.append(&mut [trx(2, 12 << 20)]).unwrap();
    let writes = fs.write_count() - before;
    let runway_pages = RUNWAY / 4096;
    assert!(
        writes <= runway_pages + 20, // plus the transaction in 1 MiB pieces
        "{writes} writes: zeros were written where the transaction goes"
    );
    b.sync().unwrap();
    fs.crash();
    let b = open(&fs, &o);
    assert_eq!(ids(&b), vec![1, 2]);
}

#[test]
fn full_disk_at_rotation_fails_cleanly_and_recovers() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 16 << 10);
    let b = open(&fs, &o);
    fs.set_disk_full(true);
    let mut acked = Vec::new();
    let mut failed = None;
    for id in 0..100 {
        match b.append(&mut [trx(id, 500)]) {
            Ok(_) => {
                b.sync().unwrap();
                acked.push(id as u64 + 1); // GTID seq numbers start at 1
            }
            Err(e) => {
                failed = Some((id, e));
                break;
            }
        }
    }
    let (id, e) = failed.expect("the first file fills up");
    assert!(e.to_string().contains("No space left"), "{e}");
    assert!(
        b.poisoned().is_none(),
        "a full disk must not poison the binlog"
    );
    assert_eq!(ids(&b), acked, "nothing of the failed call was written");
    // Space is back: the same group goes in, in a new file.
    fs.set_disk_full(false);
    b.append(&mut [trx(id, 500)]).unwrap();
    b.sync().unwrap();
    acked.push(id as u64 + 1);
    assert_eq!(b.list_files().len(), 2);
    drop(b);
    fs.crash();
    let b = open(&fs, &o);
    assert_eq!(ids(&b), acked);
}

#[test]
fn capture_returns_exactly_the_bytes_written_small_and_large() {
    let fs = SimFs::new();
    let o = opts(Naming::Engine, 64 << 20);
    let b = open(&fs, &o);
    let start = b.end_pos();
    // Small groups share a buffer; the 3 MiB one is written from its own.
    let mut groups = vec![trx(1, 10), trx(2, 3 << 20), trx(3, 10)];
    let (info, chunks) = b.append_capture(&mut groups).unwrap();
    b.sync().unwrap();
    let file = fs.durable_contents(&o.dir.join(b.active_file())).unwrap();
    let mut at = start.offset;
    for (pos, bytes) in &chunks {
        assert_eq!(pos.offset, at, "chunks are contiguous");
        assert_eq!(&file[at as usize..at as usize + bytes.len()], &bytes[..]);
        at += bytes.len() as u64;
    }
    assert_eq!(at, info.end.offset);
    assert_eq!(ids(&b), vec![1, 2, 3]);
    // A retried append of the same (already sealed) groups is sealed again correctly.
    let (info2, _) = b.append_capture(&mut groups).unwrap();
    assert_eq!(info2.groups.len(), 3);
    drop(b);
    let b = open(&fs, &o);
    assert_eq!(ids(&b), vec![1, 2, 3, 4, 5, 6]);
}

/// The GTID sequence numbers of the group-starting events a follower yields until idle.
fn follow_seqs(f: &mut Follower<'_>) -> Vec<u64> {
    let mut seqs = Vec::new();
    while let Next::Event(e) = f.next(std::time::Duration::ZERO).unwrap() {
        if let Event::Gtid(g) = e.event {
            seqs.push(g.seq);
        }
    }
    seqs
}

#[test]
fn follower_sees_only_synced_groups_and_crosses_files() {
    let fs = SimFs::new();
    let log = open(&fs, &opts(Naming::Engine, 64 * 1024));
    log.append(&mut [trx(1, 10)]).unwrap();
    log.sync().unwrap();
    let mut f = log.follow(LogPos::new(0, 4)).unwrap();
    f.set_sync_after(None);
    assert_eq!(follow_seqs(&mut f), vec![1]);
    // Appended but not synced: not visible.
    log.append(&mut [trx(2, 10)]).unwrap();
    assert_eq!(follow_seqs(&mut f), Vec::<u64>::new());
    log.sync().unwrap();
    assert_eq!(follow_seqs(&mut f), vec![2]);
    // Across a rotation: the next file's header events come, then its groups.
    log.rotate().unwrap();
    log.append(&mut [trx(3, 10)]).unwrap();
    log.sync().unwrap();
    let mut kinds = Vec::new();
    while let Next::Event(e) = f.next(std::time::Duration::ZERO).unwrap() {
        kinds.push((e.pos.file_no, e.event.type_name()));
    }
    let names: Vec<&str> = kinds.iter().map(|k| k.1).collect();
    assert_eq!(
        names,
        [
            "Rotate",
            "Format_desc",
            "Gtid_list",
            "Gtid",
            "Table_map",
            "Write_rows_v1",
            "Xid"
        ]
    );
    assert_eq!(kinds[0].0, 0);
    assert_eq!(kinds[1].0, 1);
}

#[test]
fn follower_wakes_on_sync_and_syncs_stale_bytes_itself() {
    let fs = SimFs::new();
    let log = Arc::new(open(&fs, &opts(Naming::Engine, 1 << 20)));
    let l2 = log.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        l2.append(&mut [trx(1, 10)]).unwrap();
        l2.sync().unwrap();
    });
    let mut f = log.follow(LogPos::new(0, 0)).unwrap();
    f.set_sync_after(None);
    let start = std::time::Instant::now();
    let mut got = None;
    while got.is_none() {
        if let Next::Event(e) = f.next(std::time::Duration::from_secs(10)).unwrap() {
            if let Event::Gtid(g) = e.event {
                got = Some(g.seq);
            }
        }
    }
    assert_eq!(got, Some(1));
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
    t.join().unwrap();
    // Nobody syncs: with a sync delay the follower makes the bytes durable and sends them.
    log.append(&mut [trx(2, 10)]).unwrap();
    let before = log.stats().syncs;
    f.set_sync_after(Some(std::time::Duration::from_millis(1)));
    let mut seq = None;
    while seq.is_none() {
        match f.next(std::time::Duration::from_secs(5)).unwrap() {
            Next::Event(e) => {
                if let Event::Gtid(g) = e.event {
                    seq = Some(g.seq);
                }
            }
            Next::Idle => panic!("the follower did not sync"),
        }
    }
    assert_eq!(seq, Some(2));
    assert!(log.stats().syncs > before);
    assert!(log.synced_pos() >= log.end_pos());
}

#[test]
fn purge_keeps_the_file_a_follower_reads() {
    let fs = SimFs::new();
    let log = open(&fs, &opts(Naming::Engine, 1 << 20));
    for i in 1..=3 {
        log.append(&mut [trx(i, 10)]).unwrap();
        log.sync().unwrap();
        log.rotate().unwrap();
    }
    let f = log.follow(LogPos::new(1, 4)).unwrap();
    let removed = log.purge_to(&log.file_name(3), None).unwrap();
    assert_eq!(removed, vec![log.file_name(0)]);
    drop(f);
    let removed = log.purge_to(&log.file_name(3), None).unwrap();
    assert_eq!(removed, vec![log.file_name(1), log.file_name(2)]);
    assert!(matches!(
        log.follow(LogPos::new(0, 4)),
        Err(BinlogError::UnknownFile(_))
    ));
    assert!(matches!(
        log.follow(LogPos::new(3, 1 << 19)),
        Err(BinlogError::InvalidArgument(_))
    ));
}

#[test]
fn follower_fails_after_reset() {
    let fs = SimFs::new();
    let log = open(&fs, &opts(Naming::Engine, 1 << 20));
    log.append(&mut [trx(1, 10)]).unwrap();
    log.sync().unwrap();
    let mut f = log.follow(LogPos::new(0, 4)).unwrap();
    assert_eq!(follow_seqs(&mut f), vec![1]);
    log.reset(None).unwrap();
    assert!(f.next(std::time::Duration::from_millis(10)).is_err());
}
