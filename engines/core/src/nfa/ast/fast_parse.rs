//! The fast road to a tree (see the parent module): the plain subset of the syntax read
//! here, every atom with a meaning of its own read by `regex-syntax`.

use rustc_hash::FxHashMap;

use super::{Ast, Node, NEST_LIMIT};

/// Why the fast parser stopped: the full parser must read this pattern.
#[derive(Debug)]
pub struct GiveUp;

/// The tree of `pattern` by the fast road, or `GiveUp` (see the module doc).
pub fn fast_parse(pattern: &str) -> Result<Ast, GiveUp> {
    let mut ast = Ast::default();
    ast.nodes.reserve(pattern.len() / 8);
    ast.bytes.reserve(pattern.len() / 2);
    ast.kids.reserve(pattern.len() / 8);
    let mut p = FastParser {
        s: pattern.as_bytes(),
        text: pattern,
        pos: 0,
        ast,
        atoms: FxHashMap::default(),
        stack: Vec::new(),
        groups: FxHashMap::default(),
    };
    let (root, nest) = p.alternation(0)?;
    if p.pos != p.s.len() || nest > NEST_LIMIT {
        return Err(GiveUp);
    }
    p.ast.root = root;
    Ok(p.ast)
}

struct FastParser<'a> {
    s: &'a [u8],
    text: &'a str,
    pos: usize,
    ast: Ast,
    /// Atom text -> its node (shared: the NFA compiles a node once per use).
    atoms: FxHashMap<&'a str, u32>,
    /// Items of the alternations and concatenations being parsed.
    stack: Vec<u32>,
    /// Text of short groups parsed so far -> their item.
    groups: FxHashMap<&'a [u8], Item>,
}

/// A parsed item and an upper bound of its nesting depth.
type Item = (u32, u32);

