//! The engine front door: open, begin, DDL, status.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rocksdb::{BlockBasedOptions, Cache, Options, WriteBatch, WriteOptions, DB};

use crate::catalog::{Catalog, TableId};
use crate::commit::Committer;
use crate::ddl::{Ddl, DdlLog, DdlOutcome};
use crate::error::{EngineError, Result};
use crate::keys;
use crate::layout::Layout;
use crate::locks::LockManager;
use crate::txn::{Isolation, Txn};
use crate::wal::Wal;

/// How commits are made durable (`--binlog-storage=engine|file`, `--skip-log-bin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LogMode {
    /// The binlog is the WAL: RocksDB's WAL is off, one binlog sync per group commit.
    #[default]
    Engine,
    /// Classic: RocksDB WAL on plus a separate binlog, two-phase commit.
    File,
    /// No binlog: RocksDB WAL only, synced once per group commit.
    Off,
}

#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub datadir: PathBuf,
    pub mode: LogMode,
    pub server_id: u32,
    pub gtid_domain_id: u32,
    /// 1: sync every group; N: every N groups; 0: never (leave it to the OS).
    pub sync_binlog: u32,
    pub max_binlog_size: u64,
    pub binlog_expire_logs_seconds: u64,
    /// `innodb_lock_wait_timeout`.
    pub lock_wait_timeout: Duration,
    /// RocksDB block cache size in bytes.
    pub block_cache_size: usize,
    /// Server version written into format description events.
    pub server_version: String,
    /// Sync the binlog with O_DSYNC write-through instead of write + fdatasync.
    pub binlog_write_through: bool,
    /// How engine-mode binlog files reserve space (see `onelog_binlog::Preallocate`).
    pub binlog_preallocate: onelog_binlog::Preallocate,
    /// The file layer under the binlog: the real file system, or a simulated disk in
    /// power-loss tests.
    pub binlog_fs: BinlogFs,
    /// RocksDB memtable size in bytes (small values force frequent flushes in tests).
    /// 16 MiB by default, not MyRocks' 64: each memtable insert is a skiplist search, and
    /// one that fits in the processor's last-level cache with room to spare (32 MiB L3 on
    /// the benchmark machine) costs a fraction of one that does not. Insert Benchmark, 16
    /// clients, +1 ms per sync, 3 alternated runs: l.i1 95333-113390 rows/s against
    /// 66334-72191 (server CPU per row 16-19 us against 24-27), query steps equal or
    /// better; 8 MiB and below flush so often that compactions cost more than they save
    /// (l.i1 56k at 8 MiB, 37k at 4 MiB).
    pub write_buffer_size: usize,
    /// Read table files with O_DIRECT, bypassing the OS page cache (MyRocks'
    /// `rocksdb_use_direct_reads`): the block cache is then the only cache of table data.
    pub use_direct_reads: bool,
    /// Memory an index build sorts its entries in before it spills a sorted run to disk
    /// (MyRocks' `rocksdb_merge_buf_size`; see `bulk.rs`).
    pub merge_buf_size: usize,
    /// RocksDB options applied over onelog's own at open, in RocksDB's options-string
    /// syntax (`compression_per_level=kNoCompression:kLZ4Compression;...`; MyRocks'
    /// `rocksdb_default_cf_options`). The memtable size stays onelog's to decide in
    /// engine mode (see `commit.rs`).
    pub rocksdb_options: Option<String>,
    /// Nice value of the commit path (`--commit-nice`; see `priority.rs`); not below the
    /// server's own: off.
    pub commit_nice: i32,
    /// `binlog_row_metadata`: the optional metadata of TABLE_MAP events.
    pub binlog_row_metadata: onelog_binlog::RowMetadata,
}

/// The binlog's file layer (a newtype so that [`EngineOptions`] stays `Debug`).
#[derive(Clone)]
pub struct BinlogFs(pub Arc<dyn onelog_binlog::FileSystem>);

