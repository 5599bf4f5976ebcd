//! The index and filter layout of new table files, chosen by the data's size against the
//! block cache.
//!
//! Every table file has an index (one entry per 4 KiB data block) and a bloom filter, and
//! both live in the block cache, so the cache bounds RocksDB's read memory as the buffer
//! pool bounds InnoDB's. They come in two layouts:
//! - *whole-file*: one index block and one filter block per file. A point read looks up
//!   each in the cache once. Each is hundreds of KiB to a few MiB, though: once the table
//!   files outgrow the cache, reads evict them and read them back whole (the IO-bound
//!   Insert Benchmark's point queries ran at 274-541 QPS that way).
//! - *partitioned*: 4 KiB index and filter partitions under a small top level that stays
//!   pinned in the cache. A read looks up one more block per file (a 16-client point-query
//!   step spends ~15% more CPU per query), but only 4 KiB pieces come and go.
//!
//! So new files are written whole-file while the live table files are no larger than the
//! block cache (their index and filters then take a few percent of it), partitioned once
//! they are, and whole-file again below half of it. A background thread looks once a
//! second; the switch is RocksDB's `SetOptions` on the table factory, which flushes,
//! compactions and index builds (`bulk.rs`) pick up for their next file. Files keep the
//! layout they were written with; RocksDB reads both. Given
//! `--rocksdb-default-cf-options=block_based_table_factory={...}`, the user's table
//! options stand and nothing is switched.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use rocksdb::DB;

/// `SetOptions` values of the table factory for each layout (only these two fields
/// change; the rest stays as opened).
const WHOLE_FILE: &str = "{index_type=kBinarySearch;partition_filters=false}";
const PARTITIONED: &str = "{index_type=kTwoLevelIndexSearch;partition_filters=true}";

/// How often the thread compares the table files' size with the cache.
const CHECK_EVERY: Duration = Duration::from_secs(1);

pub(crate) struct Layout {
    db: Arc<DB>,
    cache_bytes: u64,
    /// The user's table options are in charge: never switch.
    fixed: bool,
    partitioned: AtomicBool,
    stop: Mutex<bool>,
    wake: Condvar,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Layout {
    /// For a database opened with whole-file index and filters (see `Engine::open`).
    pub(crate) fn new(db: Arc<DB>, cache_bytes: u64, fixed: bool) -> Self {
        Layout {
            db,
            cache_bytes,
            fixed,
            partitioned: AtomicBool::new(false),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            thread: Mutex::new(None),
        }
    }

    /// Whether new table files get partitioned index and filters.
    pub(crate) fn partitioned(&self) -> bool {
        self.partitioned.load(Ordering::Relaxed)
    }

    /// Compares the live table files' size with the cache now, and starts the thread that
    /// does it once a second (not when the layout is fixed).
    pub(crate) fn start(self: &Arc<Self>) {
        if self.fixed {
            return;
        }
        self.adjust();
        let me = self.clone();
        let h = std::thread::Builder::new()
            .name("onelog-layout".into())
            .spawn(move || {
                let mut stop = me.stop.lock();
                while !*stop {
                    me.wake.wait_for(&mut stop, CHECK_EVERY);
                    if !*stop {
                        me.adjust();
                    }
                }
            })
            .expect("spawn the table layout thread");
        *self.thread.lock() = Some(h);
    }

    /// Stops the thread (before RocksDB closes).
    pub(crate) fn stop(&self) {
        *self.stop.lock() = true;
        self.wake.notify_all();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }

    /// Switches the layout of new files if the live table files crossed the cache's size
    /// (up) or half of it (down). Returns whether it switched.
    pub(crate) fn adjust(&self) -> bool {
        if self.fixed {
            return false;
        }
        let live = self
            .db
            .property_int_value("rocksdb.live-sst-files-size")
            .ok()
            .flatten()
            .unwrap_or(0);
        let now = self.partitioned();
        let want = if now {
            live >= self.cache_bytes / 2
        } else {
            live > self.cache_bytes
        };
        if want == now {
            return false;
        }
        let value = if want { PARTITIONED } else { WHOLE_FILE };
        match self.db.set_options(&[("block_based_table_factory", value)]) {
            Ok(()) => {
                self.partitioned.store(want, Ordering::Relaxed);
                true
            }
            Err(e) => {
                onelog_types::warning!("switching the table files' index layout failed: {e}");
                false
            }
        }
    }
}