impl<'a> FastParser<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn alternation(&mut self, groups: u32) -> Result<Item, GiveUp> {
        let base = self.stack.len();
        let mut nest = 0;
        loop {
            let (c, n) = self.concat(groups)?;
            self.stack.push(c);
            nest = nest.max(n);
            if self.peek() != Some(b'|') {
                break;
            }
            self.pos += 1;
        }
        let n = self.stack.len() - base;
        let node = if n == 1 {
            self.stack[base]
        } else {
            self.ast.push_list(&self.stack[base..], true)
        };
        self.stack.truncate(base);
        Ok((node, nest + (n >= 2) as u32))
    }

    fn concat(&mut self, groups: u32) -> Result<Item, GiveUp> {
        let base = self.stack.len();
        let mut count = 0u32; // items as the full parser counts them
        let mut nest = 0;
        let mut literal: Option<u32> = None; // start of the pending literal in `ast.bytes`
        while let Some(c) = self.peek() {
            if c == b'|' || c == b')' {
                break;
            }
            let (mut atom, mut n) = match self.literal_char()? {
                Some(bytes) => {
                    // A literal character joins the pending literal unless quantified.
                    if !self.quantifier_next() {
                        literal.get_or_insert(self.ast.bytes.len() as u32);
                        count += bytes.len().min(2) as u32; // at least the characters
                        self.ast.bytes.extend_from_slice(&self.s[bytes]);
                        continue;
                    }
                    self.flush(&mut literal);
                    (self.ast.push_bytes(&self.s[bytes]), 0)
                }
                None => {
                    // Atoms may add to the byte arena: the pending literal ends first.
                    self.flush(&mut literal);
                    match c {
                        b'(' => self.group(groups)?,
                        b'[' => (self.atom(Self::class_end)?, 2),
                        b'.' => (self.atom(|_, i| Ok(i + 1))?, 0),
                        _ => (self.atom(escape_end)?, 0),
                    }
                }
            };
            if self.quantifier_next() {
                let (min, max) = self.quantifier()?;
                atom = self.ast.push(Node::Repeat {
                    sub: atom,
                    min,
                    max,
                });
                n += 1;
            }
            self.flush(&mut literal);
            self.stack.push(atom);
            count += 1;
            nest = nest.max(n);
        }
        self.flush(&mut literal);
        let node = match self.stack.len() - base {
            0 => self.ast.push(Node::Empty),
            1 => self.stack[base],
            _ => self.ast.push_list(&self.stack[base..], false),
        };
        self.stack.truncate(base);
        Ok((node, nest + (count >= 2) as u32))
    }

    /// Close the pending literal (bytes from `start` to the end of the arena) as a node.
    fn flush(&mut self, start: &mut Option<u32>) {
        if let Some(at) = start.take() {
            let len = self.ast.bytes.len() as u32 - at;
            let id = self.ast.push(Node::Bytes { at, len });
            self.stack.push(id);
        }
    }

    /// A group; a short one whose text was parsed before is reused whole.
    fn group(&mut self, groups: u32) -> Result<Item, GiveUp> {
        if groups >= NEST_LIMIT {
            return Err(GiveUp);
        }
        let start = self.pos;
        let end = short_group_end(self.s, start);
        if let Some(&item) = end.and_then(|e| self.groups.get(&self.s[start..e])) {
            self.pos = end.unwrap_or(start);
            return Ok(item);
        }
        let item = self.group_inside(groups)?;
        if end == Some(self.pos) {
            self.groups.insert(&self.s[start..self.pos], item);
        }
        Ok(item)
    }

    fn group_inside(&mut self, groups: u32) -> Result<Item, GiveUp> {
        self.pos += 1;
        if self.peek() == Some(b'?') {
            if self.s.get(self.pos + 1) != Some(&b':') {
                return Err(GiveUp); // flags, named groups, look-around
            }
            self.pos += 2;
        }
        let (inner, n) = self.alternation(groups + 1)?;
        if self.peek() != Some(b')') {
            return Err(GiveUp);
        }
        self.pos += 1;
        Ok((inner, n + 1))
    }

    fn quantifier_next(&self) -> bool {
        matches!(self.peek(), Some(b'*' | b'+' | b'?' | b'{'))
    }

    /// `*`, `+`, `?` or `{m}`, `{m,}`, `{m,n}`, then an optional lazy `?`; a second
    /// quantifier gives up.
    fn quantifier(&mut self) -> Result<(u32, u32), GiveUp> {
        let c = self.peek().ok_or(GiveUp)?;
        self.pos += 1;
        let q = match c {
            b'*' => (0, u32::MAX),
            b'+' => (1, u32::MAX),
            b'?' => (0, 1),
            _ => {
                let min = self.number()?;
                let max = if self.peek() == Some(b',') {
                    self.pos += 1;
                    if self.peek() == Some(b'}') {
                        u32::MAX
                    } else {
                        self.number()?
                    }
                } else {
                    min
                };
                if self.peek() != Some(b'}') || max < min {
                    return Err(GiveUp);
                }
                self.pos += 1;
                (min, max)
            }
        };
        if self.peek() == Some(b'?') {
            self.pos += 1;
        }
        if self.quantifier_next() {
            return Err(GiveUp);
        }
        Ok(q)
    }

    fn number(&mut self) -> Result<u32, GiveUp> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = &self.text[start..self.pos];
        if digits.is_empty() || digits.len() > 9 {
            return Err(GiveUp);
        }
        digits.parse().map_err(|_| GiveUp)
    }

    /// If a literal character is here (an escaped metacharacter stands for itself), step
    /// over it and return its bytes; `None` before an atom (a group, a class, `.`, another
    /// escape). A misplaced quantifier, anchor or bracket gives up.
    fn literal_char(&mut self) -> Result<Option<std::ops::Range<usize>>, GiveUp> {
        let at = self.pos;
        let c = self.s[at];
        match c {
            b'\\' => match self.s.get(at + 1) {
                Some(m) if b"\\.+*?()|[]{}^$#&-~".contains(m) => {
                    self.pos += 2;
                    Ok(Some(at + 1..at + 2))
                }
                _ => Ok(None),
            },
            b'(' | b'[' | b'.' => Ok(None),
            b'^' | b'$' | b'*' | b'+' | b'?' | b'{' | b']' | b'}' => Err(GiveUp),
            _ => {
                // The whole run of plain characters, but for a quantified last one.
                let mut end = at;
                while end < self.s.len() && !SPECIAL[self.s[end] as usize] {
                    end += 1;
                }
                if matches!(self.s.get(end), Some(b'*' | b'+' | b'?' | b'{')) {
                    let mut last = end - 1;
                    while last > at && (0x80..0xC0).contains(&self.s[last]) {
                        last -= 1;
                    }
                    if last > at {
                        end = last;
                    }
                }
                self.pos = end;
                Ok(Some(at..end))
            }
        }
    }

    /// The atom starting here and ending where `end` says, through `regex-syntax`.
    fn atom(&mut self, end: fn(&[u8], usize) -> Result<usize, GiveUp>) -> Result<u32, GiveUp> {
        let stop = end(self.s, self.pos)?;
        let text = self.text.get(self.pos..stop).ok_or(GiveUp)?;
        self.pos = stop;
        if let Some(&id) = self.atoms.get(text) {
            return Ok(id);
        }
        let hir = crate::util::syntax::parse(text).map_err(|_| GiveUp)?;
        let id = self.ast.add_hir(&hir).map_err(|_| GiveUp)?;
        self.atoms.insert(text, id);
        Ok(id)
    }

    /// End of the bracketed class starting at `i` (plain classes only).
    fn class_end(s: &[u8], mut i: usize) -> Result<usize, GiveUp> {
        i += 1;
        if s.get(i) == Some(&b'^') {
            i += 1;
        }
        if s.get(i) == Some(&b']') {
            i += 1;
        }
        while let Some(&c) = s.get(i) {
            match c {
                b']' => return Ok(i + 1),
                b'\\' => i = escape_end(s, i)?,
                b'[' => return Err(GiveUp),
                b'&' | b'-' | b'~' if s.get(i + 1) == Some(&c) => return Err(GiveUp),
                _ => i += 1,
            }
        }
        Err(GiveUp)
    }
}

