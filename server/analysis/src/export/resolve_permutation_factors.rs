//! `-sdy-resolve-permutation-factors` (Shardy's `ResolvePermutationFactorsPass`): a
//! dimension mapped to a permutation factor (padded, sliced, reversed, windowed) needs
//! data from other devices when it is sharded. The pass replicates such factors with
//! `sdy.reshard`s around the op (the generic resolution), except for the dimensions of
//! pads and slices whose shards stay on their device, and reshapes whose groups of
//! dimensions are not evenly sharded are computed on the evenly sharded axes only.
//!
//! With `enable-halo-exchange=true` (the default) pads, slices, reverses and
//! splitting reshapes that need communication instead exchange the shard borders with
//! collective permutes inside a manual computation ([`super::halo`]); ops whose
//! exchange would take too many hops, and every other op, are replicated.

use super::explicit_reshards::mesh::{is_fully_replicated, is_maximal, op_mesh};
use super::explicit_reshards::process::{insert_reshards, OpCx};
use super::explicit_reshards::rewrite::{reshard_props, OpKey, Rewriter};
use super::explicit_reshards::{Failure, RuleSource};
use super::halo::{self, HaloState, Outcome};
use super::ops::{inherent, pad_amounts, slice_bounds, Builder};
use super::shapes::{padded_shape, shard_count, TensorTy};
use crate::canonicalize::reshape_strides::equivalent_strides;
use crate::ir::Module;
use crate::model::Model;
use crate::propagation::graph::{is_terminator, Graph, OpIdx};
use crate::propagation::pipeline::import::axis_set_diff;
use crate::propagation::projection::Projection;
use crate::sharding::axis::add_axis_or_merge;
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// Runs the pass on every function of `m`; `halo` is `enable-halo-exchange`,
/// `replicas` the `replica-count` (the device id is the replica id above 1).
pub fn resolve_permutation_factors(
    m: &mut Module,
    model: &Model,
    src: &str,
    halo: bool,
    replicas: i64,
) -> Result<(), Failure> {
    let rules = RuleSource::new(model, src);
    let mut st = halo.then(|| HaloState::new(m, replicas));
    let (mut rw, funcs) = Rewriter::new(m);
    let result = funcs
        .into_iter()
        .flat_map(|(_, ops)| ops)
        .try_for_each(|key| visit(&mut rw, &rules, key, &mut st));
    rw.finish();
    result
}

fn visit(
    rw: &mut Rewriter,
    rules: &RuleSource,
    key: OpKey,
    st: &mut Option<HaloState>,
) -> Result<(), Failure> {
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let n = &g.nodes[i];
    let name = n.name.to_string();
    if is_terminator(&name) || !name.starts_with("stablehlo.") {
        return Ok(());
    }
    if name == "stablehlo.reshape" {
        reshape(rw, key, st.as_mut());
        return Ok(());
    }
    let Some(rule) = rules.rule(&g, rw.m, i) else { return Ok(()) };
    if rule.is_custom
        || rule.permutation.is_empty()
        || rule.operands.len() != n.operands.len()
        || rule.results.len() != n.results.len()
    {
        return Ok(());
    }
    if let Some(st) = st.as_mut() {
        drop(g);
        if !matches!(halo_op(rw, st, key, &name), Outcome::Replicate) {
            return Ok(());
        }
    }
    let g = rw.graph();
    let n = &g.nodes[i];
    let ins: Vec<Option<TensorSharding>> =
        n.operands.iter().map(|&v| g.sharding(rw.m, v)).collect();
    let outs: Vec<Option<TensorSharding>> =
        n.results.iter().map(|&v| g.sharding(rw.m, v)).collect();
    let Some((mesh_ref, mesh)) = op_mesh(&g, &ins, &outs) else { return Ok(()) };
    let mut proj = Projection::build(&ins, &outs, &rule, &mesh, true);
    let (mut ops, mut res) = (vec![false; ins.len()], vec![false; outs.len()]);
    for &f in &rule.permutation {
        if comm_free_dim(&g, rw.m, i, &name, f, ins.first().cloned().flatten().as_ref(), &mesh) {
            continue;
        }
        let tensors = proj.operands.iter_mut().zip(ops.iter_mut());
        for (t, changed) in tensors.chain(proj.results.iter_mut().zip(res.iter_mut())) {
            if let Some(Some(fs)) = t.factors.get_mut(f) {
                if !fs.axes.is_empty() || !fs.overflow.is_empty() {
                    fs.axes.clear();
                    fs.overflow.clear();
                    *changed = true;
                }
            }
        }
    }
    if ops.iter().chain(&res).any(|&c| c) {
        let cx = OpCx { key, rule: &rule, mesh_ref, mesh, outs };
        insert_reshards(rw, &cx, &proj, &ins, &ops, &res);
    }
    Ok(())
}

