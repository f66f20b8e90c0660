//! The table layout every mask walk reads, shared by the eager and the lazy side.
//!
//! [`DfaTable`] is a flat transition table with *premultiplied* state ids: state `s` is
//! the row offset `s * stride` (`stride` a power of two at least the number of byte
//! classes), so one step is `table[row + class[byte]]`, one read and no multiplication.
//! An entry is a row, [`DEAD`] (no full match is reachable any more) or [`UNKNOWN`] (not
//! computed yet).
//!
//! [`Stepper`] is a walk's view of a table ([`crate::walk`]): [`Frozen`], a complete
//! table many threads read at once (the eager index's minimized DFA), or the lazy DFA
//! ([`crate::dfa::lazy::LazyDfa`]), which computes an `UNKNOWN` entry when a walk meets
//! it. The NFA's subset construction ([`crate::nfa::Determinizer`]) adds the rows.

/// Transition target meaning "no full match is reachable any more" (in every table
/// here, and in [`crate::dfa::ByteDfa`]).
pub const DEAD: u32 = u32::MAX;

/// Table entry of a transition not computed yet.
pub const UNKNOWN: u32 = u32::MAX - 1;

/// A premultiplied transition table (see the module doc).
#[derive(Clone, Debug)]
pub struct DfaTable {
    pub classes: [u8; 256],
    pub n_classes: usize,
    /// log2 of the row length.
    pub shift: u32,
    pub table: Vec<u32>,
    pub accepting: Vec<bool>,
}

impl DfaTable {
    pub(crate) fn empty(classes: [u8; 256], n_classes: usize) -> Self {
        let shift = n_classes.max(1).next_power_of_two().trailing_zeros();
        DfaTable {
            classes,
            n_classes,
            shift,
            table: Vec::new(),
            accepting: Vec::new(),
        }
    }

    #[inline]
    pub fn stride(&self) -> usize {
        1 << self.shift
    }

    pub fn num_states(&self) -> usize {
        self.accepting.len()
    }

    /// The state number of a row.
    #[inline]
    pub fn state(&self, row: u32) -> u32 {
        row >> self.shift
    }

    #[inline]
    pub fn is_accepting(&self, row: u32) -> bool {
        self.accepting[(row >> self.shift) as usize]
    }

    pub(crate) fn push_state(&mut self, accepting: bool) -> u32 {
        assert!(
            self.table.len() + 2 * self.stride() < UNKNOWN as usize,
            "lazy DFA outgrew 32-bit rows"
        );
        let row = self.table.len() as u32;
        self.table.resize(self.table.len() + self.stride(), UNKNOWN);
        for c in self.n_classes..self.stride() {
            self.table[row as usize + c] = DEAD;
        }
        self.accepting.push(accepting);
        row
    }

    pub fn memory_bytes(&self) -> usize {
        self.table.capacity() * 4 + self.accepting.capacity() + 256
    }
}

/// What a walk needs of an automaton: the table, and a way to fill an `UNKNOWN` entry.
pub trait Stepper {
    fn dfa(&self) -> &DfaTable;
    /// The entry of `row` for `class`, computed if `UNKNOWN`.
    fn resolve(&mut self, row: u32, class: u8) -> u32;

    #[inline]
    fn step(&mut self, row: u32, class: u8) -> u32 {
        let next = self.dfa().table[row as usize + class as usize];
        if next == UNKNOWN {
            self.resolve(row, class)
        } else {
            next
        }
    }
}

/// A complete table, read by many threads at once (it has no `UNKNOWN` entry).
#[derive(Clone, Copy)]
pub struct Frozen<'a>(pub &'a DfaTable);

impl Stepper for Frozen<'_> {
    #[inline]
    fn dfa(&self) -> &DfaTable {
        self.0
    }

    fn resolve(&mut self, _row: u32, _class: u8) -> u32 {
        unreachable!("a frozen table is complete")
    }
}
