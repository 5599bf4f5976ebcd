//! Collations of text values: how strings compare, sort, group and form index keys.
//!
//! onelog stores every text column as utf8mb4 and knows three collations:
//! - [`Collation::Binary`] (`binary`): bytes, NO PAD (`'a' <> 'a '`). BINARY, VARBINARY and
//!   BLOB columns, `CAST(... AS BINARY)`, `BINARY x`, `_binary '...'` and hex literals.
//! - [`Collation::Utf8mb4Bin`] (`utf8mb4_bin`): bytes (the code point order of UTF-8) with
//!   trailing spaces ignored (PAD SPACE, approximated by stripping trailing spaces before
//!   comparing, see [`Collation::compare`]).
//! - [`Collation::Utf8mb4GeneralCi`] (`utf8mb4_general_ci`, MariaDB's default): each
//!   character of the Basic Multilingual Plane compares by a 16-bit weight, its Unicode 3.0
//!   simple uppercase letter with accents removed for Latin, Greek and Cyrillic letters
//!   (`'a' = 'A' = 'á' = 'Ä'`, `'ß' = 's'`, `'æ' <> 'ae'`), see [`general_ci_weight`];
//!   characters outside the BMP (emoji) all weigh 0xFFFD. PAD SPACE, exactly as MariaDB:
//!   the shorter string is compared as if padded with spaces, so `'a\t' < 'a'`.
//!
//! Other charset and collation names MariaDB knows map to these three (see
//! [`Collation::from_name`]): `latin1`, `utf8mb3`/`utf8` and `ascii` text is stored as utf8mb4
//! anyway, so `*_ci` collations become utf8mb4_general_ci (`utf8mb4_unicode_ci` and the UCA
//! collations are approximated by it) and `*_bin` / `*_cs` collations become utf8mb4_bin.
//!
//! The engine's order-preserving key encoding of general_ci values (see
//! `onelog-engine::keycode`) is built from [`Collation::weights`], so keys and expressions
//! agree on equality and order.

use std::cmp::Ordering;

/// A collation (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Collation {
    #[serde(rename = "binary")]
    Binary,
    #[serde(rename = "utf8mb4_bin")]
    Utf8mb4Bin,
    #[serde(rename = "utf8mb4_general_ci")]
    Utf8mb4GeneralCi,
}

/// How strongly an expression's collation binds (MariaDB's `Derivation`): when two
/// operands' collations differ, the lower derivation wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Derivation {
    /// `x COLLATE name`.
    Explicit,
    /// A column (or an expression over one).
    Implicit,
    /// A system constant (`USER()`, `DATABASE()`, ...).
    SysConst,
    /// A literal or a function of literals.
    Coercible,
    /// A number (no collation).
    Numeric,
    /// NULL.
    Ignorable,
}

/// Weight of every character outside the Basic Multilingual Plane under general_ci.
pub const REPLACEMENT_WEIGHT: u16 = 0xFFFD;

impl Collation {
    /// The server default (`collation_server`, `collation_connection`) and the collation of
    /// new text columns without a COLLATE clause.
    pub const DEFAULT: Collation = Collation::Utf8mb4GeneralCi;

    /// The collation of text columns in catalogs written before onelog recorded collations:
    /// their index keys were built bytewise, so they keep comparing bytewise.
    pub const LEGACY: Collation = Collation::Utf8mb4Bin;

    pub fn legacy() -> Collation {
        Collation::LEGACY
    }

