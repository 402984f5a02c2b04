//! `-sdy-apply-sharding-constraints`: a fully closed sharding constraint (or a manual
//! computation's in-sharding) whose input has no sharding gives the input its sharding
//! (or, for data-flow edge targets, is moved right after the input and takes all its
//! uses); chains of constraints take over the later uses of the chain's input.

use super::edges::{insert_op, insertion_after, post_order, replace_all_uses_except};
use super::graph::*;
use crate::ir::OpKind;
use crate::ir::{Attr, Module, Op, ValueId};
use crate::sharding::TensorSharding;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    /// A sharding constraint, by its result.
    Constraint(ValueId),
    /// A manual computation, by its first result or first block argument.
    Manual(ValueId),
}

fn find(g: &Graph, t: Target) -> Option<OpIdx> {
    match t {
        Target::Constraint(v) => match g.def(v)? {
            Def::Result { op, .. } => Some(op),
            _ => None,
        },
        Target::Manual(v) => g.owner(v),
    }
}

fn is_constraint_user(g: &Graph, n: OpIdx) -> bool {
    matches!(g.nodes[n].name.as_str(), "sdy.sharding_constraint" | "sdy.manual_computation")
}

fn used_by_constraint_with_different_sharding(
    m: &Module,
    g: &Graph,
    input: ValueId,
    s: &TensorSharding,
) -> bool {
    g.live_uses(input).any(|(u, i)| match g.nodes[u].name.as_str() {
        "sdy.sharding_constraint" => sharding_of(g.op(m, u).prop("sharding")).as_ref() != Some(s),
        "sdy.manual_computation" => {
            per_value(g.op(m, u).prop("in_shardings")).and_then(|l| l.get(i).cloned()).as_ref()
                != Some(s)
        }
        _ => false,
    })
}

fn used_by_constraint(g: &Graph, input: ValueId, excluded: Option<OpIdx>) -> bool {
    g.live_uses(input).any(|(u, _)| Some(u) != excluded && is_constraint_user(g, u))
}

fn should_apply(m: &Module, g: &Graph, input: ValueId, s: &TensorSharding) -> bool {
    if g.shardable_value(input).is_none() || g.sharding(m, input).is_some() {
        return false;
    }
    if s.dims.iter().any(|d| d.open) {
        return false;
    }
    !used_by_constraint_with_different_sharding(m, g, input, s)
}

/// The tail of the constraint chain starting at `head`, if the chain qualifies.
fn chain_tail(m: &Module, g: &Graph, head: OpIdx) -> Option<OpIdx> {
    let input = *g.nodes[head].operands.first()?;
    if let Some(Def::Result { op, .. }) = g.def(input) {
        if g.nodes[op].kind == OpKind::SdyShardingConstraint {
            return None;
        }
    }
    if g.sharding(m, input).is_some() || used_by_constraint(g, input, Some(head)) {
        return None;
    }
    let mut tail = head;
    loop {
        let r = g.nodes[tail].results[0];
        let uses: Vec<(OpIdx, usize)> = g.live_uses(r).collect();
        if uses.len() == 1 && g.nodes[uses[0].0].name == "sdy.sharding_constraint" {
            tail = uses[0].0;
        } else {
            break;
        }
    }
    if tail == head || used_by_constraint(g, g.nodes[tail].results[0], None) {
        return None;
    }
    Some(tail)
}

/// Events of applying constraints (for the debug options): the op, and the input that
/// got the constraint's sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The constraint's result, or the manual computation's block argument.
    pub source: ValueId,
    pub input: ValueId,
    pub operand_index: usize,
    pub sharding: TensorSharding,
    pub manual: bool,
}

/// Runs the pass; returns the inputs that took a sharding directly.
pub fn apply_sharding_constraints(m: &mut Module) -> Vec<Applied> {
    apply_sharding_constraints_debug(m, None)
}

