//! Feeds arbitrary bytes as SQL through parse, bind, plan and execute on one embedded
//! database (errors are expected; panics are bugs).
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use onelog_sql::{Database, Session};

struct State {
    _dir: tempfile::TempDir,
    session: Session,
}

fn state() -> &'static Mutex<State> {
    static S: OnceLock<Mutex<State>> = OnceLock::new();
    S.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(onelog_engine::EngineOptions {
            datadir: dir.path().to_path_buf(),
            sync_binlog: 0,
            ..Default::default()
        })
        .unwrap();
        let mut session = Session::new(db, "root".into(), "localhost".into(), 1);
        for s in [
            "CREATE DATABASE fz",
            "USE fz",
            "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(20), y DECIMAL(6,2), KEY kx (x))",
            "INSERT INTO t VALUES (1, 'a', 1.5), (2, 'b', NULL)",
        ] {
            session.query(s).unwrap();
        }
        Mutex::new(State { _dir: dir, session })
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(sql) = std::str::from_utf8(data) {
        let mut st = state().lock().unwrap();
        let _ = st.session.execute(sql);
        let _ = st.session.prepare(sql);
        let _ = st.session.query("ROLLBACK");
    }
});
