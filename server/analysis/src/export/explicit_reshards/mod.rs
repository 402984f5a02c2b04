//! `-sdy-insert-explicit-reshards` (Shardy's `InsertExplicitReshardsPass`): after
//! propagation, every op is made compatible with its sharding rule by `sdy.reshard`s
//! on its operands and results, `sdy.all_reduce`s for sharded reduction factors and
//! unreduced axes a user drops, and unreduced collectives for those it adds.
//!
//! `enable-full-version` picks the mode. The full version reshards every op to one
//! sharding per factor ([`common_axes`]). The minimal one, which
//! `-sdy-propagation-pipeline` runs, only handles unreduced axes, calls (always full),
//! dots (a smaller result may be resharded instead of an operand) and concatenates
//! whose operands are sharded unlike the result (full).
//!
//! Like Shardy's pass, each function is walked in post-order (nested ops first); ops
//! the pass inserts are not visited. The function's return comes last.

mod common_axes;
pub(crate) mod mesh;
pub(crate) mod process;
mod reshape;
pub(crate) mod rewrite;
mod single_device;
mod unreduced;
mod uses;

use crate::ir::OpKind;
use crate::ir::ValueId;
use crate::ir::{Attr, Module};
use crate::model::{Model, OpId};
use crate::propagation::graph::{is_terminator, sharding_of_ref, Def, Graph, OpIdx};
use crate::propagation::ops::rule_from_print;
use crate::propagation::projection::Projection;
use crate::rules::memo::Verdict;
use crate::rules::{self, OpShardingRule, RuleOptions};
use crate::sharding::TensorSharding;
use crate::verify::messages as msg;
use process::OpCx;
use rewrite::{OpKey, Rewriter};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

/// A failure: the origin of the op (or function) it is reported on, and the message.
pub type Failure = (Option<u32>, String);

/// Runs the pass on every function of `m`; `model` and `src` give the rules of ops
/// that carry none.
pub fn insert_explicit_reshards(
    m: &mut Module,
    model: &Model,
    src: &str,
    full: bool,
) -> Result<(), Failure> {
    let rules = RuleSource::new(model, src);
    let (mut rw, funcs) = Rewriter::new(m);
    let mut result = Ok(());
    for (func, ops) in funcs {
        if let Err(e) = check_func_io(&mut rw, func) {
            result = Err(e);
            break;
        }
        for key in ops {
            if let Err(e) = visit(&mut rw, &rules, key, full) {
                result = Err(e);
                break;
            }
        }
        if result.is_err() {
            break;
        }
        uses::func_return(&mut rw, func, full);
    }
    rw.finish();
    result
}

/// Function arguments and results may not be single-device sharded.
fn check_func_io(rw: &mut Rewriter, func: OpKey) -> Result<(), Failure> {
    let Some(f) = rw.find(func) else { return Ok(()) };
    let g = rw.graph();
    let Some(fi) = g.op(rw.m, f).func() else { return Ok(()) };
    let origin = g.nodes[f].origin;
    for (kind, slots) in [("argument", &fi.args), ("result", &fi.results)] {
        for (i, slot) in slots.iter().enumerate() {
            if mesh::is_single_device(&g, sharding_of_ref(slot.attr("sdy.sharding"))) {
                let text = format!("'func.func' op {}", msg::single_device_func_io(kind, i));
                return Err((origin, text));
            }
        }
    }
    Ok(())
}

/// Where rules come from: the op's `sdy.sharding_rule`, else the registry.
pub(crate) struct RuleSource<'a> {
    model: &'a Model,
    src: &'a str,
    by_origin: HashMap<u32, OpId>,
    /// The registry's verdicts, shared with the other passes of the run.
    _memo: rules::memo::Scope<'a>,
}

impl<'a> RuleSource<'a> {
    pub(crate) fn new(model: &'a Model, src: &'a str) -> RuleSource<'a> {
        let by_origin = model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
        RuleSource { model, src, by_origin, _memo: rules::memo::scope(model, src) }
    }

    /// `getOrCreateShardingRule` of op `i` (without attaching it).
    pub(crate) fn rule(&self, g: &Graph, m: &Module, i: OpIdx) -> Option<Arc<OpShardingRule>> {
        let op = g.op(m, i);
        if let Some(Attr::Rule(r)) = op.attr("sdy.sharding_rule") {
            return rule_from_print(r).map(Arc::new);
        }
        let id = *self.by_origin.get(&op.origin?)?;
        if self.model.op(id).name() != op.name.as_str() {
            return None;
        }
        match rules::explicit_rule(self.model, id) {
            Some(explicit) => explicit.map(Arc::new),
            None => {
                match rules::memo::registry(self.model, id, self.src, &RuleOptions::default()) {
                    Verdict::Rule(r) => Some(r),
                    Verdict::NoRule | Verdict::Unknown(_) => None,
                }
            }
        }
    }
}

