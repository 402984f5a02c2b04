//! Canonicalization patterns of `sdy.manual_computation`: unused block arguments are
//! dropped with their operands and in shardings; a computation without inputs,
//! outputs and body is erased; one whose manual axes have product 1 (nothing is
//! really manual) is inlined into the enclosing block.

use super::arena::OpRef;
use super::driver::Rewriter;
use super::effects::inlinable;
use super::shardings::resolve;
use crate::ir::Attr;
use crate::sharding::axis::mesh_axis_size;
use crate::sharding::{Mesh, TensorSharding};
use std::collections::HashSet;

fn shardings(rw: &Rewriter, op: OpRef, key: &str) -> Vec<TensorSharding> {
    match rw.ir.op(op).prop(key) {
        Some(Attr::PerValue(v)) => v.clone(),
        _ => Vec::new(),
    }
}

/// Drops the block arguments nobody uses, with their operands and in shardings.
pub fn unused_inputs(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(b) = rw.ir.entry_block(op, 0) else { return false };
    let unused: Vec<usize> = rw.ir.blocks[b]
        .args
        .iter()
        .enumerate()
        .filter(|(_, &a)| rw.ir.use_empty(a))
        .map(|(i, _)| i)
        .collect();
    if unused.is_empty() || rw.ir.op(op).operands.len() != rw.ir.blocks[b].args.len() {
        return false;
    }
    let kept: Vec<TensorSharding> = shardings(rw, op, "in_shardings")
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !unused.contains(i))
        .map(|(_, s)| s)
        .collect();
    // Modified in place without telling the driver, as Shardy's pattern does.
    rw.ir.erase_operands(op, &unused);
    rw.ir.erase_block_args(b, &unused);
    rw.ir.ops[op].op.set_prop("in_shardings", Attr::PerValue(kept));
    true
}

/// `getCommonMesh`: the first non-empty mesh, as long as every other one is empty or
/// the same.
fn common_mesh<'a>(rw: &'a Rewriter, all: &'a [TensorSharding]) -> Option<&'a Mesh> {
    let empty = |m: &Mesh| m.axes.is_empty() && m.device_ids.is_empty();
    let mut found: Option<&Mesh> = None;
    for s in all {
        let m = resolve(&rw.meshes, &s.mesh)?;
        match found {
            None => found = Some(m),
            Some(f) if empty(f) => found = Some(m),
            Some(_) if empty(m) => {}
            Some(f) if f != m => return None,
            _ => {}
        }
    }
    found
}

/// Whether every op in the body may be inlined (their dialects have inliner
/// interfaces), and the enclosing op accepts inlined regions.
fn legal_to_inline(rw: &Rewriter, op: OpRef) -> bool {
    let dest_ok = rw.ir.parent_op(op).is_some_and(|p| inlinable(rw.ir.name(p)));
    dest_ok && rw.ir.nested_preorder(op).iter().all(|&o| inlinable(rw.ir.name(o)))
}

/// Erases an empty computation without inputs and outputs; inlines one whose manual
/// axes have product 1.
pub fn redundant(rw: &mut Rewriter, op: OpRef) -> bool {
    let ins = shardings(rw, op, "in_shardings");
    let outs = shardings(rw, op, "out_shardings");
    let Some(b) = rw.ir.entry_block(op, 0) else { return false };
    let body = rw.ir.block_ops(b);
    let Some(&terminator) = body.last() else { return false };
    if ins.is_empty()
        && outs.is_empty()
        && body.len() == 1
        && rw.ir.name(terminator) == "sdy.return"
    {
        rw.erase_op(op);
        return true;
    }
    let mut product: i64 = 1;
    if !ins.is_empty() || !outs.is_empty() {
        let all: Vec<TensorSharding> = ins.iter().chain(&outs).cloned().collect();
        let Some(mesh) = common_mesh(rw, &all) else { return false };
        let manual = match rw.ir.op(op).prop("manual_axes") {
            Some(Attr::AxisList(v)) => v.clone(),
            _ => return false,
        };
        for a in &manual {
            if !mesh.axes.iter().any(|(n, _)| *n == a.name) {
                return false;
            }
            product = product.saturating_mul(mesh_axis_size(mesh, &a.name));
        }
    }
    if product != 1 || rw.ir.name(terminator) != "sdy.return" {
        return false;
    }
    if !legal_to_inline(rw, op) {
        rw.op_error(op, "failed to inline redundant ManualComputationOp.".into());
        return false;
    }
    inline(rw, op, b, &body);
    true
}

/// Moves the body before `op` (block arguments become the operands, results the
/// returned values) and erases `op`. The moved ops count as new ones, as MLIR's
/// inliner clones them: they leave the worklist.
fn inline(rw: &mut Rewriter, op: OpRef, b: usize, body: &[OpRef]) {
    let nested = rw.ir.nested_preorder(op);
    let inside: HashSet<OpRef> = nested.iter().copied().collect();
    // Erasing the original body would revisit the ancestors when a body value is used
    // inside the body.
    let inner_def = nested.iter().any(|&o| {
        rw.ir.op(o).operands.iter().any(|&v| rw.ir.def_op(v).is_some_and(|d| inside.contains(&d)))
    });
    let operands = rw.ir.op(op).operands.clone();
    let args = rw.ir.blocks[b].args.clone();
    for (&a, &v) in args.iter().zip(&operands) {
        rw.ir.replace_all_uses(a, v);
    }
    let Some((&terminator, moved)) = body.split_last() else { return };
    for &o in moved {
        rw.ir.unlink(o);
        rw.ir.link_before(op, o);
    }
    for &o in &nested {
        rw.remove_from_worklist(o);
    }
    let results = rw.ir.op(op).results.clone();
    let returned = rw.ir.op(terminator).operands.clone();
    for (&r, &v) in results.iter().zip(&returned) {
        rw.ir.replace_all_uses(r, v);
    }
    rw.ir.erase_single(terminator);
    if inner_def {
        if let Some(p) = rw.ir.parent_op(op).filter(|&p| p != rw.ir.top) {
            rw.add_to_worklist(p);
        }
    }
    rw.erase_op(op);
}
