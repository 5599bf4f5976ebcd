//! The server's own files of LOAD DATA INFILE and SELECT ... INTO OUTFILE / DUMPFILE:
//! where a name points, `secure_file_priv`, and MariaDB's errors opening and creating them.
//!
//! A name without a directory part lies in the current database's directory under the
//! data directory, a relative one under the data directory (MariaDB's rules; onelog keeps
//! no per-database directories, so such names only work where the user made them).
//! `secure_file_priv` (MariaDB's default: unset, no restriction) names the directory every
//! such file must be in, compared after resolving symbolic links: the file itself if it
//! exists, else its directory.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use onelog_types::{code, SqlError, Value};

use crate::session::Session;
use crate::sql_err;

/// Where MariaDB looks for file `name` (`db`: the current database, or the table's).
pub fn resolve(datadir: &Path, db: &str, name: &str) -> PathBuf {
    let home = std::fs::canonicalize(datadir).unwrap_or_else(|_| datadir.to_path_buf());
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else if let Some(rest) = name.strip_prefix("~/") {
        match std::env::var_os("HOME") {
            Some(h) => Path::new(&h).join(rest),
            None => home.join(name),
        }
    } else if !name.contains('/') {
        home.join(db).join(name)
    } else {
        home.join(name)
    }
}

/// `(Errcode: 2 "No such file or directory")` as MariaDB words an OS error.
pub fn errcode(e: &io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    format!("(Errcode: {} \"{text}\")", e.raw_os_error().unwrap_or(0))
}

/// The normalised `secure_file_priv` directory (with a trailing `/`), or None when unset or
/// empty (no restriction).
pub fn secure_dir(s: &Session) -> Option<String> {
    match s.db.global_variable("secure_file_priv") {
        Some(Value::Bytes(b)) if !b.is_empty() => Some(String::from_utf8_lossy(&b).into_owned()),
        _ => None,
    }
}

/// Normalises a `--secure-file-priv` directory as MariaDB shows it: the real path with a
/// trailing `/`. Err: the directory cannot be resolved.
pub fn normalize_secure_dir(dir: &str) -> io::Result<String> {
    if dir.is_empty() {
        return Ok(String::new());
    }
    let real = std::fs::canonicalize(dir)?;
    let mut s = real.to_string_lossy().into_owned();
    if !s.ends_with('/') {
        s.push('/');
    }
    Ok(s)
}

/// Whether `path` lies under `dir` (a normalised `secure_file_priv`).
pub fn is_secure(dir: &str, path: &Path) -> bool {
    let real = match std::fs::canonicalize(path) {
        Ok(r) => r,
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => return false,
            };
            match std::fs::canonicalize(parent) {
                Ok(r) => r,
                Err(_) => return false,
            }
        }
    };
    let mut s = real.to_string_lossy().into_owned();
    if !s.ends_with('/') {
        s.push('/');
    }
    s.starts_with(dir)
}

/// 1290 unless `path` may be read or written under `secure_file_priv`.
pub fn check_secure(s: &Session, path: &Path) -> Result<(), SqlError> {
    match secure_dir(s) {
        Some(dir) if !is_secure(&dir, path) => Err(sql_err(
            code::ER_OPTION_PREVENTS_STATEMENT,
            "The MariaDB server is running with the --secure-file-priv option so it cannot execute this statement",
        )),
        _ => Ok(()),
    }
}

/// Opens a file LOAD DATA reads: a regular file or a named pipe.
pub fn open_input(path: &Path) -> Result<File, SqlError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        sql_err(
            code::EE_STAT,
            format!("Can't get stat of '{shown}' {}", errcode(&e)),
        )
    })?;
    let ft = meta.file_type();
    if !(ft.is_file() || ft.is_fifo()) {
        return Err(sql_err(
            code::ER_TEXTFILE_NOT_READABLE,
            format!("The file '{shown}' must be in the database directory or be readable by all"),
        ));
    }
    File::open(path).map_err(|e| {
        sql_err(
            code::EE_FILENOTFOUND,
            format!("File '{shown}' not found {}", errcode(&e)),
        )
    })
}

/// 1086 if `path` exists (`name`: the file as the statement wrote it).
pub fn check_absent(path: &Path, name: &str) -> Result<(), SqlError> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(exists(name));
    }
    Ok(())
}

fn exists(name: &str) -> SqlError {
    sql_err(
        code::ER_FILE_EXISTS_ERROR,
        format!("File '{name}' already exists"),
    )
}

/// Creates the file of INTO OUTFILE / DUMPFILE: new (never over an existing file), and
/// readable by all, as MariaDB creates it.
pub fn create_output(path: &Path, name: &str) -> Result<File, SqlError> {
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                exists(name)
            } else {
                sql_err(
                    code::EE_CANTCREATEFILE,
                    format!(
                        "Can't create/write to file '{}' {}",
                        path.display(),
                        errcode(&e)
                    ),
                )
            }
        })?;
    let _ = f.set_permissions(std::fs::Permissions::from_mode(0o644));
    Ok(f)
}

/// MariaDB's error for a failed write to `path`.
pub fn write_error(path: &Path, e: &io::Error) -> SqlError {
    sql_err(
        code::EE_WRITE,
        format!("Error writing file '{}' {}", path.display(), errcode(e)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_secure_dir() {
        let d = tempfile::tempdir().unwrap();
        let dir = normalize_secure_dir(d.path().to_str().unwrap()).unwrap();
        assert!(dir.ends_with('/'));
        let inside = d.path().join("a.txt");
        assert!(is_secure(&dir, &inside));
        std::fs::write(&inside, b"x").unwrap();
        assert!(is_secure(&dir, &inside));
        assert!(!is_secure(&dir, Path::new("/etc/passwd")));
        assert!(!is_secure(&dir, &d.path().join("../x")));
        assert!(!is_secure(&dir, &d.path().join("no/such/dir/x")));
        // A link out of the directory is outside it.
        std::os::unix::fs::symlink("/etc/passwd", d.path().join("l")).unwrap();
        assert!(!is_secure(&dir, &d.path().join("l")));
        let home = Path::new("/data");
        assert_eq!(resolve(home, "db", "/tmp/x"), PathBuf::from("/tmp/x"));
        assert_eq!(
            resolve(home, "db", "x.txt"),
            PathBuf::from("/data/db/x.txt")
        );
        assert_eq!(
            resolve(home, "db", "sub/x.txt"),
            PathBuf::from("/data/sub/x.txt")
        );
        assert_eq!(
            errcode(&io::Error::from_raw_os_error(2)),
            "(Errcode: 2 \"No such file or directory\")"
        );
    }
}
