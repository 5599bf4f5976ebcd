//! `@@gtid_slave_pos`: where this server's replica resumes, per replication domain.
//!
//! A transaction applied by replication keeps its primary's GTID in this server's binlog,
//! in the same group as its rows, so the position is derived from the binlog (the last
//! GTID of another server per domain): exact after any crash. `SET GLOBAL gtid_slave_pos`
//! (a new replica provisioned from a backup or a dump) overrides it: the value set is kept
//! in the file `gtid_slave_pos` of the data directory, with the derived position at that
//! moment, and stands for each domain until the replica applies a transaction of the
//! domain (the derived position of the domain changes); a domain the value leaves out is
//! dropped likewise.
//!
//! File format (text, replaced atomically): `set <gtid list>` and `base <gtid list>` lines.

use std::path::{Path, PathBuf};

use onelog_binlog::{format_gtid_list, parse_gtid_list, Gtid};

use crate::engine::Engine;
use crate::error::{EngineError, Result};

/// A `SET GLOBAL gtid_slave_pos` in force.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlavePosOverride {
    set: Vec<Gtid>,
    /// The derived position when it was set.
    base: Vec<Gtid>,
}

const FILE: &str = "gtid_slave_pos";

fn path(datadir: &Path) -> PathBuf {
    datadir.join(FILE)
}

/// Reads the override of a data directory (none: no file).
pub(crate) fn load(datadir: &Path) -> Result<Option<SlavePosOverride>> {
    let text = match std::fs::read_to_string(path(datadir)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(e)),
    };
    let mut o = SlavePosOverride::default();
    let bad = || EngineError::Corrupt(format!("{}: malformed", path(datadir).display()));
    for line in text.lines() {
        let (k, v) = line.split_once(' ').unwrap_or((line, ""));
        let list = parse_gtid_list(v).map_err(|_| bad())?;
        match k {
            "set" => o.set = list,
            "base" => o.base = list,
            _ => return Err(bad()),
        }
    }
    Ok(Some(o))
}

fn io_err(e: std::io::Error) -> EngineError {
    EngineError::Storage(format!("{FILE}: {e}"))
}

fn parse_error() -> EngineError {
    EngineError::Sql(onelog_types::SqlError::from_code(
        onelog_types::code::ER_INCORRECT_GTID_STATE,
        "Could not parse GTID list",
    ))
}

fn save(datadir: &Path, o: &SlavePosOverride) -> Result<()> {
    save_io(datadir, o).map_err(io_err)
}

fn save_io(datadir: &Path, o: &SlavePosOverride) -> std::io::Result<()> {
    let text = format!(
        "set {}\nbase {}\n",
        format_gtid_list(&o.set),
        format_gtid_list(&o.base)
    );
    let tmp = datadir.join(format!("{FILE}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, path(datadir))?;
    std::fs::File::open(datadir)?.sync_all()?;
    Ok(())
}

/// Combines the derived position with an override (see the module docs).
fn combine(derived: &[Gtid], o: &SlavePosOverride) -> Vec<Gtid> {
    let mut domains: Vec<u32> = derived.iter().chain(&o.set).map(|g| g.domain).collect();
    domains.sort_unstable();
    domains.dedup();
    let in_domain = |l: &[Gtid], d: u32| l.iter().find(|g| g.domain == d).copied();
    domains
        .into_iter()
        .filter_map(|d| {
            let now = in_domain(derived, d);
            if now != in_domain(&o.base, d) {
                now
            } else {
                in_domain(&o.set, d)
            }
        })
        .collect()
}

impl Engine {
    /// The derived position: per domain, the last GTID of another server in the binlog.
    fn derived_slave_pos(&self) -> Vec<Gtid> {
        let Some(b) = &self.wal.binlog else {
            return Vec::new();
        };
        // The binlog's state moves when a group is written; what it shows must be applied
        // and visible too (a reader that sees the position then reads the rows).
        let _ = self.committer.barrier();
        let own = self.opts.server_id;
        let mut last: Vec<Gtid> = Vec::new();
        for g in b.state().binlog_state() {
            if g.server == own {
                continue;
            }
            match last.iter_mut().find(|l| l.domain == g.domain) {
                Some(l) if l.seq < g.seq => *l = g,
                Some(_) => {}
                None => last.push(g),
            }
        }
        last.sort_by_key(|g| g.domain);
        last
    }

    /// `@@gtid_slave_pos` (see the module docs).
    pub fn gtid_slave_pos(&self) -> String {
        let derived = self.derived_slave_pos();
        let list = match &*self.slave_pos.lock() {
            Some(o) => combine(&derived, o),
            None => derived,
        };
        format_gtid_list(&list)
    }

    /// Whether `@@gtid_slave_pos` has reached every GTID of `list` in its domain (what
    /// `MASTER_GTID_WAIT` waits for); a malformed list is MariaDB's 1941.
    pub fn slave_pos_reached(&self, list: &str) -> Result<bool> {
        let want = parse_gtid_list(list).map_err(|_| parse_error())?;
        let have = parse_gtid_list(&self.gtid_slave_pos()).map_err(|_| parse_error())?;
        Ok(want
            .iter()
            .all(|w| have.iter().any(|h| h.domain == w.domain && h.seq >= w.seq)))
    }

    /// `SET GLOBAL gtid_slave_pos = list` (the caller checks that the replica is
    /// stopped). Durable when it returns. A malformed list, or one naming a domain twice,
    /// is MariaDB's 1941.
    pub fn set_gtid_slave_pos(&self, list: &str) -> Result<()> {
        let set = parse_gtid_list(list).map_err(|_| parse_error())?;
        let mut domains: Vec<u32> = set.iter().map(|g| g.domain).collect();
        domains.sort_unstable();
        if domains.windows(2).any(|w| w[0] == w[1]) {
            return Err(parse_error());
        }
        let o = SlavePosOverride {
            set,
            base: self.derived_slave_pos(),
        };
        let mut cur = self.slave_pos.lock();
        save(&self.opts.datadir, &o)?;
        *cur = Some(o);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_set_stands_until_its_domain_moves() {
        let g = |d, s, n| Gtid::new(d, s, n);
        let o = SlavePosOverride {
            set: vec![g(0, 1, 100), g(2, 1, 5)],
            base: vec![g(0, 1, 7), g(1, 1, 3)],
        };
        // Nothing applied since: the value set (domain 1 dropped, domain 2 added).
        assert_eq!(
            combine(&[g(0, 1, 7), g(1, 1, 3)], &o),
            vec![g(0, 1, 100), g(2, 1, 5)]
        );
        // Domain 0 applied a transaction after the value: the binlog's position again.
        assert_eq!(
            combine(&[g(0, 1, 101), g(1, 1, 3)], &o),
            vec![g(0, 1, 101), g(2, 1, 5)]
        );
    }
}
