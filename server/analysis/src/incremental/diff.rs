//! Where two versions of a chunk's tree differ, from the syntax layer's sharing alone.
//!
//! The incremental re-parse (`sdy_syntax::document`) keeps every unchanged statement as
//! the same `Arc`, and rebuilds the ops on the path from the root to the edited block
//! by copying them and moving their positions after the edit. A re-parsed op is always
//! all new, children included. So an op that changed but still holds a child of its
//! old version is such a path copy: its own parts (name, operands, attributes, block
//! arguments, ...) are the old ones, moved. The diff follows those ops down to the
//! innermost block with changed statements: the edit is the run of statements between
//! the unchanged ones at both ends of that block.

use crate::model::{Model, OpId};
use sdy_syntax::tree::{Child, Chunk, Op, StmtKind};
use std::sync::Arc;

/// An edit as the model sees it: in the block of region `region` of the last op of
/// `path` (the module body when empty), the statements `old` became `new`.
#[derive(Clone, Debug)]
pub struct TreeEdit {
    /// The ops whose regions hold the edit, outermost first (they start before it).
    pub path: Vec<OpId>,
    /// Their new versions (path copies).
    pub path_nodes: Vec<Arc<Op>>,
    pub region: u32,
    /// The replaced statements, at offsets relative to `base`.
    pub old: Vec<Child>,
    /// The statements that replace them, at offsets relative to `base`.
    pub new: Vec<Child>,
    /// The absolute position statement offsets are relative to.
    pub base: u32,
    /// The old text `[from, to)` is now `[from, to + delta)`; all other text is the same
    /// (moved by `delta` after `to`).
    pub from: u32,
    pub to: u32,
    pub delta: i64,
    /// The index of the new chunk's explicit `module`, if it has one.
    pub module: Option<usize>,
}

impl TreeEdit {
    /// Where `p`, a position of the old text outside `[from, to)`, is in the new text.
    pub fn moved(&self, p: u32) -> u32 {
        if p >= self.to {
            (p as i64 + self.delta) as u32
        } else {
            p
        }
    }

    /// The end of the new text of the edit.
    pub fn new_to(&self) -> u32 {
        (self.to as i64 + self.delta) as u32
    }
}

/// The edit that turns `old` (analysed in `model`; `old_module`: its explicit
/// `module`) into `new`; `None` when the trees do not share enough to tell (a re-parsed
/// chunk, a changed `module` header, ...) or are the same.
pub fn find(
    old: &Chunk,
    old_module: Option<usize>,
    new: &Chunk,
    model: &Model,
) -> Option<TreeEdit> {
    if old.span.start != new.span.start {
        return None;
    }
    let delta = new.span.len() as i64 - old.span.len() as i64;
    // With an explicit `module`, the model starts inside it: the statements around it
    // are aliases and resources, which the model does not see.
    let module = old_module;
    if module != new_module(old, old_module, new) {
        return None;
    }
    let (mut kids_old, mut kids_new) = (&old.top[..], &new.top[..]);
    let mut base = old.span.start;
    let (mut body_start, mut body_end) = (old.span.start, old.span.end);
    let mut at_top = true;
    let mut path = Vec::new();
    let mut path_nodes = Vec::new();
    let mut region = 0u32;
    loop {
        let (lo, ln) = (kids_old.len(), kids_new.len());
        let (prefix, suffix) = common_ends(kids_old, kids_new, delta);
        let (old_run, new_run) = (&kids_old[prefix..lo - suffix], &kids_new[prefix..ln - suffix]);
        if old_run.is_empty() && new_run.is_empty() {
            return None;
        }
        if let ([o], [n]) = (old_run, new_run) {
            let x_start = base + o.offset;
            let ri =
                (o.offset == n.offset && o.op.kind == StmtKind::Op && n.op.kind == StmtKind::Op)
                    .then(|| changed_region(&o.op, &n.op, delta))
                    .flatten();
            if let Some(ri) = ri {
                if at_top && module.is_some() {
                    // The `module` op itself: its block is the module body.
                    if module != Some(prefix) || ri != 0 {
                        return None;
                    }
                } else {
                    path.push(op_at(model, x_start)?);
                    path_nodes.push(n.op.clone());
                    region = ri as u32;
                }
                let r = &o.op.regions[ri];
                base = x_start;
                body_start = x_start + r.span.start + 1;
                body_end = (x_start + r.span.end).checked_sub(1)?;
                kids_old = &o.op.regions[ri].blocks[0].ops;
                kids_new = &n.op.regions[ri].blocks[0].ops;
                at_top = false;
                continue;
            }
        }
        if at_top && module.is_some() {
            // Around the module: only statements the model does not see may change.
            let unseen = |c: &Child| c.op.kind != StmtKind::Op;
            if !old_run.iter().all(unseen) || !new_run.iter().all(unseen) {
                return None;
            }
        }
        if at_top && (has_sdy_alias(&old.top) || has_sdy_alias(&new.top)) {
            // The verifier reads shardings through these aliases, and the model keeps
            // their positions: a top-level edit re-analyses the chunk.
            return None;
        }
        let from = match prefix.checked_sub(1) {
            Some(i) => base + kids_old[i].offset + kids_old[i].op.len,
            None => body_start,
        };
        let to = match kids_old.get(lo - suffix) {
            Some(c) if suffix > 0 => base + c.offset,
            _ => body_end,
        };
        if from > to {
            return None;
        }
        return Some(TreeEdit {
            path,
            path_nodes,
            region,
            old: old_run.to_vec(),
            new: new_run.to_vec(),
            base,
            from,
            to,
            delta,
            module,
        });
    }
}

