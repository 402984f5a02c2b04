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

use crate::model::{is_sdy_alias, Model, OpId};
use sdy_syntax::tree::{ChildRef, Children, Chunk, Op, StmtKind};
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
    pub old: Children,
    /// The statements that replace them, at offsets relative to `base`.
    pub new: Children,
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
    old_sdy_alias: bool,
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
    let (mut kids_old, mut kids_new) = (&old.top, &new.top);
    let mut base = old.span.start;
    let (mut body_start, mut body_end) = (old.span.start, old.span.end);
    let mut at_top = true;
    let mut path = Vec::new();
    let mut path_nodes = Vec::new();
    let mut region = 0u32;
    loop {
        let (lo, ln) = (kids_old.len(), kids_new.len());
        let (prefix, suffix) = kids_old.common_ends(kids_new, delta);
        let (old_run, new_run) = (prefix..lo - suffix, prefix..ln - suffix);
        if old_run.is_empty() && new_run.is_empty() {
            return None;
        }
        if old_run.len() == 1 && new_run.len() == 1 {
            let (o, n) = (kids_old.at(prefix), kids_new.at(prefix));
            let x_start = base + o.offset;
            let ri =
                (o.offset == n.offset && o.op.kind == StmtKind::Op && n.op.kind == StmtKind::Op)
                    .then(|| changed_region(o.op, n.op, delta))
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
            let unseen = |c: ChildRef| c.op.kind != StmtKind::Op;
            if !kids_old.range(old_run.clone()).all(unseen)
                || !kids_new.range(new_run.clone()).all(unseen)
            {
                return None;
            }
        }
        // The rest of the new top level is the old one's: only the run can add aliases.
        let new_alias = || kids_new.range(new_run.clone()).any(|c| is_sdy_alias(c.op));
        if at_top && (old_sdy_alias || new_alias()) {
            // The verifier reads shardings through these aliases, and the model keeps
            // their positions: a top-level edit re-analyses the chunk.
            return None;
        }
        let from = match prefix.checked_sub(1) {
            Some(i) => base + kids_old.at(i).offset + kids_old.at(i).op.len,
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
            old: kids_old.range(old_run).map(|c| c.to_child()).collect(),
            new: kids_new.range(new_run).map(|c| c.to_child()).collect(),
            base,
            from,
            to,
            delta,
            module,
        });
    }
}

/// Whether a top level has aliases of sdy attributes (see [`find`]).
pub fn has_sdy_alias(top: &Children) -> bool {
    top.iter().any(|c| is_sdy_alias(c.op))
}

/// [`explicit_module`] of `new`, an edited `old` whose explicit module is `old_module`:
/// found from the top-level statements that changed alone when it can be.
fn new_module(old: &Chunk, old_module: Option<usize>, new: &Chunk) -> Option<usize> {
    let Some(i) = old_module else { return explicit_module(new) };
    let (lo, ln) = (old.top.len(), new.top.len());
    let delta = new.span.len() as i64 - old.span.len() as i64;
    let (prefix, suffix) = old.top.common_ends(&new.top, delta);
    let unseen = |c: ChildRef| matches!(c.op.kind, StmtKind::AliasDef | StmtKind::Resource);
    let changed_unseen = old.top.range(prefix..lo - suffix).all(unseen)
        && new.top.range(prefix..ln - suffix).all(unseen);
    let only_module = prefix == i && lo - suffix == i + 1 && ln - suffix == i + 1;
    if only_module {
        // The module itself changed (an edit inside it).
        let m = new.top.at(i).op;
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
    let blocks = &chunk.top.at(i).op.regions.first()?.blocks;
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
            shared |= pairs().any(|(a, b)| Arc::ptr_eq(a.op, b.op))
                || bo
                    .ops
                    .iter()
                    .rev()
                    .zip(bn.ops.iter().rev())
                    .any(|(a, b)| Arc::ptr_eq(a.op, b.op));
            // The same statements at the same places (after several edits at once, a
            // region can hold the same ops moved within it).
            same &= bo.ops.len() == bn.ops.len()
                && pairs().rev().all(|(a, b)| a.offset == b.offset && Arc::ptr_eq(a.op, b.op));
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
