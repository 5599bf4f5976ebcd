//! The account statements: CREATE/DROP/RENAME/ALTER USER, GRANT, REVOKE, SET PASSWORD.
//!
//! Each runs as one transaction over the account tables (`mysql.onelog_user`,
//! `mysql.onelog_db`, see `users.rs`) and is logged as MariaDB 10.11 logs it, so that a
//! MariaDB replica executes it and gets the same accounts: the group `ROW_REDO GTID QUERY`
//! (see `onelog_engine::LoggedStatement`), whose QUERY event holds
//! - the statement as sent, except SET PASSWORD, which MariaDB writes as
//!   `SET PASSWORD FOR 'user'@'host'='<hash>'` (passwords given in clear text elsewhere
//!   stay as sent, as MariaDB logs them);
//! - the session's current database, and the default status variables plus Q_INVOKER
//!   (the current account) for GRANT, REVOKE ... ON, SET PASSWORD without FOR and
//!   statements naming CURRENT_USER;
//! - the error the statement ended with: as in MariaDB, CREATE/DROP/RENAME/ALTER USER go
//!   on past a user they cannot handle, change the others and fail with 1396 naming the
//!   users that failed; such a statement is logged with that error code (a replica expects
//!   it), unless it changed no user; `REVOKE ALL PRIVILEGES, GRANT OPTION` is logged even
//!   when it fails (1269). Other errors change and log nothing.
//!
//! The row changes go to the binlog only as onelog's private row redo, never as rows
//! events on `mysql.onelog_*`, and recovery replays them exactly.

use onelog_engine::LoggedStatement;
use onelog_types::{code, SqlError};

use crate::parser::{AccountStmt, PrivLevel, UserName, UserSpec};
use crate::session::Session;
use crate::ssl_require::{RequireClause, SslRequire};
use crate::users::{
    self, db_matches, hash_password, quote, store_mask, Account, Accounts, Priv, ALL_DB,
    ALL_GLOBAL, GLOBAL_ONLY,
};
use crate::{sql_err, QueryResult};

/// An account: (user, host).
type UserHost = (String, String);

/// What a statement did, for the binlog and the client.
struct Outcome {
    /// MariaDB logs the statement.
    log: bool,
    /// The error the statement ends with (after committing what it changed).
    error: Option<SqlError>,
    /// The text logged instead of the statement as sent.
    text: Option<String>,
    /// Log the current account as Q_INVOKER.
    invoker: bool,
}

impl Outcome {
    fn logged(invoker: bool) -> Outcome {
        Outcome {
            log: true,
            error: None,
            text: None,
            invoker,
        }
    }

    /// A statement over a list of users: fails with `error` if some failed; logged when it
    /// changed a user or did not fail (as MariaDB's CREATE/DROP/RENAME USER).
    fn users(changed: bool, error: Option<SqlError>, invoker: bool) -> Outcome {
        Outcome {
            log: changed || error.is_none(),
            error,
            text: None,
            invoker,
        }
    }
}

/// Runs an account statement (`text`: the statement as sent).
pub(crate) fn run(s: &mut Session, a: &AccountStmt, text: &str) -> Result<QueryResult, SqlError> {
    let me = s.account();
    let mut notes = Vec::new();
    s.begin_internal_txn();
    let done = apply(s, a, &me, &mut notes);
    let result = match done {
        Ok(o) if o.log => {
            let stmt = LoggedStatement {
                db: s.current_db().unwrap_or_default().to_string(),
                sql: o.text.unwrap_or_else(|| text.to_string()),
                thread_id: s.connection_id(),
                error_code: o.error.as_ref().map_or(0, |e| e.code),
                invoker: o.invoker.then(|| (me.user.clone(), me.host.clone())),
            };
            s.commit_logged(&stmt).and(o.error.map_or(Ok(()), Err))
        }
        Ok(o) => {
            s.rollback_internal_txn();
            o.error.map_or(Ok(()), Err)
        }
        Err(e) => {
            s.rollback_internal_txn();
            Err(e)
        }
    };
    users::reload(&s.db)?;
    s.warnings = notes;
    result?;
    Ok(QueryResult::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: s.warnings.len() as u16,
        info: String::new(),
    })
}