/// The pass, recording each applied constraint as a propagation step in `debug`.
pub fn apply_sharding_constraints_debug(
    m: &mut Module,
    mut debug: Option<&mut super::origins::Debug>,
) -> Vec<Applied> {
    let g0 = Graph::shared(m);
    let mut targets = Vec::new();
    for i in post_order(&g0) {
        let n = &g0.nodes[i];
        match n.name.as_str() {
            "sdy.sharding_constraint" => {
                if let Some(&r) = n.results.first() {
                    targets.push(Target::Constraint(r));
                }
            }
            "sdy.manual_computation" => {
                let key = n.results.first().copied().or_else(|| {
                    n.args.first().and_then(|r| r.first()).and_then(|b| b.first()).copied()
                });
                if let Some(k) = key {
                    targets.push(Target::Manual(k));
                }
            }
            _ => {}
        }
    }
    let mut applied = Vec::new();
    // One index, rebuilt only after a structural edit (see `GraphCache`).
    let mut cache = GraphCache::new(m);
    for t in targets {
        let g = cache.get(m);
        let Some(op) = find(g, t) else { continue };
        match t {
            Target::Constraint(result) => {
                if let Some(tail) = chain_tail(m, g, op) {
                    let input = g.nodes[op].operands[0];
                    let tail_result = g.nodes[tail].results[0];
                    let tail_path = g.nodes[tail].path.clone();
                    let (tl, tparent) = tail_path.split_last().expect("non-root");
                    let uses: Vec<(OpIdx, usize)> = g.live_uses(input).collect();
                    let mut rewired = false;
                    for (u, _) in uses {
                        if u == op || g.nodes[u].kind == OpKind::FuncReturn {
                            continue;
                        }
                        let up = &g.nodes[u].path;
                        let (ul, uparent) = up.split_last().expect("non-root");
                        if uparent == tparent && ul.0 == tl.0 && ul.1 == tl.1 && ul.2 > tl.2 {
                            for v in &mut g.op_mut(m, u).operands {
                                if *v == input {
                                    *v = tail_result;
                                    rewired = true;
                                }
                            }
                        }
                    }
                    if rewired {
                        cache.invalidate();
                    }
                }
                let g = cache.get(m);
                let Some(op) = find(g, t) else { continue };
                let input = g.nodes[op].operands[0];
                let Some(s) = sharding_of(g.op(m, op).prop("sharding")) else { continue };
                if !should_apply(m, g, input, &s) {
                    continue;
                }
                if is_edge_related(g, input) {
                    // Move the constraint right after the input; it takes every use.
                    let path = g.nodes[op].path.clone();
                    let Some(moved) = remove_op_at(m, &path) else { continue };
                    cache.invalidate();
                    if let Some((p, r, b, at)) = insertion_after(cache.get(m), input) {
                        insert_op(m, &p, r, b, at, moved);
                    }
                    replace_all_uses_except(m, input, result, result);
                    cache.invalidate();
                    set_unreduced(m, &mut cache, input, &s);
                } else {
                    let before_in = g.sharding(m, input);
                    g.set_sharding(m, input, s.clone());
                    if let Some(dbg) = debug.as_deref_mut() {
                        record_step(m, g, dbg, op, input, result, before_in, &s);
                    }
                    applied.push(Applied {
                        source: result,
                        input,
                        operand_index: 0,
                        sharding: s,
                        manual: false,
                    });
                }
            }
            Target::Manual(_) => {
                let operands = g.nodes[op].operands.clone();
                let args =
                    g.nodes[op].args.first().and_then(|r| r.first()).cloned().unwrap_or_default();
                let ins = per_value(g.op(m, op).prop("in_shardings")).unwrap_or_default();
                for (k, (&input, s)) in operands.iter().zip(ins.iter()).enumerate() {
                    let g = cache.get(m);
                    if !should_apply(m, g, input, s) {
                        continue;
                    }
                    if is_edge_related(g, input) {
                        let ty = m.ty(input).map(str::to_string);
                        let nv = m.new_value(ty);
                        let mut c = Op::pretty(
                            "sdy.sharding_constraint",
                            vec![input],
                            vec![nv],
                            Vec::new(),
                        );
                        c.set_prop("sharding", Attr::Sharding(s.clone()));
                        replace_all_uses_except(m, input, nv, nv);
                        if let Some((p, r, b, at)) = insertion_after(g, input) {
                            insert_op(m, &p, r, b, at, c);
                        }
                        set_unreduced(m, &mut cache, input, s);
                    } else {
                        g.set_sharding(m, input, s.clone());
                        if let Some(&a) = args.get(k) {
                            applied.push(Applied {
                                source: a,
                                input,
                                operand_index: k,
                                sharding: s.clone(),
                                manual: true,
                            });
                        }
                    }
                }
            }
        }
    }
    applied
}

fn is_edge_related(g: &Graph, input: ValueId) -> bool {
    let defined_by_edge = matches!(g.def(input), Some(Def::Result { op, .. }) if g.nodes[op].kind == OpKind::SdyDataFlowEdge);
    defined_by_edge || g.edge_of_target(input).is_some()
}

/// Copies the unreduced axes of `s` onto `input`'s sharding (they do not propagate).
fn set_unreduced(m: &mut Module, cache: &mut GraphCache, input: ValueId, s: &TensorSharding) {
    if s.unreduced.is_empty() {
        return;
    }
    let g = cache.get(m);
    let cur = g.sharding(m, input).unwrap_or_else(|| open_sharding(&s.mesh, g.ty(m, input).rank()));
    let mut new = cur;
    new.unreduced = s.unreduced.clone();
    new.reduction = s.reduction;
    g.set_sharding(m, input, new);
}

/// Records setting `input`'s sharding from the constraint `op` as a debug step.
#[allow(clippy::too_many_arguments)]
fn record_step(
    m: &Module,
    g: &Graph,
    dbg: &mut super::origins::Debug,
    op: OpIdx,
    input: ValueId,
    result: ValueId,
    before_in: Option<TensorSharding>,
    s: &TensorSharding,
) {
    let Some(shape) = g.ty(m, result).static_shape() else { return };
    let Some(mesh) = g.mesh(&s.mesh) else { return };
    let rule = super::ops::identity_rule(&shape, 1);
    let before =
        super::projection::Projection::build(&[before_in], &[Some(s.clone())], &rule, &mesh, false);
    let after_in = g.sharding(m, input);
    let after =
        super::projection::Projection::build(&[after_in], &[Some(s.clone())], &rule, &mesh, false);
    if before != after {
        dbg.record(m, g, op, &[input], &[result], false, &before, &after, &rule, &mesh);
    }
}