impl Default for BinlogFs {
    fn default() -> Self {
        BinlogFs(Arc::new(onelog_binlog::RealFs))
    }
}

impl std::fmt::Debug for BinlogFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BinlogFs")
    }
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            datadir: PathBuf::from("data"),
            mode: LogMode::Engine,
            server_id: 1,
            gtid_domain_id: 0,
            sync_binlog: 1,
            max_binlog_size: 1 << 30,
            binlog_expire_logs_seconds: 0,
            lock_wait_timeout: Duration::from_secs(50),
            block_cache_size: 128 << 20,
            server_version: "10.11.99-MariaDB-onelog".into(),
            binlog_write_through: false,
            binlog_preallocate: onelog_binlog::Preallocate::ZeroFill,
            binlog_fs: BinlogFs::default(),
            write_buffer_size: 16 << 20,
            use_direct_reads: false,
            merge_buf_size: 64 << 20,
            rocksdb_options: None,
            commit_nice: -10,
            binlog_row_metadata: onelog_binlog::RowMetadata::Full,
        }
    }
}

/// Re-executes DDL found in the binlog during crash recovery. Implemented by the SQL layer,
/// which parses the statement and calls [`Engine::ddl_replay`].
pub trait DdlReplayer: Send + Sync {
    fn replay(&self, engine: &Engine, db: &str, sql: &str) -> Result<()>;
}

/// Status counters (SHOW STATUS).
#[derive(Clone, Debug, Default)]
pub struct EngineStatus {
    pub binlog_commits: u64,
    pub binlog_group_commits: u64,
    pub binlog_bytes_written: u64,
    /// Every sync of a log file: binlog fdatasync, or RocksDB WAL sync.
    pub log_syncs: u64,
    pub commits: u64,
    pub rollbacks: u64,
    pub deadlocks: u64,
    pub lock_timeouts: u64,
    /// Table files written by index builds and ingested into RocksDB (see `bulk.rs`).
    pub ingested_files: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub commits: AtomicU64,
    pub rollbacks: AtomicU64,
    pub deadlocks: AtomicU64,
    pub lock_timeouts: AtomicU64,
    pub group_commits: AtomicU64,
    pub log_syncs: AtomicU64,
    pub binlog_commits: AtomicU64,
    pub ingested_files: AtomicU64,
    /// Duration of every log sync, in microseconds.
    pub sync_micros: crate::histogram::Histogram,
    /// Commits per group.
    pub group_sizes: crate::histogram::Histogram,
}

/// The commit path's histograms (`histogram.rs`).
#[derive(Clone, Debug, Default)]
pub struct CommitHistograms {
    /// How long each log sync took, in microseconds (binlog fdatasync, or the RocksDB WAL
    /// sync without a binlog).
    pub sync_micros: crate::histogram::HistogramSnapshot,
    /// How many commits each group made durable together.
    pub group_sizes: crate::histogram::HistogramSnapshot,
}

