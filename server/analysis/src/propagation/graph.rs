//! An index over the printable IR ([`Module`]) for propagation: every op by a flat
//! index (pre-order) and its path in the module, value definitions and uses, types,
//! meshes, functions and their callers; and Shardy's rules for where the sharding of
//! a value lives (`getSharding`/`setSharding`: function argument attributes, op
//! `sdy.sharding`, sdy op properties, data-flow edge owners and edges).

use super::deferred_shift::DeferredShift;
pub use crate::ir::manual_axes;
use crate::ir::{Attr, Block, Module, Op, OpKind, Syntax, ValueId};
use crate::sharding::axis;
pub use crate::sharding::make::{
    erase_free_axes, erase_manual_axes, open_sharding, replicated_sharding,
};
use crate::sharding::{DimSharding, Mesh, MeshRef, TensorSharding};
pub use crate::types::ValueType;
use rustc_hash::FxHashMap;
use rustc_hash::FxHashMap as HashMap;
use sdy_syntax::tree::Str;
use smallvec::SmallVec;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

pub type OpIdx = usize;

/// An op's (region, block, op) steps from the top `builtin.module` (inline: the index
/// is rebuilt after most passes, and ops rarely nest deeper).
pub type Path = SmallVec<[(usize, usize, usize); 4]>;

/// An op's operands or results (inline for the usual few).
pub type Values = SmallVec<[ValueId; 4]>;

/// Where to insert: (parent op path, region, block, index).
pub type InsertPoint = (Path, usize, usize, usize);

/// Where a value is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Result { op: OpIdx, index: usize },
    Arg { op: OpIdx, region: usize, block: usize, index: usize },
}

#[derive(Clone, Debug)]
pub struct Node {
    /// (region, block, op) steps from the top `builtin.module`.
    pub path: Path,
    pub parent: Option<OpIdx>,
    pub name: Str,
    pub kind: OpKind,
    pub operands: Values,
    pub results: Values,
    /// Per region, per block: the block arguments.
    pub args: Vec<Vec<Vec<ValueId>>>,
    /// Per region, per block: the ops.
    pub children: Vec<Vec<Vec<OpIdx>>>,
    pub origin: Option<u32>,
}

/// The index.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub defs: Vec<Option<Def>>,
    /// The uses of the value in slot `s` are `use_list[use_start[s]..use_start[s + 1]]`
    /// (one list for all: a vector per value cost an allocation per value per build).
    use_start: Vec<usize>,
    use_list: Vec<(OpIdx, usize)>,
    /// (value, op, operand) while building.
    pending_uses: Vec<(ValueId, OpIdx, usize)>,
    pub erased: Vec<bool>,
    /// `func.func` symbol -> op.
    pub funcs: FxHashMap<String, OpIdx>,
    /// Function symbol -> the `func.call` ops calling it.
    pub callers: FxHashMap<String, Vec<OpIdx>>,
    /// `sdy.mesh` symbol -> mesh (looked up on every propagation step).
    pub meshes: FxHashMap<String, Mesh>,
    /// The meshes in declaration order (name, mesh).
    pub mesh_list: Vec<(String, Mesh)>,
    /// The `func.func`, `func.call` and `sdy.mesh` nodes, the ones symbols come from.
    symbol_nodes: Vec<OpIdx>,
    /// The smallest value id indexed: `defs[0]` and the first uses are this value's (a
    /// sub-graph indexes only the ids its op touches, not the whole module's).
    base: ValueId,
    /// The uses of values changed by incremental edits since the build (by slot, in
    /// the order a rebuild would list them), in place of `use_list`'s.
    use_over: FxHashMap<usize, Vec<(OpIdx, usize)>>,
    /// Insertions not yet applied to the stored paths (read them with [`Graph::path_of`]).
    deferred: Option<Box<DeferredShift>>,
}

/// The graph's symbol tables, as in [`Graph`].
#[derive(Default, PartialEq)]
struct Symbols {
    funcs: FxHashMap<String, OpIdx>,
    callers: FxHashMap<String, Vec<OpIdx>>,
    meshes: FxHashMap<String, Mesh>,
    mesh_list: Vec<(String, Mesh)>,
}

thread_local! {
    /// [`Graph::shared`]'s index and the value count of the module it indexes.
    static SHARED: RefCell<Option<(usize, Rc<Graph>)>> = const { RefCell::new(None) };
}

/// An index of the module kept across a pass's edits, rebuilt only when the
/// structure may have changed. Every structural edit of the passes that use it
/// inserts an op with a result (a new value), so the value count is the version;
/// an edit that creates no value calls [`GraphCache::invalidate`].
pub struct GraphCache {
    g: Rc<Graph>,
    values: usize,
    /// Ops carrying an integer marker attribute, by marker (rebuilt with the graph).
    marked: HashMap<i128, OpIdx>,
    marker: Option<&'static str>,
}

impl GraphCache {
    pub fn new(m: &Module) -> GraphCache {
        GraphCache {
            g: Graph::shared(m),
            values: m.values.len(),
            marked: HashMap::default(),
            marker: None,
        }
    }

    /// A cache that also finds ops by the integer value of their attribute `marker`.
    pub fn with_marker(m: &Module, marker: &'static str) -> GraphCache {
        let mut c = GraphCache::new(m);
        c.marker = Some(marker);
        c.index_markers(m);
        c
    }

    fn index_markers(&mut self, m: &Module) {
        self.marked.clear();
        let Some(name) = self.marker else { return };
        // The nodes are the module's ops in the order `walk` visits them.
        let (marked, mut i) = (&mut self.marked, 0);
        m.top.walk(&mut |op| {
            if let (true, Some(Attr::Int { value, .. })) = (i > 0, op.attr(name)) {
                marked.insert(*value, i);
            }
            i += 1;
        });
    }

    /// The index of `m` as it is now.
    pub fn get(&mut self, m: &Module) -> &Graph {
        if m.values.len() != self.values {
            self.g = Graph::shared(m);
            self.values = m.values.len();
            self.index_markers(m);
        }
        &self.g
    }

    /// The op marked `id`, in the graph [`GraphCache::get`] returns.
    pub fn find(&mut self, m: &Module, id: i128) -> Option<OpIdx> {
        self.get(m);
        self.marked.get(&id).copied()
    }

    /// The index [`GraphCache::get`] last returned, shared.
    pub fn shared(&self) -> Rc<Graph> {
        self.g.clone()
    }

