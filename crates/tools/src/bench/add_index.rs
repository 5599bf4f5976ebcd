//! `add-index`: how index builds disturb small commits beside them.
//!
//! Two tables (`ai_t1`, `ai_t2`) of `rows` rows each are loaded first. One connection then
//! commits single-row autocommit inserts into `ai_small` in a loop. After about a second,
//! two more connections each run `ALTER TABLE ... ADD INDEX ia (a), ADD INDEX isa (s, a)`
//! on one of the tables at the same time (InnoDB builds them online, onelog beside group
//! commit); small commits go on for about a second after both finish. Small commits whose
//! interval overlaps the span from the first ALTER's start to the last one's end are
//! "during", the rest "outside".

use std::time::Instant;

use mysql::prelude::Queryable;

use super::big_txn::{beside_small_commits, small_summary, LatStats};
use super::systems::{Server, SystemKind};

/// Rows per INSERT while loading the tables.
const LOAD_ROWS_PER_STATEMENT: u64 = 5000;
/// The tables whose indexes are built side by side.
const TABLES: [&str; 2] = ["ai_t1", "ai_t2"];
pub const ALTER: &str = "ADD INDEX ia (a), ADD INDEX isa (s, a)";

#[derive(Clone, Debug)]
pub struct AiPoint {
    pub system: SystemKind,
    pub delay_us: u64,
    /// Rows per table.
    pub rows: u64,
    /// The longer of the two ALTER TABLE statements, seconds.
    pub alter_secs: f64,
    /// Small commits overlapping the builds.
    pub during: LatStats,
    /// All other small commits.
    pub outside: LatStats,
}

/// One multi-row INSERT of rows `first..first + n` of a build table: `a` in random-looking
/// order, `s` a string that sorts unlike the primary key.
fn load_insert(table: &str, first: u64, n: u64) -> String {
    let mut sql = format!("INSERT INTO {table} (id, a, s) VALUES ");
    for i in first..first + n {
        if i > first {
            sql.push(',');
        }
        sql.push_str(&format!(
            "({i},{},'row-{:07}')",
            (i * 7919) % 100_003,
            (i * 104_729) % 9_999_991
        ));
    }
    sql
}

pub fn run(server: &mut Server, rows: u64) -> Result<AiPoint, String> {
    for t in TABLES {
        server.exec(&format!(
            "CREATE TABLE bench.{t} (id BIGINT NOT NULL PRIMARY KEY, a INT NOT NULL, \
             s VARCHAR(40) NOT NULL)"
        ))?;
        let mut c = server.conn()?;
        let mut first = 0;
        while first < rows {
            let n = LOAD_ROWS_PER_STATEMENT.min(rows - first);
            c.query_drop(load_insert(t, first, n))
                .map_err(|e| format!("load {t}: {e}"))?;
            first += n;
        }
    }
    let small_conn = server.conn()?;
    let mut builders = Vec::new();
    for _ in TABLES {
        builders.push(server.conn()?);
    }

    let (alter_secs, during, outside) = beside_small_commits(small_conn, "ai_small", || {
        let handles: Vec<_> = builders
            .into_iter()
            .zip(TABLES)
            .map(|(mut c, t)| {
                std::thread::spawn(move || -> Result<(Instant, Instant), String> {
                    let t0 = Instant::now();
                    c.query_drop(format!("ALTER TABLE {t} {ALTER}"))
                        .map_err(|e| format!("ALTER TABLE {t}: {e}"))?;
                    Ok((t0, Instant::now()))
                })
            })
            .collect();
        let mut spans = Vec::new();
        for h in handles {
            spans.push(h.join().map_err(|_| "ALTER thread panicked")??);
        }
        let start = spans.iter().map(|s| s.0).min().unwrap();
        let end = spans.iter().map(|s| s.1).max().unwrap();
        let longest = spans
            .iter()
            .map(|s| s.1.duration_since(s.0).as_secs_f64())
            .fold(0.0, f64::max);
        Ok((longest, start, end))
    })?;
    let p = AiPoint {
        system: server.kind,
        delay_us: server.delay_us,
        rows,
        alter_secs,
        during,
        outside,
    };
    eprintln!(
        "  add-index    {:<16} delay={}us {} rows x2 ALTER={:.2}s; {}",
        p.system.name(),
        p.delay_us,
        p.rows,
        p.alter_secs,
        small_summary(&p.during, &p.outside),
    );
    for t in TABLES {
        server.exec(&format!("DROP TABLE IF EXISTS bench.{t}"))?;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_statement() {
        let sql = load_insert("ai_t1", 10, 3);
        assert_eq!(
            sql,
            "INSERT INTO ai_t1 (id, a, s) VALUES (10,79190,'row-1047290'),\
             (11,87109,'row-1152019'),(12,95028,'row-1256748')"
        );
    }
}
