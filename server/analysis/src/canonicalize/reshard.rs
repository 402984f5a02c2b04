//! Canonicalization patterns of `sdy.reshard`: a reshard of a reshard with no other use
//! reshards the original value directly, and a reshard that an earlier reshard of the
//! same data already computes (the same value, or one reached through reshapes whose
//! sharding lays the data out the same way) is replaced by that result, with the
//! reshapes and transposes between them replayed on it.

use super::arena::OpRef;
use super::driver::Rewriter;
use super::reshape_strides::equivalent_strides;
use super::shardings::resolve;
use crate::ir::{Attr, NamedAttr, Op, Piece, PieceKind, Syntax, Template, ValueId};
use crate::rules::InherentAttrs;
use crate::sharding::{Reduction, TensorSharding};
use crate::types::ValueType;
use std::collections::HashSet;

fn reshard_sharding(op: &Op) -> Option<&TensorSharding> {
    match op.prop("sharding") {
        Some(Attr::Sharding(s)) => Some(s),
        _ => None,
    }
}

/// `reshard(reshard(x))` where the inner reshard has one use: `reshard(x)`.
pub fn reshard_of_reshard(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(&v) = rw.ir.op(op).operands.first() else { return false };
    let Some(inner) = rw.ir.def_op_named(v, "sdy.reshard") else { return false };
    if !rw.ir.has_one_use(v) {
        return false;
    }
    let (Some(&x), Some(s)) =
        (rw.ir.op(inner).operands.first(), reshard_sharding(rw.ir.op(op)).cloned())
    else {
        return false;
    };
    let result = rw.value_like(x);
    let new = Op::pretty(
        "sdy.reshard",
        vec![x],
        vec![result],
        vec![NamedAttr::new("sharding", Attr::Sharding(s))],
    );
    rw.insert_before(op, new);
    rw.replace_op(op, &[result]);
    true
}

/// Reshapes and transposes only move data around.
fn is_metadata_op(name: &str) -> bool {
    matches!(name, "stablehlo.reshape" | "stablehlo.transpose")
}

/// The value under a chain of metadata ops.
fn unwrap_metadata(rw: &Rewriter, mut v: ValueId) -> ValueId {
    while let Some(d) = rw.ir.def_op(v) {
        if !is_metadata_op(rw.ir.name(d)) {
            break;
        }
        match rw.ir.op(d).operands.first() {
            Some(&x) => v = x,
            None => break,
        }
    }
    v
}

/// A transpose's permutation (custom `dims = [...]` or generic `permutation`).
fn permutation(op: &Op) -> Option<Vec<i64>> {
    let text = match (&op.syntax, op.prop("permutation")) {
        (_, Some(a)) => format!("permutation = {}", crate::ir::attr::attr_to_string(a)),
        (Syntax::Custom(t), None) => t.joined_text(),
        _ => return None,
    };
    InherentAttrs::from_text(&text, &[]).permutation()
}

fn rank(rw: &Rewriter, v: ValueId) -> usize {
    ValueType::parse(rw.ir.ty(v).unwrap_or("")).rank()
}

/// The sharding `s` of `v` seen at the start of the metadata chain above `v`: transposes
/// permute it back, reshapes that keep the rank are looked through, and the walk stops
/// at a rank-changing reshape. `None` when a permutation does not fit.
fn target_sharding(rw: &Rewriter, mut s: TensorSharding, mut v: ValueId) -> Option<TensorSharding> {
    while let Some(d) = rw.ir.def_op(v) {
        let op = rw.ir.op(d);
        let &x = op.operands.first()?;
        match op.name.as_str() {
            "stablehlo.transpose" => {
                let perm = permutation(op)?;
                if perm.len() != s.dims.len() {
                    return None;
                }
                let mut dims = s.dims.clone();
                for (res_dim, &op_dim) in perm.iter().enumerate() {
                    *dims.get_mut(usize::try_from(op_dim).ok()?)? = s.dims[res_dim].clone();
                }
                s = TensorSharding { dims, reduction: Reduction::Sum, ..s };
                v = x;
            }
            "stablehlo.reshape" => {
                if rank(rw, x) != rank(rw, v) {
                    break;
                }
                v = x;
            }
            _ => break,
        }
    }
    Some(s)
}

/// A ranked static shape without encoding.
fn plain_shape(ty: &str) -> Option<Vec<i64>> {
    if ty.contains(',') {
        return None;
    }
    ValueType::parse(ty).static_shape()
}

