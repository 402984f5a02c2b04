//! A mutable graph view of a module for rewriting: ops live in an arena, each block is
//! a doubly linked list of ops, and every value keeps its use list, so a pattern can
//! find definitions and users, insert, move, replace and erase ops in constant time.
//! [`Arena::into_module`] rebuilds the printable tree.
//!
//! Use lists follow MLIR's: intrusive doubly linked lists where a new use goes to the
//! front, so iterating [`Arena::uses`] yields the newest use first (what
//! `Value::getUsers()` does, which decides which candidate a pattern finds first), and
//! a use is removed in constant time.

use crate::ir::{Block, Module, Op, Region, ValueId, ValueInfo};

pub type OpRef = usize;
pub type BlockRef = usize;

pub struct OpNode {
    /// The op without its regions (they are in `regions`).
    pub op: Op,
    /// The use slot of each operand.
    use_slots: Vec<UseId>,
    pub regions: Vec<Vec<BlockRef>>,
    /// The block holding the op; `None` for the top module and detached or erased ops.
    pub block: Option<BlockRef>,
    prev: Option<OpRef>,
    next: Option<OpRef>,
    /// Position in the block (valid while the block's `order_valid`).
    order: u64,
    pub alive: bool,
}

pub struct BlockNode {
    pub args: Vec<ValueId>,
    pub parent: OpRef,
    first: Option<OpRef>,
    last: Option<OpRef>,
    order_valid: bool,
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    Result(OpRef, usize),
    Arg(BlockRef, usize),
}

/// A use of a value: the op and the operand index.
pub type Use = (OpRef, usize);

type UseId = usize;

/// One operand's link in its value's use list.
#[derive(Clone, Copy)]
struct UseSlot {
    user: Use,
    value: ValueId,
    prev: Option<UseId>,
    next: Option<UseId>,
}

/// A value's use list: the newest use first.
#[derive(Clone, Copy, Default)]
struct UseList {
    head: Option<UseId>,
    len: usize,
}

pub struct Arena {
    pub ops: Vec<OpNode>,
    pub blocks: Vec<BlockNode>,
    pub values: Vec<ValueInfo>,
    defs: Vec<Option<Def>>,
    /// Per value, its use list.
    lists: Vec<UseList>,
    slots: Vec<UseSlot>,
    pub top: OpRef,
}

impl Arena {
    pub fn from_module(m: Module) -> Arena {
        let n = m.values.len();
        let mut a = Arena {
            ops: Vec::new(),
            blocks: Vec::new(),
            values: m.values,
            defs: vec![None; n],
            lists: vec![UseList::default(); n],
            slots: Vec::new(),
            top: 0,
        };
        a.top = a.add_tree(m.top);
        a
    }

    /// Rebuilds the module (erased ops dropped).
    pub fn into_module(mut self) -> Module {
        let top = self.take_tree(self.top);
        Module { values: std::mem::take(&mut self.values), top }
    }

    fn take_tree(&mut self, r: OpRef) -> Op {
        let placeholder = Op::pretty("", Vec::new(), Vec::new(), Vec::new());
        let mut op = std::mem::replace(&mut self.ops[r].op, placeholder);
        let regions = std::mem::take(&mut self.ops[r].regions);
        op.regions = regions
            .into_iter()
            .map(|blocks| Region {
                blocks: blocks
                    .into_iter()
                    .map(|b| {
                        let ops: Vec<OpRef> = self.block_ops(b);
                        Block {
                            args: std::mem::take(&mut self.blocks[b].args),
                            ops: ops.into_iter().map(|o| self.take_tree(o)).collect(),
                        }
                    })
                    .collect(),
            })
            .collect();
        op
    }

    /// Adds `op` and everything nested in it, detached; registers definitions and uses.
    pub fn add_tree(&mut self, mut op: Op) -> OpRef {
        let regions = std::mem::take(&mut op.regions);
        let r = self.ops.len();
        for (i, &v) in op.results.iter().enumerate() {
            self.set_def(v, Def::Result(r, i));
        }
        let operands = op.operands.clone();
        self.ops.push(OpNode {
            op,
            use_slots: Vec::with_capacity(operands.len()),
            regions: Vec::new(),
            block: None,
            prev: None,
            next: None,
            order: 0,
            alive: true,
        });
        for (i, v) in operands.into_iter().enumerate() {
            let id = self.new_slot(v, (r, i));
            self.ops[r].use_slots.push(id);
        }
        let mut region_refs = Vec::with_capacity(regions.len());
        for region in regions {
            let mut brefs = Vec::with_capacity(region.blocks.len());
            for block in region.blocks {
                let b = self.blocks.len();
                for (i, &v) in block.args.iter().enumerate() {
                    self.set_def(v, Def::Arg(b, i));
                }
                self.blocks.push(BlockNode {
                    args: block.args,
                    parent: r,
                    first: None,
                    last: None,
                    order_valid: true,
                });
                for child in block.ops {
                    let c = self.add_tree(child);
                    self.link_at_end(b, c);
                }
                brefs.push(b);
            }
            region_refs.push(brefs);
        }
        self.ops[r].regions = region_refs;
        r
    }

