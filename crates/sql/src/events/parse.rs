//! Parsing of CREATE / ALTER / DROP EVENT, SHOW EVENTS and SHOW CREATE EVENT on the
//! stored-program tokens (`routines::lex`). Times and interval amounts are kept as the
//! expression text written; the session evaluates them when the statement runs.

use onelog_types::SqlError;
use sqlparser::tokenizer::Token;

use crate::parser::ShowFilter;
use crate::routines::lex::tokenize;
use crate::routines::parse::{expr_end, show_filter, Cur};

/// An event statement.
#[derive(Debug, Clone)]
pub enum EventStmt {
    Create(Box<CreateEvent>),
    Alter(Box<AlterEvent>),
    Drop {
        if_exists: bool,
        db: Option<String>,
        name: String,
    },
    ShowCreate {
        db: Option<String>,
        name: String,
    },
    Show {
        db: Option<String>,
        filter: Option<Box<ShowFilter>>,
    },
}

/// `ON SCHEDULE ...` as written.
#[derive(Debug, Clone)]
pub enum ScheduleText {
    At(String),
    Every {
        amount: String,
        unit: String,
        starts: Option<String>,
        ends: Option<String>,
    },
}

/// ENABLE / DISABLE / DISABLE ON SLAVE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Status {
    Enabled,
    Disabled,
    SlavesideDisabled,
}

impl Status {
    /// As SHOW EVENTS and information_schema.EVENTS show it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Enabled => "ENABLED",
            Status::Disabled => "DISABLED",
            Status::SlavesideDisabled => "SLAVESIDE_DISABLED",
        }
    }

    /// As SHOW CREATE EVENT writes it.
    pub fn clause(self) -> &'static str {
        match self {
            Status::Enabled => "ENABLE",
            Status::Disabled => "DISABLE",
            Status::SlavesideDisabled => "DISABLE ON SLAVE",
        }
    }
}

#[derive(Debug, Clone)]
pub struct CreateEvent {
    pub or_replace: bool,
    pub if_not_exists: bool,
    /// `Some(("", ""))`: DEFINER = CURRENT_USER.
    pub definer: Option<(String, String)>,
    pub db: Option<String>,
    pub name: String,
    pub schedule: ScheduleText,
    pub preserve: Option<bool>,
    pub status: Option<Status>,
    pub comment: Option<String>,
    pub body: String,
}

/// ALTER EVENT: each clause given, or None.
#[derive(Debug, Clone)]
pub struct AlterEvent {
    pub definer: Option<(String, String)>,
    pub db: Option<String>,
    pub name: String,
    pub schedule: Option<ScheduleText>,
    pub preserve: Option<bool>,
    pub rename: Option<(Option<String>, String)>,
    pub status: Option<Status>,
    pub comment: Option<String>,
    pub body: Option<String>,
}

/// Words that end a time expression or interval amount in a schedule.
const STOPS: &[&str] = &[
    "ON", "STARTS", "ENDS", "ENABLE", "DISABLE", "COMMENT", "DO", "RENAME",
];

/// The INTERVAL units an EVERY clause names.
pub(crate) const UNITS: &[&str] = &[
    "YEAR",
    "QUARTER",
    "MONTH",
    "WEEK",
    "DAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "MICROSECOND",
    "YEAR_MONTH",
    "DAY_HOUR",
    "DAY_MINUTE",
    "DAY_SECOND",
    "HOUR_MINUTE",
    "HOUR_SECOND",
    "MINUTE_SECOND",
    "DAY_MICROSECOND",
    "HOUR_MICROSECOND",
    "MINUTE_MICROSECOND",
    "SECOND_MICROSECOND",
];

/// Words that name what a CREATE / ALTER statement creates; the first one in the
/// statement's head decides whether it is about an event.
const OBJECT_WORDS: &[&str] = &[
    "EVENT",
    "TABLE",
    "VIEW",
    "FUNCTION",
    "PROCEDURE",
    "TRIGGER",
    "INDEX",
    "DATABASE",
    "SCHEMA",
    "USER",
    "ROLE",
    "SEQUENCE",
    "SERVER",
    "TABLESPACE",
];

/// Whether a statement's first words (upper-cased; "" for other tokens) start an event
/// statement.
pub(crate) fn detect(words: &[String]) -> bool {
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    match w(0) {
        "CREATE" | "ALTER" => {
            words
                .iter()
                .skip(1)
                .find(|x| OBJECT_WORDS.contains(&x.as_str()))
                == Some(&"EVENT".to_string())
        }
        "DROP" => w(1) == "EVENT",
        "SHOW" => w(1) == "EVENTS" || (w(1) == "CREATE" && w(2) == "EVENT"),
        _ => false,
    }
}

