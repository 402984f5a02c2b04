//! The export passes of `-sdy-propagation-pipeline`.

use super::super::edges::post_order;
use super::super::graph::*;
use super::super::irutil::*;
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, ValueId};
use crate::sharding::axis;
use crate::sharding::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
use rustc_hash::{FxHashMap as HashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// `sdy-constant-or-scalar-merger`: identical constants (and broadcasts of the same
/// scalar) in the same region with identical attributes are merged.
///
/// One post-order walk: a duplicate is merged into the first op with its key, and the
/// values it defined are replaced at once (a use always comes after its definition in
/// post-order, so broadcasts of merged scalars see the merged operand).
pub fn constant_or_scalar_merger(m: &mut Module) {
    // Borrowed from the module: the attributes are compared, never copied.
    type Key<'m> = (&'m [NamedAttr], &'m [NamedAttr], &'m str, Option<ValueId>);
    let g = Graph::shared(m);
    // Candidates by (parent op, region, block, type); the first op of each key.
    // With a fingerprint of the attributes: a block may hold thousands of constants.
    type Place<'m> = (OpIdx, usize, usize, &'m str, u64);
    let mut seen: HashMap<Place, Vec<(Key, OpIdx)>> = HashMap::default();
    let mut replaced: HashMap<ValueId, ValueId> = HashMap::default();
    let mut dups: Vec<OpIdx> = Vec::new();
    for i in post_order(&g) {
        let n = &g.nodes[i];
        let Some(parent) = n.parent else { continue };
        let Some(&(r, b, _)) = n.path.last() else { continue };
        let op = g.op(m, i);
        let ty = n.results.first().map(|&v| m.ty(v).unwrap_or("")).unwrap_or_default();
        let key: Key = if matches!(n.name.as_str(), "sdy.constant" | "stablehlo.constant") {
            (&op.props, &op.attrs, ty, None)
        } else if n.kind == OpKind::StablehloBroadcastInDim
            && n.operands.first().is_some_and(|&v| ValueType::is_scalar_text(m.ty(v).unwrap_or("")))
        {
            let operand = n.operands[0];
            let operand = *replaced.get(&operand).unwrap_or(&operand);
            (&op.props, &op.attrs, ty, Some(operand))
        } else {
            continue;
        };
        let bucket = seen.entry((parent, r, b, ty, fingerprint(key.0, key.1))).or_default();
        if let Some((_, first)) = bucket.iter().find(|(k, _)| *k == key) {
            for (f, t) in n.results.iter().zip(&g.nodes[*first].results) {
                replaced.insert(*f, *t);
            }
            dups.push(i);
            continue;
        }
        bucket.push((key, i));
    }
    drop(seen);
    if dups.is_empty() {
        return;
    }
    m.top.walk_mut(&mut |op: &mut Op| {
        for v in &mut op.operands {
            if let Some(t) = replaced.get(v) {
                *v = *t;
            }
        }
    });
    remove_ops(m, dups.iter().map(|&i| g.nodes[i].path.clone()));
}

/// A hash of the text in `props` and `attrs`: equal attributes hash alike.
fn fingerprint(props: &[NamedAttr], attrs: &[NamedAttr]) -> u64 {
    fn axes(v: &[AxisRef], h: &mut FxHasher) {
        for a in v {
            (a.name.as_str(), a.sub).hash(h);
        }
        v.len().hash(h);
    }
    fn sharding(s: &TensorSharding, h: &mut FxHasher) {
        if let MeshRef::Symbol(m) = &s.mesh {
            m.hash(h);
        }
        for d in &s.dims {
            axes(&d.axes, h);
            (d.open, d.priority).hash(h);
        }
        axes(&s.replicated, h);
        axes(&s.unreduced, h);
    }
    fn go(a: &Attr, h: &mut FxHasher) {
        match a {
            Attr::Sharding(s) => sharding(s, h),
            Attr::PerValue(v) => v.iter().for_each(|s| sharding(s, h)),
            Attr::Int { value, ty } => (value, ty).hash(h),
            Attr::Float { text, ty } => (text, ty).hash(h),
            Attr::Str(s) => s.hash(h),
            Attr::Symbol(s) | Attr::Type(s) | Attr::Raw(s) => s.hash(h),
            Attr::Array(v) => v.iter().for_each(|x| go(x, h)),
            Attr::Dict(d) => d.iter().for_each(|x| go(&x.value, h)),
            _ => {}
        }
    }
    let mut h = FxHasher::default();
    for a in props.iter().chain(attrs) {
        a.name.hash(&mut h);
        go(&a.value, &mut h);
    }
    h.finish()
}

