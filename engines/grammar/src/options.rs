//! The reference's options ([`GrammarOptions`]): its work budget, and how it reads a
//! grammar's lexing ([`Lexing`]) and `%ignore` ([`TrailingIgnore`], `leading_ignore`).
//! Scannerless with ignored text anywhere is the reference's own reading; the other
//! settings are the readings the lexer policies compare engines with (see `index`).

/// How the text is cut into terminal matches (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lexing {
    /// Every terminal matches at every length it can (the grammar read as a grammar).
    #[default]
    Scannerless,
    /// Maximal munch over the terminals allowed where the lexeme starts: a match ends
    /// only where no terminal allowed there (ignore ones included) takes the next byte;
    /// matches are never empty.
    Greedy,
}

impl Lexing {
    pub fn parse(name: &str) -> Option<Lexing> {
        match name {
            "scannerless" => Some(Lexing::Scannerless),
            "greedy" => Some(Lexing::Greedy),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lexing::Scannerless => "scannerless",
            Lexing::Greedy => "greedy",
        }
    }
}

/// How `%ignore` text after the text's last terminal occurrence is read (see the module
/// doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingIgnore {
    /// Any ignore text may end the text (Lark's reading).
    #[default]
    Always,
    /// None: ignore text only before a terminal occurrence.
    Never,
    /// Only where the parser state after the last terminal expects another terminal;
    /// the text is then a sentence iff it was one before the ignore text (llguidance).
    WhereALexemeMayFollow,
}

impl TrailingIgnore {
    /// `"always"`, `"never"`, `"where-a-lexeme-may-follow"`.
    pub fn parse(name: &str) -> Option<TrailingIgnore> {
        match name {
            "always" => Some(TrailingIgnore::Always),
            "never" => Some(TrailingIgnore::Never),
            "where-a-lexeme-may-follow" => Some(TrailingIgnore::WhereALexemeMayFollow),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TrailingIgnore::Always => "always",
            TrailingIgnore::Never => "never",
            TrailingIgnore::WhereALexemeMayFollow => "where-a-lexeme-may-follow",
        }
    }
}

impl From<bool> for TrailingIgnore {
    /// `true`: `Always`, `false`: `Never` (the option was a bool before).
    fn from(allowed: bool) -> Self {
        if allowed {
            TrailingIgnore::Always
        } else {
            TrailingIgnore::Never
        }
    }
}

/// Bounds and reading of the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrammarOptions {
    /// Most Earley items one call (a mask fill, a token step) may create.
    pub item_budget: usize,
    pub lexing: Lexing,
    /// Whether `%ignore` text may come before the text's first terminal occurrence.
    pub leading_ignore: bool,
    /// When `%ignore` text may come after the text's last terminal occurrence.
    pub trailing_ignore: TrailingIgnore,
}

impl Default for GrammarOptions {
    /// 50 million items (a few seconds of work), scannerless, ignore text anywhere.
    fn default() -> Self {
        GrammarOptions {
            item_budget: 50_000_000,
            lexing: Lexing::Scannerless,
            leading_ignore: true,
            trailing_ignore: TrailingIgnore::Always,
        }
    }
}