/// `isShardingEquivalentAcrossReshapes` (divisible): both shardings spread the data,
/// in row-major order, over the same axes with the same strides.
fn equivalent_across_reshapes(
    rw: &Rewriter,
    s1: &TensorSharding,
    t1: &str,
    s2: &TensorSharding,
    t2: &str,
) -> bool {
    if s1 == s2 && t1 == t2 {
        return true;
    }
    if s1.mesh != s2.mesh || s1.replicated != s2.replicated {
        return false;
    }
    let (Some(shape1), Some(shape2)) = (plain_shape(t1), plain_shape(t2)) else { return false };
    let Some(mesh) = resolve(&rw.meshes, &s1.mesh) else { return false };
    equivalent_strides(s1, &shape1, s2, &shape2, mesh, false)
}

/// An earlier reshard in `current`'s block of `root`, or of a value reached from `root`
/// through reshapes, whose sharding matches `target` across reshapes.
fn find_compatible(
    rw: &mut Rewriter,
    root: ValueId,
    target: &TensorSharding,
    target_ty: &str,
    current: OpRef,
) -> Option<ValueId> {
    let block = rw.ir.ops[current].block?;
    let mut work = vec![root];
    let mut visited = HashSet::new();
    while let Some(v) = work.pop() {
        if !visited.insert(v) {
            continue;
        }
        for user in rw.ir.users(v) {
            if user == current {
                continue;
            }
            match rw.ir.name(user) {
                "sdy.reshard" => {
                    let other = rw.ir.op(user);
                    let (Some(s), Some(&r)) = (reshard_sharding(other), other.results.first())
                    else {
                        continue;
                    };
                    let ty = rw.ir.ty(r).unwrap_or("");
                    if equivalent_across_reshapes(rw, s, ty, target, target_ty)
                        && rw.ir.ops[user].block == Some(block)
                        && rw.ir.is_before_in_block(user, current) == Some(true)
                    {
                        return Some(r);
                    }
                }
                "stablehlo.reshape" => {
                    if let Some(&r) = rw.ir.op(user).results.first() {
                        work.push(r);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// A `stablehlo.reshape` of `x` to `ty` in its custom form.
fn reshape_op(rw: &mut Rewriter, x: ValueId, ty: &str) -> Op {
    let from = rw.ir.ty(x).unwrap_or("").to_string();
    let result = rw.ir.new_value(Some(ty.to_string()));
    let piece = |kind| Piece { space_before: true, kind };
    let template = Template {
        pieces: vec![
            piece(PieceKind::Operand(0)),
            piece(PieceKind::Text(":".into())),
            piece(PieceKind::Text(format!("({from})").into())),
            piece(PieceKind::Text("->".into())),
            piece(PieceKind::Text(ty.into())),
        ],
    };
    Op {
        syntax: Syntax::Custom(Box::new(template)),
        ..Op::pretty("stablehlo.reshape", vec![x], vec![result], Vec::new())
    }
}

/// Replays the metadata ops from `root` to `target` on `cached`; returns the value
/// that stands for `target`.
fn clone_path(rw: &mut Rewriter, root: ValueId, target: ValueId, cached: ValueId) -> ValueId {
    if target == root {
        return cached;
    }
    let Some(d) = rw.ir.def_op(target) else { return cached };
    let Some(&input) = rw.ir.op(d).operands.first() else { return cached };
    let transformed = clone_path(rw, root, input, cached);
    let mut clone = rw.ir.op(d).clone();
    clone.origin = None;
    clone.operands[0] = transformed;
    let result = rw.value_like(target);
    clone.results = vec![result];
    rw.insert_after_value(transformed, clone);
    result
}

/// A reshard whose result an earlier reshard of the same data already computes.
pub fn cse(rw: &mut Rewriter, op: OpRef) -> bool {
    let o = rw.ir.op(op);
    let (Some(&input), Some(s), Some(&res)) =
        (o.operands.first(), reshard_sharding(o).cloned(), o.results.first())
    else {
        return false;
    };
    let root = unwrap_metadata(rw, input);
    let Some(target) = target_sharding(rw, s, input) else { return false };
    let ty = rw.ir.ty(res).unwrap_or("").to_string();
    let Some(mut cached) = find_compatible(rw, root, &target, &ty, op) else { return false };
    let root_ty = rw.ir.ty(root).unwrap_or("").to_string();
    if rw.ir.ty(cached).unwrap_or("") != root_ty {
        let reshape = reshape_op(rw, cached, &root_ty);
        let r = reshape.results[0];
        if rw.insert_after_value(cached, reshape).is_none() {
            return false;
        }
        cached = r;
    }
    let result = clone_path(rw, root, input, cached);
    rw.replace_op(op, &[result]);
    true
}
