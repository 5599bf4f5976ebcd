//! Tokens with byte offsets for the stored-program parser, and the statement splitter's
//! view of compound statements (a CREATE FUNCTION/PROCEDURE/TRIGGER/EVENT or ALTER EVENT
//! whose body is a `BEGIN ... END` block is one statement, `;`s inside included).

use onelog_types::SqlError;
use sqlparser::dialect::MySqlDialect;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

use crate::parser::syntax_error;

/// A token (never whitespace or a comment) with its byte range in the text.
#[derive(Debug, Clone)]
pub(crate) struct Tok {
    pub token: Token,
    pub start: usize,
    pub end: usize,
}

impl Tok {
    /// The upper-cased word, for an unquoted word.
    pub fn word(&self) -> Option<String> {
        match &self.token {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_uppercase()),
            _ => None,
        }
    }

    pub fn is_word(&self, w: &str) -> bool {
        matches!(&self.token, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
    }

    /// An identifier (quoted or not): its name.
    pub fn ident(&self) -> Option<&str> {
        match &self.token {
            Token::Word(w) if w.quote_style.is_none() || w.quote_style == Some('`') => {
                Some(&w.value)
            }
            _ => None,
        }
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            starts.push(i + 1);
        }
    }
    starts
}

fn offset(text: &str, starts: &[usize], loc: Location) -> usize {
    if loc.line == 0 {
        return text.len();
    }
    let Some(&start) = starts.get(loc.line as usize - 1) else {
        return text.len();
    };
    let line = &text[start..];
    let col = loc.column.saturating_sub(1) as usize;
    start
        + line
            .char_indices()
            .nth(col)
            .map(|(i, _)| i)
            .unwrap_or(line.len())
}

/// The tokens of `text` with their byte ranges (string values unescaped).
pub(crate) fn tokenize(text: &str) -> Result<Vec<Tok>, SqlError> {
    let d = MySqlDialect {};
    let starts = line_starts(text);
    let toks = Tokenizer::new(&d, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| syntax_error(text, offset(text, &starts, e.location)))?;
    Ok(toks
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| Tok {
            start: offset(text, &starts, t.span.start),
            end: offset(text, &starts, t.span.end),
            token: t.token,
        })
        .collect())
}

/// Follows the tokens of a statement for the splitter: whether a `;` at this point is
/// inside a stored program's compound statement (and so does not end the statement).
#[derive(Default)]
pub struct Splitter {
    /// Significant tokens seen in this statement.
    n: usize,
    /// The statement creates a stored program.
    program: bool,
    depth: usize,
    /// The previous significant token started a statement position.
    at_start: bool,
    /// The previous word was END (the next IF/CASE/LOOP/... closes, not opens).
    after_end: bool,
    /// Words seen before the program kind, to recognise CREATE ... FUNCTION.
    head: Vec<String>,
}

impl Splitter {
    /// Feeds the next significant token (not whitespace or a comment).
    pub fn feed(&mut self, t: &Token) {
        self.n += 1;
        let w = match t {
            Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_uppercase()),
            _ => None,
        };
        if !self.program {
            if self.n <= 12 {
                if let Some(w) = &w {
                    self.head.push(w.clone());
                    if self.head[0] == "CREATE"
                        && matches!(w.as_str(), "FUNCTION" | "PROCEDURE" | "TRIGGER" | "EVENT")
                    {
                        self.program = true;
                    }
                    // ALTER [DEFINER = ...] EVENT ... DO BEGIN ... END
                    if self.head[0] == "ALTER"
                        && w == "EVENT"
                        && matches!(
                            self.head.get(1).map(String::as_str),
                            Some("EVENT" | "DEFINER")
                        )
                    {
                        self.program = true;
                    }
                }
            }
            return;
        }
        let at_start = self.at_start;
        let after_end = self.after_end;
        self.after_end = false;
        self.at_start = matches!(t, Token::SemiColon | Token::Colon);
        let Some(w) = w else {
            return;
        };
        if after_end && matches!(w.as_str(), "IF" | "CASE" | "LOOP" | "WHILE" | "REPEAT") {
            return;
        }
        match w.as_str() {
            "BEGIN" => {
                self.depth += 1;
                self.at_start = true;
            }
            "END" => {
                self.depth = self.depth.saturating_sub(1);
                self.after_end = true;
            }
            "CASE" => self.depth += 1,
            "IF" | "LOOP" | "WHILE" | "REPEAT" if at_start => {
                self.depth += 1;
                self.at_start = w == "LOOP" || w == "REPEAT";
            }
            "THEN" | "ELSE" | "DO" => self.at_start = true,
            "LOOP" | "REPEAT" => self.at_start = true,
            _ => {}
        }
    }

    /// Whether a `;` now is inside a compound statement.
    pub fn inside(&self) -> bool {
        self.program && self.depth > 0
    }
}