    /// The index, to edit along with the module (see [`Graph::note_inserted`]); the
    /// caller then calls [`GraphCache::edited`].
    pub fn graph_mut(&mut self) -> &mut Graph {
        Rc::make_mut(&mut self.g)
    }

    /// Marks the index, edited along with `m`, as up to date.
    pub fn edited(&mut self, m: &Module) {
        self.values = m.values.len();
    }

    /// Forces a rebuild on the next [`GraphCache::get`].
    pub fn invalidate(&mut self) {
        self.values = usize::MAX;
    }
}

/// String equality, without comparing the bytes of a name shared with the op it was
/// copied from.
fn same_str(a: &str, b: &str) -> bool {
    (a.as_ptr() == b.as_ptr() && a.len() == b.len()) || a == b
}

/// The number of ops in `op` (itself included) and of their operands.
fn count_ops(op: &Op) -> (usize, usize) {
    let (mut n, mut uses) = (0, 0);
    op.walk(&mut |o| {
        n += 1;
        uses += o.operands.len();
    });
    (n, uses)
}

/// Removes the ops at `paths` (module paths of distinct ops): what removing them one
/// by one from the last path to the first does, in one pass per block instead of a
/// shift of the block per op. Deeper blocks go first, so no removal moves an op whose
/// path is still to be used.
pub fn remove_ops(m: &mut Module, paths: impl IntoIterator<Item = Path>) {
    let mut by_block: HashMap<(Path, usize, usize), Vec<usize>> = HashMap::default();
    for p in paths {
        let Some((&(r, b, i), parent)) = p.split_last() else { continue };
        by_block.entry((Path::from(parent), r, b)).or_default().push(i);
    }
    let mut blocks: Vec<_> = by_block.into_iter().collect();
    blocks.sort_by(|(a, _), (b, _)| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    for ((parent, r, b), mut idx) in blocks {
        idx.sort_unstable();
        idx.dedup();
        let ops = &mut op_at_path_mut(m, &parent).regions[r].blocks[b].ops;
        let (mut k, mut next) = (0usize, 0usize);
        ops.retain(|_| {
            let drop = idx.get(next) == Some(&k);
            next += usize::from(drop);
            k += 1;
            !drop
        });
    }
}

pub fn op_at_path<'m>(m: &'m Module, path: &[(usize, usize, usize)]) -> &'m Op {
    let mut op = &m.top;
    for &(r, b, i) in path {
        op = &op.regions[r].blocks[b].ops[i];
    }
    op
}

pub fn op_at_path_mut<'m>(m: &'m mut Module, path: &[(usize, usize, usize)]) -> &'m mut Op {
    let mut op = &mut m.top;
    for &(r, b, i) in path {
        op = &mut op.regions[r].blocks[b].ops[i];
    }
    op
}

/// The block holding the op at `path` and the op's index in it (`None` for the root).
pub fn parent_block_mut<'m>(
    m: &'m mut Module,
    path: &[(usize, usize, usize)],
) -> Option<(&'m mut Block, usize)> {
    let (&(r, b, i), parent) = path.split_last()?;
    Some((&mut op_at_path_mut(m, parent).regions[r].blocks[b], i))
}

/// Takes the op at `path` out of its block (`None` for the root).
pub fn remove_op_at(m: &mut Module, path: &[(usize, usize, usize)]) -> Option<Op> {
    let (block, i) = parent_block_mut(m, path)?;
    Some(block.ops.remove(i))
}

/// Where an op right after the op at `path` goes (`None` for the root).
pub fn point_after(path: &[(usize, usize, usize)]) -> Option<InsertPoint> {
    let (&(r, b, i), parent) = path.split_last()?;
    Some((Path::from(parent), r, b, i + 1))
}

/// The operands in MLIR's order: the custom form of `stablehlo.reduce` lists them as
/// `(%in0 init: %i0), (%in1 init: %i1)` for `(%in0, %in1, %i0, %i1)`.
pub fn mlir_operands(op: &Op) -> Values {
    let n = op.operands.len();
    if matches!(op.syntax, Syntax::Custom(_))
        && n.is_multiple_of(2)
        && op.kind == OpKind::StablehloReduce
    {
        (0..n / 2)
            .map(|i| op.operands[2 * i])
            .chain((0..n / 2).map(|i| op.operands[2 * i + 1]))
            .collect()
    } else {
        Values::from_slice(&op.operands)
    }
}

pub fn str_attr(a: Option<&Attr>) -> Option<String> {
    match a {
        Some(Attr::Str(s)) => Some(String::from_utf8_lossy(s).into_owned()),
        Some(Attr::Symbol(s)) => Some(s.clone()),
        _ => None,
    }
}

pub fn is_terminator(name: &str) -> bool {
    crate::rules::registry::is_terminator(name)
}

impl Graph {
    pub fn build(m: &Module) -> Graph {
        let (ops, uses) = count_ops(&m.top);
        let mut g = Graph {
            nodes: Vec::with_capacity(ops),
            defs: vec![None; m.values.len()],
            pending_uses: Vec::with_capacity(uses),
            ..Default::default()
        };
        g.visit(&m.top, Path::new(), None);
        g.index_uses();
        g.erased = vec![false; g.nodes.len()];
        g.set_symbols(g.collect_symbols(m));
        g
    }

    fn set_symbols(&mut self, s: Symbols) {
        (self.funcs, self.callers, self.meshes, self.mesh_list) =
            (s.funcs, s.callers, s.meshes, s.mesh_list);
    }

    fn same_symbols(&self, s: &Symbols) -> bool {
        self.funcs == s.funcs
            && self.callers == s.callers
            && self.meshes == s.meshes
            && self.mesh_list == s.mesh_list
    }

