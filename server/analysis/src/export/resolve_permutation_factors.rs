//! `-sdy-resolve-permutation-factors` (Shardy's `ResolvePermutationFactorsPass`): a
//! dimension mapped to a permutation factor (padded, sliced, reversed, windowed) needs
//! data from other devices when it is sharded. The pass replicates such factors with
//! `sdy.reshard`s around the op (the generic resolution), except for the dimensions of
//! pads and slices whose shards stay on their device, and reshapes whose groups of
//! dimensions are not evenly sharded are computed on the evenly sharded axes only.
//!
//! With `enable-halo-exchange=true` (the default) Shardy instead exchanges the shard
//! borders with collective permutes inside a manual computation for pads, slices,
//! reverses and splitting reshapes that need communication. That rewrite is not
//! written here: the pass reports it as not implemented rather than print a different
//! program. Where no communication is needed, or halo exchange cannot be used, both
//! modes give Shardy's output.

use super::explicit_reshards::mesh::{is_fully_replicated, is_maximal, op_mesh};
use super::explicit_reshards::process::{insert_reshards, OpCx};
use super::explicit_reshards::rewrite::{reshard_props, OpKey, Rewriter};
use super::explicit_reshards::{Failure, RuleSource};
use super::ops::{inherent, pad_amounts, slice_bounds};
use super::shapes::{padded_shape, shard_count};
use crate::canonicalize::reshape_strides::equivalent_strides;
use crate::model::Model;
use crate::print::ir::Module;
use crate::propagation::graph::{is_terminator, Graph, OpIdx};
use crate::propagation::pipeline::import::axis_set_diff;
use crate::propagation::projection::Projection;
use crate::sharding::axis::add_axis_or_merge;
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// Runs the pass on every function of `m`; `halo` is `enable-halo-exchange`.
pub fn resolve_permutation_factors(
    m: &mut Module,
    model: &Model,
    src: &str,
    halo: bool,
) -> Result<(), Failure> {
    let rules = RuleSource::new(model, src);
    let (mut rw, funcs) = Rewriter::new(m);
    let result = funcs
        .into_iter()
        .flat_map(|(_, ops)| ops)
        .try_for_each(|key| visit(&mut rw, &rules, key, halo));
    rw.finish();
    result
}

/// What halo exchange makes of an op.
enum Halo {
    /// No device needs another's data: the op stays.
    NotNeeded,
    /// Shardy exchanges borders in a manual computation (not written here).
    Exchange,
    /// Too many hops: the op falls back to replication.
    Unusable,
}

