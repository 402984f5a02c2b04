//! Canonicalization patterns of the sdy collectives: no-op collectives are replaced by
//! their input, `all_slice(all_gather)` and `all_reduce(replicated_to_unreduced)` with
//! matching axes fold away, `all_reduce(sharded_to_unreduced)` becomes an
//! `all_gather`, consecutive `all_to_all`s fuse, and `all_reduce` + `all_slice` fuse
//! into `reduce_scatter` (plus an `all_slice` of the slicing axes left over).

use super::arena::OpRef;
use super::driver::Rewriter;
use super::shardings::{equivalent, resolve, sharding};
use crate::ir::sdy::AllToAllParam;
use crate::ir::OpKind;
use crate::ir::{Attr, NamedAttr, Op, ValueId};
use crate::sharding::axis::{add_axis_or_merge, sort_and_merge};
use crate::sharding::make::replicated_sharding;
use crate::sharding::{AxisRef, DimSharding, TensorSharding};

fn input(rw: &Rewriter, op: OpRef) -> Option<ValueId> {
    rw.ir.op(op).operands.first().copied()
}

fn axis_lists<'a>(op: &'a Op, key: &str) -> Option<&'a Vec<Vec<AxisRef>>> {
    match op.prop(key) {
        Some(Attr::AxisLists(v)) => Some(v),
        _ => None,
    }
}

fn axis_list<'a>(op: &'a Op, key: &str) -> Option<&'a Vec<AxisRef>> {
    match op.prop(key) {
        Some(Attr::AxisList(v)) => Some(v),
        _ => None,
    }
}

fn out_sharding(op: &Op) -> Option<&TensorSharding> {
    match op.prop("out_sharding") {
        Some(Attr::Sharding(s)) => Some(s),
        _ => None,
    }
}

fn all_to_all_params(op: &Op) -> Option<&Vec<AllToAllParam>> {
    match op.prop("params") {
        Some(Attr::AllToAll(p)) => Some(p),
        _ => None,
    }
}

/// Replaces `op` by its input.
fn forward_input(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    rw.replace_op(op, &[v]);
    true
}

/// A collective over `tensor` with the type of `tensor`, inserted before `anchor`.
fn create(
    rw: &mut Rewriter,
    anchor: OpRef,
    name: &str,
    tensor: ValueId,
    props: Vec<NamedAttr>,
) -> ValueId {
    let result = rw.value_like(tensor);
    rw.insert_before(anchor, Op::pretty(name, vec![tensor], vec![result], props));
    result
}

/// `sdy.all_gather`, `sdy.all_slice`, `sdy.reduce_scatter` with empty per-dimension
/// axes, `sdy.all_reduce` with no reduction axes: the input.
pub fn noop(rw: &mut Rewriter, op: OpRef) -> bool {
    let o = rw.ir.op(op);
    let empty = match o.name.as_str() {
        "sdy.all_gather" => axis_lists(o, "gathering_axes"),
        "sdy.all_slice" => axis_lists(o, "slicing_axes"),
        "sdy.reduce_scatter" => axis_lists(o, "reduce_scatter_axes"),
        "sdy.all_reduce" => {
            return axis_list(o, "reduction_axes").is_some_and(Vec::is_empty)
                && forward_input(rw, op);
        }
        _ => None,
    }
    .is_some_and(|l| l.iter().all(Vec::is_empty));
    empty && forward_input(rw, op)
}

/// `sdy.collective_permute` whose input sharding is equivalent to its out sharding.
pub fn collective_permute_noop(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let in_sharding = sharding(&rw.ir, v);
    let out = out_sharding(rw.ir.op(op));
    if out.is_none() || !equivalent(in_sharding.as_ref(), out) {
        return false;
    }
    forward_input(rw, op)
}

/// `all_slice(all_gather(x))` with the same axes: `x`.
pub fn all_slice_of_all_gather(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let Some(gather) = rw.ir.def_op_named(v, "sdy.all_gather") else { return false };
    let (g, s) = (rw.ir.op(gather), rw.ir.op(op));
    let same = matches!(
        (axis_lists(g, "gathering_axes"), axis_lists(s, "slicing_axes")),
        (Some(a), Some(b)) if a == b
    );
    let Some(x) = g.operands.first().copied() else { return false };
    if !same {
        return false;
    }
    rw.replace_op(op, &[x]);
    true
}