pub struct Engine {
    pub(crate) db: Arc<DB>,
    pub(crate) opts: EngineOptions,
    pub(crate) catalog: RwLock<Arc<Catalog>>,
    pub(crate) locks: LockManager,
    pub(crate) wal: Arc<Wal>,
    pub(crate) committer: Committer,
    pub(crate) semisync: Arc<crate::semisync::SemiSync>,
    /// Next AUTO_INCREMENT value per table (loaded lazily from the data).
    pub(crate) autoinc: Mutex<HashMap<TableId, u64>>,
    /// Table statistics recently read (`stats.rs`).
    pub(crate) stats: Mutex<HashMap<TableId, crate::stats::Cached>>,
    /// When committed transactions last changed each table (`stats.rs`).
    pub(crate) update_times: Mutex<HashMap<TableId, i64>>,
    /// Next hidden row id per table without a primary key.
    pub(crate) rowids: Mutex<HashMap<TableId, u64>>,
    /// Per table: primary index id and the largest primary key the table may hold (see
    /// `autoinc::raise_pk_bound`).
    pub(crate) pk_bounds: Mutex<HashMap<TableId, (u32, Vec<u8>)>>,
    pub(crate) next_txn: AtomicU64,
    pub(crate) sync_binlog: AtomicU32,
    pub(crate) counters: Arc<Counters>,
    /// Serialises DDL statements.
    pub(crate) ddl_lock: Mutex<()>,
    /// During recovery: the end of the group being replayed (DDL replays record it).
    pub(crate) replay_pos: Mutex<Option<crate::wal::LogPos>>,
    /// Recovery of a CREATE TABLE ... SELECT group: Some while its CREATE TABLE replays,
    /// which leaves its catalog batch here instead of writing it.
    pub(crate) replay_hold: Mutex<Option<WriteBatch>>,
    /// XA transactions claimed and prepared (see `xa.rs`).
    pub(crate) xa: crate::xa::Registry,
    /// NEXTVAL's reserved values (`sequence.rs`).
    pub(crate) sequences: crate::sequence::Sequences,
    /// The open transactions (`active.rs`).
    pub(crate) active: crate::active::Registry,
    /// The latest deadlock (`deadlock.rs`).
    pub(crate) latest_deadlock: Mutex<Option<crate::deadlock::DeadlockReport>>,
    /// `SET GLOBAL gtid_slave_pos` in force (see `slave_pos.rs`).
    pub(crate) slave_pos: Mutex<Option<crate::slave_pos::SlavePosOverride>>,
    /// The options RocksDB was opened with, with whole-file and with partitioned index
    /// and filters: table files written for ingestion (see `bulk.rs`) are built with the
    /// same table format and compression as flushes and compactions write.
    table_opts: [Options; 2],
    /// Which of the two new table files get (see `layout.rs`).
    layout: Arc<Layout>,
}

pub(crate) fn write_opts(mode: LogMode) -> WriteOptions {
    let mut wo = WriteOptions::default();
    wo.disable_wal(mode == LogMode::Engine);
    wo
}

extern "C" {
    // Part of RocksDB's C API (linked in through librocksdb-sys), not wrapped by the
    // `rocksdb` crate.
    fn rocksdb_options_set_avoid_flush_during_shutdown(opt: *mut std::ffi::c_void, v: u8);
    fn rocksdb_sst_partitioner_fixed_prefix_factory_create(
        prefix_len: usize,
    ) -> *mut std::ffi::c_void;
    fn rocksdb_sst_partitioner_factory_destroy(f: *mut std::ffi::c_void);
    fn rocksdb_options_set_sst_partitioner_factory(
        opt: *mut std::ffi::c_void,
        f: *mut std::ffi::c_void,
    );
}

fn set_sst_partitioner(o: &mut Options, prefix_len: usize) {
    use rocksdb::AsRawPtr;
    // SAFETY: `o` is a live Options object; the options take their own reference to the
    // factory (a shared_ptr copy), so the handle is destroyed right after.
    unsafe {
        let p = o.as_raw_ptr() as *mut std::ffi::c_void;
        let f = rocksdb_sst_partitioner_fixed_prefix_factory_create(prefix_len);
        rocksdb_options_set_sst_partitioner_factory(p, f);
        rocksdb_sst_partitioner_factory_destroy(f);
    }
}

fn set_avoid_flush_during_shutdown(o: &mut Options) {
    use rocksdb::AsRawPtr;
    // SAFETY: `o` is a live Options object; the call sets one field of it.
    unsafe {
        let p = o.as_raw_ptr() as *mut std::ffi::c_void;
        rocksdb_options_set_avoid_flush_during_shutdown(p, 1);
    }
}

