//! MLIR's greedy pattern rewrite driver (`applyPatternsGreedily`) as the canonicalizer
//! runs it on a module: each iteration walks the module (pre-order when top-down),
//! uniques and hoists constants, then pops ops from a LIFO worklist, erasing trivially
//! dead ops and trying the op's patterns; rewrites put the ops they touch back on the
//! worklist (inserted ops, users of replaced values, definitions of erased operands).
//! Region simplification deletes what is left dead. Iterations repeat while something
//! changed, up to `max-iterations`.

use super::arena::{Arena, BlockRef, Def, OpRef};
use super::effects::{constant_key, intrinsically_live, is_trivially_dead, isolated_from_above};
use super::shardings::meshes;
use crate::ir::{Op, ValueId};
use crate::sharding::Mesh;
use std::collections::{HashMap, HashSet};

/// The canonicalizer's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub top_down: bool,
    pub region_simplify: bool,
    /// Negative: no limit.
    pub max_iterations: i64,
    /// Per iteration; negative: no limit.
    pub max_num_rewrites: i64,
}

impl Default for Config {
    fn default() -> Config {
        Config { top_down: true, region_simplify: true, max_iterations: 10, max_num_rewrites: -1 }
    }
}

/// MLIR's `Worklist`: a vector with holes for removed ops, popped from the back.
#[derive(Default)]
struct Worklist {
    list: Vec<Option<OpRef>>,
    pos: HashMap<OpRef, usize>,
}

impl Worklist {
    fn push(&mut self, op: OpRef) {
        if self.pos.contains_key(&op) {
            return;
        }
        self.pos.insert(op, self.list.len());
        self.list.push(Some(op));
    }
    fn pop(&mut self) -> Option<OpRef> {
        while let Some(slot) = self.list.pop() {
            if let Some(op) = slot {
                self.pos.remove(&op);
                return Some(op);
            }
        }
        None
    }
    fn remove(&mut self, op: OpRef) {
        if let Some(i) = self.pos.remove(&op) {
            self.list[i] = None;
        }
    }
    fn reverse(&mut self) {
        self.list.reverse();
        for (i, slot) in self.list.iter().enumerate() {
            if let Some(op) = slot {
                self.pos.insert(*op, i);
            }
        }
    }
    fn clear(&mut self) {
        self.list.clear();
        self.pos.clear();
    }
}

/// The IR being rewritten and the driver's bookkeeping, as patterns see it (MLIR's
/// `PatternRewriter` with the driver as listener).
pub struct Rewriter {
    pub ir: Arena,
    pub meshes: HashMap<String, Mesh>,
    worklist: Worklist,
    /// Errors ops emitted: (op, message).
    pub errors: Vec<(OpRef, String)>,
}

/// What a pattern set provides: tries the op's patterns in order, true when one
/// rewrote the IR.
pub type ApplyPatterns = fn(&mut Rewriter, OpRef) -> bool;

impl Rewriter {
    pub fn new(ir: Arena) -> Rewriter {
        let meshes = meshes(&ir);
        Rewriter { ir, meshes, worklist: Worklist::default(), errors: Vec::new() }
    }

    // ----- worklist notifications -----

    /// Adds `op` and its ancestors below the module (those not queued yet).
    pub fn add_to_worklist(&mut self, op: OpRef) {
        let mut chain = Vec::new();
        let mut cur = op;
        loop {
            chain.push(cur);
            let Some(parent) = self.ir.parent_op(cur) else { return };
            if parent == self.ir.top {
                break;
            }
            cur = parent;
        }
        for o in chain {
            self.worklist.push(o);
        }
    }

    /// The definitions of `op`'s operands that are left with at most one other user.
    fn add_operands_to_worklist(&mut self, op: OpRef) {
        let operands = self.ir.op(op).operands.clone();
        for v in operands {
            let Some(def) = self.ir.def_op(v) else { continue };
            let mut other: Option<OpRef> = None;
            let mut more = false;
            for (u, _) in self.ir.uses(v) {
                if u == op || Some(u) == other {
                    continue;
                }
                if other.is_none() {
                    other = Some(u);
                    continue;
                }
                more = true;
                break;
            }
            if !more {
                self.add_to_worklist(def);
            }
        }
    }

