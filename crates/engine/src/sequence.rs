//! Sequences (`CREATE SEQUENCE`, NEXTVAL, SETVAL), as MariaDB has them: a table of
//! MariaDB's eight sequence columns holding exactly one row (`TableDef::sequence`), and in
//! memory the values reserved from it.
//!
//! The row is stored under the hidden row id [`ROW_ID`]; every write of it replaces it,
//! and is logged as MariaDB logs it: a WRITE_ROWS event with the whole new row. Recovery
//! and replicas therefore redo a sequence write as an insert that replaces the row.
//!
//! NEXTVAL hands out values from a range reserved in memory (`cache` values of the
//! increment); when the range is used up it reserves the next one by writing the row with
//! `next_not_cached_value` past it, in a transaction of its own that is committed (durable)
//! before the value is returned, as MariaDB writes it outside the caller's transaction. A
//! value is therefore never handed out twice, even after a crash; the values of the range
//! reserved when the server stops are skipped after the restart (MariaDB's behaviour).
//!
//! The arithmetic (overflow guards, cycles, `increment 0` following
//! `auto_increment_increment` and `auto_increment_offset`) is MariaDB's.

use std::collections::HashMap;
use std::sync::Arc;

use onelog_types::Value;
use parking_lot::Mutex;

use crate::catalog::TableDef;
use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::keys;
use crate::txn::{decode_stored_row, Isolation};

/// The hidden row id of a sequence's row.
pub const ROW_ID: u64 = 1;

/// Largest increment magnitude assumed for `increment 0` when checking the cache size
/// (MariaDB's MAX_AUTO_INCREMENT_VALUE).
const MAX_AUTO_INCREMENT_VALUE: i64 = 65535;

/// Which options a CREATE / ALTER SEQUENCE statement gave (the others take defaults, or
/// for ALTER the sequence's current values).
pub mod used {
    pub const MIN: u32 = 1;
    pub const MAX: u32 = 2;
    pub const START: u32 = 4;
    pub const INCREMENT: u32 = 8;
    pub const CACHE: u32 = 16;
    pub const CYCLE: u32 = 32;
    pub const RESTART: u32 = 64;
    pub const RESTART_VALUE: u32 = 128;
}

/// `auto_increment_increment` and `auto_increment_offset`, which an `increment 0`
/// sequence follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoInc {
    pub increment: i64,
    pub offset: i64,
}

impl Default for AutoInc {
    fn default() -> Self {
        AutoInc {
            increment: 1,
            offset: 1,
        }
    }
}

/// A sequence's stored row, in column order: `next_not_cached_value`, `minimum_value`,
/// `maximum_value`, `start_value`, `increment`, `cache_size`, `cycle_option`,
/// `cycle_count`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeqDef {
    /// `next_not_cached_value`: values below it (for a positive increment) may have been
    /// handed out.
    pub reserved_until: i64,
    pub min_value: i64,
    pub max_value: i64,
    pub start: i64,
    pub increment: i64,
    pub cache: i64,
    pub cycle: bool,
    pub round: i64,
}

impl Default for SeqDef {
    /// What CREATE SEQUENCE starts from before its options and [`SeqDef::check_and_adjust`].
    fn default() -> Self {
        SeqDef {
            reserved_until: 1,
            min_value: 1,
            max_value: i64::MAX - 1,
            start: 1,
            increment: 1,
            cache: 1000,
            cycle: false,
            round: 0,
        }
    }
}

fn int_at(row: &[Value], i: usize) -> Result<i64> {
    match row.get(i) {
        Some(Value::Int(n)) => Ok(*n),
        Some(Value::UInt(n)) => Ok(*n as i64),
        other => Err(EngineError::Corrupt(format!(
            "sequence row column {i} holds {other:?}"
        ))),
    }
}

impl SeqDef {
    /// The row as stored (signed BIGINTs, the unsigned `cache_size` and `cycle_option`).
    pub fn to_row(&self) -> Vec<Value> {
        vec![
            Value::Int(self.reserved_until),
            Value::Int(self.min_value),
            Value::Int(self.max_value),
            Value::Int(self.start),
            Value::Int(self.increment),
            Value::UInt(self.cache as u64),
            Value::UInt(self.cycle as u64),
            Value::Int(self.round),
        ]
    }