/// The accounts as the statement's transaction sees them (with its own changes).
fn accounts(s: &mut Session) -> Result<Accounts, SqlError> {
    users::read_accounts(s)
}

/// A named user, or the current account for CURRENT_USER (which MariaDB logs with
/// Q_INVOKER).
fn name_of(name: &UserName, me: &Account, invoker: &mut bool) -> (String, String) {
    match name {
        Some((u, h)) => (u.clone(), h.clone()),
        None => {
            *invoker = true;
            (me.user.clone(), me.host.clone())
        }
    }
}

/// 1396 naming the users an operation failed for, as MariaDB lists them.
fn cannot(op: &str, failed: &[(String, String)]) -> Option<SqlError> {
    if failed.is_empty() {
        return None;
    }
    let who: Vec<String> = failed.iter().map(|(u, h)| format!("'{u}'@'{h}'")).collect();
    Some(sql_err(
        code::ER_CANNOT_USER,
        format!("Operation {op} failed for {}", who.join(",")),
    ))
}

/// The stored form of `IDENTIFIED BY ...` (None: no password given).
fn password_of(spec: &UserSpec) -> Result<Option<String>, SqlError> {
    match &spec.password {
        None => Ok(None),
        Some(p) if spec.password_is_hash => Ok(Some(checked_hash(p)?.to_uppercase())),
        Some(p) => Ok(Some(hash_password(p))),
    }
}

fn checked_hash(p: &str) -> Result<&str, SqlError> {
    if !p.is_empty() && (p.len() != 41 || !p.starts_with('*')) {
        return Err(sql_err(
            code::ER_PASSWORD_NO_MATCH,
            "Password hash should be a 41-digit hexadecimal number",
        ));
    }
    Ok(p)
}

fn level_db(s: &Session, level: &PrivLevel) -> Result<Option<String>, SqlError> {
    match level {
        PrivLevel::Global => Ok(None),
        PrivLevel::Db(Some(d)) => Ok(Some(d.clone())),
        PrivLevel::Db(None) => match s.current_db() {
            Some(d) => Ok(Some(d.to_string())),
            None => Err(sql_err(code::ER_NO_DB_ERROR, "No database selected")),
        },
        PrivLevel::Table(..) => Err(crate::binder::unsupported("table-level privileges")),
    }
}

/// `WHERE Host = .. AND User = ..` of an account as stored.
fn key(a: &Account) -> String {
    format!("Host = {} AND User = {}", quote(&a.host), quote(&a.user))
}

fn set_password(s: &mut Session, a: &Account, pw: &str) -> Result<(), SqlError> {
    s.run_internal(&format!(
        "UPDATE mysql.onelog_user SET Password = {} WHERE {}",
        quote(pw),
        key(a)
    ))?;
    Ok(())
}

/// Stores an account's TLS requirement.
fn set_ssl(s: &mut Session, a: &Account, ssl: &SslRequire) -> Result<(), SqlError> {
    s.run_internal(&format!(
        "UPDATE mysql.onelog_user SET Ssl_type = {}, Ssl_cipher = {}, X509_issuer = {}, X509_subject = {} WHERE {}",
        quote(ssl.type_name()),
        quote(&ssl.cipher),
        quote(&ssl.issuer),
        quote(&ssl.subject),
        key(a)
    ))?;
    Ok(())
}

/// Creates an account (no privileges).
fn create(s: &mut Session, user: &str, host: &str, pw: &str) -> Result<Account, SqlError> {
    s.run_internal(&format!(
        "INSERT INTO mysql.onelog_user (Host, User, Password) VALUES ({}, {}, {})",
        quote(host),
        quote(user),
        quote(pw)
    ))?;
    Ok(Account::nobody(user, host))
}

