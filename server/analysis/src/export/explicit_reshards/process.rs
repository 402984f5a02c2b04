//! An op with a sharding rule (Shardy's `processOp`): in the full version its
//! operands and results are resharded to one sharding per factor; in the minimal one
//! only a dot may reshard its result. Then sharded reduction factors get all-reduced.

use super::common_axes::{compatible_factor_sharding, find_common_axes, update_projection};
use super::mesh::is_fully_replicated;
use super::rewrite::{reshard_props, OpKey, Rewriter};
use super::unreduced::collective_props;
use crate::ir::ValueId;
use crate::propagation::graph::{replicated_sharding, Graph};
use crate::propagation::pipeline::import::axis_set_diff;
use crate::propagation::projection::Projection;
use crate::rules::OpShardingRule;
use crate::sharding::axis;
use crate::sharding::{AxisRef, Mesh, MeshRef, TensorSharding};

pub type Axes = Vec<AxisRef>;

/// One op being processed: its rule, mesh and shardings (bypassing barriers).
pub struct OpCx<'r> {
    pub key: OpKey,
    pub rule: &'r OpShardingRule,
    pub mesh_ref: MeshRef,
    pub mesh: Mesh,
    pub outs: Vec<Option<TensorSharding>>,
}

/// The number of elements of each operand and result (0 when not static).
pub fn tensor_sizes(rw: &mut Rewriter, key: OpKey) -> Vec<i64> {
    let Some(i) = rw.find(key) else { return Vec::new() };
    let g = rw.graph();
    let n = &g.nodes[i];
    n.operands
        .iter()
        .chain(&n.results)
        .map(|&v| g.ty(rw.m, v).static_shape().map_or(0, |s| s.iter().product()))
        .collect()
}

/// `processOp`: returns the common axes per factor (none outside the full version).
pub fn process_op(
    rw: &mut Rewriter,
    cx: &OpCx,
    proj: &mut Projection,
    ins: &[Option<TensorSharding>],
    name: &str,
    full: bool,
) -> Vec<Axes> {
    if full {
        let overflow =
            proj.tensors().any(|t| t.factors.iter().flatten().any(|f| !f.overflow.is_empty()));
        if overflow && name == "stablehlo.reshape" {
            return super::reshape::process(rw, cx, proj);
        }
        let sizes = tensor_sizes(rw, cx.key);
        let common = find_common_axes(proj, cx.rule, &sizes, &cx.mesh);
        let (ops, res) = update_projection(proj, &common);
        insert_reshards(rw, cx, proj, ins, &ops, &res);
        return common;
    }
    if matches!(name, "stablehlo.dot" | "stablehlo.dot_general") {
        process_dot(rw, cx, proj);
    }
    Vec::new()
}

/// A sharding on a mesh that differs from the op's in device order only.
fn other_device_order(g: &Graph, s: Option<&TensorSharding>, mesh: &Mesh) -> bool {
    let Some(s) = s else { return false };
    !is_fully_replicated(Some(s))
        && g.mesh_ref(&s.mesh).is_some_and(|m| m.device_ids != mesh.device_ids)
}

/// `insertExplicitReshards`: operands flagged (or on another device order) get a
/// reshard to their projected sharding right before the op; results flagged take
/// their projected sharding, and a reshard right after the op restores the old one.
pub fn insert_reshards(
    rw: &mut Rewriter,
    cx: &OpCx,
    proj: &Projection,
    ins: &[Option<TensorSharding>],
    update_operands: &[bool],
    update_results: &[bool],
) {
    let (rule, sizes) = (cx.rule, &cx.rule.factor_sizes);
    let Some(mut at) = rw.before(cx.key) else { return };
    for (k, s) in ins.iter().enumerate() {
        if !(update_operands.get(k) == Some(&true)
            || other_device_order(&rw.graph(), s.as_ref(), &cx.mesh))
        {
            continue;
        }
        let (Some(t), Some(map)) = (proj.operands.get(k), rule.operands.get(k)) else { continue };
        let new = t.to_sharding(map, sizes, &cx.mesh_ref, &cx.mesh);
        rw.insert_on_operand(cx.key, k, &mut at, "sdy.reshard", reshard_props(new));
    }
    let Some(mut at) = rw.after(cx.key) else { return };
    let Some(i) = rw.find(cx.key) else { return };
    let results: Vec<ValueId> = rw.graph().nodes[i].results.to_vec();
    for (k, s) in cx.outs.iter().enumerate() {
        if !(update_results.get(k) == Some(&true)
            || other_device_order(&rw.graph(), s.as_ref(), &cx.mesh))
        {
            continue;
        }
        let (Some(t), Some(map), Some(&r)) =
            (proj.results.get(k), rule.results.get(k), results.get(k))
        else {
            continue;
        };
        let old = or_replicated(rw, r, &cx.mesh_ref);
        let new = t.to_sharding(map, sizes, &cx.mesh_ref, &cx.mesh);
        rw.insert_on_value(r, &mut at, "sdy.reshard", reshard_props(old));
        rw.set_sharding(r, new);
    }
}