    pub fn from_row(row: &[Value]) -> Result<SeqDef> {
        Ok(SeqDef {
            reserved_until: int_at(row, 0)?,
            min_value: int_at(row, 1)?,
            max_value: int_at(row, 2)?,
            start: int_at(row, 3)?,
            increment: int_at(row, 4)?,
            cache: int_at(row, 5)?,
            cycle: int_at(row, 6)? != 0,
            round: int_at(row, 7)?,
        })
    }

    /// The step between values: the increment, or `auto_increment_increment` for 0.
    pub fn real_increment(&self, ai: AutoInc) -> i64 {
        if self.increment != 0 {
            self.increment
        } else {
            ai.increment.max(1)
        }
    }

    /// MariaDB's `check_and_adjust`: options not in `used` take their defaults from the
    /// increment's sign (minimum 1 or i64::MIN+1, maximum i64::MAX-1 or -1, start at the
    /// minimum or maximum); `set_reserved` starts the sequence at its start. False when
    /// the options contradict each other (error 4085).
    pub fn check_and_adjust(&mut self, used: u32, set_reserved: bool, ai: AutoInc) -> bool {
        let inc = self.real_increment(ai);
        if used & used::MIN == 0 {
            self.min_value = if inc < 0 { i64::MIN + 1 } else { 1 };
        }
        if used & used::MAX == 0 {
            self.max_value = if inc < 0 { -1 } else { i64::MAX - 1 };
        }
        if used & used::START == 0 {
            self.start = if inc < 0 {
                self.max_value
            } else {
                self.min_value
            };
        }
        if set_reserved {
            self.reserved_until = self.start;
        }
        let max_increment = if inc != 0 {
            inc.unsigned_abs().min(i64::MAX as u64) as i64
        } else {
            MAX_AUTO_INCREMENT_VALUE
        };
        self.max_value >= self.start
            && self.max_value > self.min_value
            && self.start >= self.min_value
            && self.max_value != i64::MAX
            && self.min_value != i64::MIN
            && self.cache >= 0
            && self.cache < (i64::MAX - max_increment) / max_increment
            && ((inc > 0 && self.reserved_until >= self.min_value)
                || (inc < 0 && self.reserved_until <= self.max_value))
    }
}

/// A sequence as NEXTVAL uses it: the stored row and the next value to hand out.
#[derive(Debug)]
struct Live {
    def: SeqDef,
    next_free: i64,
    real_increment: i64,
    /// NEXTVAL found no value left (4084 until the sequence is changed).
    all_used: bool,
}

impl Live {
    fn new(def: SeqDef, ai: AutoInc) -> Live {
        let mut l = Live {
            real_increment: def.real_increment(ai),
            next_free: def.reserved_until,
            def,
            all_used: false,
        };
        l.adjust(l.def.reserved_until, ai);
        l
    }

    /// MariaDB's `adjust_values`: the next free value is `next`, moved up to the
    /// `auto_increment_offset` series for an `increment 0` sequence.
    fn adjust(&mut self, next: i64, ai: AutoInc) {
        self.next_free = next;
        if self.def.increment != 0 {
            return;
        }
        self.real_increment = ai.increment.max(1);
        let inc = self.real_increment;
        let offset = if inc != 1 { ai.offset % inc } else { 0 };
        let off = self.next_free.rem_euclid(inc);
        let to_add = (inc + offset - off) % inc;
        match self.next_free.checked_add(to_add) {
            Some(n) if n <= self.def.max_value => self.next_free = n,
            _ => self.next_free = self.def.max_value.saturating_add(1),
        }
    }

    /// `value` plus the increment, or one past the end when that leaves the range.
    fn increment_value(&self, value: i64) -> i64 {
        let (inc, d) = (self.real_increment, &self.def);
        if inc > 0 {
            match value.checked_add(inc) {
                Some(n) if n <= d.max_value => n,
                _ => d.max_value.saturating_add(1),
            }
        } else {
            match value.checked_add(inc) {
                Some(n) if n >= d.min_value => n,
                _ => d.min_value.saturating_sub(1),
            }
        }
    }

    fn within_cache(&self, v: i64) -> bool {
        if self.real_increment > 0 {
            v < self.def.reserved_until
        } else {
            v > self.def.reserved_until
        }
    }
}

/// What NEXTVAL gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextValue {
    Value(i64),
    /// No value is left and the sequence does not cycle (4084).
    RunOut,
}

/// What SETVAL did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetValue {
    /// The sequence now continues after the value.
    Set,
    /// The value (and round) is below where the sequence is: nothing changed (NULL).
    Below,
    /// A later round of a sequence that does not cycle (4084).
    RunOut,
}

