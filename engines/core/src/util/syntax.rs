//! The regex syntax every road shares: one `regex-syntax` configuration (Unicode classes,
//! UTF-8 text, the default nesting limit of 250), so a pattern means the same to the eager
//! and the lazy index, to the byte DFA and to the fast parser's atoms.

use regex_syntax::hir::Hir;

use crate::error::Error;

/// Parse a regex with the dialect every index uses: Unicode classes, UTF-8 text.
pub fn parse(pattern: &str) -> Result<Hir, Error> {
    regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .build()
        .parse(pattern)
        .map_err(|e| Error::from(&e))
}
