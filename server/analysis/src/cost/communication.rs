//! The collectives of Shardy's export path, mapped back to the source.
//!
//! The passes run on a copy of the propagated module. After explicit reshards, each
//! `sdy.reshard` and `sdy.all_reduce` the pass made is attributed to a source op:
//! * a reshard whose input is a result of op `P` that the pass re-sharded (the op now
//!   computes it differently) restores that result: `P`, result side;
//! * an all-reduce right after op `P`'s result sums `P`'s partial results: `P`,
//!   reduction;
//! * any other reshard feeds its user `U`: `U`, operand side.
//!
//! Reshard-to-collectives then replaces each reshard by a chain of collectives whose
//! last one defines the reshard's own result value, so a collective is attributed by
//! following its chain to that value.

use super::{DimChange, OpCollective, Reason, Side};
use crate::collectives::{describe_ir, describe_stablehlo, Kind};
use crate::export::explicit_reshards::insert_explicit_reshards;
use crate::export::reshard_to_collectives::reshard_to_collectives;
use crate::ir::sdy::{factor_symbol, AxisListDisplay};
use crate::ir::OpKind;
use crate::ir::{Module, ValueId};
use crate::model::{Model, OpId};
use crate::propagation::graph::{sharding_of_ref, Def, Graph, OpIdx};
use crate::rules::{rule_for, RuleLookup, RuleOptions};
use crate::sharding::TensorSharding;
use rustc_hash::FxHashMap as HashMap;

/// A collective of the exported module, with the name of its function.
pub type Found = (String, OpCollective);

/// What an inserted op is for: the source op and the reason.
#[derive(Clone, Debug)]
struct Attribution {
    op: Option<u32>,
    reason: Reason,
}

/// Runs explicit reshards (full version) and reshard-to-collectives on a copy of
/// `propagated`; returns the module and every collective with its function's name, or
/// the pass failure (chunk-relative offset, message).
pub fn export(
    src: &str,
    model: &Model,
    propagated: &Module,
    before: &Graph,
) -> Result<(Module, Graph, Vec<Found>), (u32, String)> {
    let mut m = propagated.clone();
    let failed = insert_explicit_reshards(&mut m, model, src, true);
    Graph::release_shared();
    if let Err((origin, message)) = failed {
        let at = origin
            .map_or(0, |o| model.ops.iter().find(|op| op.start == o).map_or(o, |op| op.loc()));
        return Err((at, message));
    }
    let by_start: HashMap<u32, OpId> =
        model.ops.iter().enumerate().map(|(i, o)| (o.start, i as OpId)).collect();
    let rules = Rules { model, src, by_start: &by_start };
    let inserted = attribute_inserted(propagated, before, &m, &rules);
    reshard_to_collectives(&mut m, false);
    Graph::release_shared();
    let g = Graph::build(&m);
    let mut out = Vec::new();
    for i in g.pre_order() {
        if g.erased.get(i) == Some(&true) {
            continue;
        }
        let node = g.node(i);
        let Some(kind) = Kind::of_op(&node.name) else { continue };
        let written = node
            .origin
            .and_then(|o| by_start.get(&o))
            .is_some_and(|&id| Kind::of_op(model.op(id).name()) == Some(kind));
        let described = match node.name.starts_with("sdy.") {
            true => describe_ir(&m, &g, i),
            false if written => describe_stablehlo(&m, &g, i),
            false => None,
        };
        let Some(collective) = described else { continue };
        let found = chain_end(&g, i, |v| inserted.contains_key(&v)).and_then(|v| inserted.get(&v));
        let attribution = match (written, found) {
            (true, _) => Attribution {
                op: node.origin,
                reason: reason(Side::Written, None, None, Vec::new()),
            },
            (false, Some(a)) => a.clone(),
            // A collective of a reshard written in the source carries the reshard's origin.
            (false, None) => {
                let from = node.operands.first().and_then(|&v| g.sharding(&m, v));
                let to = sharding_of_ref(g.op(&m, i).prop("out_sharding")).cloned();
                let dims = changes(from.as_ref(), to.as_ref(), |_| None);
                let side = if node.origin.is_some() { Side::Reshard } else { Side::Unknown };
                Attribution { op: node.origin, reason: reason(side, from, to, dims) }
            }
        };
        let ty = node.operands.first().and_then(|&v| m.ty(v)).unwrap_or("").to_string();
        let func = g
            .enclosing_func(i)
            .and_then(|f| g.op(&m, f).func().map(|fi| fi.sym.clone()))
            .unwrap_or_default();
        out.push((
            func,
            OpCollective { op: attribution.op, collective, ty, reason: attribution.reason },
        ));
    }
    Ok((m, g, out))
}

