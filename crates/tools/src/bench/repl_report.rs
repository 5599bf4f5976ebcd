//! The replication section of the Markdown report and its rows in the goals table.

use std::fmt::Write as _;

use super::replication::{LagStats, ReplPoint, Setup, PROBE_EVERY};
use super::report::{fmt_num, table};
use super::systems::SystemKind;
use super::Results;

fn ms(us: Option<i64>) -> String {
    us.map_or("-".into(), |u| format!("{:.2}", u as f64 / 1000.0))
}

fn lag_cell(l: Option<&LagStats>) -> String {
    match l {
        None => "-".into(),
        Some(l) if l.samples.is_empty() => format!("none of {} arrived", l.missing),
        Some(l) => {
            let mut s = format!("{} / {}", ms(l.p(50.0)), ms(l.p(99.0)));
            if l.missing > 0 {
                let _ = write!(s, " ({} missing)", l.missing);
            }
            s
        }
    }
}

/// The point with no replicas for the same primary, delay and clients.
fn baseline<'a>(res: &'a Results, p: &ReplPoint) -> Option<&'a ReplPoint> {
    res.repl.iter().find(|b| {
        b.primary == p.primary
            && b.delay_us == p.delay_us
            && b.clients == p.clients
            && b.setup.replicas == 0
    })
}

