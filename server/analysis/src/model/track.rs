//! Which facts of the model a computation reads.
//!
//! The verifier's per-op checks run while recording ([`recording`]): every model
//! accessor they go through (`Model::op`, `value`, `children`, `mesh`) notes the fact it
//! reads. After an edit, a check is redone exactly when a fact it read changed
//! (`crate::incremental`), however indirectly it reached that fact (a chain of barriers,
//! the sharding of a value through a data-flow edge, an enclosing manual computation...).

use std::cell::{Cell, RefCell};

/// A fact, as one word: a kind in the top two bits, an id below.
pub type Fact = u32;

const KIND: u32 = 3 << 30;
const ID: u32 = !KIND;

/// An op's own information (name, attributes, position, operands, results, parent),
/// not what is nested in it.
pub const OP: u32 = 0;
/// The list of an op's children.
pub const CHILDREN: u32 = 1 << 30;
/// A value: its type, definition and uses.
pub const VALUE: u32 = 2 << 30;
/// A symbol looked up by name (meshes), by a hash of the name.
pub const SYMBOL: u32 = 3 << 30;

/// The kind of a fact (one of the constants above).
pub fn kind(f: Fact) -> u32 {
    f & KIND
}

/// The id in a fact.
pub fn id(f: Fact) -> u32 {
    f & ID
}

/// The fact of looking up symbol `name`.
pub fn symbol(name: &str) -> Fact {
    // FNV-1a: stable, and collisions only redo a few more checks.
    let h = name.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193));
    SYMBOL | (h & ID)
}

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static READS: RefCell<Vec<Fact>> = const { RefCell::new(Vec::new()) };
}

/// Notes that `fact` is read, if recording.
#[inline]
pub(crate) fn note(fact: Fact) {
    if ACTIVE.with(Cell::get) {
        READS.with(|r| {
            let mut r = r.borrow_mut();
            // Checks read the same op again and again: skip the repeats right away.
            if r.last() != Some(&fact) {
                r.push(fact);
            }
        });
    }
}

/// Runs `f`, appending the facts it reads to `facts` (sorted, without duplicates).
pub fn recording<T>(facts: &mut Vec<Fact>, f: impl FnOnce() -> T) -> T {
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            ACTIVE.with(|a| a.set(false));
        }
    }
    READS.with(|r| r.borrow_mut().clear());
    ACTIVE.with(|a| a.set(true));
    let out = {
        let _stop = Stop;
        f()
    };
    READS.with(|r| {
        let mut r = r.borrow_mut();
        r.sort_unstable();
        r.dedup();
        facts.extend_from_slice(&r);
        r.clear();
    });
    out
}
