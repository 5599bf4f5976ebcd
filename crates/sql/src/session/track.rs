//! Session state tracking, as MariaDB's session trackers report it to a client that set
//! CLIENT_SESSION_TRACK: the OK packet ending a statement lists what the statement changed.
//! - system variables named in `session_track_system_variables` (`*`: all) that a SET
//!   assigned, even to the value they had (entry type 0: name and value as SHOW VARIABLES
//!   shows it, NULL as an empty string);
//! - the current database, when `session_track_schema` is on (type 1), also in the OK that
//!   ends the handshake when the client named a database;
//! - when `session_track_state_change` is on, `1` (type 2) after any of those and after a
//!   user variable was set.
//!
//! Entries are `type u8 | data lenenc string`; a variable's data is `name lenenc | value
//! lenenc`, the database's `name lenenc`. Entries come by type, variables in the order
//! they were set.

use onelog_protocol::put_lenenc_bytes;
use onelog_types::Value;
use parking_lot::Mutex;

use super::Session;
use crate::parser::Scope as VarScope;
use crate::vars;

/// What the statement being run changed (reported once, by [`Session::take_session_state`]).
#[derive(Default)]
pub(crate) struct Tracker {
    /// The client set CLIENT_SESSION_TRACK.
    on: bool,
    changed: Mutex<Changed>,
}

#[derive(Default)]
struct Changed {
    vars: Vec<&'static str>,
    schema: bool,
    state: bool,
}

impl Session {
    /// Whether the client set CLIENT_SESSION_TRACK.
    pub fn set_session_track(&mut self, on: bool) {
        self.track.on = on;
    }

    fn var_on(&self, name: &str) -> bool {
        self.get_var(Some(VarScope::Session), name)
            .map(|v| super::expr_truth(&v))
            .unwrap_or(false)
    }

    /// A session system variable was assigned.
    pub(super) fn track_var(&self, name: &'static str) {
        if !self.track.on {
            return;
        }
        let list = self
            .get_var(Some(VarScope::Session), "session_track_system_variables")
            .map(|v| text(&v))
            .unwrap_or_default();
        let tracked = list
            .split(',')
            .map(str::trim)
            .any(|n| n == "*" || n.eq_ignore_ascii_case(name));
        let state = self.var_on("session_track_state_change");
        let mut c = self.track.changed.lock();
        if tracked && !c.vars.contains(&name) {
            c.vars.push(name);
        }
        c.state |= state;
    }

    /// The current database changed.
    pub(super) fn track_schema(&self) {
        if !self.track.on {
            return;
        }
        let schema = self.var_on("session_track_schema");
        let state = self.var_on("session_track_state_change");
        let mut c = self.track.changed.lock();
        c.schema |= schema;
        c.state |= state;
    }

    /// A user variable was set.
    pub(super) fn track_user_var(&self) {
        if self.track.on && self.var_on("session_track_state_change") {
            self.track.changed.lock().state = true;
        }
    }

    /// The session state changes of the statement that ended, encoded for its OK packet
    /// (empty: nothing to report), and forgets them.
    pub fn take_session_state(&self) -> Vec<u8> {
        let c = std::mem::take(&mut *self.track.changed.lock());
        let mut out = Vec::new();
        if !self.track.on {
            return out;
        }
        for name in c.vars {
            let Some(d) = vars::find(name) else { continue };
            let value = self
                .get_var(Some(VarScope::Session), name)
                .map(|v| text(&vars::show_value(d, &v)))
                .unwrap_or_default();
            let mut data = Vec::new();
            put_lenenc_bytes(&mut data, name.as_bytes());
            put_lenenc_bytes(&mut data, value.as_bytes());
            entry(&mut out, 0, &data);
        }
        if c.schema {
            let mut data = Vec::new();
            put_lenenc_bytes(&mut data, self.current_db().unwrap_or("").as_bytes());
            entry(&mut out, 1, &data);
        }
        if c.state {
            entry(&mut out, 2, b"1");
        }
        out
    }
}

/// A value's text (NULL: empty).
fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        v => v.to_string(),
    }
}

fn entry(out: &mut Vec<u8>, ty: u8, data: &[u8]) {
    out.push(ty);
    put_lenenc_bytes(out, data);
}