/// End of the escape starting at `i` (its backslash).
fn escape_end(s: &[u8], i: usize) -> Result<usize, GiveUp> {
    let c = *s.get(i + 1).ok_or(GiveUp)?;
    let fixed = match c {
        b'x' => 2,
        b'u' => 4,
        b'U' => 8,
        b'p' | b'P' => 1,
        _ => return Ok(i + 1 + utf8_len(c)),
    };
    if s.get(i + 2) == Some(&b'{') {
        let close = s[i + 2..].iter().position(|&b| b == b'}').ok_or(GiveUp)?;
        return Ok(i + 2 + close + 1);
    }
    let end = i + 2 + fixed;
    if end > s.len() {
        return Err(GiveUp);
    }
    Ok(end)
}

/// Groups up to this many bytes are looked up by text before being parsed.
const SHORT_GROUP: usize = 160;

/// End of the group opening at `i` if it closes within [`SHORT_GROUP`] bytes (a scan
/// that only pairs parentheses, skipping escapes and bracketed classes); `None` if it
/// does not, or if the text holds a nested class.
fn short_group_end(s: &[u8], i: usize) -> Option<usize> {
    let stop = s.len().min(i + SHORT_GROUP);
    let mut depth = 0u32;
    let mut j = i;
    while j < stop {
        match s[j] {
            b'\\' => j += 1,
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
            b'[' => {
                j += 1;
                if s.get(j) == Some(&b'^') {
                    j += 1;
                }
                if s.get(j) == Some(&b']') {
                    j += 1;
                }
                while j < stop && s[j] != b']' {
                    match s[j] {
                        b'\\' => j += 1,
                        b'[' => return None,
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// Bytes that end a run of plain literal characters.
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let s = b"\\.+*?()|[]{}^$";
    let mut i = 0;
    while i < s.len() {
        t[s[i] as usize] = true;
        i += 1;
    }
    t
};

/// Byte length of the UTF-8 character whose first byte is `c`.
fn utf8_len(c: u8) -> usize {
    match c {
        0..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}