fn apply(
    s: &mut Session,
    a: &AccountStmt,
    me: &Account,
    notes: &mut Vec<SqlError>,
) -> Result<Outcome, SqlError> {
    match a {
        AccountStmt::CreateUser {
            if_not_exists,
            users,
            require,
        } => create_users(s, me, notes, *if_not_exists, users, require.as_ref()),
        AccountStmt::DropUser { if_exists, users } => drop_users(s, notes, *if_exists, users),
        AccountStmt::RenameUser { pairs } => rename_users(s, pairs),
        AccountStmt::AlterUser {
            if_exists,
            users,
            require,
        } => alter_users(s, me, notes, *if_exists, users, require.as_ref()),
        AccountStmt::SetPassword {
            user,
            password,
            is_hash,
        } => set_password_stmt(s, me, user, password, *is_hash),
        AccountStmt::Grant {
            privs,
            level,
            users,
            require,
            grant_option,
        } => grant(s, me, privs, level, users, require.as_ref(), *grant_option),
        AccountStmt::Revoke {
            privs,
            level,
            users,
        } => revoke(s, me, privs, level, users),
        AccountStmt::RevokeAll { users } => revoke_all(s, users),
    }
}

/// `CREATE USER [IF NOT EXISTS] user [IDENTIFIED ...] [, ...] [REQUIRE ...]`.
fn create_users(
    s: &mut Session,
    me: &Account,
    notes: &mut Vec<SqlError>,
    if_not_exists: bool,
    users: &[UserSpec],
    require: Option<&RequireClause>,
) -> Result<Outcome, SqlError> {
    let mut invoker = false;
    s.require_global(Priv::CREATE_USER)?;
    let ssl = require.map(SslRequire::from_clause).transpose()?;
    let (mut changed, mut failed) = (false, Vec::new());
    for u in users {
        let (user, host) = name_of(&u.name, me, &mut invoker);
        let pw = password_of(u)?.unwrap_or_default();
        if accounts(s)?.exact(&user, &host).is_some() {
            if if_not_exists {
                notes.push(sql_err(
                    1973,
                    format!("Can't create user '{user}'@'{host}'; it already exists"),
                ));
            } else {
                failed.push((user, host));
            }
            continue;
        }
        let acc = create(s, &user, &host, &pw)?;
        if let Some(ssl) = &ssl {
            set_ssl(s, &acc, ssl)?;
        }
        changed = true;
    }
    Ok(Outcome::users(
        changed,
        cannot("CREATE USER", &failed),
        invoker,
    ))
}

/// `DROP USER [IF EXISTS] user [, ...]`.
fn drop_users(
    s: &mut Session,
    notes: &mut Vec<SqlError>,
    if_exists: bool,
    users: &[(String, String)],
) -> Result<Outcome, SqlError> {
    s.require_global(Priv::CREATE_USER)?;
    let (mut changed, mut failed) = (false, Vec::new());
    for (u, h) in users {
        let Some(acc) = accounts(s)?.exact(u, h).cloned() else {
            if if_exists {
                notes.push(sql_err(
                    1974,
                    format!("Can't drop user '{u}'@'{h}'; it doesn't exist"),
                ));
            } else {
                failed.push((u.clone(), h.clone()));
            }
            continue;
        };
        for table in ["onelog_user", "onelog_db"] {
            s.run_internal(&format!("DELETE FROM mysql.{table} WHERE {}", key(&acc)))?;
        }
        changed = true;
    }
    Ok(Outcome::users(changed, cannot("DROP USER", &failed), false))
}

/// `RENAME USER from TO to [, ...]`.
fn rename_users(s: &mut Session, pairs: &[(UserHost, UserHost)]) -> Result<Outcome, SqlError> {
    s.require_global(Priv::CREATE_USER)?;
    let (mut changed, mut failed) = (false, Vec::new());
    for ((u, h), (to_u, to_h)) in pairs {
        let cur = accounts(s)?;
        let Some(acc) = cur.exact(u, h).cloned() else {
            failed.push((u.clone(), h.clone()));
            continue;
        };
        if cur.exact(to_u, to_h).is_some() {
            failed.push((u.clone(), h.clone()));
            continue;
        }
        for table in ["onelog_user", "onelog_db"] {
            s.run_internal(&format!(
                "UPDATE mysql.{table} SET Host = {}, User = {} WHERE {}",
                quote(to_h),
                quote(to_u),
                key(&acc)
            ))?;
        }
        changed = true;
    }
    Ok(Outcome::users(
        changed,
        cannot("RENAME USER", &failed),
        false,
    ))
}

