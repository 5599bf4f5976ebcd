//! `onelog binlog dump FILE...` and `onelog binlog export`.
//!
//! - `dump` prints binlog files (onelog's preallocated `binlog-NNNNNN` files or classic
//!   ones) like `mariadb-binlog -v`: positions, GTIDs, statements, decoded row images.
//! - `export --datadir DIR --out OUTDIR [--base NAME]` writes the binlog of a data
//!   directory as classic MariaDB files (`NAME.000001`..., `NAME.index`, no preallocated
//!   tail, ROTATE events renamed), which the real `mariadb-binlog` reads;
//!   `export FILE OUT` converts a single file.

use std::path::{Path, PathBuf};

use onelog_binlog::{dump, export, Naming, RealFs};

const USAGE: &str = "usage:
  onelog binlog dump FILE...
  onelog binlog export --datadir DIR --out OUTDIR [--base NAME]
  onelog binlog export FILE OUTFILE";

/// Entry point of `onelog binlog ...`; `args` are the arguments after `binlog`.
pub fn main(args: &[String]) -> i32 {
    let r = match args.first().map(String::as_str) {
        Some("dump") if args.len() > 1 => dump_files(&args[1..]),
        Some("export") => export_cmd(&args[1..]),
        _ => {
            eprintln!("{USAGE}");
            return 2;
        }
    };
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("onelog binlog: {e}");
            1
        }
    }
}

fn dump_files(files: &[String]) -> Result<(), String> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for f in files {
        dump::dump_file(&RealFs, Path::new(f), &mut out).map_err(|e| format!("{f}: {e}"))?;
    }
    Ok(())
}

fn export_cmd(args: &[String]) -> Result<(), String> {
    let mut datadir = None;
    let mut out = None;
    let mut base = "mariadb-bin".to_string();
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--datadir" => datadir = Some(PathBuf::from(value("--datadir")?)),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "--base" => base = value("--base")?,
            s if s.starts_with("--datadir=") => datadir = Some(PathBuf::from(&s[10..])),
            s if s.starts_with("--out=") => out = Some(PathBuf::from(&s[6..])),
            s if s.starts_with("--base=") => base = s[7..].to_string(),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            _ => positional.push(a.clone()),
        }
    }
    match (datadir, out, positional.as_slice()) {
        (Some(dir), Some(out), []) => {
            std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
            // The data directory holds engine-style files (or classic ones in file mode).
            let mut written = Vec::new();
            for naming in [Naming::Engine, Naming::Classic] {
                written = export::export_dir(&RealFs, &dir, "binlog", naming, &out, &base)
                    .map_err(|e| e.to_string())?;
                if !written.is_empty() {
                    break;
                }
            }
            if written.is_empty() {
                return Err(format!("no binlog files in {}", dir.display()));
            }
            for f in written {
                println!("{}", f.display());
            }
            Ok(())
        }
        (None, None, [src, dst]) => {
            let info = export::export_file(&RealFs, Path::new(src), Path::new(dst), None)
                .map_err(|e| e.to_string())?;
            println!(
                "{dst}: {} events, {} groups, {} bytes",
                info.events, info.groups, info.bytes
            );
            Ok(())
        }
        _ => Err(USAGE.to_string()),
    }
}
