//! Session and global system variables as a session reads and sets them (`@@name`,
//! `SET [GLOBAL] name = value`, `SHOW VARIABLES`), over the definitions in `vars.rs`.

use onelog_types::{code, SqlError, Value};

use sqlparser::ast as sq;

use super::{expr_truth, is_note_or_warning, ok, Session};
use crate::database::now;
use crate::parser::Scope as VarScope;
use crate::parser::SetTarget;
use crate::sql_err;
use crate::users::Priv;
use crate::vars::{self, VarScope as Sc};
use crate::QueryResult;

impl Session {
    /// Reads `@@[scope.]name`.
    pub(crate) fn get_var(&self, scope: Option<VarScope>, name: &str) -> Result<Value, SqlError> {
        let Some(d) = vars::find(name) else {
            return Err(sql_err(
                code::ER_UNKNOWN_SYSTEM_VARIABLE,
                format!("Unknown system variable '{name}'"),
            ));
        };
        if scope == Some(VarScope::Global) && d.scope == Sc::Session {
            return Err(sql_err(
                code::ER_INCORRECT_GLOBAL_LOCAL_VAR,
                format!("Variable '{}' is a SESSION variable", d.name),
            ));
        }
        let own_gtid_part = matches!(d.name, "server_id" | "gtid_domain_id");
        if let (true, false, Some(v)) = (
            own_gtid_part,
            scope == Some(VarScope::Global),
            self.vars.get(d.name),
        ) {
            return Ok(v.clone());
        }
        if let Some(v) = self.dynamic_var(d.name) {
            return Ok(v);
        }
        if scope != Some(VarScope::Global) {
            if let Some(v) = self.vars.get(d.name) {
                return Ok(v.clone());
            }
        }
        if let Some(v) = self.db.globals.read().get(d.name) {
            return Ok(v.clone());
        }
        Ok(self.startup_value(d))
    }

    /// A variable's global value before any `SET GLOBAL`: its server option where one
    /// sets it, else the compiled default.
    fn startup_value(&self, d: &vars::VarDef) -> Value {
        match d.name {
            "innodb_lock_wait_timeout" => {
                Value::UInt(self.db.engine.options().lock_wait_timeout.as_secs())
            }
            _ => vars::default_value(d),
        }
    }

    /// Values computed from the engine or the session.
    pub(super) fn dynamic_var(&self, name: &str) -> Option<Value> {
        let e = &self.db.engine;
        let o = e.options();
        let binlog_on = o.mode != onelog_engine::LogMode::Off;
        Some(match name {
            "version" => Value::str(&o.server_version),
            "innodb_version" => Value::str(o.server_version.split('-').next().unwrap_or("")),
            "server_id" => Value::UInt(o.server_id as u64),
            "gtid_domain_id" => Value::UInt(o.gtid_domain_id as u64),
            "gtid_binlog_pos" | "gtid_current_pos" => {
                if binlog_on {
                    Value::str(&e.gtid_binlog_pos())
                } else {
                    Value::str("")
                }
            }
            "gtid_slave_pos" => Value::str(&e.gtid_slave_pos()),
            "binlog_row_metadata" => Value::str(e.binlog_row_metadata().name()),
            "last_gtid" => Value::str(&self.last_gtid),
            "rpl_semi_sync_master_enabled" => Value::Int(e.semisync().enabled() as i64),
            "rpl_semi_sync_master_timeout" => {
                Value::UInt(e.semisync().timeout().as_millis() as u64)
            }
            "rpl_semi_sync_master_wait_no_slave" => Value::Int(e.semisync().wait_no_slave() as i64),
            "rpl_semi_sync_master_wait_point" => Value::str(e.semisync().wait_point().name()),
            "rpl_semi_sync_slave_enabled" => Value::Int(
                e.semisync()
                    .slave_enabled
                    .load(std::sync::atomic::Ordering::Relaxed) as i64,
            ),
            "gtid_seq_no" => Value::UInt(self.gtid_seq_no),
            "gtid_binlog_state" => {
                if binlog_on {
                    Value::str(&e.gtid_binlog_state())
                } else {
                    Value::str("")
                }
            }
            "log_bin" => Value::Int(binlog_on as i64),
            "sync_binlog" => Value::UInt(e.sync_binlog() as u64),
            "max_binlog_size" => Value::UInt(o.max_binlog_size),
            "binlog_expire_logs_seconds" => Value::UInt(o.binlog_expire_logs_seconds),
            // MariaDB 12.3's name for "the binlog is kept by this storage engine" (empty:
            // classic binlog files): in `engine` mode the binlog is onelog's storage log.
            "binlog_storage_engine" => Value::str(match o.mode {
                onelog_engine::LogMode::Engine => "onelog",
                _ => "",
            }),
            "binlog_storage" => Value::str(match o.mode {
                onelog_engine::LogMode::Engine => "engine",
                onelog_engine::LogMode::File => "file",
                onelog_engine::LogMode::Off => "off",
            }),
            "datadir" => {
                if let Some(v) = self.db.globals.read().get("datadir") {
                    return Some(v.clone());
                }
                Value::str(&format!("{}/", o.datadir.display()))
            }
            "last_insert_id" | "identity" => Value::UInt(self.last_insert_id),
            "warning_count" => Value::UInt(self.warnings.len() as u64),
            "error_count" => Value::UInt(
                self.warnings
                    .iter()
                    .filter(|w| w.code >= 1000 && !is_note_or_warning(w.code))
                    .count() as u64,
            ),
            "in_transaction" => {
                Value::Int((self.in_explicit || (self.txn.is_some() && !self.autocommit())) as i64)
            }
            "timestamp" => {
                let n = self.fixed_now.unwrap_or_else(now);
                Value::Double(n.unix_seconds() as f64 + n.micro as f64 / 1e6)
            }
            "autocommit" => Value::Int(self.autocommit() as i64),
            _ => return None,
        })
    }

