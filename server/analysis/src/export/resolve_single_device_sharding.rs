//! `sdy-resolve-single-device-sharding`: an op whose results are placed on one device
//! (a maximal mesh `<[], device_ids=[d]>`) runs inside a `stablehlo.if` taken only on
//! device `d`; the other devices produce zeros (or fresh tokens), and an all-reduce
//! over the global mesh's axes gives every device the value.

use super::hlo_ops::{
    compare, const_i64, constant, device_id, op, remove_defining, splice_op, zero_of,
};
use crate::ir::attr::NamedAttr;
use crate::ir::OpKind;
use crate::ir::{Attr, Block, Module, Op, Region, Syntax, ValueId};
use crate::propagation::edges::post_order;
use crate::propagation::graph::{Def, Graph, OpIdx, ValueType};
use crate::propagation::irutil::clone_op;
use crate::sharding::{AxisRef, Mesh, TensorSharding};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

pub fn resolve_single_device_sharding(m: &mut Module, replica_count: i64) {
    let Some((global, global_mesh)) = global_mesh(m) else { return };
    // Each rewrite removes the op it resolves, and the ops it adds are not
    // single-device ones: the first remaining one is the next to do.
    let budget = m.values.len();
    for _ in 0..budget {
        let g = Graph::build(m);
        let Some(i) = post_order(&g).into_iter().find(|&i| is_single_device_op(m, &g, i)) else {
            return;
        };
        resolve(m, &g, i, &global, &global_mesh, replica_count);
    }
}

/// The first mesh of the module with axes that is not maximal (`getGlobalMeshOp`).
fn global_mesh(m: &Module) -> Option<(String, Mesh)> {
    m.body().iter().find_map(|op| match (op.prop("sym_name"), op.prop("mesh")) {
        (Some(Attr::Str(n)), Some(Attr::Mesh(mesh)))
            if op.kind == OpKind::SdyMesh && !mesh.axes.is_empty() =>
        {
            Some((String::from_utf8_lossy(n).into_owned(), mesh.clone()))
        }
        _ => None,
    })
}

fn single_device_id(g: &Graph, s: &TensorSharding) -> Option<i64> {
    let mesh = g.mesh_ref(&s.mesh)?;
    match (&mesh.axes[..], &mesh.device_ids[..]) {
        ([], [d]) => Some(*d),
        _ => None,
    }
}

/// The device of an op (not an sdy op) with a result sharded on a maximal mesh.
fn target_device(m: &Module, g: &Graph, i: OpIdx) -> Option<i64> {
    g.node(i)
        .results
        .iter()
        .filter(|&&r| matches!(g.ty(m, r), ValueType::Ranked(_)))
        .filter_map(|&r| g.sharding_ref(m, r))
        .find_map(|s| single_device_id(g, &s))
}

fn is_single_device_op(m: &Module, g: &Graph, i: OpIdx) -> bool {
    !g.name(i).starts_with("sdy.") && target_device(m, g, i).is_some()
}

fn is_single_device_reshard(m: &Module, g: &Graph, v: ValueId) -> Option<ValueId> {
    let Some(Def::Result { op, .. }) = g.def(v) else { return None };
    if g.name(op) != "sdy.reshard" {
        return None;
    }
    let s = g.sharding_ref(m, v)?;
    single_device_id(g, &s)?;
    g.node(op).operands.first().copied()
}

fn resolve(m: &mut Module, g: &Graph, i: OpIdx, global: &str, mesh: &Mesh, replica_count: i64) {
    let Some(device) = target_device(m, g, i) else { return };
    let original = g.op(m, i).clone();
    let mut new_ops = Vec::new();
    let id = device_id(m, replica_count, &mut new_ops);
    let (c, target) = const_i64(m, device);
    new_ops.push(c);
    let (cmp, pred) = compare(m, "EQ", id, target, "tensor<i64>");
    new_ops.push(cmp);

    // True branch: the op itself, reading around single-device reshards.
    let mut clone = clone_op(m, &original, &mut HashMap::default());
    clone.remove_attr("sdy.sharding");
    let mut bypassed: HashSet<ValueId> = HashSet::default();
    for v in clone.operands.iter_mut() {
        if let Some(input) = is_single_device_reshard(m, g, *v) {
            bypassed.insert(*v);
            *v = input;
        }
    }
    let ret = Op::pretty("stablehlo.return", clone.results.clone(), Vec::new(), Vec::new());
    let then_block = Block { args: Vec::new(), ops: vec![clone, ret] };

    // False branch: zeros and tokens.
    let mut else_ops = Vec::new();
    let mut zeros = Vec::new();
    for &r in &original.results {
        let ty = m.ty(r).unwrap_or("").to_string();
        if matches!(ValueType::parse(&ty), ValueType::Ranked(_)) {
            let (c, z) = constant(m, &zero_of(&ty), &ty);
            else_ops.push(c);
            zeros.push(z);
        } else if ty == "!stablehlo.token" {
            let (t, z) = op(m, "stablehlo.create_token", Vec::new(), &ty);
            else_ops.push(t);
            zeros.push(z);
        }
    }
    else_ops.push(Op::pretty("stablehlo.return", zeros, Vec::new(), Vec::new()));

    let if_results: Vec<ValueId> =
        original.results.iter().map(|&r| m.new_value(m.ty(r).map(str::to_string))).collect();
    let mut if_op = Op::pretty("stablehlo.if", vec![pred], if_results.clone(), Vec::new());
    if_op.syntax = Syntax::Generic;
    if_op.regions = vec![
        Region { blocks: vec![then_block] },
        Region { blocks: vec![Block { args: Vec::new(), ops: else_ops }] },
    ];
    new_ops.push(if_op);

    // After the if: all-reduce the ranked results over the global mesh.
    let axes: Vec<AxisRef> = mesh.axes.iter().map(|(n, _)| AxisRef::full(n.as_str())).collect();
    let mut replace: Vec<(ValueId, ValueId)> = Vec::new();
    let mut dead: HashSet<ValueId> = HashSet::default();
    for (&r, &ir) in original.results.iter().zip(&if_results) {
        let ValueType::Ranked(dims) = g.ty(m, r) else {
            replace.push((r, ir));
            continue;
        };
        let replicated = TensorSharding::replicated(global, dims.len(), false);
        let ty = m.ty(r).unwrap_or("").to_string();
        let (mut ar, arv) = op(m, "sdy.all_reduce", vec![ir], &ty);
        ar.props = vec![
            NamedAttr::new("reduction_axes", Attr::AxisList(axes.clone())),
            NamedAttr::new("out_sharding", Attr::Sharding(replicated.clone())),
        ];
        new_ops.push(ar);
        for &(user, _) in g.uses(r) {
            let u = g.node(user);
            if u.kind == OpKind::SdyReshard
                && g.op(m, user).prop("sharding") == Some(&Attr::Sharding(replicated.clone()))
            {
                if let Some(&out) = u.results.first() {
                    replace.push((out, arv));
                    dead.insert(out);
                }
            }
        }
        replace.push((r, arv));
    }
    // Reshards only the op read become dead.
    for v in bypassed {
        if g.uses(v).iter().all(|&(u, _)| u == i) {
            dead.insert(v);
        }
    }
    let first = original.results.first().copied();
    splice_op(m, first, new_ops);
    for (from, to) in replace {
        m.top.replace_uses(from, to);
    }
    remove_defining(m, &dead);
}
