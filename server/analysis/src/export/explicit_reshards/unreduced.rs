//! Unreduced axes at a use: an `sdy.all_reduce` when the user does not keep some of
//! the source's unreduced axes, `sdy.replicated_to_unreduced` /
//! `sdy.sharded_to_unreduced` when the user has unreduced axes the source does not.

use super::rewrite::{reshard_props, Cursor, OpKey, Rewriter};
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, ValueId};
use crate::propagation::pipeline::import::axis_set_diff;
use crate::sharding::axis::{self, PrefixStatus};
use crate::sharding::{AxisRef, Reduction, TensorSharding};

/// `sdy.all_reduce` / `sdy.replicated_to_unreduced` props.
pub fn collective_props(
    axes_key: &str,
    axes: Vec<AxisRef>,
    reduction: Reduction,
    out: TensorSharding,
) -> Vec<NamedAttr> {
    let mut props = vec![NamedAttr::new(axes_key, Attr::AxisList(axes))];
    if reduction != Reduction::Sum {
        props.push(NamedAttr::new("reduction_op", Attr::Raw(reduction.as_str().into())));
    }
    props.push(NamedAttr::new("out_sharding", Attr::Sharding(out)));
    props
}

/// `insertAllReduceIfUnreducedToReplicated` on operand `k` of op `key`: all-reduces
/// the unreduced axes of `source` (the operand's sharding) that `user` does not keep.
/// Returns the operand's sharding afterwards.
pub fn all_reduce_if_unreduced_to_replicated(
    rw: &mut Rewriter,
    key: OpKey,
    k: usize,
    source: TensorSharding,
    user: Option<&TensorSharding>,
    at: &mut Cursor,
) -> TensorSharding {
    if source.unreduced.is_empty() {
        return source;
    }
    let g = rw.graph();
    let Some(mesh) = g.mesh(&source.mesh) else { return source };
    drop(g);
    let target: &[AxisRef] = user.map_or(&[], |u| &u.unreduced);
    let axes = axis_set_diff(&source.unreduced, target, &mesh);
    if axes.is_empty() {
        return source;
    }
    let mut out = source.clone();
    out.unreduced = axis_set_diff(&source.unreduced, &axes, &mesh);
    let props = collective_props("reduction_axes", axes, source.reduction, out.clone());
    rw.insert_on_operand(key, k, at, "sdy.all_reduce", props);
    out
}

