//! Token rewrites before sqlparser parses a statement: MariaDB syntax it does not know,
//! turned into equivalent syntax it does (`LOCK IN SHARE MODE`, multi-table UPDATE/DELETE
//! lists, interval unit keywords, the MOD operator).

use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Whitespace};

/// `... LOCK IN SHARE MODE` → `... FOR SHARE` (sqlparser knows only the latter).
pub(super) fn rewrite_lock_in_share_mode(toks: &mut [TokenWithSpan]) {
    let words: Vec<usize> = toks
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect();
    let is = |t: &TokenWithSpan, k: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    for w in words.windows(4) {
        if is(&toks[w[0]], "LOCK")
            && is(&toks[w[1]], "IN")
            && is(&toks[w[2]], "SHARE")
            && is(&toks[w[3]], "MODE")
        {
            let span = toks[w[0]].span;
            toks[w[0]] = TokenWithSpan::new(Token::make_keyword("FOR"), span);
            toks[w[1]] = TokenWithSpan::new(Token::make_keyword("SHARE"), span);
            toks[w[2]] = TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
            toks[w[3]] = TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
            return;
        }
    }
}

/// Multi-table DML forms sqlparser does not know: `UPDATE t1, t2 SET ...` (the commas become
/// JOIN: an inner join without condition is the same cross product) and
/// `DELETE t1.*, t2.* FROM ...` (`.*` after a target is dropped).
pub(super) fn rewrite_multi_table(toks: &mut [TokenWithSpan]) {
    let is = |t: &TokenWithSpan, k: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let Some(first) = toks
        .iter()
        .position(|t| !matches!(t.token, Token::Whitespace(_)))
    else {
        return;
    };
    let (update, stop) = if is(&toks[first], "UPDATE") {
        (true, "SET")
    } else if is(&toks[first], "DELETE") {
        (false, "FROM")
    } else {
        return;
    };
    let mut depth = 0i32;
    let mut i = first + 1;
    while i < toks.len() {
        match &toks[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 && update => {
                let span = toks[i].span;
                toks[i] = TokenWithSpan::new(Token::make_keyword("JOIN"), span);
            }
            Token::Period
                if depth == 0
                    && !update
                    && toks.get(i + 1).is_some_and(|t| t.token == Token::Mul) =>
            {
                let blank =
                    || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
                toks[i] = blank();
                toks[i + 1] = blank();
            }
            _ if depth == 0 && is(&toks[i], stop) => return,
            _ => {}
        }
        i += 1;
    }
}

