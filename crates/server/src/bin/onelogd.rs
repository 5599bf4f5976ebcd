//! `onelogd`: the onelog server. Options follow MariaDB's (`--datadir`, `--port`,
//! `--socket`, `--server-id`, `--binlog-storage=engine|file`, `--skip-log-bin`,
//! `--sync-binlog`, `--defaults-file`, ...).

/// mimalloc for the server's Rust allocations: parsing and executing a statement makes
/// many small short-lived allocations, and glibc malloc took a quarter of the CPU time of
/// 100-row inserts (perf, `docs/BENCHMARKS.md`). The crate's `override` feature makes it
/// RocksDB's allocator as well (`malloc`/`free`/`operator new` are defined here): under
/// glibc's malloc the apply thread waited up to 0.65 s in `free` for an arena lock that a
/// preempted thread held, and every commit of the moment waited with it (the background
/// insert stalls of the 16-client query steps of the Insert Benchmark).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-?") {
        println!("{}", onelog_server::config::USAGE);
        return;
    }
    if args.iter().any(|a| a == "--version" || a == "-V") {
        println!(
            "onelogd  Ver {}",
            onelog_protocol::DEFAULT_SERVER_VERSION.trim_start_matches("5.5.5-")
        );
        return;
    }
    let cfg = match onelog_server::Config::from_args(&args) {
        Ok(c) => c,
        Err(e) => {
            onelog_types::error!("{e}");
            std::process::exit(1);
        }
    };
    if let Some(path) = cfg.log_error_file() {
        // The error log is stderr pointed at the file (panic messages included).
        use std::os::fd::AsRawFd;
        if let Some(dir) = path.parent() {
            // The data directory of a first start does not exist yet.
            let _ = std::fs::create_dir_all(dir);
        }
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            // SAFETY: dup2 of a file descriptor we own onto stderr.
            Ok(f) => unsafe {
                libc::dup2(f.as_raw_fd(), 2);
            },
            Err(e) => {
                onelog_types::error!("--log-error {}: {e}", path.display());
                std::process::exit(1);
            }
        }
    }
    if let Err(e) = onelog_server::run(cfg) {
        onelog_types::error!("{e}");
        std::process::exit(1);
    }
}