    /// With `gtid_strict_mode`, a sequence number at or below the last one logged in the
    /// domain is refused when it is set (MariaDB's 1950).
    fn check_strict_gtid_seq(&self, seq: u64) -> Result<(), SqlError> {
        let strict = self.get_var(Some(VarScope::Global), "gtid_strict_mode")?;
        if seq == 0 || !expr_truth(&strict) {
            return Ok(());
        }
        let (domain, server) = self.gtid_domain_and_server();
        match self.db.engine.last_gtid_in_domain(domain) {
            Some(last) if last.seq >= seq => Err(sql_err(
                code::ER_GTID_STRICT_OUT_OF_ORDER,
                format!(
                    "An attempt was made to binlog GTID {domain}-{server}-{seq} which would \
                     create an out-of-order sequence number with existing GTID {last}, and \
                     gtid strict mode is enabled"
                ),
            )),
            _ => Ok(()),
        }
    }

    pub(super) fn set_var(
        &mut self,
        scope: VarScope,
        name: &str,
        value: Value,
    ) -> Result<(), SqlError> {
        self.assign_var(scope, name, value)?;
        if scope == VarScope::Session {
            if let Some(d) = vars::find(name) {
                self.track_var(d.name);
            }
        }
        Ok(())
    }

    fn assign_var(&mut self, scope: VarScope, name: &str, value: Value) -> Result<(), SqlError> {
        let Some(d) = vars::find(name) else {
            return Err(sql_err(
                code::ER_UNKNOWN_SYSTEM_VARIABLE,
                format!("Unknown system variable '{name}'"),
            ));
        };
        if d.name == "sql_log_bin" {
            self.check_set_sql_log_bin()?;
            if scope == VarScope::Global {
                return Err(sql_err(
                    code::ER_INCORRECT_GLOBAL_LOCAL_VAR,
                    "Variable 'sql_log_bin' is a SESSION variable",
                ));
            }
        }
        if let Some(r) = self.set_replay_var(scope, d, &value) {
            return r;
        }
        self.check_settable(scope, d)?;
        if let Some(r) = self.set_session_state_var(d, &value) {
            return r;
        }
        let v = self.checked_value(scope, d, &value)?;
        if let Some(r) = self.set_engine_var(d, &v) {
            return r;
        }
        if d.name == "autocommit" && scope == VarScope::Session {
            let on = expr_truth(&v);
            if on && !self.autocommit() {
                // Turning autocommit on commits the open transaction.
                self.commit_txn()?;
            }
            self.in_explicit = false;
        }
        if d.name == "last_insert_id" || d.name == "insert_id" || d.name == "identity" {
            self.last_insert_id = crate::expr::to_i64(&v).max(0) as u64;
            return Ok(());
        }
        self.store_var(scope, d, v);
        Ok(())
    }