/// How many statements at the start of two lists are the same (same op, same offset),
/// and how many at the end (same op, offset moved by `delta`), not overlapping.
///
/// A linear scan (a few hundred microseconds for a block of 100k statements): after
/// several edits analysed at once, a statement past the first one can be the same again
/// (whitespace added before it and removed after it), so the first difference cannot be
/// found by binary search.
fn common_ends(old: &[Child], new: &[Child], delta: i64) -> (usize, usize) {
    let (lo, ln) = (old.len(), new.len());
    let same_at = |i: usize| old[i].offset == new[i].offset && Arc::ptr_eq(&old[i].op, &new[i].op);
    let same_from_end = |j: usize| {
        let (a, b) = (&old[lo - 1 - j], &new[ln - 1 - j]);
        b.offset as i64 == a.offset as i64 + delta && Arc::ptr_eq(&a.op, &b.op)
    };
    let n = lo.min(ln);
    let prefix = (0..n).take_while(|&i| same_at(i)).count();
    let suffix = (0..n - prefix).take_while(|&j| same_from_end(j)).count();
    (prefix, suffix)
}

fn has_sdy_alias(top: &[Child]) -> bool {
    top.iter().any(|c| crate::model::is_sdy_alias(&c.op))
}

/// [`explicit_module`] of `new`, an edited `old` whose explicit module is `old_module`:
/// found from the top-level statements that changed alone when it can be.
fn new_module(old: &Chunk, old_module: Option<usize>, new: &Chunk) -> Option<usize> {
    let Some(i) = old_module else { return explicit_module(new) };
    let (lo, ln) = (old.top.len(), new.top.len());
    let delta = new.span.len() as i64 - old.span.len() as i64;
    let (prefix, suffix) = common_ends(&old.top, &new.top, delta);
    let unseen = |c: &Child| matches!(c.op.kind, StmtKind::AliasDef | StmtKind::Resource);
    let changed_unseen = old.top[prefix..lo - suffix].iter().all(unseen)
        && new.top[prefix..ln - suffix].iter().all(unseen);
    let only_module = prefix == i && lo - suffix == i + 1 && ln - suffix == i + 1;
    if only_module {
        // The module itself changed (an edit inside it).
        let m = &new.top[i].op;
        let one_block = m.regions.first().is_some_and(|r| r.blocks.len() == 1);
        (m.kind == StmtKind::Op && m.full_name() == "builtin.module" && one_block).then_some(i)
    } else if changed_unseen && i < prefix {
        Some(i)
    } else if changed_unseen && i >= lo - suffix {
        Some(i + ln - lo)
    } else {
        explicit_module(new)
    }
}

/// The index of the lone `module` op whose block is the module body (see
/// `Chunk::module_body`), if the chunk has one.
pub fn explicit_module(chunk: &Chunk) -> Option<usize> {
    let mut module = None;
    for (i, c) in chunk.top.iter().enumerate() {
        match c.op.kind {
            StmtKind::AliasDef | StmtKind::Resource => {}
            StmtKind::Op if c.op.full_name() == "builtin.module" && module.is_none() => {
                module = Some(i)
            }
            _ => return None,
        }
    }
    let i = module?;
    let blocks = &chunk.top[i].op.regions.first()?.blocks;
    (blocks.len() == 1).then_some(i)
}

/// For `new`, a path copy of `old` (see the module doc): the one region whose statements
/// changed, when it has a single block. `None` when `new` is not provably a path copy or
/// more than that changed.
fn changed_region(old: &Op, new: &Op, delta: i64) -> Option<usize> {
    if old.regions.len() != new.regions.len() || new.len as i64 != old.len as i64 + delta {
        return None;
    }
    let mut changed = None;
    let mut shared = false;
    for (ri, (ro, rn)) in old.regions.iter().zip(&new.regions).enumerate() {
        if ro.blocks.len() != rn.blocks.len() {
            return None;
        }
        let mut same = true;
        for (bo, bn) in ro.blocks.iter().zip(&rn.blocks) {
            // Both walks stop early: at the first shared statement, and (from the end,
            // where an edit that changes the length moves every statement) at the
            // first difference. A block of a real export has hundreds of thousands.
            let pairs = || bo.ops.iter().zip(&bn.ops);
            shared |= pairs().any(|(a, b)| Arc::ptr_eq(&a.op, &b.op))
                || bo
                    .ops
                    .iter()
                    .rev()
                    .zip(bn.ops.iter().rev())
                    .any(|(a, b)| Arc::ptr_eq(&a.op, &b.op));
            // The same statements at the same places (after several edits at once, a
            // region can hold the same ops moved within it).
            same &= bo.ops.len() == bn.ops.len()
                && pairs().rev().all(|(a, b)| a.offset == b.offset && Arc::ptr_eq(&a.op, &b.op));
        }
        if !same {
            if changed.is_some() || ro.blocks.len() != 1 {
                return None;
            }
            changed = Some(ri);
        }
    }
    let ri = changed?;
    // The region's braces stay where they were (the end moves with the edit).
    let (so, sn) = (old.regions[ri].span, new.regions[ri].span);
    let consistent =
        so.start == sn.start && sn.end as i64 == so.end as i64 + delta && so.len() >= 2;
    (shared && consistent).then_some(ri)
}

/// The model op starting at `start`.
fn op_at(model: &Model, start: u32) -> Option<OpId> {
    let i = model.ops.partition_point(|o| o.start < start);
    (model.ops.get(i)?.start == start).then_some(i as OpId)
}
