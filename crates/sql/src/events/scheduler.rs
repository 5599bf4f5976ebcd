//! `@@event_scheduler` and the scheduler thread.
//!
//! While the scheduler is ON, one thread (SHOW PROCESSLIST: user `event_scheduler`,
//! command `Daemon`) follows the catalog's ENABLED events, works out when each is next due
//! (AT; or the first STARTS + k × interval not before now and after its last execution,
//! none past ENDS) and sleeps until the earliest, or until an event statement wakes it.
//! A due event runs in a thread of its own, in a session of its definer (connected from
//! localhost) whose current database is the event's and whose sql_mode is the event's, as
//! a procedure body runs: each statement commits on its own (autocommit), and its rows are
//! logged as the row events of those transactions. An error ends that execution only; it
//! goes to the error log (`Event Scheduler: [definer][db.name] message`). Then the event's
//! LAST_EXECUTED is recorded (unlogged, see the module above; it persists with the next
//! memtable flush or a clean shutdown). An event with no next time (a one-time event that
//! ran, a recurring one past ENDS) is dropped, as a logged `DROP EVENT IF EXISTS`, or with
//! ON COMPLETION PRESERVE becomes DISABLED, made durable at once (`Engine::checkpoint`).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_engine::{Ddl, ObjectKind, StoredObject};
use onelog_types::{code, DateTime, SqlError, Value};
use parking_lot::{Condvar, Mutex};

use super::timing::{next_second, whole_seconds};
use super::{decode, encode, EventDef, Status};
use crate::database::{ProcEntry, ProcState};
use crate::routines::quote;
use crate::{sql_err, Database, Session};

/// The scheduler's switch and thread (one per server).
#[derive(Default)]
pub struct Scheduler {
    inner: Mutex<Inner>,
    cv: Condvar,
}

#[derive(Default)]
struct Inner {
    /// `--event-scheduler=DISABLED`: never on, and SET GLOBAL cannot change that.
    disabled: bool,
    thread: Option<JoinHandle<()>>,
    stop: bool,
    /// An event statement ran since the thread last looked.
    woken: bool,
}

impl Scheduler {
    pub fn is_on(&self) -> bool {
        self.inner.lock().thread.is_some()
    }

    /// Tells the thread that events changed.
    pub(crate) fn wake(&self) {
        let mut g = self.inner.lock();
        g.woken = true;
        self.cv.notify_all();
    }

    /// Stops the thread, waiting for the executions it started.
    pub(crate) fn stop(&self) {
        let t = {
            let mut g = self.inner.lock();
            g.stop = true;
            self.cv.notify_all();
            g.thread.take()
        };
        if let Some(t) = t {
            let _ = t.join();
        }
    }

    fn start(&self, db: &Arc<Database>) {
        let mut g = self.inner.lock();
        if g.thread.is_some() || g.disabled {
            return;
        }
        g.stop = false;
        g.woken = false;
        let db = db.clone();
        g.thread = Some(
            std::thread::Builder::new()
                .name("event_scheduler".into())
                .spawn(move || run(db))
                .expect("spawn the event scheduler"),
        );
    }

    /// Sleeps until `deadline` or a wake-up; false when the thread must stop.
    fn sleep(&self, deadline: Instant) -> bool {
        let mut g = self.inner.lock();
        while !g.stop && !g.woken {
            if self.cv.wait_until(&mut g, deadline).timed_out() {
                break;
            }
        }
        g.woken = false;
        !g.stop
    }

    fn stopping(&self) -> bool {
        self.inner.lock().stop
    }
}

fn show(on: bool) -> Value {
    Value::str(if on { "ON" } else { "OFF" })
}