    /// MariaDB's name of the collation.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
        }
    }

    /// MariaDB's collation id (sent in column definitions and binlog table maps).
    pub fn id(self) -> u16 {
        match self {
            Collation::Binary => 63,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb4GeneralCi => 45,
        }
    }

    /// The character set the collation belongs to.
    pub fn charset(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            _ => "utf8mb4",
        }
    }

    /// Whether the collation folds case (and accents).
    pub fn is_ci(self) -> bool {
        self == Collation::Utf8mb4GeneralCi
    }

    /// The collation a collation name maps to (case-insensitive): the three native names,
    /// and `*_ci` / `*_bin` / `*_cs` of the charsets stored as utf8mb4 (`utf8mb4`, `utf8mb3`,
    /// `utf8`, `latin1`, `ascii`). None for unknown names (MariaDB error 1273).
    pub fn from_name(name: &str) -> Option<Collation> {
        let n = name.to_ascii_lowercase();
        if n == "binary" {
            return Some(Collation::Binary);
        }
        let (cs, rest) = n.split_once('_')?;
        Self::charset_default(cs)?;
        if cs == "binary" {
            return None;
        }
        if rest.ends_with("_ci") || rest == "ci" {
            Some(Collation::Utf8mb4GeneralCi)
        } else if rest == "bin" || rest.ends_with("_bin") || rest.ends_with("_cs") {
            Some(Collation::Utf8mb4Bin)
        } else {
            None
        }
    }

    /// The charset part of a collation name (`latin1` for `latin1_swedish_ci`), lowercase.
    pub fn charset_of_name(name: &str) -> String {
        let n = name.to_ascii_lowercase();
        match n.split_once('_') {
            Some((cs, _)) => cs.to_string(),
            None => n,
        }
    }

    /// The default collation of a character set name (case-insensitive): general_ci for the
    /// text charsets, binary for `binary`; None for unknown charsets (MariaDB error 1115).
    pub fn charset_default(charset: &str) -> Option<Collation> {
        match charset.to_ascii_lowercase().as_str() {
            "utf8mb4" | "utf8mb3" | "utf8" | "latin1" | "ascii" => {
                Some(Collation::Utf8mb4GeneralCi)
            }
            "binary" => Some(Collation::Binary),
            _ => None,
        }
    }

    /// Compares two strings. Invalid UTF-8 under general_ci weighs like U+FFFD per byte.
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Utf8mb4Bin => trim_trailing_spaces(a).cmp(trim_trailing_spaces(b)),
            Collation::Utf8mb4GeneralCi => {
                let mut x = Weights::new(a);
                let mut y = Weights::new(b);
                loop {
                    match (x.next(), y.next()) {
                        (Some(p), Some(q)) => {
                            if p != q {
                                return p.cmp(&q);
                            }
                        }
                        (None, None) => return Ordering::Equal,
                        // PAD SPACE: the rest of the longer string against spaces.
                        (Some(p), None) => return rest_vs_spaces(p, x),
                        (None, Some(q)) => return rest_vs_spaces(q, y).reverse(),
                    }
                }
            }
        }
    }

    /// Whether two strings are equal under the collation.
    pub fn equal(self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) == Ordering::Equal
    }

    /// Appends a canonical form of `s`: two strings get the same key exactly when they are
    /// equal under the collation (for hashing: GROUP BY, DISTINCT). The key is not
    /// order-preserving and not prefix-free; prefix it with its length when concatenating.
    pub fn fold_key(self, s: &[u8], out: &mut Vec<u8>) {
        match self {
            Collation::Binary => out.extend_from_slice(s),
            Collation::Utf8mb4Bin => out.extend_from_slice(trim_trailing_spaces(s)),
            Collation::Utf8mb4GeneralCi => {
                for w in Weights::new(trim_trailing_spaces(s)) {
                    out.extend_from_slice(&w.to_be_bytes());
                }
            }
        }
    }

    /// The general_ci weights of the characters of `s` (for every collation: the weight
    /// string used by the engine's key encoding of general_ci values).
    pub fn weights(s: &[u8]) -> Weights<'_> {
        Weights::new(s)
    }

    /// Whether two characters are equal under the collation (LIKE's per-character match).
    pub fn char_eq(self, a: char, b: char) -> bool {
        match self {
            Collation::Utf8mb4GeneralCi => general_ci_weight(a) == general_ci_weight(b),
            _ => a == b,
        }
    }

    /// Aggregates the collations of two operands as MariaDB does for comparisons and
    /// string functions: the stronger derivation wins; at equal derivation `binary` wins,
    /// then `utf8mb4_bin` (a `_bin` collation beats `_ci` of the same charset).
    pub fn aggregate(
        a: (Collation, Derivation),
        b: (Collation, Derivation),
    ) -> (Collation, Derivation) {
        if a.0 == b.0 {
            return (a.0, a.1.min(b.1));
        }
        match a.1.cmp(&b.1) {
            Ordering::Less => a,
            Ordering::Greater => b,
            Ordering::Equal => {
                let rank = |c: Collation| match c {
                    Collation::Binary => 0,
                    Collation::Utf8mb4Bin => 1,
                    Collation::Utf8mb4GeneralCi => 2,
                };
                if rank(a.0) <= rank(b.0) {
                    a
                } else {
                    b
                }
            }
        }
    }
}