/// `getOrCreateSharding(v, mesh, closedIfMissing=true)`.
fn or_replicated(rw: &mut Rewriter, v: ValueId, mesh: &MeshRef) -> TensorSharding {
    let g = rw.graph();
    g.sharding(rw.m, v).unwrap_or_else(|| replicated_sharding(mesh, g.ty(rw.m, v).rank(), true))
}

/// `processDot`: when the result conflicts with the (mutually compatible) operands on
/// exactly one factor, whose result axes are the contraction's axes, and the result
/// is no larger than the conflicting operand, the dot is computed sharded like the
/// operands and its (smaller) result resharded afterwards.
fn process_dot(rw: &mut Rewriter, cx: &OpCx, proj: &mut Projection) {
    let rule = cx.rule;
    if proj.operands.len() != 2 || proj.results.len() != 1 {
        return;
    }
    let sizes = tensor_sizes(rw, cx.key);
    let [lhs_size, rhs_size, res_size] = sizes[..] else { return };
    let mut conflicting: Option<(usize, Axes)> = None;
    let mut reduction_axes: Axes = Vec::new();
    let mut seen: Axes = Vec::new();
    for f in 0..rule.factor_sizes.len() {
        let lhs = proj.operands[0].factor(f).map(|x| &x.axes);
        let rhs = proj.operands[1].factor(f).map(|x| &x.axes);
        let (operand_axes, max_size) = match (lhs, rhs) {
            (Some(l), Some(r)) => {
                if l != r {
                    return;
                }
                if rule.reduction.contains(&f) {
                    reduction_axes.extend(l.iter().cloned());
                    continue;
                }
                (l.clone(), lhs_size.max(rhs_size))
            }
            (Some(one), None) | (None, Some(one)) => {
                for a in one {
                    if seen.iter().any(|x| axis::overlaps(x, a)) {
                        return;
                    }
                    seen.push(a.clone());
                }
                (one.clone(), if lhs.is_some() { lhs_size } else { rhs_size })
            }
            (None, None) => continue,
        };
        let res_axes = proj.results[0].factor(f).map(|x| &x.axes);
        if res_axes != Some(&operand_axes) {
            if operand_axes.is_empty() || conflicting.is_some() || res_size > max_size {
                return;
            }
            conflicting = Some((f, operand_axes));
        }
    }
    let Some((f, operand_axes)) = conflicting else { return };
    let Some(Some(fs)) = proj.results[0].factors.get_mut(f) else { return };
    if fs.axes.is_empty() || fs.axes != reduction_axes {
        return;
    }
    fs.axes = operand_axes;
    let Some(orig) = cx.outs.first().cloned().flatten() else { return };
    let new =
        proj.results[0].to_sharding(&rule.results[0], &rule.factor_sizes, &cx.mesh_ref, &cx.mesh);
    let Some(i) = rw.find(cx.key) else { return };
    let Some(&r) = rw.graph().nodes[i].results.first() else { return };
    rw.set_sharding(r, new);
    let Some(mut at) = rw.after(cx.key) else { return };
    rw.insert_on_value(r, &mut at, "sdy.reshard", reshard_props(orig));
}

/// `insertAllReducesForReductionFactors`: the axes of the reduction factors (the
/// common ones in the full version; else only when the result is unreduced) that the
/// result does not keep unreduced are all-reduced right after the op.
pub fn all_reduces_for_reduction_factors(
    rw: &mut Rewriter,
    cx: &OpCx,
    proj: &Projection,
    common: &[Axes],
    full: bool,
) {
    let Some(i) = rw.find(cx.key) else { return };
    let results: Vec<ValueId> = rw.graph().nodes[i].results.to_vec();
    let Some(&r0) = results.first() else { return };
    let unreduced = rw.sharding(r0).map(|s| s.unreduced).unwrap_or_default();
    let mut axes: Axes = Vec::new();
    for &f in &cx.rule.reduction {
        if full {
            axes.extend(common.get(f).into_iter().flatten().cloned());
        } else {
            if unreduced.is_empty() {
                return;
            }
            let Some(c) = compatible_factor_sharding(proj, f) else { return };
            axes.extend(c);
        }
    }
    if axes.is_empty() {
        return;
    }
    let mut all = axis_set_diff(&axes, &unreduced, &cx.mesh);
    if all.is_empty() {
        return;
    }
    axis::sort_and_merge(&mut all, &cx.mesh);
    let Some(mut at) = rw.after(cx.key) else { return };
    for r in results {
        let s = or_replicated(rw, r, &cx.mesh_ref);
        let props = collective_props("reduction_axes", all.clone(), s.reduction, s);
        rw.insert_on_value(r, &mut at, "sdy.all_reduce", props);
    }
}