    /// Refuses read-only variables, the wrong scope, and SET GLOBAL without SUPER.
    fn check_settable(&self, scope: VarScope, d: &vars::VarDef) -> Result<(), SqlError> {
        if d.read_only {
            return Err(sql_err(
                code::ER_INCORRECT_GLOBAL_LOCAL_VAR,
                format!("Variable '{}' is a read only variable", d.name),
            ));
        }
        match (scope, d.scope) {
            (VarScope::Global, Sc::Session) => {
                return Err(sql_err(
                    code::ER_LOCAL_VARIABLE,
                    format!(
                        "Variable '{}' is a SESSION variable and can't be used with SET GLOBAL",
                        d.name
                    ),
                ))
            }
            (VarScope::Session, Sc::Global) => {
                return Err(sql_err(
                    code::ER_GLOBAL_VARIABLE,
                    format!(
                        "Variable '{}' is a GLOBAL variable and should be set with SET GLOBAL",
                        d.name
                    ),
                ))
            }
            _ => {}
        }
        if scope == VarScope::Global && !self.internal && !self.account().has_global(Priv::SUPER) {
            return Err(sql_err(
                code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                "Access denied; you need (at least one of) the SUPER privilege(s) for this operation",
            ));
        }
        Ok(())
    }

    /// Variables that are state of the server or session rather than stored values
    /// (`event_scheduler`, `gtid_seq_no`, `timestamp`), set from the raw value. None: not
    /// such a variable.
    fn set_session_state_var(
        &mut self,
        d: &vars::VarDef,
        value: &Value,
    ) -> Option<Result<(), SqlError>> {
        match d.name {
            "event_scheduler" => {
                let is_default =
                    matches!(value, Value::Bytes(b) if b.eq_ignore_ascii_case(b"DEFAULT"));
                Some(crate::events::set_global(
                    self,
                    (!is_default).then_some(value),
                ))
            }
            "gtid_seq_no" => Some(self.set_gtid_seq_no(d, value)),
            "timestamp" => {
                // SET TIMESTAMP = unix seconds fixes NOW() for the session; 0 or DEFAULT
                // frees it.
                let secs = crate::expr::to_f64(value);
                self.fixed_now = (secs > 0.0).then(|| {
                    onelog_types::DateTime::from_unix(
                        secs.trunc() as i64,
                        (secs.fract() * 1e6) as u32,
                    )
                });
                Some(Ok(()))
            }
            _ => None,
        }
    }

    /// `SET gtid_seq_no`: the sequence number of the next GTID this session logs.
    fn set_gtid_seq_no(&mut self, d: &vars::VarDef, value: &Value) -> Result<(), SqlError> {
        if !self.internal && !self.account().has_global(Priv::SUPER) {
            return Err(sql_err(
                code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                "Access denied; you need (at least one of) the SUPER, BINLOG REPLAY \
                 privilege(s) for this operation",
            ));
        }
        let seq = crate::expr::to_i64(&vars::check_value(d, value)?).max(0) as u64;
        self.check_strict_gtid_seq(seq)?;
        self.gtid_seq_no = seq;
        Ok(())
    }

    /// The value to store: DEFAULT resolved (the global value for a session, the startup
    /// value for a global), checked against the variable's kind, `sql_mode` normalized,
    /// ranged numbers clamped with a warning.
    fn checked_value(
        &mut self,
        scope: VarScope,
        d: &vars::VarDef,
        value: &Value,
    ) -> Result<Value, SqlError> {
        let is_default = matches!(value, Value::Bytes(b) if b.eq_ignore_ascii_case(b"DEFAULT"))
            && !matches!(d.kind, vars::Kind::Str);
        let mut v = if is_default {
            match scope {
                VarScope::Session => self
                    .db
                    .globals
                    .read()
                    .get(d.name)
                    .cloned()
                    .unwrap_or_else(|| self.startup_value(d)),
                VarScope::Global => self.startup_value(d),
            }
        } else {
            vars::check_value(d, value)?
        };
        if d.name == "sql_mode" {
            let s = crate::expr::to_string(&v);
            let s = if s.eq_ignore_ascii_case("DEFAULT") {
                vars::SQL_MODE_DEFAULT.to_string()
            } else {
                s
            };
            v = Value::str(&vars::normalize_sql_mode(&s).map_err(|bad| {
                sql_err(
                    code::ER_WRONG_VALUE_FOR_VAR,
                    format!("Variable 'sql_mode' can't be set to the value of '{bad}'"),
                )
            })?);
        }
        if let Some((lo, hi)) = match d.name {
            "thread_pool_size" => Some((1, 256)),
            "thread_pool_stall_limit" => Some((1, u32::MAX as i64)),
            "thread_pool_prio_kickup_timer" => Some((0, u32::MAX as i64)),
            "thread_pool_oversubscribe" => Some((1, 1000)),
            "slave_parallel_threads" => Some((0, 16383)),
            "slave_parallel_max_queued" => Some((100, i32::MAX as i64)),
            _ => None,
        } {
            let n = if is_default && d.name == "thread_pool_size" {
                std::thread::available_parallelism().map_or(1, |n| n.get()) as i64
            } else {
                crate::expr::to_i64(&v)
            };
            if !(lo..=hi).contains(&n) {
                self.warnings.push(sql_err(
                    code::ER_TRUNCATED_WRONG_VALUE,
                    format!("Truncated incorrect {} value: '{n}'", d.name),
                ));
            }
            v = Value::UInt(n.clamp(lo, hi) as u64);
        }
        Ok(v)
    }