/// The collation names of `SHOW COLLATION` / `information_schema.COLLATIONS`.
pub const ALL: [Collation; 3] = [
    Collation::Utf8mb4GeneralCi,
    Collation::Utf8mb4Bin,
    Collation::Binary,
];

fn rest_vs_spaces(first: u16, rest: Weights) -> Ordering {
    for w in std::iter::once(first).chain(rest) {
        if w != 0x20 {
            return w.cmp(&0x20);
        }
    }
    Ordering::Equal
}

/// `b` without trailing spaces (0x20).
pub fn trim_trailing_spaces(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
    &b[..end]
}

/// Iterator over the general_ci weights of a UTF-8 string (see [`general_ci_weight`]).
pub struct Weights<'a> {
    s: &'a [u8],
}

impl<'a> Weights<'a> {
    fn new(s: &'a [u8]) -> Self {
        Weights { s }
    }
}

impl Iterator for Weights<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        let (&b0, _) = self.s.split_first()?;
        if b0 < 0x80 {
            self.s = &self.s[1..];
            return Some(b0.to_ascii_uppercase() as u16);
        }
        let len = match b0 {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        let c = self
            .s
            .get(..len)
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| p.chars().next());
        match c {
            Some(c) => {
                self.s = &self.s[len..];
                Some(general_ci_weight(c))
            }
            None => {
                // Not UTF-8: one replacement weight per byte.
                self.s = &self.s[1..];
                Some(REPLACEMENT_WEIGHT)
            }
        }
    }
}

/// The utf8mb4_general_ci weight of a character.
///
/// Characters outside the BMP weigh [`REPLACEMENT_WEIGHT`]. In the Latin, Greek and Cyrillic
/// blocks the weight is read from tables: the Unicode 3.0 uppercase of the character's
/// base letter (its canonical decomposition without combining marks), so `'é'`, `'È'` and
/// `'e'` all weigh `'E'`; a few letters without decomposition keep their own uppercase
/// (`'ø'` weighs `'Ø'`, `'æ'` `'Æ'`, `'đ'` `'Đ'`), `'ß'` weighs `'S'`. Elsewhere the weight
/// is the character's simple uppercase mapping, except for scripts and letters that got
/// case mappings after Unicode 3.0 (Georgian, Cherokee, the Latin Extended-C/D letters...),
/// which weigh themselves as in MariaDB. The whole BMP is checked against MariaDB 10.11's
/// `WEIGHT_STRING(... COLLATE utf8mb4_general_ci)` by the SQL layer's tests.
pub fn general_ci_weight(c: char) -> u16 {
    let cp = c as u32;
    if cp < 0x80 {
        (c as u8).to_ascii_uppercase() as u16
    } else if cp > 0xFFFF {
        REPLACEMENT_WEIGHT
    } else {
        weight_table()[cp as usize]
    }
}

fn weight_table() -> &'static [u16] {
    static TABLE: std::sync::OnceLock<Vec<u16>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t: Vec<u16> = (0..=0xFFFFu32)
            .map(|cp| match char::from_u32(cp) {
                Some(c) => simple_upper(c),
                None => cp as u16,
            })
            .collect();
        for (start, weights) in TABLES {
            for (i, w) in weights.chars().enumerate() {
                t[*start as usize + i] = w as u16;
            }
        }
        t
    })
}

/// The single-character uppercase mapping of `c` within the BMP, ignoring mappings that
/// came after Unicode 3.0.
fn simple_upper(c: char) -> u16 {
    let cp = c as u32;
    let mut up = c.to_uppercase();
    let w = match (up.next(), up.next()) {
        (Some(u), None) => u as u32,
        _ => cp,
    };
    if w > 0xFFFF || late_case(cp) || late_case(w) {
        cp as u16
    } else {
        w as u16
    }
}