    /// The functions, their callers and the meshes (attributes, not structure: a pass
    /// may change them without changing the ops).
    fn collect_symbols(&self, m: &Module) -> Symbols {
        let mut s = Symbols::default();
        for &i in &self.symbol_nodes {
            let n = &self.nodes[i];
            match n.name.as_str() {
                "func.func" => {
                    if let Some(f) = op_at_path(m, &n.path).func() {
                        s.funcs.insert(f.sym.clone(), i);
                    }
                }
                "func.call" => {
                    if let Some(c) = super::irutil::callee(op_at_path(m, &n.path)) {
                        s.callers.entry(c).or_default().push(i);
                    }
                }
                "sdy.mesh" => {
                    let op = op_at_path(m, &n.path);
                    if let (Some(name), Some(Attr::Mesh(mesh))) =
                        (str_attr(op.prop("sym_name")), op.prop("mesh"))
                    {
                        s.meshes.insert(name.clone(), mesh.clone());
                        s.mesh_list.push((name, mesh.clone()));
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// The index of `m`, shared with the passes that run before and after: the last
    /// one built here when `m` still has the structure it was built from (checked
    /// exactly, op by op: most passes change only attributes), else a new one. Equal
    /// to [`Graph::build`] in every case.
    pub fn shared(m: &Module) -> Rc<Graph> {
        SHARED.with(|c| {
            let mut c = c.borrow_mut();
            if let Some((values, g)) = c.as_mut() {
                if *values == m.values.len() && g.same_structure(m) {
                    let symbols = g.collect_symbols(m);
                    if !g.same_symbols(&symbols) {
                        Rc::make_mut(g).set_symbols(symbols);
                    }
                    return g.clone();
                }
            }
            let g = Rc::new(Graph::build(m));
            *c = Some((m.values.len(), g.clone()));
            g
        })
    }

    /// Frees the index [`Graph::shared`] keeps.
    pub fn release_shared() {
        SHARED.with(|c| c.borrow_mut().take());
    }

    /// Whether `m` has exactly the ops, values and nesting this full index was built
    /// from (then paths, definitions and uses are the same too).
    fn same_structure(&self, m: &Module) -> bool {
        let mut next = 0;
        self.base == 0 && self.same_at(&m.top, None, &mut next) && next == self.nodes.len()
    }

    fn same_at(&self, op: &Op, parent: Option<OpIdx>, next: &mut OpIdx) -> bool {
        let idx = *next;
        *next += 1;
        let Some(n) = self.nodes.get(idx) else { return false };
        if n.parent != parent
            || n.origin != op.origin
            || n.results[..] != op.results[..]
            || n.args.len() != op.regions.len()
            || !same_str(&n.name, &op.name)
        {
            return false;
        }
        let same_operands = if n.kind == OpKind::StablehloReduce {
            n.operands == mlir_operands(op)
        } else {
            n.operands[..] == op.operands[..]
        };
        if !same_operands {
            return false;
        }
        for (ri, r) in op.regions.iter().enumerate() {
            let (args, children) = (&n.args[ri], &n.children[ri]);
            if args.len() != r.blocks.len() {
                return false;
            }
            for (bi, b) in r.blocks.iter().enumerate() {
                if args[bi] != b.args || children[bi].len() != b.ops.len() {
                    return false;
                }
                for (c, &ci) in b.ops.iter().zip(&children[bi]) {
                    if ci != *next || !self.same_at(c, Some(idx), next) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The index of the op at `path` and of everything nested in it, for a pass that
    /// works inside one op: node 0 is that op, paths are module paths; functions,
    /// callers and meshes are not collected.
    pub fn build_sub(m: &Module, path: &[(usize, usize, usize)]) -> Graph {
        let op = op_at_path(m, path);
        // Index only the value ids this op touches: sized by the module, one build per
        // function would cost the module's value count each time.
        let (mut lo, mut hi, mut n) = (ValueId::MAX, 0, 0usize);
        op.walk(&mut |o: &Op| {
            n += 1;
            let args = o.regions.iter().flat_map(|r| &r.blocks).flat_map(|b| &b.args);
            for &v in o.operands.iter().chain(&o.results).chain(args) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        });
        let len = if lo <= hi { (hi - lo) as usize + 1 } else { 0 };
        let mut g = Graph {
            nodes: Vec::with_capacity(n),
            defs: vec![None; len],
            base: lo.min(hi),
            ..Default::default()
        };
        g.visit(op, Path::from(path), None);
        g.index_uses();
        g.erased = vec![false; g.nodes.len()];
        g
    }

    /// The slot of value `v` in `defs` (and the uses), growing it when needed.
    #[inline]
    fn ensure(&mut self, v: ValueId) -> usize {
        match v.checked_sub(self.base) {
            Some(i) if (i as usize) < self.defs.len() => i as usize,
            _ => self.grow_to(v),
        }
    }

    #[cold]
    fn grow_to(&mut self, v: ValueId) -> usize {
        if v < self.base {
            // Below the first id indexed (not met when sizing): shift everything up.
            let k = (self.base - v) as usize;
            self.defs.splice(0..0, std::iter::repeat_n(None, k));
            self.base = v;
        }
        let i = (v - self.base) as usize;
        if i >= self.defs.len() {
            self.defs.resize(i + 1, None);
        }
        i
    }

    /// Groups the uses recorded while visiting by value, each value's in visit order.
    fn index_uses(&mut self) {
        let pending = std::mem::take(&mut self.pending_uses);
        let mut start = vec![0usize; self.defs.len() + 1];
        for &(v, _, _) in &pending {
            start[(v - self.base) as usize + 1] += 1;
        }
        for s in 1..start.len() {
            start[s] += start[s - 1];
        }
        let mut next = start.clone();
        let mut list = vec![(0, 0); pending.len()];
        for (v, op, i) in pending {
            let s = (v - self.base) as usize;
            list[next[s]] = (op, i);
            next[s] += 1;
        }
        self.use_start = start;
        self.use_list = list;
    }

    fn slot(&self, v: ValueId) -> Option<usize> {
        v.checked_sub(self.base).map(|i| i as usize)
    }

    fn visit(&mut self, op: &Op, path: Path, parent: Option<OpIdx>) -> OpIdx {
        let mut path = path;
        self.visit_at(op, &mut path, parent)
    }

    /// Indexes `op` (at `path`, which is restored before returning) and its regions.
    fn visit_at(&mut self, op: &Op, path: &mut Path, parent: Option<OpIdx>) -> OpIdx {
        let idx = self.nodes.len();
        if matches!(op.name.as_str(), "func.func" | "func.call" | "sdy.mesh") {
            self.symbol_nodes.push(idx);
        }
        let operands = mlir_operands(op);
        for (i, &v) in operands.iter().enumerate() {
            self.ensure(v);
            self.pending_uses.push((v, idx, i));
        }
        for (i, &r) in op.results.iter().enumerate() {
            let s = self.ensure(r);
            self.defs[s] = Some(Def::Result { op: idx, index: i });
        }
        self.nodes.push(Node {
            path: Path::from_slice(path),
            parent,
            name: op.name.clone(),
            kind: op.kind,
            operands,
            results: Values::from_slice(&op.results),
            args: op
                .regions
                .iter()
                .map(|r| r.blocks.iter().map(|b| b.args.clone()).collect())
                .collect(),
            children: Vec::new(),
            origin: op.origin,
        });
        let mut children = Vec::with_capacity(op.regions.len());
        for (ri, r) in op.regions.iter().enumerate() {
            let mut rc = Vec::with_capacity(r.blocks.len());
            for (bi, b) in r.blocks.iter().enumerate() {
                for (ai, &a) in b.args.iter().enumerate() {
                    let s = self.ensure(a);
                    self.defs[s] = Some(Def::Arg { op: idx, region: ri, block: bi, index: ai });
                }
                let mut bc = Vec::with_capacity(b.ops.len());
                for (oi, c) in b.ops.iter().enumerate() {
                    path.push((ri, bi, oi));
                    bc.push(self.visit_at(c, path, Some(idx)));
                    path.pop();
                }
                rc.push(bc);
            }
            children.push(rc);
        }
        self.nodes[idx].children = children;
        idx
    }

    /// The uses of the value in slot `s`, editable (copied out of `use_list` once).
    fn uses_mut(&mut self, v: ValueId) -> &mut Vec<(OpIdx, usize)> {
        let s = self.ensure(v);
        if !self.use_over.contains_key(&s) {
            let l = self.uses(v).to_vec();
            self.use_over.insert(s, l);
        }
        self.use_over.get_mut(&s).expect("just inserted")
    }

    /// Adds use `(op, k)` of `v` where a rebuild would list it (pre-order of the users).
    fn add_use(&mut self, v: ValueId, op: OpIdx, k: usize) {
        let key = (self.path_of(op), k);
        let pos = self
            .uses(v)
            .iter()
            .position(|&(o, j)| (self.path_of(o), j) > key)
            .unwrap_or(self.uses(v).len());
        self.uses_mut(v).insert(pos, (op, k));
    }

    /// Inserts `op` (without regions or symbols) at `index` of block `block` of region
    /// `region` of the op at `parent` (a current path), in `m` and in the index: the
    /// new op is appended to the nodes (the others keep their indices). Until the
    /// insertions into that block are applied ([`DeferredShift`]), the op is appended
    /// to the block in `m` and the later ops keep their place, so no insertion moves
    /// the ops after it. Returns the new op's index.
    pub fn insert(
        &mut self,
        m: &mut Module,
        parent: &[(usize, usize, usize)],
        region: usize,
        block: usize,
        index: usize,
        op: Op,
    ) -> OpIdx {
        let mut p = 0;
        for &(r, b, o) in parent {
            p = self.nodes[p].children[r][b][o];
        }
        if self.deferred.as_ref().is_some_and(|d| !d.is_block(p, region, block)) {
            self.apply_deferred_shift(m);
        }
        let index = index.min(self.nodes[p].children[region][block].len());
        let idx = self.nodes.len();
        let pending = self
            .deferred
            .get_or_insert_with(|| {
                Box::new(DeferredShift::new(Path::from_slice(parent), p, region, block))
            })
            .insert(idx, index);
        // The parent is outside the block, so its stored path is where it is in `m`.
        let ops = &mut op_at_path_mut(m, &self.nodes[p].path).regions[region].blocks[block].ops;
        let mut path = self.nodes[p].path.clone();
        path.push((region, block, ops.len()));
        debug_assert!(op.regions.is_empty());
        let operands = mlir_operands(&op);
        self.nodes.push(Node {
            path,
            parent: Some(p),
            name: op.name.clone(),
            kind: op.kind,
            operands: operands.clone(),
            results: Values::from_slice(&op.results),
            args: Vec::new(),
            children: Vec::new(),
            origin: op.origin,
        });
        self.erased.push(false);
        for (i, &r) in op.results.iter().enumerate() {
            let s = self.ensure(r);
            self.defs[s] = Some(Def::Result { op: idx, index: i });
        }
        ops.push(op);
        self.nodes[p].children[region][block].insert(index, idx);
        for (k, &v) in operands.iter().enumerate() {
            self.add_use(v, idx, k);
        }
        if pending >= DeferredShift::LIMIT {
            // Applying moves every op from the first insertion point on, reading a
            // path through the block costs one step per pending insertion: batches
            // of about twice the square root of the ops moved balance the two.
            let kids = self.nodes[p].children[region][block].len();
            let first = self.deferred.as_ref().map_or(0, |d| d.first_moved());
            if pending * pending >= 4 * kids.saturating_sub(first) {
                self.apply_deferred_shift(m);
            }
        }
        idx
    }

    /// Applies the deferred insertions: the ops of the block from the first insertion
    /// point on are put in their order in `m`, and they (and the ops nested in them)
    /// get their index in the stored paths.
    pub fn apply_deferred_shift(&mut self, m: &mut Module) {
        let Some(d) = self.deferred.take() else { return };
        let depth = d.parent.len();
        let kids = &self.nodes[d.parent_idx].children[d.region][d.block];
        let (first, len) = (d.first_moved().min(kids.len()), kids.len());
        let ops = &mut op_at_path_mut(m, &self.nodes[d.parent_idx].path).regions[d.region].blocks
            [d.block]
            .ops;
        let mut tail: Vec<Option<Op>> = ops.drain(first..).map(Some).collect();
        for &s in &kids[first..] {
            let at = self.nodes[s].path[depth].2 - first;
            ops.extend(tail.get_mut(at).and_then(Option::take));
        }
        debug_assert!(tail.iter().all(Option::is_none), "deferred insertions: an op left out");
        let mut stack: Vec<OpIdx> = Vec::new();
        for j in first..len {
            stack.push(self.nodes[d.parent_idx].children[d.region][d.block][j]);
            while let Some(o) = stack.pop() {
                let n = &mut self.nodes[o];
                n.path[depth].2 = j;
                stack.extend(n.children.iter().flatten().flatten().copied());
            }
        }
    }

    /// Whether this index (maybe edited in place) describes the same module as the
    /// freshly built `fresh`: ops by path, their values, definitions and uses in order.
    pub fn same_index(&self, fresh: &Graph) -> bool {
        let live = self.erased.iter().filter(|&&e| !e).count();
        if live != fresh.nodes.len() || self.base != fresh.base {
            return false;
        }
        let path = |g: &Graph, i: OpIdx| g.nodes[i].path.clone();
        let by_path: FxHashMap<Path, OpIdx> =
            fresh.nodes.iter().enumerate().map(|(i, n)| (n.path.clone(), i)).collect();
        for (i, n) in self.nodes.iter().enumerate() {
            if self.erased[i] {
                continue;
            }
            let Some(&j) = by_path.get(&n.path) else { return false };
            let f = &fresh.nodes[j];
            let kids = |g: &Graph, n: &Node| -> Vec<Vec<Vec<Path>>> {
                n.children
                    .iter()
                    .map(|r| r.iter().map(|b| b.iter().map(|&c| path(g, c)).collect()).collect())
                    .collect()
            };
            if n.name != f.name
                || n.operands != f.operands
                || n.results != f.results
                || n.args != f.args
                || n.origin != f.origin
                || n.parent.map(|p| path(self, p)) != f.parent.map(|p| path(fresh, p))
                || kids(self, n) != kids(fresh, f)
            {
                return false;
            }
        }
        let def_at = |g: &Graph, d: Option<Def>| {
            d.map(|d| match d {
                Def::Result { op, index } => (path(g, op), 0, 0, index),
                Def::Arg { op, region, block, index } => (path(g, op), region, block, index),
            })
        };
        let n = self.defs.len().max(fresh.defs.len()) as ValueId;
        (fresh.base..fresh.base + n).all(|v| {
            let uses = |g: &Graph| -> Vec<(Path, usize)> {
                g.uses(v).iter().filter(|u| !g.erased[u.0]).map(|&(o, k)| (path(g, o), k)).collect()
            };
            def_at(self, self.def(v)) == def_at(fresh, fresh.def(v)) && uses(self) == uses(fresh)
        })
    }

    /// Keeps the index valid after operand `k` (MLIR order) of op `i` became `to`.
    pub fn note_operand_set(&mut self, i: OpIdx, k: usize, to: ValueId) {
        let Some(&from) = self.nodes[i].operands.get(k) else { return };
        self.nodes[i].operands[k] = to;
        self.uses_mut(from).retain(|&u| u != (i, k));
        self.add_use(to, i, k);
    }

    /// Replaces every use of `from` by `to` (a value without uses) in `m` and in the
    /// index, like [`super::edges::replace_all_uses_except`] with a new value.
    pub fn replace_uses(&mut self, m: &mut Module, from: ValueId, to: ValueId) {
        let list = std::mem::take(self.uses_mut(from));
        let mut last = None;
        for &(o, _) in &list {
            if last == Some(o) {
                continue;
            }
            last = Some(o);
            for v in &mut op_at_path_mut(m, &self.nodes[o].path).operands {
                if *v == from {
                    *v = to;
                }
            }
            for v in &mut self.nodes[o].operands {
                if *v == from {
                    *v = to;
                }
            }
        }
        *self.uses_mut(to) = list;
    }

    pub fn node(&self, i: OpIdx) -> &Node {
        &self.nodes[i]
    }
    pub fn name(&self, i: OpIdx) -> &str {
        &self.nodes[i].name
    }
    pub fn op<'m>(&self, m: &'m Module, i: OpIdx) -> &'m Op {
        op_at_path(m, &self.nodes[i].path)
    }
    pub fn op_mut<'m>(&self, m: &'m mut Module, i: OpIdx) -> &'m mut Op {
        op_at_path_mut(m, &self.nodes[i].path)
    }
    /// The path of op `i` in the order of the ops (its stored path, where it is in the
    /// module, with deferred insertions applied).
    pub fn path_of(&self, i: OpIdx) -> Cow<'_, Path> {
        let stored = &self.nodes[i].path;
        match &self.deferred {
            Some(d) if d.affects(stored) => {
                let mut p = stored.clone();
                let k = d.parent.len();
                p[k].2 = d.resolve(i, p[k].2);
                Cow::Owned(p)
            }
            _ => Cow::Borrowed(stored),
        }
    }
    pub fn def(&self, v: ValueId) -> Option<Def> {
        self.defs.get(self.slot(v)?).copied().flatten()
    }
    pub fn uses(&self, v: ValueId) -> &[(OpIdx, usize)] {
        let Some(s) = self.slot(v) else { return &[] };
        if !self.use_over.is_empty() {
            if let Some(l) = self.use_over.get(&s) {
                return l;
            }
        }
        match (self.use_start.get(s), self.use_start.get(s + 1)) {
            (Some(&a), Some(&b)) => &self.use_list[a..b],
            _ => &[],
        }
    }
    /// Live uses (ops not erased).
    pub fn live_uses(&self, v: ValueId) -> impl Iterator<Item = (OpIdx, usize)> + '_ {
        self.uses(v).iter().copied().filter(|(o, _)| !self.erased[*o])
    }
    pub fn has_one_use(&self, v: ValueId) -> bool {
        self.live_uses(v).count() == 1
    }
    pub fn ty(&self, m: &Module, v: ValueId) -> ValueType {
        ValueType::parse(m.ty(v).unwrap_or(""))
    }
    /// The op defining `v`, or the op owning the block of block argument `v`.
    pub fn owner(&self, v: ValueId) -> Option<OpIdx> {
        match self.def(v)? {
            Def::Result { op, .. } => Some(op),
            Def::Arg { op, .. } => Some(op),
        }
    }
    pub fn is_result(&self, v: ValueId) -> bool {
        matches!(self.def(v), Some(Def::Result { .. }))
    }
    /// The enclosing `func.func` of op `i`.
    pub fn enclosing_func(&self, mut i: OpIdx) -> Option<OpIdx> {
        loop {
            let p = self.nodes[i].parent?;
            if self.nodes[p].kind == OpKind::FuncFunc {
                return Some(p);
            }
            i = p;
        }
    }
    /// The terminator of region `r` (first block) of op `i`.
    pub fn terminator(&self, i: OpIdx, r: usize) -> Option<OpIdx> {
        let ops = self.nodes[i].children.get(r)?.first()?;
        ops.iter().rev().copied().find(|&o| !self.erased[o])
    }
    /// Op `i` and every op nested in it in MLIR's default walk order: an op after
    /// everything nested in it (erased ops included).
    pub fn post_order_from(&self, i: OpIdx) -> Vec<OpIdx> {
        fn go(g: &Graph, i: OpIdx, out: &mut Vec<OpIdx>) {
            for &c in g.nodes[i].children.iter().flatten().flatten() {
                go(g, c, out);
            }
            out.push(i);
        }
        let mut out = Vec::new();
        go(self, i, &mut out);
        out
    }
    /// The ops in pre-order (not erased), the top module excluded.
    pub fn pre_order(&self) -> Vec<OpIdx> {
        (1..self.nodes.len()).filter(|&i| !self.erased[i]).collect()
    }
    pub fn mesh(&self, r: &MeshRef) -> Option<Mesh> {
        self.mesh_ref(r).cloned()
    }
    /// [`Graph::mesh`] without a copy.
    pub fn mesh_ref<'s>(&'s self, r: &'s MeshRef) -> Option<&'s Mesh> {
        match r {
            MeshRef::Symbol(s) => self.meshes.get(s),
            MeshRef::Inline(m) => Some(m),
        }
    }
    /// The main function: the only function, else `@main`.
    pub fn main_func(&self, m: &Module) -> Option<OpIdx> {
        let funcs: Vec<OpIdx> = m
            .body()
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind == OpKind::FuncFunc)
            .filter_map(|(i, _)| self.nodes[0].children.first()?.first()?.get(i).copied())
            .collect();
        if funcs.len() == 1 {
            return Some(funcs[0]);
        }
        self.funcs.get("main").copied()
    }

    // ----- data-flow edges -----

    /// The owner of the data-flow edge of target `v` (`getEdgeOwnerFromTarget`).
    pub fn edge_owner_from_target(&self, v: ValueId) -> Option<ValueId> {
        let owner = self.owner(v)?;
        let n = &self.nodes[owner];
        match (n.name.as_str(), self.def(v)?) {
            ("stablehlo.while", Def::Result { .. }) => Some(v),
            ("stablehlo.while", Def::Arg { index, .. }) => n.results.get(index).copied(),
            ("stablehlo.case" | "stablehlo.optimization_barrier", Def::Result { .. }) => Some(v),
            ("sdy.named_computation" | "sdy.manual_computation", _) => Some(v),
            _ => None,
        }
    }

    /// The `sdy.data_flow_edge` whose input is the owner of `v`'s edge
    /// (`DataFlowEdgeOp::lookup(Value)`).
    pub fn edge_of_target(&self, v: ValueId) -> Option<OpIdx> {
        let owner_op = self.owner(v)?;
        if !self.nodes[owner_op].kind.is_data_flow_op() {
            return None;
        }
        let owner = self.edge_owner_from_target(v)?;
        self.edge_user(owner)
    }

    /// The single user of `owner` when it is an `sdy.data_flow_edge`.
    pub fn edge_user(&self, owner: ValueId) -> Option<OpIdx> {
        let mut uses = self.live_uses(owner);
        let (u, _) = uses.next()?;
        if uses.next().is_some() || self.nodes[u].kind != OpKind::SdyDataFlowEdge {
            return None;
        }
        Some(u)
    }

    /// The data-flow edge a use (`user`, operand `i`) is a source of
    /// (`DataFlowEdgeOp::lookup(OpOperand&)`).
    pub fn edge_of_source(&self, user: OpIdx, i: usize) -> Option<OpIdx> {
        let mut op = user;
        let term = is_terminator(&self.nodes[user].name);
        if term {
            op = self.nodes[user].parent?;
        }
        let n = &self.nodes[op];
        if !n.kind.is_data_flow_op() {
            return None;
        }
        let owner = match n.name.as_str() {
            "sdy.named_computation" | "sdy.manual_computation" if !term => *n.operands.get(i)?,
            _ => *n.results.get(i)?,
        };
        self.edge_user(owner)
    }

    /// The sources of the edge of `owner` (`getEdgeSources`).
    pub fn edge_sources(&self, owner: ValueId) -> Vec<ValueId> {
        let Some(op) = self.owner(owner) else { return Vec::new() };
        let n = &self.nodes[op];
        let ret_operand = |region: usize, i: usize| -> Option<ValueId> {
            let t = self.terminator(op, region)?;
            self.nodes[t].operands.get(i).copied()
        };
        match (n.name.as_str(), self.def(owner)) {
            ("stablehlo.while", Some(Def::Result { index, .. })) => {
                [n.operands.get(index).copied(), ret_operand(1, index)]
                    .into_iter()
                    .flatten()
                    .collect()
            }
            ("stablehlo.case", Some(Def::Result { index, .. })) => {
                (0..n.children.len()).filter_map(|r| ret_operand(r, index)).collect()
            }
            ("stablehlo.optimization_barrier", Some(Def::Result { index, .. })) => {
                n.operands.get(index).copied().into_iter().collect()
            }
            ("sdy.named_computation" | "sdy.manual_computation", Some(Def::Arg { index, .. })) => {
                n.operands.get(index).copied().into_iter().collect()
            }
            (
                "sdy.named_computation" | "sdy.manual_computation",
                Some(Def::Result { index, .. }),
            ) => ret_operand(0, index).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// The targets of `owner`'s edge other than itself (while block arguments).
    pub fn non_owner_targets(&self, owner: ValueId) -> Vec<ValueId> {
        let Some(op) = self.owner(owner) else { return Vec::new() };
        let n = &self.nodes[op];
        match (n.name.as_str(), self.def(owner)) {
            ("stablehlo.while", Some(Def::Result { index, .. })) => n
                .args
                .iter()
                .filter_map(|r| r.first().and_then(|b| b.get(index)).copied())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The value holding `v`'s sharding (`getShardableValue`): the data-flow edge for
    /// edge targets, the value itself for op results and function arguments, the
    /// edge owner for data-flow block arguments, `None` for other block arguments.
    pub fn shardable_value(&self, v: ValueId) -> Option<ValueId> {
        if let Some(e) = self.edge_of_target(v) {
            return self.nodes[e].results.first().copied();
        }
        match self.def(v)? {
            Def::Result { .. } => Some(v),
            Def::Arg { op, index, .. } => {
                let name = self.nodes[op].name.as_str();
                if name == "func.func" {
                    Some(v)
                } else if self.nodes[op].kind.is_data_flow_op() {
                    self.edge_owner_from_target(v)
                } else if name == "stablehlo.async_start" {
                    self.nodes[op].operands.get(index).copied()
                } else {
                    None
                }
            }
        }
    }

    // ----- shardings -----

    /// The sharding of `v` (`getSharding`).
    pub fn sharding(&self, m: &Module, v: ValueId) -> Option<TensorSharding> {
        self.sharding_ref(m, v).map(Cow::into_owned)
    }

    /// [`Graph::sharding`], borrowed from the module where it is stored as is.
    pub fn sharding_ref<'m>(&self, m: &'m Module, v: ValueId) -> Option<Cow<'m, TensorSharding>> {
        let v = self.shardable_value(v)?;
        let owner = self.owner(v)?;
        let op = self.op(m, owner);
        let def = self.def(v)?;
        let name = op.name.as_str();
        let s = match name {
            "func.func" => {
                let Def::Arg { index, .. } = def else { return None };
                sharding_of_ref(op.func()?.args.get(index)?.attr("sdy.sharding"))
            }
            "sdy.data_flow_edge" | "sdy.sharding_constraint" | "sdy.reshard" => {
                sharding_of_ref(op.prop("sharding"))
            }
            _ if op.kind.is_collective() => sharding_of_ref(op.prop("out_sharding")),
            _ if op.kind.is_data_flow_op() => return self.edge_owner_sharding(m, owner, def),
            _ => {
                let Def::Result { index, .. } = def else { return None };
                per_value_ref(op.attr("sdy.sharding"), index)
            }
        };
        s.map(Cow::Borrowed)
    }

    fn edge_owner_sharding<'m>(
        &self,
        m: &'m Module,
        owner: OpIdx,
        def: Def,
    ) -> Option<Cow<'m, TensorSharding>> {
        let op = self.op(m, owner);
        let s = match (op.name.as_str(), def) {
            ("sdy.named_computation", Def::Arg { index, .. }) => {
                per_value_ref(op.prop("in_shardings"), index)
            }
            ("sdy.named_computation", Def::Result { index, .. }) => {
                per_value_ref(op.prop("out_shardings"), index)
            }
            ("sdy.manual_computation", Def::Arg { index, .. }) => {
                let s = per_value_ref(op.prop("in_shardings"), index)?;
                return Some(Cow::Owned(erase_manual_axes(s, &manual_axes(op))));
            }
            ("sdy.manual_computation", Def::Result { index, .. }) => {
                per_value_ref(op.prop("out_shardings"), index)
            }
            (_, Def::Result { index, .. }) => per_value_ref(op.attr("sdy.sharding"), index),
            _ => None,
        };
        s.map(Cow::Borrowed)
    }

    /// Sets the sharding of `v` (`setSharding`); a no-op for values that cannot hold
    /// one.
    pub fn set_sharding(&self, m: &mut Module, v: ValueId, s: TensorSharding) {
        let Some(v) = self.shardable_value(v) else { return };
        let Some(owner) = self.owner(v) else { return };
        let Some(def) = self.def(v) else { return };
        let (name, kind) = (self.nodes[owner].name.clone(), self.nodes[owner].kind);
        match name.as_str() {
            "func.func" => {
                let Def::Arg { index, .. } = def else { return };
                if let Some(slot) =
                    self.op_mut(m, owner).func_mut().and_then(|f| f.args.get_mut(index))
                {
                    slot.set_attr("sdy.sharding", Attr::Sharding(s));
                }
            }
            "sdy.data_flow_edge" | "sdy.sharding_constraint" | "sdy.reshard" => {
                self.op_mut(m, owner).set_prop("sharding", Attr::Sharding(s));
            }
            _ if kind.is_collective() => {
                self.op_mut(m, owner).set_prop("out_sharding", Attr::Sharding(s));
            }
            _ if kind.is_data_flow_op() => self.set_edge_owner_sharding(m, owner, def, s),
            _ => {
                let Def::Result { index, .. } = def else { return };
                self.set_result_sharding(m, owner, index, s);
            }
        }
    }

    /// Replaces result `index`'s entry of the op's `sdy.sharding` (creating fully open
    /// shardings for the other results when there is none).
    pub fn set_result_sharding(
        &self,
        m: &mut Module,
        owner: OpIdx,
        index: usize,
        s: TensorSharding,
    ) {
        let n = self.nodes[owner].results.len();
        // A list of the right length is updated in place.
        let op = self.op_mut(m, owner);
        if let Some(Attr::PerValue(l)) =
            op.attrs.iter_mut().find(|a| a.name == "sdy.sharding").map(|a| &mut a.value)
        {
            if l.len() == n {
                if let Some(slot) = l.get_mut(index) {
                    *slot = s;
                }
                return;
            }
        }
        let results = self.nodes[owner].results.clone();
        let mut list = match per_value(self.op(m, owner).attr("sdy.sharding")) {
            Some(l) if l.len() == results.len() => l,
            _ if results.len() == 1 && index == 0 => {
                self.op_mut(m, owner).set_attr("sdy.sharding", Attr::PerValue(vec![s]));
                return;
            }
            _ => results.iter().map(|&r| open_sharding(&s.mesh, self.ty(m, r).rank())).collect(),
        };
        if index < list.len() {
            list[index] = s;
        }
        self.op_mut(m, owner).set_attr("sdy.sharding", Attr::PerValue(list));
    }

    fn set_edge_owner_sharding(&self, m: &mut Module, owner: OpIdx, def: Def, s: TensorSharding) {
        let name = self.nodes[owner].name.clone();
        let fill =
            |g: &Graph, m: &Module, vals: &[ValueId], existing: Option<Vec<TensorSharding>>| {
                match existing {
                    Some(l) if l.len() == vals.len() => l,
                    _ => vals.iter().map(|&r| open_sharding(&s.mesh, g.ty(m, r).rank())).collect(),
                }
            };
        match (name.as_str(), def) {
            ("sdy.named_computation" | "sdy.manual_computation", Def::Arg { index, .. }) => {
                let args = self.nodes[owner]
                    .args
                    .first()
                    .and_then(|r| r.first())
                    .cloned()
                    .unwrap_or_default();
                let existing = per_value(self.op(m, owner).prop("in_shardings"));
                let manual = name == "sdy.manual_computation";
                let mut list = fill(self, m, &args, existing);
                if index < list.len() {
                    list[index] = if manual {
                        let axes = manual_axes(self.op(m, owner));
                        add_free_axes(&list[index], &s, &axes)
                    } else {
                        s.clone()
                    };
                }
                self.op_mut(m, owner).set_prop("in_shardings", Attr::PerValue(list));
            }
            ("sdy.named_computation" | "sdy.manual_computation", Def::Result { index, .. }) => {
                let results = self.nodes[owner].results.clone();
                let existing = per_value(self.op(m, owner).prop("out_shardings"));
                let mut list = fill(self, m, &results, existing);
                if index < list.len() {
                    list[index] = s.clone();
                }
                self.op_mut(m, owner).set_prop("out_shardings", Attr::PerValue(list));
            }
            (_, Def::Result { index, .. }) => self.set_result_sharding(m, owner, index, s),
            _ => {}
        }
    }

    /// `transformTargetSharding` of the edge `edge` (manual computations add or
    /// remove their manual axes; identity otherwise).
    pub fn transform_target_sharding(
        &self,
        m: &Module,
        edge: OpIdx,
        s: Option<TensorSharding>,
        before: bool,
    ) -> Option<TensorSharding> {
        let s = s?;
        let input = *self.nodes[edge].operands.first()?;
        let owner = self.owner(input)?;
        let op = self.op(m, owner);
        if op.kind != OpKind::SdyManualComputation {
            return Some(s);
        }
        let axes = manual_axes(op);
        match (self.def(input)?, before) {
            (Def::Arg { index, .. }, true) => {
                let outer = per_value_at(op.prop("in_shardings"), index)?;
                Some(add_free_axes(&outer, &s, &axes))
            }
            (Def::Result { .. }, true) => Some(erase_manual_axes(&s, &axes)),
            (Def::Arg { .. }, false) => Some(erase_manual_axes(&s, &axes)),
            (Def::Result { index, .. }, false) => {
                let outer = per_value_at(op.prop("out_shardings"), index)?;
                Some(add_free_axes(&outer, &s, &axes))
            }
        }
    }

    /// The sharding of result `index` of function `func`.
    pub fn func_result_sharding(
        &self,
        m: &Module,
        func: OpIdx,
        index: usize,
    ) -> Option<TensorSharding> {
        self.func_result_sharding_ref(m, func, index).cloned()
    }
    pub fn func_result_sharding_ref<'m>(
        &self,
        m: &'m Module,
        func: OpIdx,
        index: usize,
    ) -> Option<&'m TensorSharding> {
        sharding_of_ref(self.op(m, func).func()?.results.get(index)?.attr("sdy.sharding"))
    }
    pub fn set_func_result_sharding(
        &self,
        m: &mut Module,
        func: OpIdx,
        index: usize,
        s: TensorSharding,
    ) {
        if let Some(slot) = self.op_mut(m, func).func_mut().and_then(|f| f.results.get_mut(index)) {
            slot.set_attr("sdy.sharding", Attr::Sharding(s));
        }
    }
}