    /// Variables the engine or the replication state holds (`binlog_row_metadata`,
    /// `gtid_slave_pos`, `rpl_semi_sync_*`, `sync_binlog`), and the `slave_parallel_*`
    /// ones a running replica has taken. None: stored like any other variable.
    fn set_engine_var(&mut self, d: &vars::VarDef, v: &Value) -> Option<Result<(), SqlError>> {
        let slave_must_stop = || {
            Err(sql_err(
                code::ER_SLAVE_MUST_STOP,
                "This operation cannot be performed as you have a running slave ''; run STOP \
                 SLAVE '' first",
            ))
        };
        match d.name {
            "binlog_row_metadata" => {
                // NO_LOG is refused: recovery reads each column's signedness from the binlog.
                let name = crate::expr::to_string(v);
                let Some(meta) = onelog_engine::RowMetadata::parse(&name) else {
                    return Some(Err(sql_err(
                        code::ER_WRONG_VALUE_FOR_VAR,
                        format!(
                            "Variable '{}' can't be set to the value of '{name}'",
                            d.name
                        ),
                    )));
                };
                self.db.engine.set_binlog_row_metadata(meta);
                Some(Ok(()))
            }
            // Taken at START SLAVE, as MariaDB takes them.
            n if n.starts_with("slave_parallel_") && self.db.replicas().replica_running() => {
                Some(slave_must_stop())
            }
            "gtid_slave_pos" => Some(if self.db.replicas().replica_running() {
                slave_must_stop()
            } else {
                self.db
                    .engine
                    .set_gtid_slave_pos(&crate::expr::to_string(v))
                    .map_err(crate::executor::engine_err)
            }),
            n if n.starts_with("rpl_semi_sync_") => {
                let ss = self.db.engine.semisync();
                match n {
                    "rpl_semi_sync_master_enabled" => ss.set_enabled(expr_truth(v)),
                    "rpl_semi_sync_master_timeout" => {
                        let ms = crate::expr::to_i64(v).clamp(0, u32::MAX as i64) as u64;
                        ss.set_timeout(std::time::Duration::from_millis(ms))
                    }
                    "rpl_semi_sync_master_wait_no_slave" => ss.set_wait_no_slave(expr_truth(v)),
                    "rpl_semi_sync_master_wait_point" => {
                        if let Some(p) = onelog_engine::WaitPoint::parse(&crate::expr::to_string(v))
                        {
                            ss.set_wait_point(p)
                        }
                    }
                    _ => ss
                        .slave_enabled
                        .store(expr_truth(v), std::sync::atomic::Ordering::Relaxed),
                }
                Some(Ok(()))
            }
            "sync_binlog" => {
                let n = crate::expr::to_i64(v).clamp(0, u32::MAX as i64) as u32;
                self.db.engine.set_sync_binlog(n);
                Some(Ok(()))
            }
            _ => None,
        }
    }

    /// Stores a checked value in the session or the globals (both names of the
    /// isolation and read-only aliases), calling the server's hook for globals.
    fn store_var(&mut self, scope: VarScope, d: &vars::VarDef, v: Value) {
        let names: &[&str] = match d.name {
            "tx_isolation" | "transaction_isolation" => &["tx_isolation", "transaction_isolation"],
            "tx_read_only" | "transaction_read_only" => &["tx_read_only", "transaction_read_only"],
            _ => std::slice::from_ref(&d.name),
        };
        for n in names {
            match scope {
                VarScope::Session => {
                    self.vars.insert(n.to_string(), v.clone());
                }
                VarScope::Global => {
                    self.db.globals.write().insert(n.to_string(), v.clone());
                    if let Some(hook) = self.db.global_hook.read().as_ref() {
                        hook(n, &v);
                    }
                }
            }
        }
    }