/// The source's op sharding rules, for naming factors.
struct Rules<'a> {
    model: &'a Model,
    src: &'a str,
    by_start: &'a HashMap<u32, OpId>,
}

impl Rules<'_> {
    /// The factor symbols of dimension `dim` of operand (or result) `k` of the op at
    /// `origin`.
    fn factor(&self, origin: u32, result: bool, k: usize, dim: usize) -> Option<String> {
        let &id = self.by_start.get(&origin)?;
        let rule = match rule_for(self.model, id, self.src, &RuleOptions::default()) {
            RuleLookup::Existing(r) | RuleLookup::Created(r) => r,
            _ => return None,
        };
        let tensors = if result { &rule.results } else { &rule.operands };
        let fs = tensors.get(k)?.get(dim)?;
        (!fs.is_empty())
            .then(|| fs.iter().map(|&f| factor_symbol(f as i64)).collect::<Vec<_>>().join(","))
    }
}

/// The reshards and all-reduces explicit reshards inserted in `m`, by their result.
fn attribute_inserted(
    before: &Module,
    g0: &Graph,
    m: &Module,
    rules: &Rules,
) -> HashMap<ValueId, Attribution> {
    let g = Graph::build(m);
    let old_values = before.values.len();
    let mut out = HashMap::default();
    for i in 1..g.nodes.len() {
        let node = g.node(i);
        if node.origin.is_some() || g.erased.get(i) == Some(&true) {
            continue;
        }
        let reshard = node.kind == OpKind::SdyReshard;
        if !(reshard || node.kind == OpKind::SdyAllReduce) {
            continue;
        }
        let (Some(&x), Some(&y)) = (node.operands.first(), node.results.first()) else {
            continue;
        };
        let to =
            sharding_of_ref(g.op(m, i).prop(if reshard { "sharding" } else { "out_sharding" }))
                .cloned();
        let from = g.sharding(m, x);
        let producer = match g.def(x) {
            Some(Def::Result { op, index }) => g.node(op).origin.map(|o| (o, index)),
            _ => None,
        };
        let attribution = match producer {
            Some((p, k)) if !reshard => Attribution {
                op: Some(p),
                reason: reason(Side::Reduction(k), from, to, Vec::new()),
            },
            Some((p, k))
                if (x as usize) < old_values && g0.sharding(before, x) != g.sharding(m, x) =>
            {
                let dims = changes(from.as_ref(), to.as_ref(), |d| rules.factor(p, true, k, d));
                Attribution { op: Some(p), reason: reason(Side::Result(k), from, to, dims) }
            }
            _ => {
                let user = g.uses(y).iter().find(|(u, _)| g.node(*u).origin.is_some());
                match user {
                    Some(&(u, k)) => {
                        let o = g.node(u).origin;
                        let dims = changes(from.as_ref(), to.as_ref(), |d| {
                            o.and_then(|o| rules.factor(o, false, k, d))
                        });
                        Attribution { op: o, reason: reason(Side::Operand(k), from, to, dims) }
                    }
                    None => Attribution {
                        op: producer.map(|p| p.0),
                        reason: reason(Side::Unknown, from, to, Vec::new()),
                    },
                }
            }
        };
        out.insert(y, attribution);
    }
    out
}

fn reason(
    side: Side,
    from: Option<TensorSharding>,
    to: Option<TensorSharding>,
    dims: Vec<DimChange>,
) -> Reason {
    Reason { side, from, to, dims }
}

/// The dimensions whose axes differ between `from` and `to`.
fn changes(
    from: Option<&TensorSharding>,
    to: Option<&TensorSharding>,
    factor: impl Fn(usize) -> Option<String>,
) -> Vec<DimChange> {
    let (Some(from), Some(to)) = (from, to) else { return Vec::new() };
    from.dims
        .iter()
        .zip(&to.dims)
        .enumerate()
        .filter(|(_, (a, b))| a.axes != b.axes)
        .map(|(dim, (a, b))| DimChange {
            dim,
            factor: factor(dim),
            from: AxisListDisplay(&a.axes).to_string(),
            to: AxisListDisplay(&b.axes).to_string(),
        })
        .collect()
}

/// The value a chain of new collectives starting at op `i` ends in: the first result
/// that is `known` (a reshard's own result, which the last collective of its chain took
/// over), else where the chain stops.
fn chain_end(g: &Graph, mut i: OpIdx, known: impl Fn(ValueId) -> bool) -> Option<ValueId> {
    loop {
        let &v = g.node(i).results.first()?;
        if known(v) {
            return Some(v);
        }
        match g.uses(v) {
            [(u, 0)] if g.node(*u).origin.is_none() && Kind::of_op(&g.node(*u).name).is_some() => {
                i = *u
            }
            _ => return Some(v),
        }
    }
}