fn delays(res: &Results) -> Vec<u64> {
    let mut d: Vec<u64> = res.repl.iter().map(|p| p.delay_us).collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// The `## Replication` section.
pub fn render(s: &mut String, res: &Results) {
    if res.repl.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Replication\n");
    let _ = writeln!(
        s,
        "`onelog bench replication`: clients doing single-row autocommit inserts on the primary \
         (as in group-commit) with 0, 1 or 4 real MariaDB 10.11 replicas attached \
         (`mariadbd --server-id=2..`, `CHANGE MASTER TO ... master_use_gtid=slave_pos`, started \
         by the harness for each configuration), and with 4 replicas whose SQL threads are not \
         started (*receiving only*: the dump threads' cost without four appliers). Replicas run \
         under the same shim with `--skip-log-bin --innodb-flush-log-at-trx-commit=2` and ignore \
         the `mysql` schema.\n\n\
         **Lag.** A probe thread beside the clients commits one row every {} ms on the primary \
         and takes its acknowledgement time and `@@last_gtid`. Per replica, one thread reads \
         the replica's relay log file every 50 µs from the moment the probe sends its commit \
         (the IO thread writes each event through to the file as it arrives; reading the file \
         puts no load on the replica) and notes when each group's XID event was first there: \
         *receipt* lag is when the probe's group arrived minus the acknowledgement, negative \
         when the replica had the group before the client had its answer; another thread \
         waits in `MASTER_GTID_WAIT` on the replica: *apply* lag is when its SQL thread had \
         committed the group minus the acknowledgement. In milliseconds, p50 / p99 over every \
         probe of every replica. The acknowledgement comes after the primary's sync, so the \
         lag from the sync is the figure plus the time from the sync to the acknowledgement \
         (onelog: apply and answer; MariaDB: the InnoDB commit).\n\n\
         **Physical bounds.** At +1 ms per sync a durable group costs one sync round (L in the \
         table above: rounds/s of one thread), so throughput comes from commits per group. \
         The machine has 2 cores shared by the primary, the replicas, the clients and the probe: \
         each applying replica re-executes every row on the same cores (the *replicas CPU* \
         column, in cores), so with 4 appliers the primary loses CPU to them, not to its dump \
         threads. `catch-up` is how long the replicas needed after the load stopped to apply \
         everything (a replica that keeps up needs ~0).\n",
        PROBE_EVERY.as_millis()
    );
    for d in delays(res) {
        let l = res.limit(d);
        if l.is_finite() {
            let _ = writeln!(
                s,
                "### +{} ms per sync (L = {} rounds/s)\n",
                d as f64 / 1000.0,
                fmt_num(l)
            );
        } else {
            let _ = writeln!(s, "### +{} ms per sync\n", d as f64 / 1000.0);
        }
        let mut rows = Vec::new();
        for p in res.repl.iter().filter(|p| p.delay_us == d) {
            let base = baseline(res, p).map(|b| b.tps).unwrap_or(f64::NAN);
            let rc = p.receipt();
            let first = rc
                .before_ack()
                .map_or("-".into(), |f| format!("{:.0}%", 100.0 * f));
            rows.push(vec![
                format!("`{}`", p.primary.name()),
                p.setup.label(),
                p.clients.to_string(),
                fmt_num(p.tps),
                if p.setup.replicas == 0 {
                    "-".into()
                } else {
                    format!("{:+.1}%", 100.0 * (p.tps / base - 1.0))
                },
                ms(Some(p.p50_us as i64)),
                ms(Some(p.p99_us as i64)),
                fmt_num(p.commits_per_group),
                format!("{:.2}", p.primary_cpu),
                if p.setup.replicas == 0 {
                    "-".into()
                } else {
                    format!("{:.2}", p.replicas_cpu)
                },
                if p.setup.replicas == 0 {
                    "-".into()
                } else {
                    lag_cell(Some(&rc))
                },
                if p.setup.replicas == 0 {
                    "-".into()
                } else {
                    first
                },
                lag_cell(p.apply().as_ref()),
                p.catch_up_secs.map_or("-".into(), |c| format!("{c:.1}")),
            ]);
        }
        s.push_str(&table(
            &[
                "primary",
                "replicas",
                "clients",
                "commits/s",
                "vs none",
                "p50 ms",
                "p99 ms",
                "commits per group",
                "primary CPU",
                "replicas CPU",
                "receipt lag p50 / p99 ms",
                "received before the ack",
                "apply lag p50 / p99 ms",
                "catch-up s",
            ],
            &rows,
        ));
        let _ = writeln!(s);
    }
}

fn point(res: &Results, k: SystemKind, d: u64, setup: Setup, c: usize) -> Option<&ReplPoint> {
    res.repl
        .iter()
        .find(|p| p.primary == k && p.delay_us == d && p.setup == setup && p.clients == c)
}

/// Rows of the goals table: the dump threads' cost and the receipt lag, for onelog.
pub fn goal_rows(res: &Results, d: u64, dl: &str) -> Vec<Vec<String>> {
    let verdict = |ok: bool| if ok { "met" } else { "**not met**" }.to_string();
    let k = SystemKind::OnelogEngine;
    let mut rows = Vec::new();
    let none = Setup {
        replicas: 0,
        applying: true,
    };
    for (setup, what) in [
        (
            Setup {
                replicas: 4,
                applying: false,
            },
            "receiving only",
        ),
        (
            Setup {
                replicas: 4,
                applying: true,
            },
            "applying on the same 2 cores",
        ),
    ] {
        if let (Some(b), Some(p)) = (point(res, k, d, none, 16), point(res, k, d, setup, 16)) {
            let cost = 1.0 - p.tps / b.tps;
            rows.push(vec![
                dl.to_string(),
                format!(
                    "4 replicas ({what}) cost the primary < 5% of its 16-client commit throughput"
                ),
                format!(
                    "{} vs {} commits/s: {:.1}%",
                    fmt_num(p.tps),
                    fmt_num(b.tps),
                    100.0 * cost
                ),
                verdict(cost < 0.05),
            ]);
        }
    }
    for setup in [
        Setup {
            replicas: 1,
            applying: true,
        },
        Setup {
            replicas: 4,
            applying: false,
        },
        Setup {
            replicas: 4,
            applying: true,
        },
    ] {
        for c in [1, 16] {
            let Some(p) = point(res, k, d, setup, c) else {
                continue;
            };
            let rc = p.receipt();
            let Some(p99) = rc.p(99.0) else {
                continue;
            };
            rows.push(vec![
                dl.to_string(),
                format!(
                    "a replica receives each group within 1 ms (p99 from the ack; {}, {c} \
                     client{})",
                    match (setup.replicas, setup.applying) {
                        (1, _) => "1 replica".to_string(),
                        (n, true) => format!("{n} replicas"),
                        (n, false) => format!("{n} receiving-only replicas"),
                    },
                    if c == 1 { "" } else { "s" }
                ),
                format!(
                    "receipt p50 {} ms, p99 {} ms{}",
                    ms(rc.p(50.0)),
                    ms(Some(p99)),
                    if rc.missing > 0 {
                        format!(", {} missing", rc.missing)
                    } else {
                        String::new()
                    }
                ),
                verdict(p99 <= 1000 && rc.missing == 0),
            ]);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::super::replication::ReplicaLag;
    use super::*;

    fn point(setup: Setup, clients: usize, tps: f64, receipt: Vec<i64>) -> ReplPoint {
        ReplPoint {
            primary: SystemKind::OnelogEngine,
            delay_us: 1000,
            setup,
            clients,
            commits: 1000,
            tps,
            p50_us: 1500,
            p99_us: 2500,
            commits_per_group: 15.9,
            primary_cpu: 0.5,
            replicas_cpu: 0.3,
            catch_up_secs: setup.applying.then_some(0.2),
            lags: (0..setup.replicas)
                .map(|i| ReplicaLag {
                    server_id: 2 + i as u32,
                    receipt: LagStats {
                        samples: receipt.clone(),
                        missing: 0,
                    },
                    apply: setup.applying.then(|| LagStats {
                        samples: vec![900, 1100],
                        missing: 1,
                    }),
                })
                .collect(),
        }
    }

    #[test]
    fn renders_replication_and_goals() {
        let none = Setup {
            replicas: 0,
            applying: true,
        };
        let four = Setup {
            replicas: 4,
            applying: true,
        };
        let receiving = Setup {
            replicas: 4,
            applying: false,
        };
        let res = Results {
            limits: vec![(1000, 817.0)],
            repl: vec![
                point(none, 16, 10000.0, vec![]),
                point(four, 16, 8000.0, vec![-100, 300, 2000]),
                point(receiving, 16, 9700.0, vec![-50, 200, 400]),
            ],
            ..Default::default()
        };
        let mut s = String::new();
        render(&mut s, &res);
        assert!(s.contains("## Replication"), "{s}");
        assert!(s.contains("### +1 ms per sync (L = 817 rounds/s)"), "{s}");
        // 4 applying: -20% against none; 4 receiving only: -3%.
        assert!(s.contains("| -20.0% |"), "{s}");
        assert!(s.contains("| -3.0% |"), "{s}");
        // Receipt p50 / p99 of the receiving-only point, and a third before the ack.
        assert!(s.contains("| 0.20 / 0.40 | 33% |"), "{s}");
        assert!(s.contains("0.90 / 1.10 (4 missing)"), "{s}");
        let goals = goal_rows(&res, 1000, "+1 ms per sync");
        let verdicts: Vec<(&str, &str)> = goals
            .iter()
            .map(|r| (r[2].as_str(), r[3].as_str()))
            .collect();
        assert_eq!(
            verdicts,
            vec![
                ("9700 vs 10000 commits/s: 3.0%", "met"),
                ("8000 vs 10000 commits/s: 20.0%", "**not met**"),
                ("receipt p50 0.20 ms, p99 0.40 ms", "met"),
                ("receipt p50 0.30 ms, p99 2.00 ms", "**not met**"),
            ]
        );
    }
}