/// The halo exchange of a pad, slice or reverse (Shardy's `handlePadOp`,
/// `handleSliceOp`, `handleReverseOp`); other ops are replicated.
fn halo_op(rw: &mut Rewriter, st: &mut HaloState, key: OpKey, name: &str) -> Outcome {
    if !matches!(name, "stablehlo.pad" | "stablehlo.slice" | "stablehlo.reverse") {
        return Outcome::Replicate;
    }
    let Some(i) = rw.find(key) else { return Outcome::Keep };
    let g = rw.graph();
    let n = &g.nodes[i];
    let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
        return Outcome::Keep;
    };
    let in_s = g.sharding(rw.m, input);
    let ty = |v| rw.m.ty(v).and_then(TensorTy::parse);
    let (Some(in_s), Some(in_ty), Some(out_ty)) = (in_s, ty(input), ty(result)) else {
        return Outcome::Keep;
    };
    if is_fully_replicated(Some(&in_s)) {
        return Outcome::Keep;
    }
    let Some(mesh) = g.mesh(&in_s.mesh).filter(|m| !is_maximal(m)) else {
        return Outcome::Keep;
    };
    let op = g.op(rw.m, i).clone();
    let out_s = g.sharding(rw.m, result);
    let pad_value = n.operands.get(1).copied();
    drop(g);
    rw.settle();
    let mut b = Builder::new(rw.m);
    let w = halo::Windowed { input, in_ty: &in_ty, out_ty: &out_ty, in_s: &in_s, mesh: &mesh };
    let out = match name {
        "stablehlo.pad" => match (pad_amounts(&op), pad_value) {
            (Some([low, high, interior]), Some(value)) => {
                halo::pad(&mut b, st, &w, value, [&low, &high, &interior])
            }
            _ => Outcome::Replicate,
        },
        "stablehlo.slice" => match slice_bounds(&op) {
            Some(bounds) => halo::slice(&mut b, st, &w, &bounds),
            None => Outcome::Replicate,
        },
        _ => match (inherent(&op).dimensions(), out_s) {
            (Some(dims), Some(out_s)) => {
                let r = halo::Reverse {
                    op: &op,
                    input,
                    in_ty: &in_ty,
                    in_s: &in_s,
                    out_s: &out_s,
                    mesh: &mesh,
                    dims: &dims,
                };
                halo::reverse(&mut b, st, &r)
            }
            // Shardy reshards to the result's sharding, which is not there.
            _ => Outcome::Replicate,
        },
    };
    if let Outcome::Replaced(v) = out {
        let ops = b.ops;
        let meshes = st.take_new_meshes();
        rw.splice(key, ops, &[(result, v)], meshes);
    }
    out
}