/// Parses an event statement (see [`detect`]). Executable comments (`/*!50106 ... */`,
/// what mariadb-dump writes) are opened in place first.
pub(crate) fn parse(text: &str) -> Result<EventStmt, SqlError> {
    let opened;
    let text = if text.contains("/*!") {
        opened = crate::parser::rewrite::open_executable_comments(text);
        opened.as_str()
    } else {
        text
    };
    let toks = tokenize(text)?;
    let mut c = Cur::new(text, &toks);
    let first = c.peek_word().unwrap_or_default();
    c.i += 1;
    let stmt = match first.as_str() {
        "DROP" => {
            c.expect_word("EVENT")?;
            let if_exists = c.words(&["IF", "EXISTS"]);
            let (db, name) = c.qualified()?;
            EventStmt::Drop {
                if_exists,
                db,
                name,
            }
        }
        "SHOW" => {
            if c.word("CREATE") {
                c.expect_word("EVENT")?;
                let (db, name) = c.qualified()?;
                EventStmt::ShowCreate { db, name }
            } else {
                c.expect_word("EVENTS")?;
                let db = if c.word("FROM") || c.word("IN") {
                    Some(c.ident()?)
                } else {
                    None
                };
                let filter = show_filter(&mut c)?.map(Box::new);
                EventStmt::Show { db, filter }
            }
        }
        "CREATE" => EventStmt::Create(Box::new(create(&mut c)?)),
        "ALTER" => EventStmt::Alter(Box::new(alter(&mut c)?)),
        _ => return Err(c.err()),
    };
    if !c.at_end() {
        return Err(c.err());
    }
    Ok(stmt)
}

fn definer(c: &mut Cur) -> Result<Option<(String, String)>, SqlError> {
    if !c.word("DEFINER") {
        return Ok(None);
    }
    c.expect_tok(&Token::Eq)?;
    Ok(Some(c.user()?.unwrap_or_default()))
}

fn create(c: &mut Cur) -> Result<CreateEvent, SqlError> {
    let or_replace = c.words(&["OR", "REPLACE"]);
    let definer = definer(c)?;
    c.expect_word("EVENT")?;
    let if_not_exists = c.words(&["IF", "NOT", "EXISTS"]);
    if or_replace && if_not_exists {
        return Err(crate::sql_err(
            1221,
            "Incorrect usage of OR REPLACE and IF NOT EXISTS",
        ));
    }
    let (db, name) = c.qualified()?;
    c.expect_word("ON")?;
    c.expect_word("SCHEDULE")?;
    let schedule = schedule(c)?;
    let preserve = completion(c)?;
    let status = status(c)?;
    let comment = comment(c)?;
    c.expect_word("DO")?;
    let body = body(c)?;
    Ok(CreateEvent {
        or_replace,
        if_not_exists,
        definer,
        db,
        name,
        schedule,
        preserve,
        status,
        comment,
        body,
    })
}

fn alter(c: &mut Cur) -> Result<AlterEvent, SqlError> {
    let definer = definer(c)?;
    c.expect_word("EVENT")?;
    let (db, name) = c.qualified()?;
    let schedule = if c.words(&["ON", "SCHEDULE"]) {
        Some(schedule(c)?)
    } else {
        None
    };
    let preserve = completion(c)?;
    let rename = if c.words(&["RENAME", "TO"]) {
        Some(c.qualified()?)
    } else {
        None
    };
    let status = status(c)?;
    let comment = comment(c)?;
    let body = if c.word("DO") { Some(body(c)?) } else { None };
    let a = AlterEvent {
        definer,
        db,
        name,
        schedule,
        preserve,
        rename,
        status,
        comment,
        body,
    };
    if a.schedule.is_none()
        && a.preserve.is_none()
        && a.rename.is_none()
        && a.status.is_none()
        && a.comment.is_none()
        && a.body.is_none()
    {
        return Err(c.err());
    }
    Ok(a)
}

/// The text of an expression that runs to one of `stops` (or the end).
fn expr_text(c: &mut Cur, stops: &[&str]) -> Result<String, SqlError> {
    let a = c.i;
    let end = expr_end(c, stops)?;
    if end == a {
        return Err(c.err());
    }
    c.i = end;
    Ok(c.slice(a, end).to_string())
}

