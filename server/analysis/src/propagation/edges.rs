//! `-sdy-add-data-flow-edges`, `-sdy-sink-data-flow-edges` and
//! `-sdy-apply-sharding-constraints`: structural passes around propagation.

use super::graph::*;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, ValueId};
use crate::sharding::TensorSharding;
use rustc_hash::FxHashMap as HashMap;

/// Ops in post-order (children before parents), not including the module.
pub fn post_order(g: &Graph) -> Vec<OpIdx> {
    let mut out = g.post_order_from(0);
    out.pop();
    out
}

/// Inserts `op` at index `at` of block (`region`, `block`) of the op at `parent`.
pub fn insert_op(
    m: &mut Module,
    parent: &[(usize, usize, usize)],
    region: usize,
    block: usize,
    at: usize,
    op: Op,
) {
    let p = op_at_path_mut(m, parent);
    let ops = &mut p.regions[region].blocks[block].ops;
    let at = at.min(ops.len());
    ops.insert(at, op);
}

/// Replaces every use of `from` by `to` in the module, except in ops whose results
/// include `except_result`.
pub fn replace_all_uses_except(m: &mut Module, from: ValueId, to: ValueId, except_result: ValueId) {
    m.top.walk_mut(&mut |op: &mut Op| {
        if op.results.contains(&except_result) {
            return;
        }
        for v in &mut op.operands {
            if *v == from {
                *v = to;
            }
        }
    });
}

/// Replaces every use of a key of `map` by its value (followed through the map).
pub fn replace_uses_through(m: &mut Module, map: &HashMap<ValueId, ValueId>) {
    if map.is_empty() {
        return;
    }
    let resolve = |mut v: ValueId| {
        for _ in 0..map.len() {
            match map.get(&v) {
                Some(&t) if t != v => v = t,
                _ => break,
            }
        }
        v
    };
    m.top.walk_mut(&mut |op: &mut Op| {
        for v in &mut op.operands {
            *v = resolve(*v);
        }
    });
}

/// Where to insert right after `v`'s definition: (parent path, region, block, index).
pub fn insertion_after(g: &Graph, v: ValueId) -> Option<InsertPoint> {
    match g.def(v)? {
        Def::Result { op, .. } => point_after(&g.path_of(op)),
        Def::Arg { op, region, block, .. } => Some((g.path_of(op).into_owned(), region, block, 0)),
    }
}

/// The edge owners of a data-flow op: (block-argument owners, result owners).
pub fn edge_owners(g: &Graph, i: OpIdx) -> (Vec<ValueId>, Vec<ValueId>) {
    let n = &g.nodes[i];
    let args = match n.name.as_str() {
        "sdy.manual_computation" | "sdy.named_computation" => {
            n.args.first().and_then(|r| r.first()).cloned().unwrap_or_default()
        }
        _ => Vec::new(),
    };
    (args, n.results.to_vec())
}

/// `-sdy-add-data-flow-edges`.
pub fn add_data_flow_edges(m: &mut Module) {
    let g0 = Graph::shared(m);
    // Data-flow ops in post-order, identified by their owners (stable across edits).
    let mut work: Vec<(Vec<ValueId>, Vec<ValueId>)> = Vec::new();
    for i in post_order(&g0) {
        if g0.nodes[i].kind.is_data_flow_op() {
            work.push(edge_owners(&g0, i));
        }
    }
    add_edges_for(m, work);
}

/// Adds the edges of each (block-argument owners, result owners) pair, in order.
///
/// Equivalent to adding them one at a time (each edge right after its input, taking
/// every other use of it), computed on one index: the edges of different owners do not
/// see each other, so all uses are rewired in one walk and the edges inserted at the
/// end, the later of two edges at the same place first (as repeated insertion at the
/// same index leaves them).
pub fn add_edges_for(m: &mut Module, work: Vec<(Vec<ValueId>, Vec<ValueId>)>) {
    let g = Graph::shared(m);
    let mut inserts: Vec<(InsertPoint, Op)> = Vec::new();
    let mut replace: HashMap<ValueId, ValueId> = HashMap::default();
    for (args, results) in work {
        for owners in [args, results] {
            for &owner in owners.iter().rev() {
                if g.ty(m, owner).static_shape().is_none() {
                    continue;
                }
                let sharding = g.sharding(m, owner);
                let ty = m.ty(owner).map(str::to_string);
                let nv = m.new_value(ty);
                replace.insert(owner, nv);
                let mut op = Op::pretty("sdy.data_flow_edge", vec![owner], vec![nv], Vec::new());
                if let Some(s) = sharding {
                    op.set_prop("sharding", Attr::Sharding(s));
                }
                if let Some(at) = insertion_after(&g, owner) {
                    inserts.push((at, op));
                }
            }
        }
    }
    if replace.is_empty() {
        return;
    }
    m.top.walk_mut(&mut |op: &mut Op| {
        for v in &mut op.operands {
            if let Some(t) = replace.get(v) {
                *v = *t;
            }
        }
    });
    inserts.reverse();
    insert_all(m, inserts);
}