pub fn sharding_of(a: Option<&Attr>) -> Option<TensorSharding> {
    sharding_of_ref(a).cloned()
}

/// [`sharding_of`] without a copy.
pub fn sharding_of_ref(a: Option<&Attr>) -> Option<&TensorSharding> {
    match a {
        Some(Attr::Sharding(s)) => Some(s),
        Some(Attr::PerValue(v)) if v.len() == 1 => Some(&v[0]),
        _ => None,
    }
}

/// Entry `index` of a per-value sharding list (the others are not copied).
pub fn per_value_at(a: Option<&Attr>, index: usize) -> Option<TensorSharding> {
    per_value_ref(a, index).cloned()
}

/// [`per_value_at`] without a copy.
pub fn per_value_ref(a: Option<&Attr>, index: usize) -> Option<&TensorSharding> {
    match a {
        Some(Attr::PerValue(v)) => v.get(index),
        _ => None,
    }
}

pub fn per_value(a: Option<&Attr>) -> Option<Vec<TensorSharding>> {
    match a {
        Some(Attr::PerValue(v)) => Some(v.clone()),
        _ => None,
    }
}

/// `addFreeAxesToManualComputationSharding`: the manual prefix of `outer` followed by
/// the axes of `new`, open/closed and priorities from `new`, replicated/unreduced
/// from `outer`.
pub fn add_free_axes(
    outer: &TensorSharding,
    new: &TensorSharding,
    manual: &[String],
) -> TensorSharding {
    let base = erase_free_axes(outer, manual);
    let dims = base
        .dims
        .iter()
        .zip(&new.dims)
        .map(|(b, n)| DimSharding {
            axes: b.axes.iter().chain(&n.axes).cloned().collect(),
            open: n.open,
            priority: n.priority,
        })
        .collect();
    TensorSharding {
        mesh: new.mesh.clone(),
        dims,
        replicated: outer.replicated.clone(),
        unreduced: outer.unreduced.clone(),
        reduction: crate::sharding::Reduction::Sum,
    }
}

