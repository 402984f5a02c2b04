//! The export passes of `-sdy-propagation-pipeline`.

use super::super::axis;
use super::super::edges::{insertion_after, post_order, replace_all_uses_except};
use super::super::graph::*;
use super::super::irutil::*;
use super::super::ops::purity;
use crate::print::attr::NamedAttr;
use crate::print::ir::{Attr, Module, Op, ValueId};
use crate::print::sdy::{AxisRef, DimSharding, Mesh, MeshRef, TensorSharding};
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
        } else if n.name == "stablehlo.broadcast_in_dim"
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
                b.ops.retain(|o| o.name != "sdy.sharding_group");
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
        if op.name == "sdy.sharding_constraint" {
            op.name = "sdy.reshard".into();
        }
    });
}

fn mesh_for(g: &Graph, r: &MeshRef) -> Option<Mesh> {
    g.mesh(r)
}

/// `getEvenlySharded`: each dimension keeps the largest prefix of its axes that
/// divides it.
fn evenly_sharded(s: &TensorSharding, shape: &[i64], mesh: &Mesh) -> TensorSharding {
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
    transform_shardings(m, &mut |s: &TensorSharding| {
        let mut n = s.clone();
        for d in &mut n.dims {
            d.open = false;
        }
        n.replicated.clear();
        n
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
            if is_terminator(&n.name) || n.name == "func.func" || n.name == "sdy.mesh" {
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
        let (last, parent) = p.split_last().expect("non-root");
        op_at_path_mut(m, parent).regions[last.0].blocks[last.1].ops.remove(last.2);
    }
}

fn dead(g: &Graph, i: OpIdx) -> bool {
    match purity(&g.nodes[i].name) {
        None => false,
        Some(false) => true,
        Some(true) => g.nodes[i].children.iter().flatten().flatten().all(|&c| dead(g, c)),
    }
}

/// Where a new op goes.
enum At {
    /// Right before op `OpIdx`.
    Before(OpIdx),
    /// Right after the definition of the value.
    AfterValue(ValueId),
    /// Right after op `OpIdx`.
    After(OpIdx),
}

fn insert_at(m: &mut Module, g: &Graph, at: At, op: Op) {
    let (p, r, b, i) = match at {
        At::Before(o) | At::After(o) => {
            let (last, parent) = g.nodes[o].path.split_last().expect("non-root");
            let i = if matches!(at, At::Before(_)) { last.2 } else { last.2 + 1 };
            (Path::from(parent), last.0, last.1, i)
        }
        At::AfterValue(v) => match insertion_after(g, v) {
            Some(x) => x,
            None => return,
        },
    };
    super::super::edges::insert_op(m, &p, r, b, i, op);
}

/// `insertAllReduceIfUnreducedToReplicated` on operand `k` (MLIR order) of `user`:
/// an all-reduce over the operand's unreduced axes the target does not keep.
fn all_reduce_unreduced(
    m: &mut Module,
    cache: &mut GraphCache,
    user: OpIdx,
    k: usize,
    target: Option<&TensorSharding>,
    at: fn(OpIdx, ValueId) -> At,
) -> bool {
    let g = cache.get(m);
    let Some(&v) = g.nodes[user].operands.get(k) else { return false };
    let Some(src) = g.sharding_ref(m, v) else { return false };
    if src.unreduced.is_empty() {
        return false;
    }
    let src = src.into_owned();
    let Some(mesh) = g.mesh(&src.mesh) else { return false };
    let target_unreduced: Vec<AxisRef> = target.map(|t| t.unreduced.clone()).unwrap_or_default();
    let axes = super::import::axis_set_diff(&src.unreduced, &target_unreduced, &mesh);
    if axes.is_empty() {
        return false;
    }
    let mut out = src.clone();
    out.unreduced = super::import::axis_set_diff(&src.unreduced, &axes, &mesh);
    let ty = m.ty(v).map(str::to_string);
    let nv = m.new_value(ty);
    let mut op = Op::pretty("sdy.all_reduce", vec![v], vec![nv], Vec::new());
    op.set_prop("reduction_axes", Attr::AxisList(axes));
    op.set_prop("out_sharding", Attr::Sharding(out));
    set_operand(m, g, user, k, nv);
    insert_at(m, g, at(user, v), op);
    true
}

/// Sets operand `k` (MLIR order) of op `i` to `v`.
fn set_operand(m: &mut Module, g: &Graph, i: OpIdx, k: usize, v: ValueId) {
    let op = g.op_mut(m, i);
    let n = op.operands.len();
    let w = if op.name == "stablehlo.reduce"
        && matches!(op.syntax, crate::print::ir::Syntax::Custom(_))
        && n.is_multiple_of(2)
    {
        if k < n / 2 {
            2 * k
        } else {
            2 * (k - n / 2) + 1
        }
    } else {
        k
    };
    if w < n {
        op.operands[w] = v;
    }
}

fn sharding_bypassing_barriers(m: &Module, g: &Graph, mut v: ValueId) -> Option<TensorSharding> {
    loop {
        match g.def(v) {
            Some(Def::Result { op, .. }) if g.nodes[op].name == "sdy.propagation_barrier" => {
                v = g.nodes[op].operands[0];
            }
            _ => return g.sharding(m, v),
        }
    }
}

/// `sdy-insert-explicit-reshards` in its minimal mode: unreduced axes that a user does
/// not keep get an all-reduce; function calls get reshards to the callee's argument
/// shardings; a dot may reshard its result instead of an operand.
pub fn insert_explicit_reshards(m: &mut Module) {
    let ms = super::import::meshes(m);
    // Mark every op with its post-order position per function; new ops are not marked.
    let g = Graph::shared(m);
    let mut order: Vec<i128> = Vec::new();
    let mut funcs: Vec<i128> = Vec::new();
    let mut next = 0i128;
    for f in g.nodes[0].children.first().and_then(|r| r.first()).cloned().unwrap_or_default() {
        if g.nodes[f].name != "func.func" {
            continue;
        }
        let mut post = Vec::new();
        fn go(g: &Graph, i: OpIdx, out: &mut Vec<OpIdx>) {
            for r in &g.nodes[i].children {
                for b in r {
                    for &c in b {
                        go(g, c, out);
                    }
                }
            }
            out.push(i);
        }
        go(&g, f, &mut post);
        for i in post {
            g.op_mut(m, i).set_attr("__xr", Attr::Int { value: next, ty: "i64".into() });
            if i == f {
                funcs.push(next);
            } else {
                order.push(next);
            }
            next += 1;
        }
    }
    // One index for the whole pass, rebuilt only after an insertion.
    let mut cache = GraphCache::with_marker(m, "__xr");
    for id in order {
        let Some(i) = cache.find(m, id) else { continue };
        let g = cache.get(m);
        let name = g.nodes[i].name.clone();
        if is_terminator(&name) {
            continue;
        }
        if is_data_flow_op(&name) {
            let (args, results) = super::super::edges::edge_owners(g, i);
            for owner in results.into_iter().chain(args) {
                if cache.find(m, id).is_none() {
                    break;
                }
                let g = cache.get(m);
                let target = g.sharding(m, owner);
                for (user, k) in edge_source_uses(g, owner) {
                    all_reduce_unreduced(m, &mut cache, user, k, target.as_ref(), |_, v| {
                        At::AfterValue(v)
                    });
                }
            }
            continue;
        }
        if name == "func.call" {
            call_reshards(m, &ms, &mut cache, id);
            continue;
        }
        // All-reduces for operands whose unreduced axes the first result drops.
        let nres = g.nodes[i].results.len();
        let unreduced =
            |v: &ValueId| g.sharding_ref(m, *v).is_some_and(|s| !s.unreduced.is_empty());
        if nres > 0 && g.nodes[i].operands.iter().any(unreduced) {
            let target = g.sharding(m, g.nodes[i].results[0]);
            for k in 0..g.nodes[i].operands.len() {
                let Some(i) = cache.find(m, id) else { break };
                all_reduce_unreduced(m, &mut cache, i, k, target.as_ref(), |u, _| At::Before(u));
            }
        }
        if name == "stablehlo.concatenate" {
            if let Some(i) = cache.find(m, id) {
                let g = cache.get(m);
                let n = &g.nodes[i];
                let res = n.results.first().and_then(|&r| g.sharding(m, r));
                if n.operands.iter().any(|&v| g.sharding(m, v) != res) {
                    full_version(m, g, i);
                }
            }
        }
        if matches!(name.as_str(), "stablehlo.dot" | "stablehlo.dot_general") {
            if let Some(i) = cache.find(m, id) {
                process_dot(m, cache.get(m), i);
            }
        }
        if let Some(i) = cache.find(m, id) {
            all_reduces_for_reduction_factors(m, cache.get(m), i);
        }
    }
    // Function returns.
    for fid in funcs {
        let Some(f) = cache.find(m, fid) else { continue };
        let g = cache.get(m);
        let Some(t) = g.terminator(f, 0) else { continue };
        for k in 0..g.nodes[t].operands.len() {
            let Some(f) = cache.find(m, fid) else { break };
            let g = cache.get(m);
            let Some(t) = g.terminator(f, 0) else { break };
            let target = g.func_result_sharding(m, f, k);
            all_reduce_unreduced(m, &mut cache, t, k, target.as_ref(), |u, _| At::Before(u));
        }
    }
    m.top.walk_mut(&mut |op: &mut Op| {
        op.remove_attr("__xr");
    });
}

/// The (user, operand index) uses that are the sources of `owner`'s edge.
fn edge_source_uses(g: &Graph, owner: ValueId) -> Vec<(OpIdx, usize)> {
    let Some(op) = g.owner(owner) else { return Vec::new() };
    let n = &g.nodes[op];
    let term_use = |region: usize, i: usize| -> Option<(OpIdx, usize)> {
        let t = g.terminator(op, region)?;
        (i < g.nodes[t].operands.len()).then_some((t, i))
    };
    match (n.name.as_str(), g.def(owner)) {
        ("stablehlo.while", Some(Def::Result { index, .. })) => {
            [Some((op, index)), term_use(1, index)].into_iter().flatten().collect()
        }
        ("stablehlo.case", Some(Def::Result { index, .. })) => {
            (0..n.children.len()).filter_map(|r| term_use(r, index)).collect()
        }
        ("stablehlo.optimization_barrier", Some(Def::Result { index, .. })) => vec![(op, index)],
        ("sdy.named_computation" | "sdy.manual_computation", Some(Def::Arg { index, .. })) => {
            vec![(op, index)]
        }
        ("sdy.named_computation" | "sdy.manual_computation", Some(Def::Result { index, .. })) => {
            term_use(0, index).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// Full-version reshards of a call's operands to the callee's argument shardings.
fn call_reshards(m: &mut Module, ms: &HashMap<String, Mesh>, cache: &mut GraphCache, id: i128) {
    let Some(i) = cache.find(m, id) else { return };
    let g = cache.get(m);
    let Some(c) = callee(g.op(m, i)) else { return };
    let Some(&cf) = g.funcs.get(&c) else { return };
    let operands = g.nodes[i].operands.clone();
    let targets = match super::import::func_arg_shardings(ms, g.op(m, cf)) {
        Some(l) => l,
        None => {
            let mesh = operands.iter().find_map(|&v| {
                let s = g.sharding(m, v)?;
                let mesh = g.mesh(&s.mesh)?;
                (!(mesh.axes.is_empty() && mesh.device_ids.len() == 1)).then_some(s.mesh)
            });
            let Some(mesh) = mesh else { return };
            operands.iter().map(|&v| replicated_sharding(&mesh, g.ty(m, v).rank(), true)).collect()
        }
    };
    for (k, t) in targets.iter().enumerate() {
        if let Some(i) = cache.find(m, id) {
            all_reduce_unreduced(m, cache, i, k, Some(t), |_, v| At::AfterValue(v));
        }
        let Some(i) = cache.find(m, id) else { return };
        let g = cache.get(m);
        let Some(&v) = g.nodes[i].operands.get(k) else { continue };
        let cur = g.sharding(m, v);
        if super::calls::is_equivalent(cur.as_ref(), Some(t)) {
            continue;
        }
        let ty = m.ty(v).map(str::to_string);
        let nv = m.new_value(ty);
        let mut op = Op::pretty("sdy.reshard", vec![v], vec![nv], Vec::new());
        op.set_prop("sharding", Attr::Sharding(t.clone()));
        set_operand(m, g, i, k, nv);
        insert_at(m, g, At::AfterValue(v), op);
    }
}

/// `processDot`: when the result conflicts with the operands on one factor whose
/// result axes are the contraction's axes, shard the result like the operands and
/// reshard it afterwards.
fn process_dot(m: &mut Module, g: &Graph, i: OpIdx) {
    let Some(Attr::Rule(pr)) = g.op(m, i).attr("sdy.sharding_rule") else { return };
    let Some(rule) = super::super::ops::rule_from_print(pr) else { return };
    if rule.is_custom || rule.operands.len() != 2 || rule.results.len() != 1 {
        return;
    }
    let n = &g.nodes[i];
    let ins: Vec<Option<TensorSharding>> =
        n.operands.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let outs: Vec<Option<TensorSharding>> =
        n.results.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let Some((mesh_ref, mesh)) = common_mesh(g, ins.iter().chain(&outs)) else { return };
    if mesh.axes.is_empty() && mesh.device_ids.len() == 1 {
        return;
    }
    let mut proj = super::super::projection::Projection::build(&ins, &outs, &rule, &mesh, true);
    let elems = |v: ValueId| -> i64 { g.ty(m, v).static_shape().map_or(0, |s| s.iter().product()) };
    let (lhs_size, rhs_size, res_size) =
        (elems(n.operands[0]), elems(n.operands[1]), elems(n.results[0]));
    let mut conflicting: Option<(usize, Vec<AxisRef>)> = None;
    let mut reduction_axes: Vec<AxisRef> = Vec::new();
    let mut seen: Vec<AxisRef> = Vec::new();
    for f in 0..rule.factor_sizes.len() {
        let lhs = proj.operands[0].factor(f).map(|x| x.axes.clone());
        let rhs = proj.operands[1].factor(f).map(|x| x.axes.clone());
        let (operand_axes, max_size) = match (&lhs, &rhs) {
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
            (Some(l), None) => (l.clone(), lhs_size),
            (None, Some(r)) => (r.clone(), rhs_size),
            (None, None) => continue,
        };
        if lhs.is_none() || rhs.is_none() {
            for a in &operand_axes {
                if seen.iter().any(|x| axis::overlaps(x, a)) {
                    return;
                }
                seen.push(a.clone());
            }
        }
        let res_axes = proj.results[0].factor(f).map(|x| x.axes.clone()).unwrap_or_default();
        if res_axes != operand_axes {
            if operand_axes.is_empty() || conflicting.is_some() || res_size > max_size {
                return;
            }
            conflicting = Some((f, operand_axes));
        }
    }
    let Some((f, operand_axes)) = conflicting else { return };
    let res_axes = proj.results[0].factor(f).map(|x| x.axes.clone()).unwrap_or_default();
    if res_axes.is_empty() || res_axes != reduction_axes {
        return;
    }
    if let Some(Some(fs)) = proj.results[0].factors.get_mut(f) {
        fs.axes = operand_axes;
    }
    let new = proj.results[0].to_sharding(&rule.results[0], &rule.factor_sizes, &mesh_ref, &mesh);
    let r = n.results[0];
    g.set_sharding(m, r, new);
    let Some(orig) = outs[0].clone() else { return };
    let ty = m.ty(r).map(str::to_string);
    let nv = m.new_value(ty);
    replace_all_uses_except(m, r, nv, nv);
    let mut op = Op::pretty("sdy.reshard", vec![r], vec![nv], Vec::new());
    op.set_prop("sharding", Attr::Sharding(orig));
    insert_at(m, g, At::After(i), op);
}

fn common_mesh<'a>(
    g: &Graph,
    shardings: impl Iterator<Item = &'a Option<TensorSharding>>,
) -> Option<(MeshRef, Mesh)> {
    let mut chosen: Option<(MeshRef, Mesh)> = None;
    for s in shardings.flatten() {
        let Some(other) = g.mesh(&s.mesh) else { continue };
        match &chosen {
            None => chosen = Some((s.mesh.clone(), other)),
            Some((_, cur)) if cur.axes.is_empty() && cur.device_ids.is_empty() => {
                chosen = Some((s.mesh.clone(), other))
            }
            Some((_, cur)) => {
                if other.axes.is_empty() && other.device_ids.is_empty() {
                    continue;
                }
                if other.axes != cur.axes {
                    return None;
                }
            }
        }
    }
    chosen
}

/// `insertAllReducesForReductionFactors` (minimal mode): when the result has unreduced
/// axes, the axes of the reduction factors that are not unreduced get all-reduced.
fn all_reduces_for_reduction_factors(m: &mut Module, g: &Graph, i: OpIdx) {
    let n = &g.nodes[i];
    let Some(&r0) = n.results.first() else { return };
    let Some(res_sharding) = g.sharding_ref(m, r0) else { return };
    if res_sharding.unreduced.is_empty() {
        return;
    }
    let Some(Attr::Rule(pr)) = g.op(m, i).attr("sdy.sharding_rule") else { return };
    let Some(rule) = super::super::ops::rule_from_print(pr) else { return };
    let ins: Vec<Option<TensorSharding>> =
        n.operands.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let outs: Vec<Option<TensorSharding>> =
        n.results.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let Some((mesh_ref, mesh)) = common_mesh(g, ins.iter().chain(&outs)) else { return };
    let proj = super::super::projection::Projection::build(&ins, &outs, &rule, &mesh, true);
    let mut axes: Vec<AxisRef> = Vec::new();
    for &f in &rule.reduction {
        let mut common: Option<Vec<AxisRef>> = None;
        for t in proj.tensors() {
            if let Some(fs) = t.factor(f) {
                match &common {
                    None => common = Some(fs.axes.clone()),
                    Some(c) if *c != fs.axes => return,
                    _ => {}
                }
            }
        }
        axes.extend(common.unwrap_or_default());
    }
    let mut all = super::import::axis_set_diff(&axes, &res_sharding.unreduced, &mesh);
    if all.is_empty() {
        return;
    }
    axis::sort_and_merge(&mut all, &mesh);
    let results = n.results.clone();
    let mut at = i;
    for r in results {
        let g2 = Graph::shared(m);
        let s = g2
            .sharding(m, r)
            .unwrap_or_else(|| replicated_sharding(&mesh_ref, g2.ty(m, r).rank(), true));
        let ty = m.ty(r).map(str::to_string);
        let nv = m.new_value(ty);
        replace_all_uses_except(m, r, nv, nv);
        let mut op = Op::pretty("sdy.all_reduce", vec![r], vec![nv], Vec::new());
        op.set_prop("reduction_axes", Attr::AxisList(all.clone()));
        op.set_prop("out_sharding", Attr::Sharding(s));
        let g3 = Graph::shared(m);
        let idx = (1..g3.nodes.len()).find(|&j| g3.nodes[j].results.contains(&r)).unwrap_or(at);
        insert_at(m, &g3, At::After(idx), op);
        at = idx;
    }
}

/// The full version of explicit reshards on op `i`: operands and results whose
/// factor shardings differ from the common ones are resharded.
fn full_version(m: &mut Module, g: &Graph, i: OpIdx) {
    let Some(Attr::Rule(pr)) = g.op(m, i).attr("sdy.sharding_rule") else { return };
    let Some(rule) = super::super::ops::rule_from_print(pr) else { return };
    if rule.is_custom {
        return;
    }
    let n = g.nodes[i].clone();
    if rule.operands.len() != n.operands.len() || rule.results.len() != n.results.len() {
        return;
    }
    let ins: Vec<Option<TensorSharding>> =
        n.operands.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let outs: Vec<Option<TensorSharding>> =
        n.results.iter().map(|&v| sharding_bypassing_barriers(m, g, v)).collect();
    let Some((mesh_ref, mesh)) = common_mesh(g, ins.iter().chain(&outs)) else { return };
    if mesh.axes.is_empty() && mesh.device_ids.len() == 1 {
        return;
    }
    let key = g.op(m, i).attr("__xr").cloned();
    if key.is_none() {
        return;
    }
    let locate = |m: &Module, g2: &Graph| {
        (1..g2.nodes.len()).find(|&j| g2.op(m, j).attr("__xr") == key.as_ref())
    };
    let mut proj = super::super::projection::Projection::build(&ins, &outs, &rule, &mesh, true);
    let sizes: Vec<i64> = n
        .operands
        .iter()
        .chain(&n.results)
        .map(|&v| g.ty(m, v).static_shape().map_or(0, |s| s.iter().product()))
        .collect();
    let common = super::full::find_common_axes(&proj, &rule, &sizes, &mesh);
    let (ops_upd, res_upd) = super::full::update_projection(&mut proj, &common);
    // Operands: reshards right before the op, in order.
    let mut k_inserted = 0;
    for (k, &upd) in ops_upd.iter().enumerate() {
        if !upd {
            continue;
        }
        let g2 = Graph::shared(m);
        let Some(j) = locate(m, &g2) else { return };
        let v = g2.nodes[j].operands[k];
        let s =
            proj.operands[k].to_sharding(&rule.operands[k], &rule.factor_sizes, &mesh_ref, &mesh);
        let ty = m.ty(v).map(str::to_string);
        let nv = m.new_value(ty);
        let mut op = Op::pretty("sdy.reshard", vec![v], vec![nv], Vec::new());
        op.set_prop("sharding", Attr::Sharding(s));
        set_operand(m, &g2, j, k, nv);
        insert_at(m, &g2, At::Before(j), op);
        k_inserted += 1;
    }
    let _ = k_inserted;
    // Results: the result takes the common sharding, a reshard restores the old one.
    let mut after = 0usize;
    for (k, &upd) in res_upd.iter().enumerate() {
        if !upd {
            continue;
        }
        let g2 = Graph::shared(m);
        let Some(j) = locate(m, &g2) else { return };
        let r = g2.nodes[j].results[k];
        let old = g2
            .sharding(m, r)
            .unwrap_or_else(|| replicated_sharding(&mesh_ref, g2.ty(m, r).rank(), true));
        let new =
            proj.results[k].to_sharding(&rule.results[k], &rule.factor_sizes, &mesh_ref, &mesh);
        let ty = m.ty(r).map(str::to_string);
        let nv = m.new_value(ty);
        replace_all_uses_except(m, r, nv, nv);
        let mut op = Op::pretty("sdy.reshard", vec![r], vec![nv], Vec::new());
        op.set_prop("sharding", Attr::Sharding(old));
        g2.set_sharding(m, r, new);
        let (last, parent) = g2.nodes[j].path.split_last().expect("non-root");
        super::super::edges::insert_op(m, parent, last.0, last.1, last.2 + 1 + after, op);
        after += 1;
    }
}
