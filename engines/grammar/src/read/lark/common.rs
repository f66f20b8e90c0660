//! Our own table of the terminals of Lark's `common` library (`%import common.X`).
//!
//! Each is one regex in the core's syntax with the language of Lark's definition; the
//! string and comment terminals, which Lark writes with lazy quantifiers and a
//! look-behind, are given the language a lexer reads with them:
//! - `_STRING_INNER` (`/.*?/`): any text without a newline;
//! - `_STRING_ESC_INNER`: text without a newline in which every backslash escapes the
//!   next character and no `"` stands unescaped (what it spans between quotes);
//! - `ESCAPED_STRING`: `"` that text `"`;
//! - `C_COMMENT`: `/*`, text not holding `*/`, `*/` (the first `*/` ends it).

const FLOAT: &str = r"(?:[0-9]+[eE][+\-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?)";

/// The regex of `common.<name>`, if Lark's `common` defines it.
pub(super) fn regex(name: &str) -> Option<String> {
    let r = match name {
        "DIGIT" => "[0-9]",
        "HEXDIGIT" => "[a-fA-F0-9]",
        "INT" => "[0-9]+",
        "SIGNED_INT" => "[+\\-]?[0-9]+",
        "DECIMAL" => r"(?:[0-9]+\.[0-9]*|\.[0-9]+)",
        "_EXP" => r"[eE][+\-]?[0-9]+",
        "FLOAT" => FLOAT,
        "SIGNED_FLOAT" => return Some(format!("[+\\-]?{FLOAT}")),
        "NUMBER" => return Some(format!("(?:{FLOAT}|[0-9]+)")),
        "SIGNED_NUMBER" => return Some(format!("[+\\-]?(?:{FLOAT}|[0-9]+)")),
        "_STRING_INNER" => "[^\\n]*",
        "_STRING_ESC_INNER" => "(?:[^\"\\\\\\n]|\\\\[^\\n])*",
        "ESCAPED_STRING" => "\"(?:[^\"\\\\\\n]|\\\\[^\\n])*\"",
        "LCASE_LETTER" => "[a-z]",
        "UCASE_LETTER" => "[A-Z]",
        "LETTER" => "[A-Za-z]",
        "WORD" => "[A-Za-z]+",
        "CNAME" => "[_A-Za-z][_A-Za-z0-9]*",
        "WS_INLINE" => "[ \\t]+",
        "WS" => "[ \\t\\x0C\\r\\n]+",
        "CR" => "\\r",
        "LF" => "\\n",
        "NEWLINE" => "(?:\\r?\\n)+",
        "SH_COMMENT" => "#[^\\n]*",
        "CPP_COMMENT" => "//[^\\n]*",
        "C_COMMENT" => r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/",
        "SQL_COMMENT" => "--[^\\n]*",
        _ => return None,
    };
    Some(r.to_string())
}
