//! Uses resharded to a target sharding (Shardy's
//! `insertExplicitReshardsToTargetSharding`): the sources of data-flow edges to the
//! edge owner's sharding, call operands to the callee's arguments', returned values
//! to the function's results'.

use super::rewrite::{reshard_props, Cursor, OpKey, Rewriter};
use super::unreduced::{all_reduce_if_unreduced_to_replicated, insert_unreduced_collectives};
use crate::ir::OpKind;
use crate::ir::ValueId;
use crate::propagation::edges::edge_owners;
use crate::propagation::graph::{
    add_free_axes, erase_manual_axes, manual_axes, per_value_at, replicated_sharding, Def, Graph,
    OpIdx,
};
use crate::propagation::irutil::callee;
use crate::propagation::pipeline::calls::{fully_closed_like, is_equivalent};
use crate::sharding::TensorSharding;

/// Reshards operand `k` of op `key` to `target` at `at` (after the operand's
/// definition, or before the op): first all-reduces of unreduced axes the target
/// drops, unreduced collectives for those it adds, then (full version) a reshard.
pub fn reshard_to_target(
    rw: &mut Rewriter,
    key: OpKey,
    k: usize,
    target: Option<&TensorSharding>,
    mut at: Cursor,
    full: bool,
) {
    let Some(v) = rw.operand(key, k) else { return };
    let mut current = rw.sharding(v);
    if let Some(s) = current {
        current = Some(all_reduce_if_unreduced_to_replicated(rw, key, k, s, target, &mut at));
    }
    if let Some(s) = insert_unreduced_collectives(rw, key, k, target, &mut at) {
        current = Some(s);
    }
    if !full || is_equivalent(current.as_ref(), target) {
        return;
    }
    let Some(s) = target.cloned().or_else(|| current.as_ref().map(fully_closed_like)) else {
        return;
    };
    rw.insert_on_operand(key, k, &mut at, "sdy.reshard", reshard_props(s));
}

/// The same, inserted right after the operand's definition.
fn reshard_after_operand(
    rw: &mut Rewriter,
    key: OpKey,
    k: usize,
    target: Option<&TensorSharding>,
    full: bool,
) {
    let Some(v) = rw.operand(key, k) else { return };
    let Some(at) = rw.after_value(v) else { return };
    reshard_to_target(rw, key, k, target, at, full);
}

/// `transformTargetSharding(kBeforeEdgePropagation)` of the owner's sharding: a
/// manual computation's block argument gets the manual axes back, its result loses
/// them.
fn owner_target(
    g: &Graph,
    m: &crate::ir::Module,
    op: OpIdx,
    owner: ValueId,
) -> Option<TensorSharding> {
    let s = g.sharding(m, owner)?;
    let o = g.op(m, op);
    if o.kind != OpKind::SdyManualComputation {
        return Some(s);
    }
    let axes = manual_axes(o);
    match g.def(owner)? {
        Def::Arg { index, .. } => {
            Some(add_free_axes(&per_value_at(o.prop("in_shardings"), index)?, &s, &axes))
        }
        Def::Result { .. } => Some(erase_manual_axes(&s, &axes)),
    }
}

/// The (user, operand index) uses that are the sources of `owner`'s edge.
fn edge_sources(g: &Graph, op: OpIdx, owner: ValueId) -> Vec<(OpIdx, usize)> {
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

/// A data-flow op: every edge's sources are resharded to the edge owner's sharding
/// (result owners first, then block-argument owners).
pub fn data_flow_op(rw: &mut Rewriter, key: OpKey, full: bool) {
    let Some(i) = rw.find(key) else { return };
    let (args, results) = edge_owners(&rw.graph(), i);
    for owner in results.into_iter().chain(args) {
        let Some(i) = rw.find(key) else { return };
        let g = rw.graph();
        let target = owner_target(&g, rw.m, i, owner);
        let sources: Vec<(OpKey, usize)> = edge_sources(&g, i, owner)
            .into_iter()
            .filter_map(|(u, k)| Some((rw.key_of(&g, u)?, k)))
            .collect();
        drop(g);
        for (user, k) in sources {
            reshard_after_operand(rw, user, k, target.as_ref(), full);
        }
    }
}

/// A call: its operands are resharded to the callee's argument shardings (fully
/// replicated ones when the callee has none but an operand is sharded).
pub fn call_op(rw: &mut Rewriter, key: OpKey, full: bool) {
    let Some(i) = rw.find(key) else { return };
    let g = rw.graph();
    let Some(c) = callee(g.op(rw.m, i)) else { return };
    let Some(&f) = g.funcs.get(&c) else { return };
    let operands = g.nodes[i].operands.to_vec();
    let ms = crate::propagation::pipeline::import::meshes(rw.m);
    let targets = match crate::propagation::pipeline::import::func_arg_shardings(&ms, g.op(rw.m, f))
    {
        Some(l) => l,
        None => {
            let mesh = operands.iter().find_map(|&v| {
                let s = g.sharding_ref(rw.m, v)?;
                let mesh = g.mesh_ref(&s.mesh)?;
                (!super::mesh::is_maximal(mesh)).then(|| s.mesh.clone())
            });
            let Some(mesh) = mesh else { return };
            operands
                .iter()
                .map(|&v| replicated_sharding(&mesh, g.ty(rw.m, v).rank(), true))
                .collect()
        }
    };
    drop(g);
    for (k, t) in targets.iter().enumerate() {
        reshard_after_operand(rw, key, k, Some(t), full);
    }
}

/// The function's return: returned values are resharded, right before it, to the
/// function's result shardings.
pub fn func_return(rw: &mut Rewriter, func: OpKey, full: bool) {
    let Some(f) = rw.find(func) else { return };
    let g = rw.graph();
    let Some(t) = g.terminator(f, 0) else { return };
    let Some(term) = rw.key_of(&g, t) else { return };
    let n = g.nodes[t].operands.len();
    drop(g);
    for k in 0..n {
        let target = {
            let Some(f) = rw.find(func) else { return };
            rw.graph().func_result_sharding(rw.m, f, k)
        };
        let Some(at) = rw.before(term) else { return };
        reshard_to_target(rw, term, k, target.as_ref(), at, full);
    }
}