    fn ensure(&mut self, v: ValueId) {
        let v = v as usize;
        if v >= self.defs.len() {
            self.defs.resize(v + 1, None);
            self.lists.resize(v + 1, UseList::default());
        }
    }

    fn set_def(&mut self, v: ValueId, d: Def) {
        self.ensure(v);
        self.defs[v as usize] = Some(d);
    }

    fn new_slot(&mut self, v: ValueId, user: Use) -> UseId {
        let id = self.slots.len();
        self.slots.push(UseSlot { user, value: v, prev: None, next: None });
        self.link_use(id, v);
        id
    }

    /// Puts slot `id` at the front of `v`'s use list.
    fn link_use(&mut self, id: UseId, v: ValueId) {
        self.ensure(v);
        let list = &mut self.lists[v as usize];
        let old = list.head.replace(id);
        list.len += 1;
        self.slots[id].value = v;
        self.slots[id].prev = None;
        self.slots[id].next = old;
        if let Some(o) = old {
            self.slots[o].prev = Some(id);
        }
    }

    /// Takes slot `id` out of its value's use list.
    fn unlink_use(&mut self, id: UseId) {
        let UseSlot { value, prev, next, .. } = self.slots[id];
        let list = &mut self.lists[value as usize];
        list.len -= 1;
        match prev {
            Some(p) => self.slots[p].next = next,
            None => list.head = next,
        }
        if let Some(n) = next {
            self.slots[n].prev = prev;
        }
        self.slots[id].prev = None;
        self.slots[id].next = None;
    }

    // ----- queries -----