fn visit(rw: &mut Rewriter, rules: &RuleSource, key: OpKey, halo: bool) -> Result<(), Failure> {
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let n = &g.nodes[i];
    let name = n.name.to_string();
    if is_terminator(&name) || !name.starts_with("stablehlo.") {
        return Ok(());
    }
    if name == "stablehlo.reshape" {
        return reshape(rw, key, halo).map_err(|e| (n.origin, e));
    }
    let Some(rule) = rules.rule(&g, rw.m, i) else { return Ok(()) };
    if rule.is_custom
        || rule.permutation.is_empty()
        || rule.operands.len() != n.operands.len()
        || rule.results.len() != n.results.len()
    {
        return Ok(());
    }
    if halo {
        match halo_exchange(&g, rw.m, i, &name) {
            Some(Halo::NotNeeded) => return Ok(()),
            Some(Halo::Exchange) => return Err((n.origin, not_implemented(&name))),
            Some(Halo::Unusable) | None => {}
        }
    }
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

fn not_implemented(name: &str) -> String {
    format!(
        "sdy-lsp: halo exchange for '{name}' is not implemented (run with enable-halo-exchange=false)"
    )
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

/// How Shardy's halo exchange handles pad, slice and reverse op `i` (`None`: another
/// op, which is always replicated).
fn halo_exchange(g: &Graph, m: &Module, i: OpIdx, name: &str) -> Option<Halo> {
    let n = &g.nodes[i];
    let input = *n.operands.first()?;
    let s = g.sharding(m, input);
    let shape = g.ty(m, input).static_shape();
    if is_fully_replicated(s.as_ref()) || shape.is_none() {
        return Some(Halo::NotNeeded);
    }
    let (s, shape) = (s?, shape?);
    let Some(mesh) = g.mesh(&s.mesh).filter(|m| !is_maximal(m)) else {
        return Some(Halo::NotNeeded);
    };
    let out_shape = g.ty(m, *n.results.first()?).static_shape()?;
    let op = g.op(m, i);
    // Per sharded dimension: (pad low, base dilation) of the exchange.
    let window = |d: usize| -> Option<(i64, i64)> {
        match name {
            "stablehlo.pad" => {
                let [low, _, interior] = pad_amounts(op)?;
                Some((*low.get(d)?, interior.get(d)?.saturating_add(1)))
            }
            "stablehlo.slice" => Some((slice_bounds(op)?.get(d)?.0.saturating_neg(), 1)),
            _ => None,
        }
    };
    if name == "stablehlo.reverse" {
        let dims = inherent(op).ints(&["dimensions"]).unwrap_or_default();
        let reversed_sharded =
            (0..shape.len()).any(|d| dims.contains(&(d as i64)) && shard_count(&s, d, &mesh) > 1);
        return Some(if reversed_sharded { Halo::Exchange } else { Halo::NotNeeded });
    }
    if !matches!(name, "stablehlo.pad" | "stablehlo.slice") {
        return None;
    }
    let (mut needs_comm, mut usable) = (false, true);
    for (d, &dim) in shape.iter().enumerate() {
        let k = shard_count(&s, d, &mesh);
        if k <= 1 {
            continue;
        }
        let (low, dilation) = window(d)?;
        let s_out = div_ceil(*out_shape.get(d)?, k);
        let e = dim_exchange(k, div_ceil(dim, k), s_out, low, dilation.max(1), dim);
        needs_comm |= e.needs_comm;
        usable &= e.usable;
    }
    Some(match (needs_comm, usable) {
        (false, _) => Halo::NotNeeded,
        (true, true) => Halo::Exchange,
        (true, false) => Halo::Unusable,
    })
}

/// `getDimExchangeInfo` reduced to what decides the resolution.
struct DimExchange {
    needs_comm: bool,
    usable: bool,
}

/// Which source shards each of the `k` target shards of one dimension reads (`s_in`
/// input and `s_out` output elements per shard, the window shifted by `low` in the
/// dilated input).
fn dim_exchange(k: i64, s_in: i64, s_out: i64, low: i64, dilation: i64, dim: i64) -> DimExchange {
    let (mut needs_comm, mut left, mut right) = (false, 0i64, 0i64);
    for t in 0..k {
        let start = t.saturating_mul(s_out).saturating_sub(low) / dilation;
        let limit = start.saturating_add(s_out - 1);
        let (lo, hi) = (start.max(0), limit.min(dim - 1));
        if lo > hi || s_in <= 0 {
            needs_comm = true;
            continue;
        }
        let (first, last) = (lo / s_in, hi / s_in);
        needs_comm |= first != t || last != t;
        left = left.max(t - first);
        right = right.max(last - t);
    }
    let usable = !(left + right + 1 >= k && (left > 1 || right > 1));
    DimExchange { needs_comm, usable }
}

/// `handleReshapeOp`: a reshape whose shardings are not communication free across it
/// is computed with the axes of its unevenly sharded dimension groups replicated.
fn reshape(rw: &mut Rewriter, key: OpKey, halo: bool) -> Result<(), String> {
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let n = &g.nodes[i];
    let (Some(&input), Some(&result)) = (n.operands.first(), n.results.first()) else {
        return Ok(());
    };
    // Shardy asserts that explicit reshards made both sides sharded alike.
    let (Some(s_in), Some(s_out)) = (g.sharding(rw.m, input), g.sharding(rw.m, result)) else {
        return Ok(());
    };
    let (Some(t_in), Some(t_out)) =
        (g.ty(rw.m, input).static_shape(), g.ty(rw.m, result).static_shape())
    else {
        return Ok(());
    };
    let Some(mesh) = g.mesh(&s_in.mesh) else { return Ok(()) };
    if s_in.dims.len() != t_in.len() || s_out.dims.len() != t_out.len() {
        return Ok(());
    }
    if ordered_axes(&s_in, &mesh) != ordered_axes(&s_out, &mesh) {
        return Ok(());
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
            return Ok(());
        }
        let uneven = groups.iter().any(|gr| gr.uneven(&sides));
        if halo && uneven && halo_reshape(&groups, &sides) {
            return Err(not_implemented("stablehlo.reshape"));
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
    let Some(mut at) = rw.before(key) else { return Ok(()) };
    rw.insert_on_operand(key, 0, &mut at, "sdy.reshard", reshard_props(new_in));
    rw.set_sharding(result, new_out);
    let Some(mut at) = rw.after(key) else { return Ok(()) };
    rw.insert_on_value(result, &mut at, "sdy.reshard", reshard_props(s_out));
    Ok(())
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
fn halo_reshape(groups: &[Group], x: &Sides) -> bool {
    let Sides { s_in, s_out, t_in, t_out, mesh } = *x;
    let (p_in, p_out) = (padded_shape(t_in, s_in, mesh), padded_shape(t_out, s_out, mesh));
    let volume = |p: &[i64], r: &std::ops::Range<usize>| {
        p[r.clone()].iter().fold(1i128, |a, &d| a.saturating_mul(d.into()))
    };
    let mut active = 0;
    for gr in groups.iter().filter(|gr| !gr.passthrough()) {
        let uneven = gr.ins.clone().any(|d| p_in[d] != t_in[d])
            || gr.outs.clone().any(|d| p_out[d] != t_out[d]);
        if !uneven {
            continue;
        }
        if gr.in_nontrivial > 1 && gr.out_nontrivial > 1 {
            return false;
        }
        if gr.in_nontrivial != gr.ins.len() || gr.out_nontrivial != gr.outs.len() {
            return false;
        }
        let (a, b) = (t_in[gr.ins.start], t_out[gr.outs.start]);
        if a <= 0 || b <= 0 || (a % b != 0 && b % a != 0) {
            return false;
        }
        if volume(&p_in, &gr.ins) != volume(&p_out, &gr.outs) || !gr.split() {
            return false;
        }
        active += 1;
    }
    active > 0
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

    #[test]
    fn exchanges_of_shifted_windows() {
        // A pad of 4 on both sides of 8 over 2 shards: each shard keeps its own data.
        let e = dim_exchange(2, 4, 8, 4, 1, 8);
        assert!(!e.needs_comm && e.usable);
        // A slice starting at 1 of 8 over 4 shards reads one neighbour.
        let e = dim_exchange(4, 2, 2, -1, 1, 8);
        assert!(e.needs_comm && e.usable);
        // A slice of the last element over 4 shards: three hops left.
        let e = dim_exchange(4, 2, 1, -7, 1, 8);
        assert!(e.needs_comm && !e.usable);
    }
}
