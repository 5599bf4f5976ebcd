//! The single-sync limit L: how many 8 KiB write + fdatasync rounds per second one thread can
//! do on the benchmark's file system, under the same shim as the servers.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BLOCK: usize = 8192;
const FILE_SIZE: u64 = 16 << 20;

/// The loop itself (runs in whatever process calls it; LD_PRELOAD applies if set).
pub fn measure(dir: &Path, secs: f64) -> Result<f64, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!("sync-limit-{}.dat", std::process::id()));
    let f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // Preallocate and sync once so that each fdatasync only has data to flush, as a
    // preallocated log does. Written in 8 KiB pieces as pg_test_fsync does: the page
    // cache sizes its folios by the writes that create them, and an 8 KiB write into a
    // 1 MiB folio would make every fdatasync write back the whole MiB.
    let zero = vec![0u8; BLOCK];
    for off in (0..FILE_SIZE).step_by(BLOCK) {
        f.write_all_at(&zero, off).map_err(|e| e.to_string())?;
    }
    f.sync_all().map_err(|e| e.to_string())?;
    let buf = vec![0x5au8; BLOCK];
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut n: u64 = 0;
    let mut off: u64 = 0;
    while Instant::now() < end {
        f.write_all_at(&buf, off).map_err(|e| e.to_string())?;
        f.sync_data().map_err(|e| e.to_string())?;
        off = (off + BLOCK as u64) % FILE_SIZE;
        n += 1;
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}

/// Runs `onelog bench sync-limit --raw` as a child under the shim with the given delay.
pub fn measure_under_shim(
    shim: &Path,
    dir: &Path,
    delay_us: u64,
    secs: f64,
) -> Result<f64, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["bench", "sync-limit", "--raw", "--dir"])
        .arg(dir)
        .arg("--seconds")
        .arg(secs.to_string())
        .env("LD_PRELOAD", shim)
        .env("FSYNC_DELAY_US", delay_us.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "sync-limit failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse::<f64>()
        .map_err(|e| format!("sync-limit output: {e}"))
}