    /// What `mariadb-binlog` output sets that other clients do not: the session's
    /// `server_id` and `gtid_domain_id` (SUPER; they name the GTID `gtid_seq_no` logs
    /// under), `explicit_defaults_for_timestamp = 1` (onelog's only behaviour), and
    /// numeric `lc_time_names` (0: en_US) and collation ids. None: not such a case.
    fn set_replay_var(
        &mut self,
        scope: VarScope,
        d: &vars::VarDef,
        value: &Value,
    ) -> Option<Result<(), SqlError>> {
        let number = match value {
            Value::Int(i) => Some(*i),
            Value::UInt(u) => i64::try_from(*u).ok(),
            _ => None,
        };
        let bad = || {
            Err(sql_err(
                code::ER_WRONG_VALUE_FOR_VAR,
                format!(
                    "Variable '{}' can't be set to the value of '{}'",
                    d.name,
                    crate::expr::to_string(value)
                ),
            ))
        };
        match d.name {
            "server_id" | "gtid_domain_id" if scope == VarScope::Session => {
                if !self.internal && !self.account().has_global(Priv::SUPER) {
                    return Some(Err(sql_err(
                        code::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                        "Access denied; you need (at least one of) the SUPER, BINLOG REPLAY \
                         privilege(s) for this operation",
                    )));
                }
                let n = match vars::check_value(d, value) {
                    Ok(v) => crate::expr::to_i64(&v),
                    Err(e) => return Some(Err(e)),
                };
                if !(0..=u32::MAX as i64).contains(&n) {
                    return Some(bad());
                }
                self.vars.insert(d.name.to_string(), Value::UInt(n as u64));
                Some(Ok(()))
            }
            "explicit_defaults_for_timestamp" => match vars::check_value(d, value) {
                Ok(Value::Int(1)) => Some(Ok(())),
                Ok(_) => Some(bad()),
                Err(e) => Some(Err(e)),
            },
            "lc_time_names" if number == Some(0) => {
                Some(self.set_var(scope, d.name, Value::str("en_US")))
            }
            "collation_connection" | "collation_database" | "collation_server" => {
                let n = number?;
                let name = [
                    onelog_types::Collation::Utf8mb4GeneralCi,
                    onelog_types::Collation::Utf8mb4Bin,
                    onelog_types::Collation::Binary,
                ]
                .into_iter()
                .find(|c| i64::from(c.id()) == n)
                .map(|c| c.name());
                match name {
                    Some(name) => Some(self.set_var(scope, d.name, Value::str(name))),
                    None => Some(bad()),
                }
            }
            _ => None,
        }
    }

    /// `SET var = DEFAULT`: a session variable takes the global value, a global one the
    /// value it had at start-up.
    pub(super) fn set_var_default(&mut self, scope: VarScope, name: &str) -> Result<(), SqlError> {
        let Some(d) = vars::find(name) else {
            return Err(sql_err(
                code::ER_UNKNOWN_SYSTEM_VARIABLE,
                format!("Unknown system variable '{name}'"),
            ));
        };
        if !matches!(d.kind, vars::Kind::Str) || d.name == "sql_mode" {
            return self.set_var(scope, name, Value::str("DEFAULT"));
        }
        let v = match scope {
            VarScope::Session if d.scope != Sc::Session => {
                let global = self.db.globals.read().get(d.name).cloned();
                global.unwrap_or_else(|| self.startup_value(d))
            }
            _ => self.startup_value(d),
        };
        self.set_var(scope, name, v)
    }