/// Inserts ops at points of the current module (indices of its blocks as they are
/// now); ops for the same point keep their order in `inserts`.
pub fn insert_all(m: &mut Module, inserts: Vec<(InsertPoint, Op)>) {
    let mut by_block: HashMap<(Path, usize, usize), Vec<(usize, Op)>> = HashMap::default();
    for ((parent, r, b, at), op) in inserts {
        by_block.entry((parent, r, b)).or_default().push((at, op));
    }
    let mut blocks: Vec<_> = by_block.into_iter().collect();
    // Deepest first: an insertion shifts later ops of its block, never the blocks above.
    blocks.sort_by(|a, b| b.0 .0.len().cmp(&a.0 .0.len()).then_with(|| a.0.cmp(&b.0)));
    for ((parent, r, b), mut list) in blocks {
        list.sort_by_key(|(at, _)| *at); // stable: keeps the order per point
        let block = &mut op_at_path_mut(m, &parent).regions[r].blocks[b];
        let old = std::mem::take(&mut block.ops);
        let mut ops = Vec::with_capacity(old.len() + list.len());
        let mut pending = list.into_iter().peekable();
        for (i, op) in old.into_iter().enumerate() {
            while pending.peek().is_some_and(|(at, _)| *at <= i) {
                if let Some((_, new)) = pending.next() {
                    ops.push(new);
                }
            }
            ops.push(op);
        }
        ops.extend(pending.map(|(_, new)| new));
        block.ops = ops;
    }
}

/// `-sdy-sink-data-flow-edges`: each data-flow op takes the shardings of its edges,
/// and the edges are removed. `origins`/`edges`: the sink debug options.
pub fn sink_data_flow_edges(m: &mut Module, origins: bool, edges_debug: bool) {
    let g = Graph::shared(m);
    for i in g.pre_order() {
        if !g.nodes[i].kind.is_data_flow_op() {
            continue;
        }
        let (args, results) = edge_owners(&g, i);
        let is_manual = g.nodes[i].kind == OpKind::SdyManualComputation;
        let is_named = g.nodes[i].kind == OpKind::SdyNamedComputation;
        for (kind, owners) in [(0, &args), (1, &results)] {
            if let Some(list) = shardings_from_edges(m, &g, owners) {
                let op = g.op_mut(m, i);
                match (kind, is_manual || is_named) {
                    (0, true) => {
                        let list = if is_manual {
                            let axes = manual_axes(op);
                            let outer = per_value(op.prop("in_shardings")).unwrap_or_default();
                            list.iter()
                                .enumerate()
                                .map(|(k, s)| match outer.get(k) {
                                    Some(o) => add_free_axes(o, s, &axes),
                                    None => s.clone(),
                                })
                                .collect()
                        } else {
                            list
                        };
                        op.set_prop("in_shardings", Attr::PerValue(list));
                    }
                    (1, true) => op.set_prop("out_shardings", Attr::PerValue(list)),
                    (1, false) => op.set_attr("sdy.sharding", Attr::PerValue(list)),
                    _ => {}
                }
            }
            if origins || edges_debug {
                super::origins::sink_debug_info(m, &g, i, owners, kind == 0, origins, edges_debug);
            }
        }
    }
    // Remove the edges: their uses take the edge's input.
    let mut removals: Vec<(Path, ValueId, ValueId)> = Vec::new();
    for i in g.pre_order() {
        if g.nodes[i].kind == OpKind::SdyDataFlowEdge {
            if let (Some(&input), Some(&res)) =
                (g.nodes[i].operands.first(), g.nodes[i].results.first())
            {
                removals.push((g.nodes[i].path.clone(), input, res));
            }
        }
    }
    let map: HashMap<ValueId, ValueId> = removals.iter().map(|(_, i, r)| (*r, *i)).collect();
    replace_uses_through(m, &map);
    remove_ops(m, removals.into_iter().map(|(path, _, _)| path));
}

/// `getShardingsFromDataFlowEdges`: the edges' shardings (fully open for owners
/// without one), or `None` when no edge has a sharding.
fn shardings_from_edges(m: &Module, g: &Graph, owners: &[ValueId]) -> Option<Vec<TensorSharding>> {
    let mut out: Vec<Option<TensorSharding>> = Vec::new();
    let mut mesh = None;
    for &o in owners {
        let s = g.edge_user(o).and_then(|e| sharding_of(g.op(m, e).prop("sharding")));
        if mesh.is_none() {
            mesh = s.as_ref().map(|s| s.mesh.clone());
        }
        out.push(s);
    }
    let mesh = mesh?;
    Some(
        out.into_iter()
            .zip(owners)
            .map(|(s, &o)| s.unwrap_or_else(|| open_sharding(&mesh, g.ty(m, o).rank())))
            .collect(),
    )
}