/// `getShardingBypassingBarriers`.
fn sharding_bypassing_barriers<'m>(
    g: &Graph,
    m: &'m Module,
    mut v: ValueId,
) -> Option<Cow<'m, TensorSharding>> {
    while let Some(Def::Result { op, .. }) = g.def(v) {
        if g.nodes[op].kind != OpKind::SdyPropagationBarrier {
            break;
        }
        v = *g.nodes[op].operands.first()?;
    }
    g.sharding_ref(m, v)
}

/// Whether the full version applies to op `i` although it is disabled: ragged dots,
/// calls, and concatenates with an operand sharded unlike the result.
fn full_anyway(g: &Graph, m: &Module, i: OpIdx) -> bool {
    let n = &g.nodes[i];
    match n.name.as_str() {
        "mhlo.ragged_dot" | "func.call" => true,
        "stablehlo.concatenate" => {
            let res = n.results.first().and_then(|&r| g.sharding(m, r));
            n.operands.iter().any(|&v| g.sharding(m, v) != res)
        }
        _ => false,
    }
}

fn visit(rw: &mut Rewriter, rules: &RuleSource, key: OpKey, full: bool) -> Result<(), Failure> {
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let (name, kind) = (g.nodes[i].name.clone(), g.nodes[i].kind);
    if is_terminator(&name) {
        return Ok(());
    }
    let full = full || full_anyway(&g, rw.m, i);
    // The index is edited in place by insertions: no copy of it may be held then.
    drop(g);
    if kind.is_data_flow_op() {
        uses::data_flow_op(rw, key, full);
        return Ok(());
    }
    if name == "func.call" {
        uses::call_op(rw, key, full);
        return Ok(());
    }
    if unreduced::convert_reshard(rw, key) {
        return Ok(());
    }
    unreduced::all_reduce_operands(rw, key);
    let Some(i) = rw.find(key) else { return Ok(()) };
    let g = rw.graph();
    let n = &g.nodes[i];
    // Read in place first: the minimal version leaves most ops alone, uncopied.
    let outs: Vec<Option<Cow<TensorSharding>>> =
        n.results.iter().map(|&v| sharding_bypassing_barriers(&g, rw.m, v)).collect();
    // Whether a result is single-device sharded.
    let single = outs.iter().any(|s| mesh::is_single_device(&g, s.as_deref()));
    // The minimal version only touches dots and ops with unreduced results.
    let dot = matches!(name.as_str(), "stablehlo.dot" | "stablehlo.dot_general");
    let unreduced =
        outs.first().and_then(|s| s.as_deref()).is_some_and(|s| !s.unreduced.is_empty());
    if !single && !full && !dot && !unreduced {
        return Ok(());
    }
    let outs: Vec<Option<TensorSharding>> =
        outs.into_iter().map(|s| s.map(Cow::into_owned)).collect();
    if single {
        return single_device::process(rw, key, &outs).map_err(|e| (n.origin, e));
    }
    let ins: Vec<Option<TensorSharding>> = n
        .operands
        .iter()
        .map(|&v| sharding_bypassing_barriers(&g, rw.m, v).map(Cow::into_owned))
        .collect();
    let Some(rule) = rules.rule(&g, rw.m, i) else { return Ok(()) };
    if rule.is_custom || rule.operands.len() != ins.len() || rule.results.len() != outs.len() {
        return Ok(());
    }
    let Some((mesh_ref, mesh)) = mesh::op_mesh(&g, &ins, &outs) else { return Ok(()) };
    drop(g);
    let mut proj = Projection::build(&ins, &outs, &rule, &mesh, true);
    let cx = OpCx { key, rule: &rule, mesh_ref, mesh, outs };
    let common = process::process_op(rw, &cx, &mut proj, &ins, &name, full);
    process::all_reduces_for_reduction_factors(rw, &cx, &proj, &common, full);
    Ok(())
}
