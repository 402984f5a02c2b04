//! Where the cursor is: the statement around it, the region holding it, and the SSA
//! values in scope there.

use super::line_start;
use crate::model::{Model, OpId, ValueId};
use crate::query::Index;

/// How far back a statement is read at most.
const MAX_STATEMENT: u32 = 256 * 1024;

/// Where the statement holding `offset` starts: the op (or unreadable statement) of the
/// tree around it, else the start of the line.
pub(super) fn statement_start(model: &Model, index: &Index, src: &str, offset: u32) -> u32 {
    let line = line_start(src, offset);
    let Some(id) = index.op_at(model, offset) else { return line };
    let info = model.op(id);
    let start = info.start;
    let mut from = start;
    for region in &info.node.regions {
        let r = region.span.shift(start);
        if r.start < offset && offset < r.end {
            // Inside the region: the statement of the block holding the cursor (one
            // the model leaves out, as it does unreadable ones), else the line.
            // A statement the parser restarted at an error may begin after other
            // words of the line: the line is read from its start.
            for block in &region.blocks {
                let i = block.ops.partition_point(|c| start + c.offset + c.op.len < offset);
                if let Some(c) = block.ops.get(i) {
                    if (start + c.offset..=start + c.offset + c.op.len).contains(&offset) {
                        return bounded((start + c.offset).min(line), line, offset);
                    }
                }
            }
            return line;
        }
        if r.end <= offset {
            from = from.max(r.end);
        }
    }
    // After a region: from its end (not through its body); else the op's start.
    if from == start {
        from = from.min(line);
    }
    bounded(from, line, offset)
}

/// `start`, unless that is too far back (then the line start).
fn bounded(start: u32, line: u32, offset: u32) -> u32 {
    if offset.saturating_sub(start) > MAX_STATEMENT {
        line
    } else {
        start.min(offset)
    }
}

/// Whether `offset` is inside a region (a function body, ...), not at the module's top.
pub(super) fn in_region(model: &Model, index: &Index, offset: u32) -> bool {
    let Some(id) = index.op_at(model, offset) else { return false };
    std::iter::once(id).chain(model.ancestors(id)).any(|op| region_at(model, op, offset).is_some())
}

/// The region of `op` strictly holding `offset`.
fn region_at(model: &Model, op: OpId, offset: u32) -> Option<u32> {
    let info = model.op(op);
    info.node
        .regions
        .iter()
        .position(|r| {
            let r = r.span.shift(info.start);
            r.start < offset && offset < r.end
        })
        .map(|r| r as u32)
}

/// Ops whose regions do not see the values around them.
fn is_isolated(name: &str) -> bool {
    matches!(name, "func.func" | "sdy.manual_computation" | "sdy.named_computation")
}

/// The values usable at `offset`, nearest first (each named as it is written, `%0#1`
/// for a member of a group): the block arguments and the results of the ops
/// ended by `before` (the start of the statement being written), in the region holding
/// `offset` and the enclosing ones up to the first isolated op. Values of sibling
/// regions, of the statement itself and of later ops are not in scope.
pub fn values_in_scope(model: &Model, index: &Index, offset: u32, before: u32) -> Vec<ValueId> {
    let before = before.min(offset);
    let mut out = Vec::new();
    let mut cur = index.op_at(model, offset);
    let mut top = true;
    while let Some(op) = cur {
        let info = model.op(op);
        if let Some(r) = region_at(model, op, offset) {
            top = false;
            let kids = model.children(op);
            let n = kids.partition_point(|&c| model.op(c).span().end <= before);
            for &c in kids[..n].iter().rev() {
                if model.op(c).region == r {
                    push_results(model, c, &mut out);
                }
            }
            if let Some(args) = info.region_args.get(r as usize) {
                for &v in args.iter().rev() {
                    out.push(v);
                }
            }
            if is_isolated(info.name()) {
                return out;
            }
        }
        cur = info.parent;
    }
    if top {
        // The module's own body.
        let n = model.top.partition_point(|&c| model.op(c).span().end <= before);
        for &c in model.top[..n].iter().rev() {
            push_results(model, c, &mut out);
        }
    }
    out
}

fn push_results(model: &Model, op: OpId, out: &mut Vec<ValueId>) {
    out.extend(model.op(op).results.iter().rev());
}
