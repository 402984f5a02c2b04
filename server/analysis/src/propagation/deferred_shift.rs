//! Insertions into one block whose shift of the later ops is deferred.
//!
//! An op inserted at index `q` of a block moves every later op of the block (and
//! everything nested in them) one index on. Explicit reshards insert thousands of ops
//! into a function body of tens of thousands: moving the ops and shifting their
//! paths at each insertion was quadratic. The index instead appends the new op to the
//! block, records the insertion points of one block, and gives the order of the ops
//! from them when asked ([`DeferredShift::resolve`]); after [`DeferredShift::LIMIT`]
//! insertions or more (more in a long block, see [`super::graph::Graph::insert`]), or
//! when another block is edited, the block is put in order at once.

use super::graph::{OpIdx, Path};
use rustc_hash::FxHashMap;

/// Insertions into the block (`region`, `block`) of the op `parent_idx` (at `parent`)
/// not yet applied to the stored paths.
#[derive(Clone, Debug)]
pub struct DeferredShift {
    pub parent: Path,
    pub parent_idx: OpIdx,
    pub region: usize,
    pub block: usize,
    /// The insertion indices, each in the block's numbering right before it.
    points: Vec<usize>,
    /// The smallest point: a stored index below it is never shifted.
    min: usize,
    /// Ops inserted meanwhile: the step of their insertion (later steps shift them).
    born: FxHashMap<OpIdx, usize>,
}

impl DeferredShift {
    /// Insertions applied to all paths at once after at least this many.
    pub const LIMIT: usize = 64;

    pub fn new(parent: Path, parent_idx: OpIdx, region: usize, block: usize) -> DeferredShift {
        DeferredShift {
            parent,
            parent_idx,
            region,
            block,
            points: Vec::new(),
            min: usize::MAX,
            born: FxHashMap::default(),
        }
    }

    /// Whether this records insertions into that block.
    pub fn is_block(&self, parent_idx: OpIdx, region: usize, block: usize) -> bool {
        (self.parent_idx, self.region, self.block) == (parent_idx, region, block)
    }

    /// Records op `op` inserted at `index`; returns the number of insertions recorded.
    pub fn insert(&mut self, op: OpIdx, index: usize) -> usize {
        self.born.insert(op, self.points.len());
        self.points.push(index);
        self.min = self.min.min(index);
        self.points.len()
    }

    /// The smallest index of the block whose op may have moved.
    pub fn first_moved(&self) -> usize {
        self.min
    }

    /// Whether a stored path may be out of order: it goes through the block at or past
    /// the first insertion point (an op inserted meanwhile is stored past the end).
    pub fn affects(&self, path: &[(usize, usize, usize)]) -> bool {
        let d = self.parent.len();
        path.len() > d
            && (path[d].0, path[d].1) == (self.region, self.block)
            && path[d].2 >= self.min
            && path[..d] == self.parent[..]
    }

    /// The index in the block's order of op `i` whose stored index is `stored` (an op
    /// inserted meanwhile is stored where it was appended).
    pub fn resolve(&self, i: OpIdx, stored: usize) -> usize {
        let (from, at) = match self.born.get(&i) {
            Some(&t) => (t + 1, self.points[t]),
            None => (0, stored),
        };
        self.points[from..].iter().fold(at, |s, &q| s + usize::from(s >= q))
    }
}