/// `ALTER USER [IF EXISTS] user [IDENTIFIED ...] [, ...] [REQUIRE ...]`.
fn alter_users(
    s: &mut Session,
    me: &Account,
    notes: &mut Vec<SqlError>,
    if_exists: bool,
    users: &[UserSpec],
    require: Option<&RequireClause>,
) -> Result<Outcome, SqlError> {
    let mut invoker = false;
    s.require_global(Priv::CREATE_USER)?;
    let ssl = require.map(SslRequire::from_clause).transpose()?;
    let (mut changed, mut failed) = (false, Vec::new());
    for u in users {
        let (user, host) = name_of(&u.name, me, &mut invoker);
        let pw = password_of(u)?;
        let Some(acc) = accounts(s)?.exact(&user, &host).cloned() else {
            if if_exists {
                notes.push(sql_err(
                    code::ER_CANNOT_USER,
                    format!("Operation ALTER USER failed for '{user}'@'{host}'"),
                ));
            } else {
                failed.push((user, host));
            }
            continue;
        };
        if let Some(pw) = pw {
            set_password(s, &acc, &pw)?;
        }
        if let Some(ssl) = &ssl {
            set_ssl(s, &acc, ssl)?;
        }
        changed = true;
    }
    // MariaDB logs ALTER USER only when it altered a user.
    Ok(Outcome {
        log: changed,
        error: cannot("ALTER USER", &failed),
        text: None,
        invoker,
    })
}

/// `SET PASSWORD [FOR user] = ...`.
fn set_password_stmt(
    s: &mut Session,
    me: &Account,
    user: &UserName,
    password: &str,
    is_hash: bool,
) -> Result<Outcome, SqlError> {
    let mut invoker = false;
    let (u, h) = match user {
        Some((u, h)) => {
            if *u != me.user || *h != me.host {
                s.require_global(Priv::CREATE_USER)?;
            }
            (u.clone(), h.clone())
        }
        None => {
            invoker = true;
            (me.user.clone(), me.host.clone())
        }
    };
    let Some(acc) = accounts(s)?.exact(&u, &h).cloned() else {
        return Err(sql_err(
            code::ER_PASSWORD_NO_MATCH,
            "Can't find any matching row in the user table",
        ));
    };
    // Logged as MariaDB writes it: the hash as given, or the one PASSWORD() made.
    let hash = if is_hash {
        checked_hash(password)?.to_string()
    } else {
        hash_password(password)
    };
    set_password(s, &acc, &hash.to_uppercase())?;
    let cut = |x: &str| x.chars().take(120).collect::<String>();
    Ok(Outcome {
        text: Some(format!(
            "SET PASSWORD FOR '{}'@'{}'='{}'",
            cut(&u),
            cut(&h),
            cut(&hash)
        )),
        ..Outcome::logged(invoker)
    })
}

/// `REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user [, ...]`.
fn revoke_all(s: &mut Session, users: &[(String, String)]) -> Result<Outcome, SqlError> {
    s.require_global(Priv::CREATE_USER)?;
    let mut failed = false;
    for (u, h) in users {
        let Some(acc) = accounts(s)?.exact(u, h).cloned() else {
            failed = true;
            continue;
        };
        s.run_internal(&format!(
            "UPDATE mysql.onelog_user SET Privileges = '', Grant_option = 0 WHERE {}",
            key(&acc)
        ))?;
        s.run_internal(&format!("DELETE FROM mysql.onelog_db WHERE {}", key(&acc)))?;
    }
    // MariaDB logs it even when it failed for every user.
    Ok(Outcome {
        error: failed.then(|| {
            sql_err(
                1269,
                "Can't revoke all privileges for one or more of the requested users",
            )
        }),
        ..Outcome::logged(false)
    })
}

