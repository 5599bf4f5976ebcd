//! Row value encoding: the value stored under a primary-index key.
//!
//! Format: `count u16 LE | count x value`, each value `tag u8 | payload`:
//! tag 0 NULL; 1 Int i64 LE; 2 UInt u64 LE; 3 Double f64 LE; 4 Decimal (i128 LE, scale u8);
//! 9 Decimal whose mantissa needs more than i128 (256-bit LE, scale u8);
//! 5 Bytes (len u32 LE, bytes); 6 Date (year u16, month u8, day u8); 7 DateTime (year u16,
//! month, day, hour, minute, second u8, micro u32); 8 Time (negative u8, hours u32, minute,
//! second u8, micro u32). The encoding is self-describing; rows written before an
//! `ADD COLUMN` have fewer values and are completed with the column defaults on read.

use onelog_types::{Date, DateTime, Decimal, Time, Value, I256};

use crate::error::{EngineError, Result};

pub fn encode_row(row: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + row.len() * 9);
    out.extend_from_slice(&(row.len() as u16).to_le_bytes());
    for v in row {
        match v {
            Value::Null => out.push(0),
            Value::Int(i) => {
                out.push(1);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::UInt(u) => {
                out.push(2);
                out.extend_from_slice(&u.to_le_bytes());
            }
            Value::Double(d) => {
                out.push(3);
                out.extend_from_slice(&d.to_le_bytes());
            }
            Value::Decimal(d) => {
                match d.narrow() {
                    Some(m) => {
                        out.push(4);
                        out.extend_from_slice(&m.to_le_bytes());
                    }
                    None => {
                        out.push(9);
                        out.extend_from_slice(&d.mantissa.to_le_bytes());
                    }
                }
                out.push(d.scale);
            }
            Value::Bytes(b) => {
                out.push(5);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Date(d) => {
                out.push(6);
                put_date(&mut out, d);
            }
            Value::DateTime(dt) => {
                out.push(7);
                put_date(&mut out, &dt.date);
                out.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
                out.extend_from_slice(&dt.micro.to_le_bytes());
            }
            Value::Time(t) => {
                out.push(8);
                out.push(t.negative as u8);
                out.extend_from_slice(&t.hours.to_le_bytes());
                out.extend_from_slice(&[t.minute, t.second]);
                out.extend_from_slice(&t.micro.to_le_bytes());
            }
        }
    }
    out
}

fn put_date(out: &mut Vec<u8>, d: &Date) {
    out.extend_from_slice(&d.year.to_le_bytes());
    out.extend_from_slice(&[d.month, d.day]);
}

pub fn decode_row(mut b: &[u8]) -> Result<Vec<Value>> {
    let n = u16::from_le_bytes(take(&mut b, 2)?.try_into().unwrap()) as usize;
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = take(&mut b, 1)?[0];
        row.push(match tag {
            0 => Value::Null,
            1 => Value::Int(i64::from_le_bytes(arr(&mut b)?)),
            2 => Value::UInt(u64::from_le_bytes(arr(&mut b)?)),
            3 => Value::Double(f64::from_le_bytes(arr(&mut b)?)),
            4 => {
                let m = i128::from_le_bytes(arr(&mut b)?);
                let s = take(&mut b, 1)?[0];
                Value::Decimal(Decimal::new(m, s))
            }
            9 => {
                let m = I256::from_le_bytes(arr(&mut b)?);
                let s = take(&mut b, 1)?[0];
                Value::Decimal(Decimal::new(m, s))
            }
            5 => {
                let len = u32::from_le_bytes(arr(&mut b)?) as usize;
                Value::Bytes(take(&mut b, len)?.to_vec())
            }
            6 => Value::Date(get_date(&mut b)?),
            7 => {
                let date = get_date(&mut b)?;
                let hms = take(&mut b, 3)?;
                let (hour, minute, second) = (hms[0], hms[1], hms[2]);
                let micro = u32::from_le_bytes(arr(&mut b)?);
                Value::DateTime(DateTime {
                    date,
                    hour,
                    minute,
                    second,
                    micro,
                })
            }
            8 => {
                let negative = take(&mut b, 1)?[0] != 0;
                let hours = u32::from_le_bytes(arr(&mut b)?);
                let ms = take(&mut b, 2)?;
                let (minute, second) = (ms[0], ms[1]);
                let micro = u32::from_le_bytes(arr(&mut b)?);
                Value::Time(Time {
                    negative,
                    hours,
                    minute,
                    second,
                    micro,
                })
            }
            _ => return Err(EngineError::Corrupt(format!("bad row value tag {tag}"))),
        });
    }
    Ok(row)
}

fn get_date(b: &mut &[u8]) -> Result<Date> {
    let year = u16::from_le_bytes(arr(b)?);
    let md = take(b, 2)?;
    Ok(Date {
        year,
        month: md[0],
        day: md[1],
    })
}

fn arr<const N: usize>(b: &mut &[u8]) -> Result<[u8; N]> {
    Ok(take(b, N)?.try_into().unwrap())
}

fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    if b.len() < n {
        return Err(EngineError::Corrupt("truncated row".into()));
    }
    let (x, rest) = b.split_at(n);
    *b = rest;
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let row = vec![
            Value::Null,
            Value::Int(-5),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Decimal("-12.34".parse().unwrap()),
            Value::Bytes(vec![1, 2, 3]),
            Value::DateTime(DateTime::from_unix(1_600_000_000, 7)),
            Value::Date(Date {
                year: 2020,
                month: 2,
                day: 29,
            }),
            Value::Time(Time::from_micros(-3_600_000_001)),
        ];
        assert_eq!(decode_row(&encode_row(&row)).unwrap(), row);
        assert!(decode_row(&encode_row(&row)[..10]).is_err());
    }
}
