//! The IR edits of explicit reshards: ops are named by a marker attribute (their
//! post-order number) so they can be found again after each insertion, and new ops go
//! where MLIR's rewriter would put them (a [`Cursor`] that advances past each one).

use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, Syntax, ValueId};
use crate::propagation::edges::{insertion_after, post_order};
use crate::propagation::graph::{Graph, GraphCache, OpIdx, Path};
use crate::sharding::TensorSharding;
use std::rc::Rc;

/// The attribute numbering the ops of the pass's input (removed at the end).
const MARK: &str = "__xr";

/// An op of the pass's input, by its marker: stable across edits.
pub type OpKey = i128;

/// Where the next new op goes (MLIR's insertion point): it advances past each op
/// inserted, so ops created one after another keep their order.
#[derive(Clone, Debug)]
pub struct Cursor {
    parent: Path,
    region: usize,
    block: usize,
    index: usize,
}

pub struct Rewriter<'a> {
    pub m: &'a mut Module,
    cache: GraphCache,
}

impl<'a> Rewriter<'a> {
    /// Marks every op of every function (post-order, nested ops first) and returns,
    /// per function, its key and its ops' keys.
    pub fn new(m: &'a mut Module) -> (Rewriter<'a>, Vec<(OpKey, Vec<OpKey>)>) {
        let g = Graph::shared(m);
        let mut funcs = Vec::new();
        // A function's ops come right before it in post-order.
        let mut ops = Vec::new();
        for (next, i) in (0..).zip(post_order(&g)) {
            g.op_mut(m, i).set_attr(MARK, Attr::Int { value: next, ty: "i64".into() });
            let n = &g.nodes[i];
            if n.parent != Some(0) {
                ops.push(next);
            } else if n.kind == OpKind::FuncFunc {
                funcs.push((next, std::mem::take(&mut ops)));
            } else {
                ops.clear();
            }
        }
        let cache = GraphCache::with_marker(m, MARK);
        (Rewriter { m, cache }, funcs)
    }

    /// Removes the markers.
    pub fn finish(mut self) {
        self.cache.graph_mut().apply_deferred_shift(self.m);
        // The index edited in place along the module is the one a rebuild gives.
        #[cfg(debug_assertions)]
        {
            let g = self.graph();
            assert!(g.same_index(&Graph::build(self.m)), "explicit reshards: stale index");
        }
        self.m.top.walk_mut(&mut |op: &mut Op| {
            op.remove_attr(MARK);
        });
    }

    /// The index of the module as it is now.
    pub fn graph(&mut self) -> Rc<Graph> {
        self.cache.get(self.m);
        self.cache.shared()
    }

    /// The op `key` in [`Rewriter::graph`].
    pub fn find(&mut self, key: OpKey) -> Option<OpIdx> {
        self.cache.find(self.m, key)
    }

    /// The key of op `i` of `g`, if it was in the pass's input.
    pub fn key_of(&self, g: &Graph, i: OpIdx) -> Option<OpKey> {
        match g.op(self.m, i).attr(MARK) {
            Some(Attr::Int { value, .. }) => Some(*value),
            _ => None,
        }
    }

    /// Operand `k` (MLIR order) of op `key`.
    pub fn operand(&mut self, key: OpKey, k: usize) -> Option<ValueId> {
        let i = self.find(key)?;
        self.graph().nodes[i].operands.get(k).copied()
    }

    pub fn sharding(&mut self, v: ValueId) -> Option<TensorSharding> {
        self.graph().sharding(self.m, v)
    }

    pub fn set_sharding(&mut self, v: ValueId, s: TensorSharding) {
        let g = self.graph();
        g.set_sharding(self.m, v, s);
    }

    pub fn before(&mut self, key: OpKey) -> Option<Cursor> {
        let i = self.find(key)?;
        let (last, parent) =
            self.graph().path_of(i).split_last().map(|(l, p)| (*l, Path::from(p)))?;
        Some(Cursor { parent, region: last.0, block: last.1, index: last.2 })
    }

    pub fn after(&mut self, key: OpKey) -> Option<Cursor> {
        let mut c = self.before(key)?;
        c.index += 1;
        Some(c)
    }

    /// Right after the definition of `v` (the start of its block for an argument).
    pub fn after_value(&mut self, v: ValueId) -> Option<Cursor> {
        let (parent, region, block, index) = insertion_after(&self.graph(), v)?;
        Some(Cursor { parent, region, block, index })
    }

