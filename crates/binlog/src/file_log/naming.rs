//! File names of the binlog file set.

/// How binlog files are named and laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `<base>-000000`, `<base>-000001`, ... from 0, preallocated, no index file (like
    /// MariaDB 12.3's InnoDB binlog).
    Engine,
    /// `<base>.000001`, ... from 1, growing files, listed in `<base>.index` (like MariaDB's
    /// classic binlog).
    Classic,
}

impl Naming {
    pub fn first_number(self) -> u32 {
        match self {
            Naming::Engine => 0,
            Naming::Classic => 1,
        }
    }

    pub fn file_name(self, base: &str, no: u32) -> String {
        match self {
            Naming::Engine => format!("{base}-{no:06}"),
            Naming::Classic => format!("{base}.{no:06}"),
        }
    }

    /// The file number of `name`, if it is a binlog file of this set.
    pub fn parse(self, base: &str, name: &str) -> Option<u32> {
        let sep = match self {
            Naming::Engine => '-',
            Naming::Classic => '.',
        };
        let digits = name.strip_prefix(base)?.strip_prefix(sep)?;
        if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }

    pub fn index_name(base: &str) -> String {
        format!("{base}.index")
    }

    /// Name of the file RESET MASTER prepares before it removes the old files.
    pub fn reset_temp_name(self, base: &str) -> String {
        format!("{}.reset", self.file_name(base, self.first_number()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(Naming::Engine.file_name("binlog", 0), "binlog-000000");
        assert_eq!(Naming::Classic.file_name("mb", 12), "mb.000012");
        assert_eq!(Naming::Classic.file_name("mb", 1_234_567), "mb.1234567");
        assert_eq!(Naming::Engine.parse("binlog", "binlog-000042"), Some(42));
        assert_eq!(Naming::Classic.parse("mb", "mb.1234567"), Some(1_234_567));
        assert_eq!(Naming::Classic.parse("mb", "mb.index"), None);
        assert_eq!(Naming::Engine.parse("binlog", "binlog-000000.reset"), None);
        assert_eq!(Naming::Engine.parse("binlog", "binlog-00001"), None);
        assert_eq!(Naming::Engine.parse("binlog", "other-000001"), None);
    }
}
