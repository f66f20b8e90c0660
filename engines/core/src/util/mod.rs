//! The shared layer: what both the eager and the lazy side read, below every automaton.
//!
//! - [`bitmask`]: token bitmasks, the layout every engine's masks share;
//! - [`table`]: [`table::DfaTable`], the premultiplied transition table every mask walk
//!   reads, and [`table::Stepper`], a walk's view of a complete table (the eager index)
//!   or of one filled on demand (the lazy DFA); [`table::DEAD`] and [`table::UNKNOWN`];
//! - [`syntax`]: the one `regex-syntax` configuration every road parses with;
//! - [`pool`]: the process's thread pools, one per size, safe across `fork` (building an
//!   index);
//! - [`crew`]: the threads that join the caller on a batch step, awake between steps;
//! - [`ticks`]: a cheap monotonic clock for timing many short steps.
//!
//! Nothing here depends on another module of the crate but [`crate::error`].

pub mod bitmask;
pub mod crew;
pub mod pool;
pub mod syntax;
pub mod table;
pub mod ticks;