/// The table format of new files: LZ4-compressed 4 KiB data blocks with 10-bit bloom
/// filters; index and filter blocks in the block cache (in its high-priority pool), so
/// that the cache bounds the read memory as the buffer pool does InnoDB's; level 0's
/// pinned there. `partitioned`: two-level index and filters in 4 KiB partitions with the
/// top level pinned, instead of one block of each per file (see `layout.rs`).
fn table_format(cache: &Cache, partitioned: bool) -> BlockBasedOptions {
    let mut bbo = BlockBasedOptions::default();
    bbo.set_block_cache(cache);
    bbo.set_bloom_filter(10.0, false);
    bbo.set_cache_index_and_filter_blocks(true);
    bbo.set_cache_index_and_filter_blocks_with_high_priority(true);
    bbo.set_pin_l0_filter_and_index_blocks_in_cache(true);
    bbo.set_metadata_block_size(4096);
    bbo.set_pin_top_level_index_and_filter(true);
    if partitioned {
        bbo.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
        bbo.set_partition_filters(true);
    } else {
        bbo.set_index_type(rocksdb::BlockBasedIndexType::BinarySearch);
    }
    bbo
}

/// A raw iterator over the latest state of the keys in `[lower, upper)`, not yet positioned.
pub(crate) fn range_iter(db: &DB, lower: Vec<u8>, upper: Vec<u8>) -> rocksdb::DBRawIterator<'_> {
    let mut ro = rocksdb::ReadOptions::default();
    ro.set_iterate_lower_bound(lower);
    ro.set_iterate_upper_bound(upper);
    db.raw_iterator_opt(ro)
}