/// `SET GLOBAL event_scheduler = value` (`None`: DEFAULT, which is OFF).
pub(crate) fn set_global(s: &mut Session, value: Option<&Value>) -> Result<(), SqlError> {
    let on = match value {
        None => false,
        Some(v) => {
            let text = crate::expr::to_string(v);
            match (v, text.to_ascii_uppercase().as_str()) {
                (Value::Int(1) | Value::UInt(1), _) => true,
                (Value::Int(0) | Value::UInt(0), _) => false,
                (Value::Bytes(_), "ON" | "1" | "TRUE") => true,
                (Value::Bytes(_), "OFF" | "0" | "FALSE") => false,
                _ => {
                    return Err(sql_err(
                        code::ER_WRONG_VALUE_FOR_VAR,
                        format!("Variable 'event_scheduler' can't be set to the value of '{text}'"),
                    ))
                }
            }
        }
    };
    if s.db.events.inner.lock().disabled {
        return Err(sql_err(
            1290,
            "The MariaDB server is running with the --event-scheduler=DISABLED or --skip-grant-tables option so it cannot execute this statement",
        ));
    }
    if on {
        s.db.events.start(&s.db);
    } else {
        s.db.events.stop();
    }
    s.db.globals
        .write()
        .insert("event_scheduler".into(), show(on));
    Ok(())
}

impl Database {
    /// `--event-scheduler=ON|OFF|DISABLED` (also 1, 0, TRUE, FALSE).
    pub fn set_event_scheduler(self: &Arc<Self>, mode: &str) -> Result<(), String> {
        match mode.to_ascii_uppercase().as_str() {
            "ON" | "1" | "TRUE" => {
                self.events.start(self);
                self.set_server_variable("event_scheduler", show(true));
            }
            "OFF" | "0" | "FALSE" => {
                self.events.stop();
                self.set_server_variable("event_scheduler", show(false));
            }
            "DISABLED" => {
                self.events.stop();
                self.events.inner.lock().disabled = true;
                self.set_server_variable("event_scheduler", Value::str("DISABLED"));
            }
            other => return Err(format!("invalid --event-scheduler value '{other}'")),
        }
        Ok(())
    }
}

/// When an event is next due, as the thread last worked it out.
struct Next {
    /// The definition it was worked out for (its last execution left out).
    key: String,
    at: Option<DateTime>,
}

/// The definition without its last execution (which the scheduler itself changes).
fn schedule_key(def: &EventDef) -> String {
    let mut d = def.clone();
    d.last_executed = None;
    encode(&d)
}

/// The first time `def` is due at or after `from`; None when it has no more.
fn due_from(def: &EventDef, from: DateTime) -> Option<DateTime> {
    if let Some(at) = def.execute_at {
        return def.last_executed.is_none().then_some(at);
    }
    let every = def.every.as_ref()?;
    let mut from = whole_seconds(from);
    if let Some(l) = def.last_executed {
        from = from.max(next_second(l));
    }
    let t = every.at_or_after(def.starts?, from)?;
    match def.ends {
        Some(e) if t > e => None,
        _ => Some(t),
    }
}

fn run(db: Arc<Database>) {
    let id = db.next_connection_id();
    let entry = Arc::new(ProcEntry {
        id,
        user: "event_scheduler".into(),
        host: "localhost".into(),
        state: Mutex::new(ProcState {
            db: None,
            command: "Daemon",
            info: None,
            since: Instant::now(),
        }),
        control: crate::watchdog::StmtControl::new(),
        killed: Arc::new(AtomicBool::new(false)),
    });
    db.procs.lock().insert(id, entry);
    let mut next: HashMap<(String, String), Next> = HashMap::new();
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    loop {
        workers.retain(|w| !w.is_finished());
        let now = crate::database::now();
        let cat = db.engine.catalog();
        let mut wait = Duration::from_secs(60);
        let mut seen = Vec::new();
        for obj in cat.objects_of(ObjectKind::Event) {
            let Ok(def) = decode(obj) else { continue };
            if def.status != Status::Enabled {
                continue;
            }
            let k = (obj.db.clone(), ObjectKind::Event.lookup_name(&obj.name));
            seen.push(k.clone());
            let key = schedule_key(&def);
            let n = next.entry(k).or_insert_with(|| Next {
                key: String::new(),
                at: None,
            });
            if n.key != key {
                n.key = key;
                n.at = due_from(&def, now);
                if n.at.is_none() {
                    // Ended before it was ever due here (ENDS passed while off).
                    finish(&db, obj, &def, None);
                    continue;
                }
            }
            match n.at {
                Some(t) if t <= now => {
                    // A one-time event runs once; a recurring one next on its grid.
                    n.at = match def.execute_at {
                        Some(_) => None,
                        None => due_from(&def, next_second(whole_seconds(now))),
                    };
                    let last = n.at.is_none();
                    let (db2, obj2, def2) = (db.clone(), (**obj).clone(), def.clone());
                    workers.push(std::thread::spawn(move || {
                        execute(&db2, &obj2, &def2);
                        finish(&db2, &obj2, &def2, Some((now, last)));
                    }));
                }
                Some(t) => {
                    let secs = (t.unix_seconds() - now.unix_seconds()).max(0) as u64;
                    let d = Duration::from_secs(secs)
                        .saturating_sub(Duration::from_micros(now.micro as u64));
                    wait = wait.min(d.max(Duration::from_millis(1)));
                }
                None => {}
            }
        }
        next.retain(|k, _| seen.contains(k));
        if workers.iter().any(|w| !w.is_finished()) {
            // Executions finishing change LAST_EXECUTED or drop events: look again soon.
            wait = wait.min(Duration::from_millis(200));
        }
        if !db.events.sleep(Instant::now() + wait) {
            break;
        }
    }
    for w in workers {
        let _ = w.join();
    }
    db.procs.lock().remove(&id);
}