/// MariaDB's composite INTERVAL units (`INTERVAL '1:30' HOUR_MINUTE`), which sqlparser
/// does not know, → its range form `HOUR TO MINUTE` (the binder maps the pair back).
/// SECOND_MICROSECOND becomes `MILLISECOND TO MICROSECOND`, because sqlparser reads
/// `SECOND TO` in a form of its own and MariaDB has no MILLISECOND unit to confuse it with.
/// Only after an INTERVAL keyword (the names are reserved words in MariaDB anyway).
pub(super) fn rewrite_interval_units(toks: &mut Vec<TokenWithSpan>) {
    let is_word = |t: &TokenWithSpan, k: &str| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k));
    let Some(first) = toks.iter().position(|t| is_word(t, "INTERVAL")) else {
        return;
    };
    let mut i = first;
    while i < toks.len() {
        let pair = match &toks[i].token {
            Token::Word(w) if w.quote_style.is_none() => {
                match w.value.to_ascii_uppercase().as_str() {
                    "SECOND_MICROSECOND" => Some(("MILLISECOND", "MICROSECOND")),
                    "MINUTE_MICROSECOND" => Some(("MINUTE", "MICROSECOND")),
                    "MINUTE_SECOND" => Some(("MINUTE", "SECOND")),
                    "HOUR_MICROSECOND" => Some(("HOUR", "MICROSECOND")),
                    "HOUR_SECOND" => Some(("HOUR", "SECOND")),
                    "HOUR_MINUTE" => Some(("HOUR", "MINUTE")),
                    "DAY_MICROSECOND" => Some(("DAY", "MICROSECOND")),
                    "DAY_SECOND" => Some(("DAY", "SECOND")),
                    "DAY_MINUTE" => Some(("DAY", "MINUTE")),
                    "DAY_HOUR" => Some(("DAY", "HOUR")),
                    "YEAR_MONTH" => Some(("YEAR", "MONTH")),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((a, b)) = pair {
            let span = toks[i].span;
            let space = || TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty());
            toks.splice(
                i..=i,
                [
                    TokenWithSpan::new(Token::make_keyword(a), span),
                    space(),
                    TokenWithSpan::new(Token::make_keyword("TO"), span),
                    space(),
                    TokenWithSpan::new(Token::make_keyword(b), span),
                ],
            );
            i += 5;
        } else {
            i += 1;
        }
    }
}

/// Keywords an expression can follow: a `MOD (` after one of them is the function.
const EXPRESSION_FOLLOWS: &[Keyword] = &[
    Keyword::SELECT,
    Keyword::WHERE,
    Keyword::HAVING,
    Keyword::ON,
    Keyword::BY,
    Keyword::AND,
    Keyword::OR,
    Keyword::XOR,
    Keyword::NOT,
    Keyword::CASE,
    Keyword::WHEN,
    Keyword::THEN,
    Keyword::ELSE,
    Keyword::IN,
    Keyword::IS,
    Keyword::LIKE,
    Keyword::BETWEEN,
    Keyword::SET,
    Keyword::VALUES,
    Keyword::VALUE,
    Keyword::DIV,
    Keyword::MOD,
    Keyword::DISTINCT,
    Keyword::ALL,
    Keyword::ANY,
    Keyword::SOME,
    Keyword::EXISTS,
    Keyword::INTERVAL,
    Keyword::LIMIT,
    Keyword::OFFSET,
    Keyword::RETURN,
    Keyword::DO,
    Keyword::REGEXP,
    Keyword::RLIKE,
    Keyword::ESCAPE,
    Keyword::AS,
    Keyword::USING,
    Keyword::BINARY,
];

/// `a MOD b` → `a % b` (sqlparser knows MOD only as a function; MOD is reserved in
/// MariaDB, so an unquoted MOD not followed by `(` is the operator).
pub(super) fn rewrite_mod_operator(toks: &mut [TokenWithSpan]) {
    for i in 0..toks.len() {
        let is_mod = matches!(&toks[i].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("MOD"));
        if !is_mod {
            continue;
        }
        let next = toks[i + 1..]
            .iter()
            .find(|t| !matches!(t.token, Token::Whitespace(_)));
        // `a MOD (b)`: after an operand it is the operator even before a parenthesis. A
        // word is an operand unless it is a keyword an expression can follow (`SELECT MOD(`,
        // `WHERE MOD(`, `AND MOD(`, ...); a qualified name (`t.id`) always is.
        let mut before = toks[..i]
            .iter()
            .rev()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)));
        let prev = before.next();
        let qualified = matches!(before.next().map(|t| &t.token), Some(Token::Period));
        let after_operand = prev.is_some_and(|t| match &t.token {
            Token::Number(..) | Token::RParen | Token::SingleQuotedString(_) => true,
            Token::Word(w) => {
                qualified || w.quote_style.is_some() || !EXPRESSION_FOLLOWS.contains(&w.keyword)
            }
            _ => false,
        });
        if after_operand || !matches!(next.map(|t| &t.token), Some(Token::LParen)) {
            let span = toks[i].span;
            toks[i] = TokenWithSpan::new(Token::Mod, span);
        }
    }
}

/// Steps over byte `i` when it is inside a quoted string or opens one (tracking `quote`):
/// the next index to look at, or None when `b[i]` is outside quotes.
fn skip_quoted(b: &[u8], i: usize, quote: &mut Option<u8>) -> Option<usize> {
    let c = b[i];
    match *quote {
        Some(q) => {
            if c == b'\\' && q != b'`' {
                return Some(i + 2);
            }
            if c == q {
                *quote = None;
            }
            Some(i + 1)
        }
        None if matches!(c, b'\'' | b'"' | b'`') => {
            *quote = Some(c);
            Some(i + 1)
        }
        None => None,
    }
}

/// The version MariaDB's `/*M!NNNNNN ... */` comments are compared with (10.11.99).
const SERVER_VERSION_ID: u32 = 101199;