/// `all_reduce(replicated_to_unreduced(x))` over the same axes: `x`.
pub fn all_reduce_of_replicated_to_unreduced(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let Some(r2u) = rw.ir.def_op_named(v, "sdy.replicated_to_unreduced") else { return false };
    let (a, r) = (rw.ir.op(op), rw.ir.op(r2u));
    let same = matches!(
        (axis_list(r, "axes"), axis_list(a, "reduction_axes")),
        (Some(x), Some(y)) if x == y
    );
    let Some(x) = r.operands.first().copied() else { return false };
    if !same {
        return false;
    }
    rw.replace_op(op, &[x]);
    true
}

/// `all_reduce(sharded_to_unreduced(x))` reducing exactly the axes made unreduced
/// (sorted and merged): `all_gather(x)` over those axes.
pub fn all_reduce_of_sharded_to_unreduced(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let Some(s2u) = rw.ir.def_op_named(v, "sdy.sharded_to_unreduced") else { return false };
    let (a, s) = (rw.ir.op(op), rw.ir.op(s2u));
    let (Some(per_dim), Some(reduced), Some(s2u_out), Some(out), Some(&x)) = (
        axis_lists(s, "axes"),
        axis_list(a, "reduction_axes"),
        out_sharding(s),
        out_sharding(a),
        s.operands.first(),
    ) else {
        return false;
    };
    let Some(mesh) = resolve(&rw.meshes, &s2u_out.mesh) else { return false };
    let mut flat: Vec<AxisRef> = per_dim.iter().flatten().cloned().collect();
    sort_and_merge(&mut flat, mesh);
    if &flat != reduced {
        return false;
    }
    let props = vec![
        NamedAttr::new("gathering_axes", Attr::AxisLists(per_dim.clone())),
        NamedAttr::new("out_sharding", Attr::Sharding(out.clone())),
    ];
    let g = create(rw, op, "sdy.all_gather", x, props);
    rw.replace_op(op, &[g]);
    true
}

fn overlaps(a: &[AllToAllParam], b: &[AllToAllParam]) -> bool {
    let mut seen = std::collections::HashSet::new();
    a.iter().chain(b).flat_map(|p| [p.src_dim, p.tgt_dim]).any(|d| !seen.insert(d))
}

/// `all_to_all(all_to_all(x))` where the inner one has no other use and the two touch
/// different dimensions: one `all_to_all` with both parameter lists, by source dim.
pub fn all_to_all_fusion(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let Some(inner) = rw.ir.def_op_named(v, "sdy.all_to_all") else { return false };
    if !rw.ir.has_one_use(v) {
        return false;
    }
    let (o, i) = (rw.ir.op(op), rw.ir.op(inner));
    let (Some(outer_params), Some(inner_params), Some(out), Some(&x)) =
        (all_to_all_params(o), all_to_all_params(i), out_sharding(o), i.operands.first())
    else {
        return false;
    };
    if overlaps(inner_params, outer_params) {
        return false;
    }
    let mut params: Vec<AllToAllParam> = inner_params.iter().chain(outer_params).cloned().collect();
    params.sort_by_key(|p| p.src_dim);
    let props = vec![
        NamedAttr::new("params", Attr::AllToAll(params)),
        NamedAttr::new("out_sharding", Attr::Sharding(out.clone())),
    ];
    let fused = create(rw, op, "sdy.all_to_all", x, props);
    rw.replace_op(op, &[fused]);
    true
}

/// An unused `sdy.all_to_all` is erased (collectives are not side-effect free).
pub fn all_to_all_no_use(rw: &mut Rewriter, op: OpRef) -> bool {
    rw.ir.results_unused(op) && forward_input(rw, op)
}

/// How `all_reduce` + `all_slice` fuse: per dimension, the longest prefix of slicing
/// axes that are reduction axes goes to the `reduce_scatter`, the rest stays sliced.
struct Fusion {
    scatter: Vec<Vec<AxisRef>>,
    residual: Option<Vec<Vec<AxisRef>>>,
    out: TensorSharding,
}