    pub fn remove_from_worklist(&mut self, op: OpRef) {
        self.worklist.remove(op);
    }

    // ----- rewriting -----

    /// A new value of the type of `like`.
    pub fn value_like(&mut self, like: ValueId) -> ValueId {
        let ty = self.ir.ty(like).map(str::to_string);
        self.ir.new_value(ty)
    }

    /// Inserts `op` right before `anchor`.
    pub fn insert_before(&mut self, anchor: OpRef, op: Op) -> OpRef {
        let r = self.ir.add_tree(op);
        self.ir.link_before(anchor, r);
        self.notify_inserted(r);
        r
    }

    /// Inserts `op` right after the definition of `v` (at the start of its block for
    /// block arguments), MLIR's `setInsertionPointAfterValue`.
    pub fn insert_after_value(&mut self, v: ValueId, op: Op) -> Option<OpRef> {
        let def = self.ir.def(v)?;
        let r = self.ir.add_tree(op);
        match def {
            Def::Result(d, _) => self.ir.link_after(d, r),
            Def::Arg(b, _) => self.ir.link_at_start(b, r),
        }
        self.notify_inserted(r);
        Some(r)
    }

    fn notify_inserted(&mut self, r: OpRef) {
        for nested in self.ir.nested_preorder(r) {
            self.add_to_worklist(nested);
        }
        self.add_to_worklist(r);
    }

    /// Replaces the results of `op` by `values` (users are revisited) and erases it.
    pub fn replace_op(&mut self, op: OpRef, values: &[ValueId]) {
        let results = self.ir.op(op).results.clone();
        for (&r, &v) in results.iter().zip(values) {
            for user in self.ir.replace_all_uses(r, v) {
                self.add_to_worklist(user);
            }
        }
        self.erase_op(op);
    }

    /// Erases `op` and its nested ops, users before definitions.
    pub fn erase_op(&mut self, op: OpRef) {
        let regions = self.ir.ops[op].regions.clone();
        for blocks in regions.iter().rev() {
            for &b in blocks.iter().rev() {
                for child in self.ir.block_ops(b).into_iter().rev() {
                    self.erase_op(child);
                }
            }
        }
        self.add_operands_to_worklist(op);
        self.worklist.remove(op);
        self.ir.erase_single(op);
    }

    /// Records an error on `op` (MLIR's `emitOpError`).
    pub fn op_error(&mut self, op: OpRef, message: String) {
        let name = self.ir.name(op).to_string();
        self.errors.push((op, format!("'{name}' op {message}")));
    }
}

/// MLIR's `OperationFolder` as used by the driver: one constant per (value, type) in
/// each isolated region, kept at the front of the region's entry block.
#[derive(Default)]
struct Folder {
    uniqued: HashMap<(BlockRef, String, String), OpRef>,
    owned: HashSet<OpRef>,
}

impl Folder {
    /// `insertKnownConstant`: false when `op` was replaced by an existing constant.
    fn insert(&mut self, rw: &mut Rewriter, op: OpRef, key: (String, String)) -> bool {
        let Some(block) = rw.ir.ops[op].block else { return true };
        let at_front = |rw: &Rewriter, f: &Folder, b: BlockRef| {
            rw.ir.first_in_block(b) == Some(op)
                || rw.ir.prev(op).is_some_and(|p| f.owned.contains(&p))
        };
        if self.owned.contains(&op) {
            if !at_front(rw, self, block) {
                rw.ir.unlink(op);
                rw.ir.link_at_start(block, op);
            }
            return true;
        }
        let target = insertion_block(&rw.ir, block);
        let k = (target, key.0, key.1);
        if let Some(&existing) = self.uniqued.get(&k) {
            if rw.ir.alive(existing) {
                let results = rw.ir.op(existing).results.clone();
                rw.replace_op(op, &results);
                return false;
            }
        }
        if block != target || !at_front(rw, self, block) {
            rw.ir.unlink(op);
            rw.ir.link_at_start(target, op);
        }
        self.uniqued.insert(k, op);
        self.owned.insert(op);
        true
    }
}