/// `isCommunicationFreeSliceDim` / `isCommunicationFreePadDim` for factor `f` (the
/// dimension of the same number): each device keeps computing from its own shard.
fn comm_free_dim(
    g: &Graph,
    m: &Module,
    i: OpIdx,
    name: &str,
    f: usize,
    in_sharding: Option<&TensorSharding>,
    mesh: &Mesh,
) -> bool {
    let n = &g.nodes[i];
    let (Some(s), Some(&input), Some(&result)) =
        (in_sharding, n.operands.first(), n.results.first())
    else {
        return false;
    };
    if !matches!(name, "stablehlo.slice" | "stablehlo.pad") {
        return false;
    }
    let k = shard_count(s, f, mesh);
    if k <= 1 {
        return true;
    }
    let (Some(in_shape), Some(out_shape)) =
        (g.ty(m, input).static_shape(), g.ty(m, result).static_shape())
    else {
        return false;
    };
    let (Some(&in_dim), Some(&out_dim)) = (in_shape.get(f), out_shape.get(f)) else { return false };
    if name == "stablehlo.slice" {
        let Some(&(start, _, stride)) = slice_bounds(g.op(m, i)).as_ref().and_then(|b| b.get(f))
        else {
            return false;
        };
        return start == 0 && stride == 1 && div_ceil(in_dim, k) == div_ceil(out_dim, k);
    }
    let Some([low, _, interior]) = pad_amounts(g.op(m, i)) else { return false };
    let (Some(&low), Some(&interior)) = (low.get(f), interior.get(f)) else { return false };
    if interior != 0 {
        return false;
    }
    let (s_in, s_out) = (div_ceil(in_dim, k), div_ceil(out_dim, k));
    (0..k).all(|t| {
        let start = t.saturating_mul(s_out).saturating_sub(low);
        let limit = start.saturating_add(s_out - 1);
        let (lo, hi) = (start.max(0), limit.min(in_dim - 1));
        lo > hi || (lo / s_in == t && hi / s_in == t)
    })
}

fn div_ceil(a: i64, b: i64) -> i64 {
    if b <= 0 {
        return a;
    }
    a / b + i64::from(a % b > 0)
}

/// `handleReshapeOp`: a reshape whose shardings are not communication free across it
/// is computed with the axes of its unevenly sharded dimension groups replicated.
fn reshape(rw: &mut Rewriter, key: OpKey, st: Option<&mut HaloState>) {
    let Some(i) = rw.find(key) else { return };
    let g = rw.graph();
    let n = &g.nodes[i];
    let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
        return;
    };
    // Shardy asserts that explicit reshards made both sides sharded alike.
    let (Some(s_in), Some(s_out)) = (g.sharding(rw.m, input), g.sharding(rw.m, result)) else {
        return;
    };
    let (Some(t_in), Some(t_out)) =
        (g.ty(rw.m, input).static_shape(), g.ty(rw.m, result).static_shape())
    else {
        return;
    };
    let Some(mesh) = g.mesh(&s_in.mesh) else { return };
    if s_in.dims.len() != t_in.len() || s_out.dims.len() != t_out.len() {
        return;
    }
    if ordered_axes(&s_in, &mesh) != ordered_axes(&s_out, &mesh) {
        return;
    }
    let groups = reshape_groups(&t_in, &t_out);
    let sides = Sides { s_in: &s_in, s_out: &s_out, t_in: &t_in, t_out: &t_out, mesh: &mesh };
    let same = |nd| {
        (s_in == s_out && t_in == t_out)
            || (s_in.mesh == s_out.mesh
                && s_in.replicated == s_out.replicated
                && equivalent_strides(&s_in, &t_in, &s_out, &t_out, &mesh, nd))
    };
    if same(true) {
        if same(false) || groups.iter().all(Group::passthrough) {
            return;
        }
        let uneven = groups.iter().any(|gr| gr.uneven(&sides));
        if let Some(st) = st.filter(|_| uneven) {
            if let Some(active) = halo_reshape(&groups, &sides) {
                if halo_exchange_reshape(rw, st, key, &groups, &active, &sides) {
                    return;
                }
            }
        }
    }
    let mut remove: Vec<AxisRef> = Vec::new();
    for gr in groups.iter().filter(|gr| !gr.passthrough()) {
        if gr.uneven(&sides) {
            let ins = s_in.dims[gr.ins.clone()].iter().flat_map(|d| d.axes.iter());
            remove.extend(
                ins.chain(s_out.dims[gr.outs.clone()].iter().flat_map(|d| d.axes.iter())).cloned(),
            );
        }
    }
    let without = |s: &TensorSharding| {
        let mut s = s.clone();
        if !remove.is_empty() {
            for d in &mut s.dims {
                d.axes = axis_set_diff(&d.axes, &remove, &mesh);
            }
            s.reduction = crate::sharding::Reduction::Sum;
        }
        s
    };
    let (new_in, new_out) = (without(&s_in), without(&s_out));
    let Some(mut at) = rw.before(key) else { return };
    rw.insert_on_operand(key, 0, &mut at, "sdy.reshard", reshard_props(new_in));
    rw.set_sharding(result, new_out);
    let Some(mut at) = rw.after(key) else { return };
    rw.insert_on_value(result, &mut at, "sdy.reshard", reshard_props(s_out));
}