/// Runs an event's body once (errors go to the error log).
fn execute(db: &Arc<Database>, obj: &StoredObject, def: &EventDef) {
    if db.events.stopping() {
        return;
    }
    let id = db.next_connection_id();
    let mut s = Session::new(db.clone(), def.definer.0.clone(), "localhost".into(), id);
    s.vars.insert("sql_mode".into(), Value::str(&def.sql_mode));
    let r = (|| -> Result<(), SqlError> {
        s.use_database(&obj.db)?;
        let prog = crate::routines::event_program(&def.body)?;
        s.set_proc("Query", Some(&def.body));
        crate::routines::run_event(&mut s, &prog)
    })();
    if let Err(e) = r {
        onelog_types::error!(
            "Event Scheduler: [{}@{}][{}.{}] {}",
            def.definer.0,
            def.definer.1,
            obj.db,
            obj.name,
            e.message
        );
    }
}

/// After an execution (`ran`: when, and whether it was the last) or when an event ended
/// unexecuted: records LAST_EXECUTED, and drops or disables an event that has no next
/// time.
fn finish(db: &Arc<Database>, obj: &StoredObject, def: &EventDef, ran: Option<(DateTime, bool)>) {
    let done = ran.is_none_or(|(_, last)| last);
    if done && !def.preserve {
        let text = format!(
            "DROP EVENT IF EXISTS {}.{}",
            quote(&obj.db),
            quote(&obj.name)
        );
        let ddl = Ddl::DropObjects {
            kind: ObjectKind::Event,
            names: vec![(obj.db.clone(), obj.name.clone())],
            if_exists: true,
        };
        let mut s = db.system_session();
        s.current_db = Some(obj.db.clone());
        if let Err(e) = s.run_ddl(&text, ddl, vec![]) {
            onelog_types::error!(
                "Event Scheduler: dropping {}.{}: {}",
                obj.db,
                obj.name,
                e.message
            );
        }
        return;
    }
    // The catalog's current record of the event, if its schedule is still the one run.
    let cat = db.engine.catalog();
    let Some(cur) = cat.object(ObjectKind::Event, &obj.db, &obj.name) else {
        return;
    };
    let Ok(mut new) = decode(cur) else { return };
    if schedule_key(&new) != schedule_key(def) {
        return;
    }
    if let Some((t, _)) = ran {
        new.last_executed = Some(whole_seconds(t));
    }
    if done {
        new.status = Status::Disabled;
    }
    let mut rec = (**cur).clone();
    rec.definition = encode(&new);
    let r = db.engine.update_object_unlogged(cur, rec);
    // The DISABLED status must outlive a crash (the event would run again): made durable
    // at once. A LAST_EXECUTED alone persists with the next memtable flush.
    let r = r.and_then(|_| if done { db.engine.checkpoint() } else { Ok(()) });
    if let Err(e) = r {
        onelog_types::error!("Event Scheduler: {}.{}: {e}", obj.db, obj.name);
    }
    db.events.wake();
}