/// `sdy-remove-sharding-groups`.
pub fn remove_sharding_groups(m: &mut Module) {
    fn go(op: &mut Op) {
        for r in &mut op.regions {
            for b in &mut r.blocks {
                b.ops.retain(|o| o.kind != OpKind::SdyShardingGroup);
                for o in &mut b.ops {
                    go(o);
                }
            }
        }
    }
    go(&mut m.top);
}

/// `sdy-sharding-constraint-to-reshard`.
pub fn sharding_constraint_to_reshard(m: &mut Module) {
    m.top.walk_mut(&mut |op: &mut Op| {
        if op.kind == OpKind::SdyShardingConstraint {
            op.set_name("sdy.reshard");
        }
    });
}

fn mesh_for(g: &Graph, r: &MeshRef) -> Option<Mesh> {
    g.mesh(r)
}

/// `getEvenlySharded`: each dimension keeps the largest prefix of its axes that
/// divides it.
pub(crate) fn evenly_sharded(s: &TensorSharding, shape: &[i64], mesh: &Mesh) -> TensorSharding {
    let mut out = s.clone();
    for (d, &size) in out.dims.iter_mut().zip(shape) {
        let sharded = axis::total_size(&d.axes, mesh);
        if sharded != 0 && size % sharded == 0 {
            continue;
        }
        let mut rem = size;
        let mut new = Vec::new();
        for a in &d.axes {
            let asz = axis::size(a, mesh);
            let g = gcd(asz, rem);
            if g == 1 {
                break;
            }
            if asz == g {
                new.push(a.clone());
                rem /= g;
            } else {
                new.push(axis::sub_axis(&a.name, axis::pre_size(a), g));
                break;
            }
        }
        *d = DimSharding { axes: new, open: d.open, priority: None };
    }
    out
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `sdy-update-non-divisible-input-output-shardings`.
pub fn update_non_divisible_io(m: &mut Module) {
    let g = Graph::shared(m);
    let fix = |s: &TensorSharding, ty: &str| -> TensorSharding {
        let Some(shape) = ValueType::parse(ty).static_shape() else { return s.clone() };
        match mesh_for(&g, &s.mesh) {
            Some(mesh) => evenly_sharded(s, &shape, &mesh),
            None => s.clone(),
        }
    };
    for &f in g.funcs.values() {
        let op = g.op_mut(m, f);
        if let Some(fi) = op.func_mut() {
            for slot in fi.args.iter_mut().chain(fi.results.iter_mut()) {
                let ty = slot.ty.clone();
                if let Some(Attr::Sharding(s)) = slot.attr("sdy.sharding") {
                    let n = fix(s, &ty);
                    slot.set_attr("sdy.sharding", Attr::Sharding(n));
                }
            }
        }
    }
    for i in g.pre_order() {
        let n = &g.nodes[i];
        match n.name.as_str() {
            "func.call" => {
                let tys: Vec<String> =
                    n.results.iter().map(|&r| m.ty(r).unwrap_or("").to_string()).collect();
                let op = g.op_mut(m, i);
                if let Some(list) = per_value(op.attr("sdy.sharding")) {
                    let new: Vec<TensorSharding> =
                        list.iter().zip(&tys).map(|(s, t)| fix(s, t)).collect();
                    op.set_attr("sdy.sharding", Attr::PerValue(new));
                }
            }
            "sdy.manual_computation" => {
                let args = n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                let arg_tys: Vec<String> =
                    args.iter().map(|&a| m.ty(a).unwrap_or("").to_string()).collect();
                let res_tys: Vec<String> =
                    n.results.iter().map(|&r| m.ty(r).unwrap_or("").to_string()).collect();
                let op = g.op_mut(m, i);
                let axes = manual_axes(op);
                if let Some(list) = per_value(op.prop("in_shardings")) {
                    let new: Vec<TensorSharding> = list
                        .iter()
                        .zip(&arg_tys)
                        .map(|(s, t)| {
                            let local = erase_manual_axes(s, &axes);
                            add_free_axes(s, &fix(&local, t), &axes)
                        })
                        .collect();
                    if !list.is_empty() {
                        op.set_prop("in_shardings", Attr::PerValue(new));
                    }
                }
                if let Some(list) = per_value(op.prop("out_shardings")) {
                    let new: Vec<TensorSharding> =
                        list.iter().zip(&res_tys).map(|(s, t)| fix(s, t)).collect();
                    if !list.is_empty() {
                        op.set_prop("out_shardings", Attr::PerValue(new));
                    }
                }
            }
            _ => {}
        }
    }
}

/// `sdy-remove-sub-axes-in-input-output-shardings` (main function only).
pub fn remove_sub_axes_in_io(m: &mut Module) {
    let g = Graph::shared(m);
    let Some(f) = g.main_func(m) else { return };
    let op = g.op_mut(m, f);
    if let Some(fi) = op.func_mut() {
        for slot in fi.args.iter_mut().chain(fi.results.iter_mut()) {
            if let Some(Attr::Sharding(s)) = slot.attr("sdy.sharding") {
                let mut n = s.clone();
                for d in &mut n.dims {
                    if d.open {
                        if let Some(k) = d.axes.iter().position(|a| a.sub.is_some()) {
                            d.axes.truncate(k);
                        }
                    }
                }
                slot.set_attr("sdy.sharding", Attr::Sharding(n));
            }
        }
    }
}

/// `sdy-close-shardings`: closed dimensions, no replicated axes.
pub fn close_shardings(m: &mut Module) {
    transform_shardings(m, &mut |s: &mut TensorSharding| {
        for d in &mut s.dims {
            d.open = false;
        }
        s.replicated.clear();
    });
}

/// `sdy-drop-sharding-rules`.
pub fn drop_sharding_rules(m: &mut Module) {
    m.top.walk_mut(&mut |op: &mut Op| {
        if let Some(Attr::Rule(r)) = op.attr("sdy.sharding_rule") {
            if !r.custom {
                op.remove_attr("sdy.sharding_rule");
            }
        }
    });
}

/// The part of `canonicalize` that matters after the pipeline: unused side-effect-free
/// ops are erased and no-op collectives removed.
pub fn canonicalize(m: &mut Module) {
    loop {
        let g = Graph::shared(m);
        let mut victim = None;
        for i in post_order(&g).into_iter().rev() {
            let n = &g.nodes[i];
            if is_terminator(&n.name) || n.kind == OpKind::FuncFunc || n.kind == OpKind::SdyMesh {
                continue;
            }
            let unused = n.results.iter().all(|&r| g.live_uses(r).next().is_none());
            let noop = matches!(n.name.as_str(), "sdy.all_reduce")
                && matches!(g.op(m, i).prop("reduction_axes"), Some(Attr::AxisList(v)) if v.is_empty());
            if noop {
                victim = Some((i, true));
                break;
            }
            if unused && dead(&g, i) {
                victim = Some((i, false));
                break;
            }
        }
        let Some((i, forward)) = victim else { break };
        if forward {
            let (r, input) = (g.nodes[i].results[0], g.nodes[i].operands[0]);
            m.top.replace_uses(r, input);
        }
        let p = g.nodes[i].path.clone();
        remove_op_at(m, &p);
    }
}

fn dead(g: &Graph, i: OpIdx) -> bool {
    match g.nodes[i].kind.purity() {
        None => false,
        Some(false) => true,
        Some(true) => g.nodes[i].children.iter().flatten().flatten().all(|&c| dead(g, c)),
    }
}