/// Whether a sharding has no axes in any dimension.
pub fn empty_axes(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty())
}

pub fn fully_replicated_and_open(s: &TensorSharding) -> bool {
    s.dims.iter().all(|d| d.axes.is_empty() && d.open)
}

/// Total number of devices a sharding's axes use (for diagnostics).
pub fn sharded_size(s: &TensorSharding, mesh: &Mesh) -> i64 {
    s.dims.iter().map(|d| axis::total_size(&d.axes, mesh)).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types() {
        assert_eq!(
            ValueType::parse("tensor<8x?x2xf32>"),
            ValueType::Ranked(vec![Some(8), None, Some(2)])
        );
        assert_eq!(ValueType::parse("tensor<f32>"), ValueType::Ranked(vec![]));
        assert_eq!(ValueType::parse("tensor<4xi64, #enc>").static_shape(), Some(vec![4]));
        assert!(matches!(ValueType::parse("!stablehlo.token"), ValueType::Other(_)));
        assert!(matches!(ValueType::parse("tuple<tensor<f32>>"), ValueType::Tuple(_)));
        for t in [
            "tensor<f32>",
            "tensor<8xf32>",
            "tensor<?x2xf32>",
            "tensor<*xf32>",
            " tensor<i1> ",
            "tuple<>",
            "f32",
            "tensor<xf32>",
        ] {
            let want = matches!(ValueType::parse(t), ValueType::Ranked(d) if d.is_empty());
            assert_eq!(ValueType::is_scalar_text(t), want, "{t}");
        }
    }
}