impl Engine {
    pub fn open(opts: EngineOptions, replayer: &dyn DdlReplayer) -> Result<Arc<Engine>> {
        std::fs::create_dir_all(&opts.datadir)
            .map_err(|e| EngineError::Storage(format!("create {:?}: {e}", opts.datadir)))?;
        crate::backup::retire_backup_info(&opts.datadir)?;
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_max_background_jobs(2);
        // Table files are written back 1 MiB at a time while they are built, not all at
        // their final fsync: a burst of tens of MiB queued on the device delays the binlog's
        // small fdatasync behind it (1 client, +1 ms per sync, Insert Benchmark l.i1:
        // 27949 rows/s against 26999, medians of 3 alternated runs).
        o.set_bytes_per_sync(1 << 20);
        // (Engine mode overrides this below.)
        o.set_write_buffer_size(opts.write_buffer_size);

        o.set_max_write_buffer_number(4);
        o.set_compression_type(rocksdb::DBCompressionType::Lz4);
        o.set_bottommost_compression_type(rocksdb::DBCompressionType::Lz4);
        // Level 0 is compacted once it holds 2 files instead of RocksDB's 4: each L0 file
        // spans every table's keys, so every range scan seeks in every one of them (and
        // every point read checks its filter). Insert Benchmark, 16 clients, +1 ms per
        // sync, 2 runs each: qr100 44-46k against 33k QPS, l.i0-l.i2 within the noise;
        // with 16 MiB caches and O_DIRECT reads qr100 20.0k against 9.6k, qp100 24.9k
        // against 20.2k. (8 instead of 4 was tried too: qr100 fell ~30%.)
        o.set_level_zero_file_num_compaction_trigger(2);
        // Compactions cut their output files where the 5-byte key prefix changes (`I` and
        // an index id, see keys.rs), so no table file holds two indexes. Without it the
        // last file of one index also held the start of the next (and the `M` key after
        // the last index): an index build's file, ingested past every index, overlapped it
        // and went to level 0, so building 3 indexes rewrote the whole table's data
        // (Insert Benchmark l.x, 16 clients, +1 ms per sync: 708-728k rows/s against
        // 415-435k, KB written per row 0.07 against 0.17; other steps within the noise).
        set_sst_partitioner(&mut o, keys::PARTITION_PREFIX_LEN);
        // HyperClockCache: lookups without the LRU cache's per-shard mutex, which every
        // block access of every read takes (2-3% of the server's CPU in 16-client range
        // queries). Capacity as given; entry charge estimated by RocksDB (0 = automatic).
        let cache = Cache::new_hyper_clock_cache(opts.block_cache_size, 0);
        // Opened with whole-file index and filters; `layout.rs` switches new files to
        // partitioned ones once the data outgrows the cache.
        o.set_block_based_table_factory(&table_format(&cache, false));
        o.set_use_direct_reads(opts.use_direct_reads);
        o.set_manual_wal_flush(false);
        // With the WAL off, memtables hold data that only the binlog can bring back; a
        // close that is not a clean shutdown must not flush them (that could persist
        // changes ahead of what the binlog has made durable). `shutdown` flushes itself.
        set_avoid_flush_during_shutdown(&mut o);
        if let Some(extra) = &opts.rocksdb_options {
            o = o.get_options_from_string(extra).map_err(|e| {
                EngineError::Storage(format!("invalid RocksDB options '{extra}': {e}"))
            })?;
        }
        if opts.mode == LogMode::Engine {
            // Engine mode: memtables are switched by the committer only (see commit.rs);
            // RocksDB must not switch or flush them on its own (by size, by the total of
            // all memtables, or at a close), whatever the options above said: that could
            // persist changes not yet durable. Its own threshold is set beyond reach (its
            // maximum, 64 GiB).
            o.set_write_buffer_size(64 << 30);
            o.set_db_write_buffer_size(0);
            set_avoid_flush_during_shutdown(&mut o);
        }
        // A user's table options stand as given: the layout is then not switched.
        let layout_fixed = opts
            .rocksdb_options
            .as_deref()
            .is_some_and(|x| x.contains("block_based_table_factory"));
        // (With the layout fixed the partitioned variant is never chosen.)
        let mut partitioned = o.clone();
        partitioned.set_block_based_table_factory(&table_format(&cache, true));
        let table_opts = [o.clone(), partitioned];
        let db = Arc::new(DB::open(&o, opts.datadir.join("rocksdb"))?);
        if let Some(from) = keys::upgrade(&db)? {
            onelog_types::note!(
                "data directory upgraded from format version {from} to {}",
                keys::FORMAT_VERSION
            );
        }
        let layout = Arc::new(Layout::new(
            db.clone(),
            opts.block_cache_size as u64,
            layout_fixed,
        ));
        layout.start();
        // Temporary files of index builds the server stopped in the middle of.
        let _ = std::fs::remove_dir_all(crate::bulk::root(&opts.datadir));

        let catalog = crate::ddl::load_catalog(&db)?;
        let counters = Arc::new(Counters::default());
        let wal = Arc::new(Wal::open(&opts, &db)?);
        let switch_at = if opts.mode == LogMode::Engine {
            opts.write_buffer_size as u64
        } else {
            0
        };
        let semisync = Arc::new(crate::semisync::SemiSync::default());
        let committer = Committer::start(
            db.clone(),
            wal.clone(),
            opts.mode,
            counters.clone(),
            switch_at,
            opts.commit_nice,
            semisync.clone(),
        );
        let engine = Arc::new(Engine {
            semisync,
            sync_binlog: AtomicU32::new(opts.sync_binlog),
            db,
            catalog: RwLock::new(Arc::new(catalog)),
            locks: LockManager::new(),
            wal,
            committer,
            autoinc: Mutex::new(HashMap::new()),
            stats: Mutex::new(HashMap::new()),
            update_times: Mutex::new(HashMap::new()),
            rowids: Mutex::new(HashMap::new()),
            pk_bounds: Mutex::new(HashMap::new()),
            next_txn: AtomicU64::new(1),
            counters,
            ddl_lock: Mutex::new(()),
            replay_pos: Mutex::new(None),
            replay_hold: Mutex::new(None),
            xa: Default::default(),
            sequences: Default::default(),
            active: Default::default(),
            latest_deadlock: Mutex::new(None),
            slave_pos: Mutex::new(crate::slave_pos::load(&opts.datadir)?),
            table_opts,
            layout,
            opts,
        });
        engine
            .committer
            .set_sync_binlog(engine.sync_binlog.load(Ordering::Relaxed));
        crate::recovery::recover(&engine, replayer)?;
        let swept = crate::ddl::sweep_unnamed_indexes(&engine)?;
        if swept > 0 {
            onelog_types::note!(
                "cleared the data of {swept} unnamed index(es): unfinished builds, temporary tables"
            );
        }
        // Consistent reads start from the recovered state.
        engine.committer.quiesced(|| ());
        Ok(engine)
    }