    /// Inserts `op` at `at` and updates the index in place (no rebuild).
    fn insert(&mut self, at: &mut Cursor, op: Op) {
        self.cache.graph_mut().insert(self.m, &at.parent, at.region, at.block, at.index, op);
        self.cache.edited(self.m);
        at.index += 1;
    }

    /// A new op `name` at `at` on operand `k` of op `key`: it takes the operand's value
    /// and the operand becomes its result. Returns the result.
    pub fn insert_on_operand(
        &mut self,
        key: OpKey,
        k: usize,
        at: &mut Cursor,
        name: &str,
        props: Vec<NamedAttr>,
    ) -> Option<ValueId> {
        let i = self.find(key)?;
        let g = self.graph();
        let v = *g.nodes[i].operands.get(k)?;
        let nv = self.m.new_value(self.m.ty(v).map(str::to_string));
        set_operand(self.m, &g, i, k, nv);
        drop(g);
        self.cache.graph_mut().note_operand_set(i, k, nv);
        self.insert(at, Op::pretty(name, vec![v], vec![nv], props));
        Some(nv)
    }

    /// A new op `name` at `at` on value `v`, whose result replaces every use of `v`.
    pub fn insert_on_value(
        &mut self,
        v: ValueId,
        at: &mut Cursor,
        name: &str,
        props: Vec<NamedAttr>,
    ) -> ValueId {
        self.cache.get(self.m);
        let nv = self.m.new_value(self.m.ty(v).map(str::to_string));
        self.cache.graph_mut().replace_uses(self.m, v, nv);
        self.insert(at, Op::pretty(name, vec![v], vec![nv], props));
        nv
    }

    /// Replaces the uses of op `key`'s only result by `by` and erases the op.
    pub fn replace_op(&mut self, key: OpKey, by: ValueId) {
        let Some(i) = self.find(key) else { return };
        // The module in order first: the removal goes by the module's paths.
        self.cache.graph_mut().apply_deferred_shift(self.m);
        let g = self.graph();
        if let Some(&r) = g.nodes[i].results.first() {
            self.m.top.replace_uses(r, by);
        }
        crate::propagation::graph::remove_op_at(self.m, &g.nodes[i].path);
        self.cache.invalidate();
    }
}

impl Rewriter<'_> {
    /// Puts the module in order (the deferred insertions applied) before values are
    /// made outside the rewriter: the index is then rebuilt from the module as it is.
    pub fn settle(&mut self) {
        self.cache.graph_mut().apply_deferred_shift(self.m);
    }

    /// Replaces op `key` by `ops` (which may hold a copy of it) and the uses of each
    /// `from` by its `to`, and puts `symbols` at the start of the module body (as MLIR's
    /// symbol table inserts new symbols: the last made comes first). The index is
    /// rebuilt on the next look-up: this is for the rare rewrites that make regions.
    pub fn splice(
        &mut self,
        key: OpKey,
        ops: Vec<Op>,
        uses: &[(ValueId, ValueId)],
        symbols: Vec<Op>,
    ) {
        let Some(i) = self.find(key) else { return };
        self.cache.graph_mut().apply_deferred_shift(self.m);
        let path = self.graph().nodes[i].path.clone();
        for &(from, to) in uses {
            self.m.top.replace_uses(from, to);
        }
        if let Some((&(r, b, o), parent)) = path.split_last() {
            let block = crate::propagation::graph::op_at_path_mut(self.m, parent)
                .regions
                .get_mut(r)
                .and_then(|r| r.blocks.get_mut(b));
            if let Some(block) = block.filter(|bl| o < bl.ops.len()) {
                block.ops.splice(o..=o, ops);
            }
        }
        if let Some(body) = self.m.body_mut() {
            for op in symbols {
                body.insert(0, op);
            }
        }
        self.cache.invalidate();
    }
}

/// `sdy.reshard` props.
pub fn reshard_props(s: TensorSharding) -> Vec<NamedAttr> {
    vec![NamedAttr::new("sharding", Attr::Sharding(s))]
}

/// Sets operand `k` (MLIR order) of op `i` to `v`.
pub fn set_operand(m: &mut Module, g: &Graph, i: OpIdx, k: usize, v: ValueId) {
    let op = g.op_mut(m, i);
    let n = op.operands.len();
    // The custom form of `stablehlo.reduce` writes its inputs and inits interleaved.
    let w = if op.kind == OpKind::StablehloReduce
        && matches!(op.syntax, Syntax::Custom(_))
        && n.is_multiple_of(2)
    {
        if k < n / 2 {
            2 * k
        } else {
            2 * (k - n / 2) + 1
        }
    } else {
        k
    };
    if w < n {
        op.operands[w] = v;
    }
}
