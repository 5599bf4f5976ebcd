//! The ZEROFILL column attribute, which sqlparser does not know.
//!
//! MariaDB's grammar allows, after a numeric type, one of `SIGNED`, `UNSIGNED`, `ZEROFILL`,
//! `UNSIGNED ZEROFILL` or `ZEROFILL UNSIGNED`; ZEROFILL implies UNSIGNED. The attribute is
//! rewritten into a form sqlparser parses and the binder recognises:
//! `UNSIGNED CHARACTER SET <ZEROFILL_MARK>`. The mark is a quoted identifier no statement
//! can spell (it starts with a control character), so a column's CHARACTER SET option
//! naming it can only come from here. `YEAR ZEROFILL` is YEAR (always zero-filled): the
//! attribute is dropped. Anything else (`SIGNED ZEROFILL`, `ZEROFILL ZEROFILL`, `BIT
//! ZEROFILL`) is left for sqlparser to refuse, with the error pointing at the ZEROFILL.

use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Whitespace, Word};

/// The CHARACTER SET name that marks a ZEROFILL column.
pub const ZEROFILL_MARK: &str = "\u{1}zerofill";

fn is_word(t: &TokenWithSpan, k: &str) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
}

fn blank() -> TokenWithSpan {
    TokenWithSpan::new(Token::Whitespace(Whitespace::Space), Span::empty())
}

/// Index of the previous / next non-whitespace token.
fn prev_solid(toks: &[TokenWithSpan], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&j| !matches!(toks[j].token, Token::Whitespace(_)))
}

fn next_solid(toks: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..toks.len()).find(|&j| !matches!(toks[j].token, Token::Whitespace(_)))
}

/// Whether the type before position `i` (the token before the attribute) is YEAR or
/// YEAR(n).
fn after_year(toks: &[TokenWithSpan], i: usize) -> bool {
    let Some(p) = prev_solid(toks, i) else {
        return false;
    };
    if is_word(&toks[p], "YEAR") {
        return true;
    }
    if toks[p].token != Token::RParen {
        return false;
    }
    let open = prev_solid(toks, p).and_then(|n| prev_solid(toks, n));
    open.filter(|&o| toks[o].token == Token::LParen)
        .and_then(|o| prev_solid(toks, o))
        .is_some_and(|y| is_word(&toks[y], "YEAR"))
}

/// Rewrites every ZEROFILL attribute (an unquoted ZEROFILL is always one: the word is
/// reserved in MariaDB).
pub(super) fn rewrite(toks: &mut Vec<TokenWithSpan>) {
    let mut i = 0;
    while i < toks.len() {
        if !is_word(&toks[i], "ZEROFILL") {
            i += 1;
            continue;
        }
        if after_year(toks, i) {
            toks[i] = blank();
            i += 1;
            continue;
        }
        let span = toks[i].span;
        let before = prev_solid(toks, i).filter(|&p| is_word(&toks[p], "UNSIGNED"));
        let after = next_solid(toks, i).filter(|&n| is_word(&toks[n], "UNSIGNED"));
        // `UNSIGNED ZEROFILL UNSIGNED` keeps its second UNSIGNED: a syntax error there, as
        // in MariaDB.
        if let (Some(n), None) = (after, before) {
            toks[n] = blank();
        }
        let mark = Token::Word(Word {
            value: ZEROFILL_MARK.to_string(),
            quote_style: Some('`'),
            keyword: sqlparser::keywords::Keyword::NoKeyword,
        });
        let mut new = Vec::new();
        if before.is_none() {
            new.push(TokenWithSpan::new(Token::make_keyword("UNSIGNED"), span));
            new.push(blank());
        }
        new.extend([
            TokenWithSpan::new(Token::make_keyword("CHARACTER"), span),
            blank(),
            TokenWithSpan::new(Token::make_keyword("SET"), span),
            blank(),
            TokenWithSpan::new(mark, span),
        ]);
        let n = new.len();
        toks.splice(i..=i, new);
        i += n;
    }
}