/// `handleReshapeHaloExchange`: whether the reshape was exchanged (else it is
/// replicated). `active` are the groups the exchange splits.
fn halo_exchange_reshape(
    rw: &mut Rewriter,
    st: &mut HaloState,
    key: OpKey,
    groups: &[Group],
    active: &[Group],
    x: &Sides,
) -> bool {
    let Some(i) = rw.find(key) else { return false };
    let g = rw.graph();
    let n = &g.nodes[i];
    let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
        return false;
    };
    drop(g);
    let ty = |v| rw.m.ty(v).and_then(TensorTy::parse);
    let (Some(in_ty), Some(out_ty)) = (ty(input), ty(result)) else { return false };
    let p_in = padded_shape(x.t_in, x.s_in, x.mesh);
    let p_out = padded_shape(x.t_out, x.s_out, x.mesh);
    // The names of the axes of the groups with a dimension its shards do not divide.
    let mut manual: Vec<String> = Vec::new();
    for gr in groups.iter().filter(|gr| gr.uneven(x)) {
        let dims = x.s_in.dims[gr.ins.clone()].iter().chain(&x.s_out.dims[gr.outs.clone()]);
        for a in dims.flat_map(|d| &d.axes) {
            if !manual.iter().any(|m| *m == *a.name) {
                manual.push(a.name.to_string());
            }
        }
    }
    let active: Vec<(usize, std::ops::Range<usize>)> = active
        .iter()
        .filter_map(|gr| Some((gr.ins.end.checked_sub(1)?, gr.outs.clone())))
        .collect();
    let empty = halo::DataEx::default();
    let mut rx = halo::Reshape {
        input,
        in_ty: &in_ty,
        out_ty: &out_ty,
        in_s: x.s_in,
        out_s: x.s_out,
        mesh: x.mesh,
        padded_in: &p_in,
        padded_out: &p_out,
        info: &empty,
    };
    let Some(info) = halo::reshape_data_exchange(&rx, manual, &active) else { return false };
    if !info.usable() {
        return false;
    }
    rx.info = &info;
    rw.settle();
    let mut b = Builder::new(rw.m);
    let v = halo::reshape(&mut b, st, &rx);
    let ops = b.ops;
    rw.splice(key, ops, &[(result, v)], Vec::new());
    true
}

/// Every axis of `s`, dimension by dimension, adjacent sub-axes merged.
fn ordered_axes(s: &TensorSharding, mesh: &Mesh) -> Vec<AxisRef> {
    let mut axes = Vec::new();
    for a in s.dims.iter().flat_map(|d| &d.axes) {
        add_axis_or_merge(&mut axes, a.clone(), mesh);
    }
    axes
}

/// A reshape's input and output shardings and shapes.
#[derive(Clone, Copy)]
struct Sides<'a> {
    s_in: &'a TensorSharding,
    s_out: &'a TensorSharding,
    t_in: &'a [i64],
    t_out: &'a [i64],
    mesh: &'a Mesh,
}

/// Dimensions of a reshape's input and output that hold the same elements
/// (`ReshapeGroupInfo`): the smallest runs with equal products.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    ins: std::ops::Range<usize>,
    outs: std::ops::Range<usize>,
    /// Dimensions of size other than 1 on each side.
    in_nontrivial: usize,
    out_nontrivial: usize,
}

impl Group {
    fn passthrough(&self) -> bool {
        self.in_nontrivial <= 1 && self.out_nontrivial <= 1
    }
    fn split(&self) -> bool {
        self.in_nontrivial <= 1 && self.out_nontrivial > 1
    }

