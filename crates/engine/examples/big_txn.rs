//! Measures how long a large transaction's commit delays small commits running beside it.
//!
//! One thread commits single-row transactions in a loop and records each commit's latency;
//! meanwhile another commits one transaction of `ROWS` rows of `ROW_BYTES` bytes. Prints
//! the big commit's duration and the small commits' latency percentiles before, during and
//! after it.
//!
//! Run: `cargo run --release -p onelog-engine --example big_txn [rows] [row_bytes]`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use onelog_engine::*;
use onelog_types::{ColumnType, Value};

struct NoDdl;
impl DdlReplayer for NoDdl {
    fn replay(&self, _: &Engine, _: &str, sql: &str) -> Result<()> {
        Err(EngineError::Other(format!("unexpected DDL {sql}")))
    }
}

fn table(name: &str) -> TableDef {
    let col = |n: &str, ty| ColumnDef {
        name: n.into(),
        ty,
        nullable: false,
        default: None,
        auto_increment: false,
        default_now: false,
        on_update_now: false,
        default_expr: None,
        comment: String::new(),
        display_width: None,
        num: Default::default(),
    };
    TableDef {
        id: 0,
        db: "b".into(),
        name: name.into(),
        columns: vec![
            col(
                "id",
                ColumnType::Int {
                    bytes: 8,
                    unsigned: false,
                },
            ),
            col(
                "v",
                ColumnType::Blob {
                    len_bytes: 4,
                    binary: true,
                    collation: onelog_types::Collation::Binary,
                },
            ),
        ],
        indexes: vec![IndexDef {
            id: 0,
            name: "PRIMARY".into(),
            columns: vec![0],
            prefix_lens: vec![],
            unique: true,
            primary: true,
        }],
        hidden_pk: false,
        comment: String::new(),
        engine_name: String::new(),
        auto_increment_start: None,
        collation: onelog_types::Collation::Utf8mb4GeneralCi,
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        sequence: false,
        create_options: Vec::new(),
        create_time: None,
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let rows = args.first().copied().unwrap_or(200_000);
    let row_bytes = args.get(1).copied().unwrap_or(500) as usize;
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(
        EngineOptions {
            datadir: dir.path().into(),
            ..Default::default()
        },
        &NoDdl,
    )
    .unwrap();
    e.ddl(
        "",
        "CREATE DATABASE b",
        Ddl::CreateDatabase {
            name: "b".into(),
            if_not_exists: false,
        },
    )
    .unwrap();
    for t in ["small", "big"] {
        e.ddl(
            "b",
            "CREATE TABLE",
            Ddl::CreateTable {
                def: table(t),
                if_not_exists: false,
                or_replace: false,
            },
        )
        .unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let big_window = Arc::new(parking_lot::Mutex::new(None::<(Instant, Instant)>));
    let small = {
        let (e, stop) = (e.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut lat = Vec::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let t0 = Instant::now();
                let mut t = e.begin(Isolation::RepeatableRead);
                let d = t.open_table("b", "small").unwrap();
                t.insert(&d, vec![Value::Int(i), Value::Bytes(vec![1; 16])])
                    .unwrap();
                t.commit().unwrap();
                lat.push((t0, t0.elapsed()));
            }
            lat
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let mut t = e.begin(Isolation::RepeatableRead);
    let d = t.open_table("b", "big").unwrap();
    for i in 0..rows as i64 {
        t.insert(&d, vec![Value::Int(i), Value::Bytes(vec![7; row_bytes])])
            .unwrap();
    }
    t.statement_end(Some("INSERT INTO big ..."));
    let c0 = Instant::now();
    t.commit().unwrap();
    let c1 = Instant::now();
    *big_window.lock() = Some((c0, c1));
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let lat = small.join().unwrap();
    let (c0, c1) = big_window.lock().unwrap();
    let (mut before, mut during, mut after) = (Vec::new(), Vec::new(), Vec::new());
    for (start, l) in lat {
        let end = start + l;
        if end < c0 {
            before.push(l)
        } else if start > c1 {
            after.push(l)
        } else {
            during.push(l)
        }
    }
    println!(
        "big transaction: {rows} rows x {row_bytes} B = {:.0} MiB, commit took {:?}",
        (rows as usize * row_bytes) as f64 / (1 << 20) as f64,
        c1 - c0
    );
    for (name, v) in [
        ("before", &mut before),
        ("during", &mut during),
        ("after", &mut after),
    ] {
        let n = v.len();
        println!(
            "small commits {name:>6}: n={n:<6} p50={:?} p99={:?} max={:?}",
            pct(v, 0.5),
            pct(v, 0.99),
            pct(v, 1.0)
        );
    }
}