fn schedule(c: &mut Cur) -> Result<ScheduleText, SqlError> {
    if c.word("AT") {
        return Ok(ScheduleText::At(expr_text(c, STOPS)?));
    }
    c.expect_word("EVERY")?;
    let amount = expr_text(c, UNITS)?;
    let unit = c.peek_word().filter(|w| UNITS.contains(&w.as_str()));
    let Some(unit) = unit else {
        return Err(c.err());
    };
    c.i += 1;
    let starts = if c.word("STARTS") {
        Some(expr_text(c, STOPS)?)
    } else {
        None
    };
    let ends = if c.word("ENDS") {
        Some(expr_text(c, STOPS)?)
    } else {
        None
    };
    Ok(ScheduleText::Every {
        amount,
        unit,
        starts,
        ends,
    })
}

fn completion(c: &mut Cur) -> Result<Option<bool>, SqlError> {
    if !c.words(&["ON", "COMPLETION"]) {
        return Ok(None);
    }
    let not = c.word("NOT");
    c.expect_word("PRESERVE")?;
    Ok(Some(!not))
}

fn status(c: &mut Cur) -> Result<Option<Status>, SqlError> {
    Ok(if c.word("ENABLE") {
        Some(Status::Enabled)
    } else if c.words(&["DISABLE", "ON", "SLAVE"]) {
        Some(Status::SlavesideDisabled)
    } else if c.word("DISABLE") {
        Some(Status::Disabled)
    } else {
        None
    })
}

fn comment(c: &mut Cur) -> Result<Option<String>, SqlError> {
    if c.word("COMMENT") {
        Ok(Some(c.string()?))
    } else {
        Ok(None)
    }
}

/// The body: the rest of the statement, as written.
fn body(c: &mut Cur) -> Result<String, SqlError> {
    if c.at_end() {
        return Err(c.err());
    }
    let body = c.text[c.pos()..].trim().to_string();
    c.i = c.toks.len();
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_uppercase).collect()
    }

    #[test]
    fn detects_event_statements_only() {
        assert!(detect(&words("CREATE EVENT e ON SCHEDULE")));
        assert!(detect(&words("CREATE DEFINER = x EVENT e")));
        assert!(detect(&words("ALTER EVENT e DISABLE")));
        assert!(detect(&words("DROP EVENT e")));
        assert!(detect(&words("SHOW EVENTS")));
        assert!(detect(&words("SHOW CREATE EVENT e")));
        assert!(!detect(&words("CREATE TABLE event (a int)")));
        assert!(!detect(&words("ALTER TABLE event ADD b int")));
        assert!(!detect(&words("DROP TABLE event")));
    }

    #[test]
    fn parses_create_and_alter() {
        let EventStmt::Create(c) = parse(
            "CREATE DEFINER=`u`@`h` EVENT IF NOT EXISTS d.e ON SCHEDULE EVERY '1:2' \
             HOUR_MINUTE STARTS NOW() + INTERVAL 1 DAY ENDS '2030-01-01' ON COMPLETION \
             PRESERVE DISABLE ON SLAVE COMMENT 'c' DO BEGIN SELECT 1; END",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.definer, Some(("u".into(), "h".into())));
        assert!(c.if_not_exists);
        assert_eq!((c.db.as_deref(), c.name.as_str()), (Some("d"), "e"));
        let ScheduleText::Every {
            amount,
            unit,
            starts,
            ends,
        } = c.schedule
        else {
            panic!()
        };
        assert_eq!(amount, "'1:2'");
        assert_eq!(unit, "HOUR_MINUTE");
        assert_eq!(starts.as_deref(), Some("NOW() + INTERVAL 1 DAY"));
        assert_eq!(ends.as_deref(), Some("'2030-01-01'"));
        assert_eq!(c.preserve, Some(true));
        assert_eq!(c.status, Some(Status::SlavesideDisabled));
        assert_eq!(c.comment.as_deref(), Some("c"));
        assert_eq!(c.body, "BEGIN SELECT 1; END");

        let EventStmt::Alter(a) = parse("ALTER EVENT e RENAME TO d2.f ENABLE").unwrap() else {
            panic!()
        };
        assert_eq!(a.rename, Some((Some("d2".into()), "f".into())));
        assert_eq!(a.status, Some(Status::Enabled));
        assert!(parse("ALTER EVENT e").is_err());
        assert!(parse("ALTER EVENT e COMMENT 'x' DISABLE").is_err());
    }

    #[test]
    fn opens_dump_comments() {
        let EventStmt::Create(c) = parse(
            "/*!50106 CREATE*/ /*!50117 DEFINER=`root`@`localhost`*/ /*!50106 EVENT `e` ON \
             SCHEDULE AT '2030-01-01 00:00:00' ON COMPLETION NOT PRESERVE ENABLE DO insert \
             into t values (1) \n*/",
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(c.body, "insert into t values (1)");
        assert_eq!(c.preserve, Some(false));
    }
}
