//! CHECKSUM TABLE's value, computed as MariaDB 10.11 computes it
//! (`handler::calculate_checksum`): the sum, modulo 2^32, of a CRC32 (zlib's) per row over
//! the row's record format:
//! - the null bitmap, if the table has one: one bit per nullable column in column order,
//!   from bit 0, except that a table without VARCHAR or BLOB/TEXT columns (a fixed-length
//!   record) keeps bit 0 for its "deleted" flag (set) and starts at bit 1; the unused high
//!   bits of the last byte are set;
//! - then each non-NULL column: VARCHAR and BLOB/TEXT as their bytes, every other type
//!   as its bytes in the record (integers and floats little-endian, DECIMAL in its binary
//!   form, DATE 3 bytes, TIME/DATETIME/TIMESTAMP in MariaDB's "2" formats, CHAR padded
//!   with spaces to its length in bytes and BINARY with zero bytes). These are the
//!   formats of binlog row images for every type but the strings.
//!
//! A column onelog stores differently from MariaDB makes the value differ: CHAR columns
//! declared in a single-byte character set (latin1, ascii: onelog keeps them as utf8mb4, so
//! their padded length is 4 bytes per character, MariaDB's 1).

use onelog_binlog::rows::{pack_value, ColumnSpec};
use onelog_engine::TableDef;
use onelog_types::{ColumnType, Value, UTF8MB4_MAXLEN};

/// The per-table part of the computation.
pub struct RowChecksum {
    specs: Vec<ColumnSpec>,
    /// Bit of each column in the null bitmap (None: NOT NULL).
    null_bit: Vec<Option<usize>>,
    null_bytes: usize,
    /// Unused high bits of the last null byte, set.
    null_mask: u8,
    /// Bit 0 is the deleted flag (fixed-length records).
    fixed: bool,
    types: Vec<ColumnType>,
}

impl RowChecksum {
    pub fn new(t: &TableDef) -> RowChecksum {
        let fixed = !t
            .columns
            .iter()
            .any(|c| matches!(c.ty, ColumnType::Varchar { .. } | ColumnType::Blob { .. }));
        let mut next = fixed as usize;
        let null_bit = t
            .columns
            .iter()
            .map(|c| {
                c.nullable.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        let last = next % 8;
        RowChecksum {
            specs: t
                .columns
                .iter()
                .map(|c| ColumnSpec::from_type(&c.ty))
                .collect(),
            null_bit,
            null_bytes: next.div_ceil(8),
            null_mask: if last == 0 {
                0
            } else {
                (256 - (1u32 << last)) as u8
            },
            fixed,
            types: t.columns.iter().map(|c| c.ty).collect(),
        }
    }

    /// The CRC32 of one row (its columns first; a hidden row id after them is ignored).
    pub fn row(&self, row: &[Value], buf: &mut Vec<u8>) -> u32 {
        buf.clear();
        if self.null_bytes > 0 {
            let start = buf.len();
            buf.resize(start + self.null_bytes, 0);
            for (i, bit) in self.null_bit.iter().enumerate() {
                if let Some(b) = bit {
                    if row[i].is_null() {
                        buf[start + b / 8] |= 1 << (b % 8);
                    }
                }
            }
            buf[start + self.null_bytes - 1] |= self.null_mask;
            if self.fixed {
                buf[start] |= 1;
            }
        }
        for (i, ty) in self.types.iter().enumerate() {
            let v = &row[i];
            if v.is_null() {
                continue;
            }
            match *ty {
                ColumnType::Varchar { .. } | ColumnType::Blob { .. } => {
                    if let Some(b) = v.as_bytes() {
                        buf.extend_from_slice(b);
                    }
                }
                ColumnType::Char { len, binary, .. } => {
                    let b = v.as_bytes().unwrap_or_default();
                    let width = if binary { len } else { len * UTF8MB4_MAXLEN } as usize;
                    buf.extend_from_slice(b);
                    let pad = if binary { 0 } else { b' ' };
                    buf.resize(buf.len() + width.saturating_sub(b.len()), pad);
                }
                _ => {
                    // A value the column could not hold cannot be stored either.
                    let _ = pack_value(buf, &self.specs[i], v);
                }
            }
        }
        crc32fast::hash(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_engine::{ColumnDef, IndexDef};
    use onelog_types::Collation;

    fn table(cols: &[(ColumnType, bool)]) -> TableDef {
        TableDef {
            id: 1,
            db: "d".into(),
            name: "t".into(),
            columns: cols
                .iter()
                .enumerate()
                .map(|(i, (ty, nullable))| ColumnDef {
                    name: format!("c{i}"),
                    ty: *ty,
                    nullable: *nullable,
                    default: None,
                    auto_increment: false,
                    default_now: false,
                    on_update_now: false,
                    default_expr: None,
                    comment: String::new(),
                    display_width: None,
                    num: Default::default(),
                })
                .collect(),
            indexes: vec![IndexDef {
                id: 1,
                name: "PRIMARY".into(),
                columns: vec![],
                prefix_lens: vec![],
                unique: true,
                primary: true,
            }],
            hidden_pk: true,
            comment: String::new(),
            engine_name: "InnoDB".into(),
            auto_increment_start: None,
            collation: Collation::DEFAULT,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            sequence: false,
            create_options: Vec::new(),
            create_time: None,
        }
    }

    fn sum(t: &TableDef, rows: &[Vec<Value>]) -> u32 {
        let c = RowChecksum::new(t);
        let mut buf = Vec::new();
        rows.iter()
            .fold(0u32, |a, r| a.wrapping_add(c.row(r, &mut buf)))
    }

    const INT: ColumnType = ColumnType::Int {
        bytes: 4,
        unsigned: false,
    };

    /// Values a real MariaDB 10.11 returned for the same tables and rows.
    #[test]
    fn as_mariadb() {
        let vc = ColumnType::varchar(10, Collation::DEFAULT);
        let t = table(&[(INT, true), (vc, true)]);
        let rows = vec![
            vec![Value::Int(1), Value::str("a")],
            vec![Value::Int(2), Value::Null],
            vec![Value::Null, Value::str("xyz")],
        ];
        assert_eq!(sum(&t, &rows), 2969453692);
        let t = table(&[(INT, true), (INT, true)]);
        assert_eq!(sum(&t, &[vec![Value::Int(1), Value::Null]]), 3459908756);
        let ch = ColumnType::Char {
            len: 2,
            binary: false,
            collation: Collation::DEFAULT,
        };
        let t = table(&[(INT, false), (ch, true)]);
        assert_eq!(sum(&t, &[vec![Value::Int(1), Value::str("x")]]), 2308130623);
        let t = table(&[(INT, false)]);
        assert_eq!(sum(&t, &[vec![Value::Int(1)]]), 3036305396);
        let t = table(&[(INT, false), (vc, false)]);
        assert_eq!(sum(&t, &[vec![Value::Int(1), Value::str("x")]]), 2778474403);
    }
}