fn grant(
    s: &mut Session,
    me: &Account,
    privs: &[String],
    level: &PrivLevel,
    users: &[UserSpec],
    require: Option<&RequireClause>,
    grant_option: bool,
) -> Result<Outcome, SqlError> {
    let ssl = require.map(SslRequire::from_clause).transpose()?;
    let mut mask = 0u64;
    for p in privs {
        mask |= Priv::parse(p).ok_or_else(|| crate::parser::syntax_error(p, 0))?;
    }
    let dbname = level_db(s, level)?;
    // The granter must hold what it grants, with GRANT OPTION.
    let holds = match &dbname {
        None => me.global & mask == mask,
        Some(d) => {
            let m = me.global
                | me.dbs
                    .iter()
                    .filter(|(x, _)| db_matches(x, d))
                    .fold(0, |a, (_, m)| a | m);
            m & mask == mask
        }
    };
    if !holds || !me.grant_option {
        return Err(match &dbname {
            Some(d) => sql_err(
                code::ER_DBACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{}'@'{}' to database '{d}'",
                    me.user, me.host
                ),
            ),
            None => sql_err(
                code::ER_ACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{}'@'{}' (using password: YES)",
                    me.user, me.host
                ),
            ),
        });
    }
    if dbname.is_some() && mask & GLOBAL_ONLY != 0 && mask != ALL_GLOBAL {
        return Err(sql_err(
            1221,
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
        ));
    }
    let mut invoker = true;
    for u in users {
        let (user, host) = name_of(&u.name, me, &mut invoker);
        let pw = password_of(u)?;
        let acc = match accounts(s)?.exact(&user, &host).cloned() {
            Some(a) => a,
            // NO_AUTO_CREATE_USER: only with a password.
            None if pw.is_none() => {
                return Err(sql_err(
                    1133,
                    "Can't find any matching row in the user table",
                ))
            }
            None => create(s, &user, &host, "")?,
        };
        if let Some(pw) = pw {
            set_password(s, &acc, &pw)?;
        }
        if let Some(ssl) = &ssl {
            set_ssl(s, &acc, ssl)?;
        }
        match &dbname {
            None => {
                s.run_internal(&format!(
                    "UPDATE mysql.onelog_user SET Privileges = {}, Grant_option = {} WHERE {}",
                    quote(&store_mask(acc.global | mask)),
                    (acc.grant_option || grant_option) as i32,
                    key(&acc)
                ))?;
            }
            Some(d) => {
                let cur = acc.dbs.iter().find(|(x, _)| x == d).map_or(0, |x| x.1);
                s.run_internal(&format!(
                    "REPLACE INTO mysql.onelog_db VALUES ({}, {}, {}, {})",
                    quote(&acc.host),
                    quote(d),
                    quote(&acc.user),
                    quote(&store_mask((cur | mask) & ALL_DB))
                ))?;
            }
        }
    }
    Ok(Outcome::logged(invoker))
}

fn revoke(
    s: &mut Session,
    me: &Account,
    privs: &[String],
    level: &PrivLevel,
    users: &[(String, String)],
) -> Result<Outcome, SqlError> {
    let mut mask = 0u64;
    for p in privs {
        if p == "GRANT OPTION" {
            continue;
        }
        mask |= Priv::parse(p).ok_or_else(|| crate::parser::syntax_error(p, 0))?;
    }
    let revoke_grant = privs
        .iter()
        .any(|p| p == "GRANT OPTION" || p == "ALL PRIVILEGES" || p == "ALL");
    if !me.grant_option {
        s.require_global(Priv::CREATE_USER)?;
    }
    let dbname = level_db(s, level)?;
    let no_grant = |u: &str, h: &str| {
        sql_err(
            code::ER_NONEXISTING_GRANT,
            format!("There is no such grant defined for user '{u}' on host '{h}'"),
        )
    };
    for (u, h) in users {
        let Some(acc) = accounts(s)?.exact(u, h).cloned() else {
            return Err(no_grant(u, h));
        };
        match &dbname {
            None => {
                s.run_internal(&format!(
                    "UPDATE mysql.onelog_user SET Privileges = {}, Grant_option = {} WHERE {}",
                    quote(&store_mask(acc.global & !mask)),
                    (acc.grant_option && !revoke_grant) as i32,
                    key(&acc)
                ))?;
            }
            Some(d) => {
                let Some(cur) = acc.dbs.iter().find(|(x, _)| x == d).map(|x| x.1) else {
                    return Err(no_grant(u, h));
                };
                let at = format!("{} AND Db = {}", key(&acc), quote(d));
                let m = cur & !mask;
                if m == 0 {
                    s.run_internal(&format!("DELETE FROM mysql.onelog_db WHERE {at}"))?;
                } else {
                    s.run_internal(&format!(
                        "UPDATE mysql.onelog_db SET Privileges = {} WHERE {at}",
                        quote(&store_mask(m))
                    ))?;
                }
            }
        }
    }
    Ok(Outcome::logged(true))
}