    pub fn op(&self, r: OpRef) -> &Op {
        &self.ops[r].op
    }
    pub fn name(&self, r: OpRef) -> &str {
        &self.ops[r].op.name
    }
    pub fn alive(&self, r: OpRef) -> bool {
        self.ops[r].alive
    }
    pub fn def(&self, v: ValueId) -> Option<Def> {
        self.defs.get(v as usize).copied().flatten()
    }
    /// The op defining `v` (none for block arguments).
    pub fn def_op(&self, v: ValueId) -> Option<OpRef> {
        match self.def(v)? {
            Def::Result(o, _) => Some(o),
            Def::Arg(..) => None,
        }
    }
    /// The op defining `v` when it is named `name`.
    pub fn def_op_named(&self, v: ValueId, name: &str) -> Option<OpRef> {
        self.def_op(v).filter(|&o| self.name(o) == name)
    }
    /// The uses of `v`, newest first (MLIR's use-list order).
    pub fn uses(&self, v: ValueId) -> impl Iterator<Item = Use> + '_ {
        let mut cur = self.lists.get(v as usize).and_then(|l| l.head);
        std::iter::from_fn(move || {
            let id = cur?;
            cur = self.slots[id].next;
            Some(self.slots[id].user)
        })
    }
    /// The users of `v`, one per use, newest first.
    pub fn users(&self, v: ValueId) -> Vec<OpRef> {
        self.uses(v).map(|(o, _)| o).collect()
    }
    pub fn use_empty(&self, v: ValueId) -> bool {
        self.lists.get(v as usize).is_none_or(|l| l.len == 0)
    }
    pub fn has_one_use(&self, v: ValueId) -> bool {
        self.lists.get(v as usize).is_some_and(|l| l.len == 1)
    }
    pub fn results_unused(&self, r: OpRef) -> bool {
        self.ops[r].op.results.iter().all(|&v| self.use_empty(v))
    }
    pub fn ty(&self, v: ValueId) -> Option<&str> {
        self.values.get(v as usize).and_then(|i| i.ty.as_deref())
    }
    pub fn new_value(&mut self, ty: Option<String>) -> ValueId {
        self.values.push(ValueInfo { ty });
        let v = (self.values.len() - 1) as ValueId;
        self.ensure(v);
        v
    }
    /// The op owning the block that holds `r`.
    pub fn parent_op(&self, r: OpRef) -> Option<OpRef> {
        self.ops[r].block.map(|b| self.blocks[b].parent)
    }
    pub fn block_ops(&self, b: BlockRef) -> Vec<OpRef> {
        let mut out = Vec::new();
        let mut cur = self.blocks[b].first;
        while let Some(o) = cur {
            out.push(o);
            cur = self.ops[o].next;
        }
        out
    }
    pub fn first_in_block(&self, b: BlockRef) -> Option<OpRef> {
        self.blocks[b].first
    }
    pub fn prev(&self, r: OpRef) -> Option<OpRef> {
        self.ops[r].prev
    }
    /// The entry block of region `i` of `r`.
    pub fn entry_block(&self, r: OpRef, i: usize) -> Option<BlockRef> {
        self.ops[r].regions.get(i)?.first().copied()
    }

    /// The ops nested in `r` in pre-order (`r` excluded).
    pub fn nested_preorder(&self, r: OpRef) -> Vec<OpRef> {
        let mut out = Vec::new();
        self.preorder_into(r, &mut out);
        out
    }
    fn preorder_into(&self, r: OpRef, out: &mut Vec<OpRef>) {
        for region in &self.ops[r].regions {
            for &b in region {
                for o in self.block_ops(b) {
                    out.push(o);
                    self.preorder_into(o, out);
                }
            }
        }
    }

    /// Whether `a` comes before `b`; `None` when they are not in the same block.
    pub fn is_before_in_block(&mut self, a: OpRef, b: OpRef) -> Option<bool> {
        let blk = self.ops[a].block?;
        if self.ops[b].block != Some(blk) {
            return None;
        }
        if !self.blocks[blk].order_valid {
            let mut i = 0;
            let mut cur = self.blocks[blk].first;
            while let Some(o) = cur {
                self.ops[o].order = i;
                i += 1;
                cur = self.ops[o].next;
            }
            self.blocks[blk].order_valid = true;
        }
        Some(self.ops[a].order < self.ops[b].order)
    }

    // ----- linking -----

    fn link_at_end(&mut self, b: BlockRef, r: OpRef) {
        let last = self.blocks[b].last;
        self.ops[r].block = Some(b);
        self.ops[r].prev = last;
        self.ops[r].next = None;
        match last {
            Some(l) => {
                self.ops[l].next = Some(r);
                self.ops[r].order = self.ops[l].order + 1;
            }
            None => self.blocks[b].first = Some(r),
        }
        self.blocks[b].last = Some(r);
    }

    /// Puts detached `r` right before `anchor`.
    pub fn link_before(&mut self, anchor: OpRef, r: OpRef) {
        let Some(b) = self.ops[anchor].block else { return };
        let prev = self.ops[anchor].prev;
        self.ops[r].block = Some(b);
        self.ops[r].prev = prev;
        self.ops[r].next = Some(anchor);
        self.ops[anchor].prev = Some(r);
        match prev {
            Some(p) => self.ops[p].next = Some(r),
            None => self.blocks[b].first = Some(r),
        }
        self.blocks[b].order_valid = false;
    }

    /// Puts detached `r` right after `anchor`.
    pub fn link_after(&mut self, anchor: OpRef, r: OpRef) {
        match self.ops[anchor].next {
            Some(n) => self.link_before(n, r),
            None => {
                if let Some(b) = self.ops[anchor].block {
                    self.link_at_end(b, r);
                }
            }
        }
    }

    /// Puts detached `r` at the start of block `b`.
    pub fn link_at_start(&mut self, b: BlockRef, r: OpRef) {
        match self.blocks[b].first {
            Some(f) => self.link_before(f, r),
            None => self.link_at_end(b, r),
        }
    }

    /// Takes `r` out of its block (it stays alive, detached).
    pub fn unlink(&mut self, r: OpRef) {
        let Some(b) = self.ops[r].block.take() else { return };
        let (prev, next) = (self.ops[r].prev.take(), self.ops[r].next.take());
        match prev {
            Some(p) => self.ops[p].next = next,
            None => self.blocks[b].first = next,
        }
        match next {
            Some(n) => self.ops[n].prev = prev,
            None => self.blocks[b].last = prev,
        }
    }

    // ----- mutation -----

    /// Sets operand `i` of `r` (MLIR's `OpOperand::set`: the use moves to the front of
    /// the new value's list).
    pub fn set_operand(&mut self, r: OpRef, i: usize, v: ValueId) {
        let Some(&id) = self.ops[r].use_slots.get(i) else { return };
        self.unlink_use(id);
        self.ops[r].op.operands[i] = v;
        self.link_use(id, v);
    }

    /// Removes the operands of `r` at the indices in `drop`. Like MLIR's operand
    /// storage, the operands after the first removed one are moved, which re-inserts
    /// their uses at the front of their lists in index order.
    pub fn erase_operands(&mut self, r: OpRef, drop: &[usize]) {
        let Some(&first) = drop.iter().min() else { return };
        let old = std::mem::take(&mut self.ops[r].op.operands);
        let slots = std::mem::take(&mut self.ops[r].use_slots);
        for &id in slots.iter().skip(first) {
            self.unlink_use(id);
        }
        let mut kept_slots: Vec<UseId> = slots[..first.min(slots.len())].to_vec();
        let kept: Vec<ValueId> =
            old.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &v)| v).collect();
        for (i, &v) in kept.iter().enumerate().skip(first) {
            kept_slots.push(self.new_slot(v, (r, i)));
        }
        self.ops[r].op.operands = kept;
        self.ops[r].use_slots = kept_slots;
    }

    /// Removes the arguments of block `b` at the indices in `drop` (they must be unused).
    pub fn erase_block_args(&mut self, b: BlockRef, drop: &[usize]) {
        let old = std::mem::take(&mut self.blocks[b].args);
        let kept: Vec<ValueId> =
            old.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &v)| v).collect();
        for (i, &v) in kept.iter().enumerate() {
            self.set_def(v, Def::Arg(b, i));
        }
        self.blocks[b].args = kept;
    }

    /// Replaces every use of `from` by `to`; returns the users in the order they were
    /// changed (one entry per use).
    pub fn replace_all_uses(&mut self, from: ValueId, to: ValueId) -> Vec<OpRef> {
        let mut changed = Vec::new();
        if from == to {
            return changed;
        }
        self.ensure(from);
        while let Some(id) = self.lists[from as usize].head {
            self.unlink_use(id);
            let (o, i) = self.slots[id].user;
            self.ops[o].op.operands[i] = to;
            self.link_use(id, to);
            changed.push(o);
        }
        changed
    }

    /// Erases `r` alone (its nested ops must be gone): unlinks it and drops its uses.
    pub fn erase_single(&mut self, r: OpRef) {
        self.unlink(r);
        for id in std::mem::take(&mut self.ops[r].use_slots) {
            self.unlink_use(id);
        }
        self.ops[r].op.operands.clear();
        self.ops[r].alive = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Syntax;

    fn op(name: &str, operands: Vec<ValueId>, results: Vec<ValueId>) -> Op {
        Op { syntax: Syntax::Generic, ..Op::pretty(name, operands, results, Vec::new()) }
    }

    #[test]
    fn uses_order_and_relinking() {
        let mut body = Block { args: vec![0], ops: Vec::new() };
        body.ops.push(op("t.a", vec![0], vec![1]));
        body.ops.push(op("t.b", vec![0, 1], vec![2]));
        body.ops.push(op("t.c", vec![1], vec![]));
        let mut top = op("builtin.module", vec![], vec![]);
        top.regions.push(Region { blocks: vec![body] });
        let m = Module { values: vec![ValueInfo::default(); 3], top };
        let mut a = Arena::from_module(m);
        let b = a.entry_block(a.top, 0).unwrap();
        let ops = a.block_ops(b);
        assert_eq!(ops.len(), 3);
        // Newest use first.
        assert_eq!(a.users(1), vec![ops[2], ops[1]]);
        assert_eq!(a.is_before_in_block(ops[0], ops[2]), Some(true));
        let changed = a.replace_all_uses(1, 0);
        assert_eq!(changed, vec![ops[2], ops[1]]);
        // MLIR prepends each moved use: the order of the moved uses flips.
        assert_eq!(a.users(0), vec![ops[1], ops[2], ops[1], ops[0]]);
        a.erase_single(ops[0]);
        assert_eq!(a.block_ops(b), vec![ops[1], ops[2]]);
        let n = a.add_tree(op("t.n", vec![], vec![]));
        a.link_before(ops[2], n);
        assert_eq!(a.block_ops(b), vec![ops[1], n, ops[2]]);
        assert_eq!(a.is_before_in_block(n, ops[2]), Some(true));
        assert_eq!(a.is_before_in_block(ops[2], ops[1]), Some(false));
        let m = a.into_module();
        let names: Vec<&str> = m.body().iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["t.b", "t.n", "t.c"]);
    }
}
