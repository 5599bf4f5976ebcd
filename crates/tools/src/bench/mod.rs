//! `onelog bench`: benchmarks of onelogd against MariaDB 10.11 on the same machine, with an
//! fsync-delay shim preloaded into every server.

pub mod add_index;
pub mod big_txn;
pub mod case9;
pub mod catchup;
pub mod group_commit;
pub mod insert_bench;
pub mod markdown;
pub mod repl_report;
pub mod replication;
pub mod report;
pub mod semisync;
pub mod shim;
pub mod sync_binlog;
pub mod sync_limit;
pub mod systems;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use systems::{Env, Server, SystemKind};

const USAGE: &str = "\
Usage: onelog bench <workload> [options]
  all               every workload below, then a Markdown report (--out)
  group-commit      single-row autocommit inserts at 1..64 clients
  sync-binlog       4 clients inserting 35 KB rows with sync_binlog=0..4, then the
                    published test case (a stored function called by mysqlslap, 4 clients)
                    with sync_binlog=0 and 1
  insert-benchmark  the Insert Benchmark steps (l.i0 l.x l.i1 l.i2 qr/qp 100/500/1000)
  big-txn           small autocommit inserts beside one large transaction's COMMIT
                    (systems with a durable binlog)
  add-index         small autocommit inserts beside two ALTER TABLE ... ADD INDEX
                    (durable systems)
  replication       single-row autocommit inserts (1 and 16 clients) on onelog-engine and
                    mariadb-binlog with 0, 1 or 4 MariaDB replicas attached (and 4 receiving
                    only): throughput, latency, each replica's receipt and apply lag
                    (default delay: 1000 us)
  semisync          single-row autocommit inserts on onelog-engine and mariadb-binlog with
                    one MariaDB replica behind a delaying proxy, semi-sync (AFTER_SYNC) off
                    and on (options: --delay-us N (1000), --net-delay-us N (200, each way),
                    --clients LIST (1,16), --seconds S (15), --out FILE)
  catchup           replica catch-up: 16 clients write a backlog on a MariaDB and an onelogd
                    primary, then each replica (onelogd with N workers, MariaDB with 4)
                    applies it from empty, timed; then its lag under the same load
                    (options: --delay-us N (1000), --txns N (100000), --clients N (16),
                    --threads LIST (onelog workers, 4,16), --seconds S (15), --out FILE)
  sync-limit        8 KiB write + fdatasync rounds per second of one thread (L)
