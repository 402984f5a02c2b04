//! A reshape whose dimension shardings overflow its factors (Shardy's
//! `processReshapeWithOverflowAxes`): the axes of the more sharded side are dealt out
//! again over the factors of each side, and both sides are resharded to what they
//! then have in common.

use super::process::{insert_reshards, Axes, OpCx};
use super::rewrite::Rewriter;
use crate::propagation::pipeline::calls::is_equivalent;
use crate::propagation::projection::{
    add_remaining, gcd, remaining_at, remaining_ref, FactorSharding, Projection, Remaining,
    TensorFactorShardings,
};
use crate::rules::TensorMapping;
use crate::sharding::axis::{self, add_axis_or_merge, sub_axis};
use crate::sharding::{AxisRef, Mesh, TensorSharding};

/// `getShardingSize`: the product of the sizes of every axis of the tensor's factors.
fn sharding_size(t: &TensorFactorShardings, mesh: &Mesh) -> i64 {
    t.factors
        .iter()
        .flatten()
        .map(|f| axis::total_size(&f.axes, mesh) * axis::total_size(&f.overflow, mesh))
        .product()
}

pub fn process(rw: &mut Rewriter, cx: &OpCx, proj: &mut Projection) -> Vec<Axes> {
    let (rule, mesh) = (cx.rule, &cx.mesh);
    let n = rule.factor_sizes.len();
    let (Some(in_map), Some(out_map)) = (rule.operands.first(), rule.results.first()) else {
        return vec![Vec::new(); n];
    };
    if proj.operands.len() != 1 || proj.results.len() != 1 {
        return vec![Vec::new(); n];
    }
    let best = if sharding_size(&proj.operands[0], mesh) >= sharding_size(&proj.results[0], mesh) {
        &proj.operands[0]
    } else {
        &proj.results[0]
    };
    let all: Axes = (0..n)
        .filter_map(|f| best.factor(f))
        .flat_map(|fs| fs.axes.iter().chain(&fs.overflow).cloned())
        .collect();
    redistribute(&mut proj.operands[0], in_map, &rule.factor_sizes, mesh, &all);
    redistribute(&mut proj.results[0], out_map, &rule.factor_sizes, mesh, &all);
    let build = |t: &TensorFactorShardings, map: &TensorMapping| {
        t.to_sharding(map, &rule.factor_sizes, &cx.mesh_ref, mesh)
    };
    let legal = Projection::build(
        &[Some(build(&proj.operands[0], in_map))],
        &[Some(build(&proj.results[0], out_map))],
        rule,
        mesh,
        false,
    );
    let common = greatest_common_prefix_axes(&legal, n);
    for (f, axes) in common.iter().enumerate() {
        for t in proj.operands.iter_mut().chain(proj.results.iter_mut()) {
            if let Some(Some(fs)) = t.factors.get_mut(f) {
                fs.axes = axes.clone();
                fs.overflow.clear();
            }
        }
    }
    let Some(i) = rw.find(cx.key) else { return common };
    let operand = rw.graph().nodes[i].operands.first().copied();
    let current: Vec<Option<TensorSharding>> =
        operand.map(|v| rw.sharding(v)).into_iter().collect();
    let new_in = build(&proj.operands[0], in_map);
    let new_out = build(&proj.results[0], out_map);
    let update_operand = !is_equivalent(current.first().cloned().flatten().as_ref(), Some(&new_in));
    let update_result = !is_equivalent(Some(&new_out), cx.outs.first().cloned().flatten().as_ref());
    insert_reshards(rw, cx, proj, &current, &[update_operand], &[update_result]);
    common
}

/// `getGreatestCommonPrefixAxes`: per factor, the longest common prefix of its axes
/// over the tensors that have it.
fn greatest_common_prefix_axes(p: &Projection, n: usize) -> Vec<Axes> {
    let mut out: Vec<Option<Axes>> = vec![None; n];
    for t in p.tensors() {
        for (f, fs) in t.factors.iter().enumerate() {
            let (Some(fs), Some(slot)) = (fs, out.get_mut(f)) else { continue };
            *slot = Some(match slot.take() {
                None => fs.axes.clone(),
                Some(cur) => axis::common_prefix_list(&cur, &fs.axes),
            });
        }
    }
    out.into_iter().map(Option::unwrap_or_default).collect()
}

