//! `onelog_backup_info`: what a backup holds, written last into the backup directory (a
//! directory without it is not a complete backup).
//!
//! Format: text, one `key=value` per line, `#` lines are comments:
//!
//! ```text
//! binlog_file=binlog-000003      the backup's binlog ends in this file ...
//! binlog_pos=12345               ... at this offset (the end of a group)
//! gtid_binlog_pos=0-1-123        @@gtid_binlog_pos there: the backup's GTID position
//! gtid_binlog_state=0-1-123      @@gtid_binlog_state there
//! applied_file=binlog-000003     the position the RocksDB checkpoint has applied; the
//! applied_pos=4000               server replays the groups after it when it starts
//! server_id=1                    the server the backup was taken from
//! gtid_slave_pos=                that server's @@gtid_slave_pos (for a sibling replica)
//! ```

use std::path::Path;

use crate::error::{BinlogError, Result};
use crate::gtid::{format_gtid_list, parse_gtid_list, Gtid};

/// The file name inside a backup directory.
pub const INFO_FILE: &str = "onelog_backup_info";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupInfo {
    pub binlog_file: String,
    pub binlog_pos: u64,
    pub gtid_binlog_pos: Vec<Gtid>,
    pub gtid_binlog_state: Vec<Gtid>,
    pub applied_file: String,
    pub applied_pos: u64,
    pub server_id: u32,
    pub gtid_slave_pos: Vec<Gtid>,
}

impl BackupInfo {
    pub fn to_text(&self) -> String {
        format!(
            "# onelog backup (start it with onelogd --datadir=<this directory>)\n\
             binlog_file={}\nbinlog_pos={}\ngtid_binlog_pos={}\ngtid_binlog_state={}\n\
             applied_file={}\napplied_pos={}\nserver_id={}\ngtid_slave_pos={}\n",
            self.binlog_file,
            self.binlog_pos,
            format_gtid_list(&self.gtid_binlog_pos),
            format_gtid_list(&self.gtid_binlog_state),
            self.applied_file,
            self.applied_pos,
            self.server_id,
            format_gtid_list(&self.gtid_slave_pos),
        )
    }

    pub fn parse(text: &str) -> std::result::Result<BackupInfo, String> {
        let mut info = BackupInfo::default();
        let mut seen = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| format!("malformed line '{line}'"))?;
            let num = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| format!("{k}: '{v}' is not a number"))
            };
            let gtids = |v: &str| parse_gtid_list(v).map_err(|_| format!("{k}: bad GTID list"));
            match k {
                "binlog_file" => info.binlog_file = v.to_string(),
                "binlog_pos" => info.binlog_pos = num(v)?,
                "gtid_binlog_pos" => info.gtid_binlog_pos = gtids(v)?,
                "gtid_binlog_state" => info.gtid_binlog_state = gtids(v)?,
                "applied_file" => info.applied_file = v.to_string(),
                "applied_pos" => info.applied_pos = num(v)?,
                "server_id" => {
                    info.server_id = u32::try_from(num(v)?).map_err(|_| "server_id too large")?
                }
                "gtid_slave_pos" => info.gtid_slave_pos = gtids(v)?,
                _ => {} // written by a later version: not needed here
            }
            seen.push(k.to_string());
        }
        for k in ["binlog_file", "binlog_pos", "applied_file", "applied_pos"] {
            if !seen.iter().any(|s| s == k) {
                return Err(format!("no {k}"));
            }
        }
        Ok(info)
    }

    /// Reads `dir/onelog_backup_info`.
    pub fn read(dir: &Path) -> Result<BackupInfo> {
        let path = dir.join(INFO_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| BinlogError::io("read", path.display(), e))?;
        BackupInfo::parse(&text).map_err(|reason| BinlogError::Corrupt {
            file: path.display().to_string(),
            offset: 0,
            reason,
        })
    }

    /// Writes `dir/onelog_backup_info` durably: a temporary file, synced, renamed, and the
    /// directory synced.
    pub fn write(&self, dir: &Path) -> Result<()> {
        use std::io::Write;
        let path = dir.join(INFO_FILE);
        let tmp = dir.join(format!("{INFO_FILE}.tmp"));
        let err = |op, e| BinlogError::io(op, path.display(), e);
        let mut f = std::fs::File::create(&tmp).map_err(|e| err("create", e))?;
        f.write_all(self.to_text().as_bytes())
            .map_err(|e| err("write", e))?;
        f.sync_all().map_err(|e| err("fsync", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| err("rename", e))?;
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| err("fsync directory", e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let info = BackupInfo {
            binlog_file: "binlog-000003".into(),
            binlog_pos: 12345,
            gtid_binlog_pos: vec![Gtid::new(0, 1, 123)],
            gtid_binlog_state: vec![Gtid::new(0, 1, 123), Gtid::new(0, 2, 7)],
            applied_file: "binlog-000002".into(),
            applied_pos: 4000,
            server_id: 1,
            gtid_slave_pos: vec![],
        };
        assert_eq!(BackupInfo::parse(&info.to_text()).unwrap(), info);
        assert!(BackupInfo::parse("binlog_file=x\n").is_err());
        assert!(BackupInfo::parse("binlog_pos=x\n").is_err());
    }
}