/// `insertUnreducedCollectives` on operand `k` of op `key` for target `out`: the
/// unreduced axes `out` adds come from replicated axes (`replicated_to_unreduced`)
/// or from sharded dimension suffixes (`sharded_to_unreduced`, after a reshard that
/// aligns the other dimensions). Returns the last inserted op's sharding.
pub fn insert_unreduced_collectives(
    rw: &mut Rewriter,
    key: OpKey,
    k: usize,
    out: Option<&TensorSharding>,
    at: &mut Cursor,
) -> Option<TensorSharding> {
    let out = out?;
    if out.unreduced.is_empty() {
        return None;
    }
    let input = rw.operand(key, k)?;
    let ins = rw.sharding(input)?;
    let g = rw.graph();
    let mesh = g.mesh(&ins.mesh)?;
    if g.mesh(&out.mesh).as_ref() != Some(&mesh) {
        return None;
    }
    drop(g);
    // out = in + r2u + s2u.
    let new_axes = axis_set_diff(&out.unreduced, &ins.unreduced, &mesh);
    if new_axes.is_empty() || out.dims.len() != ins.dims.len() {
        return None;
    }
    let mut s2u: Vec<AxisRef> = Vec::new();
    let mut per_dim: Vec<Vec<AxisRef>> = vec![Vec::new(); ins.dims.len()];
    let mut need_reshard = false;
    let mut tmp_dims = out.dims.clone();
    for (d, (in_dim, out_dim)) in ins.dims.iter().zip(&out.dims).enumerate() {
        let (in_axes, out_axes) = (&in_dim.axes, &out_dim.axes);
        match axis::list_prefix_status(out_axes, in_axes) {
            PrefixStatus::StrictPrefix => {
                let n = out_axes.len();
                let mut diff = Vec::new();
                if let Some(last) = out_axes.last() {
                    if *last != in_axes[n - 1] {
                        diff.push(axis::suffix_without_overlap(&in_axes[n - 1], last, &mesh)?);
                    }
                }
                diff.extend(in_axes[n..].iter().cloned());
                if axis_set_diff(&diff, &new_axes, &mesh).is_empty() {
                    s2u.extend(diff.iter().cloned());
                    per_dim[d] = diff;
                    tmp_dims[d] = in_dim.clone();
                } else {
                    need_reshard = true;
                }
            }
            PrefixStatus::NotAPrefix => need_reshard = true,
            PrefixStatus::Equal => {}
        }
    }
    let mut last = None;
    if need_reshard {
        let mut s = ins.clone();
        s.dims = tmp_dims.clone();
        rw.insert_on_operand(key, k, at, "sdy.reshard", reshard_props(s.clone()));
        last = Some(s);
    }
    let r2u = axis_set_diff(&new_axes, &s2u, &mesh);
    if !r2u.is_empty() {
        let mut unreduced = ins.unreduced.clone();
        unreduced.extend(r2u.iter().cloned());
        axis::sort_and_merge(&mut unreduced, &mesh);
        let s = TensorSharding {
            mesh: ins.mesh.clone(),
            dims: tmp_dims,
            replicated: out.replicated.clone(),
            unreduced,
            reduction: out.reduction,
        };
        let props = collective_props("axes", r2u, Reduction::Sum, s.clone());
        rw.insert_on_operand(key, k, at, "sdy.replicated_to_unreduced", props);
        last = Some(s);
    }
    if !s2u.is_empty() {
        let props = vec![
            NamedAttr::new("axes", Attr::AxisLists(per_dim)),
            NamedAttr::new("out_sharding", Attr::Sharding(out.clone())),
        ];
        rw.insert_on_operand(key, k, at, "sdy.sharded_to_unreduced", props);
        last = Some(out.clone());
    }
    last
}

/// `convertReshardToUnreducedCollectives`: a reshard to more unreduced axes becomes
/// the unreduced collectives (the reshard is erased). Returns whether it did.
pub fn convert_reshard(rw: &mut Rewriter, key: OpKey) -> bool {
    let Some(i) = rw.find(key) else { return false };
    let g = rw.graph();
    if g.nodes[i].kind != OpKind::SdyReshard {
        return false;
    }
    let Some(&r) = g.nodes[i].results.first() else { return false };
    let Some(target) = g.sharding(rw.m, r) else { return false };
    let Some(mut at) = rw.before(key) else { return false };
    if insert_unreduced_collectives(rw, key, 0, Some(&target), &mut at).is_none() {
        return false;
    }
    let Some(input) = rw.operand(key, 0) else { return false };
    rw.replace_op(key, input);
    true
}

/// `insertAllReduceOnOpIfUnreducedToReplicated`: all-reduces, right before op `key`,
/// the unreduced axes of its operands that its first result does not keep.
pub fn all_reduce_operands(rw: &mut Rewriter, key: OpKey) {
    let Some(i) = rw.find(key) else { return };
    let g = rw.graph();
    let Some(&r0) = g.nodes[i].results.first() else { return };
    let operands: Vec<ValueId> = g.nodes[i].operands.to_vec();
    if !operands.iter().any(|&v| g.sharding_ref(rw.m, v).is_some_and(|s| !s.unreduced.is_empty())) {
        return;
    }
    let first = g.sharding(rw.m, r0);
    let Some(mut at) = rw.before(key) else { return };
    for k in 0..operands.len() {
        let Some(v) = rw.operand(key, k) else { continue };
        if let Some(s) = rw.sharding(v) {
            all_reduce_if_unreduced_to_replicated(rw, key, k, s, first.as_ref(), &mut at);
        }
    }
}