    /// A dimension of the group whose size its shard count does not divide.
    fn uneven(&self, x: &Sides) -> bool {
        let Sides { s_in, s_out, t_in, t_out, mesh } = *x;
        let uneven = |s: &TensorSharding, t: &[i64], d: usize| {
            let k = shard_count(s, d, mesh);
            k > 1 && t[d] % k != 0
        };
        self.ins.clone().any(|d| uneven(s_in, t_in, d))
            || self.outs.clone().any(|d| uneven(s_out, t_out, d))
    }
}

/// `buildReshapeGroupInfos`.
fn reshape_groups(t_in: &[i64], t_out: &[i64]) -> Vec<Group> {
    let nontrivial =
        |t: &[i64], r: std::ops::Range<usize>| t[r].iter().filter(|&&d| d != 1).count();
    let (mut i, mut o) = (0, 0);
    let mut groups = Vec::new();
    while i < t_in.len() || o < t_out.len() {
        let (i0, o0) = (i, o);
        let mut in_prod = 1i128;
        let mut out_prod = 1i128;
        if i < t_in.len() {
            in_prod = t_in[i].into();
            i += 1;
        }
        if o < t_out.len() {
            out_prod = t_out[o].into();
            o += 1;
        }
        while in_prod != out_prod && (i < t_in.len() || o < t_out.len()) {
            if in_prod < out_prod && i < t_in.len() {
                in_prod = in_prod.saturating_mul(t_in[i].into());
                i += 1;
            } else if out_prod < in_prod && o < t_out.len() {
                out_prod = out_prod.saturating_mul(t_out[o].into());
                o += 1;
            } else {
                break;
            }
        }
        groups.push(Group {
            ins: i0..i,
            outs: o0..o,
            in_nontrivial: nontrivial(t_in, i0..i),
            out_nontrivial: nontrivial(t_out, o0..o),
        });
    }
    groups
}

/// `getReshapeHaloInfo`: whether Shardy exchanges halos for the reshape (every uneven
/// group a split of one dimension without size-1 dimensions, sizes multiples of each
/// other and equal padded volumes).
fn halo_reshape(groups: &[Group], x: &Sides) -> Option<Vec<Group>> {
    let Sides { s_in, s_out, t_in, t_out, mesh } = *x;
    let (p_in, p_out) = (padded_shape(t_in, s_in, mesh), padded_shape(t_out, s_out, mesh));
    let volume = |p: &[i64], r: &std::ops::Range<usize>| {
        p[r.clone()].iter().fold(1i128, |a, &d| a.saturating_mul(d.into()))
    };
    let mut active = Vec::new();
    for gr in groups.iter().filter(|gr| !gr.passthrough()) {
        let uneven = gr.ins.clone().any(|d| p_in[d] != t_in[d])
            || gr.outs.clone().any(|d| p_out[d] != t_out[d]);
        if !uneven {
            continue;
        }
        if gr.in_nontrivial > 1 && gr.out_nontrivial > 1 {
            return None;
        }
        if gr.in_nontrivial != gr.ins.len() || gr.out_nontrivial != gr.outs.len() {
            return None;
        }
        let (Some(&a), Some(&b)) = (t_in.get(gr.ins.start), t_out.get(gr.outs.start)) else {
            return None;
        };
        if a <= 0 || b <= 0 || (a % b != 0 && b % a != 0) {
            return None;
        }
        if volume(&p_in, &gr.ins) != volume(&p_out, &gr.outs) || !gr.split() {
            return None;
        }
        active.push(gr.clone());
    }
    (!active.is_empty()).then_some(active)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_pair_runs_of_equal_products() {
        let shape = |g: &Group| (g.ins.clone(), g.outs.clone(), g.in_nontrivial, g.out_nontrivial);
        let groups: Vec<_> = reshape_groups(&[2, 3, 5], &[30]).iter().map(shape).collect();
        assert_eq!(groups, [(0..3, 0..1, 3, 1)]);
        let groups: Vec<_> = reshape_groups(&[6, 2], &[3, 2, 2]).iter().map(shape).collect();
        assert_eq!(groups, [(0..1, 0..2, 1, 2), (1..2, 2..3, 1, 1)]);
        let groups: Vec<_> = reshape_groups(&[6], &[1, 6]).iter().map(shape).collect();
        assert_eq!(groups, [(0..1, 0..2, 1, 1)]);
    }
}