/// The live sequences of an engine, by table id.
#[derive(Default)]
pub(crate) struct Sequences {
    live: Mutex<HashMap<u32, Arc<Mutex<Option<Live>>>>>,
}

impl Sequences {
    fn slot(&self, id: u32) -> Arc<Mutex<Option<Live>>> {
        self.live.lock().entry(id).or_default().clone()
    }

    /// Forgets what is cached of table `id` (its row was written by other means: a
    /// replicated or user INSERT, ALTER SEQUENCE, DROP): the next use reads the row again.
    pub(crate) fn forget(&self, id: u32) {
        let slot = self.live.lock().remove(&id);
        if let Some(s) = slot {
            // Waits for a NEXTVAL in progress, which then finds itself forgotten.
            *s.lock() = None;
        }
    }
}

impl Engine {
    /// The stored row of sequence `t` (latest committed).
    pub fn sequence_row(&self, t: &TableDef) -> Result<SeqDef> {
        let pk = [Value::UInt(ROW_ID)];
        let key = keys::encode_tuple(t.primary().id, &keys::pk_types(t), &pk)?;
        match self.db.get(&key)? {
            Some(raw) => SeqDef::from_row(&decode_stored_row(t, &raw, &pk)?),
            None => Err(EngineError::Corrupt(format!(
                "sequence {}.{} has no row",
                t.db, t.name
            ))),
        }
    }

    /// Writes `def` as the row of sequence `t` in a transaction of its own (durable when
    /// this returns), logged as a WRITE_ROWS event.
    fn write_sequence_row(self: &Arc<Self>, t: &TableDef, def: &SeqDef) -> Result<()> {
        let mut txn = self.begin(Isolation::ReadCommitted);
        txn.insert(t, def.to_row())?;
        txn.keep_sequences_cached();
        txn.commit().map(|_| ())
    }