    /// `SET NAMES charset [COLLATE collation]`: the client, connection and results
    /// character sets, and the connection collation (the charset's default without
    /// COLLATE). `DEFAULT` takes the global values.
    pub(super) fn set_names(&mut self, cs: &str, coll: Option<&str>) -> Result<(), SqlError> {
        if cs.eq_ignore_ascii_case("DEFAULT") {
            for n in [
                "character_set_client",
                "character_set_connection",
                "character_set_results",
                "collation_connection",
            ] {
                self.set_var_default(VarScope::Session, n)?;
            }
            return Ok(());
        }
        let cs = charset_name(cs)?;
        let coll = match coll {
            Some(c) => {
                let name = c.to_ascii_lowercase();
                if onelog_types::Collation::from_name(&name).is_none() {
                    return Err(sql_err(
                        crate::codes::ER_UNKNOWN_COLLATION,
                        format!("Unknown collation: '{c}'"),
                    ));
                }
                let of = onelog_types::Collation::charset_of_name(&name);
                if charset_name(&of).ok().as_deref() != Some(cs.as_str()) && name != "binary" {
                    return Err(sql_err(
                        crate::codes::ER_COLLATION_CHARSET_MISMATCH,
                        format!("COLLATION '{name}' is not valid for CHARACTER SET '{cs}'"),
                    ));
                }
                name
            }
            None => default_collation(&cs).to_string(),
        };
        for n in [
            "character_set_client",
            "character_set_connection",
            "character_set_results",
        ] {
            self.vars.insert(n.to_string(), Value::str(&cs));
            self.track_var(n);
        }
        self.vars
            .insert("collation_connection".into(), Value::str(&coll));
        self.track_var("collation_connection");
        Ok(())
    }

    /// `SET CHARACTER SET charset`: the client and results character sets; the connection
    /// takes the database's character set and collation.
    pub(super) fn set_character_set(&mut self, cs: &str) -> Result<(), SqlError> {
        let cs = if cs.eq_ignore_ascii_case("DEFAULT") {
            crate::expr::to_string(&self.get_var(Some(VarScope::Global), "character_set_client")?)
        } else {
            charset_name(cs)?
        };
        for n in ["character_set_client", "character_set_results"] {
            self.vars.insert(n.to_string(), Value::str(&cs));
        }
        let db_cs = self.get_var(None, "character_set_database")?;
        let db_coll = self.get_var(None, "collation_database")?;
        self.vars.insert("character_set_connection".into(), db_cs);
        self.vars.insert("collation_connection".into(), db_coll);
        for n in [
            "character_set_client",
            "character_set_connection",
            "character_set_results",
            "collation_connection",
        ] {
            self.track_var(n);
        }
        Ok(())
    }

    /// `SET target = value [, ...]`: user variables, system variables (a bare word is a
    /// value: `= ON`, `= utf8mb4`; `= DEFAULT` resets), `NAMES` and `CHARACTER SET`.
    pub(super) fn run_set(
        &mut self,
        items: &[(SetTarget, sq::Expr)],
    ) -> Result<QueryResult, SqlError> {
        for (target, e) in items {
            let default = matches!(e, sq::Expr::Identifier(id)
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DEFAULT"));
            if default {
                if let SetTarget::System(scope, name) = target {
                    self.set_var_default(*scope, name)?;
                    continue;
                }
            }
            // A system variable takes a bare word as its value (`= FULL`, `= ON`).
            let v = match (target, e) {
                (_, sq::Expr::Identifier(id))
                    if id.quote_style.is_none()
                        && !id.value.starts_with('@')
                        && !matches!(target, SetTarget::User(_)) =>
                {
                    Value::str(&id.value)
                }
                _ => self.eval_const(e)?,
            };
            match target {
                SetTarget::User(n) => {
                    self.user_vars.insert(n.clone(), v);
                    self.track_user_var();
                }
                SetTarget::System(scope, name) => self.set_var(*scope, name, v)?,
                SetTarget::Names(coll) => {
                    self.set_names(&crate::expr::to_string(&v), coll.as_deref())?
                }
                SetTarget::CharacterSet => self.set_character_set(&crate::expr::to_string(&v))?,
            }
        }
        Ok(ok(0, 0, self.warnings.len(), String::new()))
    }
}

/// A character set's name as MariaDB shows it (`utf8` is `utf8mb3`); 1115 for one onelog
/// does not know.
fn charset_name(cs: &str) -> Result<String, SqlError> {
    let n = cs.to_ascii_lowercase();
    if onelog_types::Collation::charset_default(&n).is_none() {
        return Err(sql_err(
            crate::codes::ER_UNKNOWN_CHARACTER_SET,
            format!("Unknown character set: '{cs}'"),
        ));
    }
    Ok(if n == "utf8" { "utf8mb3".into() } else { n })
}

/// MariaDB 10.11's default collation of a character set onelog knows.
fn default_collation(cs: &str) -> &'static str {
    match cs {
        "utf8mb3" => "utf8mb3_general_ci",
        "latin1" => "latin1_swedish_ci",
        "ascii" => "ascii_general_ci",
        "binary" => "binary",
        _ => "utf8mb4_general_ci",
    }
}