/// The entry block of the closest region around `block` whose op is isolated from
/// above (or the module's).
fn insertion_block(ir: &Arena, mut block: BlockRef) -> BlockRef {
    loop {
        let parent = ir.blocks[block].parent;
        if parent == ir.top
            || isolated_from_above(ir.name(parent))
            || ir.ops[parent].block.is_none()
        {
            return ir.ops[parent]
                .regions
                .iter()
                .find(|r| r.contains(&block))
                .and_then(|r| r.first().copied())
                .unwrap_or(block);
        }
        match ir.ops[parent].block {
            Some(b) => block = b,
            None => return block,
        }
    }
}

/// Runs the driver to a fixed point (or the iteration limit); true when it converged.
pub fn run(rw: &mut Rewriter, cfg: &Config, patterns: ApplyPatterns) -> bool {
    let mut iteration: i64 = 0;
    loop {
        iteration += 1;
        if cfg.max_iterations >= 0 && iteration > cfg.max_iterations {
            return false;
        }
        rw.worklist.clear();
        let mut folder = Folder::default();
        let order = walk(&rw.ir, cfg.top_down);
        for op in order {
            if !rw.ir.alive(op) {
                continue;
            }
            if let Some(key) = constant_key(rw.ir.op(op), &rw.ir) {
                if !folder.insert(rw, op, key) {
                    continue;
                }
            }
            rw.add_to_worklist(op);
        }
        if cfg.top_down {
            rw.worklist.reverse();
        }
        let mut changed = process(rw, cfg, patterns);
        if cfg.region_simplify {
            changed |= region_dce(rw);
        }
        if !changed {
            return true;
        }
    }
}

/// The ops under the module, pre-order (top-down) or post-order.
fn walk(ir: &Arena, pre: bool) -> Vec<OpRef> {
    fn go(ir: &Arena, r: OpRef, pre: bool, out: &mut Vec<OpRef>) {
        for region in &ir.ops[r].regions {
            for &b in region {
                for o in ir.block_ops(b) {
                    if pre {
                        out.push(o);
                    }
                    go(ir, o, pre, out);
                    if !pre {
                        out.push(o);
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    go(ir, ir.top, pre, &mut out);
    out
}

fn process(rw: &mut Rewriter, cfg: &Config, patterns: ApplyPatterns) -> bool {
    let mut changed = false;
    let mut rewrites: i64 = 0;
    while cfg.max_num_rewrites < 0 || rewrites < cfg.max_num_rewrites {
        let Some(op) = rw.worklist.pop() else { break };
        if !rw.ir.alive(op) {
            continue;
        }
        if is_trivially_dead(&rw.ir, op) {
            rw.erase_op(op);
            changed = true;
            continue;
        }
        if patterns(rw, op) {
            changed = true;
            rewrites += 1;
        }
    }
    changed
}

/// Region DCE (`runRegionDCE`): liveness from the ops that must stay (terminators, ops
/// with effects) through the values they use, then every op not proven live is erased
/// with what it holds. An op nested in a dead op can still keep a value defined
/// outside alive for this round, as in MLIR.
fn region_dce(rw: &mut Rewriter) -> bool {
    let ops = walk(&rw.ir, false);
    let mut live: HashSet<OpRef> = HashSet::new();
    loop {
        let mut grew = false;
        for &op in ops.iter().rev() {
            if live.contains(&op) {
                continue;
            }
            let used_live = rw.ir.op(op).results.iter().any(|&v| {
                let mut uses = rw.ir.uses(v);
                uses.any(|(u, _)| live.contains(&u))
            });
            if used_live || intrinsically_live(&rw.ir, op) {
                live.insert(op);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut any = false;
    let mut blocks: Vec<BlockRef> =
        rw.ir.ops[rw.ir.top].regions.iter().flatten().copied().collect();
    while let Some(b) = blocks.pop() {
        for op in rw.ir.block_ops(b).into_iter().rev() {
            if !rw.ir.alive(op) {
                continue;
            }
            if live.contains(&op) {
                blocks.extend(rw.ir.ops[op].regions.iter().flatten().copied());
            } else {
                rw.erase_op(op);
                any = true;
            }
        }
    }
    any
}
