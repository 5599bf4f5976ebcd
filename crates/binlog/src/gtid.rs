//! MariaDB GTIDs (`domain-server-seq`) and the binlog's GTID state.
//!
//! `@@gtid_binlog_pos` is the last GTID logged in each domain; `@@gtid_binlog_state` is the
//! last GTID logged for each (domain, server) pair. Both print as comma-separated lists.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::BinlogError;

/// A MariaDB global transaction id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gtid {
    pub domain: u32,
    pub server: u32,
    pub seq: u64,
}

impl Gtid {
    pub fn new(domain: u32, server: u32, seq: u64) -> Gtid {
        Gtid {
            domain,
            server,
            seq,
        }
    }
}

impl fmt::Display for Gtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}", self.domain, self.server, self.seq)
    }
}

impl FromStr for Gtid {
    type Err = BinlogError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BinlogError::InvalidArgument(format!("malformed GTID '{s}'"));
        let mut parts = s.trim().splitn(3, '-');
        let mut next = || parts.next().ok_or_else(bad);
        let domain = next()?.parse().map_err(|_| bad())?;
        let server = next()?.parse().map_err(|_| bad())?;
        let seq = next()?.parse().map_err(|_| bad())?;
        Ok(Gtid::new(domain, server, seq))
    }
}

/// Parses `0-1-42,1-1-7` (empty string = empty list).
pub fn parse_gtid_list(s: &str) -> Result<Vec<Gtid>, BinlogError> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(Gtid::from_str)
        .collect()
}

/// Formats a list as MariaDB prints it: `0-1-42,1-1-7`.
pub fn format_gtid_list(list: &[Gtid]) -> String {
    list.iter()
        .map(Gtid::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The set of GTIDs a binlog has logged: last per (domain, server), last per domain.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidState {
    /// (domain, server) -> last seq logged by that server in that domain.
    by_server: BTreeMap<(u32, u32), u64>,
    /// domain -> last GTID logged in the domain (in log order).
    last_in_domain: BTreeMap<u32, Gtid>,
}

impl GtidState {
    pub fn new() -> GtidState {
        GtidState::default()
    }

    /// A state from a GTID_LIST (per (domain, server) entries, any order). The last GTID of
    /// a domain is taken to be its highest sequence number.
    pub fn from_list(list: &[Gtid]) -> GtidState {
        let mut st = GtidState::new();
        let mut sorted = list.to_vec();
        sorted.sort_by_key(|g| (g.domain, g.seq));
        for g in sorted {
            st.record(g);
        }
        st
    }

    /// Records a GTID as logged (in log order).
    pub fn record(&mut self, g: Gtid) {
        self.by_server.insert((g.domain, g.server), g.seq);
        self.last_in_domain.insert(g.domain, g);
    }

    /// The sequence number the next GTID logged in `domain` gets: one more than the highest
    /// logged in the domain by any server.
    pub fn next_seq(&self, domain: u32) -> u64 {
        self.by_server
            .range((domain, 0)..=(domain, u32::MAX))
            .map(|(_, &s)| s)
            .max()
            .unwrap_or(0)
            + 1
    }

    /// Last GTID per domain (`@@gtid_binlog_pos`), ordered by domain.
    pub fn binlog_pos(&self) -> Vec<Gtid> {
        self.last_in_domain.values().copied().collect()
    }

    /// Last GTID per (domain, server) (`@@gtid_binlog_state`), ordered by domain, server.
    pub fn binlog_state(&self) -> Vec<Gtid> {
        self.by_server
            .iter()
            .map(|(&(domain, server), &seq)| Gtid::new(domain, server, seq))
            .collect()
    }

    /// The last GTID logged in `domain`.
    pub fn last_in_domain(&self, domain: u32) -> Option<Gtid> {
        self.last_in_domain.get(&domain).copied()
    }

    /// The last seq logged by `server` in `domain`.
    pub fn seq_of(&self, domain: u32, server: u32) -> Option<u64> {
        self.by_server.get(&(domain, server)).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.by_server.is_empty()
    }
}

impl fmt::Display for GtidState {
    /// Prints `@@gtid_binlog_pos`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_gtid_list(&self.binlog_pos()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let l = parse_gtid_list("0-1-42, 1-1-7").unwrap();
        assert_eq!(l, vec![Gtid::new(0, 1, 42), Gtid::new(1, 1, 7)]);
        assert_eq!(format_gtid_list(&l), "0-1-42,1-1-7");
        assert!(parse_gtid_list("").unwrap().is_empty());
        assert!(parse_gtid_list("0-1").is_err());
        assert!(parse_gtid_list("a-1-2").is_err());
        assert!(parse_gtid_list("0-1-2-3").is_err());
    }

    #[test]
    fn state_tracks_pos_and_state() {
        let mut st = GtidState::new();
        assert_eq!(st.next_seq(0), 1);
        st.record(Gtid::new(0, 1, 1));
        st.record(Gtid::new(0, 2, 2));
        st.record(Gtid::new(1, 1, 7));
        assert_eq!(st.next_seq(0), 3);
        assert_eq!(st.to_string(), "0-2-2,1-1-7");
        assert_eq!(format_gtid_list(&st.binlog_state()), "0-1-1,0-2-2,1-1-7");
        let back = GtidState::from_list(&st.binlog_state());
        assert_eq!(back, st);
    }
}