/// Deals `all` out over the factors of one tensor, dimension by dimension
/// (`redistributeAxes`).
fn redistribute(
    t: &mut TensorFactorShardings,
    mapping: &TensorMapping,
    factor_sizes: &[i64],
    mesh: &Mesh,
    all: &[AxisRef],
) {
    let factors: Vec<usize> =
        mapping.iter().flatten().copied().filter(|&f| t.factor(f).is_some()).collect();
    let mut slots: Vec<FactorSharding> = factors
        .iter()
        .filter_map(|&f| t.factor(f))
        .map(|fs| FactorSharding { axes: Vec::new(), overflow: Vec::new(), ..fs.clone() })
        .collect();
    let sizes: Vec<i64> =
        factors.iter().map(|&f| factor_sizes.get(f).copied().unwrap_or(1)).collect();
    distribute(&mut slots, &sizes, all, mesh);
    for (&f, s) in factors.iter().zip(slots) {
        if let Some(Some(fs)) = t.factors.get_mut(f) {
            fs.axes = s.axes;
            fs.overflow = s.overflow;
        }
    }
}

/// `distributeAxesAcrossFactors`: each axis (or the part of it that divides) goes to
/// the first factor with room for it; what no factor takes overflows the last one.
fn distribute(slots: &mut [FactorSharding], sizes: &[i64], all: &[AxisRef], mesh: &Mesh) {
    if slots.is_empty() {
        return;
    }
    let mut remaining = sizes.to_vec();
    let mut i = 0usize;
    let mut cur: Option<Remaining> = remaining_at(all, i, mesh);
    while let Some(mut c) = cur {
        let mut used = false;
        let mut advanced = false;
        for (k, slot) in slots.iter_mut().enumerate() {
            if remaining[k] <= 1 {
                continue;
            }
            let g = gcd(remaining[k], c.size);
            if g == 1 && c.size != 1 {
                continue;
            }
            used = true;
            let name = &all[i].name;
            if c.size > g {
                let pre = c.pre.unwrap_or(1);
                add_axis_or_merge(&mut slot.axes, sub_axis(name, pre, g), mesh);
                c = Remaining { size: c.size / g, pre: Some(pre * g) };
                remaining[k] /= g;
            } else {
                add_axis_or_merge(&mut slot.axes, remaining_ref(name, c), mesh);
                remaining[k] /= c.size.max(1);
                i += 1;
                advanced = true;
                break;
            }
        }
        if !used {
            if let Some(last) = slots.last_mut() {
                add_remaining(&mut last.overflow, Some(c), all, i, mesh);
            }
            break;
        }
        cur = if advanced { remaining_at(all, i, mesh) } else { Some(c) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each factor's axes and overflow axes after dealing `all` out, as text.
    fn dealt(sizes: &[i64], all: &[AxisRef]) -> Vec<String> {
        let mesh = Mesh { axes: vec![("x".into(), 8), ("y".into(), 2)], device_ids: vec![] };
        let mut slots = vec![FactorSharding::default(); sizes.len()];
        distribute(&mut slots, sizes, all, &mesh);
        let text = |v: &[AxisRef]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
        slots.iter().map(|s| format!("[{}] [{}]", text(&s.axes), text(&s.overflow))).collect()
    }

    #[test]
    fn an_axis_is_split_over_the_factors_it_divides() {
        let got = dealt(&[2, 8], &[AxisRef::full("x"), AxisRef::full("y")]);
        assert_eq!(got, ["[\"x\":(1)2] []", "[\"x\":(2)4,\"y\"] []"]);
    }

    #[test]
    fn what_no_factor_takes_overflows_the_last_one() {
        let got = dealt(&[3, 5], &[AxisRef::full("x")]);
        assert_eq!(got, ["[] []", "[] [\"x\"]"]);
    }
}