    fn live_sequence<'a>(
        self: &Arc<Self>,
        t: &TableDef,
        slot: &'a mut Option<Live>,
        ai: AutoInc,
    ) -> Result<&'a mut Live> {
        if slot.is_none() {
            *slot = Some(Live::new(self.sequence_row(t)?, ai));
        }
        Ok(slot.as_mut().expect("just set"))
    }

    /// NEXTVAL of sequence `t`: the next value, reserving (and durably writing) the next
    /// range of `cache` values when the current one is used up.
    pub fn sequence_next(self: &Arc<Self>, t: &TableDef, ai: AutoInc) -> Result<NextValue> {
        let slot = self.sequences.slot(t.id);
        let mut guard = slot.lock();
        let live = self.live_sequence(t, &mut guard, ai)?;
        let mut second_round = false;
        loop {
            let res = live.next_free;
            live.next_free = live.increment_value(res);
            if live.within_cache(res) {
                return Ok(NextValue::Value(res));
            }
            if live.all_used {
                return Ok(NextValue::RunOut);
            }
            let (org_reserved, org_round) = (live.def.reserved_until, live.def.round);
            let inc = live.real_increment;
            let add_to = if live.def.cache != 0 {
                inc.saturating_mul(live.def.cache)
            } else {
                inc
            };
            let d = &mut live.def;
            let out_of_values = if inc > 0 {
                match d.reserved_until.checked_add(add_to) {
                    Some(n) if n <= d.max_value => {
                        d.reserved_until = n;
                        false
                    }
                    _ => {
                        d.reserved_until = d.max_value.saturating_add(1);
                        res >= d.reserved_until
                    }
                }
            } else {
                match d.reserved_until.checked_add(add_to) {
                    Some(n) if n >= d.min_value => {
                        d.reserved_until = n;
                        false
                    }
                    _ => {
                        d.reserved_until = d.min_value.saturating_sub(1);
                        res <= d.reserved_until
                    }
                }
            };
            if out_of_values {
                if !live.def.cycle || second_round {
                    live.all_used = true;
                    return Ok(NextValue::RunOut);
                }
                // A new round from the other end; the range reserved again from there.
                second_round = true;
                live.def.round += 1;
                live.def.reserved_until = if inc > 0 {
                    live.def.min_value
                } else {
                    live.def.max_value
                };
                let r = live.def.reserved_until;
                live.adjust(r, ai);
                continue;
            }
            if let Err(e) = self.write_sequence_row(t, &live.def) {
                live.def.reserved_until = org_reserved;
                live.def.round = org_round;
                live.next_free = res;
                return Err(e);
            }
            return Ok(NextValue::Value(res));
        }
    }

    /// SETVAL(t, value, is_used, round): continues the sequence after `value` (or at it
    /// when not `is_used`) if that is ahead of where it is, writing the row when the value
    /// is past the reserved range or the round changes.
    pub fn sequence_set(
        self: &Arc<Self>,
        t: &TableDef,
        value: i64,
        round: i64,
        is_used: bool,
        ai: AutoInc,
    ) -> Result<SetValue> {
        let slot = self.sequences.slot(t.id);
        let mut guard = slot.lock();
        let live = self.live_sequence(t, &mut guard, ai)?;
        let next = if is_used {
            live.increment_value(value)
        } else {
            value
        };
        let mut store = false;
        if live.def.round > round {
            return Ok(SetValue::Below);
        }
        if live.def.round == round {
            let below = if live.real_increment > 0 {
                next < live.next_free
            } else {
                next > live.next_free
            };
            if below {
                return Ok(SetValue::Below);
            }
            if next == live.next_free {
                return Ok(SetValue::Set);
            }
        } else if !live.def.cycle {
            return Ok(SetValue::RunOut);
        } else {
            store = true;
        }
        let (org_reserved, org_next, org_round) =
            (live.def.reserved_until, live.next_free, live.def.round);
        live.def.round = round;
        live.adjust(next, ai);
        let past = if live.real_increment > 0 {
            live.next_free > live.def.reserved_until
        } else {
            live.next_free < live.def.reserved_until
        };
        if past || store {
            live.def.reserved_until = live.next_free;
            if let Err(e) = self.write_sequence_row(t, &live.def) {
                live.def.reserved_until = org_reserved;
                live.next_free = org_next;
                live.def.round = org_round;
                return Err(e);
            }
        }
        Ok(SetValue::Set)
    }

    /// Forgets what is cached of sequence `id` (its row was written by other means).
    pub(crate) fn sequence_forget(&self, id: u32) {
        self.sequences.forget(id);
    }

    /// Runs `f` (ALTER SEQUENCE of table `id`) with NEXTVAL and SETVAL of that sequence
    /// held off, then forgets what was cached of it.
    pub fn sequence_exclusive<R>(&self, id: u32, f: impl FnOnce() -> R) -> R {
        let slot = self.sequences.slot(id);
        let mut guard = slot.lock();
        let r = f();
        *guard = None;
        drop(guard);
        self.sequences.forget(id);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(def: SeqDef) -> Live {
        Live::new(def, AutoInc::default())
    }

    #[test]
    fn defaults_follow_the_increment_sign() {
        let mut d = SeqDef {
            increment: -2,
            ..SeqDef::default()
        };
        assert!(d.check_and_adjust(used::INCREMENT, true, AutoInc::default()));
        assert_eq!((d.min_value, d.max_value, d.start), (i64::MIN + 1, -1, -1));
        assert_eq!(d.reserved_until, -1);
        let mut bad = SeqDef {
            min_value: 10,
            start: 5,
            ..SeqDef::default()
        };
        assert!(!bad.check_and_adjust(used::MIN | used::START, true, AutoInc::default()));
        let mut huge_cache = SeqDef {
            cache: i64::MAX - 1,
            ..SeqDef::default()
        };
        assert!(!huge_cache.check_and_adjust(used::CACHE, true, AutoInc::default()));
    }

    #[test]
    fn increment_stops_one_past_the_end() {
        let l = live(SeqDef {
            max_value: 20,
            increment: 5,
            ..SeqDef::default()
        });
        assert_eq!(l.increment_value(15), 20);
        assert_eq!(l.increment_value(17), 21);
        let l = live(SeqDef {
            min_value: i64::MIN + 1,
            max_value: -1,
            increment: i64::MIN + 1,
            reserved_until: -1,
            ..SeqDef::default()
        });
        assert_eq!(l.increment_value(-5), i64::MIN);
    }

    #[test]
    fn increment_zero_follows_the_auto_increment_series() {
        let ai = AutoInc {
            increment: 10,
            offset: 3,
        };
        let d = SeqDef {
            increment: 0,
            reserved_until: 5,
            ..SeqDef::default()
        };
        let l = Live::new(d, ai);
        assert_eq!((l.next_free, l.real_increment), (13, 10));
    }
}
