//! Long IN lists of constants: `x IN (1, 2, ..., 1000000)`.
//!
//! An IN list is searched item by item, which is what MariaDB's comparisons need when the
//! items have different types. A long list of constants of one kind (all integers, or all
//! strings) is instead kept sorted and without duplicates, and searched by bisection
//! wherever that gives the same answer as comparing with each item:
//!
//! - integers: [`compare`] turns any value compared with an integer into one number (the
//!   integer itself, a decimal, or a double) and compares that with the item, so it is
//!   monotone along the sorted items whatever the type of `x`;
//! - strings: only a string `x` compares by the collation's order; any other `x` compares
//!   as a number or a date, so it is compared with each item as before.
//!
//! Lists no longer than [`SORTED_FROM`] stay item by item (the planner turns them into
//! index lookups).

use std::cmp::Ordering;

use onelog_types::{Collation, Value};

use crate::expr::{bool_val, compare};

/// Lists of constants longer than this are kept sorted.
pub const SORTED_FROM: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Integer,
    Text,
}

fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::Int(_) | Value::UInt(_) => Some(Kind::Integer),
        Value::Bytes(_) => Some(Kind::Text),
        _ => None,
    }
}

/// The items of a long IN list: sorted, distinct, NULLs noted apart.
#[derive(Debug)]
pub struct SortedList {
    values: Vec<Value>,
    has_null: bool,
    kind: Kind,
    coll: Collation,
}

impl SortedList {
    /// None unless the non-NULL items are all integers or all strings.
    pub fn new(items: Vec<Value>, coll: Collation) -> Option<SortedList> {
        let has_null = items.iter().any(Value::is_null);
        let mut values: Vec<Value> = items.into_iter().filter(|v| !v.is_null()).collect();
        let kind = kind_of(values.first()?)?;
        if values.iter().any(|v| kind_of(v) != Some(kind)) {
            return None;
        }
        let cmp = |a: &Value, b: &Value| compare(a, b, coll).unwrap_or(Ordering::Equal);
        values.sort_by(cmp);
        values.dedup_by(|a, b| cmp(a, b) == Ordering::Equal);
        Some(SortedList {
            values,
            has_null,
            kind,
            coll,
        })
    }

    /// `x [NOT] IN (list)` with SQL's NULL rules: TRUE when an item equals `x`, else NULL
    /// when `x` or an item is NULL, else FALSE (negated for NOT IN).
    pub fn contains(&self, x: &Value, neg: bool) -> Value {
        if x.is_null() {
            return Value::Null;
        }
        let bisect = match self.kind {
            Kind::Integer => true,
            Kind::Text => matches!(x, Value::Bytes(_)),
        };
        let found = if bisect {
            self.values
                .binary_search_by(|v| compare(v, x, self.coll).unwrap_or(Ordering::Equal))
                .is_ok()
        } else {
            self.values
                .iter()
                .any(|v| compare(x, v, self.coll) == Some(Ordering::Equal))
        };
        if found {
            bool_val(!neg)
        } else if self.has_null {
            Value::Null
        } else {
            bool_val(neg)
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_types::Decimal;

    /// The answer of the item-by-item search `eval` gives an IN list.
    fn linear(x: &Value, items: &[Value], coll: Collation) -> Value {
        if x.is_null() {
            return Value::Null;
        }
        let mut null = false;
        for v in items {
            match compare(x, v, coll) {
                Some(Ordering::Equal) => return bool_val(true),
                None => null = true,
                _ => {}
            }
        }
        if null {
            Value::Null
        } else {
            bool_val(false)
        }
    }

    #[test]
    fn bisection_answers_as_the_item_by_item_search() {
        let ints: Vec<Value> = (-50..50)
            .map(|i| Value::Int(i * 3))
            .chain([Value::UInt(u64::MAX), Value::Int(i64::MIN), Value::Null])
            .collect();
        let texts: Vec<Value> = ["a", "B", "c", "10", "2", "2x", " 3", "é", "E", ""]
            .iter()
            .map(|s| Value::Bytes(s.as_bytes().to_vec()))
            .collect();
        let probes = [
            Value::Int(9),
            Value::Int(10),
            Value::UInt(u64::MAX),
            Value::Int(i64::MIN),
            Value::Double(9.0),
            Value::Double(9.5),
            Value::Decimal(Decimal::new(12000, 3)),
            Value::Bytes(b"12".to_vec()),
            Value::Bytes(b"12abc".to_vec()),
            Value::Bytes(b"b".to_vec()),
            Value::Bytes(b"e".to_vec()),
            Value::Bytes(b"3".to_vec()),
            Value::Int(2),
            Value::Int(3),
            Value::Double(10.0),
            Value::Null,
        ];
        for coll in [Collation::DEFAULT, Collation::Binary] {
            for items in [&ints, &texts] {
                let s = SortedList::new(items.clone(), coll).unwrap();
                for x in &probes {
                    for neg in [false, true] {
                        let want = match linear(x, items, coll) {
                            Value::Int(b) if neg => bool_val(b == 0),
                            v => v,
                        };
                        assert_eq!(s.contains(x, neg), want, "{x:?} in {items:?} ({coll:?})");
                    }
                }
            }
        }
    }

    #[test]
    fn mixed_lists_are_not_sorted() {
        let c = Collation::DEFAULT;
        assert!(SortedList::new(vec![Value::Int(1), Value::Bytes(b"1".to_vec())], c).is_none());
        assert!(SortedList::new(vec![Value::Double(1.0)], c).is_none());
        assert!(SortedList::new(vec![Value::Null], c).is_none());
        let s = SortedList::new(vec![Value::Int(2), Value::Int(1), Value::Int(2)], c).unwrap();
        assert_eq!(s.len(), 2);
    }
}