Options:
  --quick                 small sizes and short durations (about 10 minutes for `all`)
  --out FILE              write a Markdown report there (charts go to DIR(FILE)/bench/*.svg)
  --delay-us LIST         fsync delays in microseconds, e.g. 0,1000 (default 0,1000)
  --system LIST           systems (default: all); names: onelog-engine onelog-file
                          onelog-nobinlog mariadb-binlog mariadb-nobinlog mariadb-nosync
  --clients LIST          group-commit client counts / insert-benchmark tables (one list each
                          per workload; for `all` use --gc-clients and --ib-clients)
  --seconds S             duration of each measured point (group-commit, sync-binlog,
                          replication)
  --repl-clients LIST     replication client counts (default 1,16)
  --rows N                insert-benchmark l.i0 rows per table (l.i1 = N/4, l.i2 = N/16)
  --query-seconds S       insert-benchmark duration of each qr/qp step
  --settle-seconds S      insert-benchmark idle wait between l.i2 and the query steps
                          (default: 5 + 1 per 100000 rows loaded, at most 1200; --quick: 1)
  --big-mib N             big-txn: MiB of rows in the large transaction (default 100;
                          --quick: 20)
  --index-rows N          add-index: rows of each table (default 400000; --quick: 100000)
  --repeat N              repeat group-commit points, keep the median (default 1)
  --cache-size SIZE       InnoDB buffer pool and RocksDB block cache of every server
                          (default 256M; smaller than the tables for an IO-bound run)
  --direct-reads          onelogd reads table files with O_DIRECT
                          (--rocksdb-use-direct-reads), as InnoDB does by default
                          (innodb_flush_method=O_DIRECT): no page cache behind either cache
  --workdir DIR           scratch directory (default: $TMPDIR/onelog-bench-PID)
  --onelogd PATH          onelogd binary (default: next to this binary)
Environment:
  ONELOGD_EXTRA_ARGS      extra onelogd options for every onelogd started
                          (e.g. --rocksdb-write-buffer-size=16M)
  MARIADBD_EXTRA_ARGS     extra mariadbd options for every mariadbd started
                          (e.g. --thread-handling=pool-of-threads)";

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    pub quick: bool,
    pub delays: Vec<u64>,
    pub systems: Vec<SystemKind>,
    pub run_gc: bool,
    pub run_sb: bool,
    pub run_ib: bool,
    pub run_bt: bool,
    pub run_ai: bool,
    pub run_repl: bool,
    pub repl_clients: Vec<usize>,
    pub repl_secs: f64,
    pub gc_clients: Vec<usize>,
    pub gc_secs: f64,
    pub sb_values: Vec<u32>,
    pub sb_secs: f64,
    /// The published test case: calls per iteration and iterations.
    pub case9_queries: u64,
    pub case9_iterations: u32,
    pub ib_clients: Vec<usize>,
    pub ib: insert_bench::IbOpts,
    /// big-txn: MiB of row data in the large transaction.
    pub bt_mib: u64,
    /// add-index: rows per table.
    pub ai_rows: u64,
    pub repeat: usize,
    pub limit_secs: f64,
    /// Buffer pool / block cache size of every server.
    pub cache_size: String,
    /// onelogd reads with O_DIRECT (InnoDB does by default).
    pub direct_reads: bool,
    pub workdir: PathBuf,
    pub out: Option<PathBuf>,
    pub onelogd: Option<PathBuf>,
    pub command_line: String,
}

impl Config {
    fn new(quick: bool) -> Config {
        Config {
            quick,
            delays: vec![0, 1000],
            systems: SystemKind::ALL.to_vec(),
            run_gc: true,
            run_sb: true,
            run_ib: true,
            run_bt: true,
            run_ai: true,
            run_repl: true,
            repl_clients: vec![1, 16],
            repl_secs: if quick { 2.0 } else { 10.0 },
            gc_clients: vec![1, 2, 4, 8, 16, 32, 64],
            gc_secs: if quick { 1.0 } else { 10.0 },
            sb_values: vec![0, 1, 2, 3, 4],
            sb_secs: if quick { 1.0 } else { 10.0 },
            case9_queries: if quick { 400 } else { 4000 },
            case9_iterations: if quick { 1 } else { 3 },
            ib_clients: if quick { vec![1] } else { vec![1, 16] },
            ib: insert_bench::IbOpts {
                clients: 1,
                rows_i0: if quick { 20_000 } else { 1_000_000 },
                rows_i1: if quick { 5_000 } else { 250_000 },
                rows_i2: if quick { 1_250 } else { 62_500 },
                query_secs: if quick { 1.5 } else { 60.0 },
                rates: vec![100, 500, 1000],
                bg_rows_per_commit: 10,
                settle_secs: if quick { Some(1.0) } else { None },
            },
            bt_mib: if quick { 20 } else { 100 },
            ai_rows: if quick { 100_000 } else { 400_000 },
            repeat: 1,
            limit_secs: if quick { 1.0 } else { 5.0 },
            cache_size: systems::CACHE_SIZE.to_string(),
            direct_reads: false,
            workdir: std::env::temp_dir().join(format!("onelog-bench-{}", std::process::id())),
            out: None,
            onelogd: None,
            command_line: String::new(),
        }
    }
}

/// Everything measured in one run.
#[derive(Default)]
pub struct Results {
    /// (delay in µs, L in rounds per second)
    pub limits: Vec<(u64, f64)>,
    pub gc: Vec<group_commit::GcPoint>,
    pub sb: Vec<sync_binlog::SbPoint>,
    pub case9: Vec<case9::Case9Point>,
    pub ib: Vec<insert_bench::StepResult>,
    pub bt: Vec<big_txn::BtPoint>,
    pub ai: Vec<add_index::AiPoint>,
    pub repl: Vec<replication::ReplPoint>,
    pub errors: Vec<String>,
    pub started: String,
    pub elapsed_secs: f64,
}

impl Results {
    pub fn limit(&self, delay: u64) -> f64 {
        self.limits
            .iter()
            .find(|(d, _)| *d == delay)
            .map(|x| x.1)
            .unwrap_or(f64::NAN)
    }
}

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| format!("bad {what} '{x}'"))
        })
        .collect()
}

/// A size both servers accept: digits with an optional K, M or G suffix.
fn parse_cache_size(v: &str) -> Result<String, String> {
    let digits = v.trim_end_matches(['K', 'M', 'G', 'k', 'm', 'g']);
    let suffix = &v[digits.len()..];
    if digits.is_empty() || suffix.len() > 1 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad --cache-size '{v}' (e.g. 64M)"));
    }
    Ok(v.to_ascii_uppercase())
}

/// Parses `--key value` / `--key=value` options (flags: --quick, --raw, --direct-reads).
pub fn parse_opts(args: &[String]) -> Result<HashMap<String, String>, String> {
    let mut m = HashMap::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some(body) = a.strip_prefix("--") else {
            return Err(format!("unexpected argument '{a}'"));
        };
        if let Some((k, v)) = body.split_once('=') {
            m.insert(k.to_string(), v.to_string());
        } else if matches!(body, "quick" | "raw" | "direct-reads") {
            m.insert(body.to_string(), "1".into());
        } else {
            let v = args
                .get(i + 1)
                .ok_or_else(|| format!("option --{body} needs a value"))?;
            m.insert(body.to_string(), v.clone());
            i += 1;
        }
        i += 1;
    }
    Ok(m)
}

fn config_from(workload: &str, args: &[String]) -> Result<Config, String> {
    let o = parse_opts(args)?;
    let mut c = Config::new(o.contains_key("quick"));
    c.command_line = std::iter::once("onelog bench".to_string())
        .chain(std::iter::once(workload.to_string()))
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    if workload != "all" {
        (c.run_gc, c.run_sb, c.run_ib, c.run_bt, c.run_ai) = (false, false, false, false, false);
        c.run_repl = false;
    }
    match workload {
        "all" => {}
        "group-commit" => c.run_gc = true,
        "sync-binlog" => c.run_sb = true,
        "insert-benchmark" => c.run_ib = true,
        "big-txn" => c.run_bt = true,
        "add-index" => c.run_ai = true,
        "replication" => {
            c.run_repl = true;
            c.delays = vec![1000];
            c.systems = vec![SystemKind::OnelogEngine, SystemKind::MariadbBinlog];
        }
        _ => return Err(format!("unknown workload '{workload}'\n{USAGE}")),
    }
    for (k, v) in &o {
        match k.as_str() {
            "quick" => {}
            "direct-reads" => c.direct_reads = true,
            "out" => c.out = Some(PathBuf::from(v)),
            "delay-us" => c.delays = parse_list(v, "delay")?,
            "system" | "systems" => {
                c.systems = v
                    .split(',')
                    .map(|s| SystemKind::parse(s).ok_or_else(|| format!("unknown system '{s}'")))
                    .collect::<Result<_, _>>()?
            }
            "clients" => {
                let l: Vec<usize> = parse_list(v, "client count")?;
                c.gc_clients = l.clone();
                c.repl_clients = l.clone();
                c.ib_clients = l;
            }
            "gc-clients" => c.gc_clients = parse_list(v, "client count")?,
            "repl-clients" => c.repl_clients = parse_list(v, "client count")?,
            "ib-clients" => c.ib_clients = parse_list(v, "client count")?,
            "seconds" => {
                let s: f64 = v.parse().map_err(|_| "bad --seconds")?;
                c.gc_secs = s;
                c.sb_secs = s;
                c.repl_secs = s;
            }
            "sync-binlog-values" => c.sb_values = parse_list(v, "sync_binlog value")?,
            "rows" => {
                let n: u64 = v.parse().map_err(|_| "bad --rows")?;
                c.ib.rows_i0 = n;
                c.ib.rows_i1 = (n / 4).max(50);
                c.ib.rows_i2 = (n / 16).max(5);
            }
            "query-seconds" => c.ib.query_secs = v.parse().map_err(|_| "bad --query-seconds")?,
            "settle-seconds" => {
                c.ib.settle_secs = Some(v.parse().map_err(|_| "bad --settle-seconds")?)
            }
            "big-mib" => c.bt_mib = v.parse().map_err(|_| "bad --big-mib")?,
            "index-rows" => c.ai_rows = v.parse().map_err(|_| "bad --index-rows")?,
            "rates" => c.ib.rates = parse_list(v, "rate")?,
            "repeat" => c.repeat = v.parse().map_err(|_| "bad --repeat")?,
            "workdir" => c.workdir = PathBuf::from(v),
            "onelogd" => c.onelogd = Some(PathBuf::from(v)),
            "cache-size" => c.cache_size = parse_cache_size(v)?,
            "limit-seconds" => c.limit_secs = v.parse().map_err(|_| "bad --limit-seconds")?,
            _ => return Err(format!("unknown option --{k}\n{USAGE}")),
        }
    }
    Ok(c)
}

/// Entry point of `onelog bench ...`; `args` are the arguments after `bench`.
pub fn main(args: &[String]) -> i32 {
    let Some(workload) = args.first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    if matches!(workload.as_str(), "help" | "-h" | "--help") {
        println!("{USAGE}");
        return 0;
    }
    if workload == "sync-limit" {
        return sync_limit_cmd(&args[1..]);
    }
    if workload == "semisync" {
        return semisync_cmd(&args[1..]);
    }
    if workload == "catchup" {
        return catchup_cmd(&args[1..]);
    }
    let cfg = match config_from(workload, &args[1..]) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("onelog bench: {e}");
            return 2;
        }
    };
    match run(&cfg) {
        Ok(res) => {
            let md = markdown::render(&cfg, &res);
            if let Some(out) = &cfg.out {
                let charts_dir = out
                    .parent()
                    .map(|p| p.join("bench"))
                    .unwrap_or_else(|| PathBuf::from("bench"));
                if let Err(e) = markdown::write(out, &charts_dir, &md, &res) {
                    eprintln!("onelog bench: writing the report: {e}");
                    return 1;
                }
                eprintln!("report written to {}", out.display());
            } else {
                println!("{}", md.text);
            }
            if res.errors.is_empty() {
                0
            } else {
                1
            }
        }
        Err(e) => {
            eprintln!("onelog bench: {e}");
            1
        }
    }
}

fn sync_limit_cmd(args: &[String]) -> i32 {
    let o = match parse_opts(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("onelog bench sync-limit: {e}");
            return 2;
        }
    };
    let dir = o
        .get("dir")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let secs: f64 = o.get("seconds").and_then(|s| s.parse().ok()).unwrap_or(3.0);
    match sync_limit::measure(&dir, secs) {
        Ok(r) if o.contains_key("raw") => {
            println!("{r:.1}");
            0
        }
        Ok(r) => {
            println!(
                "L = {r:.0} rounds/s (8 KiB write + fdatasync, one thread, {})",
                dir.display()
            );
            0
        }
        Err(e) => {
            eprintln!("onelog bench sync-limit: {e}");
            1
        }
    }
}

/// A standalone workload's command: parses the options, gives `body` a scratch
/// environment (removed afterwards) and the options, writes its report to `--out` and
/// prints it.
fn standalone_cmd(
    name: &str,
    args: &[String],
    body: impl FnOnce(&Env, &HashMap<String, String>) -> Result<String, String>,
) -> i32 {
    let run = || -> Result<String, String> {
        let o = parse_opts(args)?;
        let workdir = o.get("workdir").map(PathBuf::from).unwrap_or_else(|| {
            std::env::temp_dir().join(format!("onelog-bench-{}", std::process::id()))
        });
        std::fs::create_dir_all(&workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
        let shim = shim::build(&workdir.join("shim"))?;
        let env = Env::new(
            workdir.clone(),
            shim,
            o.get("onelogd").map(PathBuf::from),
            "256M".into(),
            false,
        );
        let text = body(&env, &o);
        let _ = std::fs::remove_dir_all(&workdir);
        let text = text?;
        if let Some(out) = o.get("out") {
            std::fs::write(out, &text).map_err(|e| format!("{out}: {e}"))?;
        }
        Ok(text)
    };
    match run() {
        Ok(text) => {
            println!("{text}");
            0
        }
        Err(e) => {
            eprintln!("onelog bench {name}: {e}");
            1
        }
    }
}

fn num_opt(o: &HashMap<String, String>, k: &str, d: u64) -> Result<u64, String> {
    o.get(k)
        .map_or(Ok(d), |v| v.parse().map_err(|_| format!("bad --{k} '{v}'")))
}

fn catchup_cmd(args: &[String]) -> i32 {
    standalone_cmd("catchup", args, |env, o| {
        let quick = o.contains_key("quick");
        let delay_us = num_opt(o, "delay-us", 1000)?;
        let txns = num_opt(o, "txns", if quick { 10_000 } else { 100_000 })?;
        let clients = num_opt(o, "clients", 16)? as usize;
        let secs = num_opt(o, "seconds", if quick { 5 } else { 15 })? as f64;
        let threads: Vec<u32> = match o.get("threads") {
            Some(v) => parse_list(v, "worker count")?,
            None => vec![4, 16],
        };
        let points = catchup::run(env, delay_us, txns, clients, &threads, secs)?;
        Ok(catchup::report(&points, delay_us, clients, secs))
    })
}

fn semisync_cmd(args: &[String]) -> i32 {
    standalone_cmd("semisync", args, |env, o| {
        let delay_us = num_opt(o, "delay-us", 1000)?;
        let net = std::time::Duration::from_micros(num_opt(o, "net-delay-us", 200)?);
        let clients: Vec<usize> = match o.get("clients") {
            Some(v) => parse_list(v, "client count")?,
            None => vec![1, 16],
        };
        let secs = num_opt(o, "seconds", 15)? as f64;
        let points = semisync::run(env, delay_us, net, &clients, secs)?;
        Ok(semisync::report(&points, delay_us, net))
    })
}

/// Runs the configured workloads on every (delay, system).
pub fn run(cfg: &Config) -> Result<Results, String> {
    let t0 = Instant::now();
    let mut res = Results {
        started: now_utc(),
        ..Default::default()
    };
    std::fs::create_dir_all(&cfg.workdir).map_err(|e| format!("{}: {e}", cfg.workdir.display()))?;
    let shim = shim::build(&cfg.workdir.join("shim"))?;
    let env = Env::new(
        cfg.workdir.clone(),
        shim.clone(),
        cfg.onelogd.clone(),
        cfg.cache_size.clone(),
        cfg.direct_reads,
    );
    for &d in &cfg.delays {
        let l = sync_limit::measure_under_shim(&shim, &cfg.workdir, d, cfg.limit_secs)?;
        eprintln!("single-sync limit L at delay {d}us: {l:.0} rounds/s");
        res.limits.push((d, l));
    }
    for &d in &cfg.delays {
        for &k in &cfg.systems {
            let want_gc = cfg.run_gc && k.durable();
            let want_sb = cfg.run_sb && k.has_binlog() && k.durable();
            let want_bt = cfg.run_bt && k.has_binlog() && k.durable();
            let want_ai = cfg.run_ai && k.durable();
            let want_repl =
                cfg.run_repl && matches!(k, SystemKind::OnelogEngine | SystemKind::MariadbBinlog);
            if !(want_gc || want_sb || cfg.run_ib || want_bt || want_ai || want_repl) {
                continue;
            }
            eprintln!(
                "== {} (fsync delay {d}us) [{:.0}s elapsed]",
                k.name(),
                t0.elapsed().as_secs_f64()
            );
            // A fresh server (and data directory) per workload: each one is measured
            // without the compaction or page flushing left behind by the one before.
            let step = |res: &mut Results,
                        what: &str,
                        f: &mut dyn FnMut(&mut Server, &mut Results) -> Result<(), String>| {
                let r = Server::start(&env, k, d).and_then(|mut server| f(&mut server, res));
                if let Err(e) = r {
                    let msg = format!("{} delay {d}us {what}: {e}", k.name());
                    eprintln!("  ERROR {msg}");
                    res.errors.push(msg);
                }
            };
            if want_gc {
                step(&mut res, "group-commit", &mut |server, res| {
                    res.gc.extend(group_commit::run(
                        server,
                        &cfg.gc_clients,
                        cfg.gc_secs,
                        cfg.repeat,
                    )?);
                    Ok(())
                });
            }
            if want_sb {
                step(&mut res, "sync-binlog", &mut |server, res| {
                    res.sb
                        .extend(sync_binlog::run(server, &cfg.sb_values, 4, cfg.sb_secs)?);
                    res.case9.extend(case9::run(
                        server,
                        &[0, 1],
                        cfg.case9_queries,
                        cfg.case9_iterations,
                    )?);
                    Ok(())
                });
            }
            if cfg.run_ib {
                for &c in &cfg.ib_clients {
                    step(&mut res, "insert-benchmark", &mut |server, res| {
                        let mut o = cfg.ib.clone();
                        o.clients = c;
                        res.ib.extend(insert_bench::run(server, &o)?);
                        Ok(())
                    });
                }
            }
            if want_bt {
                step(&mut res, "big-txn", &mut |server, res| {
                    res.bt.push(big_txn::run(server, cfg.bt_mib)?);
                    Ok(())
                });
            }
            if want_ai {
                step(&mut res, "add-index", &mut |server, res| {
                    res.ai.push(add_index::run(server, cfg.ai_rows)?);
                    Ok(())
                });
            }
            if want_repl {
                // Each setup starts its own primary and replicas.
                for setup in replication::SETUPS {
                    match replication::run_setup(
                        &env,
                        k,
                        d,
                        setup,
                        &cfg.repl_clients,
                        cfg.repl_secs,
                    ) {
                        Ok(points) => res.repl.extend(points),
                        Err(e) => {
                            let msg = format!(
                                "{} delay {d}us replication ({} replicas): {e}",
                                k.name(),
                                setup.label()
                            );
                            eprintln!("  ERROR {msg}");
                            res.errors.push(msg);
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&cfg.workdir);
    res.elapsed_secs = t0.elapsed().as_secs_f64();
    Ok(res)
}

/// The current UTC time as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_utc(secs)
}

/// Formats seconds since the epoch as a UTC date and time.
pub fn format_utc(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }

    #[test]
    fn options() {
        let a: Vec<String> = [
            "--quick",
            "--delay-us",
            "0,1000",
            "--system=onelog-engine,mariadb",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = config_from("group-commit", &a).unwrap();
        assert!(c.quick && c.run_gc && !c.run_ib && !c.run_sb);
        assert_eq!(c.delays, vec![0, 1000]);
        assert_eq!(
            c.systems,
            vec![SystemKind::OnelogEngine, SystemKind::MariadbBinlog]
        );
        let c = config_from("big-txn", &["--big-mib=50".to_string()]).unwrap();
        assert!(c.run_bt && !c.run_gc && !c.run_sb && !c.run_ib);
        assert_eq!(c.bt_mib, 50);
        assert_eq!(
            config_from("big-txn", &["--quick".into()]).unwrap().bt_mib,
            20
        );
        assert_eq!(config_from("big-txn", &[]).unwrap().bt_mib, 100);
        let c = config_from("add-index", &["--index-rows=1000".to_string()]).unwrap();
        assert!(c.run_ai && !c.run_bt && !c.run_gc && !c.run_sb && !c.run_ib);
        assert_eq!(c.ai_rows, 1000);
        assert_eq!(
            config_from("add-index", &["--quick".into()])
                .unwrap()
                .ai_rows,
            100_000
        );
        let c = config_from("all", &[]).unwrap();
        assert!(c.run_bt && c.run_gc && c.run_sb && c.run_ib && c.run_ai);
        assert!(config_from("big-txn", &["--big-mib=x".to_string()]).is_err());
        assert!(config_from("nope", &[]).is_err());
        assert!(config_from("all", &["--bogus=1".to_string()]).is_err());
        assert_eq!(config_from("all", &[]).unwrap().cache_size, "256M");
        let c = config_from("insert-benchmark", &["--cache-size=16m".to_string()]).unwrap();
        assert_eq!(c.cache_size, "16M");
        assert!(!c.direct_reads);
        let c = config_from("insert-benchmark", &["--direct-reads".to_string()]).unwrap();
        assert!(c.direct_reads);
        for bad in ["", "M", "16MB", "1.5G", "-1"] {
            assert!(
                config_from("all", &[format!("--cache-size={bad}")]).is_err(),
                "{bad}"
            );
        }
    }
}