/// MariaDB's executable comments `/*M!NNNNNN text */`: the text runs on a server of that
/// version or later (mariadb-dump sends `/*M!100100 SET WAIT_TIMEOUT=DEFAULT */`), as the
/// portable `/*!NNNNN text */` runs on MySQL and MariaDB; a later version's stays a
/// comment. Rewritten into the portable form the tokenizer expands, or into a plain
/// comment. Quoted text is left alone.
pub(super) fn mariadb_comments(sql: &str) -> std::borrow::Cow<'_, str> {
    if !sql.contains("/*M!") {
        return std::borrow::Cow::Borrowed(sql);
    }
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut quote: Option<u8> = None;
    let mut last = 0;
    while i < b.len() {
        if let Some(next) = skip_quoted(b, i, &mut quote) {
            i = next;
            continue;
        }
        if b[i..].starts_with(b"/*M!") {
            let digits = b[i + 4..].iter().take_while(|d| d.is_ascii_digit()).count();
            let version: u32 = sql[i + 4..i + 4 + digits].parse().unwrap_or(0);
            out.push_str(&sql[last..i]);
            if version <= SERVER_VERSION_ID {
                // The version goes (the portable form's has five digits).
                out.push_str("/*! ");
                i += 4 + digits;
            } else {
                out.push_str("/* M!");
                i += 4;
            }
            last = i;
            continue;
        }
        i += 1;
    }
    out.push_str(&sql[last..]);
    std::borrow::Cow::Owned(out)
}

/// `sql` with each executable comment `/*!NNNNN text */` opened: its markers become spaces
/// (so every byte keeps its offset), or the whole comment does when its version is later
/// than this server's. Used where locations must map back to the text: sqlparser expands
/// these comments itself but gives their tokens locations shifted by the markers.
pub(crate) fn open_executable_comments(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        if let Some(next) = skip_quoted(b, i, &mut quote) {
            i = next;
            continue;
        }
        if b[i..].starts_with(b"/*!") {
            let digits = b[i + 3..].iter().take_while(|d| d.is_ascii_digit()).count();
            let version: u32 = sql[i + 3..i + 3 + digits].parse().unwrap_or(0);
            let Some(close) = find_close(b, i + 3 + digits, true) else {
                break;
            };
            let blank_all = digits > 0 && version > SERVER_VERSION_ID;
            let end = if blank_all { close + 2 } else { i + 3 + digits };
            out[i..end].fill(b' ');
            out[close..close + 2].fill(b' ');
            i = end;
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i = find_close(b, i + 2, false).map_or(b.len(), |c| c + 2);
            continue;
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| sql.to_string())
}

/// Where the comment running from `from` closes (`*/`); outside quotes when `quoted`
/// (an executable comment holds SQL, a plain one any text).
fn find_close(b: &[u8], from: usize, quoted: bool) -> Option<usize> {
    let mut i = from;
    let mut quote: Option<u8> = None;
    while i + 1 < b.len() {
        if quoted {
            if let Some(next) = skip_quoted(b, i, &mut quote) {
                i = next;
                continue;
            }
        }
        if b[i] == b'*' && b[i + 1] == b'/' {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn executable_comments_open_in_place() {
        use super::open_executable_comments as o;
        let s = "/*!50001 CREATE VIEW `v` AS select '*/' */";
        assert_eq!(o(s), "         CREATE VIEW `v` AS select '*/'   ");
        assert_eq!(
            o("a /*!999999 b */ c /* d */"),
            "a                c /* d */"
        );
        assert_eq!(o("x /*! y */"), "x     y   ");
        assert_eq!(o("/* don't */ /*!1 z */"), "/* don't */      z   ");
    }

    #[test]
    fn mariadb_executable_comments() {
        use super::mariadb_comments as m;
        assert_eq!(m("/*M!100100 SET a=1 */"), "/*!  SET a=1 */");
        assert_eq!(
            m("/*M!999999\\- enable the sandbox mode */"),
            "/* M!999999\\- enable the sandbox mode */"
        );
        assert_eq!(m("SELECT '/*M!1 x */'"), "SELECT '/*M!1 x */'");
        assert_eq!(m("SELECT 1"), "SELECT 1");
    }
}