    /// The options of table files written now (for ingestion), in the current layout.
    pub(crate) fn table_opts(&self) -> &Options {
        &self.table_opts[self.layout.partitioned() as usize]
    }

    /// Switches the index layout of new table files now if the data crossed its
    /// threshold (see `layout.rs`; tests, instead of waiting for the thread).
    #[doc(hidden)]
    pub fn adjust_table_layout(&self) -> bool {
        self.layout.adjust()
    }

    /// A RocksDB property (`rocksdb.stats`, `rocksdb.aggregated-table-properties`, ...).
    pub fn rocksdb_property(&self, name: &str) -> Option<String> {
        self.db.property_value(name).ok().flatten()
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    pub fn begin(self: &Arc<Self>, isolation: Isolation) -> Txn {
        let id = self.next_txn.fetch_add(1, Ordering::Relaxed);
        Txn::new(self.clone(), id, isolation)
    }

    /// Runs a DDL statement: waits for the metadata locks, logs `sql` as a QUERY event in
    /// database `db`, and changes the catalog and data atomically with it.
    pub fn ddl(&self, db: &str, sql: &str, ddl: Ddl) -> Result<DdlOutcome> {
        crate::ddl::run(self, db, sql, ddl, false, Default::default())
    }

    /// [`ddl`](Self::ddl) logged as `log` says (under a given GTID: a statement applied
    /// by replication keeps its primary's).
    pub fn ddl_as(&self, db: &str, sql: &str, ddl: Ddl, log: DdlLog) -> Result<DdlOutcome> {
        crate::ddl::run(self, db, sql, ddl, false, log)
    }

    /// [`ddl_as`](Self::ddl_as) for a session holding `LOCK TABLES`: the metadata locks
    /// are taken under the id its table locks are held under (`owner`), so a table it
    /// WRITE-locked is already its own.
    pub fn ddl_owned(
        &self,
        db: &str,
        sql: &str,
        ddl: Ddl,
        log: DdlLog,
        owner: u64,
    ) -> Result<DdlOutcome> {
        crate::ddl::run_owned(self, db, sql, ddl, log, owner)
    }

    /// Applies a DDL statement during recovery (no logging: the event is already in the log).
    pub fn ddl_replay(&self, db: &str, sql: &str, ddl: Ddl) -> Result<()> {
        crate::ddl::run(self, db, sql, ddl, true, Default::default()).map(|_| ())
    }

    pub fn commit_histograms(&self) -> CommitHistograms {
        CommitHistograms {
            sync_micros: self.counters.sync_micros.snapshot(),
            group_sizes: self.counters.group_sizes.snapshot(),
        }
    }

    pub fn status(&self) -> EngineStatus {
        let c = &self.counters;
        EngineStatus {
            binlog_commits: c.binlog_commits.load(Ordering::Relaxed),
            binlog_group_commits: if self.opts.mode == LogMode::Off {
                0
            } else {
                c.group_commits.load(Ordering::Relaxed)
            },
            binlog_bytes_written: self.wal.bytes_written(),
            log_syncs: c.log_syncs.load(Ordering::Relaxed),
            commits: c.commits.load(Ordering::Relaxed),
            rollbacks: c.rollbacks.load(Ordering::Relaxed),
            deadlocks: c.deadlocks.load(Ordering::Relaxed),
            lock_timeouts: c.lock_timeouts.load(Ordering::Relaxed),
            ingested_files: c.ingested_files.load(Ordering::Relaxed),
        }
    }

    pub fn set_sync_binlog(&self, n: u32) {
        self.sync_binlog.store(n, Ordering::Relaxed);
        self.committer.set_sync_binlog(n);
    }

    pub fn sync_binlog(&self) -> u32 {
        self.sync_binlog.load(Ordering::Relaxed)
    }

    /// `SET GLOBAL binlog_row_metadata`: transactions encoded from now on log this.
    pub fn set_binlog_row_metadata(&self, meta: onelog_binlog::RowMetadata) {
        self.wal.set_row_metadata(meta);
    }

    pub fn binlog_row_metadata(&self) -> onelog_binlog::RowMetadata {
        self.wal.row_metadata()
    }

    /// Number of lock entries currently held or waited for (diagnostics, leak tests).
    pub fn lock_count(&self) -> usize {
        self.locks.len()
    }

    /// Blocks until a commit durable in the binlog could not be applied to the tables
    /// (see `Committer::wait_fatal`); returns why. The server stops then, and a restart
    /// applies those commits from the binlog.
    pub fn wait_fatal(&self) -> String {
        self.committer.wait_fatal()
    }

    /// Makes everything applied so far durable in RocksDB (memtable flush). In `engine`
    /// mode the binlog is synced first, so the data never gets ahead of the log.
    pub fn checkpoint(&self) -> Result<()> {
        self.committer.barrier()?;
        self.committer.quiesced(|| self.flush_memtables())
    }

    /// Syncs the binlog, then flushes the memtables; refused after a log failure in
    /// `engine` mode (the memtable may hold changes the binlog does not have). Called
    /// while no group is being written (inside [`Committer::quiesced`], or stopped).
    pub(crate) fn flush_memtables(&self) -> Result<()> {
        if self.opts.mode == LogMode::Engine {
            if let Some(why) = self.committer.failure() {
                return Err(EngineError::LogFailed(why));
            }
        }
        self.wal.sync()?;
        self.db.flush()?;
        Ok(())
    }

    /// Flushes RocksDB's memtables and stops the log writer (clean shutdown).
    pub fn shutdown(&self) -> Result<()> {
        self.committer.stop();
        self.xa.clear();
        self.layout.stop();
        self.flush_memtables()?;
        if self.opts.mode != LogMode::Engine {
            self.db.flush_wal(true)?;
        }
        Ok(())
    }

    /// Writes a batch outside group commit (recovery, index builds) with this mode's WAL
    /// setting, while no group is being written; consistent reads see it afterwards.
    pub(crate) fn write_direct(&self, batch: WriteBatch) -> Result<()> {
        self.committer
            .quiesced(|| self.db.write_opt(batch, &write_opts(self.opts.mode)))?;
        Ok(())
    }

    /// Writes data that nothing reads until a later commit names it: entries under index
    /// ids no table has yet (index builds, table rewrites). Unlike [`Self::write_direct`]
    /// it does not hold up group commit while RocksDB inserts the batch: RocksDB orders it
    /// among the groups' writes, the commit that names the ids publishes it, and a memtable
    /// flush may persist it or not without harm (a crash leaves it unnamed, and it is
    /// cleared at open). Only switching a full memtable needs the committer's writer.
    pub(crate) fn write_unnamed(&self, batch: WriteBatch) -> Result<()> {
        self.db.write_opt(batch, &write_opts(self.opts.mode))?;
        self.committer.switch_memtable_if_full();
        Ok(())
    }

    pub(crate) fn lock_timeout(&self) -> Duration {
        self.opts.lock_wait_timeout
    }

    pub(crate) fn count_lock_error(&self, e: &EngineError) {
        match e {
            EngineError::Deadlock => {
                self.counters.deadlocks.fetch_add(1, Ordering::Relaxed);
                self.note_deadlock();
            }
            EngineError::LockWaitTimeout => {
                self.counters.lock_timeouts.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }

    /// Reads the latest committed value of a key (no snapshot).
    pub(crate) fn get_latest(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }

    #[allow(dead_code)]
    pub(crate) fn applied_key() -> &'static [u8] {
        keys::APPLIED
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.committer.stop();
        self.layout.stop();
    }
}