/// Characters whose case mappings came after Unicode 3.0 (general_ci ignores them).
fn late_case(cp: u32) -> bool {
    matches!(
        cp,
        0x0220..=0x024F
            | 0x0500..=0x052F
            | 0x10A0..=0x10FF
            | 0x13A0..=0x13FF
            | 0x1C80..=0x1CBF
            | 0x1D00..=0x1DBF
            | 0x2132
            | 0x214E
            | 0x2183..=0x2184
            | 0x2C00..=0x2DFF
            | 0xA640..=0xA7FF
            | 0xAB70..=0xABBF
    )
}

/// Weights of consecutive characters from a start code point: the Latin, Greek and Cyrillic
/// blocks, where general_ci removes accents. Each character of a string is the weight of
/// one code point (the base letter's uppercase), 32 per line.
const TABLES: &[(u32, &str)] = &[
    // Latin-1 Supplement, Latin Extended-A and -B: U+00C0..=U+024F
    (
        0x00C0,
        "AAAAAAÆCEEEEIIIIÐNOOOOO×ØUUUUYÞS\
         AAAAAAÆCEEEEIIIIÐNOOOOO÷ØUUUUYÞY\
         AAAAAACCCCCCCCDDĐĐEEEEEEEEEEGGGG\
         GGGGHHĦĦIIIIIIIIIIĲĲJJKKĸLLLLLLĿ\
         ĿŁŁNNNNNNŉŊŊOOOOOOŒŒRRRRRRSSSSSS\
         SSTTTTŦŦUUUUUUUUUUUUWWYYYZZZZZZS\
         ƀƁƂƂƄƄƆƇƇƉƊƋƋƍƎƏƐƑƑƓƔǶƖƗƘƘƚƛƜƝƞƟ\
         OOƢƢƤƤƦƧƧƩƪƫƬƬƮUUƱƲƳƳƵƵƷƸƸƺƻƼƼƾǷ\
         ǀǁǂǃǄǄǄǇǇǇǊǊǊAAIIOOUUUUUUUUUUƎAA\
         AAÆÆǤǤGGKKOOOOƷƷJǱǱǱGGǶǷNNAAÆÆØØ\
         AAAAEEEEIIIIOOOORRRRUUUUSSTTȜȜHH\
         ȠȡȢȢȤȤAAEEOOOOOOOOYYȴȵȶȷȸȹȺȻȼȽȾȿ\
         ɀɁɂɃɄɅɆɇɈɉɊɋɌɍɎɏ",
    ),
    // Greek: U+0370..=U+03FF
    (
        0x0370,
        "ͰͱͲͳʹ͵Ͷͷ\u{378}\u{379}ͺͻͼͽ;Ϳ\u{380}\u{381}\u{382}\u{383}΄΅Α·ΕΗΙ\u{38b}Ο\u{38d}ΥΩ\
         ΙΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡ\u{3a2}ΣΤΥΦΧΨΩΙΥΑΕΗΙ\
         ΥΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΣΤΥΦΧΨΩΙΥΟΥΩϏ\
         ΒΘϒϒϒΦΠϗϘϙϚϚϜϜϞϞϠϠϢϢϤϤϦϦϨϨϪϪϬϬϮϮ\
         ΚΡΣϳϴϵ϶ϷϸϹϺϻϼϽϾϿ",
    ),
    // Cyrillic: U+0400..=U+04FF
    (
        0x0400,
        "ЕЕЂГЄЅІІЈЉЊЋКИУЏАБВГДЕЖЗИЙКЛМНОП\
         РСТУФХЦЧШЩЪЫЬЭЮЯАБВГДЕЖЗИЙКЛМНОП\
         РСТУФХЦЧШЩЪЫЬЭЮЯЕЕЂГЄЅІІЈЉЊЋКИУЏ\
         ѠѠѢѢѤѤѦѦѨѨѪѪѬѬѮѮѰѰѲѲѴѴѴѴѸѸѺѺѼѼѾѾ\
         ҀҀ҂\u{483}\u{484}\u{485}\u{486}\u{487}\u{488}\u{489}ҊҋҌҌҎҎҐҐҒҒҔҔҖҖҘҘҚҚҜҜҞҞ\
         ҠҠҢҢҤҤҦҦҨҨҪҪҬҬҮҮҰҰҲҲҴҴҶҶҸҸҺҺҼҼҾҾ\
         ӀЖЖӃӃӅӆӇӇӉӊӋӋӍӎӏААААӔӔЕЕӘӘӘӘЖЖЗЗ\
         ӠӠИИИИООӨӨӨӨЭЭУУУУУУЧЧӶӷЫЫӺӻӼӽӾӿ",
    ),
    // Latin Extended Additional, Greek Extended: U+1E00..=U+1FFF
    (
        0x1E00,
        "AABBBBBBCCDDDDDDDDDDEEEEEEEEEEFF\
         GGHHHHHHHHHHIIIIKKKKKKLLLLLLLLMM\
         MMMMNNNNNNNNOOOOOOOOPPPPRRRRRRRR\
         SSSSSSSSSSTTTTTTTTUUUUUUUUUUVVVV\
         WWWWWWWWWWXXXXYYZZZZZZHTWYẚSẜẝẞẟ\
         AAAAAAAAAAAAAAAAAAAAAAAAEEEEEEEE\
         EEEEEEEEIIIIOOOOOOOOOOOOOOOOOOOO\
         OOOOUUUUUUUUUUUUUUYYYYYYYYỺỻỼỽỾỿ\
         ΑΑΑΑΑΑΑΑΑΑΑΑΑΑΑΑΕΕΕΕΕΕ\u{1f16}\u{1f17}ΕΕΕΕΕΕ\u{1f1e}\u{1f1f}\
         ΗΗΗΗΗΗΗΗΗΗΗΗΗΗΗΗΙΙΙΙΙΙΙΙΙΙΙΙΙΙΙΙ\
         ΟΟΟΟΟΟ\u{1f46}\u{1f47}ΟΟΟΟΟΟ\u{1f4e}\u{1f4f}ΥΥΥΥΥΥΥΥ\u{1f58}Υ\u{1f5a}Υ\u{1f5c}Υ\u{1f5e}Υ\
         ΩΩΩΩΩΩΩΩΩΩΩΩΩΩΩΩΑΆΕΈΗΉΙΊΟΌΥΎΩΏ\u{1f7e}\u{1f7f}\
         ΑΑΑΑΑΑΑΑΑΑΑΑΑΑΑΑΗΗΗΗΗΗΗΗΗΗΗΗΗΗΗΗ\
         ΩΩΩΩΩΩΩΩΩΩΩΩΩΩΩΩΑΑΑΑΑ\u{1fb5}ΑΑΑΑΑΆΑ᾽Ι᾿\
         ῀῁ΗΗΗ\u{1fc5}ΗΗΕΈΗΉΗ῍῎῏ΙΙΙΐ\u{1fd4}\u{1fd5}ΙΙΙΙΙΊ\u{1fdc}῝῞῟\
         ΥΥΥΰΡΡΥΥΥΥΥΎΡ῭΅`\u{1ff0}\u{1ff1}ΩΩΩ\u{1ff5}ΩΩΟΌΩΏΩ´῾\u{1fff}",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use Collation::*;

    fn w(s: &str) -> Vec<u16> {
        Collation::weights(s.as_bytes()).collect()
    }

    #[test]
    fn weights_of_latin_letters() {
        assert_eq!(w("aZé"), w("AzE"));
        for (a, b) in [
            ("à", "A"),
            ("Å", "a"),
            ("ç", "C"),
            ("ñ", "N"),
            ("ö", "O"),
            ("ÿ", "Y"),
            ("ß", "s"),
            ("ſ", "S"),
            ("ł", "Ł"),
            ("ı", "I"),
            ("Ǆ", "ǅ"),
            ("ệ", "E"),
            ("ά", "Α"),
            ("ё", "Е"),
            ("µ", "Μ"),
        ] {
            assert_eq!(w(a), w(b), "{a} {b}");
        }
        for (a, b) in [("æ", "a"), ("ø", "o"), ("đ", "d"), ("й", "и"), ("þ", "p")] {
            assert_ne!(w(a), w(b), "{a} {b}");
        }
        assert_eq!(general_ci_weight('😀'), REPLACEMENT_WEIGHT);
        assert_eq!(general_ci_weight('\u{10d0}'), 0x10d0);
        assert_eq!(general_ci_weight('ɐ'), 0x250);
        assert_eq!(general_ci_weight('я'), 'Я' as u16);
    }

    #[test]
    fn compare_pad_space() {
        let c = Utf8mb4GeneralCi;
        assert_eq!(c.compare(b"abc", b"ABC  "), Ordering::Equal);
        assert_eq!(c.compare(b"a\t", b"a"), Ordering::Less);
        assert_eq!(c.compare(b"a", b"a\t"), Ordering::Greater);
        assert_eq!(c.compare(b"a", b"a b"), Ordering::Less);
        assert_eq!(c.compare(b"", b"   "), Ordering::Equal);
        assert_eq!(c.compare(b"b", b"A"), Ordering::Greater);
        assert_eq!(Utf8mb4Bin.compare(b"b", b"A"), Ordering::Greater);
        assert_eq!(Utf8mb4Bin.compare(b"a", b"B"), Ordering::Greater);
        assert_eq!(Utf8mb4Bin.compare(b"a ", b"a"), Ordering::Equal);
        assert_eq!(Binary.compare(b"a ", b"a"), Ordering::Greater);
        let mut k1 = Vec::new();
        let mut k2 = Vec::new();
        c.fold_key("Éa  ".as_bytes(), &mut k1);
        c.fold_key(b"ea", &mut k2);
        assert_eq!(k1, k2);
    }

    #[test]
    fn names() {
        assert_eq!(
            Collation::from_name("UTF8MB4_GENERAL_CI"),
            Some(Utf8mb4GeneralCi)
        );
        assert_eq!(Collation::from_name("utf8mb4_bin"), Some(Utf8mb4Bin));
        assert_eq!(
            Collation::from_name("latin1_swedish_ci"),
            Some(Utf8mb4GeneralCi)
        );
        assert_eq!(Collation::from_name("utf8mb3_bin"), Some(Utf8mb4Bin));
        assert_eq!(
            Collation::from_name("utf8mb4_unicode_ci"),
            Some(Utf8mb4GeneralCi)
        );
        assert_eq!(Collation::from_name("binary"), Some(Binary));
        assert_eq!(Collation::from_name("klingon_ci"), None);
        assert_eq!(Collation::from_name("utf8mb4"), None);
        assert_eq!(Collation::charset_default("LATIN1"), Some(Utf8mb4GeneralCi));
        assert_eq!(Collation::charset_default("binary"), Some(Binary));
        assert_eq!(Collation::charset_default("koi8r"), None);
    }

    #[test]
    fn aggregation() {
        use Derivation::*;
        let ci_col = (Utf8mb4GeneralCi, Implicit);
        let bin_col = (Utf8mb4Bin, Implicit);
        let lit = (Utf8mb4GeneralCi, Coercible);
        let hex = (Binary, Coercible);
        assert_eq!(Collation::aggregate(bin_col, lit), bin_col);
        assert_eq!(Collation::aggregate(ci_col, bin_col), bin_col);
        assert_eq!(Collation::aggregate(ci_col, hex), ci_col);
        assert_eq!(Collation::aggregate(lit, hex), hex);
        assert_eq!(
            Collation::aggregate(bin_col, (Utf8mb4GeneralCi, Explicit)),
            (Utf8mb4GeneralCi, Explicit)
        );
    }

    #[test]
    fn column_types_of_old_catalogs_are_legacy() {
        let t: crate::ColumnType =
            serde_json::from_str(r#"{"Varchar":{"len":10,"binary":false}}"#).unwrap();
        assert_eq!(t.collation(), Some(Collation::LEGACY));
        let t = crate::ColumnType::varchar(10, Utf8mb4GeneralCi);
        let back: crate::ColumnType =
            serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(back, t);
        assert!(back.is_ci());
    }
}
