//! `sdy-remove-all-gather-reduce-scatter-for-cmv1`: a dot whose operand is an
//! `sdy.all_gather` used only there reads the gather's input instead; otherwise a dot
//! whose only use is an `sdy.reduce_scatter` (and whose result has no unreduced axes)
//! takes the scatter's sharding and the scatter goes away.

use crate::ir::OpKind;
use crate::ir::{Attr, Module, ValueId};
use crate::propagation::graph::{remove_ops, Def, Graph, Path};

pub fn remove_ag_rs_for_cmv1(m: &mut Module) {
    let g = Graph::build(m);
    // (op to remove, its result, the value that replaces it)
    let mut removed: Vec<(Path, ValueId, ValueId)> = Vec::new();
    let mut resharded = Vec::new();
    for i in g.pre_order() {
        let n = g.node(i);
        if !matches!(n.name.as_str(), "stablehlo.dot" | "stablehlo.dot_general") {
            continue;
        }
        let mut gathered = false;
        for &v in &n.operands {
            let Some(Def::Result { op, .. }) = g.def(v) else { continue };
            let ag = g.node(op);
            if ag.kind == OpKind::SdyAllGather && uses_of_op(&g, op) == 1 {
                if let Some(&input) = ag.operands.first() {
                    removed.push((ag.path.clone(), v, input));
                }
                gathered = true;
            }
        }
        if gathered || uses_of_op(&g, i) != 1 {
            continue;
        }
        let Some((user, _)) = n.results.iter().flat_map(|&r| g.live_uses(r)).next() else {
            continue;
        };
        let rs = g.node(user);
        let no_unreduced = n
            .results
            .first()
            .is_none_or(|&r| g.sharding_ref(m, r).is_none_or(|s| s.unreduced.is_empty()));
        if rs.kind == OpKind::SdyReduceScatter && no_unreduced {
            if let (Some(s), Some(&out), Some(&input)) = (
                rs.results.first().and_then(|&r| g.sharding(m, r)),
                rs.results.first(),
                rs.operands.first(),
            ) {
                resharded.push((i, s));
                removed.push((rs.path.clone(), out, input));
            }
        }
    }
    for (i, s) in resharded {
        g.op_mut(m, i).set_attr("sdy.sharding", Attr::PerValue(vec![s]));
    }
    for (_, from, to) in &removed {
        m.top.replace_uses(*from, *to);
    }
    remove_ops(m, removed.into_iter().map(|(p, _, _)| p));
}

/// The uses of all results of op `i` (MLIR's `hasOneUse` counts them together).
fn uses_of_op(g: &Graph, i: usize) -> usize {
    g.node(i).results.iter().map(|&r| g.live_uses(r).count()).sum()
}
