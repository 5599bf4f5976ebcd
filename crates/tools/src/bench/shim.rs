//! The fsync-delay `LD_PRELOAD` shim (C source in `crates/tools/shim/fsync_delay.c`), built
//! with the system C compiler when a benchmark starts.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shim's C source, embedded so the binary can build it anywhere.
pub const SOURCE: &str = include_str!("../../shim/fsync_delay.c");

/// The compiler command line used to build the shim into `out`.
pub fn build_command(src: &Path, out: &Path) -> Vec<String> {
    vec![
        std::env::var("CC").unwrap_or_else(|_| "cc".into()),
        "-shared".into(),
        "-fPIC".into(),
        "-O2".into(),
        "-o".into(),
        out.display().to_string(),
        src.display().to_string(),
        "-ldl".into(),
    ]
}

/// Writes the source into `dir` and compiles `dir/fsync_delay.so`.
pub fn build(dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let src = dir.join("fsync_delay.c");
    let out = dir.join("fsync_delay.so");
    std::fs::write(&src, SOURCE).map_err(|e| e.to_string())?;
    let argv = build_command(&src, &out);
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .map_err(|e| format!("{}: {e}", argv[0]))?;
    if !o.status.success() {
        return Err(format!(
            "building the fsync shim failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shim_builds_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let so = build(dir.path()).unwrap();
        assert!(so.exists());
        // Run `sync` under the shim with a counter file: it calls sync(), not fsync, so use a
        // shell `dd ... conv=fdatasync` instead, which calls fdatasync once.
        let count = dir.path().join("count");
        std::fs::write(&count, vec![0u8; 4096]).unwrap();
        let target = dir.path().join("f");
        let st = Command::new("dd")
            .arg("if=/dev/zero")
            .arg(format!("of={}", target.display()))
            .arg("bs=4096")
            .arg("count=1")
            .arg("conv=fdatasync")
            .arg("status=none")
            .env("LD_PRELOAD", &so)
            .env("FSYNC_DELAY_US", "1000")
            .env("FSYNC_COUNT_FILE", &count)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(super::super::systems::read_counter(&count) >= 1);
    }
}
