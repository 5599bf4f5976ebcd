//! Converting values to UUID/INET6 (`CAST(x AS UUID)`, comparisons): a string is read as
//! the type's text or, when 16 bytes long, as its memory form; anything else is NULL with
//! warning 1292 "Incorrect uuid value: 'x'".

use onelog_types::FixedBin;

use super::*;

/// `v` as a value of type `f`: its canonical text, or (`key`) its 16-byte sort form.
pub(super) fn cast(v: Value, f: FixedBin, key: bool, cx: &Ctx<'_>) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    let parsed = match &v {
        Value::Bytes(b) => f.parse(b),
        _ => None,
    };
    match parsed {
        Some(m) if key => Value::Bytes(f.sort_form(&m).to_vec()),
        Some(m) => Value::Bytes(f.format(&m).into_bytes()),
        None => {
            if let Some(s) = cx.subs {
                s.warn(crate::sql_err(
                    code::ER_TRUNCATED_WRONG_VALUE,
                    format!("Incorrect {} value: '{}'", f.name(), to_string(&v)),
                ));
            }
            Value::Null
        }
    }
}

/// The canonical text of sort form `v` (NULL stays NULL).
pub(super) fn from_key(v: Value, f: FixedBin) -> Value {
    match v {
        Value::Bytes(b) => match <[u8; 16]>::try_from(b.as_slice()) {
            Ok(s) => Value::Bytes(f.format(&f.from_sort_form(&s)).into_bytes()),
            Err(_) => Value::Bytes(b),
        },
        other => other,
    }
}