fn fusion(rw: &Rewriter, all_reduce: OpRef, all_slice: OpRef) -> Option<Fusion> {
    let (r, s) = (rw.ir.op(all_reduce), rw.ir.op(all_slice));
    let r_out = out_sharding(r)?;
    let s_out = out_sharding(s)?;
    let mesh = resolve(&rw.meshes, &r_out.mesh)?;
    let mut remaining: Vec<AxisRef> = axis_list(r, "reduction_axes")?.clone();
    let slicing = axis_lists(s, "slicing_axes")?;
    let mut scatter = Vec::with_capacity(slicing.len());
    let mut residual = Vec::with_capacity(slicing.len());
    for dim in slicing {
        let n = dim.iter().take_while(|a| remaining.contains(a)).count();
        remaining.retain(|a| !dim[..n].contains(a));
        scatter.push(dim[..n].to_vec());
        residual.push(dim[n..].to_vec());
    }
    if !remaining.is_empty() {
        return None;
    }
    let x = *r.operands.first()?;
    let rank = slicing.len();
    let in_sharding =
        sharding(&rw.ir, x).unwrap_or_else(|| replicated_sharding(&r_out.mesh, rank, true));
    if in_sharding.dims.len() != scatter.len() {
        return None;
    }
    let dims = in_sharding
        .dims
        .iter()
        .zip(&scatter)
        .map(|(d, add)| {
            let mut axes = d.axes.clone();
            for a in add {
                add_axis_or_merge(&mut axes, a.clone(), mesh);
            }
            DimSharding { axes, open: false, priority: None }
        })
        .collect();
    let out = TensorSharding {
        mesh: r_out.mesh.clone(),
        dims,
        replicated: s_out.replicated.clone(),
        unreduced: s_out.unreduced.clone(),
        reduction: s_out.reduction,
    };
    let has_residual = residual.iter().any(|d| !d.is_empty());
    Some(Fusion { scatter, residual: has_residual.then_some(residual), out })
}

/// `all_slice(all_reduce(x))` where every user of the `all_reduce` is an identical
/// `all_slice` (this one first) and every reduction axis leads a slicing dimension:
/// `reduce_scatter(x)` (then `all_slice` of the remaining slicing axes) replaces them
/// all.
pub fn reduce_scatter_fusion(rw: &mut Rewriter, op: OpRef) -> bool {
    let Some(v) = input(rw, op) else { return false };
    let Some(all_reduce) = rw.ir.def_op_named(v, "sdy.all_reduce") else { return false };
    let slicing = axis_lists(rw.ir.op(op), "slicing_axes").cloned();
    for user in rw.ir.users(v) {
        let u = rw.ir.op(user);
        if u.kind != OpKind::SdyAllSlice || axis_lists(u, "slicing_axes").cloned() != slicing {
            return false;
        }
        if user != op && rw.ir.is_before_in_block(user, op) != Some(false) {
            return false;
        }
    }
    let Some(f) = fusion(rw, all_reduce, op) else { return false };
    let Some(&x) = rw.ir.op(all_reduce).operands.first() else { return false };
    let Some(slice_out) = out_sharding(rw.ir.op(op)).cloned() else { return false };
    let mut props = vec![NamedAttr::new("reduce_scatter_axes", Attr::AxisLists(f.scatter))];
    if let Some(kind) = rw.ir.op(all_reduce).prop("reduction_op") {
        props.push(NamedAttr::new("reduction_op", kind.clone()));
    }
    props.push(NamedAttr::new("out_sharding", Attr::Sharding(f.out)));
    let mut result = create(rw, op, "sdy.reduce_scatter", x, props);
    if let Some(residual) = f.residual {
        let props = vec![
            NamedAttr::new("slicing_axes", Attr::AxisLists(residual)),
            NamedAttr::new("out_sharding", Attr::Sharding(slice_out)),
        ];
        result = create(rw, op, "sdy.all_slice", result, props);
    }
    for user in rw.ir.users(v) {
        if rw.ir.alive(user) {
            rw.replace_op(user, &[result]);
        }
    }
    rw.erase_op(all_reduce);
    true
}
